/* test_dc_run.c: the delete of Deep Code sessions through deepcode_store's run operations and
 * the executor (actions_run()): the index edited in Deep Code's exact format (texts written
 * by hand), a rewrite of the index by Deep Code at the edit's hook (nothing lost), an index not
 * in Deep Code's format refused (never rewritten), a project a Deep Code process works in
 * skipped by the executor's own check, a killed delete whose session Deep Code
 * resumed kept whole by the recovery, and a crash after every mutating step of a
 * delete of corpus sessions (tests/data/deepcode/home.tar.gz) followed by a normal rerun: never
 * an index entry whose transcript is gone, and the same tree as an unkilled run. The steps are
 * counted and crashed at through ld --wrap=actions_report_step (the hook of every step). */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actions.h"
#include "run-plan.h"
#include "dc-project.h"
#include "dc-hook.h"
#include "deepcode-store.h"
#include "fixture.h"
#include "journal.h"
#include "json.h"
#include "macro.h"
#include "plan.h"
#include "policy.h"
#include "scan.h"
#include "testdata.h"
#include "util.h"


typedef struct Run {
        Inventory *inv;
        Verdicts verdicts;
        Plan plan;
} Run;

static void run_done(Run *r) {
        for (size_t i = 0; i < r->verdicts.n_sessions; i++)
                free(r->verdicts.sessions[i].facts);
        free(r->verdicts.sessions);
        free(r->plan.items);
        inventory_free(r->inv);
        *r = (Run){};
}

/* Scan the store dc and plan DELETE for the sessions ids (NULL-terminated), KEEP the rest;
 * execute; return actions_run()'s result with the stats. */
static int run_delete(const char *dc, const char *const *ids, ActionStats *st) {
        ScanOptions so = { .now = util_now_msec() };
        Tree t = {};
        Run r = {};
        size_t n = 0;
        int k;

        assert_int_equal(inventory_new(&r.inv), 0);
        assert_int_equal(deepcode_store.tree_from_dir(dc, &t), 0);
        assert_int_equal(inventory_add_tree(r.inv, &t, NULL), 0);
        assert_int_equal(scan_all(r.inv, &so), 0);
        r.verdicts.n_sessions = r.inv->n_sessions;
        r.verdicts.sessions = calloc(r.inv->n_sessions + 1, sizeof(Verdict));
        r.plan.items = calloc(r.inv->n_sessions + 1, sizeof(PlanItem));
        assert_non_null(r.verdicts.sessions);
        assert_non_null(r.plan.items);
        for (size_t i = 0; i < r.inv->n_sessions; i++) {
                Verdict *v = &r.verdicts.sessions[i];

                v->verb = VERB_KEEP;
                v->rule = "test";
                v->facts = calloc(1, sizeof(VerdictFacts));
                assert_non_null(v->facts);
                for (const char *const *id = ids; *id; id++)
                        if (streq(*id, r.inv->sessions[i].id)) {
                                /* as the policy plans it: a rerun may find a session whose
                                 * entry a killed run removed (an unindexed file: not proven) */
                                if (r.inv->sessions[i].owner != OWNER_OK)
                                        continue;
                                v->verb = VERB_DELETE;
                                r.plan.items[n++] = (PlanItem){ .index = i, .verdict = v };
                        }
        }
        r.plan.inv = r.inv;
        r.plan.verdicts = &r.verdicts;
        r.plan.n_items = n;
        *st = (ActionStats){};
        k = test_run_plan(&r.plan, st);
        run_done(&r);
        return k;
}

/* ---------------------------------------------------------------- the index edit */


/* An index as Deep Code 0.2.1 writes it (JSON.stringify(index, null, 2), no newline at the
 * end), written by hand: escapes, a raw non-ASCII summary, an unescaped '/', numbers, null,
 * empty containers. */
