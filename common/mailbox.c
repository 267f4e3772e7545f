/* mailbox.c -- a locked list of pointers and an eventfd (see mailbox.h).
 *
 * The list is common/list.h's, so a post is O(1) under the lock and a
 * drain takes the whole list in one swap and walks it unlocked.  An eventfd rather than a pipe: one descriptor, and a counter
 * that never fills up however many posts come before a drain.
 */
#include "common/mailbox.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/list.h"

typedef struct mailbox_node {
    void *item;
    list_node_t link;
} mailbox_node_t;

struct mailbox {
    pthread_mutex_t mu; /* guards items */
    list_t items;       /* oldest first */
    int fd;
    void (*free_item)(void *item);
};

mailbox_t *mailbox_new(void (*free_item)(void *item))
{
    mailbox_t *mb = calloc(1, sizeof *mb);
    if (!mb)
        return NULL;
    mb->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (mb->fd < 0) {
        free(mb);
        return NULL;
    }
    pthread_mutex_init(&mb->mu, NULL);
    mb->free_item = free_item;
    return mb;
}

void mailbox_destroy(mailbox_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    mailbox_t *mb = *self_p;
    list_node_t *p;
    while ((p = list_pop_front(&mb->items))) {
        mailbox_node_t *n = LIST_ITEM(p, mailbox_node_t, link);
        if (mb->free_item)
            mb->free_item(n->item);
        free(n);
    }
    close(mb->fd);
    pthread_mutex_destroy(&mb->mu);
    free(mb);
    *self_p = NULL;
}

void mailbox_kick(mailbox_t *mb)
{
    uint64_t one = 1;
    /* EAGAIN only when the counter is near 2^64: it is readable anyway. */
    ssize_t n = write(mb->fd, &one, sizeof one);
    (void)n;
}

int mailbox_post(mailbox_t *mb, void *item)
{
    mailbox_node_t *n = malloc(sizeof *n);
    if (!n || !item) {
        free(n);
        return -1;
    }
    n->item = item;
    pthread_mutex_lock(&mb->mu);
    list_push_back(&mb->items, &n->link);
    pthread_mutex_unlock(&mb->mu);
    mailbox_kick(mb);
    return 0;
}

size_t mailbox_drain(mailbox_t *mb, void (*fn)(void *item, void *arg), void *arg)
{
    uint64_t count;
    ssize_t r = read(mb->fd, &count, sizeof count);
    (void)r;
    pthread_mutex_lock(&mb->mu);
    list_t all = mb->items;
    mb->items = (list_t){ 0 };
    pthread_mutex_unlock(&mb->mu);
    size_t taken = 0;
    list_for_each_item_safe(n, &all, mailbox_node_t, link) {
        if (fn)
            fn(n->item, arg);
        free(n);
        taken++;
    }
    return taken;
}

int mailbox_fd(const mailbox_t *mb)
{
    return mb->fd;
}
