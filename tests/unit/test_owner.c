/* test_owner.c: owner.c's ownership proof from a transcript's first record, pure:
 * owner_test_check_claims()/owner_test_check_cached() on a parsed head and claims built in
 * memory. Each cause of OwnerCause with its facts (owner_detail, owner_dir), the cwd and hash
 * kept, the order of the three proofs (cwd, worktree root, runtime claim), and the cache that
 * must not carry a sanitize result from one project directory to another. */
#include "autoconf.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "claims.h"
#include "inventory.h"
#include "macro.h"
#include "owner.h"
#include "owner-test.h"
#include "record.h"

#define ID "c7bab6d3-4d35-4ebb-b856-81c884008a1e"
/* sha256("/srv/app"), lower-case hex (getProjectHash) */
#define SRV_APP_HASH "dae668e4084f07b6cb946fb2809f0f82649266bce36b42044235bb9026afa80d"

static Session session_new(void) {
        Session s = { .id = ID };
        return s;
}

static HeadInfo head(const char *sid, const char *cwd) {
        return (HeadInfo){ .session_id = (char *)sid, .cwd = (char *)cwd };
}

/* A claim as claims_add() leaves it (strings owned by the set). */
static void claim_push(ClaimSet *set, const char *file, const char *sid, const char *work_dir,
                       bool malformed) {
        set->claims = realloc(set->claims, (set->n + 1) * sizeof(RuntimeClaim));
        assert_non_null(set->claims);
        set->claims[set->n++] = (RuntimeClaim){
                .file = strdup(file),
                .session_id = sid ? strdup(sid) : NULL,
                .work_dir = work_dir ? strdup(work_dir) : NULL,
                .pid = 1,
                .malformed = malformed,
        };
        set->alloc = set->n;
}

/* No head: unverified, the reader's words kept as the fact; nothing else decided. */
static void test_owner_no_head_is_unreadable(void **state) {
        Session s = session_new();

        (void)state;
        assert_int_equal(owner_test_check_claims(&s, NULL, "empty transcript", "-srv-app", NULL), 0);
        assert_int_equal(s.owner, OWNER_UNVERIFIED);
        assert_int_equal(s.owner_cause, OWNER_CAUSE_UNREADABLE);
        assert_string_equal(s.owner_detail, "empty transcript");
        assert_null(s.owner_dir);
        assert_null(s.cwd);
        assert_null(s.hash);
        inventory_session_done(&s);

        /* owner_test_set_unreadable() takes the string */
        s = session_new();
        owner_test_set_unreadable(&s, strdup("Permission denied"));
        assert_int_equal(s.owner, OWNER_UNVERIFIED);
        assert_int_equal(s.owner_cause, OWNER_CAUSE_UNREADABLE);
        assert_string_equal(s.owner_detail, "Permission denied");
        inventory_session_done(&s);
}

/* A first record without a string sessionId proves nothing, even when its cwd is the
 * directory's; the cwd and its hash are still recorded. */
static void test_owner_no_session_id(void **state) {
        Session s = session_new();
        HeadInfo h = head(NULL, "/srv/app");

        (void)state;
        assert_int_equal(owner_test_check_claims(&s, &h, NULL, "-srv-app", NULL), 0);
        assert_int_equal(s.owner, OWNER_UNVERIFIED);
        assert_int_equal(s.owner_cause, OWNER_CAUSE_NO_SESSION_ID);
        assert_string_equal(s.cwd, "/srv/app");
        assert_string_equal(s.hash, SRV_APP_HASH);
        inventory_session_done(&s);
}

/* sessionId must equal the file's id ignoring ASCII case; another id is unverified, with up to
 * 64 bytes of it quoted as the fact. */