#define ENTRY(id, extra)                                                                \
        "    {\n"                                                                       \
        "      \"id\": \"" id "\",\n"                                                   \
        "      \"summary\": \"fix \\\"quotes\\\" / ñandú\\nnext\\u0001\",\n"            \
        "      \"createTime\": \"2026-01-01T00:00:00.000Z\",\n"                         \
        "      \"updateTime\": \"2026-01-02T00:00:00.000Z\",\n"                         \
        "      \"status\": \"completed\",\n"                                            \
        "      \"usage\": {\n"                                                          \
        "        \"tokens\": 1234,\n"                                                   \
        "        \"cost\": 0.5\n"                                                       \
        "      },\n"                                                                    \
        "      \"processes\": " extra "\n"                                              \
        "    }"
#define TAIL "\n  ],\n  \"originalPath\": \"/srv/x\"\n}"

static const char index_12[] = HEAD ENTRY(ID1, "null") ",\n" ENTRY(ID2, "{}") TAIL;
static const char index_2[] = HEAD ENTRY(ID2, "{}") TAIL;
static const char index_123[] = HEAD ENTRY(ID1, "null") ",\n" ENTRY(ID2, "{}") ",\n"
        ENTRY(ID3, "[]") TAIL;
static const char index_23[] = HEAD ENTRY(ID2, "{}") ",\n" ENTRY(ID3, "[]") TAIL;
static const char index_1234[] = HEAD ENTRY(ID1, "null") ",\n" ENTRY(ID2, "{}") ",\n"
        ENTRY(ID3, "[]") ",\n" ENTRY(ID4, "{}") TAIL;
static const char index_234[] = HEAD ENTRY(ID2, "{}") ",\n" ENTRY(ID3, "[]") ",\n"
        ENTRY(ID4, "{}") TAIL;
static const char index_1_empty[] = "{\n  \"version\": 1,\n  \"entries\": [\n" ENTRY(ID1, "null")
        "\n  ],\n  \"originalPath\": \"/srv/x\"\n}";
static const char index_empty[] = "{\n  \"version\": 1,\n  \"entries\": [],\n"
                                  "  \"originalPath\": \"/srv/x\"\n}";

/* What Deep Code writes at qgc's replace of the index (__wrap_renameat()). */
static struct {
        const char *path, *before, *after;
        bool no_exchange;  /* the filesystem cannot exchange (EINVAL) */
        bool after_always; /* after every exchange onto the index, not once */
        unsigned n_after;
} dcw;

typedef struct T {
        char *root;
        char *dc;
        char *index;
} T;

static int setup(void **state) {
        T *t = calloc(1, sizeof(T));
        _cleanup_free_ char *log = NULL;

        assert_non_null(t);
        assert_int_equal(fixture_new(&t->root), 0);
        t->dc = fixture_path(t->root, "h/.deepcode");
        t->index = fixture_path(t->root, PROJ "/sessions-index.json");
        log = fixture_path(t->root, "actions.log");
        assert_int_equal(journal_open(JOURNAL_TARGET_FILE, log, "fedcba9876543210fedcba9876543210"),
                         0);
        hk = (typeof(hk)){};
        dcw = (typeof(dcw)){};
        *state = t;
        return 0;
}

static int teardown(void **state) {
        T *t = *state;

        journal_close();
        fixture_free(t->root);
        free(t->dc);
        free(t->index);
        free(t);
        return 0;
}

static void write_session(T *t, const char *id) {
        _cleanup_free_ char *rel = util_strprintf(PROJ "/%s.jsonl", id);
        _cleanup_free_ char *line = util_strprintf(
                "{\"id\":\"m1\",\"sessionId\":\"%s\",\"role\":\"user\",\"content\":\"hi\","
                "\"visible\":true,\"createTime\":\"2026-01-01T00:00:00.000Z\"}\n",
                id);
        _cleanup_free_ char *img = util_strprintf(PROJ "/images/%s/a.png", id);
        _cleanup_free_ char *ref = util_strprintf(PROJ "/file-history/.git/refs/heads/%s", id);
        _cleanup_free_ char *log = util_strprintf(PROJ "/file-history/.git/logs/refs/heads/%s", id);

        assert_int_equal(fixture_write(t->root, rel, line), 0);
        assert_int_equal(fixture_write(t->root, img, "png"), 0);
        assert_int_equal(fixture_write(t->root, ref, "0123456789abcdef0123456789abcdef01234567\n"),
                         0);
        assert_int_equal(fixture_write(t->root, log, "x\n"), 0);
}

