/* test_qwen.c: Qwen's naming rules against goldens computed by Qwen's own code. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "testdata.h"
#include "qwen.h"
#include "sha256.h"

/* Every row of golden/paths.tsv: cwd (a JSON string), sanitizeCwd, getProjectHash. */
static void test_qwen_golden_paths(void **state) {
        _cleanup_free_ char *path = test_data_path("corpus/golden/paths.tsv");
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        unsigned rows = 0;

        (void)state;
        assert_non_null(f);
        /* header */
        assert_true(getline(&line, &cap, f) > 0);
        assert_true(strneq(line, "cwd\tsanitized\tproject_hash", 26));

        while ((n = getline(&line, &cap, f)) > 0) {
                char *t1, *t2, *nl;
                json_object *js;
                const char *cwd;
                _cleanup_free_ char *san = NULL;
                char hash[PROJECT_HASH_LEN + 1];

                nl = strchr(line, '\n');
                if (nl)
                        *nl = '\0';
                t1 = strchr(line, '\t');
                assert_non_null(t1);
                *t1++ = '\0';
                t2 = strchr(t1, '\t');
                assert_non_null(t2);
                *t2++ = '\0';

                js = json_tokener_parse(line);
                assert_non_null(js);
                assert_true(json_object_is_type(js, json_type_string));
                cwd = json_object_get_string(js);

                san = qwen_sanitize_cwd(cwd);
                assert_non_null(san);
                if (!streq(san, t1))
                        print_error("sanitize(%s) = %s, want %s\n", line, san, t1);
                assert_string_equal(san, t1);

                assert_int_equal(qwen_project_hash(cwd, hash), 0);
                if (!streq(hash, t2))
                        print_error("hash(%s) = %s, want %s\n", line, hash, t2);
                assert_string_equal(hash, t2);
                json_object_put(js);
                rows++;
        }
        assert_true(rows >= 29);
}

static void test_qwen_sanitize_cwd_invalid_utf8(void **state) {
        static const struct {
                const char *in, *want;
        } cases[] = {
                { "a\xff" "b", "a-b" },               /* lone invalid byte: one U+FFFD */
                { "a\xc3" "b", "a-b" },               /* truncated 2-byte sequence */
                { "a\xe6\x97" "b", "a-b" },           /* truncated 3-byte: maximal subpart */
                { "a\xf0\x9f\x9a" "b", "a-b" },       /* truncated 4-byte: one U+FFFD */
                { "a\xc0\xaf" "b", "a--b" },          /* overlong: two units */
                { "a\xed\xa0\x80" "b", "a---b" },     /* encoded surrogate: three units */
                { "a\xf4\x90\x80\x80" "b", "a----b" }, /* above U+10FFFF */
                { "\xf0\x9f\x9a\x80", "--" },         /* valid astral: two units */
                { "\xe6\x97\xa5", "-" },              /* valid BMP */
                { "", "" },
        };

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *s = qwen_sanitize_cwd(cases[i].in);
                assert_non_null(s);
                if (!streq(s, cases[i].want))
                        print_error("case %zu: got %s want %s\n", i, s, cases[i].want);
                assert_string_equal(s, cases[i].want);
        }
}

static void test_qwen_project_hash_invalid_utf8_hashes_replacement(void **state) {
        char a[PROJECT_HASH_LEN + 1], b[PROJECT_HASH_LEN + 1];

        (void)state;
        /* Node hashes the decoded string, so an invalid byte hashes as U+FFFD (EF BF BD). */
        assert_int_equal(qwen_project_hash("/x\xff", a), 0);
        assert_int_equal(sha256_hex("/x\xef\xbf\xbd", 5, b), 0);
        assert_string_equal(a, b);
        assert_int_equal(qwen_project_hash(NULL, a), -EINVAL);
}

