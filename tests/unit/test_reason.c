/* test_reason.c: the reason renderer (reason.c) on literal verdicts and sessions: every form a
 * reason takes, from the structured fields alone, and the owner reason of every OwnerCause. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "deepcode-store.h"
#include "hygiene.h"
#include "inventory.h"
#include "macro.h"
#include "policy.h"
#include "qwen-store.h"
#include "reason.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define D MSEC_PER_DAY
#define H MSEC_PER_HOUR
#define G (INT64_C(1) << 30)

#define M (INT64_C(1) << 20)

/* A Measure's initializer */
#define AGE(k, m, l) { .kind = MEASURE_AGE, .key = (k), .measured = (m), .limit = (l) }
#define BYTES(k, m, l) { .kind = MEASURE_BYTES, .key = (k), .measured = (m), .limit = (l) }

/* The facts the verdicts below quote beyond their measure */
static VerdictFacts f_tree = { .target = 40 * G };
static VerdictFacts f_free = { .percent = 10 };
static VerdictFacts f_keep = { .age = 3 * D, .min_age = 7 * D, .keep_latest = 5,
                                .restored_ago = 3 * D, .restore_grace = 30 * D };
static VerdictFacts f_recent = { .since_write = H, .min_idle = D };
static VerdictFacts f_recent3 = { .since_write = 3 * H, .min_idle = D };
static VerdictFacts f_future = { .since_write = -2 * H, .min_idle = D };
#define HELD(n) { .kind = MEASURE_COUNT, .measured = (n), .limit = (n) }
static VerdictFacts f_held5 = { .held = HELD(5), .held_by = "max-deletions",
                                .held_rule = "max-age" };
static VerdictFacts f_held2p = { .held = HELD(2), .held_project = true,
                                 .held_by = "max-deletions", .held_rule = "max-size" };
static VerdictFacts f_held_pct = { .held = { .kind = MEASURE_COUNT, .measured = 2, .limit = 4 },
                                   .held_percent = 50, .held_by = "max-deletions-percent",
                                   .held_rule = "max-age" };
static VerdictFacts f_held1_stale = { .held = HELD(1), .held_by = "max-deletions",
                                      .held_rule = "stale-project-min-age",
                                      .fact = "stale project entry: cwd /tmp/x gone" };
static VerdictFacts f_held1_free = { .held = HELD(1), .held_by = "max-deletions",
                                     .held_rule = "keep-free" };
static VerdictFacts f_restore = { .fact = "qgc restore" };
static VerdictFacts f_stale = { .fact = "stale project entry (x)" };

typedef struct ReasonCase {
        const char *name;
        Verdict v;
        Session s;
        const char *want;
} ReasonCase;

