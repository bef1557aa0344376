/* test_erase.c: splicing a session out of Qwen's shared JSON files keeps every other byte and
 * Qwen's JSON.stringify(v, null, 2) framing. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "erase.h"
#include "erase-int.h"
#include "macro.h"

#define A "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
#define B "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"

/* a row as Qwen's Logger writes it inside the array */
#define ROW(id, m, msg)                                                                            \
        "{\n    \"sessionId\": \"" id "\",\n    \"messageId\": " #m ",\n    \"type\": \"user\",\n" \
        "    \"message\": \"" msg "\",\n    \"timestamp\": \"2026-11-30T03:53:27.728Z\"\n  }"

static void splice_logs(const char *in, const char *id, const char *want, unsigned want_n) {
        _cleanup_free_ char *out = NULL;
        size_t n = 0;
        unsigned k = 99;

        assert_int_equal(erase_splice_logs(in, strlen(in), id, &out, &n, &k), 0);
        assert_int_equal(k, want_n);
        if (!want) {
                assert_null(out);
                return;
        }
        assert_non_null(out);
        assert_string_equal(out, want);
        assert_int_equal(n, strlen(want));
}

static void test_erase_logs_rows_of_one_session(void **state) {
        (void)state;
        /* first, middle, last, every one: the rest byte-identical, Qwen's framing */
        splice_logs("[\n  " ROW(A, 0, "one") ",\n  " ROW(B, 0, "two") ",\n  " ROW(A, 1, "th\\\"ree")
                    "\n]",
                    A, "[\n  " ROW(B, 0, "two") "\n]", 2);
        splice_logs("[\n  " ROW(B, 0, "two") ",\n  " ROW(A, 0, "x") ",\n  " ROW(B, 1, "\\u00e9 \\n")
                    "\n]",
                    A, "[\n  " ROW(B, 0, "two") ",\n  " ROW(B, 1, "\\u00e9 \\n") "\n]", 1);
        splice_logs("[\n  " ROW(A, 0, "only") "\n]", A, "[]", 1);
        /* nothing of the session: no new text */
        splice_logs("[\n  " ROW(B, 0, "two") "\n]", A, NULL, 0);
        splice_logs("[]", A, NULL, 0);
        /* a row that is not an object, a sessionId in another case: kept as they are */
        splice_logs("[\n  1,\n  {\"sessionId\": \"AAAAAAAA-aaaa-4aaa-8aaa-aaaaaaaaaaaa\"},\n  "
                    "{\"sessionId\":\"" A "\"}\n]",
                    A, "[\n  1,\n  {\"sessionId\": \"AAAAAAAA-aaaa-4aaa-8aaa-aaaaaaaaaaaa\"}\n]", 1);
        /* a compact file: the rows stay byte-identical, the framing becomes Qwen's */
        splice_logs("[{\"sessionId\":\"" B "\"},{\"sessionId\":\"" A "\"}]", A,
                    "[\n  {\"sessionId\":\"" B "\"}\n]", 1);
}

static void test_erase_logs_refuses_what_json_parse_refuses(void **state) {
        static const char org_bad[] = "{\"sessions\": {\"" A "\": {}, \"x\": 01}}";
        static const char *const bad[] = {
                "",       "{}",          "[",     "[1,]",    "[1] x", "[\"a]",
                "[tru]",  "[{\"a\" 1}]", "[\"\n\"]", "[1 2]",
                /* the span walker erase.c had before json_elements() took these */
                "[01]",   "[+1]",        "[1.]",  "[-]",     "[1e5.0]", "[\"\\x\"]",
                "[\"\\u12\"]", "[{\"sessionId\":\"" A "\"},01]",
        };
        _cleanup_free_ char *out = NULL;
        size_t n;
        unsigned k;

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                assert_int_equal(erase_splice_logs(bad[i], strlen(bad[i]), A, &out, &n, &k),
                                 -EBADMSG);
        /* the organization file too, where the bad value sits beside the entry */
        assert_int_equal(erase_splice_org(org_bad, strlen(org_bad), A, &out, &n, &k), -EBADMSG);
}

static void test_erase_org_entry(void **state) {
        static const char in[] =
                "{\n  \"schemaVersion\": 1,\n  \"groups\": [\n    {\n      \"id\": \"g1\",\n"
                "      \"name\": \"Work\"\n    }\n  ],\n  \"sessions\": {\n    \"" A "\": {\n"
                "      \"groupId\": \"g1\",\n      \"updatedAt\": \"2026-11-30T00:00:00.000Z\"\n"
                "    },\n    \"" B "\": {\n      \"groupId\": null,\n      \"pinnedAt\": \"x\",\n"
                "      \"updatedAt\": \"2026-11-30T00:00:00.000Z\"\n    }\n  }\n}";
        static const char want_a[] =
                "{\n  \"schemaVersion\": 1,\n  \"groups\": [\n    {\n      \"id\": \"g1\",\n"
                "      \"name\": \"Work\"\n    }\n  ],\n  \"sessions\": {\n    \"" B "\": {\n"
                "      \"groupId\": null,\n      \"pinnedAt\": \"x\",\n"
                "      \"updatedAt\": \"2026-11-30T00:00:00.000Z\"\n    }\n  }\n}";
        static const char want_ab[] =
                "{\n  \"schemaVersion\": 1,\n  \"groups\": [\n    {\n      \"id\": \"g1\",\n"
                "      \"name\": \"Work\"\n    }\n  ],\n  \"sessions\": {}\n}";
        _cleanup_free_ char *out = NULL, *out2 = NULL, *none = NULL;
        size_t n, n2;
        unsigned k;

        (void)state;
        assert_int_equal(erase_splice_org(in, strlen(in), A, &out, &n, &k), 0);
        assert_int_equal(k, 1);
        assert_string_equal(out, want_a);
        assert_int_equal(erase_splice_org(out, n, B, &out2, &n2, &k), 0);
        assert_int_equal(k, 1);
        assert_string_equal(out2, want_ab);
        assert_int_equal(erase_splice_org(out2, n2, B, &none, &n, &k), 0);
        assert_int_equal(k, 0);
        assert_null(none);
        assert_int_equal(erase_splice_org("[]", 2, A, &none, &n, &k), -EBADMSG);
        assert_int_equal(erase_splice_org("{\"sessions\":[]}", 15, A, &none, &n, &k), 0);
        assert_int_equal(k, 0);
}

