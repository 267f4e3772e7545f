/* show.c -- talkbackctl's parsing and printing of the hub's and the
 * managers' answers (see show.h).
 *
 * A table is printed in two passes: the widest cell of each column first,
 * then the rows padded to it.  Cells are small and rows few (a host per
 * line, a chat per line), so every cell is formatted twice rather than
 * kept.
 */
#include "ctl/show.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHOW_CELL 96 /* widest cell printed; longer values are cut */

void show_table_init(show_table_t *t)
{
    memset(t, 0, sizeof *t);
}

/* Free a row's fields (the row itself is the table's). */
static void show_row_free(show_row_t *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->key[i]);
        free(r->val[i]);
    }
    r->n = 0;
}

void show_table_free(show_table_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        show_row_free(&t->rows[i]);
    free(t->rows);
    show_table_init(t);
}

/* A copy of len bytes with control bytes (and DEL) made '?': what other
 * machines say never moves the terminal's cursor. */
static char *show_clean(const char *s, size_t len)
{
    char *c = malloc(len + 1);
    if (!c)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        unsigned char b = (unsigned char)s[i];
        c[i] = b < 0x20 || b == 0x7f ? '?' : (char)b;
    }
    c[len] = '\0';
    return c;
}

/* Split one line at tabs into r: KEY=VALUE fields when kv, else
 * positional.  0, 1 when the line does not parse, -1 out of memory. */
static int show_split(show_row_t *r, const char *line, size_t len, bool kv)
{
    memset(r, 0, sizeof *r);
    const char *p = line, *end = line + len;
    while (p <= end) {
        const char *tab = memchr(p, '\t', (size_t)(end - p));
        const char *fe = tab ? tab : end;
        if (r->n == SHOW_MAX_FIELDS)
            return 1;
        const char *eq = kv ? memchr(p, '=', (size_t)(fe - p)) : NULL;
        if (kv && (!eq || eq == p))
            return 1;
        if (kv && !(r->key[r->n] = show_clean(p, (size_t)(eq - p))))
            return -1;
        const char *v = kv ? eq + 1 : p;
        if (!(r->val[r->n] = show_clean(v, (size_t)(fe - v)))) {
            free(r->key[r->n]);
            return -1;
        }
        r->n++;
        if (!tab)
            break;
        p = tab + 1;
    }
    return 0;
}

/* Parse every line of text; positional lines must have want fields. */
static int show_parse(show_table_t *t, const char *text, size_t len, bool kv, size_t want)
{
    const char *p = text, *end = text + len;
    while (text && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (le > p) {
            if (t->n == t->cap) {
                size_t nc = t->cap ? t->cap * 2 : 16;
                show_row_t *rows = realloc(t->rows, nc * sizeof *rows);
                if (!rows)
                    return -1;
                t->rows = rows;
                t->cap = nc;
            }
            show_row_t *r = &t->rows[t->n];
            int rc = show_split(r, p, (size_t)(le - p), kv);
            if (rc == 0 && !kv && r->n != want)
                rc = 1;
            if (rc < 0) {
                show_row_free(r);
                return -1;
            }
            if (rc > 0) {
                show_row_free(r);
                t->skipped++;
            } else {
                t->n++;
            }
        }
        p = le + 1;
    }
    return 0;
}

int show_parse_hosts(show_table_t *t, const char *text, size_t len)
{
    return show_parse(t, text, len, true, 0);
}

int show_parse_sandboxes(show_table_t *t, const char *text, size_t len)
{
    return show_parse(t, text, len, false, 6);
}

const char *show_get(const show_row_t *r, const char *key)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->key[i] && strcmp(r->key[i], key) == 0)
            return r->val[i];
    return NULL;
}

/* Whether s is a whole decimal integer (optionally negative). */
static bool show_int(const char *s, long long *v)
{
    if (!s || !*s)
        return false;
    char *e = NULL;
    errno = 0;
    long long x = strtoll(s, &e, 10);
    if (errno || *e)
        return false;
    if (v)
        *v = x;
    return true;
}

