/* test_actions.c: the executor on real copies of the corpus tree: archive with sidecars, delete
 * of exactly the named files, usage salvage equal to Qwen's, skips when the transcript changed,
 * restore, orphans; plus the lock, fd-based removal and the sidecar merges. */
#include "autoconf.h"

#include <inttypes.h>

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "apply_helpers.h"
#include "archive.h"
#include "erase.h"
#include "fs.h"
#include "rm-rf.h"
#include "journal.h"
#include "lock.h"
#include "recover.h"
#include "syncq.h"
#include "swap-hook.h"
#include "testskip.h"
#include "archive.c" /* its static functions are tested here */
#include "recover-marker.c" /* recover_marker_format() */

typedef struct T {
        char *root;
        char *qwen;
} T;

static int setup(void **state) {
        T *t = calloc(1, sizeof(T));
        _cleanup_free_ char *log = NULL;

        if (!t || fixture_new(&t->root) < 0)
                return -1;
        if (fixture_copy_tree(fixture_testdata("corpus/tree"), t->root, "qwen") < 0)
                return -1;
        t->qwen = fixture_path(t->root, "qwen");
        log = fixture_path(t->root, "journal.log");
        if (!t->qwen || !log || journal_open(JOURNAL_TARGET_FILE, log, "0123456789abcdef0123456789abcdef") < 0)
                return -1;
        *state = t;
        return 0;
}

static int teardown(void **state) {
        T *t = *state;

        journal_close();
        free(t->qwen);
        fixture_free(t->root);
        free(t);
        return 0;
}

static char *rel(const char *dir, const char *id, const char *suffix) {
        return util_strprintf("%s/%s%s", dir, id, suffix);
}

static ino_t inode_of(const char *root, const char *r) {
        _cleanup_free_ char *p = fixture_path(root, r);
        struct stat st;

        assert_int_equal(lstat(p, &st), 0);
        return st.st_ino;
}

/* Snapshot lines without atimes (reading a file is allowed to bump it), directories reduced to
 * their path (their mtimes change when entries go), without the tree's lock file (LOCK_FILE:
 * every run takes the lock, whatever it changes). */
static char *snapshot_no_atime(const char *root) {
        _cleanup_free_ char *snap = NULL;
        StrBuf b = {};

        assert_int_equal(fixture_snapshot(root, NULL, &snap), 0);
        for (char *l = snap; l && *l;) {
                char *nl = strchr(l, '\n');
                char f[7][1024] = {};
                if (nl)
                        *nl = 0;
                if (sscanf(l, "%1023s %1023s %1023s %1023s %1023s %1023s %1023s", f[0], f[1], f[2],
                           f[3], f[4], f[5], f[6]) >= 2 && !streq(f[0], LOCK_FILE)) {
                        if (streq(f[1], "d"))
                                assert_int_equal(strbuf_printf(&b, "%s d\n", f[0]), 0);
                        else
                                assert_int_equal(strbuf_printf(&b, "%s %s %s %s %s %s\n", f[0], f[1],
                                                               f[2], f[3], f[4], f[6]),
                                                 0);
                }
                l = nl ? nl + 1 : NULL;
        }
        return strbuf_steal(&b);
}

static bool has_line(const char *lines, const char *path_prefix) {
        size_t n = strlen(path_prefix);
        for (const char *l = lines; l && *l;) {
                if (strncmp(l, path_prefix, n) == 0 && l[n] == ' ')
                        return true;
                l = strchr(l, '\n');
                l = l ? l + 1 : NULL;
        }
        return false;
}

/* ---------------------------------------------------------------- archive */

/* An archive is recorded with its time (session-times.h), once its move is durable; the next scan
 * gives the session that time (archive-max-age counts from it); a restore records its start and
 * end, and ends the archive's record. */
static void test_actions_archive_and_restore_are_recorded(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_TEXT, VERB_ARCHIVE }, { S_FORK, VERB_DELETE }, {} };
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        _cleanup_free_ char *rec = NULL;
        ActionStats st = {};
        msec_t before = util_now_msec(), at;
        const Session *s;
        char want[128];

        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_archived, 1);
        rec = test_read_rel(t->qwen, ".qgc/session-times");
        assert_int_equal(sscanf(rec, "archived %" SCNd64 " ", &at), 1);
        assert_true(at >= before && at <= util_now_msec());
        snprintf(want, sizeof want, "archived %" PRId64 " %s\n", at, S_TEXT);
        assert_string_equal(rec, want); /* the delete is not an archive */
        assert_int_equal(apply_scan(t->qwen, &inv), 0);
        assert_non_null(s = inventory_find(inv, 0, S_TEXT));
        assert_int_equal(s->archived_at, at);

        assert_int_equal(test_restore(inv, S_TEXT, false, NULL), 0);
        inv = inventory_free(inv);
        assert_int_equal(apply_scan(t->qwen, &inv), 0);
        assert_non_null(s = inventory_find(inv, 0, S_TEXT));
        assert_int_equal(s->archived_at, 0);
        assert_true(s->restored_at >= at);
        assert_false(s->restore_pending);
}

static void test_actions_archive_moves_transcript_and_sidecars(void **state) {
        T *t = *state;
        _cleanup_free_ char *tr = rel(P_API, S_TEXT, ".jsonl");
        _cleanup_free_ char *tr_a = rel(P_API "/archive", S_TEXT, ".jsonl");
        _cleanup_free_ char *wt = rel(P_API, S_TEXT, ".worktree.json");
        _cleanup_free_ char *wt_a = rel(P_API "/archive", S_TEXT, ".worktree.json");
        _cleanup_free_ char *pr = rel(P_API, S_TEXT, ".pr.json");
        _cleanup_free_ char *pr_a = rel(P_API "/archive", S_TEXT, ".pr.json");
        _cleanup_free_ char *lg = rel(P_API, S_TEXT, ".ledger.jsonl");
        _cleanup_free_ char *lg_a = rel(P_API "/archive", S_TEXT, ".ledger.jsonl");
        _cleanup_free_ char *prm = NULL, *lgm = NULL, *jl = NULL;
        ApplyPick picks[] = { { S_TEXT, VERB_ARCHIVE }, {} };
        ActionStats st = {};
        ino_t ino;

        assert_int_equal(fixture_write(t->qwen, wt, "{\"slug\":\"x\",\"worktreePath\":\"/nowhere\"}\n"), 0);
        assert_int_equal(fixture_write(t->qwen, pr,
                                       "{\"prs\":[{\"number\":2,\"url\":\"u2-new\",\"createdAt\":\"2026-02-01\"}]}"),
                         0);
        assert_int_equal(fixture_write(t->qwen, pr_a,
                                       "{\"prs\":[{\"number\":1,\"url\":\"u1\",\"createdAt\":\"2026-01-01\"},"
                                       "{\"number\":2,\"url\":\"u2-old\",\"createdAt\":\"2025-12-01\"}]}"),
                         0);
        assert_int_equal(fixture_write(t->qwen, lg, "{\"n\":\"new\"}\n"), 0);
        assert_int_equal(fixture_write(t->qwen, lg_a, "{\"n\":\"old\"}"), 0);
        assert_int_equal(apply_plant_dead_claim(t->qwen, P_API, S_TEXT, true), 0);
        ino = inode_of(t->qwen, tr);

        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_archived, 1);
        assert_int_equal(st.n_failed, 0);

        assert_false(fixture_exists(t->qwen, tr));
        assert_int_equal(inode_of(t->qwen, tr_a), ino); /* renamed, not copied */
        assert_false(fixture_exists(t->qwen, wt));
        assert_true(fixture_exists(t->qwen, wt_a));
        assert_false(fixture_exists(t->qwen, pr));
        assert_false(fixture_exists(t->qwen, lg));
        prm = test_read_rel(t->qwen, pr_a);
        assert_non_null(strstr(prm, "\"number\": 1"));
        assert_non_null(strstr(prm, "u2-new")); /* fresher binding of PR 2 wins */
        assert_null(strstr(prm, "u2-old"));
        assert_true(strstr(prm, "u1") < strstr(prm, "u2-new")); /* ordered by createdAt */
        lgm = test_read_rel(t->qwen, lg_a);
        assert_string_equal(lgm, "{\"n\":\"old\"}\n{\"n\":\"new\"}\n"); /* sealed, appended */
        /* the runtime claim stays where it was */
        jl = snapshot_no_atime(t->qwen);
        assert_non_null(strstr(jl, ".runtime.json"));
        assert_non_null(strstr(jl, P_API "/" S_TEXT "."));
        /* it had a usage line already: none added */
        assert_int_equal(apply_usage_lines(t->qwen, S_TEXT), 1);
        assert_int_equal(st.n_salvaged, 0);
}

static void test_actions_archive_worktree_collision_refused(void **state) {
        T *t = *state;
        _cleanup_free_ char *tr = rel(P_API, S_TEXT, ".jsonl");
        _cleanup_free_ char *wt = rel(P_API, S_TEXT, ".worktree.json");
        _cleanup_free_ char *wt_a = rel(P_API "/archive", S_TEXT, ".worktree.json");
        _cleanup_free_ char *pr = rel(P_API, S_TEXT, ".pr.json");
        _cleanup_free_ char *before = NULL, *after = NULL;
        ApplyPick picks[] = { { S_TEXT, VERB_ARCHIVE }, {} };
        ActionStats st = {};

        assert_int_equal(fixture_write(t->qwen, wt, "{\"slug\":\"active\"}\n"), 0);
        assert_int_equal(fixture_write(t->qwen, wt_a, "{\"slug\":\"archived\"}\n"), 0);
        assert_int_equal(fixture_write(t->qwen, pr, "{\"prs\":[]}\n"), 0);
        before = snapshot_no_atime(t->qwen);

        assert_int_equal(apply_execute(t->qwen, picks, &st), 1);
        assert_int_equal(st.n_failed, 1);
        assert_int_equal(st.n_archived, 0);
        after = snapshot_no_atime(t->qwen);
        assert_string_equal(before, after); /* nothing moved, nothing written */
        assert_true(fixture_exists(t->qwen, tr));
}

static void test_actions_conflict_left_alone(void **state) {
        T *t = *state;
        _cleanup_free_ char *tr = rel(P_API, S_TEXT, ".jsonl");
        _cleanup_free_ char *tr_a = rel(P_API "/archive", S_TEXT, ".jsonl");
        _cleanup_free_ char *body = test_read_rel(t->qwen, tr);
        _cleanup_free_ char *before = NULL, *after = NULL;
        ApplyPick picks[] = { { S_TEXT, VERB_DELETE }, {} };
        ActionStats st = {};

        assert_int_equal(fixture_write(t->qwen, tr_a, body), 0);
        before = snapshot_no_atime(t->qwen);
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_skipped, 1);
        assert_int_equal(st.n_deleted, 0);
        after = snapshot_no_atime(t->qwen);
        assert_string_equal(before, after);
}

static void test_actions_archive_copy_appearing_after_scan_skips(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_TEXT, VERB_ARCHIVE }, {} };
        _cleanup_free_ char *body = test_read_rel(t->qwen, P_API "/" S_TEXT ".jsonl");
        ApplyRun a = {};
        ActionStats st = {};

        assert_int_equal(apply_prepare(t->qwen, picks, &a), 0);
        /* Qwen archives the same session meanwhile and something recreates the active copy */
        assert_int_equal(fixture_write(t->qwen, P_API "/archive/" S_TEXT ".jsonl", body), 0);
        assert_int_equal(test_run_plan(&a.plan, &st), 0);
        apply_run_done(&a);
        assert_int_equal(st.n_skipped, 1);
        assert_int_equal(st.n_archived, 0);
        assert_true(fixture_exists(t->qwen, P_API "/" S_TEXT ".jsonl"));
}

/* ---------------------------------------------------------------- shared files (erase.h) */

#define H_MY_NOTES "tmp/0abffe37f073d36d80c510d5f743de88c5e662836e083873d836377fc088d59a"
#define S_OTHER "0f0f0f0f-0000-4000-8000-000000000001" /* rows of a session qgc keeps */
#define LOGS_ROW(id, m, msg)                                                                       \
        "{\n    \"sessionId\": \"" id "\",\n    \"messageId\": " #m ",\n    \"type\": \"user\",\n" \
        "    \"message\": \"" msg "\",\n    \"timestamp\": \"2026-11-30T03:53:27.728Z\"\n  }"
