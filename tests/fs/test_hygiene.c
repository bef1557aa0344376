/* test_hygiene.c: the tree hygiene kinds (hygiene.h) and the byte accounting of qgc status
 * (tree-size.h): the classification table, the keys, and the guards the executor re-checks
 * between the scan and the removal (a file rewritten or replaced, a transcript that appears,
 * a write inside a stale tmp/<hash>/, a lock that appears, a file already gone). */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "fixture.h"
#include "fs.h"
#include "hygiene.h"
#include "hygiene-reclaim.h"
#include "inventory.h"
#include "macro.h"
#include "policy.h"
#include "reason.h"
#include "qwen-store.h"
#include "roots.h"
#include "scan.h"
#include "tree-size.h"
#include "util.h"
#include "config-load.c" /* its static functions are tested here */

/* Apply a configuration text as config_load_file() applies a file's, name labelling messages */
static int config_load_string(Config *c, const char *text, const char *name, ConfigErrors *errs) {
        return config_load_apply(c, name ? name : "<string>", text, strlen(text), NULL,
                                 c->n_files == 0, errs);
}

#define H64(c) c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c
#define H_GONE H64("e")
#define ORPH "0c0ffee0-1234-4abc-8def-0123456789ab"
#define DAY 86400

/* ------------------------------------------------------------------ classification */

static void test_treesize_classify_table(void **state) {
        static const struct {
                const char *path;
                TreeKind want;
        } table[] = {
                { "projects/-p/chats/aefd2a51-f2fc-4eed-a29c-91292bb022bf.jsonl",
                  TREE_KIND_SESSIONS },
                { "projects/-p/chats/aefd2a51-f2fc-4eed-a29c-91292bb022bf.runtime.json",
                  TREE_KIND_SESSIONS },
                { "projects/-p/chats/aefd2a51-f2fc-4eed-a29c-91292bb022bf.4242.runtime.json",
                  TREE_KIND_SESSIONS },
                { "projects/-p/chats/.aefd2a51-f2fc-4eed-a29c-91292bb022bf.archive.tmp",
                  TREE_KIND_SESSIONS },
                { "projects/-p/chats/notes.txt", TREE_KIND_UNKNOWN },
                { "projects/-p/chats/sub/x.jsonl", TREE_KIND_UNKNOWN },
                { "projects/-p/chats/archive/aefd2a51-f2fc-4eed-a29c-91292bb022bf.jsonl",
                  TREE_KIND_ARCHIVE },
                { "projects/-p/session-organization.v1.json", TREE_KIND_SESSIONS },
                { "projects/-p/.qwen-orphan-since", TREE_KIND_SESSIONS },
                { "projects/-p/subagents/x/agent-1.jsonl", TREE_KIND_SUBAGENTS },
                { "projects/-p/workflows/generated/review/x/a.sh", TREE_KIND_WORKFLOWS },
                { "projects/-p/memory/MEMORY.md", TREE_KIND_STATE },
                { "projects/-p/meta.json", TREE_KIND_STATE },
                { "projects/-p/other.json", TREE_KIND_UNKNOWN },
                { "projects/stray", TREE_KIND_UNKNOWN },
                { "file-history/x/abc@v1", TREE_KIND_FILE_HISTORY },
                { "file-history", TREE_KIND_UNKNOWN },
                { "tmp/" H_GONE "/tool-results/call.txt", TREE_KIND_TOOL_RESULTS },
                { "tmp/" H_GONE "/run_shell.output", TREE_KIND_TOOL_RESULTS },
                { "tmp/" H_GONE "/logs.json", TREE_KIND_LOGS },
                { "tmp/" H_GONE "/shell_history", TREE_KIND_LOGS },
                { "tmp/" H_GONE "/chats/session-2025-01-01T00-00-abcd1234.json", TREE_KIND_LEGACY },
                { "tmp/" H_GONE "/checkpoint-tag.json", TREE_KIND_LEGACY },
                { "tmp/" H_GONE "/checkpoint.json", TREE_KIND_LEGACY },
                { "tmp/" H_GONE "/checkpoints/x", TREE_KIND_STATE },
                { "tmp/" H_GONE "/scheduled_tasks.json", TREE_KIND_STATE },
                { "tmp/" H_GONE "/mystery", TREE_KIND_UNKNOWN },
                { "tmp/" H_GONE "/logs.json/x", TREE_KIND_UNKNOWN },
                { "tmp/ABC/logs.json", TREE_KIND_UNKNOWN },
                { "tmp/session-writer-locks/x.lock", TREE_KIND_STATE },
                { "debug/" ORPH ".txt", TREE_KIND_LOGS },
                { "debug/latest", TREE_KIND_LOGS },
                { "usage_record.jsonl", TREE_KIND_USAGE },
                { "usage/token-usage-2026-11.jsonl", TREE_KIND_USAGE },
                { "settings.json", TREE_KIND_STATE },
                { "plans/" ORPH ".md", TREE_KIND_STATE },
                { "sessions/8887.json", TREE_KIND_STATE },
                { ".openai-logs-cleanup-5a56f9675f33529e", TREE_KIND_STATE },
                { "stray-dir/blob.bin", TREE_KIND_UNKNOWN },
                /* qgc's own (issue 24.12f: the lock was unknown) */
                { ".qgc.lock", TREE_KIND_QGC },
                { ".qgc/pending/" ORPH ".pending", TREE_KIND_QGC },
                { ".usage_record.jsonl.qgc-tmp", TREE_KIND_QGC },
                { "projects/-p/chats/.logs.json.qgc-tmp", TREE_KIND_QGC },
                { "tmp/" H_GONE "/.logs.json.qgc-tmp", TREE_KIND_QGC },
                { ".qgc.lock/x", TREE_KIND_UNKNOWN },
                { ".qgc", TREE_KIND_UNKNOWN },
                { "projects/-p/chats/x.qgc-tmp", TREE_KIND_UNKNOWN },
                { "", TREE_KIND_UNKNOWN },
        };

        (void)state;
        /* each path the only file of a tree of its own, measured (tree_size_measure()): the file
         * counts in its kind; "" is the tree's root, a directory, never a file of a kind */
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *root = NULL;
                Tree t = {};
                StoreSize ts;
                TreeKind k = _TREE_KIND_INVALID;

                assert_int_equal(fixture_new(&root), 0);
                if (table[i].path[0])
                        assert_int_equal(fixture_write(root, table[i].path, "x"), 0);
                t.runtime_dir = t.global_dir = root;
                assert_int_equal(tree_size_measure(&t, &ts), 0);
                for (TreeKind j = 0; j < _TREE_KIND_MAX; j++)
                        if (j != TREE_KIND_DIRS && ts.files[j] > 0) {
                                assert_int_equal(ts.files[j], 1);
                                k = j;
                        }
                if (!table[i].path[0]) {
                        /* the root: one directory, no file of any kind */
                        assert_int_equal(k, _TREE_KIND_INVALID);
                        assert_int_equal(ts.files[TREE_KIND_DIRS], 1);
                        k = table[i].want;
                }
                if (k != table[i].want)
                        print_error("%s: %s, want %s\n", table[i].path,
                                    k < 0 ? "none" : tree_size_kind_to_string(k),
                                    tree_size_kind_to_string(table[i].want));
                assert_int_equal(k, table[i].want);
                store_size_done(&ts);
                root = fixture_free(root);
        }
}

