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
#include "erase-splice.h"
#include "macro.h"

#define A "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
#define B "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"

/* The splice of the edit for every id of ids, as erase_edit() composes it from the text side
 * (erase-splice.h): parse, find, splice. ret NULL: only count (*ret_removed and ids->counts,
 * exactly as the splice would). *ret is the new text when *ret_removed > 0, NULL otherwise. */
static int text_splice_ids(EraseParseFn parse, const char *text, size_t n, const EraseIds *ids,
                           char **ret, size_t *ret_size, unsigned *ret_removed) {
        _cleanup_(erase_splice_parsed_done) EraseParsed p = {};
        _cleanup_free_ bool *drop = NULL;
        unsigned k = 0;
        int r;

        if (ret) {
                *ret = NULL;
                *ret_size = 0;
        }
        *ret_removed = 0;
        r = parse(text, n, &p);
        if (r < 0)
                return r;
        drop = calloc(p.ne ? p.ne : 1, sizeof(bool));
        assert_non_null(drop);
        r = erase_splice_find(text, &p, ids, drop, &k);
        if (r < 0)
                return r;
        if (!ret) {
                *ret_removed = k;
                return 0;
        }
        if (k == 0)
                return 0;
        r = erase_splice_text(text, n, &p, drop, NULL, NULL, NULL, ret, ret_size, NULL);
        if (r < 0)
                return r;
        *ret_removed = k;
        return 0;
}

static int text_splice_logs_ids(const char *text, size_t n, const EraseIds *ids, char **ret,
                                size_t *ret_size, unsigned *ret_removed) {
        return text_splice_ids(erase_splice_parse_logs, text, n, ids, ret, ret_size, ret_removed);
}

static int text_splice_org_ids(const char *text, size_t n, const EraseIds *ids, char **ret,
                               size_t *ret_size, unsigned *ret_removed) {
        return text_splice_ids(erase_splice_parse_org, text, n, ids, ret, ret_size, ret_removed);
}

static int text_splice_logs(const char *text, size_t n, const char *id, char **ret,
                            size_t *ret_size, unsigned *ret_removed) {
        const EraseIds ids = { .ids = &id, .n = 1 };

        return text_splice_logs_ids(text, n, &ids, ret, ret_size, ret_removed);
}

static int text_splice_org(const char *text, size_t n, const char *id, char **ret,
                           size_t *ret_size, unsigned *ret_removed) {
        const EraseIds ids = { .ids = &id, .n = 1 };

        return text_splice_org_ids(text, n, &ids, ret, ret_size, ret_removed);
}

/* The rows of id in a logs.json text, counted as the edit finds them. */
static int text_count_logs(const char *text, size_t n, const char *id, unsigned *ret_count) {
        const EraseIds ids = { .ids = &id, .n = 1 };

        return text_splice_logs_ids(text, n, &ids, NULL, NULL, ret_count);
}

/* a row as Qwen's Logger writes it inside the array */
#define ROW(id, m, msg)                                                                            \
        "{\n    \"sessionId\": \"" id "\",\n    \"messageId\": " #m ",\n    \"type\": \"user\",\n" \
        "    \"message\": \"" msg "\",\n    \"timestamp\": \"2026-11-30T03:53:27.728Z\"\n  }"

static void splice_logs(const char *in, const char *id, const char *want, unsigned want_n) {
        _cleanup_free_ char *out = NULL;
        size_t n = 0;
        unsigned k = 99;

        assert_int_equal(text_splice_logs(in, strlen(in), id, &out, &n, &k), 0);
        assert_int_equal(k, want_n);
        if (!want) {
                assert_null(out);
                return;
        }
        assert_non_null(out);
        assert_string_equal(out, want);
        assert_int_equal(n, strlen(want));
}