static const ReasonCase cases[] = {
        /* a rule selected it */
        { "max-age",
          { .verb = VERB_ARCHIVE, .rule = "max-age", .measure = AGE("max-age", 121 * D, 90 * D) },
          {}, "idle 121d > max-age 90d" },
        { "max-sessions",
          { .verb = VERB_ARCHIVE, .rule = "max-sessions",
            .measure = { .kind = MEASURE_RANK, .key = "max-sessions", .measured = 3, .limit = 2 } },
          {}, "rank 3 > max-sessions 2" },
        { "max-size",
          { .verb = VERB_DELETE, .rule = "max-size",
            .measure = BYTES("max-size", 5 * G + 200 * M, 5 * G) },
          {}, "project 5.1G > max-size 5G" },
        { "archive-max-age",
          { .verb = VERB_DELETE, .rule = "archive-max-age",
            .measure = AGE("archive-max-age", 181 * D, 180 * D) },
          {}, "archived 181d ago > archive-max-age 180d" },
        { "archive-max-size",
          { .verb = VERB_DELETE, .rule = "archive-max-size",
            .measure = BYTES("archive-max-size", 110, 100) },
          {}, "archive 110B > archive-max-size 100B" },
        { "compress-after",
          { .verb = VERB_COMPRESS, .rule = "compress-after",
            .measure = AGE("compress-after", 30 * D, 30 * D) },
          {}, "archived, idle 30d > compress-after 30d" },
        { "tree-max-size",
          { .verb = VERB_DELETE, .rule = "tree-max-size",
            .measure = { .kind = MEASURE_BYTES, .key = "max-size", .measured = 52 * G,
                         .limit = 50 * G },
            .facts = &f_tree },
          {}, "tree 52G > max-size 50G, shrinking to 40G (disk caps delete)" },
        { "keep-free bytes",
          { .verb = VERB_DELETE, .rule = "keep-free", .measure = BYTES("keep-free", 99, 100) },
          {}, "free 99B < keep-free 100B (disk caps delete)" },
        { "keep-free percent",
          { .verb = VERB_DELETE, .rule = "keep-free",
            .measure = { .kind = MEASURE_BYTES, .key = "keep-free", .measured = 90, .limit = 100 },
            .facts = &f_free },
          {}, "free 90B < keep-free 10% (100B) (disk caps delete)" },

        /* nothing selected it */
        { "within max-age",
          { .verb = VERB_KEEP, .rule = "none", .measure = AGE("max-age", 3 * D, 90 * D) },
          { .state = SESSION_ACTIVE }, "idle 3d <= max-age 90d" },
        { "no rule", { .verb = VERB_KEEP, .rule = "none" }, { .state = SESSION_ACTIVE },
          "no rule applies" },
        { "archived", { .verb = VERB_KEEP, .rule = "none" }, { .state = SESSION_ARCHIVED },
          "archived" },
        { "compressed", { .verb = VERB_KEEP, .rule = "none" },
          { .state = SESSION_ARCHIVED, .cold = true }, "archived, compressed" },

        /* keep-class protections, each with its facts, and several at once */
        { "pinned",
          { .verb = VERB_KEEP, .rule = "pinned", .protections = PROT_PINNED,
            .blocked_by = PROT_PINNED, .blocked_verb = VERB_ARCHIVE, .blocked_rule = "max-age",
            .measure = AGE("max-age", 121 * D, 90 * D) },
          { .pinned = true }, "kept: pinned (a rule would select it: archive for idle 121d > max-age 90d)" },
        { "grouped and pins unknown",
          { .verb = VERB_KEEP, .rule = "pinned", .protections = PROT_PINNED,
            .blocked_by = PROT_PINNED, .blocked_verb = VERB_ARCHIVE, .blocked_rule = "max-age",
            .measure = AGE("max-age", 121 * D, 90 * D) },
          { .org_unreadable = true },
          "kept: pins unknown (session-organization.v1.json unreadable) (a rule would select it: "
          "archive for idle 121d > max-age 90d)" },
        { "every keep-class protection",
          { .verb = VERB_KEEP, .rule = "protect",
            .protections = PROT_PROTECT | PROT_MIN_AGE | PROT_PINNED | PROT_TITLED |
                           PROT_SCHEDULED | PROT_WORKTREE | PROT_LATEST | PROT_RESTORED,
            .blocked_by = PROT_PROTECT, .blocked_verb = VERB_DELETE, .blocked_rule = "keep-free",
            .measure = BYTES("keep-free", 99, 100), .rank = 2, .facts = &f_keep },
          { .grouped = true, .n_tasks = 2 },
          "kept: protected project (protect = true), restored 3d ago (restore-grace 30d), "
          "age 3d < min-age 1w, grouped, titled by a person, bound to 2 scheduled tasks, live "
          "worktree, keep-latest 5 (rank 2, newest first) (a rule would select it: delete for "
          "free 99B < keep-free 100B (disk caps delete))" },
        { "restore-grace",
          { .verb = VERB_KEEP, .rule = "restore-grace", .protections = PROT_RESTORED,
            .blocked_by = PROT_RESTORED, .blocked_verb = VERB_ARCHIVE, .blocked_rule = "max-age",
            .measure = AGE("max-age", 121 * D, 90 * D), .facts = &f_keep },
          {},
          "kept: restored 3d ago (restore-grace 30d) (a rule would select it: archive for idle "
          "121d > max-age 90d)" },
        { "tasks held",
          { .verb = VERB_KEEP, .rule = "scheduled", .protections = PROT_SCHEDULED,
            .flags = VERDICT_TASKS_HELD, .blocked_by = PROT_SCHEDULED,
            .blocked_verb = VERB_DELETE, .blocked_rule = "max-age",
            .measure = AGE("max-age", 121 * D, 90 * D) },
          { .n_tasks = 1 },
          "kept: bound to 1 scheduled task, which qgc does not remove (a rule would select it: "
          "delete for idle 121d > max-age 90d)" },

        /* skip-class protections */
        { "unverified, nothing selected",
          { .verb = VERB_SKIP, .rule = "unverified", .protections = PROT_UNVERIFIED,
            .blocked_by = PROT_UNVERIFIED },
          { .owner = OWNER_UNVERIFIED, .owner_cause = OWNER_CAUSE_UNREADABLE,
            .owner_detail = (char *)"empty transcript" },
          "unverified: empty transcript" },
        { "unverified, no check",
          { .verb = VERB_SKIP, .rule = "unverified", .protections = PROT_UNVERIFIED,
            .blocked_by = PROT_UNVERIFIED },
          { .owner = OWNER_UNVERIFIED }, "unverified: ownership not proven" },
        { "unverified by a tree cap",
          { .verb = VERB_SKIP, .rule = "unverified", .protections = PROT_UNVERIFIED,
            .blocked_by = PROT_UNVERIFIED, .blocked_verb = VERB_DELETE,
            .blocked_rule = "keep-free", .measure = BYTES("keep-free", 99, 100) },
          { .owner = OWNER_UNVERIFIED, .owner_cause = OWNER_CAUSE_NO_CWD },
          "kept: unverified: first record has no cwd (a rule would select it: delete for free 99B "
          "< keep-free 100B (disk caps delete))" },
        { "foreign",
          { .verb = VERB_SKIP, .rule = "foreign", .protections = PROT_FOREIGN,
            .blocked_by = PROT_FOREIGN },
          { .owner = OWNER_FOREIGN, .owner_cause = OWNER_CAUSE_FOREIGN,
            .cwd = (char *)"/srv/demo/webapp", .owner_dir = (char *)"-srv-demo-webapp" },
          "foreign: cwd '/srv/demo/webapp' belongs to project directory '-srv-demo-webapp'" },
        { "foreign, no check",
          { .verb = VERB_SKIP, .rule = "foreign", .protections = PROT_FOREIGN,
            .blocked_by = PROT_FOREIGN },
          { .owner = OWNER_FOREIGN, .cwd = (char *)"/x", .project_dir = (char *)"-y" },
          "foreign: cwd /x does not belong to projects/-y" },
        { "conflict",
          { .verb = VERB_SKIP, .rule = "conflict", .protections = PROT_CONFLICT,
            .blocked_by = PROT_CONFLICT },
          { .state = SESSION_CONFLICT }, "in both chats/ and chats/archive/" },
        { "live with its reason",
          { .verb = VERB_SKIP, .rule = "live", .protections = PROT_LIVE, .blocked_by = PROT_LIVE,
            .blocked_verb = VERB_ARCHIVE, .blocked_rule = "max-age",
            .measure = AGE("max-age", 121 * D, 90 * D) },
          { .live = LIVE_CLAIM, .live_reason = (char *)"runtime claim pid 42 alive" },
          "kept: in use: runtime claim pid 42 alive (a rule would select it: archive for idle "
          "121d > max-age 90d)" },
        { "live by its flags, a recent write too",
          { .verb = VERB_SKIP, .rule = "live", .protections = PROT_LIVE, .blocked_by = PROT_LIVE,
            .flags = VERDICT_RECENT_WRITE, .facts = &f_recent },
          { .live = LIVE_LOCK }, "in use: lock,recent" },
        { "a write within min-idle",
          { .verb = VERB_SKIP, .rule = "live", .protections = PROT_LIVE, .blocked_by = PROT_LIVE,
            .flags = VERDICT_RECENT_WRITE, .facts = &f_recent3 },
          {}, "in use: written 3h ago < min-idle 1d" },
        { "a write in the future",
          { .verb = VERB_SKIP, .rule = "live", .protections = PROT_LIVE, .blocked_by = PROT_LIVE,
            .flags = VERDICT_RECENT_WRITE, .facts = &f_future },
          {}, "in use: written 2h in the future" },
        { "title not read",
          { .verb = VERB_SKIP, .rule = "unverified", .protections = PROT_UNVERIFIED,
            .flags = VERDICT_TITLE_UNREAD, .blocked_by = PROT_UNVERIFIED,
            .blocked_verb = VERB_ARCHIVE, .blocked_rule = "max-age",
            .measure = AGE("max-age", 121 * D, 90 * D) },
          { .owner = OWNER_OK, .owner_cause = OWNER_CAUSE_CWD, .cwd = (char *)"/p" },
          "kept: unverified: title not read (a rule would select it: archive for idle 121d > "
          "max-age 90d)" },

        /* the deletion limits */
        { "held back per run",
          { .verb = VERB_SKIP, .rule = "blast-radius", .protections = PROT_BLAST,
            .blocked_by = PROT_BLAST, .blocked_verb = VERB_DELETE, .blocked_rule = "max-age",
            .facts = &f_held5,
            .measure = AGE("max-age", 121 * D, 90 * D) },
          {}, "held back by max-deletions (5 per run; use --force); would delete: idle 121d > "
              "max-age 90d" },
        { "held back in the project",
          { .verb = VERB_SKIP, .rule = "blast-radius", .protections = PROT_BLAST,
            .blocked_by = PROT_BLAST, .blocked_verb = VERB_DELETE, .blocked_rule = "max-size",
            .facts = &f_held2p,
            .measure = BYTES("max-size", 101, 100) },
          {}, "held back by max-deletions (2 per run in this project; use --force); would "
              "delete: project 101B > max-size 100B" },
        { "held back in percent",
          { .verb = VERB_SKIP, .rule = "blast-radius", .protections = PROT_BLAST,
            .blocked_by = PROT_BLAST, .blocked_verb = VERB_DELETE, .blocked_rule = "max-age",
            .facts = &f_held_pct,
            .measure = AGE("max-age", 121 * D, 90 * D) },
          {}, "held back by max-deletions-percent (50% of the project's 4 sessions per run; "
              "use --force); would delete: idle 121d > max-age 90d" },
        { "held back, a stale entry's deletion",
          { .verb = VERB_SKIP, .rule = "blast-radius", .protections = PROT_BLAST,
            .blocked_by = PROT_BLAST, .blocked_verb = VERB_DELETE,
            .blocked_rule = "stale-project-min-age", .facts = &f_held1_stale },
          {}, "held back by max-deletions (1 per run; use --force); would delete: stale "
              "project entry: cwd /tmp/x gone" },
        { "held back, falls back to the archive",
          { .verb = VERB_ARCHIVE, .rule = "max-age", .protections = PROT_BLAST,
            .facts = &f_held1_free,
            .measure = AGE("max-age", 121 * D, 90 * D) },
          {}, "idle 121d > max-age 90d; its keep-free deletion held back by max-deletions (1 per "
              "run; use --force)" },

        /* a fact */
        { "a fact", { .verb = VERB_KEEP, .rule = "restore", .facts = &f_restore }, {},
          "qgc restore" },
};