static void fixture_store(T *t, const char *index) {
        assert_int_equal(fixture_write(t->root, PROJ "/sessions-index.json", index), 0);
        write_session(t, ID1);
        write_session(t, ID2);
}

static void check_gone(T *t, const char *id, bool gone) {
        _cleanup_free_ char *a = util_strprintf(PROJ "/%s.jsonl", id);
        _cleanup_free_ char *b = util_strprintf(PROJ "/images/%s", id);
        _cleanup_free_ char *c = util_strprintf(PROJ "/file-history/.git/refs/heads/%s", id);
        _cleanup_free_ char *d = util_strprintf(PROJ "/file-history/.git/logs/refs/heads/%s", id);

        assert_int_equal(fixture_exists(t->root, a), !gone);
        assert_int_equal(fixture_exists(t->root, b), !gone);
        assert_int_equal(fixture_exists(t->root, c), !gone);
        assert_int_equal(fixture_exists(t->root, d), !gone);
}

static void check_index(T *t, const char *want) {
        _cleanup_free_ char *got = test_read(t->index);

        assert_string_equal(got, want);
}

static void test_dc_delete_index_format(void **state) {
        T *t = *state;
        ActionStats st;

        fixture_store(t, index_12);
        assert_int_equal(run_delete(t->dc, (const char *const[]){ ID1, NULL }, &st), 0);
        assert_int_equal(st.n_deleted, 1);
        check_index(t, index_2);
        check_gone(t, ID1, true);
        check_gone(t, ID2, false);
        assert_false(fixture_exists(t->root, "h/.deepcode/.qgc"));
        /* the last entry: "entries": [] as JSON.stringify writes an empty array */
        assert_int_equal(fixture_write(t->root, PROJ "/sessions-index.json", index_1_empty), 0);
        write_session(t, ID1);
        assert_int_equal(run_delete(t->dc, (const char *const[]){ ID1, NULL }, &st), 0);
        assert_int_equal(st.n_deleted, 1);
        check_index(t, index_empty);
}

/* The index keeps its mode under the unit's UMask=0077: the new text's file gets the old one's
 * mode past the umask (Deep Code's other readers, a group, may read it). */
static void test_dc_delete_index_mode_under_umask(void **state) {
        T *t = *state;
        ActionStats st;
        struct stat sb;
        mode_t old;

        fixture_store(t, index_12);
        assert_int_equal(chmod(t->index, 0644), 0);
        old = umask(077);
        assert_int_equal(run_delete(t->dc, (const char *const[]){ ID1, NULL }, &st), 0);
        umask(old);
        assert_int_equal(st.n_deleted, 1);
        check_index(t, index_2);
        assert_int_equal(stat(t->index, &sb), 0);
        assert_int_equal(sb.st_mode & 07777, 0644);
}

/* Deep Code saves a new session into the index while qgc edits it: the edit is redone from its
 * text, and the new entry stays. */
static void test_dc_delete_index_rewritten_at_hook(void **state) {
        T *t = *state;
        ActionStats st;

        fixture_store(t, index_12);
        hk.rewrite_index = t->index;
        hk.rewrite_text = index_123;
        assert_int_equal(run_delete(t->dc, (const char *const[]){ ID1, NULL }, &st), 0);
        assert_null(hk.rewrite_text);
        assert_int_equal(st.n_deleted, 1);
        check_index(t, index_23);
        check_gone(t, ID1, true);
}

/* Deep Code writes the index as writeFileSync() does (in place: truncated, written) at the moment
 * qgc puts its new text in place (ld --wrap=renameat,renameat2: before the rename or exchange onto
 * the index, that is after every check of qgc's), and, with dcw.after, once more right after it
 * (into qgc's version, then at the name). */
int __real_renameat(int olddfd, const char *oldname, int newdfd, const char *newname);
int __wrap_renameat(int olddfd, const char *oldname, int newdfd, const char *newname);
int __real_renameat2(int olddfd, const char *oldname, int newdfd, const char *newname,
                     unsigned flags);
