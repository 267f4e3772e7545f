/* agentbin.c -- which agent program goes into sandboxes, and how to tell
 * a sandbox made to run it (see agent.h).  Apart from agent.c, which is
 * about the links to running agents. */
#include "sandbox/agent_link.h"

#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "sandbox/scripts_embedded.h"

/* See agent.h. */
bool agent_find_binary(const char *configured, char *out, size_t outlen)
{
    if (configured && *configured) {
        snprintf(out, outlen, "%s", configured);
    } else {
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0)
            return false;
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (!slash)
            return false;
        *slash = '\0';
        snprintf(out, outlen, "%s/talkback-agent", self);
    }
    struct stat st;
    return stat(out, &st) == 0 && S_ISREG(st.st_mode);
}

/* See agent.h. */
char *agent_binary_read(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *buf = NULL;
    if (fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size < (64 << 20) &&
        (buf = malloc((size_t)st.st_size)) != NULL) {
        size_t got = 0;
        ssize_t n;
        while (got < (size_t)st.st_size && (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
            got += (size_t)n;
        if (got != (size_t)st.st_size) {
            free(buf);
            buf = NULL;
        }
        *len = got;
    }
    close(fd);
    return buf;
}

/* See agent.h. */
bool agent_in_config(const json_t *info)
{
    json_t *cmd = json_object_get(json_object_get(info, "Config"), "Cmd");
    const char *first = json_string_value(json_array_get(cmd, 0));
    return first && strcmp(first, AGENT_CMD_PATH) == 0;
}

/* See agent.h: FNV-1a 64 of the bytes. */
void agent_version(const char *bin, size_t len, char out[17])
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)bin[i];
        h *= 1099511628211ULL;
    }
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* See agent.h: sandbox/scripts/agent-worker-restart.sh. */
void agent_restart_worker(docker_t *d, const char *id)
{
    const char *argv[] = { "bash", "-c", PROBE_AGENT_WORKER_RESTART, NULL };
    docker_exec_t x = { .argv = argv, .workdir = "/" };
    int code;
    docker_err_t e = docker_exec(d, id, &x, &code);
    log_info("restarting the agent worker of %.12s: %s", id, docker_strerror(e));
    usleep(200000); /* its supervisor starts the next one after 100 ms */
}
