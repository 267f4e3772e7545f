/* replay.c -- talkback-replay: re-send a recording to the workers and
 * report every reply that differs.
 *
 * usage: talkback-replay FILE [--hub_endpoint EP] [--worker_wait_ms MS]
 *
 * It binds the hub endpoint itself (run it while the gateway is stopped,
 * or give it another endpoint the workers connect to), waits for workers,
 * then sends each recorded request in order with the same arguments and a
 * deadline as long as the original had, and compares the reply with the
 * recorded one: status, is_error, text and images (path, type and bytes
 * of each, in order).  Timings are not compared: they
 * are not part of a reply.  Exit status 0 when every reply matched, 1 when
 * one differed, 2 on a usage or file error.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "common/list.h"
#include "common/log.h"
#include "hub/queue.h"
#include "hub/record.h"
#include "proto/ops.h"

typedef struct pair {
    proto_msg_t *req;
    int64_t req_ts;
    proto_msg_t *rep;
    list_node_t link; /* in the recording's order */
} pair_t;

static int on_event(void *ctx, int64_t ts, const char *dir, proto_msg_t *m)
{
    list_t *ps = ctx;
    if (strcmp(dir, "req") == 0) {
        pair_t *p = calloc(1, sizeof *p);
        if (!p) {
            proto_msg_destroy(&m);
            return -1;
        }
        p->req = m;
        p->req_ts = ts;
        list_push_back(ps, &p->link);
        return 0;
    }
    list_for_each_item(p, ps, pair_t, link) {
        if (!p->rep && p->req->id == m->id) {
            p->rep = m;
            return 0;
        }
    }
    proto_msg_destroy(&m);
    return 0;
}

/* Whether two replies carry the same images, byte for byte, in order. */
static bool same_images(const proto_msg_t *a, const proto_msg_t *b)
{
    if (a->n_images != b->n_images)
        return false;
    for (size_t i = 0; i < a->n_images; i++) {
        const proto_image_t *x = &a->images[i], *y = &b->images[i];
        if (strcmp(x->path, y->path) != 0 || strcmp(x->mime, y->mime) != 0 || x->len != y->len ||
            (x->len && memcmp(x->data, y->data, x->len) != 0))
            return false;
    }
    return true;
}

static void show_text(const char *label, const proto_msg_t *m)
{
    printf("    %s (status %d, is_error %d):\n", label, (int)m->status, (int)m->is_error);
    const char *t = m->text ? m->text : "";
    printf("      %.*s\n", (int)(m->text_len > 2000 ? 2000 : m->text_len), t);
    for (size_t i = 0; i < m->n_images; i++)
        printf("      image %s (%s, %zu bytes)\n", m->images[i].path, m->images[i].mime,
               m->images[i].len);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: talkback-replay FILE [--hub_endpoint EP] [--KEY VALUE ...]\n");
        return 2;
    }
    const char *file = argv[1];
    argv[1] = argv[0];
    if (config_load(argc - 1, argv + 1, "replay"))
        return 2;
    log_init("talkback-replay", log_level_parse(config_str("log_level")));

    list_t ps = { 0 };
    int n = record_read(file, on_event, &ps);
    if (n < 0) {
        fprintf(stderr, "talkback-replay: %s is not a readable recording\n", file);
        return 2;
    }
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
    /* Give workers a moment to find the new hub. */
    for (int i = 0; i < 100 && queue_live_workers(q, KIND_SANDBOX) == 0; i++)
        usleep(100000);

    int total = 0, same = 0, unanswered = 0;
    list_for_each_item(p, &ps, pair_t, link) {
        if (!p->rep) {
            unanswered++;
            continue;
        }
        total++;
        proto_msg_t *req = proto_msg_dup(p->req);
        if (!req)
            break;
        int64_t span = p->req->deadline_ms ? p->req->deadline_ms - p->req_ts : 600000;
        req->deadline_ms = proto_now_ms() + (span > 0 ? span : 600000);
        queue_ticket_t *t = queue_submit(q, req, NULL);
        const proto_msg_t *r = t ? queue_wait(t, (int)(span > 0 ? span : 600000) + 5000) : NULL;
        bool ok = r && r->status == p->rep->status && r->is_error == p->rep->is_error &&
                  r->text_len == p->rep->text_len &&
                  (r->text_len == 0 || memcmp(r->text, p->rep->text, r->text_len) == 0) &&
                  same_images(r, p->rep);
        if (ok) {
            same++;
        } else {
            printf("DIFFERS: request %d: %s %s (conversation %s)\n", total,
                   p->req->kind ? p->req->kind : "?", p->req->name ? p->req->name : "?",
                   p->req->conv ? p->req->conv : "");
            show_text("recorded", p->rep);
            if (r)
                show_text("now", r);
            else
                printf("    now: no reply\n");
        }
        queue_ticket_destroy(&t);
    }
    printf("replayed %d requests: %d same, %d differ%s\n", total, same, total - same,
           unanswered ? " (requests recorded without a reply were skipped)" : "");
    queue_destroy(&q);
    list_for_each_item_safe(p, &ps, pair_t, link) {
        proto_msg_destroy(&p->req);
        proto_msg_destroy(&p->rep);
        free(p);
    }
    return same == total ? 0 : 1;
}
