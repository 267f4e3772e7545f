/* test_ops.c -- the operations table (proto/optable.h): its rows agree
 * with ops.h and with each other, every row has exactly one handler in
 * its kind's worker, and what the hub and the workers derive from it
 * (key rights, retry, placement, the id check) says what the rows say.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hub/hubkeys.h"
#include "hub/queue.h"
#include "hub/retry.h"
#include "hub/worker.h"
#include "judge/judge.h"
#include "proto/ops.h"
#include "proto/optable.h"
#include "reaper/reaper.h"
#include "sandbox/manager.h"

/* Every kind is a row of the kinds table, once; the kinds with keys have
 * a sender bit each, the others none; one kind holds the sandboxes and
 * one is the hub. */
static void kinds_well_formed(void **state)
{
    (void)state;
    size_t n;
    const ops_kind_t *k = ops_kinds(&n);
    unsigned bits = 0;
    int managers = 0, hubs = 0;
    for (size_t i = 0; i < n; i++) {
        assert_ptr_equal(ops_kind(k[i].name), &k[i]);
        assert_non_null(k[i].label);
        if (k[i].flags & OPS_KIND_KEY) {
            assert_int_not_equal(k[i].by, 0);
            assert_int_equal(k[i].by & (k[i].by - 1), 0); /* one bit */
            assert_int_equal(bits & k[i].by, 0);
            bits |= k[i].by;
        } else {
            assert_int_equal(k[i].by, 0);
        }
        if (k[i].flags & OPS_KIND_MANAGER) {
            managers++;
            assert_true(k[i].flags & OPS_KIND_WORKER);
            assert_true(k[i].flags & OPS_KIND_PER_HOST);
        }
        if (k[i].flags & OPS_KIND_HUB) {
            hubs++;
            assert_false(k[i].flags & (OPS_KIND_WORKER | OPS_KIND_KEY));
        }
        assert_int_equal(ops_sender_bit(k[i].name), k[i].by);
        assert_string_equal(ops_kind_label(k[i].name), k[i].label);
    }
    assert_int_equal(managers, 1);
    assert_int_equal(hubs, 1);
    assert_null(ops_kind("nosuch"));
    assert_null(ops_kind(NULL));
    assert_false(ops_kind_has("nosuch", 0));
    assert_string_equal(ops_kind_label("nosuch"), "worker");
}

/* Each row: served by a worker kind or the hub, its name unique over
 * every kind, a one-line summary, senders that have keys. */
static void rows_well_formed(void **state)
{
    (void)state;
    size_t n;
    const ops_row_t *r = ops_table(&n);
    unsigned keyed = 0;
    size_t nk;
    const ops_kind_t *k = ops_kinds(&nk);
    for (size_t i = 0; i < nk; i++)
        keyed |= k[i].by;
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        const ops_kind_t *kind = ops_kind(r[i].kind);
        assert_non_null(kind);
        assert_true(kind->flags & (OPS_KIND_WORKER | OPS_KIND_HUB));
        assert_true(r[i].name && *r[i].name);
        assert_ptr_equal(ops_find(r[i].kind, r[i].name), &r[i]);
        assert_ptr_equal(ops_named(r[i].name), &r[i]); /* unique over kinds */
        assert_true(r[i].summary && *r[i].summary && !strchr(r[i].summary, '\n'));
        assert_true(strlen(r[i].summary) <= 80);
        assert_int_equal(r[i].senders & ~keyed, 0);
    }
    assert_null(ops_find(KIND_SANDBOX, "nosuch"));
    assert_null(ops_find(KIND_JUDGE, OP_RUN)); /* an op of another kind */
    assert_null(ops_find(NULL, OP_RUN));
    assert_null(ops_named(NULL));
}

/* The flags agree: the hub serves exactly the hub kind's operations; only
 * the manager's operations place or carry a chat, and placing needs the
 * chat; the two retry rules exclude each other and never apply to the
 * manager (a command may have run); an operation names a host or a chat,
 * not both. */
static void flags_consistent(void **state)
{
    (void)state;
    size_t n;
    const ops_row_t *r = ops_table(&n);
    for (size_t i = 0; i < n; i++) {
        unsigned f = r[i].flags;
        bool manager = ops_kind_has(r[i].kind, OPS_KIND_MANAGER);
        assert_int_equal(!!(f & OPS_HUB), ops_kind_has(r[i].kind, OPS_KIND_HUB));
        if (f & OPS_PLACES)
            assert_true((f & OPS_CONV) && manager);
        if (f & OPS_CONV)
            assert_true(manager);
        assert_false((f & OPS_RETRY) && (f & OPS_RETRY_UNTIL_STARTED));
        if (f & (OPS_RETRY | OPS_RETRY_UNTIL_STARTED))
            assert_false(manager);
        assert_false((f & OPS_HOST) && (f & OPS_CONV));
    }
    /* What the flags were written for, as the rows are today. */
    assert_true(ops_has(KIND_SANDBOX, OP_RUN, OPS_CONV | OPS_PLACES));
    assert_true(ops_has(KIND_SANDBOX, OP_EXEC, OPS_PLACES));
    assert_false(ops_has(KIND_SANDBOX, OP_RESET, OPS_PLACES));
    assert_false(ops_has(KIND_SANDBOX, OP_LOCATE, OPS_PLACES));
    assert_true(ops_has(KIND_SANDBOX, OP_DRAIN, OPS_HOST));
    assert_true(ops_has(KIND_HUB, OP_FORGET_HOST, OPS_HUB | OPS_HOST));
}