static void test_erase_count_logs(void **state) {
        static const char in[] = "[\n  " ROW(A, 0, "a") ",\n  " ROW(B, 0, "b") ",\n  " ROW(A, 1, "c")
                                 "\n]";
        unsigned k = 0;

        (void)state;
        assert_int_equal(erase_count_logs(in, strlen(in), A, &k), 0);
        assert_int_equal(k, 2);
        assert_int_equal(erase_count_logs("[", 1, A, &k), -EBADMSG);
}

/* A batch's splice (several ids at once): each element counts for the first of the ids equal to
 * its own exactly (not ignoring case, not a prefix; an id given twice counts once), the count
 * alone (ret NULL) is what the splice removes, and the text is what one splice per id makes. */
static void test_erase_splice_ids_of_a_batch(void **state) {
        static const char logs[] = "[\n  {\"sessionId\": \"a\"},\n  {\"sessionId\": \"ab\"},\n"
                                   "  {\"sessionId\": \"b\"},\n  {\"sessionId\": \"a\"},\n"
                                   "  {\"x\": 1},\n  {\"sessionId\": \"A\"},\n"
                                   "  {\"sessionId\": \"abc\"}\n]";
        static const char logs_left[] = "[\n  {\"x\": 1},\n  {\"sessionId\": \"A\"},\n"
                                        "  {\"sessionId\": \"abc\"}\n]";
        static const char org[] = "{\n  \"sessions\": {\n    \"b\": {},\n    \"a\": {},\n"
                                  "    \"ab\": {},\n    \"B\": {}\n  }\n}";
        static const char org_left[] = "{\n  \"sessions\": {\n    \"B\": {}\n  }\n}";
        const char *ids[] = { "ab", "a", "zz", "a", "b" };
        const unsigned want_logs[] = { 1, 2, 0, 0, 1 }, want_org[] = { 1, 1, 0, 0, 1 };
        unsigned counts[ELEMENTSOF(ids)], k = 0;
        const EraseIds set = { .ids = ids, .n = ELEMENTSOF(ids), .counts = counts };
        char *out = NULL;
        size_t n = 0;

        (void)state;
        for (int pass = 0; pass < 2; pass++) {
                bool count_only = pass == 0;

                memset(counts, 0, sizeof counts);
                assert_int_equal(erase_splice_logs_ids(logs, strlen(logs), &set,
                                                       count_only ? NULL : &out,
                                                       count_only ? NULL : &n, &k),
                                 0);
                assert_int_equal(k, 4);
                for (size_t i = 0; i < ELEMENTSOF(ids); i++)
                        assert_int_equal(counts[i], want_logs[i]);
                if (!count_only) {
                        assert_non_null(out);
                        assert_int_equal(n, strlen(logs_left));
                        assert_string_equal(out, logs_left);
                        free(out);
                        out = NULL;
                }

                memset(counts, 0, sizeof counts);
                assert_int_equal(erase_splice_org_ids(org, strlen(org), &set,
                                                      count_only ? NULL : &out,
                                                      count_only ? NULL : &n, &k),
                                 0);
                assert_int_equal(k, 3);
                for (size_t i = 0; i < ELEMENTSOF(ids); i++)
                        assert_int_equal(counts[i], want_org[i]);
                if (!count_only) {
                        assert_non_null(out);
                        assert_string_equal(out, org_left);
                        free(out);
                        out = NULL;
                }
        }
}

/* reviewSessionDirName() of Qwen (node: sha256 of the id, first 8 hex digits) */
static void test_erase_review_dir_name(void **state) {
        _cleanup_free_ char *n = erase_review_dir_name("df25afd1-db41-477e-87bb-98d273af1115");

        (void)state;
        assert_non_null(n);
        assert_string_equal(n, "df25afd1-db41-477e-87bb-98d273af1115-55ce4f4d");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_erase_logs_rows_of_one_session),
                cmocka_unit_test(test_erase_logs_refuses_what_json_parse_refuses),
                cmocka_unit_test(test_erase_org_entry),
                cmocka_unit_test(test_erase_count_logs),
                cmocka_unit_test(test_erase_splice_ids_of_a_batch),
                cmocka_unit_test(test_erase_review_dir_name),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
