/* test_dc_cold.c: qgc's archive of Deep Code sessions (dc-archive.h) through deepcode_store's run
 * operations and the executor (actions_run()): an archive's layout (the index without the
 * entry in Deep Code's format, the transcript hard-linked byte for byte, the entry, the sorted
 * checkpoints, the images moved), a rewrite of the index by Deep Code at the edit's hook (nothing
 * lost), the re-checks (a transcript changed since the scan, an entry Deep Code changed at the
 * hook, an archive of the same id, a Deep Code process in the project, an archived id Deep Code
 * indexes again), and a crash after
 * every mutating step of an archive, a compress and a delete of archived corpus sessions
 * (tests/data/deepcode/home.tar.gz) followed by a normal rerun: never an index entry without its
 * transcript, never a session gone from the index without its archive files whole, and the
 * same tree as an unkilled run. Archived sessions the scan does not list are built by hand as
 * dc-archive.h's layout says. Steps are crashed at through ld --wrap=actions_report_step. */
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actions.h"
#include "run-plan.h"
#include "cold.h"
#include "dc-project.h"
#include "dc-hook.h"
#include "deepcode-store.h"
#include "fixture.h"
#include "fs.h"
#include "journal.h"
#include "json.h"
#include "macro.h"
#include "plan.h"
#include "policy.h"
#include "restore.h"
#include "scan.h"
#include "testdata.h"
#include "util.h"


/* The archive directory of id in the store dc (.qgc-archive/<code>/ holding <id>.jsonl or its
 * .zst), allocated; NULL when none. */
static char *archive_code(const char *dc, const char *id) {
        _cleanup_free_ char *top = util_strprintf("%s/.qgc-archive", dc);
        DIR *d = opendir(top);
        struct dirent *de;
        char *code = NULL;

        if (!d)
                return NULL;
        while (!code && (de = readdir(d))) {
                _cleanup_free_ char *j = util_strprintf("%s/%s/%s.jsonl", top, de->d_name, id);
                _cleanup_free_ char *z = util_strprintf("%s/%s/%s.jsonl.zst", top, de->d_name, id);

                if (de->d_name[0] != '.' && (access(j, F_OK) == 0 || access(z, F_OK) == 0))
                        code = strdup(de->d_name);
        }
        closedir(d);
        return code;
}

/* An archived session as the scan of .qgc-archive/ gives it (dc-archive.h's layout), by hand. */
static void add_archived(Inventory *inv, const char *dc, const char *id) {
        _cleanup_free_ char *code = archive_code(dc, id), *j = NULL, *z = NULL;
        Session s = { .state = SESSION_ARCHIVED, .owner = OWNER_OK, .tree = 0 };
        struct stat st;
        bool has_j, has_z;

        if (!code)
                return;
        j = util_strprintf("%s/.qgc-archive/%s/%s.jsonl", dc, code, id);
        z = util_strprintf("%s/.qgc-archive/%s/%s.jsonl.zst", dc, code, id);
        has_j = access(j, F_OK) == 0;
        has_z = access(z, F_OK) == 0;
        /* as Qwen's: both there (a compress cut short) is the plain one with a cold copy */
        s.cold = has_z && !has_j;
        s.cold_copy = has_j && has_z;
        assert_int_equal(lstat(s.cold ? z : j, &st), 0);
        fs_fileid_from_stat(&s.archived, &st);
        s.bytes = (uint64_t)st.st_size;
        strcpy(s.id, id);
        s.project_dir = strdup(code);
        assert_non_null(s.project_dir);
        assert_int_equal(inventory_add_session(inv, &s), 0);
}

/* Scan the store dc, plan verb for the sessions ids (NULL-terminated; ARCHIVE: the active ones,
 * else the archived ones, built by hand when the scan does not list them), KEEP the rest;
 * execute; actions_run()'s result with the stats. */
