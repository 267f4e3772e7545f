/* hosts.c -- one entry per host from the live workers' HELLO data, and the
 * text of the hub's `hosts` answer (see hosts.h).
 *
 * A hub sees tens of workers on a handful of hosts, so grouping is a
 * linear search of the entries made so far and an insertion sort: simpler
 * than a hash table, and as fast at this size.
 */
#include "hub/hosts.h"
#include "proto/ops.h"
#include "proto/optable.h"
#include "talk/texts.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void hosts_clean_name(const char *s, size_t len, char *out, size_t size)
{
    size_t n = 0;
    for (size_t i = 0; s && i < len && n + 1 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        bool bad = c <= ' ' || c >= 0x7f || c == '=' || c == ',' || c == ':' || c == '"' ||
                   c == '\\';
        out[n++] = bad ? '?' : (char)c;
    }
    out[n] = '\0';
}

/* The entry of host name, made (in name order) when missing; NULL when out
 * of memory. */
static hosts_entry_t *hosts_entry(hosts_t *h, const char *name)
{
    size_t at = 0;
    for (; at < h->n; at++) {
        int c = strcmp(h->v[at].name, name);
        if (c == 0)
            return &h->v[at];
        if (c > 0)
            break;
    }
    if (h->n == h->cap) {
        size_t nc = h->cap ? h->cap * 2 : 8;
        hosts_entry_t *v = realloc(h->v, nc * sizeof *v);
        if (!v)
            return NULL;
        h->v = v;
        h->cap = nc;
    }
    memmove(&h->v[at + 1], &h->v[at], (h->n - at) * sizeof *h->v);
    h->n++;
    hosts_entry_t *e = &h->v[at];
    memset(e, 0, sizeof *e);
    strcpy(e->name, name);
    return e;
}

/* Count one worker of kind on e, kinds kept in name order. */
static void hosts_count_kind(hosts_entry_t *e, const char *raw)
{
    char kind[sizeof e->kinds[0].kind];
    hosts_clean_name(raw, strlen(raw), kind, sizeof kind);
    size_t at = 0;
    for (; at < e->n_kinds; at++) {
        int c = strcmp(e->kinds[at].kind, kind);
        if (c == 0) {
            e->kinds[at].n++;
            return;
        }
        if (c > 0)
            break;
    }
    if (e->n_kinds == HOSTS_KINDS_MAX) {
        /* Full: the last slot counts every other kind. */
        strcpy(e->kinds[HOSTS_KINDS_MAX - 1].kind, "other");
        e->kinds[HOSTS_KINDS_MAX - 1].n++;
        return;
    }
    memmove(&e->kinds[at + 1], &e->kinds[at], (e->n_kinds - at) * sizeof e->kinds[0]);
    e->n_kinds++;
    strcpy(e->kinds[at].kind, kind);
    e->kinds[at].n = 1;
}

/* A sandbox manager's load, added to its host: 0, or -1 when out of memory. */
static int hosts_add_manager(hosts_entry_t *e, const proto_map_t *d)
{
    e->managers++;
    if (!d)
        return 0;
    if (!e->has_manager) {
        if (proto_map_copy(&e->manager, d) != 0)
            return -1;
        e->has_manager = true;
    }
    e->running += proto_map_int(d, DATA_RUNNING, 0);
    e->kept += proto_map_int(d, DATA_KEPT, 0);
    e->paused += proto_map_int(d, DATA_PAUSED, 0);
    e->spares += proto_map_int(d, DATA_SPARES, 0);
    if (proto_map_int(d, DATA_DRAINING, 0))
        e->draining = true;
    return 0;
}

int hosts_add(hosts_t *h, const char *kind, const proto_map_t *data)
{
    size_t len = 0;
    const char *raw = data ? proto_map_str(data, DATA_HOST, &len) : NULL;
    char name[HOSTS_NAME_MAX + 1];
    hosts_clean_name(raw, raw ? len : 0, name, sizeof name);
    hosts_entry_t *e = hosts_entry(h, name);
    if (!e)
        return -1;
    kind = kind ? kind : "";
    hosts_count_kind(e, kind);
    return ops_kind_has(kind, OPS_KIND_MANAGER) ? hosts_add_manager(e, data) : 0;
}

void hosts_add_worker(const char *kind, const char *name, const char *host, const proto_map_t *data,
                      void *ctx)
{
    (void)name;
    (void)host;
    hosts_t *h = ctx;
    if (hosts_add(h, kind, data) < 0)
        h->oom = true;
}

void hosts_clear(hosts_t *h)
{
    for (size_t i = 0; i < h->n; i++)
        proto_map_clear(&h->v[i].manager);
    free(h->v);
    memset(h, 0, sizeof *h);
}

/* KEY=VALUE of one integer field of a manager's data, "-" when missing. */
static void hosts_field(textbuf_t *out, const proto_map_t *d, const char *key)
{
    if (d && proto_map_has(d, key, PROTO_V_INT))
        textbuf_printf(out, "\t%s=%" PRId64, key, proto_map_int(d, key, 0));
    else
        textbuf_printf(out, "\t%s=-", key);
}

/* One host's line. */
static void hosts_line(const hosts_entry_t *e, textbuf_t *out)
{
    const proto_map_t *d = e->has_manager ? &e->manager : NULL;
    size_t vlen = 0;
    const char *v = d ? proto_map_str(d, DATA_VERSION, &vlen) : NULL;
    char version[HOSTS_NAME_MAX + 1];
    hosts_clean_name(v, vlen, version, sizeof version);
    textbuf_printf(out, "host=%s\tversion=%s", e->name[0] ? e->name : "-",
                   version[0] ? version : "-");
    if (d) {
        textbuf_printf(
            out, "\trunning=%" PRId64 "\tkept=%" PRId64 "\tspares=%" PRId64 "\tpaused=%" PRId64,
            e->running, e->kept, e->spares, e->paused);
    } else {
        textbuf_puts(out, "\trunning=-\tkept=-\tspares=-\tpaused=-");
    }
    hosts_field(out, d, "max_running");
    hosts_field(out, d, "keep_max_count");
    hosts_field(out, d, "mem_free_kb");
    hosts_field(out, d, "disk_free_kb");
    textbuf_printf(out, "\tdraining=%s\tworkers=", d ? (e->draining ? "yes" : "no") : "-");
    for (size_t k = 0; k < e->n_kinds; k++)
        textbuf_printf(out, "%s%s:%d", k ? "," : "", e->kinds[k].kind, e->kinds[k].n);
    textbuf_puts(out, "\n");
}

void hosts_render(const hosts_t *h, textbuf_t *out)
{
    for (size_t i = 0; i < h->n; i++)
        hosts_line(&h->v[i], out);
}

proto_msg_t *hosts_answer(const proto_msg_t *req, const hosts_t *h)
{
    textbuf_t t;
    textbuf_init(&t);
    hosts_render(h, &t);
    proto_msg_t *r = t.oom ? NULL : proto_reply_new(req, PROTO_ST_OK, false, "");
    if (r && proto_msg_set_text(r, t.buf ? t.buf : "", t.len) != 0)
        proto_msg_destroy(&r);
    textbuf_free(&t);
    return r;
}
