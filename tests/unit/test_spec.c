/* test_spec.c -- the sandbox spec against the Docker guard: every body the
 * spec builds (spec/sandbox.h: what the manager, the warm pool, the
 * reaper's tombstones and the storage probe send) is fed to the guard's
 * checker (guard/template.c), which must let it through and rebuild it
 * unchanged; and every field of every body, changed, added to or taken
 * away, must be refused -- but for the free ones (label values, a
 * StorageOpt size in range, fields whose absence is Docker's default and
 * the spec's value).  A field changed on one side only fails here: a
 * builder that writes what the checker does not take fails the first
 * half, a checker that stops looking at a field fails the second.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "guard/body.h"
#include "spec/sandbox.h"

static const gtemplate_t tpl = {
    .s = {
        .image = "talkback-sandbox:latest",
        .network = "talkback-sandboxes",
        .runtime = "",
        .log_max_size = "1m",
        .memory = 268435456,
        .memory_swap = 1073741824,
        .nano_cpus = 1000000000,
        .cpu_shares = 256,
        .pids_limit = 512,
    },
    .disk_cap = 1 << 30,
};

/* The same with a runtime set: Runtime is then a checked field too. */
static gtemplate_t tpl_runsc;

#define SIZE ((int64_t)2 << 30)

/* Every body the spec builds, with the template each goes with. */
static const struct {
    const char *what;
    spec_body_t b;
    const gtemplate_t *t;
} cases[] = {
    { "sandbox", { SPEC_SANDBOX, { "chat-1", "user-1", "2026-12-05T10:00:00Z" }, false, 0 }, &tpl },
    { "sandbox, agent", { SPEC_SANDBOX, { "chat-1", "", "t" }, true, 0 }, &tpl },
    { "sandbox, disk cap", { SPEC_SANDBOX, { "chat-1", "u", "t" }, false, SIZE }, &tpl },
    { "sandbox, agent, disk cap", { SPEC_SANDBOX, { "chat-1", "u", "t" }, true, SIZE }, &tpl },
    { "sandbox, runtime", { SPEC_SANDBOX, { "chat-1", "u", "t" }, true, 0 }, &tpl_runsc },
    { "spare", { SPEC_SPARE, { "0123456789abcdef", "fedcba9876543210", "t" }, false, 0 }, &tpl },
    { "spare, agent, disk cap",
      { SPEC_SPARE, { "0123456789abcdef", "f", "t" }, true, SIZE },
      &tpl },
    { "tombstone",
      { SPEC_TOMBSTONE, { "chat-1", "because it was idle", "1764900000" }, false, 0 },
      &tpl },
    { "probe", { SPEC_PROBE, { NULL }, false, 0 }, &tpl },
    { "probe, size", { SPEC_PROBE, { NULL }, false, SIZE }, &tpl },
};
#define N_CASES (sizeof cases / sizeof cases[0])

static int setup(void **state)
{
    (void)state;
    tpl_runsc = tpl;
    tpl_runsc.s.runtime = "runsc";
    return 0;
}

/* The guard's answer to body j under t: its rebuilt body, or NULL. */
static json_t *guard_of(const json_t *j, const gtemplate_t *t, char *why, size_t whylen)
{
    char *s = json_dumps(j, JSON_COMPACT);
    assert_non_null(s);
    json_t *out = gbody_create(s, strlen(s), t, why, whylen);
    free(s);
    return out;
}

/* Each body passes, and the guard forwards exactly what the spec built. */
static void test_bodies_pass(void **state)
{
    char why[256];
    (void)state;
    for (size_t i = 0; i < N_CASES; i++) {
        json_t *j = spec_create_body(&cases[i].t->s, &cases[i].b);
        assert_non_null(j);
        why[0] = '\0';
        json_t *out = guard_of(j, cases[i].t, why, sizeof why);
        if (!out)
            fail_msg("%s: refused: %s", cases[i].what, why);
        if (!json_equal(j, out)) {
            char *a = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
            char *b = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS);
            fail_msg("%s: rebuilt differently:\n  %s\n  %s", cases[i].what, a, b);
        }
        json_decref(out);
        json_decref(j);
    }
}

/* A path of keys (and array indexes) to one member of a body. */
typedef struct {
    char text[256];
} where_t;

/* Whether the member at key (in an object at path `at`) is free: another
 * value of its type passes (a label's value, but the probe's; the
 * StorageOpt size, within its bound). */
static int free_value(const char *at, const char *key)
{
    return (strcmp(at, ".Labels") == 0 && strcmp(key, SPEC_LABEL_PROBE) != 0) ||
           strcmp(at, ".HostConfig.StorageOpt") == 0;
}

/* Whether taking the member away may pass: its absence is Docker's
 * default and the spec's value, or it is optional (StorageOpt, the
 * agent's empty log Config). */
