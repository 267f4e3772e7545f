/* mailbox.c -- a locked list of pointers and an eventfd (see mailbox.h).
 *
 * The list is singly linked with a tail pointer, so a post is O(1) under
 * the lock and a drain takes the whole list in one swap and walks it
 * unlocked.  An eventfd rather than a pipe: one descriptor, and a counter
 * that never fills up however many posts come before a drain.
 */
#include "common/mailbox.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

typedef struct mailbox_node {
    void *item;
    struct mailbox_node *next;
} mailbox_node_t;

struct mailbox {
    pthread_mutex_t mu; /* guards head and tail */
    mailbox_node_t *head, **tail;
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
    mb->tail = &mb->head;
    mb->free_item = free_item;
    return mb;
}

void mailbox_destroy(mailbox_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    mailbox_t *mb = *self_p;
    while (mb->head) {
        mailbox_node_t *n = mb->head;
        mb->head = n->next;
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
    n->next = NULL;
    pthread_mutex_lock(&mb->mu);
    *mb->tail = n;
    mb->tail = &n->next;
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
    mailbox_node_t *n = mb->head;
    mb->head = NULL;
    mb->tail = &mb->head;
    pthread_mutex_unlock(&mb->mu);
    size_t taken = 0;
    while (n) {
        mailbox_node_t *next = n->next;
        if (fn)
            fn(n->item, arg);
        free(n);
        n = next;
        taken++;
    }
    return taken;
}

int mailbox_fd(const mailbox_t *mb)
{
    return mb->fd;
}