/* ------------------------------------------------------------------ keys */

static void test_hygiene_keys_default_off(void **state) {
        Config c;
        ConfigErrors e = {};

        (void)state;
        assert_int_equal(config_init_default(&c), 0);
        assert_int_equal(hygiene_need(&c.defaults), 0u);
        assert_int_equal(config_load_string(&c,
                                             "defaults = { tool-results-max-age = \"1d\"; "
                                             "legacy-max-age = \"30d\"; };",
                                             "t.conf", &e),
                         0);
        assert_int_equal(hygiene_need(&c.defaults),
                         (1u << ORPHAN_TOOL_RESULT) | (1u << ORPHAN_LEGACY));
        config_done(&c);
        config_errors_done(&e);

        /* never more eager than Qwen's own 24 h */
        assert_int_equal(config_init_default(&c), 0);
        assert_int_equal(config_load_string(&c, "defaults = { tool-results-max-age = \"1h\"; };",
                                             "t.conf", &e),
                         -EINVAL);
        config_done(&c);
        config_errors_done(&e);
}

/* ------------------------------------------------------------------ policy */

/* Each hygiene kind is decided by its own key: older than the key goes (rule = the key), younger
 * or equal stays, "off" keeps; a forecast clock (--now) never ages an item past the real one. */
static void test_hygiene_policy_table(void **state) {
        static const struct {
                OrphanKind kind;
                int64_t age_h;      /* by the real clock */
                int64_t forecast_h; /* --now this far past the real clock */
                const char *conf;
                Verb want;
                const char *rule, *reason;
        } table[] = {
                { ORPHAN_TOOL_RESULT, 25, 0, "tool-results-max-age = \"1d\";", VERB_DELETE,
                  "tool-results-max-age", "tool result (Qwen removes them after 24h), idle" },
                { ORPHAN_TOOL_RESULT, 23, 0, "tool-results-max-age = \"1d\";", VERB_KEEP, "none",
                  "<= tool-results-max-age 1d" },
                { ORPHAN_TOOL_RESULT, 2, 72, "tool-results-max-age = \"1d\";", VERB_KEEP, "none",
                  "<= tool-results-max-age 1d" },
                { ORPHAN_TOOL_RESULT, 999, 0, "", VERB_KEEP, "none", "(tool-results-max-age off)" },
                { ORPHAN_TMP_PROJECT, 49, 0, "stale-tmp-min-age = \"2d\";", VERB_DELETE,
                  "stale-tmp-min-age", "no session left" },
                { ORPHAN_TMP_PROJECT, 47, 0, "stale-tmp-min-age = \"2d\";", VERB_KEEP, "none",
                  "<= stale-tmp-min-age 2d" },
                { ORPHAN_DEBUG_LOG, 30, 0, "debug-plans-min-age = \"1d\";", VERB_DELETE,
                  "debug-plans-min-age", "debug log, no transcript" },
                { ORPHAN_PLAN, 30, 0, "debug-plans-min-age = \"1d\";", VERB_DELETE,
                  "debug-plans-min-age", "plan file, no transcript" },
                { ORPHAN_PLAN, 30, 0, "orphan-min-age = \"1h\";", VERB_KEEP, "none",
                  "(debug-plans-min-age off)" },
                { ORPHAN_LEGACY, 24 * 31, 0, "legacy-max-age = \"30d\";", VERB_DELETE,
                  "legacy-max-age", "legacy (Qwen <= 0.1)" },
                { ORPHAN_LEGACY, 24 * 29, 0, "legacy-max-age = \"30d\";", VERB_KEEP, "none",
                  "<= legacy-max-age 30d" },
                /* the key of one kind does not act on another */
                { ORPHAN_FILE_HISTORY, 24 * 31, 0,
                  "legacy-max-age = \"1d\"; orphan-min-age = \"off\";", VERB_KEEP, "none",
                  "(orphan-min-age off)" },
        };
        const msec_t real = 1796000000000;

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(inventory_freep) Inventory *inv = NULL;
                _cleanup_(policy_verdicts_freep) Verdicts *v = NULL;
                _cleanup_free_ char *text = util_strprintf("defaults = { %s };", table[i].conf);
                _cleanup_free_ char *why = NULL;
                PolicyOptions po = { .real_now = real };
                ConfigErrors e = {};
                Config c;
                Tree t = { .runtime_dir = strdup("/q"), .global_dir = strdup("/q") };
                Orphan o = { .kind = table[i].kind, .project_dir = strdup("tmp/x"),
                             .name = strdup("f"), .bytes = 10,
                             .mtime = real - table[i].age_h * 3600 * 1000 };

                print_message("  case %zu\n", i);
                assert_non_null(text);
                assert_int_equal(config_init_default(&c), 0);
                assert_int_equal(config_load_string(&c, text, "t.conf", &e), 0);
                assert_int_equal(inventory_new(&inv), 0);
                assert_int_equal(inventory_add_tree(inv, &t, NULL), 0);
                assert_int_equal(inventory_add_orphan(inv, &o), 0);
                assert_int_equal(policy_evaluate(inv, &c, real + table[i].forecast_h * 3600 * 1000,
                                                 &po, &v),
                                 0);
                why = reason_orphan(&v->orphans[0], &inv->orphans[0], &qwen_store);
                assert_non_null(why);
                if (v->orphans[0].verb != table[i].want || !strstr(why, table[i].reason))
                        print_error("case %zu: %s %s '%s'\n", i, policy_verb_to_string(v->orphans[0].verb),
                                    v->orphans[0].rule, why);
                assert_int_equal(v->orphans[0].verb, table[i].want);
                assert_string_equal(v->orphans[0].rule, table[i].rule);
                assert_non_null(strstr(why, table[i].reason));
                config_done(&c);
                config_errors_done(&e);
        }
}

