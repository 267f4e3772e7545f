/* hubcall.c -- talkback-hubcall: send one request to the workers, print
 * the reply as JSON.  A test tool: it reaches operations no MCP tool
 * exposes (the sandbox manager's `exec`, which the judge uses), so tests
 * can check their reply data.
 *
 * usage: talkback-hubcall KIND NAME CONV USER [key=string | key:=integer | @HOST]...
 *            [--hub_endpoint EP] [--KEY VALUE ...]
 *
 * @HOST sends the request to a worker on that host only (proto's "h"); an
 * empty CONV sends none.
 *
 * Like talkback-replay it binds the hub endpoint itself: run it while the
 * gateway is stopped.  Prints {"status", "is_error", "text", "data"} and
 * exits 0 when a reply came, 1 when none did, 2 on a usage error.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "common/log.h"
#include "hub/queue.h"

/* key=string or key:=integer into the request's arguments. */
static int add_arg(proto_msg_t *req, char *a)
{
    char *eq = strchr(a, '=');
    if (!eq || eq == a)
        return -1;
    *eq = '\0';
    if (eq[-1] == ':') {
        eq[-1] = '\0';
        return proto_map_set_int(&req->args, a, strtoll(eq + 1, NULL, 10));
    }
    return proto_map_set_cstr(&req->args, a, eq + 1);
}

/* A reply's data map as a JSON object. */
static json_t *data_json(const proto_map_t *m)
{
    json_t *o = json_object();
    for (size_t i = 0; i < m->n; i++) {
        const proto_kv_t *kv = &m->kv[i];
        json_t *v = kv->type == PROTO_V_INT    ? json_integer(kv->i)
                    : kv->type == PROTO_V_BOOL ? json_boolean(kv->i)
                    : kv->type == PROTO_V_STR  ? json_stringn_nocheck(kv->s, kv->len)
                                               : json_null();
        json_object_set_new(o, kv->key, v);
    }
    return o;
}

/* Parse, bind the hub, wait for a worker of KIND, send, print. */
int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: talkback-hubcall KIND NAME CONV USER [key=value | key:=int]... "
                        "[--KEY VALUE]\n");
        return 2;
    }
    proto_msg_t *req = proto_msg_new(PROTO_REQUEST);
    if (!req || proto_msg_set_kind(req, argv[1]) || proto_msg_set_name(req, argv[2]) ||
        proto_msg_set_conv(req, *argv[3] ? argv[3] : NULL) || proto_msg_set_user(req, argv[4]))
        return 2;
    int i = 5;
    for (; i < argc && argv[i][0] != '-'; i++)
        if (argv[i][0] == '@' ? proto_msg_set_host(req, argv[i] + 1) != 0
                              : add_arg(req, argv[i]) != 0) {
            fprintf(stderr, "talkback-hubcall: bad argument %s\n", argv[i]);
            return 2;
        }
    argv[i - 1] = argv[0];
    if (config_load(argc - i + 1, argv + i - 1, "hubcall"))
        return 2;
    log_init("talkback-hubcall", log_level_parse(config_str("log_level")));
    const char *ep = *config_str("hub_bind") ? config_str("hub_bind") : config_str("hub_endpoint");
    queue_opts_t qo = {
        .endpoint = ep,
        .heartbeat_ms = (int)config_int("heartbeat_ms"),
        .heartbeat_timeout_ms = (int)config_int("heartbeat_timeout_ms"),
        .worker_wait_ms = (int)config_int("worker_wait_ms"),
        .insecure = config_bool("hub_insecure"),
        .keys_dir = config_str("hub_keys"),
        .hwm = (int)config_int("hub_hwm"),
        .max_message = config_int("hub_max_message"),
        .peer_requests = (int)config_int("hub_peer_requests"),
    };
    queue_t *q = queue_new(&qo);
    if (!q)
        return 2;
    for (int k = 0; k < 100 && queue_live_workers(q, argv[1]) == 0; k++)
        usleep(100000);
    req->deadline_ms = proto_now_ms() + 600000;
    queue_ticket_t *t = queue_submit(q, req, NULL);
    const proto_msg_t *r = t ? queue_wait(t, 605000) : NULL;
    int rc = 1;
    if (r) {
        json_t *o = json_pack("{s:i, s:b, s:s%, s:o}", "status", (int)r->status, "is_error",
                              r->is_error, "text", r->text ? r->text : "",
                              r->text ? r->text_len : 0, "data", data_json(&r->data));
        char *s = json_dumps(o, JSON_COMPACT);
        puts(s ? s : "null");
        free(s);
        json_decref(o);
        rc = 0;
    }
    queue_ticket_destroy(&t);
    queue_destroy(&q);
    return rc;
}