static int run_verb(const char *dc, const char *const *ids, Verb verb, ActionStats *st) {
        ScanOptions so = { .now = util_now_msec() };
        Verdicts verdicts = {};
        Plan plan = {};
        Inventory *inv = NULL;
        Tree t = {};
        size_t n = 0;
        int k;

        assert_int_equal(inventory_new(&inv), 0);
        assert_int_equal(deepcode_store.tree_from_dir(dc, &t), 0);
        assert_int_equal(inventory_add_tree(inv, &t, NULL), 0);
        assert_int_equal(scan_all(inv, &so), 0);
        if (verb != VERB_ARCHIVE)
                for (const char *const *id = ids; *id; id++) {
                        bool listed = false;

                        for (size_t i = 0; i < inv->n_sessions; i++)
                                listed |= inv->sessions[i].state == SESSION_ARCHIVED &&
                                          streq(inv->sessions[i].id, *id);
                        if (!listed)
                                add_archived(inv, dc, *id);
                }
        if (hk.before_exec)
                hk.before_exec();
        verdicts.n_sessions = inv->n_sessions;
        verdicts.sessions = calloc(inv->n_sessions + 1, sizeof(Verdict));
        plan.items = calloc(inv->n_sessions + 1, sizeof(PlanItem));
        assert_non_null(verdicts.sessions);
        assert_non_null(plan.items);
        for (size_t i = 0; i < inv->n_sessions; i++) {
                const Session *s = &inv->sessions[i];
                Verdict *v = &verdicts.sessions[i];

                v->verb = VERB_KEEP;
                v->rule = "test";
                v->facts = calloc(1, sizeof(VerdictFacts));
                assert_non_null(v->facts);
                if (s->owner != OWNER_OK ||
                    (s->state == SESSION_ARCHIVED) != (verb != VERB_ARCHIVE))
                        continue;
                for (const char *const *id = ids; *id; id++)
                        if (streq(*id, s->id)) {
                                v->verb = verb;
                                plan.items[n++] = (PlanItem){ .index = i, .verdict = v };
                        }
        }
        plan.inv = inv;
        plan.verdicts = &verdicts;
        plan.n_items = n;
        *st = (ActionStats){};
        k = test_run_plan(&plan, st);
        for (size_t i = 0; i < verdicts.n_sessions; i++)
                free(verdicts.sessions[i].facts);
        free(verdicts.sessions);
        free(plan.items);
        inventory_free(inv);
        return k;
}

/* ---------------------------------------------------------------- an archive, by hand */


/* An index as Deep Code 0.2.1 writes it (JSON.stringify(index, null, 2)), by hand. */
#define ENTRY(id, status)                                                               \
        "    {\n"                                                                       \
        "      \"id\": \"" id "\",\n"                                                   \
        "      \"summary\": \"fix \\\"quotes\\\" / ñandú\\nnext\\u0001\",\n"            \
        "      \"createTime\": \"2026-01-01T00:00:00.000Z\",\n"                         \
        "      \"updateTime\": \"2026-01-02T00:00:00.000Z\",\n"                         \
        "      \"status\": \"" status "\",\n"                                           \
        "      \"usage\": {\n"                                                          \
        "        \"tokens\": 1234\n"                                                    \
        "      }\n"                                                                     \
        "    }"
#define TAIL "\n  ],\n  \"originalPath\": \"/srv/x\"\n}"

static const char index_12[] = HEAD ENTRY(ID1, "completed") ",\n" ENTRY(ID2, "failed") TAIL;
static const char index_2[] = HEAD ENTRY(ID2, "failed") TAIL;
static const char index_123[] = HEAD ENTRY(ID1, "completed") ",\n" ENTRY(ID2, "failed") ",\n"
        ENTRY(ID3, "completed") TAIL;
static const char index_23[] = HEAD ENTRY(ID2, "failed") ",\n" ENTRY(ID3, "completed") TAIL;
/* ID1's entry as Deep Code changed it (a new status) */
static const char index_1x2[] = HEAD ENTRY(ID1, "interrupted") ",\n" ENTRY(ID2, "failed") TAIL;
/* JSON.stringify(entry, null, 2) of ID1's entry */
static const char entry_1[] =
        "{\n"
        "  \"id\": \"" ID1 "\",\n"
        "  \"summary\": \"fix \\\"quotes\\\" / ñandú\\nnext\\u0001\",\n"
        "  \"createTime\": \"2026-01-01T00:00:00.000Z\",\n"
        "  \"updateTime\": \"2026-01-02T00:00:00.000Z\",\n"
        "  \"status\": \"completed\",\n"
        "  \"usage\": {\n"
        "    \"tokens\": 1234\n"
        "  }\n"
        "}";

#define HASH_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define HASH_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

typedef struct T {
        char *root;
        char *dc;
        char *index;
} T;

static T *cur;

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
        cur = t;
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

