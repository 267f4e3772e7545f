/* test_mailbox.c -- the mailbox (common/mailbox.c): order, the wake-up
 * descriptor, leftovers on destroy, posts from several threads. */
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "common/mailbox.h"

/* Whether the descriptor is readable right now. */
static int readable(mailbox_t *mb)
{
    struct pollfd pf = { .fd = mailbox_fd(mb), .events = POLLIN };
    return poll(&pf, 1, 0) == 1 && (pf.revents & POLLIN);
}

typedef struct {
    int seen[64];
    size_t n;
} collect_t;

static void collect(void *item, void *arg)
{
    collect_t *c = arg;
    c->seen[c->n++] = *(int *)item;
    free(item);
}

static int *boxed(int v)
{
    int *p = malloc(sizeof *p);
    *p = v;
    return p;
}

static void mailbox_order_and_fd(void **state)
{
    (void)state;
    mailbox_t *mb = mailbox_new(free);
    assert_non_null(mb);
    assert_false(readable(mb));
    for (int i = 0; i < 5; i++)
        assert_int_equal(mailbox_post(mb, boxed(i)), 0);
    assert_true(readable(mb));
    collect_t c = { .n = 0 };
    assert_int_equal(mailbox_drain(mb, collect, &c), 5);
    assert_int_equal(c.n, 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(c.seen[i], i);
    assert_false(readable(mb));
    assert_int_equal(mailbox_drain(mb, collect, &c), 0);
    assert_int_equal(mailbox_post(mb, NULL), -1);
    assert_false(readable(mb));
    mailbox_destroy(&mb);
    assert_null(mb);
    mailbox_destroy(&mb);
}

static void mailbox_kick_wakes_empty(void **state)
{
    (void)state;
    mailbox_t *mb = mailbox_new(NULL);
    assert_non_null(mb);
    mailbox_kick(mb);
    mailbox_kick(mb);
    assert_true(readable(mb));
    assert_int_equal(mailbox_drain(mb, NULL, NULL), 0);
    assert_false(readable(mb));
    mailbox_destroy(&mb);
}

static int freed;
static void count_free(void *item)
{
    freed++;
    free(item);
}

static void mailbox_leftovers_freed(void **state)
{
    (void)state;
    freed = 0;
    mailbox_t *mb = mailbox_new(count_free);
    assert_non_null(mb);
    mailbox_post(mb, boxed(1));
    mailbox_post(mb, boxed(2));
    mailbox_destroy(&mb);
    assert_int_equal(freed, 2);
}

#define POSTERS    4
#define PER_POSTER 2000

static void *poster(void *arg)
{
    mailbox_t *mb = arg;
    for (int i = 0; i < PER_POSTER; i++)
        while (mailbox_post(mb, boxed(i)) != 0)
            ;
    return NULL;
}

typedef struct {
    size_t n;
    long sum;
} tally_t;

static void tally(void *item, void *arg)
{
    tally_t *t = arg;
    t->n++;
    t->sum += *(int *)item;
    free(item);
}

static void mailbox_many_threads(void **state)
{
    (void)state;
    mailbox_t *mb = mailbox_new(free);
    assert_non_null(mb);
    pthread_t th[POSTERS];
    for (int i = 0; i < POSTERS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, poster, mb), 0);
    tally_t t = { 0, 0 };
    while (t.n < (size_t)POSTERS * PER_POSTER) {
        struct pollfd pf = { .fd = mailbox_fd(mb), .events = POLLIN };
        assert_true(poll(&pf, 1, 10000) == 1);
        mailbox_drain(mb, tally, &t);
    }
    for (int i = 0; i < POSTERS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(t.n, (size_t)POSTERS * PER_POSTER);
    assert_int_equal(t.sum, (long)POSTERS * PER_POSTER * (PER_POSTER - 1) / 2);
    assert_int_equal(mailbox_drain(mb, tally, &t), 0);
    mailbox_destroy(&mb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mailbox_order_and_fd),
        cmocka_unit_test(mailbox_kick_wakes_empty),
        cmocka_unit_test(mailbox_leftovers_freed),
        cmocka_unit_test(mailbox_many_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
