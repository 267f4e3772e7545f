/* bgkeep.c -- the worker's side of the background watch (see bgkeep.h). */
#include "agent/bgkeep.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/bgwatch.h"

typedef struct {
    pid_t pid;
    int ctl;
} keeper_t;

/* The shepherds that stay; the ends waiting to be said; what runs. */
static keeper_t *keepers;
static size_t n_keepers;
static struct {
    char *item;   /* first: join() reads it */
    uint64_t seq; /* the how-manieth end, counting from 1 */
} died[BGK_DIED_MAX];
static size_t n_died;
static uint64_t died_seq; /* ends so far */
static struct {
    pid_t pid;
    char *item;
} alive[BGK_ALIVE_MAX];
static size_t n_alive;
static bool alive_changed;
/* What the last bgk_attach put in an EXIT (freed by bgk_sent). */
static char *sent_died, *sent_alive;

/* The program's pid and state of an item (bgwatch.h). */
static pid_t item_pid(const char *item, char *state)
{
    char *end;
    long pid = strtol(item, &end, 10);
    *state = *end == BG_SEP ? end[1] : '?';
    return (pid_t)pid;
}

static void alive_add(pid_t pid, const char *item)
{
    if (n_alive == BGK_ALIVE_MAX)
        return; /* known to run: enough of them */
    char *copy = strdup(item);
    if (!copy)
        return;
    alive[n_alive].pid = pid;
    alive[n_alive++].item = copy;
    alive_changed = true;
}

/* Program pid ended: it runs no more, and its end waits to be said. */
static void ended(pid_t pid, const char *item)
{
    for (size_t i = 0; i < n_alive; i++)
        if (alive[i].pid == pid) {
            free(alive[i].item);
            alive[i] = alive[--n_alive];
            alive_changed = true;
            break;
        }
    char *copy = strdup(item);
    if (!copy)
        return;
    if (n_died == BGK_DIED_MAX) {
        free(died[0].item);
        memmove(died, died + 1, (BGK_DIED_MAX - 1) * sizeof died[0]);
        n_died--;
    }
    died[n_died].item = copy;
    died[n_died++].seq = ++died_seq;
}

bool bgk_rec(bgk_job_t *b, const shep_rec_t *r, const char *item)
{
    char state;
    if (r->kind == SHEP_BG_DIED) {
        ended(item_pid(item, &state), item);
        return true;
    }
    if (r->kind == SHEP_BG_PORTS) {
        pid_t pid = item_pid(item, &state);
        for (size_t i = 0; i < n_alive; i++)
            if (alive[i].pid == pid && state == 'r') {
                char *copy = strdup(item);
                if (copy) {
                    free(alive[i].item);
                    alive[i].item = copy;
                    alive_changed = true;
                }
            }
        return true;
    }
    if (r->kind == SHEP_BG_WATCHED) {
        if (b)
            b->watched = b->watcher = true;
        return true;
    }
    if (r->kind == SHEP_EXITED && r->err == 0 && b)
        b->watched = true; /* it left nothing: no watch to wait for */
    if (r->kind != SHEP_BG_LEFT)
        return false;
    pid_t pid = item_pid(item, &state);
    if (state == 'r')
        alive_add(pid, item);
    size_t len = strlen(item) + 1;
    char *n = b ? realloc(b->left, b->left_len + len) : NULL;
    if (n) {
        memcpy(n + b->left_len, item, len);
        b->left = n;
        b->left_len += len;
    }
    return true;
}

/* Items joined as a NUL-terminated list, malloc'ed; length in *len. */
static char *join(char **items, size_t n, size_t stride, size_t *len)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += strlen(*(char **)((char *)items + i * stride)) + 1;
    char *out = malloc(total ? total : 1);
    *len = 0;
    for (size_t i = 0; out && i < n; i++) {
        const char *s = *(char **)((char *)items + i * stride);
        size_t k = strlen(s) + 1;
        memcpy(out + *len, s, k);
        *len += k;
    }
    return out;
}

void bgk_attach(frame_msg_t *m, bgk_job_t *b)
{
    size_t len;
    if (b->left_len)
        frame_set_str(m, FS_BG_LEFT, b->left, b->left_len);
    free(sent_died);
    sent_died = n_died ? join(&died[0].item, n_died, sizeof died[0], &len) : NULL;
    /* An end that came while this job ran is this call's: its state
     * letter in capitals (bgwatch.h), so it is not said as "since the
     * last call". */
    for (size_t i = 0, at = 0; sent_died && i < n_died; i++) {
        char *state = strchr(sent_died + at, BG_SEP);
        if (died[i].seq > b->seen && state && islower((unsigned char)state[1]))
            state[1] = (char)toupper((unsigned char)state[1]);
        at += strlen(sent_died + at) + 1;
    }
    if (sent_died)
        frame_set_str(m, FS_BG_DIED, sent_died, len);
    free(sent_alive);
    sent_alive = alive_changed ? join(&alive[0].item, n_alive, sizeof alive[0], &len) : NULL;
    if (sent_alive)
        frame_set_str(m, FS_BG_ALIVE, sent_alive, len);
}

void bgk_sent(bgk_job_t *b)
{
    (void)b;
    if (sent_died) {
        for (size_t i = 0; i < n_died; i++)
            free(died[i].item);
        n_died = 0;
    }
    if (sent_alive)
        alive_changed = false;
    free(sent_died);
    free(sent_alive);
    sent_died = sent_alive = NULL;
}

void bgk_job_start(bgk_job_t *b, bool watch)
{
    b->watch = watch;
    b->seen = died_seq;
}

void bgk_job_free(bgk_job_t *b)
{
    free(b->left);
    b->left = NULL;
    b->left_len = 0;
}

void bgk_adopt(pid_t pid, int ctl)
{
    keeper_t *k = realloc(keepers, (n_keepers + 1) * sizeof *k);
    if (!k) {
        close(ctl);
        return;
    }
    keepers = k;
    keepers[n_keepers].pid = pid;
    keepers[n_keepers++].ctl = ctl;
}

size_t bgk_count(void)
{
    return n_keepers;
}

size_t bgk_pollset(struct pollfd *pf)
{
    for (size_t i = 0; i < n_keepers; i++)
        pf[i] = (struct pollfd){ keepers[i].ctl, POLLIN, 0 };
    return n_keepers;
}

void bgk_read(int fd)
{
    size_t i = 0;
    while (i < n_keepers && keepers[i].ctl != fd)
        i++;
    if (i == n_keepers)
        return;
    shep_rec_t r;
    static char item[BG_ITEM_MAX + 1];
    int got;
    while ((got = shep_read(fd, &r, item, sizeof item)) == 1)
        bgk_rec(NULL, &r, item);
    if (got < 0) { /* the keeper is gone */
        close(fd);
        keepers[i] = keepers[--n_keepers];
    }
}
