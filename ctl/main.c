/* main.c -- talkbackctl: the operator's view of a talkback cluster.
 *
 *   talkbackctl [--json] hosts               every host: version, load, caps, free
 *                                            memory and disk, draining, workers
 *   talkbackctl [--json] sandboxes [--host H]  every chat's sandbox (or one host's)
 *   talkbackctl drain HOST | undrain HOST    no new chats placed on HOST / again
 *   talkbackctl stop CONV | rm CONV          stop one chat's sandbox / remove it
 *                                            (rm removes its files)
 *   talkbackctl forget HOST                  the hub forgets a host retired for good
 *
 * It is a client of the hub like a judge (client.h): `hosts` is answered
 * by the hub itself from its workers' HELLOs; `sandboxes` asks each host's
 * sandbox manager for its `list` (a host-targeted request); drain and
 * undrain go to the named host's manager; stop and rm go wherever the hub
 * routes the chat; forget is answered by the hub (forget_host).  Exit
 * status: 0 done, 1 the hub, a host or the operation failed (the reason on stderr), 2 a usage error.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <czmq.h>

#include "common/config.h"
#include "common/textbuf.h"
#include "ctl/client.h"
#include "ctl/show.h"
#include "proto/ops.h"
#include "proto/optable.h"

typedef struct ctl_cmd ctl_cmd_t;

typedef struct {
    const char *cmd;       /* the command word: hosts, sandboxes, drain, ... */
    const ctl_cmd_t *verb; /* its row (ctl_cmds) */
    const char *arg;       /* HOST or CONV */
    const char *host;      /* --host */
    bool json;             /* --json */
    int timeout_ms;        /* ctl_timeout */
    ctl_client_t *client;
} ctl_t;

/* The usage text on stderr; exit status 2. */
static int ctl_usage(void)
{
    fprintf(stderr,
            "usage: talkbackctl [--json] hosts\n"
            "       talkbackctl [--json] sandboxes [--host HOST]\n"
            "       talkbackctl drain HOST | undrain HOST\n"
            "       talkbackctl stop CONVERSATION | rm CONVERSATION\n"
            "       talkbackctl forget HOST\n"
            "options: --config FILE and --KEY VALUE for any config key (hub_endpoint, hub_keys,\n"
            "hub_cert, ctl_timeout, ...); talkbackctl --help-config lists them.\n");
    return 2;
}

/* One command word: the operation it sends (proto/optable.h says its
 * kind, and whether it names a host or a chat), and how it runs. */
struct ctl_cmd {
    const char *word; /* what the operator types */
    const char *op;   /* OP_: the operation it sends */
    bool positional;  /* takes HOST or CONV: CONV when the op's row has OPS_CONV */
    bool host_option; /* takes --host */
    int (*run)(ctl_t *c);
};

static const ctl_cmd_t *ctl_cmd_find(const char *word);

/* Take talkbackctl's own words out of argv (what is left goes to
 * config_load).  0, or -1 on a usage error. */
static int ctl_args(ctl_t *c, int *argc, char **argv)
{
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        char *a = argv[i];
        if (strcmp(a, "--json") == 0) {
            c->json = true;
        } else if (strcmp(a, "--host") == 0 && i + 1 < *argc) {
            c->host = argv[++i];
        } else if (strncmp(a, "--host=", 7) == 0) {
            c->host = a + 7;
        } else if (strcmp(a, "--help-config") == 0) {
            argv[out++] = "--help";
        } else if (a[0] == '-' && a[1] == '-' && a[2]) {
            argv[out++] = a; /* a config key and its value */
            if (!strchr(a, '=') && i + 1 < *argc && strcmp(a, "--hub_insecure") != 0)
                argv[out++] = argv[++i];
        } else if (a[0] == '-') {
            return -1;
        } else if (!c->cmd) {
            c->cmd = a;
        } else if (!c->arg) {
            c->arg = a;
        } else {
            return -1;
        }
    }
    *argc = out;
    if (!c->cmd || !(c->verb = ctl_cmd_find(c->cmd)))
        return -1;
    if (c->verb->positional ? !c->arg || !*c->arg : c->arg != NULL)
        return -1;
    if (c->host && !c->verb->host_option)
        return -1;
    return 0;
}