#define LOGS_BEFORE                                                                                \
        "[\n  " LOGS_ROW(S_FH, 0, "secret one") ",\n  " LOGS_ROW(S_OTHER, 0, "kept \\u00e9") ",\n  " \
        LOGS_ROW(S_FH, 1, "secret two") ",\n  " LOGS_ROW(S_OTHER, 1, "kept two") "\n]"
#define LOGS_AFTER "[\n  " LOGS_ROW(S_OTHER, 0, "kept \\u00e9") ",\n  " LOGS_ROW(S_OTHER, 1, "kept two") "\n]"
#define ORG_ENTRY(id, extra)                                                                       \
        "\"" id "\": {\n      \"groupId\": null,\n" extra                                         \
        "      \"updatedAt\": \"2026-11-30T00:00:00.000Z\"\n    }"
#define ORG_HEAD "{\n  \"schemaVersion\": 1,\n  \"groups\": [],\n  \"sessions\": {\n    "
#define ORG_BEFORE                                                                                 \
        ORG_HEAD ORG_ENTRY(S_KILLED, "      \"pinnedAt\": \"2026-11-30T00:00:00.000Z\",\n")       \
        ",\n    " ORG_ENTRY(S_FH, "") "\n  }\n}"
#define ORG_AFTER                                                                                  \
        ORG_HEAD ORG_ENTRY(S_KILLED, "      \"pinnedAt\": \"2026-11-30T00:00:00.000Z\",\n") "\n  }\n}"
#define ORG_PATH "projects/-srv-demo-my-notes/session-organization.v1.json"
#define REVIEW "projects/-srv-demo-my-notes/workflows/generated/review/"

/* S_FH's project with rows and entries of it and of others; the corpus claims made dead. */
static void plant_shared(T *t) {
        _cleanup_free_ char *org = fixture_path(t->qwen, ORG_PATH);

        assert_int_equal(apply_plant_dead_claim(t->qwen, P_NOTES, S_FH, false), 0);
        assert_int_equal(apply_plant_dead_claim(t->qwen, P_NOTES, S_KILLED, false), 0);
        assert_int_equal(fixture_write(t->qwen, H_MY_NOTES "/logs.json", LOGS_BEFORE), 0);
        assert_int_equal(fixture_write(t->qwen, ORG_PATH, ORG_BEFORE), 0);
        assert_int_equal(chmod(org, 0640), 0);
        /* reviewSessionDirName(): "<id>-" + sha256(id)[0..8) */
        assert_int_equal(fixture_write(t->qwen, REVIEW S_FH "-55ce4f4d/review.js", "x"), 0);
        assert_int_equal(fixture_write(t->qwen, REVIEW "no-session/review.js", "y"), 0);
}

static void test_actions_delete_erases_shared_rows(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_FH, VERB_DELETE }, {} };
        _cleanup_free_ char *logs = NULL, *org = NULL, *log = NULL;
        _cleanup_free_ char *org_path = fixture_path(t->qwen, ORG_PATH);
        ActionStats st = {};
        struct stat sb;

        plant_shared(t);
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_deleted, 1);
        assert_int_equal(st.n_erased, 3);
        logs = test_read_rel(t->qwen, H_MY_NOTES "/logs.json");
        assert_string_equal(logs, LOGS_AFTER);
        org = test_read_rel(t->qwen, ORG_PATH);
        assert_string_equal(org, ORG_AFTER);
        assert_int_equal(stat(org_path, &sb), 0);
        assert_int_equal(sb.st_mode & 07777, 0640);
        assert_false(fixture_exists(t->qwen, REVIEW S_FH "-55ce4f4d"));
        assert_true(fixture_exists(t->qwen, REVIEW "no-session/review.js"));
        assert_false(fixture_exists(t->qwen, H_MY_NOTES "/.logs.json.qgc-tmp"));
        log = test_read_rel(t->root, "journal.log");
        assert_non_null(strstr(log, "QGC_ACTION=erased"));
        assert_non_null(strstr(log, "QGC_ERASED=2"));
        assert_non_null(strstr(log, "QGC_ERASED=1"));
        assert_null(strstr(log, "secret"));

        /* an archive leaves them alone */
        memset(&st, 0, sizeof st);
        ApplyPick arch[] = { { S_KILLED, VERB_ARCHIVE }, {} };
        assert_int_equal(apply_execute(t->qwen, arch, &st), 0);
        assert_int_equal(st.n_archived, 1);
        assert_int_equal(st.n_erased, 0);
        free(org);
        org = test_read_rel(t->qwen, ORG_PATH);
        assert_string_equal(org, ORG_AFTER);
}

/* The window of a shared-file edit before its exchange (swap-hook.h). */
int __real_renameat2(int olddfd, const char *oldname, int newdfd, const char *newname,
                     unsigned flags);
int __wrap_renameat2(int olddfd, const char *oldname, int newdfd, const char *newname,
                     unsigned flags);
int __wrap_renameat2(int olddfd, const char *oldname, int newdfd, const char *newname,
                     unsigned flags) {
        swap_hook_run(flags, newname);
        return __real_renameat2(olddfd, oldname, newdfd, newname, flags);
}

/* Two deletes of the same project in one batch: each shared file is read and rewritten once for
 * both (erase_sessions_shared()), each session's own count journaled; the result is what two
 * edits one after the other wrote. */
static unsigned erase_edits_logs, erase_edits_org;
static void erase_count_hook(void *userdata, const char *name) {
        (void)userdata;
        if (streq(name, "logs.json"))
                erase_edits_logs++;
        else if (streq(name, "session-organization.v1.json"))
                erase_edits_org++;
}

static void test_actions_delete_batch_edits_shared_files_once(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_FH, VERB_DELETE }, { S_KILLED, VERB_DELETE }, {} };
        _cleanup_free_ char *logs = NULL, *org = NULL, *log = NULL;
        ActionStats st = {};

        plant_shared(t);
        erase_edits_logs = erase_edits_org = 0;
        swap_hook_set(erase_count_hook, NULL);
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        swap_hook_set(NULL, NULL);
        assert_int_equal(st.n_deleted, 2);
        assert_int_equal(st.n_failed, 0);
        /* S_FH: 2 rows and 1 entry; S_KILLED: 1 row (its logs.json is the corpus's, of another
         * hash) and 1 entry */
        assert_int_equal(st.n_erased, 5);
        assert_int_equal(st.n_erased_files, 4);
        assert_int_equal(erase_edits_logs, 2); /* two files */
        assert_int_equal(erase_edits_org, 1);  /* one file, both sessions' entries */
        logs = test_read_rel(t->qwen, H_MY_NOTES "/logs.json");
        assert_string_equal(logs, LOGS_AFTER);
        org = test_read_rel(t->qwen, ORG_PATH);
        assert_string_equal(org, "{\n  \"schemaVersion\": 1,\n  \"groups\": [],\n  \"sessions\": {}\n}");
        log = test_read_rel(t->root, "journal.log");
        assert_non_null(strstr(log, "removed 2 prompt history row(s) of session " S_FH));
        assert_non_null(strstr(log, "removed 1 organization entry(ies) of session " S_FH));
        assert_non_null(strstr(log, "removed 1 organization entry(ies) of session " S_KILLED));
        assert_non_null(strstr(log, "removed 1 prompt history row(s) of session " S_KILLED));
}

/* Qwen appends a prompt row while qgc edits (its atomicWriteFile renames its version over the
 * file right before qgc's edit replaces it): qgc's exchange hands it that version, which it
 * merges: the session is deleted, the new row and every other kept, none of the session's
 * left. Before, qgc checked the file and then renamed over it, and a write between the two was
 * lost; the hook is that window, and the second round proves the write was seen. */
#define LOGS_RACED                                                                                 \
        "[\n  " LOGS_ROW(S_FH, 0, "secret one") ",\n  " LOGS_ROW(S_OTHER, 0, "kept \\u00e9") ",\n  " \
        LOGS_ROW(S_FH, 1, "secret two") ",\n  " LOGS_ROW(S_OTHER, 1, "kept two") ",\n  "           \
        LOGS_ROW(S_OTHER, 2, "typed meanwhile") "\n]"
static unsigned erase_race_rounds;
static void erase_race_hook(void *userdata, const char *name) {
        T *t = userdata;
        _cleanup_free_ char *tmp = fixture_path(t->qwen, H_MY_NOTES "/logs.json.tmp-qwen");
        _cleanup_free_ char *dst = fixture_path(t->qwen, H_MY_NOTES "/logs.json");

        if (!streq(name, "logs.json") || erase_race_rounds++ > 0)
                return;
        /* as Qwen's atomicWriteFile: a temp file renamed over it */
        assert_int_equal(fixture_write(t->qwen, H_MY_NOTES "/logs.json.tmp-qwen", LOGS_RACED), 0);
        assert_int_equal(rename(tmp, dst), 0);
}

static void test_actions_erase_concurrent_write_merged(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_FH, VERB_DELETE }, {} };
        _cleanup_free_ char *logs = NULL, *org = NULL, *log = NULL;
        ActionStats st = {};

        plant_shared(t);
        erase_race_rounds = 0;
        swap_hook_set(erase_race_hook, t);
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        swap_hook_set(NULL, NULL);
        assert_int_equal(erase_race_rounds, 3); /* the write, the exchange back, the merge */
        assert_int_equal(st.n_deleted, 1);
        assert_int_equal(st.n_skipped, 0);
        assert_int_equal(st.n_failed, 0);
        logs = test_read_rel(t->qwen, H_MY_NOTES "/logs.json");
        assert_string_equal(logs, "[\n  " LOGS_ROW(S_OTHER, 0, "kept \\u00e9") ",\n  "
                                  LOGS_ROW(S_OTHER, 1, "kept two") ",\n  "
                                  LOGS_ROW(S_OTHER, 2, "typed meanwhile") "\n]");
        org = test_read_rel(t->qwen, ORG_PATH);
        assert_string_equal(org, ORG_AFTER);
        assert_false(fixture_exists(t->qwen, P_NOTES "/" S_FH ".jsonl"));
        assert_false(fixture_exists(t->qwen, H_MY_NOTES "/.logs.json.qgc-tmp"));
        assert_false(fixture_exists(t->qwen, H_MY_NOTES "/.logs.json.qgc-tmp2"));
        log = test_read_rel(t->root, "journal.log");
        assert_non_null(strstr(log, "removed 2 prompt history row(s) of session " S_FH));
}

/* Another session of the project is live: the shared files are not edited, the session stays. */
static void test_actions_erase_waits_for_live_project(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_FH, VERB_DELETE }, {} };
        _cleanup_free_ char *logs = NULL, *log = NULL, *body = NULL;
        char host[256] = "localhost";
        ActionStats st = {};

        plant_shared(t);
        (void)gethostname(host, sizeof host - 1);
        /* a brand-new process of the project: a live claim for a session with no transcript */
        body = util_strprintf("{\"schema_version\":1,\"pid\":%d,\"session_id\":\"%s\",\"work_dir\":"
                              "\"/srv/demo/my-notes\",\"hostname\":\"%s\",\"started_at\":1.5}\n",
                              (int)getpid(), S_OTHER, host);
        assert_int_equal(fixture_write(t->qwen, P_NOTES "/" S_OTHER ".runtime.json", body), 0);
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_deleted, 0);
        assert_int_equal(st.n_skipped, 1);
        logs = test_read_rel(t->qwen, H_MY_NOTES "/logs.json");
        assert_string_equal(logs, LOGS_BEFORE);
        assert_true(fixture_exists(t->qwen, P_NOTES "/" S_FH ".jsonl"));
        log = test_read_rel(t->root, "journal.log");
        assert_non_null(strstr(log, "a Qwen process of the project may be live"));
}

/* A Qwen process of the project starts while the batch edits its shared files (after every
 * session's own check): the files not yet edited are left alone, the sessions kept. */