static char *session_text(const char *id) {
        return util_strprintf(
                "{\"id\":\"m1\",\"sessionId\":\"%s\",\"role\":\"user\",\"content\":\"hi\","
                "\"checkpointHash\":\"" HASH_B "\"}\n"
                "{\"id\":\"m2\",\"sessionId\":\"%s\",\"role\":\"user\",\"content\":\"again\","
                "\"checkpointHash\":\"" HASH_A "\"}\n",
                id, id);
}

static void write_session(T *t, const char *id) {
        _cleanup_free_ char *rel = util_strprintf(PROJ "/%s.jsonl", id);
        _cleanup_free_ char *text = session_text(id);
        _cleanup_free_ char *img = util_strprintf(PROJ "/images/%s/a.png", id);
        _cleanup_free_ char *ref = util_strprintf(PROJ "/file-history/.git/refs/heads/%s", id);

        assert_int_equal(fixture_write(t->root, rel, text), 0);
        assert_int_equal(fixture_write(t->root, img, "png"), 0);
        assert_int_equal(fixture_write(t->root, ref, HASH_A "\n"), 0);
}

static void fixture_store(T *t, const char *index) {
        assert_int_equal(fixture_write(t->root, PROJ "/sessions-index.json", index), 0);
        write_session(t, ID1);
        write_session(t, ID2);
}

static void check_index(T *t, const char *want) {
        _cleanup_free_ char *got = test_read(t->index);

        assert_string_equal(got, want);
}

/* id's session whole in Deep Code's project (archived false) or in the archive (true). */
static void check_archived(T *t, const char *id, bool archived) {
        _cleanup_free_ char *text = session_text(id), *got = NULL;
        _cleanup_free_ char *p = util_strprintf(PROJ "/%s.jsonl", id);
        _cleanup_free_ char *pi = util_strprintf(PROJ "/images/%s/a.png", id);
        _cleanup_free_ char *a = util_strprintf(ARC "/%s.jsonl", id);
        _cleanup_free_ char *ai = util_strprintf(ARC "/%s.images/a.png", id);
        _cleanup_free_ char *ae = util_strprintf(ARC "/%s.entry.json", id);
        _cleanup_free_ char *ak = util_strprintf(ARC "/%s.checkpoints", id);
        _cleanup_free_ char *ref = util_strprintf(PROJ "/file-history/.git/refs/heads/%s", id);

        assert_int_equal(fixture_exists(t->root, p), !archived);
        assert_int_equal(fixture_exists(t->root, pi), !archived);
        assert_int_equal(fixture_exists(t->root, a), archived);
        assert_int_equal(fixture_exists(t->root, ai), archived);
        assert_int_equal(fixture_exists(t->root, ae), archived);
        assert_int_equal(fixture_exists(t->root, ak), archived);
        assert_int_equal(fixture_read(t->root, archived ? a : p, &got, NULL), 0);
        assert_string_equal(got, text);
        assert_true(fixture_exists(t->root, ref)); /* the branch stays while archived */
}

static void test_dc_archive_layout(void **state) {
        T *t = *state;
        _cleanup_free_ char *entry = NULL, *ckpt = NULL;
        ActionStats st;

        fixture_store(t, index_12);
        assert_int_equal(run_verb(t->dc, (const char *const[]){ ID1, NULL }, VERB_ARCHIVE, &st), 0);
        assert_int_equal(st.n_archived, 1);
        assert_int_equal(st.n_failed, 0);
        check_index(t, index_2);
        check_archived(t, ID1, true);
        check_archived(t, ID2, false);
        assert_int_equal(fixture_read(t->root, ARC "/" ID1 ".entry.json", &entry, NULL), 0);
        assert_string_equal(entry, entry_1);
        assert_int_equal(fixture_read(t->root, ARC "/" ID1 ".checkpoints", &ckpt, NULL), 0);
        assert_string_equal(ckpt, HASH_A "\n" HASH_B "\n");
        assert_false(fixture_exists(t->root, "h/.deepcode/.qgc"));

        /* compress, then delete the archived session: nothing of it is left but the index's
         * other sessions */
        assert_int_equal(run_verb(t->dc, (const char *const[]){ ID1, NULL }, VERB_COMPRESS, &st), 0);
        assert_int_equal(st.n_failed, 0);
        assert_false(fixture_exists(t->root, ARC "/" ID1 ".jsonl"));
        assert_true(fixture_exists(t->root, ARC "/" ID1 ".jsonl.zst"));
        assert_int_equal(run_verb(t->dc, (const char *const[]){ ID1, NULL }, VERB_DELETE, &st), 0);
        assert_int_equal(st.n_deleted, 1);
        assert_int_equal(st.n_failed, 0);
        assert_false(fixture_exists(t->root, "h/.deepcode/.qgc-archive"));
        assert_false(fixture_exists(t->root, PROJ "/file-history/.git/refs/heads/" ID1));
        assert_true(fixture_exists(t->root, PROJ "/file-history/.git/refs/heads/" ID2));
        check_index(t, index_2);
        assert_false(fixture_exists(t->root, "h/.deepcode/.qgc"));
}

