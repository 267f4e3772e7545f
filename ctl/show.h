/* show.h -- what talkbackctl prints: the hub's `hosts` text and the
 * managers' `list` text, parsed and shown as a table or as JSON.
 *
 * Both answers are lines of tab-separated fields (hosts.h says the `hosts`
 * line: KEY=VALUE fields; a manager's `list` line is
 * `conversation user host state idle_seconds disk_bytes`).  They come
 * from other processes, maybe other machines, so every field is cleaned of
 * control bytes before it reaches a terminal, and a line with the wrong
 * number of fields is skipped, not guessed at.
 *
 * Pure code (no sockets), unit-tested in tests/unit/test_ctl.c.
 */
#ifndef TALKBACK_CTL_SHOW_H
#define TALKBACK_CTL_SHOW_H

#include <stdbool.h>
#include <stddef.h>

#include "common/textbuf.h"

/* Fields of one parsed line, at most SHOW_MAX_FIELDS. */
#define SHOW_MAX_FIELDS 16

typedef struct {
    char *key[SHOW_MAX_FIELDS]; /* NULL for positional (list) lines */
    char *val[SHOW_MAX_FIELDS];
    size_t n;
} show_row_t;

typedef struct {
    show_row_t *rows;
    size_t n, cap;
    size_t skipped; /* lines that did not parse */
} show_table_t;

void show_table_init(show_table_t *t);
void show_table_free(show_table_t *t);

/* Parse a `hosts` answer (KEY=VALUE fields) into t.  -1 when out of
 * memory. */
int show_parse_hosts(show_table_t *t, const char *text, size_t len);
/* Parse a manager's `list` answer (six positional fields) into t,
 * appending.  -1 when out of memory. */
int show_parse_sandboxes(show_table_t *t, const char *text, size_t len);

/* The value of key in a row (hosts lines), or NULL. */
const char *show_get(const show_row_t *r, const char *key);

/* Render for people (aligned columns with a header line) or as one JSON
 * array of objects (numbers where a field is a number). */
void show_hosts_table(const show_table_t *t, textbuf_t *out);
void show_hosts_json(const show_table_t *t, textbuf_t *out);
void show_sandboxes_table(const show_table_t *t, textbuf_t *out);
void show_sandboxes_json(const show_table_t *t, textbuf_t *out);

/* 93784 seconds -> "1d2h", 3725 -> "1h2m", 65 -> "1m5s", 7 -> "7s";
 * not a number -> "-". */
void show_duration(const char *seconds, char *out, size_t n);
/* Bytes -> "512B", "1.5K", "20M", "3.2G" (binary units); not a number ->
 * "-". */
void show_bytes(const char *bytes, char *out, size_t n);

#endif