static void erase_start_qwen_hook(void *userdata, const char *name) {
        T *t = userdata;
        _cleanup_free_ char *body = NULL;
        char host[256] = "localhost";

        if (!streq(name, "logs.json") || fixture_exists(t->qwen, P_NOTES "/" S_OTHER ".runtime.json"))
                return;
        (void)gethostname(host, sizeof host - 1);
        body = util_strprintf("{\"schema_version\":1,\"pid\":%d,\"session_id\":\"%s\",\"work_dir\":"
                              "\"/srv/demo/my-notes\",\"hostname\":\"%s\",\"started_at\":1.5}\n",
                              (int)getpid(), S_OTHER, host);
        assert_int_equal(fixture_write(t->qwen, P_NOTES "/" S_OTHER ".runtime.json", body), 0);
}

static void test_actions_erase_rechecks_project_before_each_file(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_FH, VERB_DELETE }, { S_KILLED, VERB_DELETE }, {} };
        _cleanup_free_ char *org_before = NULL, *org = NULL, *log = NULL;
        ActionStats st = {};

        plant_shared(t);
        org_before = test_read_rel(t->qwen, ORG_PATH);
        swap_hook_set(erase_start_qwen_hook, t);
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        swap_hook_set(NULL, NULL);
        assert_int_equal(st.n_deleted, 0);
        assert_int_equal(st.n_skipped, 2);
        org = test_read_rel(t->qwen, ORG_PATH);
        assert_string_equal(org, org_before);
        assert_true(fixture_exists(t->qwen, P_NOTES "/" S_FH ".jsonl"));
        assert_true(fixture_exists(t->qwen, P_NOTES "/" S_KILLED ".jsonl"));
        log = test_read_rel(t->root, "journal.log");
        assert_non_null(strstr(log, "a Qwen process of the project may be live"));
}

/* ---------------------------------------------------------------- delete */

static void test_actions_delete_removes_exactly_the_named_files(void **state) {
        T *t = *state;
        _cleanup_free_ char *before = NULL, *after = NULL, *log = NULL;
        ApplyPick picks[] = { { S_DEBUG, VERB_DELETE }, {} };
        ActionStats st = {};
        const char *planted[] = {
                P_WEB "/" S_DEBUG ".worktree.json",
                P_WEB "/" S_DEBUG ".pr.json",
                P_WEB "/archive/" S_DEBUG ".ledger.jsonl",
                "file-history/" S_DEBUG "/0123456789abcdef@v1",
                "projects/-srv-demo-webapp/subagents/" S_DEBUG "/agent-x.jsonl",
                "plans/" S_DEBUG ".md",
        };
        const char *gone[] = {
                P_WEB "/" S_DEBUG ".jsonl",
                P_WEB "/" S_DEBUG ".worktree.json",
                P_WEB "/" S_DEBUG ".pr.json",
                P_WEB "/archive/" S_DEBUG ".ledger.jsonl",
                "file-history/" S_DEBUG,
                "file-history/" S_DEBUG "/0123456789abcdef@v1",
                "projects/-srv-demo-webapp/subagents/" S_DEBUG,
                "projects/-srv-demo-webapp/subagents/" S_DEBUG "/agent-x.jsonl",
                "plans/" S_DEBUG ".md",
                "debug/" S_DEBUG ".txt",
                P_WEB "/" S_DEBUG ".runtime.json",
        };

        for (size_t i = 0; i < ELEMENTSOF(planted); i++)
                assert_int_equal(fixture_write(t->qwen, planted[i], "{}\n"), 0);
        assert_int_equal(apply_plant_dead_claim(t->qwen, P_WEB, S_DEBUG, false), 0);
        /* what must stay: another session's writer lock, the registry, logs.json, other claims */
        assert_int_equal(fixture_write(t->qwen, "tmp/session-writer-locks/" S_WEB ".lock", "{}"), 0);
        assert_int_equal(fixture_write(t->qwen, "plans/" S_WEB ".md", "plan"), 0);
        before = snapshot_no_atime(t->qwen);

        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_deleted, 1);
        assert_int_equal(st.n_failed, 0);
        after = snapshot_no_atime(t->qwen);

        for (size_t i = 0; i < ELEMENTSOF(gone); i++) {
                assert_true(has_line(before, gone[i]));
                if (has_line(after, gone[i]))
                        fail_msg("still present: %s", gone[i]);
        }
        /* every other entry is unchanged (files: size, mode, mtime, content) */
        for (const char *l = before; *l;) {
                const char *nl = strchr(l, '\n');
                _cleanup_free_ char *line = strndup(l, (size_t)(nl - l));
                char path[1024];
                bool is_gone = false;
                assert_int_equal(sscanf(line, "%1023s", path), 1);
                for (size_t i = 0; i < ELEMENTSOF(gone); i++)
                        is_gone = is_gone || streq(path, gone[i]);
                if (!is_gone && !strstr(after, line))
                        fail_msg("changed or removed: %s", line);
                l = nl + 1;
        }
        assert_int_equal(apply_usage_lines(t->qwen, S_DEBUG), 1); /* had one: no second */
        log = test_read_rel(t->root, "journal.log");
        assert_non_null(strstr(log, "QGC_ACTION=deleted"));
        assert_non_null(strstr(log, "QGC_SESSION=" S_DEBUG));
        assert_non_null(strstr(log, "QGC_RUN=0123456789abcdef0123456789abcdef"));
}

/* The test program's own unlinkat() and fstatat() (the library's calls resolve to them): they
 * count, while lookups_id is set, the lookups of that session's names that found nothing. */
static const char *lookups_id;
static unsigned lookups_unlink_enoent, lookups_stat_enoent;
static unsigned lookups_seen; /* every call naming the session's files: the wrappers are called */

static bool lookups_counts(const char *path) {
        size_t n = lookups_id ? strlen(lookups_id) : 0;

        /* the transcript's own name is looked up by name on purpose: the copy checks */
        return n > 0 && strncmp(path, lookups_id, n) == 0 &&
               (path[n] != '.' || !streq(path + n, ".jsonl"));
}

int unlinkat(int dfd, const char *path, int flags) {
        long r = syscall(SYS_unlinkat, dfd, path, flags);

        if (lookups_id && strncmp(path, lookups_id, strlen(lookups_id)) == 0)
                lookups_seen++;
        if (r < 0 && errno == ENOENT && lookups_counts(path))
                lookups_unlink_enoent++;
        return (int)r;
}

int fstatat(int dfd, const char *restrict path, struct stat *restrict st, int flags) {
        long r = syscall(SYS_newfstatat, dfd, path, st, flags);

        if (lookups_id && strncmp(path, lookups_id, strlen(lookups_id)) == 0)
                lookups_seen++;
        if (r < 0 && errno == ENOENT && lookups_counts(path))
                lookups_stat_enoent++;
        return (int)r;
}

/* A delete of a session that has none of its optional files (no sidecar, file-history,
 * subagents, debug log, plan, review directory) looks none of them up by name: the batch's
 * listings of those directories say they are absent (issue 14: 106k fstatat() and 30k unlinkat()
 * of absent names per 5694 deletes). The tree is exactly as before but for the transcript. */
static void test_actions_delete_looks_up_no_absent_file(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_TEXT, VERB_DELETE }, {} };
        ActionStats st = {};

        /* the directories exist, with other sessions' files in them */
        assert_int_equal(fixture_write(t->qwen, "plans/" S_WEB ".md", "plan"), 0);
        assert_int_equal(fixture_write(t->qwen, "debug/" S_WEB ".txt", "log"), 0);
        assert_int_equal(fixture_write(t->qwen, "file-history/" S_WEB "/a@v1", "x"), 0);
        assert_int_equal(fixture_write(t->qwen, P_API "/archive/" S_API ".pr.json", "{}"), 0);
        assert_int_equal(fixture_write(t->qwen, P_API "/" S_FORK ".worktree.json", "{}"), 0);
        assert_int_equal(fixture_write(t->qwen,
                                       "projects/-srv-demo-api-server/subagents/" S_API "/a.jsonl",
                                       "{}\n"),
                         0);
        lookups_id = S_TEXT;
        lookups_unlink_enoent = lookups_stat_enoent = lookups_seen = 0;
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        lookups_id = NULL;
        /* the library's calls reach the counting wrappers (the transcript's own unlink and copy
         * checks at least): a count of 0 below means something */
        assert_true(lookups_seen > 0);
        assert_int_equal(st.n_deleted, 1);
        assert_int_equal(st.n_failed, 0);
        assert_false(fixture_exists(t->qwen, P_API "/" S_TEXT ".jsonl"));
        assert_true(fixture_exists(t->qwen, P_API "/" S_FORK ".worktree.json"));
        assert_true(fixture_exists(t->qwen, P_API "/archive/" S_API ".pr.json"));
        assert_true(fixture_exists(t->qwen, "file-history/" S_WEB "/a@v1"));
        if (lookups_unlink_enoent != 0 || lookups_stat_enoent != 0)
                fail_msg("%u unlinkat() and %u fstatat() of absent files of the session",
                         lookups_unlink_enoent, lookups_stat_enoent);
}

/* The rest of a delete (after its transcript went) lists its directories afresh: files of the
 * session that appeared after the marker's listings (here while the shared files are edited)
 * are removed all the same, never missed for an old listing. */
static void erase_plant_hook(void *userdata, const char *name) {
        T *t = userdata;

        (void)name;
        assert_int_equal(fixture_write(t->qwen, P_NOTES "/" S_FH ".pr.json", "{}"), 0);
        assert_int_equal(fixture_write(t->qwen, P_NOTES "/archive/" S_FH ".ledger.jsonl", "{}\n"), 0);
        assert_int_equal(fixture_write(t->qwen, "plans/" S_FH ".md", "plan"), 0);
        assert_int_equal(fixture_write(t->qwen, "debug/" S_FH ".txt", "log"), 0);
}

static void test_actions_delete_rest_lists_afresh(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_FH, VERB_DELETE }, {} };
        ActionStats st = {};

        plant_shared(t);
        /* the directories exist before the run, so that the marker's step lists them */
        assert_int_equal(fixture_write(t->qwen, "plans/" S_WEB ".md", "plan"), 0);
        assert_int_equal(fixture_write(t->qwen, "debug/" S_WEB ".txt", "log"), 0);
        assert_int_equal(fixture_write(t->qwen, P_NOTES "/archive/" S_NOTES ".pr.json", "{}"), 0);
        swap_hook_set(erase_plant_hook, t);
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        swap_hook_set(NULL, NULL);
        assert_int_equal(st.n_deleted, 1);
        assert_int_equal(st.n_failed, 0);
        assert_false(fixture_exists(t->qwen, P_NOTES "/" S_FH ".jsonl"));
        assert_false(fixture_exists(t->qwen, P_NOTES "/" S_FH ".pr.json"));
        assert_false(fixture_exists(t->qwen, P_NOTES "/archive/" S_FH ".ledger.jsonl"));
        assert_false(fixture_exists(t->qwen, "plans/" S_FH ".md"));
        assert_false(fixture_exists(t->qwen, "debug/" S_FH ".txt"));
        assert_false(fixture_exists(t->qwen, "file-history/" S_FH));
        assert_true(fixture_exists(t->qwen, "plans/" S_WEB ".md"));
        assert_true(fixture_exists(t->qwen, P_NOTES "/archive/" S_NOTES ".pr.json"));
}

/* A file of the session that appears after the rest of the delete listed its directory is a
 * file kept, never one removed by mistake: here a sidecar written into chats/ just after its
 * listing stays, and the delete is done (qwen-steps.c: a listing is a snapshot). */
static void list_plant_hook(void *userdata, int dir_fd) {
        T *t = userdata;
        _cleanup_free_ char *chats = fixture_path(t->qwen, P_NOTES);
        struct stat a, b;

        if (fstat(dir_fd, &a) < 0 || stat(chats, &b) < 0 || a.st_ino != b.st_ino ||
            fixture_exists(t->qwen, P_NOTES "/" S_FH ".jsonl"))
                return; /* only chats/ of the rest of the delete, after the transcript went */
        assert_int_equal(fixture_write(t->qwen, P_NOTES "/" S_FH ".worktree.json", "{}"), 0);
}

/* The executor's directory listings (ld --wrap=fs_dir_next): list_hook runs with the listed
 * directory when a listing ends. */
