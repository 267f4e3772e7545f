/* limits.c -- the sandbox's limits from its cgroup files (see limits.h).
 *
 * cgroup v2 has one folder with memory.max, memory.swap.max (swap alone),
 * pids.max and cpu.max ("quota period"); v1 one folder per controller,
 * with memory.memsw.limit_in_bytes (memory + swap) and a huge number for
 * "no limit".  Either way the swap is capped at what the host has: a
 * container's /proc/meminfo is the host's.
 */
#include "agent/limits.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The start of a small file as a C string in buf; false when unreadable. */
static bool read_small(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    return true;
}

/* The first number in a file, -1 when absent or "max". */
static int64_t read_num(const char *path, int64_t *second)
{
    char buf[128];
    if (!read_small(path, buf, sizeof buf))
        return -1;
    char *end;
    long long v = strtoll(buf, &end, 10);
    if (second)
        *second = strtoll(end, NULL, 10);
    if (end == buf)
        return -1;
    return v;
}

/* The host's swap in bytes (a container's /proc/meminfo is the host's),
 * -1 when unknown: a cgroup may allow swap the host does not have. */
static int64_t host_swap(void)
{
    char chunk[4096];
    if (!read_small("/proc/meminfo", chunk, sizeof chunk))
        return -1;
    const char *p = strstr(chunk, "\nSwapTotal:");
    if (!p)
        return -1;
    char *end;
    long long kib = strtoll(p + 11, &end, 10);
    return end == p + 11 ? -1 : (int64_t)kib * 1024;
}

/* See limits.h. */
void limits_read(limits_t *out)
{
    int64_t mem, swap, pids, cq, cp = 0;
    if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0) { /* cgroup v2 */
        mem = read_num("/sys/fs/cgroup/memory.max", NULL);
        int64_t sw = read_num("/sys/fs/cgroup/memory.swap.max", NULL);
        swap = mem >= 0 && sw >= 0 ? mem + sw : -1;
        pids = read_num("/sys/fs/cgroup/pids.max", NULL);
        cq = read_num("/sys/fs/cgroup/cpu.max", &cp);
    } else {
        mem = read_num("/sys/fs/cgroup/memory/memory.limit_in_bytes", NULL);
        swap = read_num("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes", NULL);
        pids = read_num("/sys/fs/cgroup/pids/pids.max", NULL);
        cq = read_num("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", NULL);
        cp = read_num("/sys/fs/cgroup/cpu/cpu.cfs_period_us", NULL);
    }
    /* cgroup v1 says "no limit" with a huge number. */
    if (mem >= (int64_t)1 << 62)
        mem = -1;
    if (swap >= (int64_t)1 << 62)
        swap = -1;
    /* Memory + swap as far as the host has swap to give. */
    int64_t hs = host_swap();
    if (mem >= 0 && hs >= 0 && (swap < 0 || swap > mem + hs))
        swap = mem + hs;
    *out = (limits_t){
        .mem = mem, .swap = swap, .pids = pids, .cpu_quota = cq, .cpu_period = cp > 0 ? cp : -1
    };
}