static void test_owner_session_id(void **state) {
        char longid[200];
        Session s = session_new();
        HeadInfo h = head("C7BAB6D3-4D35-4EBB-B856-81C884008A1E", "/srv/app");

        (void)state;
        assert_int_equal(owner_test_check_claims(&s, &h, NULL, "-srv-app", NULL), 0);
        assert_int_equal(s.owner, OWNER_OK);
        assert_int_equal(s.owner_cause, OWNER_CAUSE_CWD);
        inventory_session_done(&s);

        s = session_new();
        h = head("c7bab6d3-4d35-4ebb-b856-81c884008a1f", "/srv/app");
        assert_int_equal(owner_test_check_claims(&s, &h, NULL, "-srv-app", NULL), 0);
        assert_int_equal(s.owner, OWNER_UNVERIFIED);
        assert_int_equal(s.owner_cause, OWNER_CAUSE_ID_MISMATCH);
        assert_string_equal(s.owner_detail, "c7bab6d3-4d35-4ebb-b856-81c884008a1f");
        /* the id test comes before cwd's: cwd and hash are still kept */
        assert_string_equal(s.cwd, "/srv/app");
        inventory_session_done(&s);

        /* a prefix of the id is not the id */
        s = session_new();
        h = head("c7bab6d3-4d35-4ebb-b856", "/srv/app");
        assert_int_equal(owner_test_check_claims(&s, &h, NULL, "-srv-app", NULL), 0);
        assert_int_equal(s.owner_cause, OWNER_CAUSE_ID_MISMATCH);
        inventory_session_done(&s);

        /* a long sessionId is quoted up to 64 bytes */
        memset(longid, 'a', sizeof longid - 1);
        longid[sizeof longid - 1] = 0;
        s = session_new();
        h = head(longid, "/srv/app");
        assert_int_equal(owner_test_check_claims(&s, &h, NULL, "-srv-app", NULL), 0);
        assert_int_equal(s.owner_cause, OWNER_CAUSE_ID_MISMATCH);
        assert_int_equal(strlen(s.owner_detail), 64);
        assert_true(strneq(s.owner_detail, longid, 64));
        inventory_session_done(&s);
}

/* A first record with the right id and no cwd is unverified: never decided from the directory
 * name alone. */
static void test_owner_no_cwd(void **state) {
        Session s = session_new();
        HeadInfo h = head(ID, NULL);

        (void)state;
        assert_int_equal(owner_test_check_claims(&s, &h, NULL, "-srv-app", NULL), 0);
        assert_int_equal(s.owner, OWNER_UNVERIFIED);
        assert_int_equal(s.owner_cause, OWNER_CAUSE_NO_CWD);
        assert_null(s.cwd);
        assert_null(s.hash);
        inventory_session_done(&s);
}

/* sanitizeCwd(cwd) is the directory: ours. Qwen's collisions (/a/b-c, /a/b/c, /a/b.c all give
 * -a-b-c, §2.1) all belong; a cwd that sanitizes elsewhere is foreign, the directory it does
 * sanitize to being the fact. */
static void test_owner_cwd(void **state) {
        static const char *const same[] = { "/a/b-c", "/a/b/c", "/a/b.c", "/a/b c" };
        Session s;
        HeadInfo h;

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(same); i++) {
                s = session_new();
                h = head(ID, same[i]);
                assert_int_equal(owner_test_check_claims(&s, &h, NULL, "-a-b-c", NULL), 0);
                assert_int_equal(s.owner, OWNER_OK);
                assert_int_equal(s.owner_cause, OWNER_CAUSE_CWD);
                assert_null(s.owner_detail);
                assert_null(s.owner_dir);
                assert_string_equal(s.cwd, same[i]);
                inventory_session_done(&s);
        }

        s = session_new();
        h = head(ID, "/srv/other");
        assert_int_equal(owner_test_check_claims(&s, &h, NULL, "-srv-app", NULL), 0);
        assert_int_equal(s.owner, OWNER_FOREIGN);
        assert_int_equal(s.owner_cause, OWNER_CAUSE_FOREIGN);
        assert_string_equal(s.owner_dir, "-srv-other");
        assert_string_equal(s.cwd, "/srv/other");
        inventory_session_done(&s);

        /* one UTF-16 unit per code point: é is one '-', an astral character two */
        s = session_new();
        h = head(ID, "/x/caf\xc3\xa9/\xf0\x9f\x98\x80");
        assert_int_equal(owner_test_check_claims(&s, &h, NULL, "-x-caf----", NULL), 0);
        assert_int_equal(s.owner, OWNER_OK);
        inventory_session_done(&s);
}