int __wrap_renameat2(int olddfd, const char *oldname, int newdfd, const char *newname,
                     unsigned flags);

static void dc_write_in_place(const char **text) {
        int fd;

        if (!*text)
                return;
        fd = open(dcw.path, O_WRONLY | O_TRUNC | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, *text, strlen(*text)), (ssize_t)strlen(*text));
        assert_int_equal(close(fd), 0);
        *text = NULL;
}

int __wrap_renameat(int olddfd, const char *oldname, int newdfd, const char *newname) {
        int r;

        if (streq(newname, "sessions-index.json"))
                dc_write_in_place(&dcw.before);
        r = __real_renameat(olddfd, oldname, newdfd, newname);
        if (r >= 0 && streq(newname, "sessions-index.json"))
                dc_write_in_place(&dcw.after);
        return r;
}

int __wrap_renameat2(int olddfd, const char *oldname, int newdfd, const char *newname,
                     unsigned flags) {
        int r;

        if (dcw.no_exchange && (flags & RENAME_EXCHANGE)) {
                errno = EINVAL;
                return -1;
        }
        if (streq(newname, "sessions-index.json"))
                dc_write_in_place(&dcw.before);
        r = __real_renameat2(olddfd, oldname, newdfd, newname, flags);
        if (r >= 0 && streq(newname, "sessions-index.json")) {
                /* every time another text: the text after, then n spaces */
                _cleanup_free_ char *after = dcw.after_always
                        ? util_strprintf("%s%*s", dcw.after, (int)++dcw.n_after, "") : NULL;
                const char *a = after;

                dc_write_in_place(dcw.after_always ? &a : &dcw.after);
        }
        return r;
}

/* Deep Code saves a new session into the index after qgc's last read of it, right before the
 * replace: the replace gives it back (Deep Code's write is not lost), and the edit is redone from
 * its text. */
static void test_dc_delete_index_written_at_replace(void **state) {
        T *t = *state;
        ActionStats st;

        fixture_store(t, index_12);
        dcw = (typeof(dcw)){ .path = t->index, .before = index_123 };
        assert_int_equal(run_delete(t->dc, (const char *const[]){ ID1, NULL }, &st), 0);
        assert_null(dcw.before);
        assert_int_equal(st.n_deleted, 1);
        check_index(t, index_23);
        check_gone(t, ID1, true);
        assert_false(fixture_exists(t->root, PROJ "/.sessions-index.json.qgc-tmp"));
}

/* ... and again right after it, into qgc's version at the name: that write is Deep Code's
 * newest, and is what the edit is redone from. */
static void test_dc_delete_index_written_at_and_after_replace(void **state) {
        T *t = *state;
        ActionStats st;

        fixture_store(t, index_12);
        dcw = (typeof(dcw)){ .path = t->index, .before = index_123, .after = index_1234 };
        assert_int_equal(run_delete(t->dc, (const char *const[]){ ID1, NULL }, &st), 0);
        assert_null(dcw.before);
        assert_null(dcw.after);
        assert_int_equal(st.n_deleted, 1);
        check_index(t, index_234);
        check_gone(t, ID1, true);
        assert_false(fixture_exists(t->root, PROJ "/.sessions-index.json.qgc-tmp"));
}

/* ... and after every exchange qgc makes: the rounds that put its versions back end, and its
 * last version is kept beside the index (never removed by qgc); the session stays. */