/* Deep Code saves a new session into the index while qgc edits it: the edit is redone from its
 * text, and the new entry stays. */
static void test_dc_archive_index_rewritten_at_hook(void **state) {
        T *t = *state;
        ActionStats st;

        fixture_store(t, index_12);
        hk.rewrite_index = t->index;
        hk.rewrite_text = index_123;
        assert_int_equal(run_verb(t->dc, (const char *const[]){ ID1, NULL }, VERB_ARCHIVE, &st), 0);
        assert_null(hk.rewrite_text);
        assert_int_equal(st.n_archived, 1);
        check_index(t, index_23);
        check_archived(t, ID1, true);
}

/* Deep Code changes the session's entry at the edit's hook: the archive is undone (the entry
 * in the archive would not be the index's), the session whole where it was. */
static void test_dc_archive_entry_changed_at_hook(void **state) {
        T *t = *state;
        ActionStats st;

        fixture_store(t, index_12);
        hk.rewrite_index = t->index;
        hk.rewrite_text = index_1x2;
        assert_int_equal(run_verb(t->dc, (const char *const[]){ ID1, NULL }, VERB_ARCHIVE, &st), 0);
        assert_int_equal(st.n_archived, 0);
        assert_int_equal(st.n_skipped, 1);
        check_index(t, index_1x2);
        check_archived(t, ID1, false);
        assert_false(fixture_exists(t->root, "h/.deepcode/.qgc-archive"));
        assert_false(fixture_exists(t->root, "h/.deepcode/.qgc"));
}

static void append_to_id1(void) {
        assert_int_equal(fixture_append(cur->root, PROJ "/" ID1 ".jsonl",
                                        "{\"id\":\"m3\",\"sessionId\":\"" ID1 "\"}\n"), 0);
}

/* The transcript grew since the scan, and an archive of the same id exists: both skipped,
 * nothing changed. */
static void test_dc_archive_rechecks(void **state) {
        T *t = *state;
        _cleanup_free_ char *text = NULL;
        ActionStats st;

        fixture_store(t, index_12);
        hk.before_exec = append_to_id1;
        assert_int_equal(run_verb(t->dc, (const char *const[]){ ID1, NULL }, VERB_ARCHIVE, &st), 0);
        hk.before_exec = NULL;
        assert_int_equal(st.n_archived, 0);
        assert_int_equal(st.n_skipped, 1);
        check_index(t, index_12);
        assert_false(fixture_exists(t->root, "h/.deepcode/.qgc-archive"));

        assert_int_equal(fixture_write(t->root, ARC "/" ID2 ".entry.json", "{}"), 0);
        assert_int_equal(run_verb(t->dc, (const char *const[]){ ID2, NULL }, VERB_ARCHIVE, &st), 0);
        assert_int_equal(st.n_archived, 0);
        assert_int_equal(st.n_skipped, 1);
        check_index(t, index_12);
        assert_true(fixture_exists(t->root, PROJ "/" ID2 ".jsonl"));
        assert_true(fixture_exists(t->root, PROJ "/images/" ID2 "/a.png"));
        assert_false(fixture_exists(t->root, ARC "/" ID2 ".jsonl"));
        assert_int_equal(fixture_read(t->root, ARC "/" ID2 ".entry.json", &text, NULL), 0);
        assert_string_equal(text, "{}");
        assert_false(fixture_exists(t->root, "h/.deepcode/.qgc"));
}

/* A Deep Code process works in the project: the archive is skipped by the run's own check (even
 * when the plan says archive), and nothing changes. */
