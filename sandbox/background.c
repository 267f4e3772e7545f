/* background.c -- the lines about programs left running in the background,
 * the record of them in state_dir, and the resume's words (see
 * background.h).
 *
 * The texts are the TX_BG_ rows of talk/texts.h.  Every field comes from the
 * sandbox (agent/bgwatch.h writes them, but anything in the sandbox can
 * forge an EXIT), so each is parsed strictly, cut to its bound, and
 * cleaned: no control bytes (the tail keeps its newlines), no backticks
 * (a label sits between two).
 */
#include "sandbox/background.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "kept/kept.h"
#include "hints/probes_embedded.h"
#include "talk/texts.h"

#define BG_SEP '\x1f'

/* ---- the EXIT's lists ----------------------------------------------------------- */

void bgr_run(frame_msg_t *run, int64_t watch_ms)
{
    if (watch_ms > 0)
        frame_set_num(run, FN_BG_WATCH, watch_ms);
}

static char *copy_str(const frame_msg_t *m, frame_str_t f, size_t *len)
{
    *len = 0;
    if (!frame_has_str(m, f))
        return NULL;
    char *s = malloc(m->str_len[f] + 1);
    if (!s)
        return NULL;
    memcpy(s, m->str[f], m->str_len[f]);
    s[m->str_len[f]] = '\0';
    *len = m->str_len[f];
    return s;
}

void bgr_take(bgr_t *r, const frame_msg_t *m)
{
    bgr_free(r);
    r->left = copy_str(m, FS_BG_LEFT, &r->left_len);
    r->died = copy_str(m, FS_BG_DIED, &r->died_len);
    r->alive = copy_str(m, FS_BG_ALIVE, &r->alive_len);
    r->has_alive = frame_has_str(m, FS_BG_ALIVE) && (r->alive || m->str_len[FS_BG_ALIVE] == 0);
}

void bgr_free(bgr_t *r)
{
    free(r->left);
    free(r->died);
    free(r->alive);
    *r = (bgr_t){ 0 };
}

/* ---- parsing ------------------------------------------------------------------ */

/* Copy src (len bytes) into dst (cap), cut to fit, cleaned: control bytes
 * become spaces (newlines stay where keep_nl), backticks quotes. */
static void clean_copy(char *dst, size_t cap, const char *src, size_t len, bool keep_nl)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o + 1 < cap; i++) {
        unsigned char c = (unsigned char)src[i];
        if (c == '`')
            c = '\'';
        else if ((c < 0x20 && !(keep_nl && c == '\n')) || c == 0x7f)
            c = ' ';
        dst[o++] = (char)c;
    }
    dst[o] = '\0';
}

/* A whole decimal number within [lo, hi] of s (len bytes), or -1. */
static long number(const char *s, size_t len, long lo, long hi)
{
    if (len == 0 || len > 9)
        return -1;
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v >= lo && v <= hi ? v : -1;
}

/* One item into x: false when it is not one. */
static bool parse_item(const char *item, size_t len, bgi_t *x)
{
    const char *f[7];
    size_t fl[7], n = 0;
    const char *p = item, *end = item + len;
    while (n < 7) {
        const char *sep = memchr(p, BG_SEP, (size_t)(end - p));
        f[n] = p;
        fl[n++] = (size_t)((sep ? sep : end) - p);
        if (!sep)
            break;
        p = sep + 1;
    }
    if (n != 7 || fl[1] != 1 || !f[1][0] || !strchr("xkrXK", f[1][0]))
        return false;
    memset(x, 0, sizeof *x);
    x->pid = number(f[0], fl[0], 1, 1L << 22);
    x->during = f[1][0] == 'X' || f[1][0] == 'K';
    x->state = (char)tolower((unsigned char)f[1][0]);
    x->code = (int)number(f[2], fl[2], 0, 255);
    if (x->pid < 0 || x->code < 0 || (x->state == 'k' && (x->code < 1 || x->code > 64)))
        return false;
    clean_copy(x->ports, sizeof x->ports, f[3], fl[3], false);
    clean_copy(x->label, sizeof x->label, f[4], fl[4], false);
    clean_copy(x->log, sizeof x->log, f[5], fl[5], false);
    /* The tail: its last lines only. */
    const char *t = f[6];
    size_t tl = fl[6], lines = 0;
    for (size_t i = tl; i > 0; i--)
        if (t[i - 1] == '\n' && ++lines == BGI_TAIL_MAX_LINES) {
            t += i;
            tl -= i;
            break;
        }
    if (tl >= sizeof x->tail) {
        t += tl - (sizeof x->tail - 1);
        tl = sizeof x->tail - 1;
    }
    clean_copy(x->tail, sizeof x->tail, t, tl, true);
    return x->label[0] != '\0';
}