/* The stale-project rule as a table (pure): the marker and its wait, the guards of PR #9110 (a
 * live or pinned session, something unknown inside, a recent write, a cwd that exists again),
 * the deletion limits; when the entry goes, its session goes by the same rule. */
static void test_hygiene_stale_policy_table(void **state) {
        static const struct {
                int64_t marker_h;  /* marker age; -1: no marker */
                int64_t files_h;   /* newest file inside */
                const char *why;   /* what the scan found that keeps it */
                bool cwd_back, pinned, live, force;
                Verb want;
                int mark;
                const char *reason;
                Verb want_session;
                bool young_session; /* born a day ago (< min-age 3d) */
        } table[] = {
                { -1, 48, NULL, false, false, false, true, VERB_KEEP, 1, "would mark it", VERB_KEEP, false },
                { 23, 48, NULL, false, false, false, true, VERB_KEEP, 0, "marked 23h ago <= stale-project-min-age 1d", VERB_KEEP, false },
                { 25, 48, NULL, false, false, false, true, VERB_DELETE, 0, "marked 25h ago > 1d", VERB_DELETE, false },
                { 25, 48, NULL, false, true, false, true, VERB_KEEP, 0, "(pinned)", VERB_KEEP, false },
                { 25, 48, NULL, false, false, true, true, VERB_KEEP, 0, "(live: ", VERB_SKIP, false },
                /* min-age: a session younger is never touched, whatever the rule */
                { 25, 48, NULL, false, false, false, true, VERB_KEEP, 0, "(min-age)", VERB_KEEP,
                  true },
                { 25, 2, NULL, false, false, false, true, VERB_KEEP, 0, "a file written 2h ago", VERB_KEEP, false },
                { -1, 2, NULL, false, false, false, true, VERB_KEEP, 0, "a file written 2h ago", VERB_KEEP, false },
                { 25, 48, "an entry qgc does not know: memory", false, false, false, true, VERB_KEEP, 0,
                  "kept: an entry qgc does not know: memory", VERB_KEEP, false },
                { 25, 48, "a recorded cwd exists: /tmp/x", true, false, false, true, VERB_KEEP, -1,
                  "would remove its mark", VERB_KEEP, false },
                { -1, 48, "a recorded cwd exists: /tmp/x", true, false, false, true, VERB_KEEP, 0,
                  "no longer stale", VERB_KEEP, false },
                /* max-deletions-percent 50 of one session holds it back: the entry waits */
                { 25, 48, NULL, false, false, false, false, VERB_KEEP, 0, "held back", VERB_SKIP, false },
        };
        const msec_t real = 1796000000000, H = 3600 * 1000;

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(inventory_freep) Inventory *inv = NULL;
                _cleanup_(policy_verdicts_freep) Verdicts *v = NULL;
                _cleanup_free_ char *why = NULL, *swhy = NULL;
                PolicyOptions po = { .real_now = real, .force = table[i].force };
                ConfigErrors e = {};
                Config c;
                Tree t = { .runtime_dir = strdup("/q"), .global_dir = strdup("/q") };
                Session s = { .id = ORPH, .project_dir = strdup("-tmp-x"), .cwd = strdup("/tmp/x"),
                              .owner = OWNER_OK, .state = SESSION_ACTIVE,
                              .pinned = table[i].pinned, .live = table[i].live ? LIVE_CLAIM : 0,
                              .mtime = real - 30 * 24 * H, .last_write = real - 30 * 24 * H,
                              .last_activity = real - 30 * 24 * H,
                              .first_record = real - (table[i].young_session ? 24 : 30 * 24) * H,
                              .bytes = 100 };
                Orphan o = { .kind = ORPHAN_STALE_PROJECT, .project_dir = strdup("projects"),
                             .name = strdup("-tmp-x"), .cwds = strdup("/tmp/x\n"), .bytes = 10,
                             .mtime = real - table[i].files_h * H, .cwd_back = table[i].cwd_back,
                             .stale_why = table[i].why ? strdup(table[i].why) : NULL };

                if (table[i].marker_h >= 0) {
                        o.marker.present = true;
                        o.marker.mtime_ns = (real - table[i].marker_h * H) * 1000000;
                }
                print_message("  case %zu\n", i);
                assert_int_equal(config_init_default(&c), 0);
                assert_int_equal(config_load_string(&c, "defaults = { max-age = \"off\"; "
                                                         "stale-project-min-age = \"1d\"; };",
                                                     "t.conf", &e),
                                 0);
                assert_int_equal(inventory_new(&inv), 0);
                assert_int_equal(inventory_add_tree(inv, &t, NULL), 0);
                assert_int_equal(inventory_add_session(inv, &s), 0);
                assert_int_equal(inventory_add_orphan(inv, &o), 0);
                assert_int_equal(policy_evaluate(inv, &c, real, &po, &v), 0);
                why = reason_orphan(&v->orphans[0], &inv->orphans[0], &qwen_store);
                swhy = reason_verdict(&v->sessions[0], &inv->sessions[0], &qwen_store);
                assert_non_null(why);
                assert_non_null(swhy);
                if (v->orphans[0].verb != table[i].want || v->orphans[0].mark != table[i].mark ||
                    !strstr(why, table[i].reason) || v->sessions[0].verb != table[i].want_session)
                        print_error("case %zu: %s mark %d '%s'; session %s '%s'\n", i,
                                    policy_verb_to_string(v->orphans[0].verb), v->orphans[0].mark, why,
                                    policy_verb_to_string(v->sessions[0].verb), swhy);
                assert_int_equal(v->orphans[0].verb, table[i].want);
                assert_int_equal(v->orphans[0].mark, table[i].mark);
                assert_non_null(strstr(why, table[i].reason));
                assert_int_equal(v->sessions[0].verb, table[i].want_session);
                if (table[i].live) {
                        /* the skipped session's own reason is quoted whole (rendered at the edge
                         * from VerdictFacts.quote) */
                        _cleanup_free_ char *want =
                                util_strprintf("stale project entry (cwd /tmp/x "
                                               "gone), kept by session %.8s "
                                               "(live: %s)",
                                               ORPH, swhy);
                        assert_non_null(want);
                        assert_string_equal(why, want);
                }
                if (table[i].want == VERB_DELETE)
                        assert_string_equal(v->sessions[0].rule, "stale-project-min-age");
                config_done(&c);
                config_errors_done(&e);
        }
}