static void test_dc_archive_live_project_skipped(void **state) {
        T *t = *state;
        _cleanup_free_ char *got = NULL, *dc = NULL;
        ActionStats st;
        DcLive l;
        pid_t pid;

        dc_live_store(t->root, &l);
        dc = util_strprintf(DC "/.qgc-archive/%s", l.code);
        pid = dc_process_start(l.work);
        assert_int_equal(run_verb(t->dc, (const char *const[]){ ID1, NULL }, VERB_ARCHIVE, &st), 0);
        dc_process_stop(pid);
        assert_int_equal(st.n_archived, 0);
        assert_int_equal(st.n_skipped, 1);
        assert_int_equal(fixture_read(t->root, l.rel, &got, NULL), 0);
        assert_string_equal(got, l.index);
        assert_true(fixture_exists(t->root, l.jsonl));
        assert_false(fixture_exists(t->root, dc));
        assert_false(fixture_exists(t->root, DC "/.qgc"));
        dc_live_done(&l);
}

/* An archived id that Deep Code's index names again: its delete is refused (its branch is the
 * indexed session's), nothing changed. */
static void test_dc_delete_archived_reused_refused(void **state) {
        T *t = *state;
        ActionStats st;

        fixture_store(t, index_12);
        assert_int_equal(run_verb(t->dc, (const char *const[]){ ID1, NULL }, VERB_ARCHIVE, &st), 0);
        assert_int_equal(st.n_archived, 1);
        assert_int_equal(fixture_write(t->root, PROJ "/sessions-index.json", index_12), 0);
        assert_int_equal(run_verb(t->dc, (const char *const[]){ ID1, NULL }, VERB_DELETE, &st), 0);
        assert_int_equal(st.n_deleted, 0);
        assert_int_equal(st.n_skipped, 1);
        assert_true(fixture_exists(t->root, ARC "/" ID1 ".jsonl"));
        assert_true(fixture_exists(t->root, PROJ "/file-history/.git/refs/heads/" ID1));
        assert_false(fixture_exists(t->root, "h/.deepcode/.qgc"));
}

/* ---------------------------------------------------------------- crash after every step */

/* corpus sessions: tools (a branch with checkpoints), its fork, one of a non-ASCII project */
static const char *const crash_ids[] = {
        "458313f1-0b4f-420b-9d20-b6c7a466945d",
        "ee4d9d2d-c295-4317-96f1-f5ea2c929a74",
        "ec5a9b46-2522-4510-ae13-5d441694b5ec",
        NULL,
};

/* Is id in the index of projects/<code>/ of the store dc? */
static bool indexed(const char *dc, const char *code, const char *id) {
        _cleanup_free_ char *rel = util_strprintf("projects/%s/sessions-index.json", code);
        _cleanup_free_ char *text = NULL;
        json_object *root = NULL, *entries = NULL;
        bool found = false;
        size_t n = 0;

        if (fixture_read(dc, rel, &text, &n) < 0)
                return false;
        assert_int_equal(json_parse(text, n, &root), 0);
        assert_true(json_object_object_get_ex(root, "entries", &entries));
        for (size_t i = 0; i < json_object_array_length(entries); i++) {
                const char *e = json_get_string(json_object_array_get_idx(entries, i), "id");

                found |= e && streq(e, id);
        }
        json_object_put(root);
        return found;
}

/* The transcript of id in the archive of dc (code), plain or decompressed. */
static char *archived_text(const char *dc, const char *code, const char *id) {
        _cleanup_free_ char *rel = util_strprintf(".qgc-archive/%s", code);
        _cleanup_free_ char *jrel = util_strprintf("%s/%s.jsonl", rel, id);
        _cleanup_free_ char *name = util_strprintf("%s.jsonl", id);
        _cleanup_free_ char *path = fixture_path(dc, rel);
        _cleanup_close_ int dfd = -EBADF, out = -EBADF;
        char *text = NULL;
        size_t n = 0;

        if (fixture_read(dc, jrel, &text, &n) == 0)
                return text;
        dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return NULL;
        out = memfd_create("t", MFD_CLOEXEC);
        assert_true(out >= 0);
        if (cold_cat(dfd, name, out) < 0)
                return NULL;
        assert_int_equal(fs_read_fd(out, 1 << 24, &text, &n), 0);
        return text;
}

/* Each of crash_ids (whose project is code_of[i], its original transcript in orig) is whole
 * where Deep Code sees it or in the archive: an index entry with its transcript, or no entry
 * and the archive's transcript (byte for byte), entry and checkpoints. */