/* A request: kind, operation, conversation (or NULL), target host (or
 * NULL).  NULL when out of memory. */
static proto_msg_t *ctl_request(const char *kind, const char *op, const char *conv,
                                const char *host)
{
    proto_msg_t *m = proto_msg_new(PROTO_REQUEST);
    if (!m || proto_msg_set_kind(m, kind) || proto_msg_set_name(m, op) ||
        proto_msg_set_conv(m, conv ? conv : "") || proto_msg_set_user(m, "") ||
        (host && proto_msg_set_host(m, host))) {
        proto_msg_destroy(&m);
        return NULL;
    }
    return m;
}

/* Send a request and judge its reply: the reply when it is a result, NULL
 * (and a sentence on stderr) when it is not.  An operation the hub serves
 * that names a host (forget_host) names it in the argument host, not as a
 * target. */
static proto_msg_t *ctl_ask(ctl_t *c, const char *kind, const char *op, const char *conv,
                            const char *host)
{
    char err[1024];
    bool forget = ops_has(kind, op, OPS_HUB | OPS_HOST);
    proto_msg_t *req = ctl_request(kind, op, conv, forget ? NULL : host);
    if (req && forget && proto_map_set_cstr(&req->args, ARG_HOST, host) != 0)
        proto_msg_destroy(&req);
    proto_msg_t *r = req ? ctl_client_call(c->client, req, c->timeout_ms, err, sizeof err) : NULL;
    if (!req)
        snprintf(err, sizeof err, "out of memory");
    if (!r) {
        fprintf(stderr, "talkbackctl: %s\n", err);
        return NULL;
    }
    if (r->status == PROTO_ST_NO_WORKER) {
        if (host)
            fprintf(stderr,
                    "talkbackctl: host %s is not reachable: no sandbox manager of that "
                    "host is connected to the hub (`talkbackctl hosts` lists those that are)\n",
                    host);
        else
            fprintf(stderr, "talkbackctl: no sandbox manager is connected to the hub\n");
    } else if (r->status != PROTO_ST_OK || r->is_error) {
        fprintf(stderr, "talkbackctl: %s %s: %.*s\n", op,
                conv   ? conv
                : host ? host
                       : "",
                (int)(r->text ? r->text_len : 0), r->text ? r->text : "");
    } else {
        return r;
    }
    proto_msg_destroy(&r);
    return NULL;
}

/* Print a textbuf to stdout; 1 when memory ran out. */
static int ctl_print(textbuf_t *t)
{
    int rc = t->oom ? 1 : 0;
    if (t->oom)
        fprintf(stderr, "talkbackctl: out of memory\n");
    else if (t->len)
        fwrite(t->buf, 1, t->len, stdout);
    textbuf_free(t);
    return rc;
}

/* talkbackctl hosts: the hub's own answer. */
static int ctl_hosts(ctl_t *c, show_table_t *hosts)
{
    proto_msg_t *r = ctl_ask(c, KIND_HUB, OP_HOSTS, NULL, NULL);
    if (!r)
        return 1;
    int rc = show_parse_hosts(hosts, r->text, r->text ? r->text_len : 0);
    proto_msg_destroy(&r);
    return rc < 0 ? 1 : 0;
}

