/* hosts.h -- the hosts of a cluster as the hub sees them, from the
 * workers' HELLO data.
 *
 * Every worker says which host it runs on (HELLO data `host`); a sandbox
 * manager also reports its load and caps (`running`, `kept`, `spares`, `paused`,
 * `max_running`, `keep_max_count`, `mem_free_kb`, `disk_free_kb`,
 * `draining`, `version`).  hosts_add folds the live workers, one at a
 * time, into one entry per host; hosts_render writes the text of the
 * hub-answered operation `hosts` (kind `hub`), one line per host of
 * tab-separated KEY=VALUE fields, which talkbackctl turns into a table.
 * The gateway's /metrics reads the same entries.
 *
 * Pure code: no sockets, no locks (the caller holds the snapshot still),
 * unit-tested in tests/unit/test_ctl.c.
 */
#ifndef TALKBACK_HOSTS_H
#define TALKBACK_HOSTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/textbuf.h"
#include "proto/proto.h"

/* Kinds counted per host; a host with workers of more kinds counts the
 * rest under the last one's name "other". */
#define HOSTS_KINDS_MAX 8
/* Longest host name reported; longer ones are cut. */
#define HOSTS_NAME_MAX  64

/* One host. */
typedef struct {
    char name[HOSTS_NAME_MAX + 1]; /* HELLO `host`, made printable; "" = not said */
    proto_map_t manager;           /* a copy of its (first) sandbox manager's HELLO data */
    bool has_manager;              /* manager holds a manager's data */
    int managers;                  /* sandbox managers on it */
    int64_t running, kept, spares; /* summed over its sandbox managers */
    int64_t paused;                /* of running, paused (summed too) */
    bool draining;                 /* one of its managers says so */
    struct {
        char kind[32];
        int n;
    } kinds[HOSTS_KINDS_MAX]; /* live workers by kind, in name order */
    size_t n_kinds;
} hosts_entry_t;

typedef struct {
    hosts_entry_t *v; /* sorted by name */
    size_t n, cap;
    bool oom; /* free for callers: a hosts_add failed */
} hosts_t;

/* Count one worker of kind, whose HELLO data is data (may be NULL), on
 * its host.  Start from a zeroed hosts_t.  The entries copy what they keep:
 * the worker may go.  0, or -1 when out of memory. */
int hosts_add(hosts_t *h, const char *kind, const proto_map_t *data);
/* hosts_add as a queue_workers_each callback (ctx: the hosts_t); a failure
 * sets its oom. */
void hosts_add_worker(const char *kind, const char *name, const char *host, const proto_map_t *data,
                      void *ctx);
void hosts_clear(hosts_t *h);

/* The `hosts` reply text: per host one line,
 *   host=H<TAB>version=V<TAB>running=N<TAB>kept=N<TAB>spares=N<TAB>
 *   max_running=N<TAB>keep_max_count=N<TAB>mem_free_kb=N<TAB>
 *   disk_free_kb=N<TAB>draining=yes|no<TAB>workers=KIND:N,KIND:N
 * a value a host's manager did not report is "-" (and every manager field
 * is "-" on a host with no sandbox manager).  No hosts: empty text. */
void hosts_render(const hosts_t *h, textbuf_t *out);

/* Copy at most size-1 bytes of s (len bytes) into out, NUL-terminated,
 * with every byte that is not printable ASCII, and every space, '=', ',',
 * ':', double quote and backslash, replaced by '?': host and kind names go
 * into tab-separated KEY=VALUE lines and metric labels, and come from
 * other machines. */
/* The hub's answer to `hosts` (kind hub: the hub serves it itself, from
 * h): hosts_render's text.  NULL when out of memory. */
proto_msg_t *hosts_answer(const proto_msg_t *req, const hosts_t *h);

void hosts_clean_name(const char *s, size_t len, char *out, size_t size);

#endif
