/* hints_retry.c -- the retry memory of hints.h: which commands failed how
 * in each chat, so a repeat of the same failure can be called pointless.
 *
 * Only hashes are kept (command, output), 16 per chat, for the 4096 chats
 * used last; a bounded list in LRU order is plenty next to a docker exec.
 */
#include "hints/hints.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
/* ---- retry memory ------------------------------------------------------------------ */

#define RETRY_PER_CONV 16
#define RETRY_CONVS    4096

typedef struct {
    uint64_t cmd_hash, out_hash;
    int exit_code;
} retry_item_t;

typedef struct retry_conv {
    char *conv;
    retry_item_t items[RETRY_PER_CONV];
    size_t n, next; /* used slots; the slot to overwrite next */
    struct retry_conv *prev, *nextc;
} retry_conv_t;

struct hints_retry {
    pthread_mutex_t mu;
    retry_conv_t *head, *tail; /* most recently used first */
    size_t count;
};

static uint64_t fnv1a(const void *data, size_t len, uint64_t h)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

#define FNV_OFFSET 1469598103934665603ULL

hints_retry_t *hints_retry_new(void)
{
    hints_retry_t *s = calloc(1, sizeof *s);
    if (s)
        pthread_mutex_init(&s->mu, NULL);
    return s;
}

static void retry_unlink(hints_retry_t *s, retry_conv_t *c)
{
    if (c->prev)
        c->prev->nextc = c->nextc;
    else
        s->head = c->nextc;
    if (c->nextc)
        c->nextc->prev = c->prev;
    else
        s->tail = c->prev;
    c->prev = c->nextc = NULL;
}

static void retry_push_front(hints_retry_t *s, retry_conv_t *c)
{
    c->prev = NULL;
    c->nextc = s->head;
    if (s->head)
        s->head->prev = c;
    s->head = c;
    if (!s->tail)
        s->tail = c;
}

static void retry_conv_free(retry_conv_t *c)
{
    free(c->conv);
    free(c);
}

void hints_retry_free(hints_retry_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    hints_retry_t *s = *self_p;
    while (s->head) {
        retry_conv_t *c = s->head;
        s->head = c->nextc;
        retry_conv_free(c);
    }
    pthread_mutex_destroy(&s->mu);
    free(s);
    *self_p = NULL;
}

static retry_conv_t *retry_find(hints_retry_t *s, const char *conv)
{
    for (retry_conv_t *c = s->head; c; c = c->nextc)
        if (strcmp(c->conv, conv) == 0)
            return c;
    return NULL;
}

bool hints_retry_note(hints_retry_t *s, const char *conv, const char *command, int exit_code,
                      const char *output, size_t output_len)
{
    if (!s || !conv || !command)
        return false;
    uint64_t ch = fnv1a(command, strlen(command), FNV_OFFSET);
    uint64_t oh = fnv1a(output ? output : "", output ? output_len : 0, FNV_OFFSET);
    bool repeated = false;
    pthread_mutex_lock(&s->mu);
    retry_conv_t *c = retry_find(s, conv);
    if (c) {
        retry_unlink(s, c);
        retry_push_front(s, c);
    }
    long slot = -1;
    if (c)
        for (size_t i = 0; i < c->n; i++)
            if (c->items[i].cmd_hash == ch) {
                slot = (long)i;
                break;
            }
    if (exit_code == 0) {
        /* A success forgets the command's failure. */
        if (slot >= 0) {
            c->items[slot] = c->items[c->n - 1];
            c->n--;
            c->next = c->n;
        }
        pthread_mutex_unlock(&s->mu);
        return false;
    }
    if (slot >= 0) {
        retry_item_t *it = &c->items[slot];
        repeated = it->out_hash == oh && it->exit_code == exit_code;
        it->out_hash = oh;
        it->exit_code = exit_code;
        pthread_mutex_unlock(&s->mu);
        return repeated;
    }
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c || !(c->conv = strdup(conv))) {
            free(c);
            pthread_mutex_unlock(&s->mu);
            return false;
        }
        retry_push_front(s, c);
        if (++s->count > RETRY_CONVS) {
            retry_conv_t *old = s->tail;
            retry_unlink(s, old);
            retry_conv_free(old);
            s->count--;
        }
    }
    size_t at = c->n < RETRY_PER_CONV ? c->n++ : c->next;
    c->next = (at + 1) % RETRY_PER_CONV;
    c->items[at] = (retry_item_t){ .cmd_hash = ch, .out_hash = oh, .exit_code = exit_code };
    pthread_mutex_unlock(&s->mu);
    return false;
}

void hints_retry_clear(hints_retry_t *s, const char *conv)
{
    if (!s || !conv)
        return;
    pthread_mutex_lock(&s->mu);
    retry_conv_t *c = retry_find(s, conv);
    if (c) {
        retry_unlink(s, c);
        retry_conv_free(c);
        s->count--;
    }
    pthread_mutex_unlock(&s->mu);
}