/* ------------------------------------------------------------------ reclaim guards */

typedef FixtureCorpus Fx;

/* Scan with the hygiene kinds of need (bits 1u << kind) looked for. */
static void scan_fx(Fx *fx, unsigned need) {
        assert_int_equal(fixture_corpus_scan(fx, need), 0);
}

static const Orphan *find_orphan(const Fx *fx, OrphanKind kind, const char *name) {
        for (size_t i = 0; i < fx->inv->n_orphans; i++)
                if (fx->inv->orphans[i].kind == kind && streq(fx->inv->orphans[i].name, name))
                        return &fx->inv->orphans[i];
        return NULL;
}

typedef enum Change {
        CHANGE_NONE,
        CHANGE_APPEND,     /* the file is written again */
        CHANGE_SYMLINK,    /* the file is replaced by a symlink */
        CHANGE_REMOVE,     /* someone (Qwen's own cleanup) was first */
        CHANGE_TRANSCRIPT, /* a transcript for the id appears */
        CHANGE_ARCHIVED,   /* an archived transcript for the id appears */
        CHANGE_INSIDE,     /* a file inside the stale directory is written */
        CHANGE_LOCK,       /* a scheduled-task lock appears in the stale directory */
} Change;

static void test_hygiene_reclaim_guards(void **state) {
        static const struct {
                const char *plant;  /* relative to the tree, planted 10 days old */
                OrphanKind kind;
                const char *name;   /* the item's name */
                Change change;      /* made between the scan and the reclaim */
                int want;           /* hygiene_reclaim_orphan()'s result */
                const char *why;    /* its reason (substring), NULL when reclaimed */
                const char *check;  /* exists afterwards when want <= 0, else gone */
        } table[] = {
                { "tmp/" H_GONE "/tool-results/a.txt", ORPHAN_TOOL_RESULT, "a.txt", CHANGE_NONE, 1,
                  NULL, "tmp/" H_GONE "/tool-results/a.txt" },
                { "tmp/" H_GONE "/tool-results/b.txt", ORPHAN_TOOL_RESULT, "b.txt", CHANGE_APPEND,
                  0, "changed since scan", "tmp/" H_GONE "/tool-results/b.txt" },
                { "tmp/" H_GONE "/tool-results/c.txt", ORPHAN_TOOL_RESULT, "c.txt", CHANGE_SYMLINK,
                  0, "changed since scan", "tmp/" H_GONE "/tool-results/c.txt" },
                { "tmp/" H_GONE "/d.output", ORPHAN_TOOL_RESULT, "d.output", CHANGE_REMOVE, 0,
                  "changed since scan", NULL },
                { "debug/" ORPH ".txt", ORPHAN_DEBUG_LOG, ORPH ".txt", CHANGE_TRANSCRIPT, 0,
                  "a transcript for this id exists now", "debug/" ORPH ".txt" },
                { "plans/" ORPH ".md", ORPHAN_PLAN, ORPH ".md", CHANGE_ARCHIVED, 0,
                  "a transcript for this id exists now", "plans/" ORPH ".md" },
                { "plans/" ORPH ".md", ORPHAN_PLAN, ORPH ".md", CHANGE_NONE, 1, NULL,
                  "plans/" ORPH ".md" },
                { "tmp/" H_GONE "/logs.json", ORPHAN_TMP_PROJECT, H_GONE, CHANGE_INSIDE, 0,
                  "written since scan", "tmp/" H_GONE "/logs.json" },
                { "tmp/" H_GONE "/logs.json", ORPHAN_TMP_PROJECT, H_GONE, CHANGE_LOCK, 0,
                  "changed since scan", "tmp/" H_GONE "/logs.json" },
                { "tmp/" H_GONE "/logs.json", ORPHAN_TMP_PROJECT, H_GONE, CHANGE_NONE, 1, NULL,
                  "tmp/" H_GONE },
        };
        Fx *fx = *state;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_close_ int rfd = -EBADF, gfd = -EBADF;
                const char *why = "unset";
                const Orphan *o;
                int r, rt[1];

                print_message("  case %zu: %s\n", i, table[i].plant);
                /* a fresh tree per case */
                assert_int_equal(fixture_corpus_teardown(state), 0);
                assert_int_equal(fixture_corpus_setup(state), 0);
                fx = *state;
                assert_int_equal(fixture_write(fx->qwen, table[i].plant, "old data\n"), 0);
                if (table[i].kind == ORPHAN_TMP_PROJECT || table[i].kind == ORPHAN_TOOL_RESULT) {
                        assert_int_equal(fixture_age(fx->qwen, table[i].plant, 10 * DAY), 0);
                        assert_int_equal(fixture_age(fx->qwen, "tmp/" H_GONE, 10 * DAY), 0);
                        if (table[i].kind == ORPHAN_TOOL_RESULT &&
                            fixture_exists(fx->qwen, "tmp/" H_GONE "/tool-results"))
                                assert_int_equal(fixture_age(fx->qwen, "tmp/" H_GONE "/tool-results",
                                                             10 * DAY),
                                                 0);
                } else
                        assert_int_equal(fixture_age(fx->qwen, table[i].plant, 10 * DAY), 0);
                /* only the case's kind: a tmp/<hash>/ of no session would otherwise be one
                 * stale-tmp item, its tool results no items of their own */
                scan_fx(fx, 1u << table[i].kind);
                o = find_orphan(fx, table[i].kind, table[i].name);
                assert_non_null(o);

                switch (table[i].change) {
                case CHANGE_NONE:
                        break;
                case CHANGE_APPEND:
                        assert_int_equal(fixture_append(fx->qwen, table[i].plant, "more\n"), 0);
                        break;
                case CHANGE_SYMLINK: {
                        _cleanup_free_ char *p = fixture_path(fx->qwen, table[i].plant);
                        assert_int_equal(unlink(p), 0);
                        assert_int_equal(fixture_symlink(fx->qwen, table[i].plant, "/etc/hostname"),
                                         0);
                        break;
                }
                case CHANGE_REMOVE: {
                        _cleanup_free_ char *p = fixture_path(fx->qwen, table[i].plant);
                        assert_int_equal(unlink(p), 0);
                        break;
                }
                case CHANGE_TRANSCRIPT:
                        assert_int_equal(fixture_write(fx->qwen,
                                                       "projects/-srv-demo-webapp/chats/" ORPH ".jsonl",
                                                       "{}\n"),
                                         0);
                        break;
                case CHANGE_ARCHIVED:
                        assert_int_equal(fixture_write(fx->qwen,
                                                       "projects/-srv-demo-scratch/chats/archive/" ORPH
                                                       ".jsonl",
                                                       "{}\n"),
                                         0);
                        break;
                case CHANGE_INSIDE:
                        /* a write inside: the directory's own identity does not change */
                        assert_int_equal(fixture_append(fx->qwen, table[i].plant, "row\n"), 0);
                        break;
                case CHANGE_LOCK:
                        assert_int_equal(fixture_write(fx->qwen,
                                                       "tmp/" H_GONE "/scheduled_tasks.lock", "1"),
                                         0);
                        break;
                }

                rfd = fs_open_root(fx->qwen, 0);
                assert_true(rfd >= 0);
                gfd = fs_open_root(fx->qwen, 0);
                rt[0] = rfd;
                r = hygiene_reclaim_orphan(o, o->kind == ORPHAN_PLAN ? gfd : rfd, 0, rt, 1, NULL, NULL,
                                    &why);
                if (r != table[i].want || (table[i].why && (!why || !strstr(why, table[i].why))))
                        print_error("case %zu: %d (%s), want %d (%s)\n", i, r, why ?: "-",
                                    table[i].want, table[i].why ?: "-");
                assert_int_equal(r, table[i].want);
                if (table[i].why)
                        assert_non_null(strstr(why, table[i].why));
                else
                        assert_null(why);
                if (table[i].check)
                        assert_true(fixture_exists(fx->qwen, table[i].check) == (table[i].want <= 0));
        }
}


