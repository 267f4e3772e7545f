/* test_textbuf.c -- the one growable buffer (common/textbuf.h): growth,
 * the bound, sticky errors, reserve and setlen, reset and take, in
 * families of sizes rather than one example each. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/textbuf.h"

/* A byte pattern that makes any misplaced byte visible. */
static char pat(size_t i)
{
    return (char)('a' + (i * 7 + i / 26) % 26);
}

/* Appends of every size from 0 to 600 in every chunking up to 9: the
 * bytes are those appended, in order, NUL-terminated, cap > len. */
static void growth_family(void **state)
{
    (void)state;
    char src[600];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = pat(i);
    for (size_t total = 0; total <= sizeof src; total += 37)
        for (size_t chunk = 1; chunk <= 9; chunk++) {
            textbuf_t t;
            textbuf_init(&t);
            for (size_t off = 0; off < total; off += chunk) {
                size_t n = total - off < chunk ? total - off : chunk;
                assert_int_equal(textbuf_append(&t, src + off, n), 0);
            }
            assert_int_equal(t.len, total);
            if (total) {
                assert_memory_equal(t.buf, src, total);
                assert_int_equal(t.buf[total], '\0');
                assert_true(t.cap > t.len);
            }
            assert_false(textbuf_failed(&t));
            textbuf_free(&t);
            assert_null(t.buf);
        }
}

/* For every bound and every append size around it: an append that fits is
 * kept whole, one that does not is dropped whole, sets overflow, and every
 * later append (even an empty or small one) is dropped too. */
static void bound_family(void **state)
{
    (void)state;
    char src[80];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = pat(i);
    for (size_t max = 1; max <= 40; max++)
        for (size_t first = 0; first <= max; first++)
            for (size_t second = 0; second <= 40; second++) {
                textbuf_t t;
                textbuf_init_max(&t, max);
                assert_int_equal(textbuf_append(&t, src, first), 0);
                int rc = textbuf_append(&t, src + first, second);
                if (first + second <= max) {
                    assert_int_equal(rc, 0);
                    assert_int_equal(t.len, first + second);
                    assert_false(t.overflow);
                } else {
                    assert_int_equal(rc, -1);
                    assert_int_equal(t.len, first);
                    assert_true(t.overflow);
                    assert_true(textbuf_failed(&t));
                    assert_int_equal(textbuf_append(&t, "x", 1), -1);
                    assert_int_equal(textbuf_puts(&t, ""), -1);
                    assert_int_equal(textbuf_printf(&t, "%d", 1), -1);
                    assert_int_equal(t.len, first);
                }
                if (t.len)
                    assert_memory_equal(t.buf, src, t.len);
                assert_false(t.oom);
                textbuf_free(&t);
                assert_int_equal(t.max, max); /* the bound outlives the bytes */
            }
}

/* printf past the bound is dropped whole, as an append is. */
static void printf_family(void **state)
{
    (void)state;
    for (size_t max = 0; max <= 12; max++) {
        textbuf_t t;
        textbuf_init_max(&t, max);
        int rc = textbuf_printf(&t, "%s-%d", "abc", 12345);
        if (max == 0 || max >= 9) {
            assert_int_equal(rc, 0);
            assert_string_equal(t.buf, "abc-12345");
        } else {
            assert_int_equal(rc, -1);
            assert_null(t.buf);
            assert_true(t.overflow);
        }
        textbuf_free(&t);
    }
    textbuf_t t;
    textbuf_init(&t);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(textbuf_printf(&t, "%d,", i % 10), 0);
    assert_int_equal(t.len, 2000);
    assert_int_equal(strncmp(t.buf + 1990, "5,6,7,8,9,", 10), 0);
    textbuf_free(&t);
}

/* reserve + setlen: a writer fills reserved room itself; a length past
 * the room is refused, never written. */
static void reserve_and_setlen(void **state)
{
    (void)state;
    for (size_t n = 0; n < 700; n += 13) {
        textbuf_t t;
        textbuf_init(&t);
        textbuf_puts(&t, "head:");
        assert_int_equal(textbuf_reserve(&t, n), 0);
        assert_true(t.cap >= t.len + n + 1);
        for (size_t i = 0; i < n; i++)
            t.buf[t.len + i] = pat(i);
        textbuf_setlen(&t, t.len + n);
        assert_int_equal(t.len, 5 + n);
        assert_int_equal(t.buf[t.len], '\0');
        assert_memory_equal(t.buf, "head:", 5);
        size_t len = t.len;
        textbuf_setlen(&t, t.cap); /* past the room: ignored */
        assert_int_equal(t.len, len);
        textbuf_free(&t);
    }
}

/* Sizes that would wrap size_t are an overflow, not a small allocation. */
static void wrapping_sizes(void **state)
{
    (void)state;
    const size_t huge[] = { SIZE_MAX, SIZE_MAX - 1, SIZE_MAX / 2, SIZE_MAX / 2 + 1 };
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        textbuf_t t;
        textbuf_init(&t);
        textbuf_puts(&t, "abc");
        assert_int_equal(textbuf_reserve(&t, huge[i]), -1);
        assert_true(t.overflow);
        assert_int_equal(t.len, 3);
        assert_string_equal(t.buf, "abc");
        textbuf_free(&t);
    }
}

/* reset empties and clears the errors but keeps memory and bound; take
 * hands over NUL-terminated bytes (an empty string for an empty buffer)
 * and leaves t empty. */
static void reset_and_take(void **state)
{
    (void)state;
    textbuf_t t;
    textbuf_init_max(&t, 4);
    textbuf_puts(&t, "abcd");
    assert_int_equal(textbuf_puts(&t, "e"), -1);
    char *mem = t.buf;
    textbuf_reset(&t);
    assert_false(textbuf_failed(&t));
    assert_int_equal(t.len, 0);
    assert_ptr_equal(t.buf, mem);
    assert_string_equal(t.buf, "");
    assert_int_equal(textbuf_puts(&t, "wxyz"), 0);
    assert_int_equal(textbuf_puts(&t, "!"), -1);
    size_t len = 99;
    char *s = textbuf_take(&t, &len);
    assert_string_equal(s, "wxyz");
    assert_int_equal(len, 4);
    assert_null(t.buf);
    assert_int_equal(t.len, 0);
    assert_false(textbuf_failed(&t));
    assert_int_equal(t.max, 4);
    free(s);

    textbuf_init(&t);
    s = textbuf_take(&t, &len);
    assert_non_null(s);
    assert_string_equal(s, "");
    assert_int_equal(len, 0);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(growth_family),  cmocka_unit_test(bound_family),
        cmocka_unit_test(printf_family),  cmocka_unit_test(reserve_and_setlen),
        cmocka_unit_test(wrapping_sizes), cmocka_unit_test(reset_and_take),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