static void (*list_hook)(void *userdata, int dir_fd);
static void *list_hook_userdata;
int __real_fs_dir_next(FsDir *d, const char **ret_name, unsigned char *ret_type);
int __wrap_fs_dir_next(FsDir *d, const char **ret_name, unsigned char *ret_type);
int __wrap_fs_dir_next(FsDir *d, const char **ret_name, unsigned char *ret_type) {
        int k = __real_fs_dir_next(d, ret_name, ret_type);

        if (k == 0 && list_hook)
                list_hook(list_hook_userdata, d->fd);
        return k;
}

static void test_actions_delete_keeps_what_appears_after_listing(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_FH, VERB_DELETE }, {} };
        ActionStats st = {};

        list_hook = list_plant_hook;
        list_hook_userdata = t;
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        list_hook = NULL;
        assert_int_equal(st.n_deleted, 1);
        assert_int_equal(st.n_failed, 0);
        assert_false(fixture_exists(t->qwen, P_NOTES "/" S_FH ".jsonl"));
        assert_false(fixture_exists(t->qwen, "file-history/" S_FH));
        assert_true(fixture_exists(t->qwen, P_NOTES "/" S_FH ".worktree.json"));
}

static void test_actions_delete_archived_session(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_ARCH, VERB_DELETE }, {} };
        ActionStats st = {};

        assert_true(fixture_exists(t->qwen, P_SCRATCH "/archive/" S_ARCH ".jsonl"));
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_deleted, 1);
        assert_false(fixture_exists(t->qwen, P_SCRATCH "/archive/" S_ARCH ".jsonl"));
        assert_true(fixture_exists(t->qwen, P_SCRATCH "/" S_SCRATCH ".jsonl"));
        assert_int_equal(apply_usage_lines(t->qwen, S_ARCH), 1);
}

/* ---------------------------------------------------------------- salvage */

/* Make the SIGKILLed session (the one without a usage line) not live: drop its stale claim
 * and registry record (Qwen's own sweep would). */
static void unlive_killed(T *t) {
        _cleanup_free_ char *c = fixture_path(t->qwen, P_NOTES "/" S_KILLED ".runtime.json");
        _cleanup_free_ char *r = fixture_path(t->qwen, "sessions/8887.json");
        assert_int_equal(unlink(c), 0);
        assert_int_equal(unlink(r), 0);
}

static char *last_line(const char *buf) {
        size_t n = strlen(buf);
        const char *p;

        if (n == 0)
                return strdup("");
        p = buf + n - 1; /* the final '\n' */
        while (p > buf && p[-1] != '\n')
                p--;
        return strdup(p);
}

/* A copy of the session appearing in the other place after the scan (Qwen's TUI recreating
 * chats/<id>.jsonl by path, or a restore) makes a conflict: the delete of the archived copy is
 * skipped, and the id's file-history, which the live copy uses, stays. */
static void test_actions_delete_with_copy_appearing_after_scan_skips(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_ARCH, VERB_DELETE }, {} };
        ApplyRun a = {};
        ActionStats st = {};

        assert_int_equal(apply_prepare(t->qwen, picks, &a), 0);
        assert_int_equal(a.plan.n_items, 1);
        assert_int_equal(fixture_write(t->qwen, P_SCRATCH "/" S_ARCH ".jsonl", "{}\n"), 0);
        assert_int_equal(fixture_write(t->qwen, "file-history/" S_ARCH "/f@v1", "backup"), 0);
        assert_int_equal(test_run_plan(&a.plan, &st), 0);
        apply_run_done(&a);
        assert_int_equal(st.n_deleted, 0);
        assert_int_equal(st.n_skipped, 1);
        assert_true(fixture_exists(t->qwen, P_SCRATCH "/archive/" S_ARCH ".jsonl"));
        assert_true(fixture_exists(t->qwen, P_SCRATCH "/" S_ARCH ".jsonl"));
        assert_true(fixture_exists(t->qwen, "file-history/" S_ARCH "/f@v1"));
}

/* The executor's outcome of an archive move that finds something in the way is the step's, not
 * its text's: a transcript appearing in chats/archive/ after the scan is a conflict (skipped,
 * no errno); both copies of the .worktree.json sidecar, also -EEXIST, are a failure. */
static void test_actions_archive_conflict_skips_sidecar_clash_fails(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_TEXT, VERB_ARCHIVE }, {} };
        _cleanup_free_ char *log = NULL;
        ApplyRun a = {};
        ActionStats st = {};

        assert_int_equal(apply_prepare(t->qwen, picks, &a), 0);
        assert_int_equal(fixture_write(t->qwen, P_API "/archive/" S_TEXT ".jsonl", "{}\n"), 0);
        assert_int_equal(test_run_plan(&a.plan, &st), 0);
        apply_run_done(&a);
        assert_int_equal(st.n_archived, 0);
        assert_int_equal(st.n_skipped, 1);
        assert_int_equal(st.n_failed, 0);
        assert_true(fixture_exists(t->qwen, P_API "/" S_TEXT ".jsonl"));
        log = test_read_rel(t->root, "journal.log");
        assert_non_null(strstr(log, "QGC_ACTION=skipped "));
        assert_non_null(strstr(log, "): target transcript exists (conflict)\" "));
        assert_null(strstr(log, "ERRNO="));

        _cleanup_free_ char *copy = fixture_path(t->qwen, P_API "/archive/" S_TEXT ".jsonl");
        assert_int_equal(unlink(copy), 0);
        assert_int_equal(apply_prepare(t->qwen, picks, &a), 0);
        assert_int_equal(fixture_write(t->qwen, P_API "/" S_TEXT ".worktree.json", "{}\n"), 0);
        assert_int_equal(fixture_write(t->qwen, P_API "/archive/" S_TEXT ".worktree.json", "{}\n"),
                         0);
        st = (ActionStats){};
        assert_int_equal(test_run_plan(&a.plan, &st), 1);
        apply_run_done(&a);
        assert_int_equal(st.n_skipped, 0);
        assert_int_equal(st.n_failed, 1);
        free(log);
        log = test_read_rel(t->root, "journal.log");
        assert_non_null(strstr(log, "QGC_ACTION=failed "));
        assert_non_null(strstr(log, "): both copies of the .worktree.json sidecar exist: File "
                                    "exists\" "));
        assert_non_null(strstr(log, " ERRNO=17"));
}

static void test_actions_delete_salvages_golden_record_once(void **state) {
        T *t = *state;
        _cleanup_free_ char *golden = apply_golden_record(S_KILLED);
        _cleanup_free_ char *usage = NULL, *last = NULL;
        ApplyPick picks[] = { { S_KILLED, VERB_DELETE }, {} };
        ActionStats st = {};

        unlive_killed(t);
        assert_non_null(golden);
        assert_int_equal(apply_usage_lines(t->qwen, S_KILLED), 0);

        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_deleted, 1);
        assert_int_equal(st.n_salvaged, 1);
        assert_false(fixture_exists(t->qwen, P_NOTES "/" S_KILLED ".jsonl"));
        assert_false(fixture_exists(t->qwen, "file-history/" S_KILLED));
        usage = test_read_rel(t->qwen, "usage_record.jsonl");
        last = last_line(usage);
        assert_string_equal(last, golden);
        assert_int_equal(apply_usage_lines(t->qwen, S_KILLED), 1);

        /* a second run finds nothing to do for it */
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_deleted, 0);
        assert_int_equal(apply_usage_lines(t->qwen, S_KILLED), 1);
}

/* Qwen dedupes usage on the first record's sessionId, not on the file name: an upper-case file
 * name whose record says the lower-case id, with a line for that id already, gets no second line. */
static void test_actions_delete_dedupes_on_record_session_id(void **state) {
        T *t = *state;
        _cleanup_free_ char *golden = apply_golden_record(S_KILLED);
        _cleanup_free_ char *from = fixture_path(t->qwen, P_NOTES "/" S_KILLED ".jsonl");
        _cleanup_free_ char *to = fixture_path(t->qwen, P_NOTES "/6DCFB8C0-951C-475B-9CA1-0D8837BEAD38.jsonl");
        _cleanup_free_ char *usage = fixture_path(t->qwen, "usage_record.jsonl");
        ApplyPick picks[] = { { "6DCFB8C0-951C-475B-9CA1-0D8837BEAD38", VERB_DELETE }, {} };
        ActionStats st = {};
        FILE *f;

        unlive_killed(t);
        assert_non_null(golden);
        assert_int_equal(rename(from, to), 0);
        f = fopen(usage, "a");
        assert_non_null(f);
        fprintf(f, "%s\n", golden);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(apply_usage_lines(t->qwen, S_KILLED), 1);

        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_deleted, 1);
        assert_int_equal(st.n_salvaged, 0);
        assert_false(fixture_exists(t->qwen, P_NOTES "/6DCFB8C0-951C-475B-9CA1-0D8837BEAD38.jsonl"));
        assert_int_equal(apply_usage_lines(t->qwen, S_KILLED), 1);
}

static void test_actions_archive_salvages_and_rerun_never_duplicates(void **state) {
        T *t = *state;
        _cleanup_free_ char *golden = apply_golden_record(S_KILLED);
        _cleanup_free_ char *usage = NULL, *last = NULL;
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        ApplyPick picks[] = { { S_KILLED, VERB_ARCHIVE }, {} };
        ActionStats st = {};

        unlive_killed(t);
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_archived, 1);
        assert_int_equal(st.n_salvaged, 1);
        usage = test_read_rel(t->qwen, "usage_record.jsonl");
        last = last_line(usage);
        assert_string_equal(last, golden);

        /* restore, archive again: the line is there, so nothing is appended */
        assert_int_equal(apply_scan(t->qwen, &inv), 0);
        assert_int_equal(test_restore(inv, S_KILLED, false, NULL), 0);
        assert_true(fixture_exists(t->qwen, P_NOTES "/" S_KILLED ".jsonl"));
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_archived, 1);
        assert_int_equal(st.n_salvaged, 0);
        assert_int_equal(apply_usage_lines(t->qwen, S_KILLED), 1);
}

/* ---------------------------------------------------------------- changed since scan */

static void test_actions_append_after_scan_skips(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_TEXT, VERB_DELETE }, { S_FORK, VERB_ARCHIVE }, {} };
        ApplyRun a = {};
        ActionStats st = {};
        _cleanup_free_ char *log = NULL;

        assert_int_equal(apply_prepare(t->qwen, picks, &a), 0);
        assert_int_equal(a.plan.n_items, 2);
        /* Qwen appends by path after the scan */
        assert_int_equal(fixture_append(t->qwen, P_API "/" S_TEXT ".jsonl", "{\"type\":\"user\"}\n"), 0);
        assert_int_equal(fixture_append(t->qwen, P_API "/" S_FORK ".jsonl", "{\"type\":\"user\"}\n"), 0);
        assert_int_equal(test_run_plan(&a.plan, &st), 0);
        apply_run_done(&a);

        assert_int_equal(st.n_skipped, 2);
        assert_int_equal(st.n_deleted + st.n_archived, 0);
        assert_true(fixture_exists(t->qwen, P_API "/" S_TEXT ".jsonl"));
        assert_true(fixture_exists(t->qwen, P_API "/" S_FORK ".jsonl"));
        assert_false(fixture_exists(t->qwen, P_API "/archive"));
        log = test_read_rel(t->root, "journal.log");
        assert_non_null(strstr(log, "QGC_ACTION=skipped"));
        assert_non_null(strstr(log, "QGC_REASON=\"changed since scan\""));
}

static void test_actions_replaced_after_scan_skips(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_TEXT, VERB_DELETE }, {} };
        _cleanup_free_ char *body = test_read_rel(t->qwen, P_API "/" S_TEXT ".jsonl");
        ApplyRun a = {};
        ActionStats st = {};

        assert_int_equal(apply_prepare(t->qwen, picks, &a), 0);
        /* same bytes, new inode (an atomic rewrite) */
        assert_int_equal(fixture_write(t->qwen, P_API "/tmpcopy", body), 0);
        _cleanup_free_ char *from = fixture_path(t->qwen, P_API "/tmpcopy");
        _cleanup_free_ char *to = fixture_path(t->qwen, P_API "/" S_TEXT ".jsonl");
        assert_int_equal(rename(from, to), 0);
        assert_int_equal(test_run_plan(&a.plan, &st), 0);
        apply_run_done(&a);
        assert_int_equal(st.n_skipped, 1);
        assert_true(fixture_exists(t->qwen, P_API "/" S_TEXT ".jsonl"));
}