static void test_dc_delete_index_written_at_every_exchange(void **state) {
        T *t = *state;
        _cleanup_free_ char *dir = fixture_path(t->root, PROJ);
        struct dirent *de;
        ActionStats st;
        unsigned kept = 0;
        DIR *d;

        fixture_store(t, index_12);
        dcw = (typeof(dcw)){ .path = t->index, .before = index_123, .after = index_1234,
                             .after_always = true };
        _cleanup_free_ char *index = NULL;

        (void)run_delete(t->dc, (const char *const[]){ ID1, NULL }, &st);
        assert_int_equal(st.n_deleted, 0);
        assert_true(dcw.n_after > 8);
        index = test_read(t->index);
        assert_true(strneq(index, index_1234, strlen(index_1234)));
        check_gone(t, ID1, false);
        d = opendir(dir);
        assert_non_null(d);
        while ((de = readdir(d)))
                if (strneq(de->d_name, "sessions-index.json.qgc-unmerged-", 33)) {
                        _cleanup_free_ char *rel = util_strprintf(PROJ "/%s", de->d_name);
                        _cleanup_free_ char *got = NULL;

                        assert_int_equal(fixture_read(t->root, rel, &got, NULL), 0);
                        assert_true(strneq(got, index_1234, strlen(index_1234)));
                        kept++;
                }
        closedir(d);
        assert_int_equal(kept, 1);
        assert_false(fixture_exists(t->root, PROJ "/.sessions-index.json.qgc-tmp"));
}

/* Where the filesystem cannot exchange, a plain rename puts the edit in place. */
static void test_dc_delete_index_no_exchange(void **state) {
        T *t = *state;
        ActionStats st;

        fixture_store(t, index_12);
        dcw.no_exchange = true;
        assert_int_equal(run_delete(t->dc, (const char *const[]){ ID1, NULL }, &st), 0);
        assert_int_equal(st.n_deleted, 1);
        check_index(t, index_2);
        check_gone(t, ID1, true);
        assert_false(fixture_exists(t->root, PROJ "/.sessions-index.json.qgc-tmp"));
}

/* An index that parses but is not what Deep Code writes (compact), and one Deep Code turns
 * unparsable at the hook: never rewritten, the session kept whole, the delete skipped. */
static void test_dc_delete_index_not_deepcode_refused(void **state) {
        T *t = *state;
        static const char compact[] =
                "{\"version\":1,\"entries\":[{\"id\":\"" ID1 "\",\"status\":\"completed\"}],"
                "\"originalPath\":\"/srv/x\"}";
        static const char broken[] = "{\"version\":1,\"entries\":[";
        ActionStats st;

        fixture_store(t, compact);
        assert_int_equal(run_delete(t->dc, (const char *const[]){ ID1, NULL }, &st), 0);
        assert_int_equal(st.n_deleted, 0);
        assert_int_equal(st.n_skipped, 1);
        check_index(t, compact);
        check_gone(t, ID1, false);
        assert_false(fixture_exists(t->root, "h/.deepcode/.qgc"));

        assert_int_equal(fixture_write(t->root, PROJ "/sessions-index.json", index_12), 0);
        hk.rewrite_index = t->index;
        hk.rewrite_text = broken;
        assert_int_equal(run_delete(t->dc, (const char *const[]){ ID1, NULL }, &st), 0);
        assert_int_equal(st.n_deleted, 0);
        assert_int_equal(st.n_skipped, 1);
        check_index(t, broken);
        check_gone(t, ID1, false);
        assert_false(fixture_exists(t->root, PROJ "/.sessions-index.json.qgc-tmp"));
}

/* A Deep Code process works in the project: the executor's own check skips the delete (even
 * when the plan says delete), and nothing changes. */
static void test_dc_delete_live_project_skipped(void **state) {
        T *t = *state;
        _cleanup_free_ char *got = NULL, *log = NULL;
        ActionStats st;
        DcLive l;
        pid_t pid;

        dc_live_store(t->root, &l);
        pid = dc_process_start(l.work);
        assert_int_equal(run_delete(t->dc, (const char *const[]){ ID1, NULL }, &st), 0);
        dc_process_stop(pid);
        assert_int_equal(st.n_deleted, 0);
        assert_int_equal(st.n_skipped, 1);
        assert_int_equal(fixture_read(t->root, l.rel, &got, NULL), 0);
        assert_string_equal(got, l.index);
        assert_true(fixture_exists(t->root, l.jsonl));
        assert_false(fixture_exists(t->root, DC "/.qgc"));
        assert_int_equal(fixture_read(t->root, "actions.log", &log, NULL), 0);
        assert_non_null(strstr(log, "QGC_REASON=\"in use since scan: Deep Code pid "));
        dc_live_done(&l);
}