static void test_qwen_session_file_name_pattern(void **state) {
        static const struct {
                const char *name;
                bool ok;
        } cases[] = {
                { "aefd2a51-f2fc-4eed-a29c-91292bb022bf.jsonl", true },
                { "AEFD2A51-F2FC-4EED-A29C-91292BB022BF.jsonl", true },
                { "aefd2a51f2fc4eeda29c91292bb022bf.jsonl", true },       /* 32 chars */
                { "aefd2a51f2fc4eeda29c91292bb022b.jsonl", false },       /* 31 chars */
                { "aefd2a51-f2fc-4eed-a29c-91292bb022bf0.jsonl", false }, /* 37 chars */
                { "------------------------------------.jsonl", true },   /* 36 dashes */
                { "aefd2a51-f2fc-4eed-a29c-91292bb022bg.jsonl", false },  /* 'g' */
                { "aefd2a51-f2fc-4eed-a29c-91292bb022bf.ledger.jsonl", false },
                { "aefd2a51-f2fc-4eed-a29c-91292bb022bf.jsonl.tmp", false },
                { "aefd2a51-f2fc-4eed-a29c-91292bb022bf.JSONL", false },
                { "aefd2a51-f2fc-4eed-a29c-91292bb022bf.json", false },
                { ".aefd2a51-f2fc-4eed-a29c-91292bb022bf.jsonl", false },
                { "aefd2a51-f2fc-4eed-a29c-91292bb022bf.runtime.json", false },
                { ".jsonl", false },
                { "", false },
        };

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char id[SESSION_ID_MAX + 1] = "unchanged";
                bool ok = qwen_session_file_name(cases[i].name, id);

                if (ok != cases[i].ok)
                        print_error("case %s\n", cases[i].name);
                assert_int_equal(ok, cases[i].ok);
                if (ok) {
                        assert_int_equal(strlen(id) + 6, strlen(cases[i].name));
                        assert_true(strneq(id, cases[i].name, strlen(id)));
                        assert_true(qwen_session_id_valid(id));
                } else
                        assert_string_equal(id, "unchanged");
        }
        assert_false(qwen_session_file_name(NULL, NULL));
        assert_true(qwen_session_file_name("aefd2a51-f2fc-4eed-a29c-91292bb022bf.jsonl", NULL));
}

static void test_qwen_session_id_valid_bounds(void **state) {
        (void)state;
        assert_false(qwen_session_id_valid(NULL));
        assert_false(qwen_session_id_valid(""));
        assert_false(qwen_session_id_valid("aefd2a51-f2fc-4eed-a29c-91292bb022bf.jsonl"));
        assert_true(qwen_session_id_valid("0123456789abcdef0123456789ABCDEF"));
        assert_false(qwen_session_id_valid("0123456789abcdef0123456789ABCDE"));
}

static void test_qwen_session_id_equal_ignores_ascii_case(void **state) {
        (void)state;
        assert_true(qwen_session_id_equal("aefd2a51-F2FC", "AEFD2A51-f2fc"));
        assert_false(qwen_session_id_equal("aefd2a51", "aefd2a5"));
        assert_false(qwen_session_id_equal("aefd2a5", "aefd2a51"));
        assert_false(qwen_session_id_equal("a", NULL));
        assert_false(qwen_session_id_equal(NULL, NULL));
        assert_true(qwen_session_id_equal("", ""));
        /* only ASCII letters fold */
        assert_false(qwen_session_id_equal("[", "{"));
}

static void test_qwen_worktree_root_last_marker(void **state) {
        static const struct {
                const char *cwd, *want;
        } cases[] = {
                { "/home/carol/proj/.qwen/worktrees/feature-x", "/home/carol/proj" },
                { "/a/.qwen/worktrees/b/.qwen/worktrees/c", "/a/.qwen/worktrees/b" },
                { "/home/carol/proj/.qwen/worktrees/", "/home/carol/proj" },
                { "/home/carol/proj/.qwen/worktrees", NULL }, /* no trailing slash */
                { "/home/carol/proj", NULL },
                { "/.qwen/worktrees/x", NULL }, /* marker at index 0: Qwen needs > 0 */
                { "", NULL },
        };

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *r = qwen_worktree_root(cases[i].cwd);

                if (cases[i].want) {
                        assert_non_null(r);
                        assert_string_equal(r, cases[i].want);
                } else {
                        assert_null(r);
                        assert_int_equal(errno, 0);
                }
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_qwen_golden_paths),
                cmocka_unit_test(test_qwen_sanitize_cwd_invalid_utf8),
                cmocka_unit_test(test_qwen_project_hash_invalid_utf8_hashes_replacement),
                cmocka_unit_test(test_qwen_session_file_name_pattern),
                cmocka_unit_test(test_qwen_session_id_valid_bounds),
                cmocka_unit_test(test_qwen_session_id_equal_ignores_ascii_case),
                cmocka_unit_test(test_qwen_worktree_root_last_marker),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