static void test_actions_liveness_after_scan_skips(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_TEXT, VERB_DELETE }, {} };
        ApplyRun a = {};
        ActionStats st = {};
        _cleanup_free_ char *log = NULL;

        assert_int_equal(apply_prepare(t->qwen, picks, &a), 0);
        assert_int_equal(a.plan.n_items, 1);
        /* a Qwen writer takes the session's lease after the scan (a malformed lock is live) */
        assert_int_equal(fixture_write(t->qwen, "tmp/session-writer-locks/" S_TEXT ".lock", "{"), 0);
        assert_int_equal(test_run_plan(&a.plan, &st), 0);
        apply_run_done(&a);
        assert_int_equal(st.n_skipped, 1);
        assert_int_equal(st.n_deleted, 0);
        assert_true(fixture_exists(t->qwen, P_API "/" S_TEXT ".jsonl"));
        assert_true(fixture_exists(t->qwen, "tmp/session-writer-locks/" S_TEXT ".lock"));
        log = test_read_rel(t->root, "journal.log");
        assert_non_null(strstr(log, "in use since scan"));
}

/* A same-size rewrite with the old mtime put back (cp -p, rsync --inplace, a restore from a
 * backup) keeps dev, ino, size and mtime: only ctime tells. The rewrite
 * is repeated until the file's ctime differs from the scan's: ctime moves in ticks (a few ms on
 * tmpfs or ext4, a second on some file systems), and a rewrite in the scan's tick would be one
 * no stat can see. */
static void test_actions_same_size_rewrite_after_scan_skips(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_TEXT, VERB_DELETE }, {} };
        _cleanup_free_ char *path = fixture_path(t->qwen, P_API "/" S_TEXT ".jsonl");
        _cleanup_free_ char *body = NULL;
        ApplyRun a = {};
        ActionStats st = {};
        struct stat before, after;
        int fd;

        assert_int_equal(apply_prepare(t->qwen, picks, &a), 0);
        assert_int_equal(a.plan.n_items, 1);
        assert_int_equal(lstat(path, &before), 0);
        for (msec_t deadline = util_now_msec() + 5 * MSEC_PER_SEC;;) {
                fd = open(path, O_WRONLY | O_CLOEXEC);
                assert_true(fd >= 0);
                assert_int_equal(pwrite(fd, "{", 1, 0), 1); /* same byte count, same first byte */
                assert_int_equal(pwrite(fd, "X", 1, before.st_size - 2), 1);
                assert_int_equal(close(fd), 0);
                struct timespec ts[2] = { before.st_atim, before.st_mtim };
                assert_int_equal(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW), 0);
                assert_int_equal(lstat(path, &after), 0);
                if (after.st_ctim.tv_sec != before.st_ctim.tv_sec ||
                    after.st_ctim.tv_nsec != before.st_ctim.tv_nsec)
                        break;
                if (util_now_msec() > deadline)
                        fail_msg("the file's ctime did not change in 5 s of rewrites");
                (void)sched_yield();
        }
        assert_int_equal(after.st_size, before.st_size);
        assert_int_equal(after.st_ino, before.st_ino);
        assert_true(after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
                    after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);

        assert_int_equal(test_run_plan(&a.plan, &st), 0);
        apply_run_done(&a);
        assert_int_equal(st.n_skipped, 1);
        assert_int_equal(st.n_deleted, 0);
        body = test_read_rel(t->qwen, P_API "/" S_TEXT ".jsonl");
        assert_int_equal(body[before.st_size - 2], 'X');
}

/* Deleting a session removes G/file-history/<id>/ by fd on G's filesystem: a mount there (an
 * admin's bind mount of shared data) is never emptied. Runs in a child with its own mount
 * namespace; skipped where namespaces are not available. */
static void test_actions_delete_never_crosses_into_mount(void **state) {
        T *t = *state;

        if (!fixture_can_mount())
                /* before any allocation: a skip does not run _cleanup_ */
                test_skip("needs a mount namespace");
        _cleanup_free_ char *mnt = fixture_path(t->qwen, "file-history/" S_TEXT);
        int status = 0;
        pid_t pid;

        assert_int_equal(fixture_mkdir(t->qwen, "file-history/" S_TEXT), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                ApplyPick picks[] = { { S_TEXT, VERB_DELETE }, {} };
                ActionStats st = {};
                if (fixture_enter_mount_namespace() < 0 || mount("tmpfs", mnt, "tmpfs", 0, "mode=0755") < 0)
                        _exit(77);
                if (fixture_write(mnt, "shared.txt", "not this session's") < 0)
                        _exit(2);
                (void)apply_execute(t->qwen, picks, &st);
                if (fixture_exists(t->qwen, P_API "/" S_TEXT ".jsonl"))
                        _exit(3); /* the transcript itself goes */
                _exit(fixture_exists(mnt, "shared.txt") ? 0 : 1);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) == 77)
                test_skip("the child could not mount a tmpfs in its mount namespace");
        if (WEXITSTATUS(status) == 1)
                fail_msg("the delete emptied a filesystem mounted at file-history/<id>/");
        assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---------------------------------------------------------------- restore */

static void test_actions_restore_moves_session_back(void **state) {
        T *t = *state;
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        ApplyPick picks[] = { { S_TEXT, VERB_ARCHIVE }, {} };
        ActionStats st = {};
        _cleanup_free_ char *lg = NULL;
        ino_t ino = inode_of(t->qwen, P_API "/" S_TEXT ".jsonl");

        assert_int_equal(fixture_write(t->qwen, P_API "/" S_TEXT ".worktree.json", "{}\n"), 0);
        assert_int_equal(fixture_write(t->qwen, P_API "/" S_TEXT ".ledger.jsonl", "{\"a\":1}\n"), 0);
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_archived, 1);
        /* something wrote a new active ledger meanwhile: restore prepends the archived lines */
        assert_int_equal(fixture_write(t->qwen, P_API "/" S_TEXT ".ledger.jsonl", "{\"b\":2}\n"), 0);

        assert_int_equal(apply_scan(t->qwen, &inv), 0);
        assert_int_equal(test_restore(inv, S_TEXT, false, NULL), 0);
        assert_int_equal(inode_of(t->qwen, P_API "/" S_TEXT ".jsonl"), ino);
        assert_false(fixture_exists(t->qwen, P_API "/archive/" S_TEXT ".jsonl"));
        assert_true(fixture_exists(t->qwen, P_API "/" S_TEXT ".worktree.json"));
        assert_false(fixture_exists(t->qwen, P_API "/archive/" S_TEXT ".worktree.json"));
        assert_false(fixture_exists(t->qwen, P_API "/archive/" S_TEXT ".ledger.jsonl"));
        lg = test_read_rel(t->qwen, P_API "/" S_TEXT ".ledger.jsonl");
        assert_string_equal(lg, "{\"a\":1}\n{\"b\":2}\n");
}

static void test_actions_restore_refused_with_active_copy(void **state) {
        T *t = *state;
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        _cleanup_free_ char *body = test_read_rel(t->qwen, P_SCRATCH "/archive/" S_ARCH ".jsonl");
        _cleanup_free_ char *before = NULL, *after = NULL, *log = NULL;
        ActionStats st = {};

        assert_int_equal(fixture_write(t->qwen, P_SCRATCH "/" S_ARCH ".jsonl", body), 0);
        before = snapshot_no_atime(t->qwen);
        assert_int_equal(apply_scan(t->qwen, &inv), 0);
        /* the run fails its one step (a conflict: qwen_restore_run()'s -EEXIST) */
        assert_int_equal(test_restore(inv, S_ARCH, false, &st), 1);
        assert_int_equal(st.n_failed, 1);
        assert_int_equal(st.n_restored, 0);
        log = test_read_rel(t->root, "journal.log");
        assert_non_null(strstr(log, "QGC_ACTION=failed "));
        assert_non_null(strstr(log, ": an active copy exists (conflict)\" "));
        after = snapshot_no_atime(t->qwen);
        assert_string_equal(before, after);
}

static void test_actions_restore_unknown_id_fails(void **state) {
        T *t = *state;
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        _cleanup_free_ char *log = NULL;
        ActionStats st = {};

        assert_int_equal(apply_scan(t->qwen, &inv), 0);
        assert_int_equal(test_restore(inv, "00000000-0000-0000-0000-000000000000", false, NULL), -ENOENT);
        /* active: nothing to restore; the run fails its one step, and says why */
        assert_int_equal(test_restore(inv, S_TEXT, false, &st), 1);
        assert_int_equal(st.n_failed, 1);
        assert_int_equal(st.n_restored, 0);
        log = test_read_rel(t->root, "journal.log");
        assert_non_null(strstr(log, "QGC_ACTION=failed "));
        assert_non_null(strstr(log, ": not archived\" "));
}

/* ---------------------------------------------------------------- recovery pass */

/* Write a pending marker for session id of project pd (as a delete does before its first step),
 * listing the files rels (root G when prefixed "G:", transcripts when prefixed "T:"). */
