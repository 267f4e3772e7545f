/* bodies.c -- the smaller bodies the guard reads: exec create and start,
 * and the sandbox network's create, connect and disconnect.  Each is
 * checked against what talkback sends and rebuilt (see body.h).
 */
#include "guard/body.h"

#include <stdio.h>
#include <string.h>

#include "guard/fields.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Whether v is absent or a JSON boolean. */
static int opt_bool(const json_t *v)
{
    return !v || json_is_boolean(v);
}

/* Whether v is absent or a string without NUL bytes. */
static int opt_str(const json_t *v)
{
    return !v || (json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v));
}

/* Set key to a copy of v when v is present. */
static void put(json_t *o, const char *key, json_t *v)
{
    if (v)
        json_object_set(o, key, v);
}

json_t *gbody_exec_create(const char *buf, size_t len, char *why, size_t whylen)
{
    static const char *const names[] = { "attachstdin", "attachstdout", "attachstderr", "tty",
                                         "cmd",         "env",          "workingdir",   "user" };
    static const char *const keys[] = { "AttachStdin", "AttachStdout", "AttachStderr", "Tty",
                                        "Cmd",         "Env",          "WorkingDir",   "User" };
    json_t *f[N(names)], *out = NULL;
    json_t *j = gbody_parse(buf, len, why, whylen);
    if (!j || fields_pick(j, "the exec body", names, N(names), f, why, whylen))
        goto done;
    if (!opt_bool(f[0]) || !opt_bool(f[1]) || !opt_bool(f[2]) || !opt_bool(f[3]) ||
        !fields_strv_ok(f[4], 4096) || json_array_size(f[4]) == 0 ||
        (f[5] && !fields_strv_ok(f[5], 4096)) || !opt_str(f[6]) || !opt_str(f[7])) {
        snprintf(why, whylen, "the exec body does not have the types talkback sends");
        goto done;
    }
    out = json_object();
    for (size_t i = 0; i < N(names); i++)
        put(out, keys[i], f[i]);
done:
    json_decref(j);
    return out;
}

json_t *gbody_exec_start(const char *buf, size_t len, char *why, size_t whylen)
{
    static const char *const names[] = { "detach", "tty" };
    json_t *f[N(names)], *out = NULL;
    json_t *j = gbody_parse(buf, len, why, whylen);
    if (!j || fields_pick(j, "the exec start body", names, N(names), f, why, whylen))
        goto done;
    if (!opt_bool(f[0]) || !opt_bool(f[1])) {
        snprintf(why, whylen, "Detach and Tty must be booleans");
        goto done;
    }
    /* Detached, dockerd answers a plain 200 and keeps the connection for
     * more requests: talkback always reads an exec's output. */
    if (json_is_true(f[0])) {
        snprintf(why, whylen, "a detached exec start (talkback always reads an exec's output)");
        goto done;
    }
    out = json_object();
    put(out, "Detach", f[0]);
    put(out, "Tty", f[1]);
done:
    json_decref(j);
    return out;
}

json_t *gbody_net_create(const char *buf, size_t len, const gtemplate_t *t, char *why,
                         size_t whylen)
{
    static const char *const names[] = { "name", "driver", "checkduplicate", "labels", "options" };
    static const char *const lk[] = { SPEC_LABEL_NETWORK }, *const lv[] = { SPEC_NETWORK_KIND };
    static const char *const ok[] = { "com.docker.network.bridge.enable_icc" }, *const ov[] = {
        "false"
    };
    json_t *f[N(names)], *out = NULL;
    json_t *j = gbody_parse(buf, len, why, whylen);
    if (!j || fields_pick(j, "the network body", names, N(names), f, why, whylen))
        goto done;
    if (!fields_str_is(f[0], t->s.network) || !fields_str_is(f[1], "bridge") || !opt_bool(f[2]) ||
        (f[3] && !fields_map_is(f[3], lk, lv, 1)) || (f[4] && !fields_map_is(f[4], ok, ov, 1))) {
        snprintf(why, whylen, "only the sandbox network %s, a bridge, may be created",
                 t->s.network);
        goto done;
    }
    out = json_pack("{s:s, s:s, s:b, s:{s:s}, s:{s:s}}", "Name", t->s.network, "Driver", "bridge",
                    "CheckDuplicate", 1, "Labels", lk[0], lv[0], "Options", ok[0], ov[0]);
done:
    json_decref(j);
    return out;
}

json_t *gbody_net_attach(const char *buf, size_t len, int disconnect, char *why, size_t whylen)
{
    static const char *const names[] = { "container", "endpointconfig", "force" };
    json_t *f[N(names)], *out = NULL;
    json_t *j = gbody_parse(buf, len, why, whylen);
    if (!j || fields_pick(j, "the network body", names, N(names), f, why, whylen))
        goto done;
    if (!json_is_string(f[0]) || !opt_str(f[0]) || (f[1] && !fields_map_is(f[1], NULL, NULL, 0)) ||
        !opt_bool(f[2]) || (disconnect ? f[1] != NULL : f[2] != NULL)) {
        snprintf(why, whylen, "the network body is not a plain %s of one container",
                 disconnect ? "disconnect" : "connect");
        goto done;
    }
    out = json_pack("{s:O}", "Container", f[0]);
    if (disconnect)
        put(out, "Force", f[2]);
    else
        json_object_set_new(out, "EndpointConfig", json_object());
done:
    json_decref(j);
    return out;
}