void show_duration(const char *seconds, char *out, size_t n)
{
    long long s;
    if (!show_int(seconds, &s) || s < 0) {
        snprintf(out, n, "-");
        return;
    }
    if (s >= 86400)
        snprintf(out, n, "%lldd%lldh", s / 86400, s % 86400 / 3600);
    else if (s >= 3600)
        snprintf(out, n, "%lldh%lldm", s / 3600, s % 3600 / 60);
    else if (s >= 60)
        snprintf(out, n, "%lldm%llds", s / 60, s % 60);
    else
        snprintf(out, n, "%llds", s);
}

void show_bytes(const char *bytes, char *out, size_t n)
{
    long long b;
    if (!show_int(bytes, &b) || b < 0) {
        snprintf(out, n, "-");
        return;
    }
    static const char units[] = "KMGTP";
    if (b < 1024) {
        snprintf(out, n, "%lldB", b);
        return;
    }
    double v = (double)b / 1024.0;
    size_t u = 0;
    while (v >= 1024.0 && u + 1 < sizeof units - 1) {
        v /= 1024.0;
        u++;
    }
    if (v < 10.0)
        snprintf(out, n, "%.1f%c", v, units[u]);
    else
        snprintf(out, n, "%.0f%c", v, units[u]);
}

/* ---- tables ------------------------------------------------------------ */

/* One cell of a row, formatted into out. */
typedef void (*show_cell_fn)(const show_row_t *r, size_t col, char *out, size_t n);

/* Aligned columns, two spaces apart, a header line first. */
static void show_grid(const show_table_t *t, const char *const *heads, size_t ncols,
                      show_cell_fn cell, textbuf_t *out)
{
    size_t width[SHOW_MAX_FIELDS] = { 0 };
    char c[SHOW_CELL];
    for (size_t k = 0; k < ncols; k++)
        width[k] = strlen(heads[k]);
    for (size_t i = 0; i < t->n; i++)
        for (size_t k = 0; k < ncols; k++) {
            cell(&t->rows[i], k, c, sizeof c);
            if (strlen(c) > width[k])
                width[k] = strlen(c);
        }
    for (size_t k = 0; k < ncols; k++)
        textbuf_printf(out, "%-*s%s", k + 1 < ncols ? (int)width[k] : 0, heads[k],
                       k + 1 < ncols ? "  " : "\n");
    for (size_t i = 0; i < t->n; i++)
        for (size_t k = 0; k < ncols; k++) {
            cell(&t->rows[i], k, c, sizeof c);
            textbuf_printf(out, "%-*s%s", k + 1 < ncols ? (int)width[k] : 0, c,
                           k + 1 < ncols ? "  " : "\n");
        }
}

/* A value, or "-" when absent or empty. */
static const char *show_or_dash(const char *s)
{
    return s && *s ? s : "-";
}

/* "3/100": a count and its cap ("3" when there is no cap, "-" when
 * neither is known). */
static void show_of(const char *v, const char *cap, char *out, size_t n)
{
    long long c;
    if (show_int(cap, &c) && c > 0 && show_int(v, NULL))
        snprintf(out, n, "%s/%s", v, cap);
    else
        snprintf(out, n, "%s", show_or_dash(v));
}

/* KiB as a size, or "-". */
static void show_kb(const char *kb, char *out, size_t n)
{
    long long v;
    char b[32];
    if (!show_int(kb, &v) || v < 0 || v > INT64_MAX / 1024) {
        snprintf(out, n, "-");
        return;
    }
    snprintf(b, sizeof b, "%lld", v * 1024);
    show_bytes(b, out, n);
}

static const char *const show_host_heads[] = {
    "HOST", "VERSION", "RUNNING", "KEPT", "SPARES", "MEM FREE", "DISK FREE", "DRAINING", "WORKERS",
};