static void recover_plant_marker(const char *qwen, const char *id, const char *pd,
                                 const char *const *rels) {
        _cleanup_(recover_marker_done) RecoverMarker m = { .session = strdup(id),
                                                           .project_dir = strdup(pd) };
        _cleanup_close_ int gfd = open(qwen, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ char *name = NULL;
        struct stat st;

        assert_true(gfd >= 0);
        for (const char *const *r = rels; *r; r++) {
                bool g = strncmp(*r, "G:", 2) == 0, tr = strncmp(*r, "T:", 2) == 0;
                const char *rp = g || tr ? *r + 2 : *r;
                _cleanup_free_ char *path = fixture_path(qwen, rp);
                assert_int_equal(lstat(path, &st), 0);
                assert_int_equal(recover_marker_add(&m, g, rp, &st, tr), 0);
        }
        assert_int_equal(fstat(gfd, &st), 0);
        RecoverMarker *mp = &m;
        assert_int_equal(recover_marker_write_many(gfd, st.st_dev, &mp, 1, NULL, NULL, &name), 0);
        assert_non_null(name);
}

static int pending_count(const char *qwen) {
        _cleanup_free_ char *p = fixture_path(qwen, RECOVER_PENDING_DIR);
        DIR *d = opendir(p);
        struct dirent *de;
        int n = 0;

        while (d && (de = readdir(d)))
                n += de->d_name[0] != '.';
        if (d)
                closedir(d);
        return n;
}

static void test_recover_finishes_interrupted_delete(void **state) {
        T *t = *state;
        const char *const files[] = {
                "T:" P_WEB "/" S_DEBUG ".jsonl", P_WEB "/" S_DEBUG ".pr.json",
                P_WEB "/" S_DEBUG ".ledger.jsonl", "debug/" S_DEBUG ".txt", "G:plans/" S_DEBUG ".md",
                NULL,
        };
        ActionStats st = {};
        _cleanup_free_ char *lg = NULL;

        assert_int_equal(fixture_write(t->qwen, P_WEB "/" S_DEBUG ".pr.json", "{\"prs\":[]}\n"), 0);
        assert_int_equal(fixture_write(t->qwen, P_WEB "/" S_DEBUG ".ledger.jsonl", "a\n"), 0);
        assert_int_equal(fixture_write(t->qwen, "plans/" S_DEBUG ".md", "plan\n"), 0);
        recover_plant_marker(t->qwen, S_DEBUG, "-srv-demo-webapp", files);
        assert_int_equal(pending_count(t->qwen), 1);
        /* the run died right after the transcript went; a writer appended to the ledger since */
        _cleanup_free_ char *tp = fixture_path(t->qwen, P_WEB "/" S_DEBUG ".jsonl");
        assert_int_equal(unlink(tp), 0);
        assert_int_equal(fixture_append(t->qwen, P_WEB "/" S_DEBUG ".ledger.jsonl", "b\n"), 0);

        assert_int_equal(apply_execute(t->qwen, NULL, &st), 0);
        assert_int_equal(st.n_recovered, 1);
        assert_false(fixture_exists(t->qwen, P_WEB "/" S_DEBUG ".pr.json"));
        assert_false(fixture_exists(t->qwen, "debug/" S_DEBUG ".txt"));
        assert_false(fixture_exists(t->qwen, "plans/" S_DEBUG ".md"));
        assert_true(fixture_exists(t->qwen, P_WEB "/" S_DEBUG ".ledger.jsonl")); /* changed: kept */
        assert_int_equal(pending_count(t->qwen), 0);
        lg = test_read_rel(t->root, "journal.log");
        assert_non_null(strstr(lg, "QGC_ACTION=recovered QGC_SESSION=" S_DEBUG));

        /* a rerun has nothing left to recover */
        assert_int_equal(apply_execute(t->qwen, NULL, &st), 0);
        assert_int_equal(st.n_recovered, 0);
}

static void test_recover_marker_with_transcript_drops_only_the_marker(void **state) {
        T *t = *state;
        const char *const files[] = { "T:" P_API "/" S_TEXT ".jsonl", P_API "/" S_TEXT ".pr.json",
                                      NULL };
        ActionStats st = {};
        _cleanup_free_ char *lg = NULL;

        assert_int_equal(fixture_write(t->qwen, P_API "/" S_TEXT ".pr.json", "{\"prs\":[]}\n"), 0);
        recover_plant_marker(t->qwen, S_TEXT, "-srv-demo-api-server", files);
        assert_int_equal(apply_execute(t->qwen, NULL, &st), 0);
        assert_int_equal(st.n_recovered, 1);
        assert_true(fixture_exists(t->qwen, P_API "/" S_TEXT ".jsonl"));
        assert_true(fixture_exists(t->qwen, P_API "/" S_TEXT ".pr.json"));
        assert_int_equal(pending_count(t->qwen), 0);
        lg = test_read_rel(t->root, "journal.log");
        assert_non_null(strstr(lg, "transcript of the session exists"));
}

static void test_recover_marker_parse_refuses_other_paths(void **state) {
        static const char *const bad[] = {
                "T R 1 2 3 4 5 usage_record.jsonl",
                "f R 1 2 3 4 5 projects/p/chats/../../../etc/passwd",
                "f R 1 2 3 4 5 projects/other/chats/" S_TEXT ".pr.json",
                "f G 1 2 3 4 5 projects/p/chats/" S_TEXT ".pr.json",
                "d G 1 2 3 4 5 file-history",
                "f R 1 2 3 4 5 projects/p/chats/" S_TEXT ".9x.runtime.json",
                "x R 1 2 3 4 5 projects/p/chats/" S_TEXT ".pr.json",
        };
        RecoverMarker m = {};
        (void)state;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *text = util_strprintf(
                        "qgc-pending-delete 1\nsession " S_TEXT "\nproject p\n%s\n", bad[i]);
                if (recover_marker_parse(text, &m) != -EBADMSG)
                        fail_msg("accepted: %s", bad[i]);
        }
        assert_int_equal(recover_marker_parse("qgc-pending-delete 1\nsession ..\nproject p\n"
                                              "f R 1 2 3 4 5 projects/p/chats/...pr.json\n", &m),
                         -EBADMSG);
        assert_int_equal(recover_marker_parse("qgc-pending-delete 1\nsession " S_TEXT "\nproject p\n"
                                              "f R 1 2 3 4 5 projects/p/chats/archive/" S_TEXT
                                              ".ledger.jsonl\n"
                                              "f R 1 2 3 4 5 projects/p/chats/" S_TEXT
                                              ".123.runtime.json\n"
                                              "d R 1 2 3 4 5 projects/p/subagents/" S_TEXT "\n"
                                              "d G 1 2 3 4 5 file-history/" S_TEXT "\n", &m),
                         0);
        assert_int_equal(m.n_files, 4);
        recover_marker_done(&m);
}

/* A batch's marker file holds several markers one after the other: each parsed with its own
 * session's path rules, and one bad path anywhere refuses the whole file. */
static void test_recover_batch_marker_parse(void **state) {
        const char *two = "qgc-pending-delete 1\nsession " S_TEXT "\nproject p\n"
                          "T R 1 2 3 4 5 projects/p/chats/" S_TEXT ".jsonl\n"
                          "qgc-pending-delete 1\nsession " S_KILLED "\nproject q\n"
                          "T R 1 2 3 4 5 projects/q/chats/archive/" S_KILLED ".jsonl\n"
                          "d G 1 2 3 4 5 file-history/" S_KILLED "\n";
        RecoverMarker m = {};
        _cleanup_free_ char *again = NULL;
        (void)state;

        assert_int_equal(recover_marker_parse(two, &m), 0);
        assert_string_equal(m.session, S_TEXT);
        assert_int_equal(m.n_files, 1);
        assert_non_null(m.next);
        assert_string_equal(m.next->session, S_KILLED);
        assert_string_equal(m.next->project_dir, "q");
        assert_int_equal(m.next->n_files, 2);
        assert_null(m.next->next);
        again = recover_marker_format(&m);
        assert_string_equal(again, two);
        recover_marker_done(&m);

        /* the second marker names a file of the first's session: refused whole */
        assert_int_equal(recover_marker_parse("qgc-pending-delete 1\nsession " S_TEXT
                                              "\nproject p\n"
                                              "T R 1 2 3 4 5 projects/p/chats/" S_TEXT ".jsonl\n"
                                              "qgc-pending-delete 1\nsession " S_KILLED
                                              "\nproject q\n"
                                              "f R 1 2 3 4 5 projects/p/chats/" S_TEXT
                                              ".pr.json\n",
                                              &m),
                         -EBADMSG);
}

/* The text of a batch marker file of n markers (sessions s0.., project p; each a transcript and
 * dead claims) of exactly size bytes (the last marker takes the rest, then empty lines, which
 * the parser skips as it always did, make it exact). */
static char *marker_batch_text(size_t n, size_t size) {
        StrBuf b = {};
        size_t budget = size / n;

        for (size_t i = 0; i < n; i++) {
                size_t start = b.len, k = 0;

                assert_true(strbuf_printf(&b, "qgc-pending-delete 1\nsession s%zu\nproject p\n"
                                              "T R 1 2 3 4 5 projects/p/chats/s%zu.jsonl\n", i, i) >= 0);
                for (;; k++) {
                        char line[128];
                        int l = snprintf(line, sizeof line,
                                         "f R 1 2 3 4 5 projects/p/chats/s%zu.%zu.runtime.json\n", i, k);
                        if ((i + 1 < n && b.len - start + (size_t)l > budget) ||
                            b.len + (size_t)l > size)
                                break;
                        assert_true(strbuf_printf(&b, "%s", line) >= 0);
                }
        }
        while (b.len < size)
                assert_true(strbuf_printf(&b, "\n") >= 0);
        assert_int_equal(b.len, size);
        return strbuf_steal(&b);
}

/* A marker file holds at most RECOVER_MARKERS_MAX markers and RECOVER_MARKER_MAX bytes: a text at
 * both maxima parses whole, one byte or one marker more is refused. */
static void test_recover_marker_parse_limits(void **state) {
        _cleanup_free_ char *text = marker_batch_text(RECOVER_MARKERS_MAX, RECOVER_MARKER_MAX);
        _cleanup_free_ char *more = NULL, *small = NULL;
        RecoverMarker m = {};
        size_t n = 0;
        (void)state;

        assert_int_equal(recover_marker_parse(text, &m), 0);
        for (const RecoverMarker *x = &m; x; x = x->next)
                n++;
        assert_int_equal(n, RECOVER_MARKERS_MAX);
        recover_marker_done(&m);

        more = util_strprintf("%s\n", text);
        assert_non_null(more);
        assert_int_equal(recover_marker_parse(more, &m), -EFBIG);

        small = marker_batch_text(RECOVER_MARKERS_MAX + 1, 1024 * 1024);
        assert_int_equal(recover_marker_parse(small, &m), -E2BIG);
}

/* The growth of the peak RSS (KiB) of parsing text, in a child (the kernel's high-water mark reset
 * first: clear_refs 5); the parse's result in *ret. */
static long marker_parse_peak_kib(const char *text, int *ret) {
        int pfd[2];
        long out[2] = { -1, 0 };
        pid_t pid;

        assert_int_equal(pipe(pfd), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                long res[2] = { -1, 0 }, before = -1, peak = -1;
                FILE *f = fopen("/proc/self/clear_refs", "we");
                RecoverMarker m = {};

                if (f && fputs("5", f) >= 0 && fclose(f) == 0) {
                        f = NULL;
                        _cleanup_free_ char *st = test_read("/proc/self/status");
                        const char *p = st ? strstr(st, "VmRSS:") : NULL;
                        before = p ? strtol(p + 6, NULL, 10) : -1;
                        res[1] = recover_marker_parse(text, &m);
                        recover_marker_done(&m);
                        _cleanup_free_ char *st2 = test_read("/proc/self/status");
                        p = st2 ? strstr(st2, "VmHWM:") : NULL;
                        peak = p ? strtol(p + 6, NULL, 10) : -1;
                        if (before >= 0 && peak >= 0)
                                res[0] = peak - before;
                }
                if (f)
                        fclose(f);
                _exit(write(pfd[1], res, sizeof res) == sizeof res ? 0 : 1);
        }
        close(pfd[1]);
        assert_int_equal(read(pfd[0], out, sizeof out), (ssize_t)sizeof out);
        close(pfd[0]);
        assert_int_equal(waitpid(pid, NULL, 0), pid);
        *ret = (int)out[1];
        return out[0];
}

/* A forged 1 MiB marker file of many small markers (issue 23: the old recursive parse copied the
 * rest of the text at every marker, 1 MiB took 2.9 GB): one pass, its memory a few times the
 * file's. At the marker limit it parses, past it it is refused; both well within 32 MiB. */
static void test_recover_marker_parse_forged_batch_bounded(void **state) {
        _cleanup_free_ char *at = marker_batch_text(RECOVER_MARKERS_MAX, 1024 * 1024);
        StrBuf b = {};
        _cleanup_free_ char *tiny = NULL;
        long kib;
        int r;
        (void)state;

        kib = marker_parse_peak_kib(at, &r);
        print_message("1 MiB of %u markers: peak RSS +%ld KiB\n", RECOVER_MARKERS_MAX, kib);
        assert_int_equal(r, 0);
        assert_true(kib >= 0); /* measured */
        if (kib > 32 * 1024)
                fail_msg("parsing 1 MiB of %u markers took %ld KiB", RECOVER_MARKERS_MAX, kib);

        /* as small as markers get, 1 MiB of them */
        for (size_t i = 0; b.len < 1024 * 1024; i++)
                assert_true(strbuf_printf(&b, "qgc-pending-delete 1\nsession s\nproject p\n") >= 0);
        tiny = strbuf_steal(&b);
        kib = marker_parse_peak_kib(tiny, &r);
        print_message("1 MiB of tiny markers: peak RSS +%ld KiB\n", kib);
        assert_int_equal(r, -E2BIG);
        assert_true(kib >= 0);
        if (kib > 32 * 1024)
                fail_msg("refusing 1 MiB of tiny markers took %ld KiB", kib);
}

/* Run apply_prepare() with stderr going to the file err below the fixture root. */
static int recover_prepare_stderr(T *t, ApplyRun *a, char **ret_err) {
        _cleanup_free_ char *path = fixture_path(t->root, "stderr.txt");
        int saved = dup(STDERR_FILENO), fd, r;

        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        assert_true(saved >= 0 && fd >= 0);
        fflush(stderr);
        assert_true(dup2(fd, STDERR_FILENO) >= 0);
        close(fd);
        r = apply_prepare(t->qwen, NULL, a);
        fflush(stderr);
        assert_true(dup2(saved, STDERR_FILENO) >= 0);
        close(saved);
        *ret_err = test_read(path);
        return r;
}

static size_t recover_delete_steps(const ApplyRun *a) {
        size_t n = 0;

        for (size_t i = 0; i < a->plan.n_steps; i++)
                n += a->plan.steps[i].kind == PLAN_STEP_RECOVER_DELETE;
        return n;
}

/* A marker file in G/.qgc/pending/ at the size limit is planned; one byte past it is reported
 * (its name cleaned) and ignored by the plan and by the run, which leaves it alone. */
