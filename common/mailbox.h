/* mailbox.h -- hand things to a thread that sleeps in poll().
 *
 * A mailbox is a locked first-in-first-out list of pointers and an
 * eventfd that is readable while something was posted and not yet
 * drained.  The owning thread polls mailbox_fd() together with its own
 * sockets (zmq_poll and poll() both take it) and calls mailbox_drain()
 * when it is readable; any thread may post.  The hub's queue thread, the
 * worker's socket thread and the model proxy's readers all use it, so the
 * lock-list-pipe dance is written once.
 *
 * Why not czmq's zactor: the proxy does not link ZeroMQ, and the threads
 * that own a mailbox already have their own loop; an actor would add a
 * thread and a socket pair only to carry a pointer.
 */
#ifndef TALKBACK_COMMON_MAILBOX_H
#define TALKBACK_COMMON_MAILBOX_H

#include <stddef.h>

typedef struct mailbox mailbox_t;

/* A mailbox whose leftover items mailbox_destroy hands to free_item
 * (NULL: leftovers are dropped as they are).  NULL when out of memory or
 * out of file descriptors. */
mailbox_t *mailbox_new(void (*free_item)(void *item));
/* Free the mailbox and what is still in it; *self_p becomes NULL. */
void mailbox_destroy(mailbox_t **self_p);

/* Put item (not NULL) at the end and wake the owner.  0, or -1 when out
 * of memory: then the item was not taken. */
int mailbox_post(mailbox_t *mb, void *item);
/* Wake the owner without an item (to make it look at a flag). */
void mailbox_kick(mailbox_t *mb);
/* Clear the wake-up, then take every item posted so far and hand each,
 * oldest first, to fn (which owns it from then on).  Returns how many
 * there were.  fn may be NULL only when nothing is ever posted. */
size_t mailbox_drain(mailbox_t *mb, void (*fn)(void *item, void *arg), void *arg);
/* The descriptor to poll for reading: readable after a post or a kick,
 * until the next drain. */
int mailbox_fd(const mailbox_t *mb);

#endif
