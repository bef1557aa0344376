/* test_claims.c: claims.c on a real chats/ directory: which names are
 * runtime claims (Qwen's readRuntimeStatusClaims reads every "*.runtime.json"; v0.21's is
 * <id>.runtime.json, newer ones <id>.<pid>.runtime.json), reading them with JSON.parse's grammar
 * (a claim that does not parse, is not an object, has no string session_id or is not a regular
 * file is kept as malformed: liveness unknown, never dropped), and the sorted lookup by id. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "claims.h"
#include "fixture.h"
#include "fs.h"
#include "macro.h"
#include "testdata.h"

#define A "aaaaaaaa-0000-4000-8000-000000000001"
#define B "bbbbbbbb-0000-4000-8000-000000000002"
#define C "cccccccc-0000-4000-8000-000000000003"

/* Each test's own root with an empty chats/ in it. */
static int setup(void **state) {
        return fixture_root_setup_build(state, (const char *const[]){ "chats/", NULL });
}

static bool has(const ClaimSet *set, const char *file) {
        for (size_t i = 0; i < set->n; i++)
                if (streq(set->claims[i].file, file))
                        return true;
        return false;
}

/* The claim read from file (the test fails when there is none). */
static const RuntimeClaim *find(const ClaimSet *set, const char *file) {
        for (size_t i = 0; i < set->n; i++)
                if (streq(set->claims[i].file, file))
                        return &set->claims[i];
        fail_msg("no claim %s", file);
        abort();
}

static void test_claims_names(void **state) {
        (void)state;
        assert_true(claims_is_claim_name(A ".runtime.json"));
        assert_true(claims_is_claim_name(A ".4242.runtime.json"));
        assert_true(claims_is_claim_name("x.runtime.json"));
        assert_false(claims_is_claim_name(".runtime.json"));
        assert_false(claims_is_claim_name("runtime.json"));
        assert_false(claims_is_claim_name(A ".runtime.json.tmp"));
        assert_false(claims_is_claim_name(A ".jsonl"));
        assert_false(claims_is_claim_name(A ".RUNTIME.JSON"));

        /* v0.21's name and the per-pid name, the id's case ignored */
        assert_true(claims_is_claim_of(A ".runtime.json", A));
        assert_true(claims_is_claim_of("AAAAAAAA-0000-4000-8000-000000000001.runtime.json", A));
        assert_true(claims_is_claim_of(A ".4242.runtime.json", A));
        assert_true(claims_is_claim_of(A ".0.runtime.json", A));
        /* not a pid, not this id, not a claim */
        assert_false(claims_is_claim_of(A "..runtime.json", A));
        assert_false(claims_is_claim_of(A ".12a.runtime.json", A));
        assert_false(claims_is_claim_of(A ".-1.runtime.json", A));
        assert_false(claims_is_claim_of(A ".42", A));
        assert_false(claims_is_claim_of(A "0.runtime.json", A));
        assert_false(claims_is_claim_of(A ".runtime.json.tmp", A));
        assert_false(claims_is_claim_of(A ".jsonl", A));
        assert_false(claims_is_claim_of(B ".runtime.json", A));
        assert_false(claims_is_claim_of("aaaaaaaa.runtime.json", A));
}

/* Every *.runtime.json is read; the good one gives its fields and identity, every bad one is
 * kept as malformed; other names are not read. */