static void test_recover_marker_file_over_limit_ignored(void **state) {
        T *t = *state;
        _cleanup_free_ char *text = marker_batch_text(RECOVER_MARKERS_MAX, RECOVER_MARKER_MAX);
        _cleanup_free_ char *err = NULL;
        _cleanup_free_ char *from = fixture_path(t->qwen, RECOVER_PENDING_DIR "/s0.1");
        _cleanup_free_ char *to = fixture_path(t->qwen, RECOVER_PENDING_DIR "/s0\033[1m.1");
        ApplyRun a = {};
        ActionStats st = {};

        assert_int_equal(fixture_write(t->qwen, RECOVER_PENDING_DIR "/s0.1", text), 0);
        assert_int_equal(recover_prepare_stderr(t, &a, &err), 0);
        assert_int_equal(recover_delete_steps(&a), 1);
        assert_null(strstr(err, "over the limit"));
        apply_run_done(&a);
        free(err);

        /* one byte more, under a name with a terminal escape */
        assert_int_equal(fixture_append(t->qwen, RECOVER_PENDING_DIR "/s0.1", "\n"), 0);
        assert_int_equal(rename(from, to), 0);
        assert_int_equal(recover_prepare_stderr(t, &a, &err), 0);
        assert_int_equal(recover_delete_steps(&a), 0);
        assert_non_null(strstr(err, "s0?[1m.1': pending marker file over the limit (bytes "));
        assert_null(strchr(err, '\033'));
        apply_run_done(&a);

        assert_int_equal(apply_execute(t->qwen, NULL, &st), 0);
        assert_int_equal(st.n_recovered, 0);
        assert_int_equal(pending_count(t->qwen), 1);
}

static void test_recover_stale_temp_files_removed(void **state) {
        T *t = *state;
        ActionStats st = {};
        _cleanup_free_ char *target = fixture_path(t->root, "outside");

        assert_int_equal(fixture_write(t->qwen, P_API "/." S_TEXT ".pr.json.qgc-tmp", "x"), 0);
        assert_int_equal(fixture_write(t->qwen, P_SCRATCH "/archive/." S_ARCH ".ledger.jsonl.qgc-tmp", "x"), 0);
        assert_int_equal(fixture_write(t->qwen, RECOVER_PENDING_DIR "/.m.qgc-tmp", "x"), 0);
        /* a shared-file edit killed before its rename (erase.c) */
        assert_int_equal(fixture_write(t->qwen, H_MY_NOTES "/.logs.json.qgc-tmp", "x"), 0);
        assert_int_equal(fixture_write(t->qwen, "projects/-srv-demo-my-notes/"
                                                ".session-organization.v1.json.qgc-tmp", "x"), 0);
        /* not ours: another name, a symlink, a directory */
        assert_int_equal(fixture_write(t->qwen, P_API "/.keep.tmp", "x"), 0);
        assert_int_equal(fixture_write(t->root, "outside", "keep"), 0);
        assert_int_equal(fixture_symlink(t->qwen, P_API "/.link.qgc-tmp", target), 0);
        assert_int_equal(fixture_mkdir(t->qwen, P_API "/.dir.qgc-tmp"), 0);

        assert_int_equal(apply_execute(t->qwen, NULL, &st), 0);
        assert_int_equal(st.n_recovered, 5);
        assert_false(fixture_exists(t->qwen, H_MY_NOTES "/.logs.json.qgc-tmp"));
        assert_false(fixture_exists(t->qwen, "projects/-srv-demo-my-notes/"
                                             ".session-organization.v1.json.qgc-tmp"));
        assert_false(fixture_exists(t->qwen, P_API "/." S_TEXT ".pr.json.qgc-tmp"));
        assert_false(fixture_exists(t->qwen, P_SCRATCH "/archive/." S_ARCH ".ledger.jsonl.qgc-tmp"));
        assert_false(fixture_exists(t->qwen, RECOVER_PENDING_DIR "/.m.qgc-tmp"));
        assert_true(fixture_exists(t->qwen, P_API "/.keep.tmp"));
        assert_true(fixture_exists(t->qwen, P_API "/.link.qgc-tmp"));
        assert_true(fixture_exists(t->qwen, P_API "/.dir.qgc-tmp"));
        assert_true(fixture_exists(t->root, "outside"));
}

/* An edit of a shared file killed between its two temp files' steps leaves the second,
 * ".<name>.qgc-tmp2" (erase-edit.c), which holds the text with the deleted sessions' rows: the
 * pass removes it like the first, also when no later run edits that file again. It was left. */
static void test_recover_stale_second_temp_file_removed(void **state) {
        T *t = *state;
        ActionStats st = {};

        assert_int_equal(fixture_write(t->qwen, H_MY_NOTES "/.logs.json.qgc-tmp2", "x"), 0);
        assert_int_equal(apply_execute(t->qwen, NULL, &st), 0);
        assert_int_equal(st.n_recovered, 1);
        assert_false(fixture_exists(t->qwen, H_MY_NOTES "/.logs.json.qgc-tmp2"));
}

/* ---------------------------------------------------------------- orphans */

#define ORPHAN_ID "0badf00d-0000-4000-8000-000000000001"

static void test_actions_orphan_file_history_reclaimed(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { ORPHAN_ID, VERB_DELETE }, {} };
        ActionStats st = {};

        assert_int_equal(fixture_write(t->qwen, "file-history/" ORPHAN_ID "/a@v1", "backup"), 0);
        assert_int_equal(fixture_symlink(t->qwen, "file-history/" ORPHAN_ID "/link", "/etc"), 0);
        assert_int_equal(fixture_age(t->qwen, "file-history/" ORPHAN_ID, 90 * 86400), 0);
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_orphans, 1);
        assert_false(fixture_exists(t->qwen, "file-history/" ORPHAN_ID));
        assert_true(fixture_exists(t->qwen, "file-history/" S_FH));
        assert_int_equal(access("/etc/passwd", F_OK), 0);
}

static void test_actions_orphan_with_new_transcript_skipped(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { ORPHAN_ID, VERB_DELETE }, {} };
        ApplyRun a = {};
        ActionStats st = {};

        assert_int_equal(fixture_write(t->qwen, "file-history/" ORPHAN_ID "/a@v1", "backup"), 0);
        assert_int_equal(apply_prepare(t->qwen, picks, &a), 0);
        assert_int_equal(a.plan.n_items, 1);
        assert_int_equal(fixture_write(t->qwen, P_WEB "/" ORPHAN_ID ".jsonl", "{}\n"), 0);
        assert_int_equal(test_run_plan(&a.plan, &st), 0);
        apply_run_done(&a);
        assert_int_equal(st.n_skipped, 1);
        assert_true(fixture_exists(t->qwen, "file-history/" ORPHAN_ID "/a@v1"));
}

/* Qwen follows a symlinked projects/<dir>; a transcript there means the file-history is not an
 * orphan, whatever the scan saw. */
static void test_actions_orphan_with_transcript_in_symlinked_project_skipped(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { ORPHAN_ID, VERB_DELETE }, {} };
        _cleanup_free_ char *elsewhere = fixture_path(t->root, "elsewhere");
        ApplyRun a = {};
        ActionStats st = {};

        assert_int_equal(fixture_write(t->qwen, "file-history/" ORPHAN_ID "/a@v1", "backup"), 0);
        assert_int_equal(apply_prepare(t->qwen, picks, &a), 0);
        assert_int_equal(a.plan.n_items, 1);
        assert_int_equal(fixture_write(t->root, "elsewhere/chats/" ORPHAN_ID ".jsonl", "{}\n"), 0);
        assert_int_equal(fixture_symlink(t->qwen, "projects/-srv-linked", elsewhere), 0);
        assert_int_equal(test_run_plan(&a.plan, &st), 0);
        apply_run_done(&a);
        assert_int_equal(st.n_orphans, 0);
        assert_int_equal(st.n_skipped, 1);
        assert_true(fixture_exists(t->qwen, "file-history/" ORPHAN_ID "/a@v1"));
        assert_true(fixture_exists(t->root, "elsewhere/chats/" ORPHAN_ID ".jsonl"));
}

static void test_actions_empty_project_removed_without_recursion(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { "-tmp-gone", VERB_DELETE }, {} };
        ActionStats st = {};

        assert_int_equal(fixture_mkdir(t->qwen, "projects/-tmp-gone/chats"), 0);
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_orphans, 1);
        assert_false(fixture_exists(t->qwen, "projects/-tmp-gone"));
        assert_true(fixture_exists(t->qwen, "projects/-srv-demo-scratch/chats"));
}

static void test_actions_empty_project_refilled_skipped(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { "-tmp-gone", VERB_DELETE }, {} };
        ApplyRun a = {};
        ActionStats st = {};

        assert_int_equal(fixture_mkdir(t->qwen, "projects/-tmp-gone/chats"), 0);
        assert_int_equal(apply_prepare(t->qwen, picks, &a), 0);
        assert_int_equal(a.plan.n_items, 1);
        /* Qwen starts a session there after the scan */
        assert_int_equal(fixture_write(t->qwen, "projects/-tmp-gone/chats/" ORPHAN_ID ".jsonl", "{}\n"), 0);
        assert_int_equal(test_run_plan(&a.plan, &st), 0);
        apply_run_done(&a);
        assert_int_equal(st.n_skipped, 1);
        assert_int_equal(st.n_orphans, 0);
        assert_true(fixture_exists(t->qwen, "projects/-tmp-gone/chats/" ORPHAN_ID ".jsonl"));
}

/* ---------------------------------------------------------------- lock, fsutil, merges */