/* A run killed after its marker, then Deep Code resumes the session (its .jsonl grows): the
 * next run's recovery drops the marker and the session stays whole. */
static void test_dc_recover_resumed_session_kept(void **state) {
        T *t = *state;
        ActionStats st;
        int status = 0;
        pid_t pid;

        fixture_store(t, index_12);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                hk.crash_after = 2; /* the marker written, the index not yet */
                _exit(run_delete(t->dc, (const char *const[]){ ID1, NULL }, &st));
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 99);
        assert_true(fixture_exists(t->root, "h/.deepcode/.qgc/delete-" ID1));
        assert_int_equal(fixture_append(t->root, PROJ "/" ID1 ".jsonl",
                                        "{\"id\":\"m2\",\"sessionId\":\"" ID1 "\"}\n"), 0);
        assert_int_equal(run_delete(t->dc, (const char *const[]){ NULL }, &st), 0);
        assert_int_equal(st.n_recovered, 1);
        assert_int_equal(st.n_deleted, 0);
        check_index(t, index_12);
        check_gone(t, ID1, false);
        assert_false(fixture_exists(t->root, "h/.deepcode/.qgc"));
}

/* images/<id> a symlink (to a directory outside the store, with a file in it): the delete
 * removes the link and the session, never what it points to (before: the delete failed at
 * images/<id>/ after the index edit, its marker left for every later run to fail again). */
static void test_dc_delete_images_symlink(void **state) {
        T *t = *state;
        _cleanup_free_ char *img = fixture_path(t->root, PROJ "/images/" ID1);
        ActionStats st;

        fixture_store(t, index_12);
        assert_int_equal(fixture_write(t->root, "outside/keep.png", "mine"), 0);
        assert_int_equal(fixture_rm_rf(img), 0);
        assert_int_equal(fixture_symlink(t->root, PROJ "/images/" ID1, "../../../../outside"), 0);
        assert_int_equal(run_delete(t->dc, (const char *const[]){ ID1, NULL }, &st), 0);
        assert_int_equal(st.n_deleted, 1);
        assert_int_equal(st.n_failed, 0);
        check_index(t, index_2);
        check_gone(t, ID1, true);
        check_gone(t, ID2, false);
        assert_true(fixture_exists(t->root, "outside/keep.png"));
        assert_false(fixture_exists(t->root, "h/.deepcode/.qgc"));
}

/* file-history/.git/logs/refs/heads a symlink (to a directory outside, holding a file of the
 * session's name) and refs/heads/<id> a directory: the delete finishes, the branch left as Deep
 * Code's own delete leaves it, nothing outside touched (before: the delete failed after its
 * index edit, its marker left for every later run to fail again). */
static void test_dc_delete_refs_planted(void **state) {
        T *t = *state;
        _cleanup_free_ char *logs = fixture_path(t->root, PROJ "/file-history/.git/logs/refs/heads");
        _cleanup_free_ char *ref = fixture_path(t->root, PROJ "/file-history/.git/refs/heads/" ID1);
        ActionStats st;

        fixture_store(t, index_12);
        assert_int_equal(fixture_write(t->root, "outside/" ID1, "mine"), 0);
        assert_int_equal(fixture_rm_rf(logs), 0);
        assert_int_equal(fixture_symlink(t->root, PROJ "/file-history/.git/logs/refs/heads",
                                         "../../../../../../../outside"), 0);
        assert_int_equal(fixture_rm_rf(ref), 0);
        assert_int_equal(fixture_write(t->root, PROJ "/file-history/.git/refs/heads/" ID1 "/x",
                                       "0123456789abcdef0123456789abcdef01234567\n"), 0);
        assert_int_equal(run_delete(t->dc, (const char *const[]){ ID1, NULL }, &st), 0);
        assert_int_equal(st.n_deleted, 1);
        assert_int_equal(st.n_failed, 0);
        check_index(t, index_2);
        assert_false(fixture_exists(t->root, PROJ "/" ID1 ".jsonl"));
        assert_true(fixture_exists(t->root, "outside/" ID1));
        assert_false(fixture_exists(t->root, "h/.deepcode/.qgc"));
}