static void test_reason_every_form(void **state) {
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *got = reason_verdict(&cases[i].v, &cases[i].s, &qwen_store);

                assert_non_null(got);
                if (!streq(got, cases[i].want)) {
                        print_error("case '%s': '%s'\n         want '%s'\n", cases[i].name, got,
                                    cases[i].want);
                        fail();
                }
        }
}

/* A conflict is said in its store's words: Deep Code's has no chats/ (it said Qwen's once). */
static void test_reason_conflict_by_store(void **state) {
        VerdictFacts f = {};
        Verdict v = { .verb = VERB_SKIP, .rule = "conflict", .protections = PROT_CONFLICT,
                      .blocked_by = PROT_CONFLICT, .facts = &f };
        Session s = { .state = SESSION_CONFLICT };
        _cleanup_free_ char *q = reason_verdict(&v, &s, &qwen_store);
        _cleanup_free_ char *d = reason_verdict(&v, &s, &deepcode_store);
        _cleanup_free_ char *none = reason_verdict(&v, &s, NULL);

        (void)state;
        assert_string_equal(q, "in both chats/ and chats/archive/");
        assert_string_equal(d, "both in Deep Code's project and in qgc's archive");
        assert_string_equal(none, "in both its place and the archive");
}

static void test_reason_orphans(void **state) {
        static const struct {
                Verdict v;
                Orphan o;
                const char *want;
        } oc[] = {
                { { .verb = VERB_DELETE, .rule = "orphan",
                    .measure = AGE("orphan-min-age", 40 * D, 30 * D) },
                  { .kind = ORPHAN_FILE_HISTORY },
                  "orphan file-history, no transcript, idle 40d > 30d" },
                { { .verb = VERB_KEEP, .rule = "none",
                    .measure = AGE("orphan-min-age", 29 * D, 30 * D) },
                  { .kind = ORPHAN_EMPTY_PROJECT }, "empty project directory, idle 29d <= "
                                                    "orphan-min-age 30d" },
                { { .verb = VERB_KEEP, .rule = "none",
                    .measure = AGE("orphan-min-age", 29 * D, MSEC_INFINITY) },
                  { .kind = ORPHAN_SUBAGENTS }, "orphan subagents, no transcript (orphan-min-age "
                                                "off)" },
                { { .verb = VERB_KEEP, .rule = "protect", .protections = PROT_PROTECT,
                    .blocked_by = PROT_PROTECT, .measure = AGE("orphan-min-age", 40 * D, 30 * D) },
                  { .kind = ORPHAN_SUBAGENTS },
                  "orphan subagents, no transcript, protected project (protect = true)" },
                { { .verb = VERB_DELETE, .rule = "tool-results-max-age",
                    .measure = AGE("tool-results-max-age", 8 * D, 7 * D) },
                  { .kind = ORPHAN_TOOL_RESULT }, NULL /* hygiene_what()'s words */ },
                { { .verb = VERB_KEEP, .rule = "none", .facts = &f_stale },
                  { .kind = ORPHAN_STALE_PROJECT }, "stale project entry (x)" },
                /* a Deep Code orphan, in its store's words */
                { { .verb = VERB_DELETE, .rule = "compact-min-idle",
                    .measure = AGE("compact-min-idle", 3 * D, 1 * D) },
                  { .kind = ORPHAN_DC_CHECKPOINTS },
                  "Deep Code checkpoint repository, compaction frees about this, idle 3d > 1d" },
                { { .verb = VERB_KEEP, .rule = "none", .measure = { .limit = MSEC_INFINITY } },
                  { .kind = ORPHAN_DC_ERROR_LOG },
                  "Deep Code logs/error.log over 64M: reported, never trimmed" },
        };
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(oc); i++) {
                bool dc = oc[i].o.kind == ORPHAN_DC_CHECKPOINTS ||
                          oc[i].o.kind == ORPHAN_DC_ERROR_LOG;
                _cleanup_free_ char *got =
                        reason_orphan(&oc[i].v, &oc[i].o, dc ? &deepcode_store : &qwen_store);
                _cleanup_free_ char *want = NULL;

                assert_non_null(got);
                if (!oc[i].want) {
                        want = util_strprintf("%s, idle 8d > 1w", hygiene_what(oc[i].o.kind));
                        assert_non_null(want);
                }
                assert_string_equal(got, oc[i].want ?: want);
        }
}