size_t bgi_parse(const char *list, size_t len, bgi_t *out, size_t max)
{
    size_t n = 0;
    const char *p = list, *end = list ? list + len : NULL;
    while (p && p < end && n < max) {
        const char *nul = memchr(p, '\0', (size_t)(end - p));
        if (!nul)
            break; /* an item must end in NUL */
        if (parse_item(p, (size_t)(nul - p), &out[n]))
            n++;
        p = nul + 1;
    }
    return n;
}

/* ---- the lines ------------------------------------------------------------------ */

/* What the program's own output says, for the line: its last lines in its
 * file, that the file is empty, or that its output is in the result. */
static void last_lines(const bgi_t *x, bool output_above, bool fix, textbuf_t *t)
{
    if (x->log[0] && x->tail[0]) {
        textbuf_printf(t, TX_BG_TAIL, x->log, x->tail);
        if (fix)
            textbuf_puts(t, TX_BG_FIX);
    } else if (x->log[0]) {
        textbuf_printf(t, TX_BG_EMPTY_LOG, x->log);
    } else if (output_above) {
        textbuf_puts(t, TX_BG_ABOVE);
    }
}

static const char *sig_name(int sig)
{
    const char *d = sigabbrev_np(sig);
    return d ? d : "?";
}

static bool port_in_use(const char *s)
{
    return s && (strcasestr(s, "already in use") || strstr(s, "EADDRINUSE") ||
                 strcasestr(s, "address in use"));
}

/* In listeners ("ADDR:PORT (comm, pid N); ..."), the entry on a port named
 * in text (a word of digits): into port, holder and pid.  False when
 * none. */
static bool holder_of(const char *listeners, const char *text, char *port, size_t plen,
                      char *holder, size_t hlen, char *pid, size_t pidlen)
{
    for (const char *p = text; p && *p; p++) {
        if (!isdigit((unsigned char)*p) || (p > text && isalnum((unsigned char)p[-1])))
            continue;
        size_t k = strspn(p, "0123456789");
        if (k < 2 || k > 5 || isalnum((unsigned char)p[k])) {
            p += k - 1;
            continue;
        }
        char needle[16];
        snprintf(needle, sizeof needle, ":%.*s (", (int)k, p);
        const char *at = strstr(listeners, needle);
        if (!at) {
            p += k - 1;
            continue;
        }
        const char *open_p = at + strlen(needle), *close_p = strchr(open_p, ')');
        const char *comma = close_p ? memchr(open_p, ',', (size_t)(close_p - open_p)) : NULL;
        const char *pp = comma ? strstr(comma, "pid ") : NULL;
        if (!pp || pp > close_p)
            return false;
        snprintf(port, plen, "%.*s", (int)k, p);
        snprintf(pid, pidlen, "%.*s", (int)(close_p - pp - 4), pp + 4);
        snprintf(holder, hlen, "%.*s (pid %s)", (int)(comma - open_p), open_p, pid);
        return true;
    }
    return false;
}

/* A program whose port was taken: say who holds it. */
static void port_line(const bgi_t *x, bg_probe_fn probe, void *ctx, textbuf_t *t)
{
    textbuf_t l;
    textbuf_init(&l);
    if (!probe || probe(ctx, PROBE_LISTENERS "listeners\n", &l) != 0 || !l.buf)
        textbuf_puts(&l, "(unknown)");
    while (l.len && isspace((unsigned char)l.buf[l.len - 1]))
        l.buf[--l.len] = '\0';
    char clean[512], port[8], holder[200], pid[16];
    clean_copy(clean, sizeof clean, l.buf, l.len, false);
    if (holder_of(clean, x->label, port, sizeof port, holder, sizeof holder, pid, sizeof pid) ||
        holder_of(clean, x->tail, port, sizeof port, holder, sizeof holder, pid, sizeof pid))
        textbuf_printf(t, TX_BG_PORT_HELD, x->label, x->pid, x->code, port, holder, pid);
    else
        textbuf_printf(t, TX_BG_PORT_TAKEN, x->label, x->pid, x->code, clean);
    textbuf_free(&l);
}