static void check_whole(const char *dc, const char *orig, char **code_of) {
        for (size_t i = 0; crash_ids[i]; i++) {
                const char *id = crash_ids[i];
                _cleanup_free_ char *p = util_strprintf("projects/%s/%s.jsonl", code_of[i], id);
                _cleanup_free_ char *e = util_strprintf(".qgc-archive/%s/%s.entry.json",
                                                        code_of[i], id);
                _cleanup_free_ char *k = util_strprintf(".qgc-archive/%s/%s.checkpoints",
                                                        code_of[i], id);
                _cleanup_free_ char *want = NULL, *got = NULL;

                assert_int_equal(fixture_read(orig, p, &want, NULL), 0);
                if (indexed(dc, code_of[i], id)) {
                        if (fixture_read(dc, p, &got, NULL) < 0 || !streq(got, want))
                                fail_msg("%s: an index entry without its transcript", p);
                        continue;
                }
                got = archived_text(dc, code_of[i], id);
                if (!got || !streq(got, want) || !fixture_exists(dc, e) || !fixture_exists(dc, k))
                        fail_msg("%s: gone from its index without its archive whole", id);
        }
}

/* Crash after every step of verb over crash_ids, in a fresh corpus prepared by the verbs pre
 * (unkilled runs), then rerun: the same tree as the unkilled run's. */
static void crash_every_step(T *t, const Verb *pre, Verb verb, unsigned min_steps) {
        _cleanup_free_ char *tar = test_data_path("deepcode/home.tar.gz");
        _cleanup_free_ char *orig = fixture_path(t->root, "orig/home/.deepcode");
        _cleanup_free_ char *want = NULL, *cmd = NULL;
        char *code_of[3] = {};
        ActionStats st;
        unsigned n;

        cmd = util_strprintf("mkdir -p '%s/orig' '%s/ref' && tar xzf '%s' -C '%s/orig' && "
                             "tar xzf '%s' -C '%s/ref'", t->root, t->root, tar, t->root, tar,
                             t->root);
        assert_int_equal(system(cmd), 0);
        {
                _cleanup_free_ char *ref = fixture_path(t->root, "ref/home/.deepcode");

                for (const Verb *p = pre; *p != VERB_KEEP; p++)
                        assert_int_equal(run_verb(ref, crash_ids, *p, &st), 0);
                assert_int_equal(run_verb(ref, crash_ids, verb, &st), 0);
                assert_int_equal(st.n_failed, 0);
                assert_int_equal(st.n_skipped, 0);
        }
        {
                DIR *d;
                struct dirent *de;
                _cleanup_free_ char *projects = fixture_path(orig, "projects");

                d = opendir(projects);
                assert_non_null(d);
                while ((de = readdir(d)))
                        for (size_t i = 0; crash_ids[i]; i++) {
                                _cleanup_free_ char *f = util_strprintf("%s/%s.jsonl", de->d_name,
                                                                        crash_ids[i]);

                                if (de->d_name[0] != '.' && fixture_exists(projects, f))
                                        code_of[i] = strdup(de->d_name);
                        }
                closedir(d);
                for (size_t i = 0; crash_ids[i]; i++)
                        assert_non_null(code_of[i]);
        }
        want = fixture_snapshot_timeless(t->root, "ref/home");

        for (n = 1; n < 200; n++) {
                _cleanup_free_ char *dir = util_strprintf("%s/run-%u", t->root, n);
                _cleanup_free_ char *dc = util_strprintf("%s/home/.deepcode", dir);
                _cleanup_free_ char *rel = util_strprintf("run-%u/home", n);
                _cleanup_free_ char *c =
                        util_strprintf("mkdir -p '%s' && tar xzf '%s' -C '%s'", dir, tar, dir);
                _cleanup_free_ char *got = NULL;
                int status = 0;
                pid_t pid;

                assert_int_equal(system(c), 0);
                for (const Verb *p = pre; *p != VERB_KEEP; p++)
                        assert_int_equal(run_verb(dc, crash_ids, *p, &st), 0);
                pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                        hk.crash_after = n;
                        _exit(run_verb(dc, crash_ids, verb, &st) == 0 ? 0 : 1);
                }
                assert_int_equal(waitpid(pid, &status, 0), pid);
                assert_true(WIFEXITED(status));
                if (WEXITSTATUS(status) != 99) {
                        assert_int_equal(WEXITSTATUS(status), 0); /* every step was crashed at */
                        break;
                }
                if (verb != VERB_DELETE)
                        check_whole(dc, orig, code_of);
                /* the rerun: recovery first, then the same plan (what is still there) */
                assert_true(run_verb(dc, crash_ids, verb, &st) >= 0);
                assert_int_equal(st.n_failed, 0);
                if (verb != VERB_DELETE)
                        check_whole(dc, orig, code_of);
                got = fixture_snapshot_timeless(t->root, rel);
                if (!streq(got, want))
                        fail_msg("crash after step %u, then a rerun: not the unkilled run's "
                                 "tree\n--- unkilled\n%s--- crashed\n%s", n, want, got);
                assert_int_equal(fixture_rm_rf(dir), 0);
        }
        print_message("crashed after each of %u steps\n", n - 1);
        assert_true(n > min_steps);
        assert_true(n < 200);
        for (size_t i = 0; i < 3; i++)
                free(code_of[i]);
}