static void test_claims_load(void **state) {
        const char *root = *state;
        _cleanup_(claims_done) ClaimSet set = {};
        _cleanup_close_ int cfd = -EBADF;
        const RuntimeClaim *c;
        struct stat st;

        assert_int_equal(fixture_write(root, "chats/" A ".4242.runtime.json",
                                       "{\"schema_version\":1,\"pid\":4242,\"session_id\":\"" A "\","
                                       "\"work_dir\":\"/srv/app\",\"hostname\":\"box\","
                                       "\"started_at\":1.5,\"qwen_version\":\"0.24.4\"}\n"),
                         0);
        /* JSON.parse refuses these (json-c's tokener would take some of them) */
        assert_int_equal(fixture_write(root, "chats/" B ".1.runtime.json",
                                       "{\"pid\":1,\"session_id\":\"" B "\"} x"), 0);
        assert_int_equal(fixture_write(root, "chats/" B ".2.runtime.json",
                                       "{\"pid\":NaN,\"session_id\":\"" B "\"}"), 0);
        assert_int_equal(fixture_write(root, "chats/" B ".3.runtime.json",
                                       "/* c */{\"pid\":1,\"session_id\":\"" B "\"}"), 0);
        assert_int_equal(fixture_write(root, "chats/" B ".4.runtime.json",
                                       "{'pid':1,'session_id':'" B "'}"), 0);
        /* parses, but not an object, or no string session_id */
        assert_int_equal(fixture_write(root, "chats/" B ".5.runtime.json", "[1,2]"), 0);
        assert_int_equal(fixture_write(root, "chats/" B ".6.runtime.json", "{\"pid\":6}"), 0);
        assert_int_equal(fixture_write(root, "chats/" B ".7.runtime.json",
                                       "{\"pid\":7,\"session_id\":7}"), 0);
        assert_int_equal(fixture_write(root, "chats/" B ".8.runtime.json", ""), 0);
        /* not a regular file: a symlink to a good claim, a FIFO (must not block), a directory */
        assert_int_equal(fixture_symlink(root, "chats/" C ".1.runtime.json", A ".4242.runtime.json"), 0);
        assert_int_equal(fixture_mkfifo(root, "chats/" C ".2.runtime.json"), 0);
        assert_int_equal(fixture_mkdir(root, "chats/" C ".3.runtime.json"), 0);
        /* not claims */
        assert_int_equal(fixture_write(root, "chats/" A ".jsonl", "{}\n"), 0);
        assert_int_equal(fixture_write(root, "chats/" A ".runtime.json.tmp", "{}"), 0);

        cfd = test_open_dir(root, "chats");
        assert_int_equal(claims_load(&set, cfd), 0);
        assert_int_equal(set.n, 12);
        assert_false(set.sorted);
        assert_false(has(&set, A ".jsonl"));
        assert_false(has(&set, A ".runtime.json.tmp"));

        c = find(&set, A ".4242.runtime.json");
        assert_false(c->malformed);
        assert_string_equal(c->session_id, A);
        assert_string_equal(c->work_dir, "/srv/app");
        assert_string_equal(c->hostname, "box");
        assert_int_equal(c->pid, 4242);
        assert_int_equal(fstatat(cfd, A ".4242.runtime.json", &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(c->id.present);
        assert_int_equal(c->id.ino, st.st_ino);
        assert_int_equal(c->id.size, (uint64_t)st.st_size);

        for (int i = 1; i <= 8; i++) {
                char name[64];

                snprintf(name, sizeof name, B ".%d.runtime.json", i);
                c = find(&set, name);
                if (!c->malformed)
                        fail_msg("%s read as a good claim", name);
                assert_null(c->session_id);
                /* malformed claims still name their session by the file name */
                assert_true(claims_match(c, B));
                assert_false(claims_match(c, A));
        }
        for (int i = 1; i <= 3; i++) {
                char name[64];

                snprintf(name, sizeof name, C ".%d.runtime.json", i);
                c = find(&set, name);
                if (!c->malformed)
                        fail_msg("%s (not a regular file) read as a good claim", name);
                assert_false(c->id.present);
                assert_true(claims_match(c, C));
        }
}

/* A claim is read up to 1 MiB (json.h's table): a bigger one is malformed, not cut. */
static void test_claims_size_limit(void **state) {
        const char *root = *state;
        _cleanup_(claims_done) ClaimSet set = {};
        _cleanup_close_ int cfd = -EBADF;
        _cleanup_free_ char *big = NULL;
        const char *head = "{\"session_id\":\"" A "\",\"pad\":\"";
        size_t n = 1024 * 1024 + 16, hl = strlen(head);

        big = malloc(n + 1);
        assert_non_null(big);
        memcpy(big, head, hl);
        memset(big + hl, 'x', n - hl - 2);
        memcpy(big + n - 2, "\"}", 2);
        big[n] = 0;
        assert_int_equal(fixture_write(root, "chats/" A ".runtime.json", big), 0);
        cfd = test_open_dir(root, "chats");
        assert_int_equal(claims_load(&set, cfd), 0);
        assert_int_equal(set.n, 1);
        assert_true(set.claims[0].malformed);
        assert_true(claims_match(&set.claims[0], A));
}

/* claims_match(): session_id equal ignoring case; when malformed, the file name's id part up to
 * a '.' (never a longer id that starts the same). */
static void test_claims_match(void **state) {
        RuntimeClaim named = { .file = (char *)"whatever.runtime.json", .session_id = (char *)A };
        RuntimeClaim bad = { .file = (char *)A ".9.runtime.json", .malformed = true };
        RuntimeClaim badshort = { .file = (char *)"aaaaaaaa.runtime.json", .malformed = true };

        (void)state;
        /* a named claim goes by its session_id, not its file name */
        assert_true(claims_match(&named, A));
        assert_true(claims_match(&named, "AAAAAAAA-0000-4000-8000-000000000001"));
        assert_false(claims_match(&named, "whatever"));
        assert_false(claims_match(&named, B));
        assert_true(claims_match(&bad, A));
        assert_true(claims_match(&bad, "AAAAAAAA-0000-4000-8000-000000000001"));
        assert_false(claims_match(&bad, "aaaaaaaa"));
        assert_false(claims_match(&badshort, A));
        assert_true(claims_match(&badshort, "aaaaaaaa"));
}

/* After claims_sort(), claims_range() bisects to exactly the claims of an id (named or malformed,
 * any case); unsorted, it is the whole set; an absent id is an empty range. */
static void test_claims_sorted_range(void **state) {
        const char *root = *state;
        _cleanup_(claims_done) ClaimSet set = {};
        _cleanup_close_ int cfd = -EBADF;
        static const char *const ids[] = { A, B, C };
        size_t first, end;

        /* B's claims: one named in upper case under a file of another name, one malformed */
        assert_int_equal(fixture_write(root, "chats/" A ".1.runtime.json",
                                       "{\"pid\":1,\"session_id\":\"" A "\"}"), 0);
        assert_int_equal(fixture_write(root, "chats/" A ".2.runtime.json",
                                       "{\"pid\":2,\"session_id\":\"" A "\"}"), 0);
        assert_int_equal(fixture_write(root, "chats/zzz.runtime.json",
                                       "{\"pid\":3,\"session_id\":\"BBBBBBBB-0000-4000-8000-000000000002\"}"),
                         0);
        assert_int_equal(fixture_write(root, "chats/" B ".4.runtime.json", "nope"), 0);
        assert_int_equal(fixture_write(root, "chats/" C ".runtime.json",
                                       "{\"pid\":5,\"session_id\":\"" C "\"}"), 0);
        cfd = test_open_dir(root, "chats");
        assert_int_equal(claims_load(&set, cfd), 0);
        assert_int_equal(set.n, 5);

        claims_range(&set, B, &first, &end);
        assert_int_equal(first, 0);
        assert_int_equal(end, 5);
        claims_range(NULL, B, &first, &end);
        assert_int_equal(first, end);

        claims_sort(&set);
        assert_true(set.sorted);
        for (size_t i = 0; i < ELEMENTSOF(ids); i++) {
                size_t want = 0, got = 0;

                for (size_t j = 0; j < set.n; j++)
                        want += claims_match(&set.claims[j], ids[i]);
                claims_range(&set, ids[i], &first, &end);
                for (size_t j = first; j < end; j++) {
                        assert_true(claims_match(&set.claims[j], ids[i]));
                        got++;
                }
                assert_int_equal(got, want);
        }
        claims_range(&set, B, &first, &end);
        assert_int_equal(end - first, 2);
        claims_range(&set, "bbbbbbbb-0000-4000-8000-000000000002", &first, &end);
        assert_int_equal(end - first, 2);
        /* absent ids: before, between and after the others */
        claims_range(&set, "00000000-0000-4000-8000-000000000000", &first, &end);
        assert_int_equal(first, end);
        claims_range(&set, "bbbbbbbc-0000-4000-8000-000000000000", &first, &end);
        assert_int_equal(first, end);
        claims_range(&set, "ffffffff-0000-4000-8000-000000000000", &first, &end);
        assert_int_equal(first, end);
        assert_int_equal(first, set.n);
}

/* An empty chats/ has no claims; a directory that cannot be listed is an error. */
static void test_claims_load_empty_and_error(void **state) {
        const char *root = *state;
        _cleanup_(claims_done) ClaimSet set = {};
        _cleanup_close_ int cfd = test_open_dir(root, "chats");

        assert_int_equal(claims_load(&set, cfd), 0);
        assert_int_equal(set.n, 0);
        assert_true(claims_load(&set, -EBADF) < 0);
        assert_int_equal(set.n, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_claims_names),
                cmocka_unit_test_setup_teardown(test_claims_load, setup, fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_claims_size_limit, setup, fixture_root_teardown),
                cmocka_unit_test(test_claims_match),
                cmocka_unit_test_setup_teardown(test_claims_sorted_range, setup, fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_claims_load_empty_and_error, setup, fixture_root_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