/* A killed delete's marker next to forged ones (garbage, one past the marker size limit): the
 * recovery finishes the real one and keeps and reports the forged ones (before: the first
 * forged marker listed stopped the recovery of every marker after it, in every run). */
static void test_dc_recover_forged_markers(void **state) {
        T *t = *state;
        ActionStats st;
        int status = 0;
        pid_t pid;

        fixture_store(t, index_12);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                hk.crash_after = 3; /* the marker written, the index edited */
                _exit(run_delete(t->dc, (const char *const[]){ ID1, NULL }, &st));
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 99);
        assert_true(fixture_exists(t->root, "h/.deepcode/.qgc/delete-" ID1));
        for (int i = 0; i < 16; i++) {
                _cleanup_free_ char *m = util_strprintf("h/.deepcode/.qgc/delete-f%02d", i);

                if (i == 0)
                        assert_int_equal(fixture_write_size(t->root, m, 1 << 20), 0);
                else
                        assert_int_equal(fixture_write(t->root, m, "code ../../x\nid ../\n"),
                                         0);
        }
        (void)run_delete(t->dc, (const char *const[]){ NULL }, &st);
        assert_int_equal(st.n_recovered, 1);
        assert_int_equal(st.n_failed, 1);
        check_index(t, index_2);
        check_gone(t, ID1, true);
        check_gone(t, ID2, false);
        assert_false(fixture_exists(t->root, "h/.deepcode/.qgc/delete-" ID1));
        assert_true(fixture_exists(t->root, "h/.deepcode/.qgc/delete-f00"));
        assert_true(fixture_exists(t->root, "h/.deepcode/.qgc/delete-f15"));
}

/* More markers than one run recovers (64), each well-formed and naming a project that does
 * not exist (so each is finished by its removal): a run takes 64, the next the rest. */
static void test_dc_recover_markers_bounded(void **state) {
        T *t = *state;
        ActionStats st;

        fixture_store(t, index_12);
        for (int i = 0; i < 64 + 3; i++) {
                _cleanup_free_ char *m = util_strprintf("h/.deepcode/.qgc/delete-m%04d", i);
                _cleanup_free_ char *text = util_strprintf(
                        "qgc deepcode delete 1\ncode -nope\nid m%04d\njsonl 0 0 0 0 0 0 0\n", i);

                assert_int_equal(fixture_write(t->root, m, text), 0);
        }
        assert_int_equal(run_delete(t->dc, (const char *const[]){ NULL }, &st), 0);
        assert_int_equal(st.n_recovered, 64);
        assert_int_equal(run_delete(t->dc, (const char *const[]){ NULL }, &st), 0);
        assert_int_equal(st.n_recovered, 3);
        assert_false(fixture_exists(t->root, "h/.deepcode/.qgc"));
        check_index(t, index_12);
}

/* ---------------------------------------------------------------- crash after every step */

/* corpus sessions: tools (a branch with checkpoints), its fork, one of a non-ASCII project */
static const char *const crash_ids[] = {
        "458313f1-0b4f-420b-9d20-b6c7a466945d",
        "ee4d9d2d-c295-4317-96f1-f5ea2c929a74",
        "ec5a9b46-2522-4510-ae13-5d441694b5ec",
        NULL,
};