static void test_erase_splice_logs_removes_rows_of_one_session(void **state) {
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

static void test_erase_splice_logs_and_org_refuse_what_json_parse_refuses(void **state) {
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
                assert_int_equal(text_splice_logs(bad[i], strlen(bad[i]), A, &out, &n, &k),
                                 -EBADMSG);
        /* the organization file too, where the bad value sits beside the entry */
        assert_int_equal(text_splice_org(org_bad, strlen(org_bad), A, &out, &n, &k), -EBADMSG);
}

static void test_erase_splice_org_removes_the_entry(void **state) {
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
        assert_int_equal(text_splice_org(in, strlen(in), A, &out, &n, &k), 0);
        assert_int_equal(k, 1);
        assert_string_equal(out, want_a);
        assert_int_equal(text_splice_org(out, n, B, &out2, &n2, &k), 0);
        assert_int_equal(k, 1);
        assert_string_equal(out2, want_ab);
        assert_int_equal(text_splice_org(out2, n2, B, &none, &n, &k), 0);
        assert_int_equal(k, 0);
        assert_null(none);
        assert_int_equal(text_splice_org("[]", 2, A, &none, &n, &k), -EBADMSG);
        assert_int_equal(text_splice_org("{\"sessions\":[]}", 15, A, &none, &n, &k), 0);
        assert_int_equal(k, 0);
}

static void test_erase_count_logs(void **state) {
        static const char in[] = "[\n  " ROW(A, 0, "a") ",\n  " ROW(B, 0, "b") ",\n  " ROW(A, 1, "c")
                                 "\n]";
        unsigned k = 0;

        (void)state;
        assert_int_equal(text_count_logs(in, strlen(in), A, &k), 0);
        assert_int_equal(k, 2);
        assert_int_equal(text_count_logs("[", 1, A, &k), -EBADMSG);
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
                assert_int_equal(text_splice_logs_ids(logs, strlen(logs), &set,
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
                assert_int_equal(text_splice_org_ids(org, strlen(org), &set,
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

/* Rows as JSON.parse reads them (Qwen's Logger filters on entry.sessionId): an escaped id or
 * key is decoded, the last of duplicate keys counts, whitespace anywhere, only a top-level
 * string "sessionId" counts, invalid UTF-8 in the id is U+FFFD. The removed rows go, every
 * other byte stays. */
static void test_erase_splice_logs_reads_rows_as_json_parse_does(void **state) {
        (void)state;
        /* an escaped id, an escaped key */
        splice_logs("[\n  {\"sessionId\": \"" "\\u0061aaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa" "\"},\n"
                    "  {\"sessionId\": \"" B "\"},\n  {\"session\\u0049d\": \"" A "\"}\n]",
                    A, "[\n  {\"sessionId\": \"" B "\"}\n]", 2);
        splice_logs("[\n  {\"sessionId\": \"\\u0041aaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa\"}\n]", A,
                    NULL, 0);
        /* duplicate keys: the last one */
        splice_logs("[\n  {\"sessionId\": \"" A "\", \"sessionId\": \"" B "\"},\n"
                    "  {\"sessionId\": \"" B "\", \"sessionId\": \"" A "\"},\n"
                    "  {\"sessionId\": \"" B "\", \"session\\u0049d\": \"" A "\"}\n]",
                    A, "[\n  {\"sessionId\": \"" A "\", \"sessionId\": \"" B "\"}\n]", 2);
        /* whitespace of every kind around and inside the rows: the rows kept byte for byte */
        splice_logs("\r\n [ \t\r\n{ \t\"sessionId\"\r\n :\t\"" A "\" }\t,\n\n  { \"sessionId\" : "
                    "\"" B "\"\n\t}  ] \n",
                    A, "\r\n [\n  { \"sessionId\" : \"" B "\"\n\t}\n] \n", 1);
        /* not a top-level string member "sessionId": kept */
        splice_logs("[\n  {\"x\": {\"sessionId\": \"" A "\"}},\n  {\"sessionId\": null},\n"
                    "  {\"sessionId\": [\"" A "\"]},\n  {\"sessionId\": {\"sessionId\": \"" A "\"}},\n"
                    "  [\"sessionId\", \"" A "\"],\n  \"" A "\",\n"
                    "  {\"message\": \"\\\"sessionId\\\": \\\"" A "\\\"\", \"sessionId\": \"" B "\"},\n"
                    "  {\"sessionId \": \"" A "\"},\n  {\"sessionid\": \"" A "\"}\n]",
                    A, NULL, 0);
        /* an id with escapes or bytes beyond ASCII, compared decoded */
        splice_logs("[\n  {\"sessionId\": \"a\\\\b\\\"c\"},\n  {\"sessionId\": \"a\\\\b\"}\n]",
                    "a\\b\"c", "[\n  {\"sessionId\": \"a\\\\b\"}\n]", 1);
        splice_logs("[\n  {\"sessionId\": \"\xc3\xa9-1\"},\n  {\"sessionId\": \"\\u00e9-1\"},\n"
                    "  {\"sessionId\": \"e-1\"}\n]",
                    "\xc3\xa9-1", "[\n  {\"sessionId\": \"e-1\"}\n]", 2);
        splice_logs("[\n  {\"sessionId\": \"a\xff" "b\"},\n  {\"sessionId\": \"ab\"}\n]",
                    "a\xef\xbf\xbd" "b", "[\n  {\"sessionId\": \"ab\"}\n]", 1);
        splice_logs("[\n  {\"sessionId\": \"a\xff" "b\"}\n]", "a\xff" "b", NULL, 0);
}

/* A key with an escaped NUL is another key for JSON.parse ("sessionId\0" is not "sessionId"):
 * the row is not the session's. (The json-c object qgc built before cut such a key at the NUL
 * and removed the first row, which Qwen's delete keeps.) */
static void test_erase_splice_logs_key_with_nul_is_another_key(void **state) {
        (void)state;
        splice_logs("[\n  {\"sessionId\\u0000\": \"" A "\"}\n]", A, NULL, 0);
        splice_logs("[\n  {\"sessionId\": \"" A "\", \"sessionId\\u0000\": \"" B "\"}\n]", A,
                    "[]", 1);
}

/* Organisation entries as JSON.parse reads them: an escaped key is decoded, every duplicate of
 * the entry goes, the "sessions" object is the last one of that (decoded) name. */
static void test_erase_splice_org_reads_entries_as_json_parse_does(void **state) {
        _cleanup_free_ char *out = NULL;
        size_t n;
        unsigned k;

        (void)state;
        assert_int_equal(text_splice_org("{\"sessions\": {\"\\u0061aaaaaaa-aaaa-4aaa-8aaa-"
                                          "aaaaaaaaaaaa\": {}, \"" B "\": 1, \"" A "\": 2}}",
                                          strlen("{\"sessions\": {\"\\u0061aaaaaaa-aaaa-4aaa-8aaa-"
                                                 "aaaaaaaaaaaa\": {}, \"" B "\": 1, \"" A
                                                 "\": 2}}"),
                                          A, &out, &n, &k),
                         0);
        assert_int_equal(k, 2);
        assert_string_equal(out, "{\"sessions\": {\n    \"" B "\": 1\n  }}");
        free(out);
        out = NULL;
        /* the last "sessions" (its name escaped) is the one JSON.parse keeps */
        assert_int_equal(text_splice_org("{\"sessions\": {\"" A "\": 1}, \"session\\u0073\": "
                                          "{\"" A "\": 2, \"" B "\": 3}}",
                                          strlen("{\"sessions\": {\"" A "\": 1}, \"session\\u0073"
                                                 "\": {\"" A "\": 2, \"" B "\": 3}}"),
                                          A, &out, &n, &k),
                         0);
        assert_int_equal(k, 1);
        assert_string_equal(out, "{\"sessions\": {\"" A "\": 1}, \"session\\u0073\": {\n    \"" B
                                 "\": 3\n  }}");
}

/* The parse a splice derives for its new text (what the next batch's edit starts from, without
 * parsing the file again) is exactly what parsing the new text finds: the same elements at the
 * same offsets, the same ids (raw or decoded). */
static void assert_parsed_equal(const char *ta, const EraseParsed *a, const char *tb,
                                const EraseParsed *b) {
        assert_int_equal(a->has, b->has);
        assert_int_equal(a->open, b->open);
        assert_int_equal(a->close, b->close);
        assert_int_equal(a->depth, b->depth);
        assert_int_equal(a->ne, b->ne);
        for (size_t i = 0; i < a->ne; i++) {
                const EraseElemId *x = &a->id[i], *y = &b->id[i];

                assert_memory_equal(&a->e[i], &b->e[i], sizeof(JsonElem));
                assert_int_equal(x->off == SIZE_MAX, y->off == SIZE_MAX);
                if (x->off == SIZE_MAX)
                        continue;
                assert_int_equal(x->len, y->len);
                assert_memory_equal(x->dec ?: ta + a->e[i].start + x->off,
                                    y->dec ?: tb + b->e[i].start + y->off, x->len);
        }
}

static void derive_chain(EraseParseFn parse, const char *text, const char *const *ids, size_t n_ids,
                         const char *want) {
        _cleanup_free_ char *cur = strdup(text);
        _cleanup_(erase_splice_parsed_done) EraseParsed p = {};
        size_t n = strlen(text);

        assert_int_equal(parse(cur, n, &p), 0);
        for (size_t i = 0; i < n_ids; i++) {
                _cleanup_free_ bool *drop = calloc(p.ne + 1, sizeof(bool));
                _cleanup_(erase_splice_parsed_done) EraseParsed fresh = {};
                EraseParsed next = {};
                const EraseIds set = { .ids = &ids[i], .n = 1 };
                char *out = NULL;
                size_t n_out;
                unsigned k;

                assert_int_equal(erase_splice_find(cur, &p, &set, drop, &k), 0);
                assert_true(k > 0);
                assert_int_equal(erase_splice_text(cur, n, &p, drop, NULL, NULL, NULL, &out, &n_out,
                                                   &next),
                                 0);
                assert_int_equal(parse(out, n_out, &fresh), 0);
                assert_parsed_equal(out, &next, out, &fresh);
                erase_splice_parsed_done(&p);
                p = next;
                free(cur);
                cur = out;
                n = n_out;
        }
        assert_string_equal(cur, want);
}

static void test_erase_parsed_splice_derives_what_parsing_finds(void **state) {
        static const char logs[] =
                "  [{\"sessionId\": \"" A "\"}, {\"sessionId\": \"\\u0062bbbbbbb-bbbb-4bbb-8bbb-"
                "bbbbbbbbbbbb\", \"m\": [1, {\"sessionId\": \"x\"}]},\n 7, {\"sessionId\": \"\xc3"
                "\xa9\"}, {\"sessionId\": \"" A "\"}, {\"k\": \"v\"}, {\"sessionId\": \"c\"}] \n";
        static const char org[] =
                "{\"groups\": [], \"sessions\" : {\"" A "\": {\"p\": 1}, \"\\u0062\": {},\n"
                "\"c\": 2, \"\xc3\xa9\": 3, \"" A "\": 4}, \"z\": {\"" A "\": 5}}";
        const char *ids[] = { A, B, "\xc3\xa9", "c" }, *org_ids[] = { "b", A, "\xc3\xa9" };

        (void)state;
        derive_chain(erase_splice_parse_logs, logs, ids, ELEMENTSOF(ids),
                     "  [\n  7,\n  {\"k\": \"v\"}\n] \n");
        derive_chain(erase_splice_parse_org, org, org_ids, ELEMENTSOF(org_ids),
                     "{\"groups\": [], \"sessions\" : {\n    \"c\": 2\n  }, \"z\": {\"" A
                     "\": 5}}");
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
                cmocka_unit_test(test_erase_splice_logs_removes_rows_of_one_session),
                cmocka_unit_test(test_erase_splice_logs_and_org_refuse_what_json_parse_refuses),
                cmocka_unit_test(test_erase_splice_logs_reads_rows_as_json_parse_does),
                cmocka_unit_test(test_erase_splice_logs_key_with_nul_is_another_key),
                cmocka_unit_test(test_erase_splice_org_reads_entries_as_json_parse_does),
                cmocka_unit_test(test_erase_parsed_splice_derives_what_parsing_finds),
                cmocka_unit_test(test_erase_splice_org_removes_the_entry),
                cmocka_unit_test(test_erase_count_logs),
                cmocka_unit_test(test_erase_splice_ids_of_a_batch),
                cmocka_unit_test(test_erase_review_dir_name),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