static void test_dc_archive_crash_after_every_step(void **state) {
        crash_every_step(*state, (const Verb[]){ VERB_KEEP }, VERB_ARCHIVE, 15);
}

static void test_dc_compress_crash_after_every_step(void **state) {
        crash_every_step(*state, (const Verb[]){ VERB_ARCHIVE, VERB_KEEP }, VERB_COMPRESS, 6);
}

static void test_dc_delete_archived_crash_after_every_step(void **state) {
        crash_every_step(*state, (const Verb[]){ VERB_ARCHIVE, VERB_COMPRESS, VERB_KEEP },
                         VERB_DELETE, 9);
}

/* ---------------------------------------------------------------- the index's order back */

/* Deep Code's index unsorted (an older session updated later, an undone fork...): ord_ids in
 * this order, their updateTimes not (ord_up) -- the sorted place of a restore differs from the
 * original for every one of them. */
#define N_ORD 5
static const char *const ord_ids[N_ORD] = { ID3, ID1, ID5, ID2, ID4 };
static const char *const ord_up[N_ORD] = { "01", "05", "02", "04", "03" };

/* The original index with only the entries of mask's bits (bit i: ord_ids[i]). */
static char *ord_index(unsigned mask) {
        StrBuf b = {};
        bool first = true;

        if (mask == 0) /* JSON.stringify() of [] */
                return strdup("{\n  \"version\": 1,\n  \"entries\": [],\n  \"originalPath\": "
                              "\"/srv/x\"\n}");
        assert_int_equal(strbuf_printf(&b, "%s", HEAD), 0);
        for (size_t i = 0; i < N_ORD; i++) {
                if (!(mask & (1u << i)))
                        continue;
                assert_int_equal(strbuf_printf(&b, "%s    {\n      \"id\": \"%s\",\n      "
                                               "\"updateTime\": \"2026-01-%sT00:00:00.000Z\",\n"
                                               "      \"status\": \"completed\"\n    }",
                                               first ? "" : ",\n", ord_ids[i], ord_up[i]), 0);
                first = false;
        }
        assert_int_equal(strbuf_printf(&b, "%s", TAIL), 0);
        return strbuf_steal(&b);
}

/* Scan the store dc, plan the restore of ids (NULL-terminated), execute. */
static void run_restore(const char *dc, const char *const *ids) {
        ScanOptions so = { .now = util_now_msec() };
        _cleanup_(plan_freep) Plan *p = NULL;
        Inventory *inv = NULL;
        ActionStats st = {};
        Tree tr = {};
        size_t n = 0;

        assert_int_equal(inventory_new(&inv), 0);
        assert_int_equal(deepcode_store.tree_from_dir(dc, &tr), 0);
        assert_int_equal(inventory_add_tree(inv, &tr, NULL), 0);
        assert_int_equal(scan_all(inv, &so), 0);
        assert_int_equal(inventory_index(inv), 0);
        assert_int_equal(plan_new_steps(inv, so.now, &p), 0);
        p->is_restore = true;
        for (const char *const *id = ids; *id; id++, n++)
                assert_true(restore_add_id(p, inv, 0, *id, false) >= 0);
        assert_int_equal(test_run_plan(p, &st), 0);
        assert_int_equal(st.n_restored, n);
        assert_int_equal(st.n_failed, 0);
        p = plan_free(p);
        inventory_free(inv);
}