/* No index names one of crash_ids without its transcript (each had one). */
static void check_visible_whole(const char *home) {
        _cleanup_free_ char *projects = util_strprintf("%s/.deepcode/projects", home);
        DIR *d = opendir(projects);
        struct dirent *de;

        assert_non_null(d);
        while ((de = readdir(d))) {
                _cleanup_free_ char *rel = util_strprintf("%s/sessions-index.json", de->d_name);
                _cleanup_free_ char *text = NULL;
                json_object *root = NULL, *entries = NULL;
                size_t n = 0;

                if (de->d_name[0] == '.' || fixture_read(projects, rel, &text, &n) < 0)
                        continue;
                assert_int_equal(json_parse(text, n, &root), 0);
                assert_true(json_object_object_get_ex(root, "entries", &entries));
                for (size_t i = 0; i < json_object_array_length(entries); i++) {
                        json_object *e = json_object_array_get_idx(entries, i);
                        const char *id = json_get_string(e, "id");

                        for (const char *const *c = crash_ids; *c && id; c++) {
                                _cleanup_free_ char *f =
                                        util_strprintf("%s/%s.jsonl", de->d_name, *c);

                                if (streq(id, *c) && !fixture_exists(projects, f))
                                        fail_msg("%s: an index entry without its transcript", f);
                        }
                }
                json_object_put(root);
        }
        closedir(d);
}

static void test_dc_crash_after_every_step(void **state) {
        T *t = *state;
        _cleanup_free_ char *tar = test_data_path("deepcode/home.tar.gz");
        _cleanup_free_ char *ref = NULL, *want = NULL, *cmd = NULL;
        ActionStats st;
        unsigned n;

        cmd = util_strprintf("mkdir -p '%s/ref' && tar xzf '%s' -C '%s/ref'", t->root, tar,
                             t->root);
        assert_int_equal(system(cmd), 0);
        ref = fixture_path(t->root, "ref/home/.deepcode");
        assert_int_equal(run_delete(ref, crash_ids, &st), 0);
        assert_int_equal(st.n_deleted, 3);
        assert_int_equal(st.n_failed, 0);
        want = fixture_snapshot_timeless(t->root, "ref/home");

        for (n = 1; n < 100; n++) {
                _cleanup_free_ char *dir = util_strprintf("%s/run-%u", t->root, n);
                _cleanup_free_ char *home = util_strprintf("%s/home", dir);
                _cleanup_free_ char *dc = util_strprintf("%s/home/.deepcode", dir);
                _cleanup_free_ char *rel = util_strprintf("run-%u/home", n);
                _cleanup_free_ char *c =
                        util_strprintf("mkdir -p '%s' && tar xzf '%s' -C '%s'", dir, tar, dir);
                _cleanup_free_ char *got = NULL;
                int status = 0;
                pid_t pid;

                assert_int_equal(system(c), 0);
                pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                        hk.crash_after = n;
                        _exit(run_delete(dc, crash_ids, &st) == 0 ? 0 : 1);
                }
                assert_int_equal(waitpid(pid, &status, 0), pid);
                assert_true(WIFEXITED(status));
                if (WEXITSTATUS(status) != 99) {
                        assert_int_equal(WEXITSTATUS(status), 0); /* every step was crashed at */
                        break;
                }
                check_visible_whole(home);
                /* the rerun: recovery first, then the same plan (what is still there) */
                assert_true(run_delete(dc, crash_ids, &st) >= 0);
                assert_int_equal(st.n_failed, 0);
                got = fixture_snapshot_timeless(t->root, rel);
                if (!streq(got, want))
                        fail_msg("crash after step %u, then a rerun: not the unkilled run's "
                                 "tree\n--- unkilled\n%s--- crashed\n%s", n, want, got);
                assert_int_equal(fixture_rm_rf(dir), 0);
        }
        print_message("crashed after each of %u steps\n", n - 1);
        assert_true(n > 15); /* 3 deletes of 5 to 7 steps each */
        assert_true(n < 100);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_dc_delete_index_format, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dc_delete_index_mode_under_umask, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_dc_delete_index_rewritten_at_hook, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_dc_delete_index_written_at_replace, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_dc_delete_index_written_at_and_after_replace,
                                                setup, teardown),
                cmocka_unit_test_setup_teardown(test_dc_delete_index_written_at_every_exchange,
                                                setup, teardown),
                cmocka_unit_test_setup_teardown(test_dc_delete_index_no_exchange, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dc_delete_index_not_deepcode_refused, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_dc_delete_live_project_skipped, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_dc_recover_resumed_session_kept, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_dc_delete_images_symlink, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dc_recover_forged_markers, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dc_delete_refs_planted, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dc_recover_markers_bounded, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dc_crash_after_every_step, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