/* A stale project entry (hygiene_reclaim_stale()): between the scan and the removal, a recorded cwd
 * that exists again, something unknown, a transcript or a new marker keep it; else it goes. The
 * marker is written (with the recorded cwds) and removed by identity. */
#define STALE_DIR "-tmp-qgc-fs-stale"
typedef enum StaleChange {
        STALE_NONE,
        STALE_CWD_BACK,   /* the recorded cwd exists again */
        STALE_UNKNOWN,    /* a file qgc does not know appears */
        STALE_TRANSCRIPT, /* a transcript appears (a session starts) */
        STALE_REMARKED,   /* the marker is replaced */
} StaleChange;

static void test_hygiene_stale_act_guards(void **state) {
        static const struct {
                StaleChange change;
                int want;
                const char *why;
        } table[] = {
                { STALE_NONE, 1, NULL },
                { STALE_CWD_BACK, 0, "a recorded cwd exists again" },
                { STALE_UNKNOWN, 0, "something new inside" },
                { STALE_TRANSCRIPT, 0, "a session of it is still there" },
                { STALE_REMARKED, 0, "its mark changed" },
        };
        char cwd[128], wt[160], body[256];
        Fx *fx = *state;

        snprintf(cwd, sizeof cwd, "/tmp/qgc-fs-stale-%ld", (long)getpid());
        snprintf(wt, sizeof wt, "%s/wt", cwd);
        snprintf(body, sizeof body, "{\"worktreePath\":\"%s/wt\"}", cwd);
        (void)rmdir(cwd);
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_close_ int rfd = -EBADF;
                _cleanup_free_ char *marker = NULL;
                const char *why = "unset";
                const Orphan *o;
                int r;

                print_message("  case %zu\n", i);
                assert_int_equal(fixture_corpus_teardown(state), 0);
                assert_int_equal(fixture_corpus_setup(state), 0);
                fx = *state;
                assert_int_equal(fixture_write(fx->qwen, "projects/" STALE_DIR "/chats/" ORPH
                                                         ".worktree.json", body), 0);
                assert_int_equal(fixture_write(fx->qwen, "projects/" STALE_DIR "/"
                                                         HYGIENE_STALE_MARKER, ""), 0);
                assert_int_equal(fixture_age(fx->qwen, "projects/" STALE_DIR "/chats/" ORPH
                                                       ".worktree.json", 10 * DAY), 0);
                assert_int_equal(fixture_age(fx->qwen, "projects/" STALE_DIR "/" HYGIENE_STALE_MARKER,
                                             10 * DAY), 0);
                scan_fx(fx, 1u << ORPHAN_STALE_PROJECT);
                o = find_orphan(fx, ORPHAN_STALE_PROJECT, STALE_DIR);
                assert_non_null(o);
                if (!o)
                        return;
                if (o->stale_why)
                        print_error("kept by the scan: %s\n", o->stale_why);
                assert_null(o->stale_why);
                assert_true(o->marker.present);
                switch (table[i].change) {
                case STALE_NONE:
                        break;
                case STALE_CWD_BACK:
                        assert_int_equal(mkdir(cwd, 0700), 0);
                        assert_int_equal(mkdir(wt, 0700), 0);
                        break;
                case STALE_UNKNOWN:
                        assert_int_equal(fixture_write(fx->qwen, "projects/" STALE_DIR "/notes.md",
                                                       "mine\n"), 0);
                        break;
                case STALE_TRANSCRIPT:
                        assert_int_equal(fixture_write(fx->qwen, "projects/" STALE_DIR "/chats/"
                                                                 ORPH ".jsonl", "{}\n"), 0);
                        break;
                case STALE_REMARKED:
                        marker = fixture_path(fx->qwen, "projects/" STALE_DIR "/" HYGIENE_STALE_MARKER);
                        assert_int_equal(unlink(marker), 0);
                        assert_int_equal(fixture_write(fx->qwen, "projects/" STALE_DIR "/"
                                                                 HYGIENE_STALE_MARKER, ""), 0);
                        break;
                }
                rfd = fs_open_root(fx->qwen, 0);
                assert_true(rfd >= 0);
                r = hygiene_reclaim_stale(fx->inv, o, 0, /* remove= */ true, rfd,
                                      fx->inv->trees[0].dev, NULL, NULL, &why);
                (void)rmdir(wt);
                (void)rmdir(cwd);
                if (r != table[i].want || (table[i].why && (!why || !strstr(why, table[i].why))))
                        print_error("case %zu: %d '%s'\n", i, r, why ?: "(null)");
                assert_int_equal(r, table[i].want);
                if (table[i].why)
                        assert_non_null(strstr(why, table[i].why));
                assert_int_equal(fixture_exists(fx->qwen, "projects/" STALE_DIR), r <= 0);
        }

        /* the marker: written once (never replaced) with the recorded cwds, removed by identity */
        {
                _cleanup_close_ int rfd = -EBADF;
                _cleanup_free_ char *text = NULL, *want = util_strprintf("%s/wt\n", cwd);
                const char *why = "unset";
                size_t len = 0;
                const Orphan *o;

                assert_int_equal(fixture_corpus_teardown(state), 0);
                assert_int_equal(fixture_corpus_setup(state), 0);
                fx = *state;
                assert_int_equal(fixture_write(fx->qwen, "projects/" STALE_DIR "/chats/" ORPH
                                                         ".worktree.json", body), 0);
                scan_fx(fx, 1u << ORPHAN_STALE_PROJECT);
                o = find_orphan(fx, ORPHAN_STALE_PROJECT, STALE_DIR);
                assert_non_null(o);
                if (!o)
                        return;
                assert_false(o->marker.present);
                rfd = fs_open_root(fx->qwen, 0);
                assert_true(rfd >= 0);
                assert_int_equal(hygiene_reclaim_stale(fx->inv, o, 1, false, rfd, fx->inv->trees[0].dev,
                                                   NULL, NULL, &why), 1);
                assert_int_equal(fixture_read(fx->qwen, "projects/" STALE_DIR "/"
                                                        HYGIENE_STALE_MARKER, &text, &len), 0);
                assert_string_equal(text, want);
                /* a second write does not replace it */
                assert_int_equal(hygiene_reclaim_stale(fx->inv, o, 1, false, rfd, fx->inv->trees[0].dev,
                                                   NULL, NULL, &why), 0);
                scan_fx(fx, 1u << ORPHAN_STALE_PROJECT);
                o = find_orphan(fx, ORPHAN_STALE_PROJECT, STALE_DIR);
                assert_non_null(o);
                if (!o)
                        return;
                assert_true(o->marker.present);
                assert_int_equal(hygiene_reclaim_stale(fx->inv, o, -1, false, rfd, fx->inv->trees[0].dev,
                                                   NULL, NULL, &why), 1);
                assert_false(fixture_exists(fx->qwen, "projects/" STALE_DIR "/" HYGIENE_STALE_MARKER));
                assert_true(fixture_exists(fx->qwen, "projects/" STALE_DIR "/chats"));
        }
}