/* A worktree: the part of cwd before the LAST "/.qwen/worktrees/" sanitizes to the directory. */
static void test_owner_worktree(void **state) {
        Session s = session_new();
        HeadInfo h = head(ID, "/srv/app/.qwen/worktrees/feature-x");

        (void)state;
        assert_int_equal(owner_test_check_claims(&s, &h, NULL, "-srv-app", NULL), 0);
        assert_int_equal(s.owner, OWNER_WORKTREE);
        assert_int_equal(s.owner_cause, OWNER_CAUSE_WORKTREE);
        assert_string_equal(s.owner_dir, "/srv/app");
        /* the hash is still the cwd's own */
        assert_string_equal(s.cwd, "/srv/app/.qwen/worktrees/feature-x");
        assert_string_not_equal(s.hash, SRV_APP_HASH);
        inventory_session_done(&s);

        /* nested: the last occurrence counts, so the outer root does not own it */
        s = session_new();
        h = head(ID, "/srv/app/.qwen/worktrees/a/.qwen/worktrees/b");
        assert_int_equal(owner_test_check_claims(&s, &h, NULL, "-srv-app", NULL), 0);
        assert_int_equal(s.owner, OWNER_FOREIGN);
        inventory_session_done(&s);
        s = session_new();
        assert_int_equal(owner_test_check_claims(&s, &h, NULL, "-srv-app--qwen-worktrees-a", NULL), 0);
        assert_int_equal(s.owner, OWNER_WORKTREE);
        assert_string_equal(s.owner_dir, "/srv/app/.qwen/worktrees/a");
        inventory_session_done(&s);

        /* "/.qwen/worktrees" without the trailing slash is no worktree */
        s = session_new();
        h = head(ID, "/srv/app/.qwen/worktrees");
        assert_int_equal(owner_test_check_claims(&s, &h, NULL, "-srv-app", NULL), 0);
        assert_int_equal(s.owner, OWNER_FOREIGN);
        inventory_session_done(&s);
}

/* A runtime claim in chats/ vouches (a /cd-migrated session): its session_id names the session
 * (case ignored) and its work_dir sanitizes to the directory. Malformed claims, claims of other
 * sessions and claims for other directories vouch for nothing. */
static void test_owner_claim(void **state) {
        _cleanup_(claims_done) ClaimSet set = {};
        Session s = session_new();
        HeadInfo h = head(ID, "/srv/old");

        (void)state;
        claim_push(&set, ID ".runtime.json", NULL, "/srv/app", true);
        claim_push(&set, "d0000000-0000-4000-8000-000000000000.runtime.json",
                   "d0000000-0000-4000-8000-000000000000", "/srv/app", false);
        claim_push(&set, ID ".41.runtime.json", ID, "/srv/elsewhere", false);
        claim_push(&set, ID ".42.runtime.json", ID, NULL, false);
        assert_int_equal(owner_test_check_claims(&s, &h, NULL, "-srv-app", &set), 0);
        assert_int_equal(s.owner, OWNER_FOREIGN);
        assert_int_equal(s.owner_cause, OWNER_CAUSE_FOREIGN);
        assert_string_equal(s.owner_dir, "-srv-old");
        inventory_session_done(&s);

        claim_push(&set, ID ".43.runtime.json", "C7BAB6D3-4D35-4EBB-B856-81C884008A1E",
                   "/srv/app", false);
        for (int sorted = 0; sorted < 2; sorted++) {
                if (sorted)
                        claims_sort(&set);
                s = session_new();
                assert_int_equal(owner_test_check_claims(&s, &h, NULL, "-srv-app", &set), 0);
                assert_int_equal(s.owner, OWNER_CLAIM);
                assert_int_equal(s.owner_cause, OWNER_CAUSE_CLAIM);
                assert_string_equal(s.owner_detail, ID ".43.runtime.json");
                assert_string_equal(s.owner_dir, "/srv/app");
                /* the first record's cwd is what is kept */
                assert_string_equal(s.cwd, "/srv/old");
                inventory_session_done(&s);
        }

        /* a claim does not rescue a head that failed the id test */
        s = session_new();
        h = head("d0000000-0000-4000-8000-000000000000", "/srv/old");
        assert_int_equal(owner_test_check_claims(&s, &h, NULL, "-srv-app", &set), 0);
        assert_int_equal(s.owner, OWNER_UNVERIFIED);
        assert_int_equal(s.owner_cause, OWNER_CAUSE_ID_MISMATCH);
        inventory_session_done(&s);

        /* the cwd proof wins over a claim */
        s = session_new();
        h = head(ID, "/srv/app");
        assert_int_equal(owner_test_check_claims(&s, &h, NULL, "-srv-app", &set), 0);
        assert_int_equal(s.owner, OWNER_OK);
        assert_null(s.owner_detail);
        inventory_session_done(&s);
}