/* One cell of the hosts table: the columns of show_host_heads. */
static void show_host_cell(const show_row_t *r, size_t col, char *out, size_t n)
{
    switch (col) {
    case 0: snprintf(out, n, "%s", show_or_dash(show_get(r, "host"))); break;
    case 1: snprintf(out, n, "%s", show_or_dash(show_get(r, "version"))); break;
    case 2: show_of(show_get(r, "running"), show_get(r, "max_running"), out, n); break;
    case 3: show_of(show_get(r, "kept"), show_get(r, "keep_max_count"), out, n); break;
    case 4: snprintf(out, n, "%s", show_or_dash(show_get(r, "spares"))); break;
    case 5: show_kb(show_get(r, "mem_free_kb"), out, n); break;
    case 6: show_kb(show_get(r, "disk_free_kb"), out, n); break;
    case 7: snprintf(out, n, "%s", show_or_dash(show_get(r, "draining"))); break;
    default: snprintf(out, n, "%s", show_or_dash(show_get(r, "workers"))); break;
    }
}

void show_hosts_table(const show_table_t *t, textbuf_t *out)
{
    show_grid(t, show_host_heads, sizeof show_host_heads / sizeof *show_host_heads, show_host_cell,
              out);
}

static const char *const show_sandbox_heads[] = {
    "CONVERSATION", "USER", "HOST", "STATE", "IDLE", "DISK",
};

/* One cell of the sandboxes table: idle time and disk made readable. */
static void show_sandbox_cell(const show_row_t *r, size_t col, char *out, size_t n)
{
    const char *v = col < r->n ? r->val[col] : NULL;
    if (col == 4)
        show_duration(v, out, n);
    else if (col == 5)
        show_bytes(v, out, n);
    else
        snprintf(out, n, "%s", show_or_dash(v));
}

void show_sandboxes_table(const show_table_t *t, textbuf_t *out)
{
    show_grid(t, show_sandbox_heads, sizeof show_sandbox_heads / sizeof *show_sandbox_heads,
              show_sandbox_cell, out);
}

/* ---- JSON ---------------------------------------------------------------- */

/* A JSON string of v; bytes that are not UTF-8 become '?'. */
static json_t *show_json_str(const char *v)
{
    json_t *j = json_string(v);
    if (j)
        return j;
    char *c = strdup(v);
    if (!c)
        return NULL;
    for (char *p = c; *p; p++)
        if ((unsigned char)*p >= 0x80)
            *p = '?';
    j = json_string(c);
    free(c);
    return j;
}

/* A field's JSON value: an integer, true/false for yes/no, null for "-",
 * else the string. */
static json_t *show_json_value(const char *v)
{
    long long i;
    if (show_int(v, &i))
        return json_integer(i);
    if (!v || !*v || strcmp(v, "-") == 0)
        return json_null();
    if (strcmp(v, "yes") == 0 || strcmp(v, "no") == 0)
        return json_boolean(strcmp(v, "yes") == 0);
    return show_json_str(v);
}

/* An array as indented JSON into out (a is freed). */
static void show_json_dump(json_t *a, textbuf_t *out)
{
    char *s = json_dumps(a, JSON_INDENT(2));
    if (s) {
        textbuf_puts(out, s);
        textbuf_puts(out, "\n");
    } else {
        out->oom = 1;
    }
    free(s);
    json_decref(a);
}

void show_hosts_json(const show_table_t *t, textbuf_t *out)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < t->n; i++) {
        json_t *o = json_object();
        for (size_t k = 0; o && k < t->rows[i].n; k++) {
            const char *key = t->rows[i].key[k], *v = t->rows[i].val[k];
            bool text = !strcmp(key, "host") || !strcmp(key, "version") || !strcmp(key, "workers");
            json_object_set_new(o, key, text ? show_json_str(v) : show_json_value(v));
        }
        json_array_append_new(a, o);
    }
    show_json_dump(a, out);
}

static const char *const show_sandbox_keys[] = {
    "conversation", "user", "host", "state", "idle_seconds", "disk_bytes",
};

void show_sandboxes_json(const show_table_t *t, textbuf_t *out)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < t->n; i++) {
        json_t *o = json_object();
        for (size_t k = 0; o && k < t->rows[i].n && k < 6; k++) {
            const char *v = t->rows[i].val[k];
            json_object_set_new(o, show_sandbox_keys[k],
                                k >= 4 ? show_json_value(v) : show_json_str(v));
        }
        json_array_append_new(a, o);
    }
    show_json_dump(a, out);
}