/* The stale-project marker holds the recorded cwds, one a line, and is read up to
 * HYGIENE_STALE_MARKER_MAX bytes: a marker of exactly that size (some 20000 distinct cwds, each
 * collected once, in linear time) is read whole; one byte more cannot be read, which keeps the
 * entry. */
static void test_hygiene_stale_marker_limit(void **state) {
        Fx *fx = *state;
        char body[256];
        StrBuf b = {};
        _cleanup_free_ char *text = NULL, *more = NULL;
        size_t lines = 0, n = 0;
        const Orphan *o;

        snprintf(body, sizeof body, "{\"worktreePath\":\"/tmp/qgc-fs-stale-%ld/wt\"}", (long)getpid());
        for (;; lines++) {
                char line[128];
                int l = snprintf(line, sizeof line, "/tmp/qgc-fs-stale-%ld-gone-%zu\n",
                                 (long)getpid(), lines);
                if (b.len + (size_t)l + 64 > HYGIENE_STALE_MARKER_MAX)
                        break;
                assert_true(strbuf_printf(&b, "%s", line) >= 0);
        }
        /* the last line makes it exact */
        assert_true(strbuf_printf(&b, "/tmp/qgc-fs-stale-%ld-last-", (long)getpid()) >= 0);
        while (b.len + 1 < HYGIENE_STALE_MARKER_MAX)
                assert_true(strbuf_printf(&b, "x") >= 0);
        assert_true(strbuf_printf(&b, "\n") >= 0);
        lines++;
        assert_int_equal(b.len, HYGIENE_STALE_MARKER_MAX);
        text = strbuf_steal(&b);

        for (int past = 0; past <= 1; past++) {
                assert_int_equal(fixture_corpus_teardown(state), 0);
                assert_int_equal(fixture_corpus_setup(state), 0);
                fx = *state;
                assert_int_equal(fixture_write(fx->qwen, "projects/" STALE_DIR "/chats/" ORPH
                                                         ".worktree.json", body), 0);
                more = past ? util_strprintf("%sx", text) : strdup(text);
                assert_non_null(more);
                assert_int_equal(fixture_write(fx->qwen, "projects/" STALE_DIR "/"
                                                         HYGIENE_STALE_MARKER, more), 0);
                free(more);
                more = NULL;
                assert_int_equal(fixture_age(fx->qwen, "projects/" STALE_DIR "/chats/" ORPH
                                                       ".worktree.json", 10 * DAY), 0);
                assert_int_equal(fixture_age(fx->qwen, "projects/" STALE_DIR "/" HYGIENE_STALE_MARKER,
                                             10 * DAY), 0);
                scan_fx(fx, 1u << ORPHAN_STALE_PROJECT);
                o = find_orphan(fx, ORPHAN_STALE_PROJECT, STALE_DIR);
                assert_non_null(o);
                if (!o)
                        return;
                if (past) {
                        assert_non_null(o->stale_why);
                        assert_non_null(strstr(o->stale_why, "its marker cannot be read"));
                        continue;
                }
                if (o->stale_why)
                        print_error("kept by the scan: %s\n", o->stale_why);
                assert_null(o->stale_why);
                /* every line of the marker and the sidecar's cwd, once each */
                n = 0;
                for (const char *p = o->cwds; p && (p = strchr(p, '\n')); p++)
                        n++;
                assert_int_equal(n, lines + 1);
        }
}