static void test_reason_owner(void **state) {
        static const struct {
                Session s;
                const char *want;
        } oc[] = {
                { {}, NULL },
                { { .owner_cause = OWNER_CAUSE_UNREADABLE }, "unreadable" },
                { { .owner_cause = OWNER_CAUSE_UNREADABLE,
                    .owner_detail = (char *)"not a regular file (fifo)" },
                  "not a regular file (fifo)" },
                { { .owner_cause = OWNER_CAUSE_NO_SESSION_ID }, "first record has no sessionId" },
                { { .owner_cause = OWNER_CAUSE_ID_MISMATCH,
                    .owner_detail = (char *)"12345678-1234-4234-8234-123456789abc" },
                  "first record's sessionId '12345678-1234-4234-8234-123456789abc' differs from "
                  "the file name" },
                { { .owner_cause = OWNER_CAUSE_NO_CWD }, "first record has no cwd" },
                { { .owner_cause = OWNER_CAUSE_CWD }, "cwd matches the project directory" },
                { { .owner_cause = OWNER_CAUSE_WORKTREE, .owner_dir = (char *)"/srv/demo/webapp" },
                  "worktree of '/srv/demo/webapp'" },
                { { .owner_cause = OWNER_CAUSE_CLAIM,
                    .owner_detail = (char *)"c7bab6d3-4d35-4ebb-b856-81c884008a1e.runtime.json",
                    .owner_dir = (char *)"/srv/demo/webapp" },
                  "runtime claim 'c7bab6d3-4d35-4ebb-b856-81c884008a1e.runtime.json' (work_dir "
                  "'/srv/demo/webapp')" },
                { { .owner_cause = OWNER_CAUSE_FOREIGN, .cwd = (char *)"/srv/demo/webapp",
                    .owner_dir = (char *)"-srv-demo-webapp" },
                  "cwd '/srv/demo/webapp' belongs to project directory '-srv-demo-webapp'" },
        };
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(oc); i++) {
                _cleanup_free_ char *got = NULL;

                assert_int_equal(reason_owner(&oc[i].s, &got), 0);
                if (!oc[i].want)
                        assert_null(got);
                else
                        assert_string_equal(got, oc[i].want);
        }
}

static void test_reason_format_limit(void **state) {
        char buf[32];
        (void)state;
        assert_string_equal(reason_format_limit(buf, sizeof buf, 5 * G), "5G");
        assert_string_equal(reason_format_limit(buf, sizeof buf, 1536 * M), "1536M");
        assert_string_equal(reason_format_limit(buf, sizeof buf, 100), "100B");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_reason_every_form),
                cmocka_unit_test(test_reason_conflict_by_store),
                cmocka_unit_test(test_reason_orphans),
                cmocka_unit_test(test_reason_owner),
                cmocka_unit_test(test_reason_format_limit),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
