/* test_hashmap.c: FNV-1a against its published vectors, and the open-addressed table (growth,
 * collisions, eq, iteration, the fold of the high bits). */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "macro.h"
#include "util.h"
#include "hashmap.c" /* its static functions are tested here */

/* The FNV-1a 64 vectors of the reference (isthe.com/chongo/tech/comp/fnv): a wrong offset basis
 * (1469598103934665603, as two copies had) fails every one of them. */
static void test_fnv1a_vectors(void **state) {
        (void)state;
        assert_true(HASH_FNV1A_OFFSET == UINT64_C(0xcbf29ce484222325));
        assert_true(hashmap_hash_string("") == UINT64_C(0xcbf29ce484222325));
        assert_true(hashmap_hash_string("a") == UINT64_C(0xaf63dc4c8601ec8c));
        assert_true(hashmap_hash_string("foobar") == UINT64_C(0x85944171f73967e8));
        assert_true(hashmap_hash_bytes("foobar", 6) == hashmap_hash_string("foobar"));
        assert_true(hashmap_hash_bytes("a\0b", 3) != hashmap_hash_string("a"));
        assert_true(hashmap_hash_bytes(NULL, 0) == HASH_FNV1A_OFFSET);
        /* in pieces as in one */
        assert_true(hash_bytes_more(hashmap_hash_bytes("foo", 3), "bar", 3) == hashmap_hash_string("foobar"));
}

static void test_fnv1a_ascii_lower(void **state) {
        (void)state;
        assert_true(hashmap_hash_string_ascii_lower("ABCdef-XYZ") == hashmap_hash_string("abcdef-xyz"));
        assert_true(hashmap_hash_string_ascii_lower("abc") == hashmap_hash_string("abc"));
        /* only ASCII letters: bytes above 0x7f and '@' / '[' (next to 'A'..'Z') stay */
        assert_true(hashmap_hash_string_ascii_lower("\xc3\x89") == hashmap_hash_string("\xc3\x89"));
        assert_true(hashmap_hash_string_ascii_lower("@[") == hashmap_hash_string("@["));
}

/* The pending marker's name (recover.c) is on disk: its hash of a project dir is pinned here. */
static void test_marker_hash_pinned(void **state) {
        (void)state;
        char buf[32];
        snprintf(buf, sizeof buf, "%016llx", (unsigned long long)hashmap_hash_string("foobar"));
        assert_string_equal(buf, "85944171f73967e8");
}

static void test_hashmap_empty(void **state) {
        Hashmap h = {};

        (void)state;
        assert_null(hashmap_get(&h, hashmap_hash_string("x"), hashmap_eq_string, "x"));
        assert_int_equal(h.n, 0);
        hashmap_done(&h, free);
        assert_null(h.slots);
}

static void test_hashmap_strings_grow(void **state) {
        Hashmap h = {};
        char buf[32];
        size_t seen = 0;
        char *e;

        (void)state;
        for (int i = 0; i < 5000; i++) {
                snprintf(buf, sizeof buf, "s%d", i);
                char *copy = strdup(buf);
                assert_non_null(copy);
                assert_int_equal(hashmap_put(&h, hashmap_hash_string(copy), copy), 0);
                /* at most half full, a power of two */
                assert_true(h.n * 2 <= h.n_slots);
                assert_int_equal(h.n_slots & (h.n_slots - 1), 0);
        }
        assert_int_equal(h.n, 5000);
        for (int i = 0; i < 5000; i++) {
                snprintf(buf, sizeof buf, "s%d", i);
                e = hashmap_get(&h, hashmap_hash_string(buf), hashmap_eq_string, buf);
                assert_non_null(e);
                assert_string_equal(e, buf);
        }
        assert_null(hashmap_get(&h, hashmap_hash_string("s5000"), hashmap_eq_string, "s5000"));
        assert_null(hashmap_get(&h, hashmap_hash_string(""), hashmap_eq_string, ""));
        HASHMAP_FOREACH(e, &h)
                seen++;
        assert_int_equal(seen, 5000);
        hashmap_done(&h, free);
}

/* The same hash for every entry: eq alone tells them apart, probing wraps around. */
static void test_hashmap_collisions(void **state) {
        static const char *const v[] = { "a", "b", "c", "d", "e", "f", "g" };
        Hashmap h = {};

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(v); i++)
                assert_int_equal(hashmap_put(&h, UINT64_C(15), (void *)v[i]), 0);
        for (size_t i = 0; i < ELEMENTSOF(v); i++)
                assert_ptr_equal(hashmap_get(&h, UINT64_C(15), hashmap_eq_string, v[i]), v[i]);
        assert_null(hashmap_get(&h, UINT64_C(15), hashmap_eq_string, "z"));
        /* an equal key under another hash is not found: the stored hash is compared first */
        assert_null(hashmap_get(&h, UINT64_C(16), hashmap_eq_string, "a"));
        hashmap_done(&h, NULL);
}

/* hashmap_slot(): the found entry, or the empty slot to fill (the intern pattern). */
static void test_hashmap_slot_intern(void **state) {
        _cleanup_(hashmap_donep) Hashmap h = {};
        HashSlot *s;

        (void)state;
        assert_int_equal(hashmap_reserve(&h, 2), 0);
        s = hashmap_slot(&h, hashmap_hash_string("k"), hashmap_eq_string, "k");
        assert_null(s->entry);
        hashmap_fill(&h, s, hashmap_hash_string("k"), (void *)"k");
        s = hashmap_slot(&h, hashmap_hash_string("k"), hashmap_eq_string, "k");
        assert_string_equal(s->entry, "k");
        assert_int_equal(h.n, 1);
        /* reserve keeps what is there */
        assert_int_equal(hashmap_reserve(&h, 1000), 0);
        assert_true(h.n_slots >= 2002);
        assert_string_equal(hashmap_get(&h, hashmap_hash_string("k"), hashmap_eq_string, "k"), "k");
}

/* Index entries (k + 1 as a pointer) over an array the caller keeps. */
static const char *const index_names[] = { "alpha", "beta", "gamma" };

static bool index_eq(const void *entry, const void *key) {
        return streq(index_names[(uintptr_t)entry - 1], key);
}

static void test_hashmap_index_entries(void **state) {
        _cleanup_(hashmap_donep) Hashmap h = {};

        (void)state;
        for (size_t k = 0; k < ELEMENTSOF(index_names); k++)
                assert_int_equal(hashmap_put(&h, hashmap_hash_string(index_names[k]), (void *)(uintptr_t)(k + 1)), 0);
        assert_int_equal((uintptr_t)hashmap_get(&h, hashmap_hash_string("beta"), index_eq, "beta"), 2);
        assert_null(hashmap_get(&h, hashmap_hash_string("delta"), index_eq, "delta"));
}

/* Keys that differ only in their high hash bits still spread: the fold mixes them in. */
static void test_hash_fold(void **state) {
        (void)state;
        assert_int_not_equal(hashmap_fold(UINT64_C(1) << 32) & 15, hashmap_fold(0) & 15);
        assert_int_equal(hashmap_fold(UINT64_C(0xabcd)), 0xabcd);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fnv1a_vectors),
                cmocka_unit_test(test_fnv1a_ascii_lower),
                cmocka_unit_test(test_marker_hash_pinned),
                cmocka_unit_test(test_hashmap_empty),
                cmocka_unit_test(test_hashmap_strings_grow),
                cmocka_unit_test(test_hashmap_collisions),
                cmocka_unit_test(test_hashmap_slot_intern),
                cmocka_unit_test(test_hashmap_index_entries),
                cmocka_unit_test(test_hash_fold),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