/* An unknown name in a tmp/<hash>/ of no session: no stale-tmp item, and its tool results are
 * still items of their own. */
static void test_hygiene_scan_unknown_keeps_tmp(void **state) {
        Fx *fx = *state;

        assert_int_equal(fixture_write(fx->qwen, "tmp/" H_GONE "/logs.json", "[]"), 0);
        assert_int_equal(fixture_write(fx->qwen, "tmp/" H_GONE "/mystery.bin", "?"), 0);
        assert_int_equal(fixture_write(fx->qwen, "tmp/" H_GONE "/tool-results/t.txt", "r"), 0);
        scan_fx(fx, ~0u);
        assert_null(find_orphan(fx, ORPHAN_TMP_PROJECT, H_GONE));
        assert_non_null(find_orphan(fx, ORPHAN_TOOL_RESULT, "t.txt"));
        assert_null(find_orphan(fx, ORPHAN_TOOL_RESULT, "mystery.bin"));
        /* the corpus's own tmp/<hash>/ directories all belong to sessions */
        for (size_t i = 0; i < fx->inv->n_orphans; i++)
                assert_true(fx->inv->orphans[i].kind != ORPHAN_TMP_PROJECT);
}

/* Nothing is looked for with the keys off. */
static void test_hygiene_scan_need_zero(void **state) {
        Fx *fx = *state;
        ScanOptions o = { .now = util_now_msec() };
        Tree t = {};

        assert_int_equal(fixture_write(fx->qwen, "tmp/" H_GONE "/logs.json", "[]"), 0);
        assert_int_equal(fixture_write(fx->qwen, "plans/" ORPH ".md", "p"), 0);
        fx->inv = inventory_free(fx->inv);
        assert_int_equal(inventory_new(&fx->inv), 0);
        assert_int_equal(qwen_store.tree_from_dir(fx->qwen, &t), 0);
        assert_int_equal(inventory_add_tree(fx->inv, &t, NULL), 0);
        assert_int_equal(scan_all(fx->inv, &o), 0);
        for (size_t i = 0; i < fx->inv->n_orphans; i++)
                assert_false(inventory_hygiene_kind(fx->inv->orphans[i].kind));
}