static int may_go(const char *at, const char *key, const json_t *v)
{
    if (strcmp(at, "") == 0 &&
        (!strcmp(key, "OpenStdin") || !strcmp(key, "StdinOnce") || !strcmp(key, "AttachStdin")))
        return json_is_false(v);
    if (strcmp(at, ".HostConfig") == 0 && !strcmp(key, "StorageOpt"))
        return 1;
    if (strcmp(at, ".HostConfig.LogConfig") == 0 && !strcmp(key, "Config"))
        return json_object_size(v) == 0;
    return 0;
}

static int refused(json_t *root, const gtemplate_t *t)
{
    char why[256];
    json_t *out = guard_of(root, t, why, sizeof why);
    json_decref(out);
    return out == NULL;
}

/* A value of another kind than v, or v changed: a string gains a
 * character, a number grows, a boolean flips, an array gains an element,
 * an object a member. */
static json_t *changed(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING: {
        char buf[512];
        snprintf(buf, sizeof buf, "%sx", json_string_value(v));
        return json_string(buf);
    }
    case JSON_INTEGER: return json_integer(json_integer_value(v) + 1);
    case JSON_TRUE: return json_false();
    case JSON_FALSE: return json_true();
    case JSON_ARRAY: {
        json_t *a = json_deep_copy(v);
        json_array_append_new(a, json_string("SYS_ADMIN"));
        return a;
    }
    case JSON_OBJECT: {
        json_t *o = json_deep_copy(v);
        json_object_set_new(o, "extra", json_string("1"));
        return o;
    }
    default: return json_null();
    }
}

static void mutate_all(json_t *root, json_t *node, const char *at, const gtemplate_t *t,
                       const char *what, int *n);

/* Mutate member key of object obj (at path at) every way, checking each. */
static void mutate_member(json_t *root, json_t *obj, const char *key, const char *at,
                          const gtemplate_t *t, const char *what, int *n)
{
    json_t *v = json_incref(json_object_get(obj, key));
    char path[256];
    snprintf(path, sizeof path, "%s.%s", at, key);
    /* Changed in place. */
    if (!free_value(at, key)) {
        json_object_set_new(obj, key, changed(v));
        if (!refused(root, t))
            fail_msg("%s: %s changed passed", what, path);
        (*n)++;
    }
    /* Of another type (a string where a number was, a number elsewhere). */
    json_object_set_new(obj, key, json_is_string(v) ? json_integer(1) : json_string("1"));
    if (!refused(root, t))
        fail_msg("%s: %s of another type passed", what, path);
    (*n)++;
    /* Taken away. */
    json_object_del(obj, key);
    if (!refused(root, t) != !!may_go(at, key, v))
        fail_msg("%s: %s taken away %s", what, path, may_go(at, key, v) ? "refused" : "passed");
    (*n)++;
    /* Under another key (a label renamed, a field misspelled). */
    char other[300];
    snprintf(other, sizeof other, "%sX", key);
    json_object_set(obj, other, v);
    if (!refused(root, t))
        fail_msg("%s: %s renamed passed", what, path);
    (*n)++;
    json_object_del(obj, other);
    json_object_set(obj, key, v);
    mutate_all(root, v, path, t, what, n);
    json_decref(v);
}

/* Every member of node (at path at) mutated in turn; root restored after
 * each. */
static void mutate_all(json_t *root, json_t *node, const char *at, const gtemplate_t *t,
                       const char *what, int *n)
{
    if (json_is_object(node)) {
        const char *key;
        json_t *v;
        void *tmp;
        /* Keys are copied first: the loop changes the object. */
        size_t k = json_object_size(node), i = 0;
        char **keys = calloc(k, sizeof *keys);
        json_object_foreach_safe(node, tmp, key, v)
        {
            keys[i++] = strdup(key);
        }
        for (i = 0; i < k; i++) {
            mutate_member(root, node, keys[i], at, t, what, n);
            free(keys[i]);
        }
        free(keys);
        /* One member more. */
        json_object_set_new(node, "Privileged", json_true());
        if (!refused(root, t))
            fail_msg("%s: %s.Privileged added passed", what, at);
        json_object_del(node, "Privileged");
        (*n)++;
    } else if (json_is_array(node)) {
        for (size_t i = 0; i < json_array_size(node); i++) {
            json_t *v = json_incref(json_array_get(node, i));
            json_array_set_new(node, i, changed(v));
            if (!refused(root, t))
                fail_msg("%s: %s[%zu] changed passed", what, at, i);
            json_array_remove(node, i);
            if (!refused(root, t))
                fail_msg("%s: %s[%zu] taken away passed", what, at, i);
            json_array_insert(node, i, v);
            json_decref(v);
            *n += 2;
        }
        json_array_append_new(node, json_string("NET_RAW"));
        if (!refused(root, t))
            fail_msg("%s: %s with one element more passed", what, at);
        json_array_remove(node, json_array_size(node) - 1);
        (*n)++;
    }
}

/* Every field of every body, changed, of another type, taken away,
 * renamed, or with a member more: refused (but the free ones). */