void bg_left_lines(const bgr_t *r, const char *output, size_t output_len, bg_probe_fn probe,
                   void *ctx, textbuf_t *t)
{
    bgi_t x[BGI_MAX];
    size_t n = r ? bgi_parse(r->left, r->left_len, x, BGI_MAX) : 0;
    bool above = output_len > 0;
    textbuf_t listening;
    textbuf_init(&listening);
    for (size_t i = 0; i < n; i++) {
        textbuf_t tail;
        textbuf_init(&tail);
        if (x[i].state == 'x' && x[i].code != 0 &&
            (port_in_use(x[i].tail) || (!x[i].log[0] && port_in_use(output)))) {
            port_line(&x[i], probe, ctx, t);
        } else if (x[i].state == 'x' && x[i].code != 0) {
            last_lines(&x[i], above, true, &tail);
            textbuf_printf(t, TX_BG_EXITED, x[i].label, x[i].pid, x[i].code, tail.buf ?: "");
        } else if (x[i].state == 'k') {
            last_lines(&x[i], above, false, &tail);
            textbuf_printf(t, TX_BG_KILLED, x[i].label, x[i].pid, x[i].code, sig_name(x[i].code),
                           tail.buf ?: "");
        } else if (x[i].state == 'r' && x[i].ports[0]) {
            textbuf_printf(&listening, "%s%s", listening.len ? "; " : "", x[i].ports);
        }
        textbuf_free(&tail);
    }
    if (listening.len)
        textbuf_printf(t, TX_BG_LISTENING, listening.buf);
    textbuf_free(&listening);
}

void bg_died_lines(const bgr_t *r, bool during, textbuf_t *t)
{
    bgi_t x[BGI_MAX];
    size_t n = r ? bgi_parse(r->died, r->died_len, x, BGI_MAX) : 0;
    for (size_t i = 0; i < n; i++) {
        if (x[i].during != during)
            continue;
        textbuf_t tail;
        textbuf_init(&tail);
        last_lines(&x[i], false, x[i].state == 'x' && x[i].code != 0 && !during, &tail);
        if (x[i].state == 'k')
            textbuf_printf(t, during ? TX_BG_GONE_KILLED : TX_BG_DIED_KILLED, x[i].label, x[i].pid,
                           x[i].code, sig_name(x[i].code), tail.buf ?: "");
        else if (x[i].code != 0)
            textbuf_printf(t, during ? TX_BG_GONE_EXIT : TX_BG_DIED_EXIT, x[i].label, x[i].pid,
                           x[i].code, tail.buf ?: "");
        else
            textbuf_printf(t, during ? TX_BG_GONE_OK : TX_BG_DIED_OK, x[i].label, x[i].pid,
                           tail.buf ?: "");
        textbuf_free(&tail);
    }
}

/* ---- the record and the resume ------------------------------------------------------ */

/* The addresses of ports ("ADDR:PORT (comm, pid N); ..."), without the
 * processes (their pids mean nothing after a stop), into out. */
static void addresses(const char *ports, char *out, size_t cap)
{
    size_t o = 0;
    out[0] = '\0';
    for (const char *p = ports; *p && o + 1 < cap;) {
        size_t k = strcspn(p, " ;");
        if (k && o + k + 3 < cap)
            o += (size_t)snprintf(out + o, cap - o, "%s%.*s", o ? ", " : "", (int)k, p);
        p += k;
        p += strcspn(p, ";");
        p += strspn(p, "; ");
    }
}

void bg_record(const kept_t *k, const char *id, const bgr_t *r)
{
    if (!r || !r->has_alive)
        return;
    bgi_t x[BGI_MAX];
    size_t n = bgi_parse(r->alive, r->alive_len, x, BGI_MAX);
    textbuf_t t;
    textbuf_init(&t);
    for (size_t i = 0; i < n; i++) {
        char addr[BGI_PORTS_MAX];
        addresses(x[i].ports, addr, sizeof addr);
        textbuf_printf(&t, "%s\t%s\n", x[i].label, addr);
    }
    if (kept_background_set(k, id, t.buf ? t.buf : "") != 0)
        log_warn("cannot write the background record of %.12s in %s: %s", id, kept_state_dir(k),
                 strerror(errno));
    textbuf_free(&t);
}

void bg_resume_words(const kept_t *k, const char *id, textbuf_t *t)
{
    char *rec = kept_background_take(k, id);
    if (!rec)
        return;
    textbuf_t list;
    textbuf_init(&list);
    size_t n = 0;
    for (char *line = rec; *line && n < BGI_MAX; n++) {
        size_t len = strcspn(line, "\n");
        char *tab = memchr(line, '\t', len);
        char label[BGI_LABEL_MAX], addr[BGI_PORTS_MAX];
        clean_copy(label, sizeof label, line, tab ? (size_t)(tab - line) : len, false);
        clean_copy(addr, sizeof addr, tab ? tab + 1 : "", tab ? len - (size_t)(tab - line) - 1 : 0,
                   false);
        if (label[0]) {
            textbuf_puts(&list, list.len ? "; " : "");
            if (addr[0])
                textbuf_printf(&list, TX_BG_ONE_PORTS, label, addr);
            else
                textbuf_printf(&list, TX_BG_ONE, label);
        }
        line += len;
        line += *line == '\n';
    }
    if (list.len)
        textbuf_printf(t, TX_BG_BEFORE, list.buf);
    textbuf_free(&list);
    free(rec);
}