/* talkbackctl sandboxes: each host's manager, asked one after another. */
static int ctl_sandboxes(ctl_t *c)
{
    show_table_t hosts, boxes;
    show_table_init(&hosts);
    show_table_init(&boxes);
    int rc = 0;
    if (!c->host && (rc = ctl_hosts(c, &hosts)) != 0)
        goto out;
    size_t n = c->host ? 1 : hosts.n;
    for (size_t i = 0; i < n; i++) {
        const char *h = c->host ? c->host : show_get(&hosts.rows[i], "host");
        const char *running = c->host ? "0" : show_get(&hosts.rows[i], "running");
        if (!h || !running || strcmp(running, "-") == 0)
            continue; /* no sandbox manager on that host */
        proto_msg_t *r = ctl_ask(c, KIND_SANDBOX, OP_LIST, NULL, h);
        if (!r || show_parse_sandboxes(&boxes, r->text, r->text ? r->text_len : 0) < 0)
            rc = 1;
        proto_msg_destroy(&r);
    }
    /* A host that did not answer is said on stderr; the others' chats are
     * still shown, but nothing is printed when no host answered. */
    if (rc == 0 || boxes.n > 0) {
        textbuf_t t;
        textbuf_init(&t);
        if (c->json)
            show_sandboxes_json(&boxes, &t);
        else
            show_sandboxes_table(&boxes, &t);
        if (ctl_print(&t))
            rc = 1;
    }
out:
    show_table_free(&hosts);
    show_table_free(&boxes);
    return rc;
}

/* drain, undrain (to a host), forget (to the hub), stop, rm (to a chat):
 * the op's row says whom its argument names.  Print what it says. */
static int ctl_one(ctl_t *c)
{
    const ops_row_t *row = ops_named(c->verb->op);
    if (!row)
        return 2;
    bool chat = (row->flags & OPS_CONV) != 0;
    proto_msg_t *r = ctl_ask(c, row->kind, row->name, chat ? c->arg : NULL, chat ? NULL : c->arg);
    if (!r)
        return 1;
    if (r->text && r->text_len)
        printf("%.*s%s", (int)r->text_len, r->text, r->text[r->text_len - 1] == '\n' ? "" : "\n");
    proto_msg_destroy(&r);
    return 0;
}

/* talkbackctl hosts: the table (or JSON) of the hub's answer. */
static int ctl_show_hosts(ctl_t *c)
{
    show_table_t hosts;
    show_table_init(&hosts);
    int rc = ctl_hosts(c, &hosts);
    if (rc == 0) {
        textbuf_t t;
        textbuf_init(&t);
        if (c->json)
            show_hosts_json(&hosts, &t);
        else
            show_hosts_table(&hosts, &t);
        rc = ctl_print(&t);
    }
    show_table_free(&hosts);
    return rc;
}

static const ctl_cmd_t ctl_cmds[] = {
    { OP_HOSTS, OP_HOSTS, false, false, ctl_show_hosts },
    { "sandboxes", OP_LIST, false, true, ctl_sandboxes },
    { OP_DRAIN, OP_DRAIN, true, false, ctl_one },
    { OP_UNDRAIN, OP_UNDRAIN, true, false, ctl_one },
    { OP_STOP, OP_STOP, true, false, ctl_one },
    { OP_RM, OP_RM, true, false, ctl_one },
    { "forget", OP_FORGET_HOST, true, false, ctl_one },
    { NULL, NULL, false, false, NULL },
};

/* The row of a command word, or NULL. */
static const ctl_cmd_t *ctl_cmd_find(const char *word)
{
    for (const ctl_cmd_t *v = ctl_cmds; v->word; v++)
        if (strcmp(v->word, word) == 0)
            return v;
    return NULL;
}

/* Words, config, the hub, the command. */
int main(int argc, char **argv)
{
    ctl_t c = { 0 };
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        ctl_usage();
        return 0;
    }
    if (ctl_args(&c, &argc, argv) < 0)
        return ctl_usage();
    if (config_load(argc, argv, "ctl") != 0)
        return 2;
    zsys_init();
    zsys_set_logstream(NULL);
    c.timeout_ms = (int)config_int("ctl_timeout") * 1000;
    char err[1024];
    ctl_client_opts_t co = {
        .endpoint = config_str("hub_endpoint"),
        .connect_ms = (int)config_int("ctl_connect_timeout") * 1000,
        .insecure = config_bool("hub_insecure"),
        .keys_dir = config_str("hub_keys"),
        .cert_path = config_str("hub_cert"),
    };
    c.client = ctl_client_new(&co, err, sizeof err);
    if (!c.client) {
        fprintf(stderr, "talkbackctl: %s\n", err);
        return 1;
    }
    int rc = c.verb->run(&c);
    ctl_client_destroy(&c.client);
    return rc;
}