static void test_mutations_refused(void **state)
{
    (void)state;
    int n = 0;
    for (size_t i = 0; i < N_CASES; i++) {
        json_t *j = spec_create_body(&cases[i].t->s, &cases[i].b);
        mutate_all(j, j, "", cases[i].t, cases[i].what, &n);
        /* Restored: it passes again (the mutations left nothing behind). */
        assert_false(refused(j, cases[i].t));
        json_decref(j);
    }
    print_message("%d mutations of %zu bodies, each refused or (the free ones) passed\n", n,
                  N_CASES);
    assert_true(n > 500);
}

/* The loosenings a container could ask for, each added where Docker reads
 * it: all refused, in every body. */
static void test_loosenings_refused(void **state)
{
    static const struct {
        int host; /* in HostConfig, else at the top */
        const char *key, *json;
    } adds[] = {
        { 1, "Privileged", "true" },
        { 1, "Binds", "[\"/:/host\"]" },
        { 1, "Mounts", "[{\"Type\":\"bind\",\"Source\":\"/\",\"Target\":\"/h\"}]" },
        { 1, "CapAdd", "[\"ALL\"]" },
        { 1, "Devices", "[{\"PathOnHost\":\"/dev/kmsg\"}]" },
        { 1, "PidMode", "\"host\"" },
        { 1, "IpcMode", "\"host\"" },
        { 1, "UsernsMode", "\"host\"" },
        { 1, "SecurityOpt", "[\"seccomp=unconfined\"]" },
        { 1, "Sysctls", "{\"net.ipv4.ip_forward\":\"1\"}" },
        { 1, "VolumesFrom", "[\"other\"]" },
        { 1, "ExtraHosts", "[\"x:1.2.3.4\"]" },
        { 0, "Volumes", "{\"/x\":{}}" },
        { 0, "Entrypoint", "[\"sh\"]" },
        { 0, "Env", "[\"LD_PRELOAD=/x\"]" },
        { 0, "NetworkDisabled", "false" },
    };
    (void)state;
    for (size_t i = 0; i < N_CASES; i++)
        for (size_t a = 0; a < sizeof adds / sizeof adds[0]; a++) {
            json_t *j = spec_create_body(&cases[i].t->s, &cases[i].b);
            json_t *v = json_loads(adds[a].json, JSON_DECODE_ANY, NULL);
            assert_non_null(v);
            json_object_set_new(adds[a].host ? json_object_get(j, "HostConfig") : j, adds[a].key,
                                v);
            if (!refused(j, cases[i].t))
                fail_msg("%s: %s added passed", cases[i].what, adds[a].key);
            json_decref(j);
        }
}

/* A body checked under another template is refused: every configured
 * value is checked (image, network, runtime, log size, each limit). */
static void test_other_template_refused(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_CASES; i++) {
        const spec_body_t *b = &cases[i].b;
        int bare = b->kind == SPEC_TOMBSTONE || b->kind == SPEC_PROBE;
        for (int f = 0; f < 9; f++) {
            gtemplate_t other = *cases[i].t;
            switch (f) {
            case 0: other.s.image = "other:1"; break;
            case 1: other.s.network = "host"; break;
            case 2: other.s.runtime = *other.s.runtime ? "" : "runc"; break;
            case 3: other.s.log_max_size = "1g"; break;
            case 4: other.s.memory *= 2; break;
            case 5: other.s.memory_swap *= 2; break;
            case 6: other.s.nano_cpus *= 2; break;
            case 7: other.s.cpu_shares *= 2; break;
            default: other.s.pids_limit *= 2; break;
            }
            if (bare && f > 0)
                continue; /* a never-started container carries only the image */
            if (f == 3 && b->agent)
                continue; /* the agent's sandboxes keep no log */
            json_t *j = spec_create_body(&other.s, b);
            if (!refused(j, cases[i].t))
                fail_msg("%s: built under another template (%d) passed", cases[i].what, f);
            json_decref(j);
        }
    }
}

/* The disk cap: a size below it, or none where the probe asks, is the
 * manager's to choose; a size below disk_cap is refused. */
static void test_storage_bound(void **state)
{
    (void)state;
    spec_body_t b = cases[0].b;
    b.storage = tpl.disk_cap - 1;
    json_t *j = spec_create_body(&tpl.s, &b);
    assert_true(refused(j, &tpl));
    json_decref(j);
    b.kind = SPEC_TOMBSTONE;
    b.storage = SIZE;
    j = spec_create_body(&tpl.s, &b);
    assert_false(refused(j, &tpl)); /* the spec gives a tombstone no StorageOpt */
    assert_null(json_object_get(json_object_get(j, "HostConfig"), "StorageOpt"));
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bodies_pass),        cmocka_unit_test(test_mutations_refused),
        cmocka_unit_test(test_loosenings_refused), cmocka_unit_test(test_other_template_refused),
        cmocka_unit_test(test_storage_bound),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
