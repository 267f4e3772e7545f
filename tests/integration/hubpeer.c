/* hubpeer.c -- a stranger on the hub, for tests/integration/hubauth.test.mjs.
 *
 *   hubpeer ENDPOINT KIND SECONDS [--cert FILE --hub-key FILE]
 *           [--submit KIND:NAME:CONV:COMMAND [--submit-host H]] [--host HOST]
 *           [--forge yes]
 *
 * Connects to the hub (as a CURVE client when --cert and --hub-key are
 * given, else with no key), says HELLO as KIND (on HOST, with --host)
 * every 200 ms for SECONDS seconds, and does what an attacker would:
 * prints every request the hub routes to it ("REQUEST kind name conv")
 * and answers each with a forged reply; with --submit it also sends one
 * request of its own (for host H only, with --submit-host) and prints the
 * answer ("REPLY status text"); with
 * --forge it also sends a reply to a request it never got, with every
 * HELLO.  Ends with "DONE requests=N replies=M".
 * Built by CMake as build/hubpeer, never installed.
 */
#include <czmq.h>
#include <stdio.h>
#include <string.h>

#include "proto/ops.h"
#include "proto/proto.h"

#define HUBPEER_FORGED "uid=0(root) FORGED by hubpeer"

static int nrequests, nreplies;

/* Encode and send one frame; dropped when the hub is not there. */
static void hubpeer_send(zsock_t *s, const proto_msg_t *m)
{
    char *buf;
    size_t len;
    if (proto_encode(m, &buf, &len) != PROTO_OK)
        return;
    zframe_t *f = zframe_new(buf, len);
    free(buf);
    if (zframe_send(&f, s, ZFRAME_DONTWAIT) < 0)
        zframe_destroy(&f);
}

/* HELLO as kind (on host, when not NULL), named hubpeer-PID (so the
 * hub's log names it). */
static void hubpeer_hello(zsock_t *s, const char *kind, const char *host)
{
    proto_msg_t *h = proto_msg_new(PROTO_HELLO);
    char name[64];
    snprintf(name, sizeof name, "hubpeer-%d", (int)getpid());
    proto_msg_set_kind(h, kind);
    proto_msg_set_name(h, name);
    if (host)
        proto_map_set_cstr(&h->data, DATA_HOST, host);
    hubpeer_send(s, h);
    proto_msg_destroy(&h);
}

/* A reply to a request the hub never gave this peer. */
static void hubpeer_forge(zsock_t *s)
{
    proto_msg_t *r = proto_msg_new(PROTO_REPLY);
    r->id = 12345;
    proto_msg_set_text(r, HUBPEER_FORGED, strlen(HUBPEER_FORGED));
    hubpeer_send(s, r);
    proto_msg_destroy(&r);
}

/* --submit KIND:NAME:CONV:COMMAND, for host when not NULL */
static void hubpeer_submit(zsock_t *s, char *spec, const char *host)
{
    char *kind = strtok(spec, ":"), *name = strtok(NULL, ":"), *conv = strtok(NULL, ":");
    char *command = strtok(NULL, "");
    proto_msg_t *m = proto_msg_new(PROTO_REQUEST);
    m->id = 77;
    proto_msg_set_kind(m, kind ? kind : "");
    proto_msg_set_name(m, name ? name : "");
    proto_msg_set_conv(m, conv ? conv : "");
    proto_msg_set_user(m, "");
    proto_map_set_cstr(&m->args, "command", command ? command : "id");
    if (host)
        proto_msg_set_host(m, host);
    m->deadline_ms = proto_now_ms() + 20000;
    hubpeer_send(s, m);
    proto_msg_destroy(&m);
}

/* A frame from the hub: print it; answer a request with a forgery. */
static void hubpeer_frame(zsock_t *s, zframe_t *f)
{
    proto_msg_t *m = NULL;
    if (proto_decode(zframe_data(f), zframe_size(f), &m) != PROTO_OK)
        return;
    if (m->type == PROTO_REQUEST) {
        nrequests++;
        printf("REQUEST %s %s %s\n", m->kind ? m->kind : "", m->name ? m->name : "",
               m->conv ? m->conv : "");
        proto_msg_t *r = proto_reply_new(m, PROTO_ST_OK, false, HUBPEER_FORGED);
        if (r) {
            r->id = m->id;
            hubpeer_send(s, r);
            proto_msg_destroy(&r);
        }
    } else if (m->type == PROTO_REPLY) {
        nreplies++;
        printf("REPLY %d %.*s\n", (int)m->status, (int)m->text_len, m->text ? m->text : "");
    }
    fflush(stdout);
    proto_msg_destroy(&m);
}

/* Apply --cert and --hub-key; -1 when either cannot be read. */
static int hubpeer_keys(zsock_t *s, const char *cert_path, const char *hub_path)
{
    zcert_t *cert = zcert_load(cert_path), *hub = zcert_load(hub_path);
    if (!cert || !hub) {
        fprintf(stderr, "hubpeer: cannot read %s or %s\n", cert_path, hub_path);
        return -1;
    }
    zcert_apply(cert, s);
    zsock_set_curve_serverkey(s, zcert_public_txt(hub));
    zcert_destroy(&cert);
    zcert_destroy(&hub);
    return 0;
}

/* Arguments, the socket, then HELLO and listen until SECONDS are up. */
int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr,
                "usage: hubpeer ENDPOINT KIND SECONDS [--cert F --hub-key F] [--submit K:N:C:CMD] "
                "[--host H] [--forge yes]\n");
        return 2;
    }
    const char *cert = NULL, *hub = NULL, *host = NULL, *submit_host = NULL;
    char *submit = NULL;
    bool forge = false;
    for (int i = 4; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--cert"))
            cert = argv[i + 1];
        else if (!strcmp(argv[i], "--hub-key"))
            hub = argv[i + 1];
        else if (!strcmp(argv[i], "--submit"))
            submit = argv[i + 1];
        else if (!strcmp(argv[i], "--submit-host"))
            submit_host = argv[i + 1];
        else if (!strcmp(argv[i], "--host"))
            host = argv[i + 1];
        else if (!strcmp(argv[i], "--forge"))
            forge = !strcmp(argv[i + 1], "yes");
    }
    zsock_t *s = zsock_new(ZMQ_DEALER);
    zsock_set_linger(s, 0);
    if (cert && hub && hubpeer_keys(s, cert, hub) < 0)
        return 2;
    if (zsock_connect(s, "%s", argv[1]) < 0)
        return 2;
    printf("STARTED\n");
    fflush(stdout);
    int64_t end = proto_mono_ms() + atoi(argv[3]) * 1000LL, next_hello = 0;
    bool submitted = false;
    while (proto_mono_ms() < end && !zsys_interrupted) {
        if (proto_mono_ms() >= next_hello) {
            hubpeer_hello(s, argv[2], host);
            if (forge)
                hubpeer_forge(s);
            next_hello = proto_mono_ms() + 200;
            if (submit && !submitted && (submitted = true))
                hubpeer_submit(s, submit, submit_host);
        }
        zpoller_t *p = zpoller_new(s, NULL);
        if (zpoller_wait(p, 50) == s) {
            zframe_t *f = zframe_recv(s);
            if (f)
                hubpeer_frame(s, f);
            zframe_destroy(&f);
        }
        zpoller_destroy(&p);
    }
    printf("DONE requests=%d replies=%d\n", nrequests, nreplies);
    zsock_destroy(&s);
    return 0;
}
