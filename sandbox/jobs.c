/* jobs.c -- the lines about jobs, and the ends read from the sandbox
 * (jobs.h). */
#include "sandbox/jobs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "talk/texts.h"

/* Every text the model reads about jobs is in talk/texts.h (TX_SB_JOB_...). */

#define JOBS_PATH_FMT "/run/talkback/jobs/%d/out"

char *jobs_take(const frame_msg_t *m, size_t *len)
{
    *len = 0;
    if (!frame_has_str(m, FS_JOBS) || m->str_len[FS_JOBS] == 0 ||
        m->str_len[FS_JOBS] > JOBS_BYTES_MAX)
        return NULL;
    char *s = malloc(m->str_len[FS_JOBS] + 1);
    if (!s)
        return NULL;
    memcpy(s, m->str[FS_JOBS], m->str_len[FS_JOBS]);
    s[m->str_len[FS_JOBS]] = '\0';
    *len = m->str_len[FS_JOBS];
    return s;
}

/* A decimal integer field of len bytes in [lo, hi]. */
static bool num_field(const char *p, size_t len, int64_t lo, int64_t hi, int64_t *out)
{
    if (len == 0 || len > 12)
        return false;
    int64_t v = 0;
    bool neg = p[0] == '-';
    for (size_t i = neg; i < len; i++) {
        if (p[i] < '0' || p[i] > '9')
            return false;
        v = v * 10 + (p[i] - '0');
    }
    if (neg && len == 1)
        return false;
    v = neg ? -v : v;
    if (v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* The command, cleaned (control bytes spaces, backticks quotes) and cut
 * to JOBS_CMD_SHOWN bytes with "...". */
static void clean_cmd(char *dst, const char *src, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o < JOBS_CMD_SHOWN; i++) {
        unsigned char c = (unsigned char)src[i];
        dst[o++] = c < 0x20 || c == 0x7f ? ' ' : c == '`' ? '\'' : (char)c;
    }
    if (len > JOBS_CMD_SHOWN) {
        /* not in the middle of a UTF-8 sequence */
        while (o > 0 && ((unsigned char)dst[o - 1] & 0xc0) == 0x80)
            o--;
        if (o > 0 && (unsigned char)dst[o - 1] >= 0xc0)
            o--;
        memcpy(dst + o, "...", 3);
        o += 3;
    }
    dst[o] = '\0';
}

bool jobs_parse_item(const char *item, size_t len, jobs_end_t *out)
{
    const char *f[6];
    size_t fl[6], k = 0;
    const char *p = item, *end = item + len;
    while (k < 5) {
        const char *sep = memchr(p, '\x1f', (size_t)(end - p));
        if (!sep)
            return false;
        f[k] = p;
        fl[k++] = (size_t)(sep - p);
        p = sep + 1;
    }
    f[5] = p;
    fl[5] = (size_t)(end - p);
    if (memchr(f[5], '\0', fl[5]))
        return false;
    int64_t no, st, sig, tmo, ms;
    if (!num_field(f[0], fl[0], 1, 999999, &no) || !num_field(f[1], fl[1], 0, 255, &st) ||
        !num_field(f[2], fl[2], 0, 64, &sig) || !num_field(f[3], fl[3], 0, 1, &tmo) ||
        !num_field(f[4], fl[4], 0, INT64_C(100000000000), &ms))
        return false;
    *out = (jobs_end_t){
        .no = (int)no, .status = (int)st, .sig = (int)sig, .timed_out = tmo != 0, .elapsed_ms = ms
    };
    clean_cmd(out->cmd, f[5], fl[5]);
    return true;
}

void jobs_span(int64_t ms, char *out, size_t cap)
{
    int64_t s = ms < 0 ? 0 : ms / 1000;
    if (s >= 3600)
        snprintf(out, cap, "%" PRId64 " h %02" PRId64 " min", s / 3600, s / 60 % 60);
    else if (s >= 60)
        snprintf(out, cap, "%" PRId64 " min %02" PRId64 " s", s / 60, s % 60);
    else
        snprintf(out, cap, "%" PRId64 " s", s);
}

void jobs_out_path(int no, char *out, size_t cap)
{
    snprintf(out, cap, JOBS_PATH_FMT, no);
}

/* The line of one end. */
static void ended_line(const jobs_end_t *e, textbuf_t *t)
{
    char took[48], path[64];
    jobs_span(e->elapsed_ms, took, sizeof took);
    jobs_out_path(e->no, path, sizeof path);
    if (e->timed_out)
        textbuf_printf(t, TX_SB_JOB_TIMED_OUT, e->no, e->cmd, took, path, e->no);
    else if (e->sig)
        textbuf_printf(t, TX_SB_JOB_KILLED, e->no, e->cmd, e->sig, took, e->status, path, e->no);
    else
        textbuf_printf(t, TX_SB_JOB_ENDED, e->no, e->cmd, e->status, took, path, e->no);
}

void jobs_ended_lines(const char *items, size_t len, textbuf_t *t)
{
    size_t said = 0;
    const char *p = items, *end = items ? items + len : NULL;
    while (p && p < end && said < JOBS_ITEMS_MAX) {
        const char *nul = memchr(p, '\0', (size_t)(end - p));
        size_t n = nul ? (size_t)(nul - p) : (size_t)(end - p);
        jobs_end_t e;
        if (jobs_parse_item(p, n, &e)) {
            ended_line(&e, t);
            said++;
        }
        p += n + 1;
    }
}

void jobs_started_line(int no, int64_t after_ms, int timeout_s, textbuf_t *t)
{
    char took[48], path[64];
    jobs_span(after_ms, took, sizeof took);
    jobs_out_path(no, path, sizeof path);
    textbuf_printf(t, TX_SB_JOB_STARTED, took, no, timeout_s, path, no);
}

void jobs_unkept_line(int64_t after_ms, textbuf_t *t)
{
    char took[48];
    jobs_span(after_ms, took, sizeof took);
    textbuf_printf(t, TX_SB_JOB_UNKEPT, took);
}