static void test_lock_tree_second_holder_refused(void **state) {
        T *t = *state;
        _cleanup_free_ char *missing = fixture_path(t->root, "nothing-here");
        _cleanup_free_ char *lockp = fixture_path(t->qwen, ".qgc.lock");
        struct stat st;
        int a, b, c;

        a = lock_tree(t->qwen);
        assert_true(a >= 0);
        b = lock_tree(t->qwen);
        assert_int_equal(b, -EWOULDBLOCK);
        assert_int_equal(stat(lockp, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
        close(a);
        c = lock_tree(t->qwen);
        assert_true(c >= 0);
        close(c);
        assert_int_equal(lock_tree(missing), -ENOENT);
}

/* The configured root itself may be a symlink (~/.qwen on another disk; the scan follows it):
 * a real run locks and acts there, while everything below the root stays no-follow. */
static void test_actions_symlinked_root_locks_and_acts(void **state) {
        T *t = *state;
        _cleanup_free_ char *link = fixture_path(t->root, "dot-qwen");
        ApplyPick picks[] = { { S_TEXT, VERB_DELETE }, {} };
        ActionStats st = {};
        int fd;

        assert_int_equal(fixture_symlink(t->root, "dot-qwen", t->qwen), 0);
        fd = lock_tree(link);
        assert_true(fd >= 0);
        assert_int_equal(lock_tree(t->qwen), -EWOULDBLOCK); /* one lock, whichever path names it */
        /* the run takes the same lock through the link: refused while it is held, nothing done */
        assert_int_equal(apply_execute(link, picks, &st), -EWOULDBLOCK);
        assert_true(fixture_exists(t->qwen, P_API "/" S_TEXT ".jsonl"));
        close(fd);
        assert_int_equal(apply_execute(link, picks, &st), 0);
        assert_int_equal(st.n_deleted, 1);
        assert_int_equal(st.n_failed, 0);
        assert_false(fixture_exists(t->qwen, P_API "/" S_TEXT ".jsonl"));

        /* root is not led elsewhere by another user's symlink */
        if (geteuid() == 0) {
                assert_int_equal(lchown(link, 4242, 4242), 0);
                assert_int_equal(lock_tree(link), -EPERM);
                assert_int_equal(fs_open_root(link, 0), -EPERM);
        }
}

static void test_fs_rm_rf_at_never_follows_symlinks(void **state) {
        T *t = *state;
        _cleanup_close_ int dfd = -EBADF;
        uint64_t bytes = 0, want;
        _cleanup_free_ char *outside = fixture_path(t->root, "outside");

        assert_int_equal(fixture_write(t->root, "outside/keep.txt", "precious"), 0);
        assert_int_equal(fixture_write(t->root, "victim/a/b/c.txt", "12345"), 0);
        assert_int_equal(fixture_symlink(t->root, "victim/a/link-dir", outside), 0);
        assert_int_equal(fixture_symlink(t->root, "victim/link-file", "../outside/keep.txt"), 0);
        dfd = open(t->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(dfd >= 0);
        want = fixture_du(t->root, "victim"); /* not what the links point to */
        assert_int_equal(rm_rf_at(dfd, "victim", 0, &bytes), 0);
        assert_int_equal(bytes, want);
        assert_false(fixture_exists(t->root, "victim"));
        assert_true(fixture_exists(t->root, "outside/keep.txt"));
        /* a symlink as the top entry is refused, not followed */
        assert_int_equal(fixture_symlink(t->root, "top-link", outside), 0);
        assert_int_equal(rm_rf_at(dfd, "top-link", 0, NULL), -ENOTDIR);
        assert_true(fixture_exists(t->root, "outside/keep.txt"));
        /* ENOENT is success */
        assert_int_equal(rm_rf_at(dfd, "never-was", 0, NULL), 0);
}

static void test_fs_open_path_refuses_symlinks_and_dotdot(void **state) {
        T *t = *state;
        _cleanup_close_ int dfd = open(t->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ char *outside = fixture_path(t->root, "outside");

        assert_int_equal(fixture_mkdir(t->root, "outside/x"), 0);
        assert_int_equal(fixture_mkdir(t->root, "in"), 0);
        assert_int_equal(fixture_symlink(t->root, "in/link", outside), 0);
        assert_int_equal(fs_open_path(dfd, "in/link/x", 0), -ELOOP); /* as openat2 says */
        assert_int_equal(fs_open_path(dfd, "in/../outside", 0), -EPERM);
        int fd = fs_open_path(dfd, "outside/x", 0);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(fs_open_path(dfd, "outside/x", 1), -EXDEV);
}

static void test_archive_merge_pr_table(void **state) {
        static const struct {
                const char *base, *incoming, *want_in, *want_out;
                int ret;
        } cases[] = {
                { "{\"prs\":[{\"number\":1,\"createdAt\":\"a\"}]}",
                  "{\"prs\":[{\"number\":2,\"createdAt\":\"b\"}]}", "\"number\": 2", NULL, 0 },
                /* the legacy single-object shape merges too */
                { "{\"number\":7,\"url\":\"x\",\"createdAt\":\"2026\"}",
                  "{\"prs\":[{\"number\":8,\"createdAt\":\"2027\"}]}", "\"number\": 7", NULL, 0 },
                /* a tie on createdAt: incoming wins */
                { "{\"prs\":[{\"number\":1,\"url\":\"old\",\"createdAt\":\"a\"}]}",
                  "{\"prs\":[{\"number\":1,\"url\":\"new\",\"createdAt\":\"a\"}]}", "new", "old", 0 },
                /* an older incoming binding loses */
                { "{\"prs\":[{\"number\":1,\"url\":\"keep\",\"createdAt\":\"b\"}]}",
                  "{\"prs\":[{\"number\":1,\"url\":\"stale\",\"createdAt\":\"a\"}]}", "keep", "stale", 0 },
                { "not json", "{\"prs\":[]}", NULL, NULL, -EBADMSG },
                { "{\"prs\":[{\"url\":\"no number\"}]}", "{\"prs\":[]}", NULL, NULL, -EBADMSG },
                { "[1,2]", "{\"prs\":[]}", NULL, NULL, -EBADMSG },
                /* what Qwen's JSON.parse refuses (json-c alone took them): NaN, a comment,
                 * bytes after the document */
                { "{\"prs\":[{\"number\":1,\"createdAt\":\"a\",\"x\":NaN}]}", "{\"prs\":[]}", NULL,
                  NULL, -EBADMSG },
                { "{\"prs\":[]} /* c */", "{\"prs\":[]}", NULL, NULL, -EBADMSG },
                { "{\"prs\":[]}", "{\"prs\":[]}x", NULL, NULL, -EBADMSG },
        };
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *out = NULL;
                int r = archive_merge_pr(cases[i].base, strlen(cases[i].base), cases[i].incoming,
                                         strlen(cases[i].incoming), &out);
                if (r != cases[i].ret)
                        fail_msg("case %zu: ret %d, want %d", i, r, cases[i].ret);
                if (r < 0)
                        continue;
                if (cases[i].want_in && !strstr(out, cases[i].want_in))
                        fail_msg("case %zu: '%s' not in %s", i, cases[i].want_in, out);
                if (cases[i].want_out && strstr(out, cases[i].want_out))
                        fail_msg("case %zu: '%s' in %s", i, cases[i].want_out, out);
        }
}

/* The merged document is what Qwen's atomicWriteJSON() writes, JSON.stringify(doc, null, 2), and
 * a '\n': the expected bytes are node's (an empty array stays "[]", 1.5e300 is "1.5e+300", "/"
 * and non-ASCII are not escaped). A NUL inside a document is not its end. */
static void test_archive_merge_pr_bytes(void **state) {
        static const char base[] = "{\"prs\":[{\"number\":1,\"createdAt\":\"a\",\"issues\":[]}]}";
        static const char incoming[] =
                "{\"prs\":[{\"number\":2,\"createdAt\":\"b\",\"x\":1.5e300,\"u\":\"\xc3\xa9/\"}]}";
        static const char want[] = "{\n"
                                   "  \"prs\": [\n"
                                   "    {\n"
                                   "      \"number\": 1,\n"
                                   "      \"createdAt\": \"a\",\n"
                                   "      \"issues\": []\n"
                                   "    },\n"
                                   "    {\n"
                                   "      \"number\": 2,\n"
                                   "      \"createdAt\": \"b\",\n"
                                   "      \"x\": 1.5e+300,\n"
                                   "      \"u\": \"\xc3\xa9/\"\n"
                                   "    }\n"
                                   "  ]\n"
                                   "}\n";
        static const char with_nul[] = "{\"prs\":[]}\0{";
        _cleanup_free_ char *out = NULL, *out2 = NULL;
        (void)state;

        assert_int_equal(archive_merge_pr(base, strlen(base), incoming, strlen(incoming), &out), 0);
        assert_string_equal(out, want);
        assert_int_equal(archive_merge_pr(with_nul, sizeof(with_nul) - 1, base, strlen(base), &out2),
                         -EBADMSG);
}

static void test_archive_merge_pr_caps_at_limit(void **state) {
        StrBuf a = {}, b = {};
        _cleanup_free_ char *out = NULL;
        (void)state;

        strbuf_printf(&a, "{\"prs\":[");
        strbuf_printf(&b, "{\"prs\":[");
        for (int i = 0; i < 8; i++) {
                strbuf_printf(&a, "%s{\"number\":%d,\"createdAt\":\"2026-01-%02d\"}", i ? "," : "", i, i + 1);
                strbuf_printf(&b, "%s{\"number\":%d,\"createdAt\":\"2026-02-%02d\"}", i ? "," : "", 100 + i, i + 1);
        }
        strbuf_printf(&a, "]}");
        strbuf_printf(&b, "]}");
        assert_int_equal(archive_merge_pr(a.buf, a.len, b.buf, b.len, &out), 0);
        /* 16 bindings, the 10 newest stay: numbers 0..5 (January) are dropped */
        assert_null(strstr(out, "\"number\": 5,"));
        assert_non_null(strstr(out, "\"number\": 6,"));
        assert_non_null(strstr(out, "\"number\": 107,"));
        strbuf_done(&a);
        strbuf_done(&b);
}

static void test_archive_merge_ledger_table(void **state) {
        static const struct {
                const char *dst, *src;
                bool append;
                int ret;
                const char *want;
        } cases[] = {
                { "a\n", "b\n", true, 1, "a\nb\n" },
                { "a", "b", true, 1, "a\nb\n" },           /* sealing newlines */
                { "a\n", "b\n", false, 1, "b\na\n" },      /* restore: archived lines first */
                { "a\nb\n", "b\n", true, 0, NULL },        /* merged before a crash */
                { "b\na\n", "b", false, 0, NULL },         /* same, restoring */
                { "", "b", true, 1, "b\n" },
                { "a\n", "", true, 0, NULL },              /* nothing to add */
        };
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *out = NULL;
                size_t n = 0;
                int r = archive_merge_ledger(cases[i].dst, strlen(cases[i].dst), cases[i].src,
                                             strlen(cases[i].src), cases[i].append, &out, &n);
                if (r != cases[i].ret)
                        fail_msg("case %zu: ret %d, want %d", i, r, cases[i].ret);
                if (r > 0 && (n != strlen(cases[i].want) || memcmp(out, cases[i].want, n) != 0))
                        fail_msg("case %zu: got '%.*s'", i, (int)n, out);
        }
}

/* syncq.h: every fsync pushed is done when syncq_wait() returns, each with its own result. */
static void test_syncq_runs_every_fsync(void **state) {
        char *root = NULL;
        SyncQ *q = NULL;
        int fds[40], errs[41];

        (void)state;
        assert_int_equal(fixture_new(&root), 0);
        assert_int_equal(syncq_new(&q), 0);
        for (size_t i = 0; i < ELEMENTSOF(fds); i++) {
                _cleanup_free_ char *name = util_strprintf("f%zu", i);
                _cleanup_free_ char *p = fixture_path(root, name);

                fds[i] = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
                assert_true(fds[i] >= 0);
                errs[i] = 1;
                syncq_push(q, fds[i], &errs[i]);
        }
        errs[40] = 1;
        syncq_push(q, -1, &errs[40]); /* not a file descriptor */
        syncq_wait(q);
        for (size_t i = 0; i < ELEMENTSOF(fds); i++) {
                assert_int_equal(errs[i], 0);
                close(fds[i]);
        }
        assert_int_equal(errs[40], -EBADF);
        syncq_wait(q); /* nothing pending: returns */
        q = syncq_free(q);
        assert_null(q);
        fixture_free(root);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_actions_archive_moves_transcript_and_sidecars, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_archive_worktree_collision_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_conflict_left_alone, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_archive_conflict_skips_sidecar_clash_fails,
                                                setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_archive_copy_appearing_after_scan_skips, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_delete_removes_exactly_the_named_files, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_delete_looks_up_no_absent_file, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_delete_batch_edits_shared_files_once, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_delete_rest_lists_afresh, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_delete_keeps_what_appears_after_listing, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_delete_erases_shared_rows, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_erase_concurrent_write_merged, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_erase_waits_for_live_project, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_erase_rechecks_project_before_each_file, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_actions_delete_archived_session, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_delete_with_copy_appearing_after_scan_skips, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_actions_delete_salvages_golden_record_once, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_delete_dedupes_on_record_session_id, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_actions_archive_salvages_and_rerun_never_duplicates, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_append_after_scan_skips, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_replaced_after_scan_skips, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_liveness_after_scan_skips, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_same_size_rewrite_after_scan_skips, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_delete_never_crosses_into_mount, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_restore_moves_session_back, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_archive_and_restore_are_recorded, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_restore_refused_with_active_copy, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_restore_unknown_id_fails, setup, teardown),
                cmocka_unit_test_setup_teardown(test_recover_finishes_interrupted_delete, setup, teardown),
                cmocka_unit_test(test_recover_batch_marker_parse),
                cmocka_unit_test_setup_teardown(test_recover_marker_with_transcript_drops_only_the_marker, setup, teardown),
                cmocka_unit_test(test_recover_marker_parse_refuses_other_paths),
                cmocka_unit_test(test_recover_marker_parse_limits),
                cmocka_unit_test(test_recover_marker_parse_forged_batch_bounded),
                cmocka_unit_test_setup_teardown(test_recover_marker_file_over_limit_ignored, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_recover_stale_second_temp_file_removed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_recover_stale_temp_files_removed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_orphan_file_history_reclaimed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_orphan_with_new_transcript_skipped, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_orphan_with_transcript_in_symlinked_project_skipped,
                                                setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_empty_project_removed_without_recursion, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_empty_project_refilled_skipped, setup, teardown),
                cmocka_unit_test_setup_teardown(test_lock_tree_second_holder_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_actions_symlinked_root_locks_and_acts, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fs_rm_rf_at_never_follows_symlinks, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fs_open_path_refuses_symlinks_and_dotdot, setup, teardown),
                cmocka_unit_test(test_archive_merge_pr_table),
                cmocka_unit_test(test_archive_merge_pr_bytes),
                cmocka_unit_test(test_archive_merge_pr_caps_at_limit),
                cmocka_unit_test(test_archive_merge_ledger_table),
                cmocka_unit_test(test_syncq_runs_every_fsync),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