/* The measure of the corpus: totals equal the kinds' sum, nothing unknown. */
static void test_treesize_corpus(void **state) {
        Fx *fx = *state;
        StoreSize s;
        Tree t = {};
        uint64_t b = 0, a = 0;

        assert_int_equal(qwen_store.tree_from_dir(fx->qwen, &t), 0);
        assert_int_equal(tree_size_measure(&t, &s), 0);
        for (TreeKind k = 0; k < _TREE_KIND_MAX; k++) {
                b += s.bytes[k];
                a += s.alloc[k];
        }
        assert_int_equal(b, s.total_bytes);
        assert_int_equal(a, s.total_alloc);
        assert_int_equal(s.files[TREE_KIND_UNKNOWN], 0);
        assert_true(s.files[TREE_KIND_SESSIONS] > 0);
        assert_true(s.files[TREE_KIND_ARCHIVE] > 0);
        assert_false(s.incomplete);
        store_size_done(&s);
        inventory_tree_done(&t);
}

#define T(f) cmocka_unit_test_setup_teardown(f, fixture_corpus_setup, fixture_corpus_teardown)

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_treesize_classify_table),
                cmocka_unit_test(test_hygiene_keys_default_off),
                cmocka_unit_test(test_hygiene_policy_table),
                cmocka_unit_test(test_hygiene_stale_policy_table),
                T(test_hygiene_reclaim_guards),
                T(test_hygiene_stale_act_guards),
                T(test_hygiene_stale_marker_limit),
                T(test_hygiene_scan_unknown_keeps_tmp),
                T(test_hygiene_scan_need_zero),
                T(test_treesize_corpus),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