/* The cache remembers one cwd's hash and sanitize result for ONE project directory: the same cwd
 * met in another directory is tested again. */
static void test_owner_cache(void **state) {
        _cleanup_(owner_cache_done) OwnerCache cache = {};
        Session s = session_new();
        HeadInfo h = head(ID, "/srv/app");

        (void)state;
        assert_int_equal(owner_test_check_cached(&s, &h, NULL, "-srv-app", NULL, &cache), 0);
        assert_int_equal(s.owner, OWNER_OK);
        assert_string_equal(s.hash, SRV_APP_HASH);
        assert_int_equal(cache.sanitizes, 1);
        inventory_session_done(&s);

        s = session_new();
        assert_int_equal(owner_test_check_cached(&s, &h, NULL, "-srv-other", NULL, &cache), 0);
        assert_int_equal(s.owner, OWNER_FOREIGN);
        assert_string_equal(s.hash, SRV_APP_HASH);
        inventory_session_done(&s);

        /* and back, and with another cwd */
        s = session_new();
        assert_int_equal(owner_test_check_cached(&s, &h, NULL, "-srv-app", NULL, &cache), 0);
        assert_int_equal(s.owner, OWNER_OK);
        inventory_session_done(&s);
        s = session_new();
        h = head(ID, "/srv/other");
        assert_int_equal(owner_test_check_cached(&s, &h, NULL, "-srv-app", NULL, &cache), 0);
        assert_int_equal(s.owner, OWNER_FOREIGN);
        assert_string_not_equal(s.hash, SRV_APP_HASH);
        inventory_session_done(&s);
}

/* A second check of the same Session replaces the facts of the first. */
static void test_owner_recheck_replaces_facts(void **state) {
        Session s = session_new();
        HeadInfo h = head(ID, "/srv/other");

        (void)state;
        assert_int_equal(owner_test_check_claims(&s, &h, NULL, "-srv-app", NULL), 0);
        assert_int_equal(s.owner, OWNER_FOREIGN);
        assert_non_null(s.owner_dir);
        h = head(ID, "/srv/app");
        assert_int_equal(owner_test_check_claims(&s, &h, NULL, "-srv-app", NULL), 0);
        assert_int_equal(s.owner, OWNER_OK);
        assert_int_equal(s.owner_cause, OWNER_CAUSE_CWD);
        assert_null(s.owner_dir);
        assert_null(s.owner_detail);
        assert_string_equal(s.cwd, "/srv/app");
        assert_string_equal(s.hash, SRV_APP_HASH);
        inventory_session_done(&s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_owner_no_head_is_unreadable),
                cmocka_unit_test(test_owner_no_session_id),
                cmocka_unit_test(test_owner_session_id),
                cmocka_unit_test(test_owner_no_cwd),
                cmocka_unit_test(test_owner_cwd),
                cmocka_unit_test(test_owner_worktree),
                cmocka_unit_test(test_owner_claim),
                cmocka_unit_test(test_owner_cache),
                cmocka_unit_test(test_owner_recheck_replaces_facts),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
