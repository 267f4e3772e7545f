/* manager_path.c -- where a tool's file path lands in the sandbox (see
 * manager.h).
 *
 * A pure function, apart from the rest of the manager so it is tested
 * and read on its own: the path comes from the model, so it is folded
 * here without touching the file system.
 */
#include "sandbox/manager.h"

#include <string.h>

/*
 * Resolve a path as the sandbox sees it: relative to /work, with "."
 * and ".." folded.  Returns -1 for a folder, a NUL byte or a result that
 * does not fit in out.  Lexical only: the model names the path, and
 * nothing here may follow links or touch the disk.
 */
int manager_resolve_path(const char *path, size_t len, char *out, size_t outlen)
{
    if (!path || len == 0 || memchr(path, '\0', len) || path[len - 1] == '/')
        return -1;
    /* A last component of "." or ".." names a folder, never a file. */
    const char *last = path + len;
    while (last > path && last[-1] != '/')
        last--;
    size_t ll = (size_t)(path + len - last);
    if ((ll == 1 && last[0] == '.') || (ll == 2 && last[0] == '.' && last[1] == '.'))
        return -1;
    /* Components are folded onto a stack of offsets into out. */
    size_t o = 0;
    size_t stack[512];
    size_t depth = 0;
    const char *base = "/work";
    char tmp[8192];
    size_t tl = 0;
    if (path[0] != '/') {
        tl = strlen(base);
        memcpy(tmp, base, tl);
        tmp[tl++] = '/';
    }
    if (tl + len >= sizeof tmp)
        return -1;
    memcpy(tmp + tl, path, len);
    tl += len;
    tmp[tl] = '\0';

    const char *p = tmp;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *s = p;
        while (*p && *p != '/')
            p++;
        size_t cl = (size_t)(p - s);
        if (cl == 1 && s[0] == '.')
            continue;
        if (cl == 2 && s[0] == '.' && s[1] == '.') {
            if (depth)
                o = stack[--depth];
            continue;
        }
        if (depth >= sizeof stack / sizeof stack[0] || o + 1 + cl + 1 > outlen)
            return -1;
        stack[depth++] = o;
        out[o++] = '/';
        memcpy(out + o, s, cl);
        o += cl;
    }
    if (o == 0)
        return -1; /* "/" itself: a folder */
    out[o] = '\0';
    return 0;
}