/* The names of ops.h, read from the file: every OP_ is a row, every KIND_
 * a kind, and nothing in the tables is missing from ops.h. */
static void ops_h_names_are_rows(void **state)
{
    (void)state;
    FILE *f = fopen(TALKBACK_SOURCE_DIR "/proto/ops.h", "r");
    assert_non_null(f);
    char line[512], name[64], value[64];
    size_t ops = 0, kinds = 0;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "#define OP_%63s \"%63[^\"]\"", name, value) == 2) {
            if (!ops_named(value))
                fail_msg("OP_%s (\"%s\") has no row in proto/optable.c", name, value);
            ops++;
        } else if (sscanf(line, "#define KIND_%63s \"%63[^\"]\"", name, value) == 2) {
            if (!ops_kind(value))
                fail_msg("KIND_%s (\"%s\") has no row in proto/optable.c", name, value);
            kinds++;
        }
    }
    fclose(f);
    size_t n, nk;
    ops_table(&n);
    ops_kinds(&nk);
    assert_int_equal(ops, n);
    assert_int_equal(kinds, nk);
}

/* The op names of a worker's array, checked against the rows of kind:
 * every row has exactly one entry, every entry is a row, every handler is
 * there. */
static void check_served(const char *kind, const char *const *names, const void *const *fns,
                         size_t m)
{
    size_t n;
    const ops_row_t *r = ops_table(&n);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(r[i].kind, kind) != 0)
            continue;
        int seen = 0;
        for (size_t j = 0; j < m; j++)
            seen += strcmp(names[j], r[i].name) == 0;
        if (seen != 1)
            fail_msg("%s %s has %d handlers in its worker, not 1", kind, r[i].name, seen);
    }
    for (size_t j = 0; j < m; j++) {
        if (!ops_find(kind, names[j]))
            fail_msg("the %s worker serves %s, which is no row of its kind", kind, names[j]);
        assert_non_null(fns[j]);
    }
}

static void check_worker(const char *kind, const worker_op_t *ops)
{
    const char *names[64];
    const void *fns[64];
    size_t m = 0;
    for (; ops[m].op && m < 64; m++) {
        names[m] = ops[m].op;
        fns[m] = (const void *)ops[m].fn;
    }
    check_served(kind, names, fns, m);
}

/* Every row has exactly one handler in its kind's worker, and every kind
 * that serves anything is checked. */
static void every_row_one_handler(void **state)
{
    (void)state;
    check_worker(KIND_SANDBOX, manager_ops);
    check_worker(KIND_JUDGE, judge_ops);
    check_worker(KIND_REAPER, reaper_ops);
    const char *names[16];
    const void *fns[16];
    size_t m = 0;
    for (; queue_ops[m].op && m < 16; m++) {
        names[m] = queue_ops[m].op;
        fns[m] = (const void *)queue_ops[m].fn;
    }
    check_served(KIND_HUB, names, fns, m);
    size_t n;
    const ops_row_t *r = ops_table(&n);
    for (size_t i = 0; i < n; i++) {
        bool known = strcmp(r[i].kind, KIND_SANDBOX) == 0 || strcmp(r[i].kind, KIND_JUDGE) == 0 ||
                     strcmp(r[i].kind, KIND_REAPER) == 0 || strcmp(r[i].kind, KIND_HUB) == 0;
        if (!known)
            fail_msg("kind %s has rows but no worker array in this test", r[i].kind);
    }
}

/* The key rights talkback-keys writes: a kind's certificate may send an
 * operation exactly when the row names it a sender; every list fits the
 * metadata and is well formed. */
static void key_rights_from_rows(void **state)
{
    (void)state;
    size_t n, nk;
    const ops_row_t *r = ops_table(&n);
    const ops_kind_t *k = ops_kinds(&nk);
    for (size_t j = 0; j < nk; j++) {
        const hubkeys_role_t *role = hubkeys_role(k[j].name);
        assert_int_equal(role != NULL, (k[j].flags & OPS_KIND_KEY) != 0);
        assert_int_equal(hubkeys_kind_per_host(k[j].name), !!(k[j].flags & OPS_KIND_PER_HOST));
        if (!role)
            continue;
        assert_true(hubkeys_meta_valid(role->kind, role->submit));
        for (size_t i = 0; i < n; i++)
            if (hubkeys_may_submit(role->submit, r[i].kind, r[i].name) !=
                ((r[i].senders & k[j].by) != 0))
                fail_msg("the %s key and %s %s disagree with the row", k[j].name, r[i].kind,
                         r[i].name);
    }
    /* As the roles always were. */
    assert_true(hubkeys_may_submit(hubkeys_role(KIND_JUDGE)->submit, KIND_SANDBOX, OP_PUT));
    assert_false(hubkeys_may_submit(hubkeys_role(KIND_JUDGE)->submit, KIND_SANDBOX, OP_RUN));
    assert_string_equal(hubkeys_role(KIND_SANDBOX)->submit, "");
}