/* A fresh store of the original index; its sessions archived: all in one run (arc NULL), or
 * one a run in the order of arc (indices into ord_ids). */
static void ord_archive(T *t, const unsigned *arc) {
        _cleanup_free_ char *dc = fixture_path(t->root, "h");
        _cleanup_free_ char *index = ord_index((1u << N_ORD) - 1), *none = ord_index(0);
        ActionStats st;

        assert_int_equal(fixture_rm_rf(dc), 0);
        assert_int_equal(fixture_write(t->root, PROJ "/sessions-index.json", index), 0);
        for (size_t i = 0; i < N_ORD; i++)
                write_session(t, ord_ids[i]);
        if (!arc) {
                const char *ids[N_ORD + 1] = {};

                memcpy(ids, ord_ids, sizeof(ord_ids));
                assert_int_equal(run_verb(t->dc, ids, VERB_ARCHIVE, &st), 0);
                assert_int_equal(st.n_archived, N_ORD);
        } else
                for (size_t i = 0; i < N_ORD; i++) {
                        assert_int_equal(run_verb(t->dc, (const char *const[]){ ord_ids[arc[i]],
                                                                                NULL },
                                                  VERB_ARCHIVE, &st), 0);
                        assert_int_equal(st.n_archived, 1);
                }
        assert_int_equal(st.n_failed, 0);
        check_index(t, none);
}

/* The next permutation of a (n elements) in lexicographic order; false after the last. */
static bool next_perm(unsigned *a, size_t n) {
        size_t i = n - 1, j = n - 1;
        unsigned x;

        while (i > 0 && a[i - 1] >= a[i])
                i--;
        if (i == 0)
                return false;
        while (a[j] <= a[i - 1])
                j--;
        x = a[i - 1], a[i - 1] = a[j], a[j] = x;
        for (j = n - 1; i < j; i++, j--)
                x = a[i], a[i] = a[j], a[j] = x;
        return true;
}

/* Archive the unsorted index's 5 sessions (in one run, one a run in two orders), then restore
 * them one a run: the first, middle and last in each of their 6 orders, then the other two; and
 * all 5 in one run. After each restore the index is byte for byte the original without the
 * entries still archived; at the end the original, and nothing is left in the archive. */
static void test_dc_restore_unsorted_order(void **state) {
        T *t = *state;
        static const unsigned fwd[N_ORD] = { 0, 1, 2, 3, 4 }, mixed[N_ORD] = { 3, 0, 4, 2, 1 };
        const unsigned *arcs[] = { NULL, fwd, mixed };
        unsigned n_orders = 0;

        for (size_t k = 0; k < ELEMENTSOF(arcs); k++) {
                unsigned perm[N_ORD] = { 0, 2, 4, 3, 1 };

                do {
                        unsigned mask = 0;

                        ord_archive(t, arcs[k]);
                        for (size_t i = 0; i < N_ORD; i++) {
                                _cleanup_free_ char *want = NULL;

                                run_restore(t->dc, (const char *const[]){ ord_ids[perm[i]],
                                                                          NULL });
                                mask |= 1u << perm[i];
                                want = ord_index(mask);
                                check_index(t, want);
                        }
                        assert_false(fixture_exists(t->root, "h/.deepcode/.qgc-archive"));
                        n_orders++;
                } while (next_perm(perm, 3));
                {
                        _cleanup_free_ char *want = ord_index((1u << N_ORD) - 1);
                        const char *ids[N_ORD + 1] = {};

                        ord_archive(t, arcs[k]);
                        memcpy(ids, ord_ids, sizeof(ord_ids));
                        run_restore(t->dc, ids);
                        check_index(t, want);
                        assert_false(fixture_exists(t->root, "h/.deepcode/.qgc-archive"));
                }
        }
        print_message("%u orders of restores, each byte for byte\n", n_orders);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_dc_archive_layout, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dc_archive_index_rewritten_at_hook, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_dc_archive_entry_changed_at_hook, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_dc_archive_rechecks, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dc_archive_live_project_skipped, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_dc_delete_archived_reused_refused, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_dc_restore_unsorted_order, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dc_archive_crash_after_every_step, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_dc_compress_crash_after_every_step, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_dc_delete_archived_crash_after_every_step,
                                                setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
