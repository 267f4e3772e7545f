/* hints_retry.c -- the retry memory of hints.h: which commands failed how
 * in each chat, so a repeat of the same failure can be called pointless.
 *
 * Only hashes are kept (command, output), 16 per chat, for the 4096 chats
 * used last: a string-keyed map (common/list.h) in LRU order.
 */
#include "hints/hints.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/list.h"

/* ---- retry memory ------------------------------------------------------------------ */

#define RETRY_PER_CONV 16
#define RETRY_CONVS    4096

typedef struct {
    uint64_t cmd_hash, out_hash;
    int exit_code;
} retry_item_t;

typedef struct retry_conv {
    strmap_node_t node; /* keyed by conv */
    char *conv;
    retry_item_t items[RETRY_PER_CONV];
    size_t n, next; /* used slots; the slot to overwrite next */
} retry_conv_t;

struct hints_retry {
    pthread_mutex_t mu;
    strmap_t convs; /* least recently used first */
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
    strmap_for_each_safe(n, &s->convs) {
        strmap_del(&s->convs, n);
        retry_conv_free(STRMAP_ITEM(n, retry_conv_t, node));
    }
    strmap_free(&s->convs);
    pthread_mutex_destroy(&s->mu);
    free(s);
    *self_p = NULL;
}

static retry_conv_t *retry_find(hints_retry_t *s, const char *conv)
{
    return STRMAP_ITEM(strmap_get(&s->convs, conv), retry_conv_t, node);
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
    if (c)
        strmap_touch(&s->convs, &c->node);
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
        strmap_put(&s->convs, &c->node, c->conv); /* none was there */
        if (strmap_len(&s->convs) > RETRY_CONVS) {
            strmap_node_t *old = strmap_oldest(&s->convs);
            strmap_del(&s->convs, old);
            retry_conv_free(STRMAP_ITEM(old, retry_conv_t, node));
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
        strmap_del(&s->convs, &c->node);
        retry_conv_free(c);
    }
    pthread_mutex_unlock(&s->mu);
}