/* Retry and placement read the rows; an operation with no row is never
 * sent again and never places (fail-closed). */
static void retry_and_placement_from_rows(void **state)
{
    (void)state;
    size_t n;
    const ops_row_t *r = ops_table(&n);
    for (size_t i = 0; i < n; i++) {
        retry_rule_t want = (r[i].flags & OPS_RETRY)                 ? RETRY_ALWAYS
                            : (r[i].flags & OPS_RETRY_UNTIL_STARTED) ? RETRY_UNTIL_STARTED
                                                                     : RETRY_NEVER;
        assert_int_equal(retry_rule(r[i].kind, r[i].name), want);
    }
    static const char *const unknown[] = { "nosuch", "", "RUN", "run ", NULL };
    for (size_t i = 0; unknown[i]; i++) {
        assert_int_equal(retry_rule(KIND_JUDGE, unknown[i]), RETRY_NEVER);
        assert_false(ops_has(KIND_SANDBOX, unknown[i], OPS_PLACES));
        assert_false(ops_has(KIND_SANDBOX, unknown[i], OPS_CONV));
    }
    assert_false(ops_has(NULL, OP_RUN, OPS_PLACES));
}

static proto_msg_t *req_of(const char *kind, const char *op, const char *conv, const char *user)
{
    proto_msg_t *m = proto_msg_new(PROTO_REQUEST);
    assert_non_null(m);
    assert_int_equal(proto_msg_set_kind(m, kind), 0);
    assert_int_equal(proto_msg_set_name(m, op), 0);
    if (conv)
        assert_int_equal(proto_msg_set_conv(m, conv), 0);
    if (user)
        assert_int_equal(proto_msg_set_user(m, user), 0);
    return m;
}

/* The worker library's id check refuses exactly the rows with OPS_CONV
 * when the id is unusable, and none when it is usable; an operation a
 * worker does not serve gets the one unknown answer. */
static void id_check_and_unknown_from_rows(void **state)
{
    (void)state;
    static const char *const bad_convs[] = { NULL, "", "new", "{{convo}}", "a b" };
    size_t n;
    const ops_row_t *r = ops_table(&n);
    for (size_t i = 0; i < n; i++) {
        bool conv = (r[i].flags & OPS_CONV) != 0;
        for (size_t b = 0; b < sizeof bad_convs / sizeof bad_convs[0]; b++) {
            proto_msg_t *m = req_of(r[i].kind, r[i].name, bad_convs[b], NULL);
            proto_msg_t *out = worker_check_ids(r[i].kind, m);
            assert_int_equal(out != NULL, conv);
            if (out)
                assert_true(out->is_error && strstr(out->text, "Nothing ran"));
            proto_msg_destroy(&out);
            proto_msg_destroy(&m);
        }
        proto_msg_t *m = req_of(r[i].kind, r[i].name, "chat-1", "user{{x}}");
        proto_msg_t *out = worker_check_ids(r[i].kind, m);
        assert_int_equal(out != NULL, conv);
        proto_msg_destroy(&out);
        proto_msg_destroy(&m);
        m = req_of(r[i].kind, r[i].name, "chat-1", "user-1");
        assert_null(worker_check_ids(r[i].kind, m));
        proto_msg_destroy(&m);
    }
    proto_msg_t *m = req_of(KIND_SANDBOX, "nosuch", "chat-1", NULL);
    proto_msg_t *out = worker_unknown_op(KIND_SANDBOX, m);
    assert_int_equal(out->status, PROTO_ST_BAD_REQUEST);
    assert_true(out->is_error);
    assert_non_null(strstr(out->text, "sandbox manager has no operation \"nosuch\""));
    assert_null(worker_op_find(manager_ops, "nosuch"));
    assert_non_null(worker_op_find(manager_ops, OP_RUN));
    proto_msg_destroy(&out);
    proto_msg_destroy(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kinds_well_formed),
        cmocka_unit_test(rows_well_formed),
        cmocka_unit_test(flags_consistent),
        cmocka_unit_test(ops_h_names_are_rows),
        cmocka_unit_test(every_row_one_handler),
        cmocka_unit_test(key_rights_from_rows),
        cmocka_unit_test(retry_and_placement_from_rows),
        cmocka_unit_test(id_check_and_unknown_from_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
