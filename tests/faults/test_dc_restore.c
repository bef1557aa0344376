/* test_dc_restore.c: qgc restore of Deep Code sessions from qgc's archive (dc-store.h's layout,
 * made here by hand as dc-archive.c makes it: the entry as js_stringify_indent(entry, 2), the
 * checkpoints, the transcript plain or compressed by cold.c, images/<id>/ as <id>.images/),
 * through restore_plan()'s steps and the executor (actions_run()): the index gets the entry
 * back byte for byte at its place (before the first id its <id>.after names that is indexed,
 * lines that are no id ignored; without one, or one over 64 KiB, at Deep Code's place: before
 * the first entry strictly older), transcripts
 * and images come back byte for byte, the archive goes; the refusals, in the plan and at run
 * time (50 index entries, Deep Code has the id too, a Deep Code process in the project, an
 * archive not proven); and a crash after every mutating step of two restores followed by a
 * rerun: never an index entry without its transcript and images, and the same tree as an
 * unkilled run. The steps are counted and crashed at through ld --wrap=actions_report_step. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

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
#include "cold.h"
#include "dc-project.h"
#include "dc-hook.h"
#include "deepcode-store.h"
#include "fixture.h"
#include "js.h"
#include "journal.h"
#include "json.h"
#include "macro.h"
#include "plan.h"
#include "restore.h"
#include "scan.h"
#include "util.h"



/* Index entries as Deep Code 0.2.1 writes them (JSON.stringify(index, null, 2)). */
#define ENTRYT(id, extra, up)                                                           \
        "    {\n"                                                                       \
        "      \"id\": \"" id "\",\n"                                                   \
        "      \"summary\": \"fix \\\"quotes\\\" / ñandú\\nnext\\u0001\",\n"            \
        "      \"createTime\": \"2026-01-01T00:00:00.000Z\",\n"                         \
        "      \"updateTime\": \"" up "\",\n"                                           \
        "      \"status\": \"completed\",\n"                                            \
        "      \"usage\": {\n"                                                          \
        "        \"tokens\": 1234,\n"                                                   \
        "        \"cost\": 0.5\n"                                                       \
        "      },\n"                                                                    \
        "      \"processes\": " extra "\n"                                              \
        "    }"
#define ENTRY(id, extra) ENTRYT(id, extra, "2026-01-02T00:00:00.000Z")
#define ENTRY4 ENTRYT(ID4, "[]", "2026-01-03T00:00:00.000Z") /* the newest */
#define TAIL "\n  ],\n  \"originalPath\": \"%s\"\n}"

/* before: ID1, ID2 listed, ID3 and ID4 archived; after: ID4 first (newer: no <id>.after, an
 * older qgc's archive), ID3 before ID1 (its <id>.after names it, after lines that are no ids and
 * one that is not indexed) */
static const char index_12[] = HEAD ENTRY(ID1, "null") ",\n" ENTRY(ID2, "{}") TAIL;
static const char index_4312[] = HEAD ENTRY4 ",\n" ENTRY(ID3, "[]") ",\n" ENTRY(ID1, "null")
        ",\n" ENTRY(ID2, "{}") TAIL;
static const char after_3[] = "\n" ID2 "\x01\n \t\n"
        "cccccccc-0000-4000-8000-000000000009\n" ID1 "\n" ID2 "\n";
/* ID3 back with its <id>.after read (before ID1), or not (after the equal ones) */
static const char index_312[] = HEAD ENTRY(ID3, "[]") ",\n" ENTRY(ID1, "null") ",\n"
        ENTRY(ID2, "{}") TAIL;
static const char index_123[] = HEAD ENTRY(ID1, "null") ",\n" ENTRY(ID2, "{}") ",\n"
        ENTRY(ID3, "[]") TAIL;

#define HASH "0123456789abcdef0123456789abcdef01234567"

typedef struct T {
        char *root;
        const char *orig; /* the index's originalPath */
} T;

static int setup(void **state) {
        T *t = calloc(1, sizeof(T));
        _cleanup_free_ char *log = NULL;

        assert_non_null(t);
        assert_int_equal(fixture_new(&t->root), 0);
        t->orig = "/srv/x";
        log = fixture_path(t->root, "actions.log");
        assert_int_equal(journal_open(JOURNAL_TARGET_FILE, log, "fedcba9876543210fedcba9876543210"),
                         0);
        hk = (typeof(hk)){};
        *state = t;
        return 0;
}

static int teardown(void **state) {
        T *t = *state;

        journal_close();
        fixture_free(t->root);
        free(t);
        return 0;
}

static char *line_of(const char *id) {
        return util_strprintf("{\"id\":\"m1\",\"sessionId\":\"%s\",\"role\":\"user\",\"content\":"
                              "\"hi\",\"checkpointHash\":\"" HASH "\"}\n", id);
}

/* The index text fmt (HEAD ... TAIL) with the originalPath. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static char *index_text(const T *t, const char *fmt) {
        return util_strprintf(fmt, t->orig);
}
#pragma GCC diagnostic pop

/* A session Deep Code lists: <id>.jsonl, images/<id>/a.png, its branch. */
static void write_session(const char *root, const char *proj, const char *id) {
        _cleanup_free_ char *rel = util_strprintf("%s/%s.jsonl", proj, id);
        _cleanup_free_ char *img = util_strprintf("%s/images/%s/a.png", proj, id);
        _cleanup_free_ char *ref = util_strprintf("%s/file-history/.git/refs/heads/%s", proj, id);
        _cleanup_free_ char *line = line_of(id);

        assert_int_equal(fixture_write(root, rel, line), 0);
        assert_int_equal(fixture_write(root, img, id), 0);
        assert_int_equal(fixture_write(root, ref, HASH "\n"), 0);
}

/* Session id archived by hand in arc: its entry (the index's text of it, entry_text, as
 * js_stringify_indent(entry, 2)), checkpoints, transcript (compressed when cold), images. */
static void write_archived(const char *root, const char *proj, const char *arc, const char *id,
                           const char *entry_text, bool cold) {
        _cleanup_free_ char *rel = util_strprintf("%s/%s.jsonl", arc, id);
        _cleanup_free_ char *erel = util_strprintf("%s/%s.entry.json", arc, id);
        _cleanup_free_ char *hrel = util_strprintf("%s/%s.checkpoints", arc, id);
        _cleanup_free_ char *img = util_strprintf("%s/%s.images/a.png", arc, id);
        _cleanup_free_ char *ref = util_strprintf("%s/file-history/.git/refs/heads/%s", proj, id);
        _cleanup_free_ char *line = line_of(id), *name = util_strprintf("%s.jsonl", id);
        _cleanup_free_ char *adir = fixture_path(root, arc);
        json_object *o = NULL;
        StrBuf b = {};

        assert_int_equal(json_parse(entry_text, strlen(entry_text), &o), 0);
        assert_int_equal(js_stringify_indent(&b, o, 2), 0);
        json_object_put(o);
        assert_int_equal(fixture_write(root, erel, b.buf), 0);
        strbuf_done(&b);
        assert_int_equal(fixture_write(root, hrel, HASH "\n"), 0);
        assert_int_equal(fixture_write(root, rel, line), 0);
        assert_int_equal(fixture_write(root, img, id), 0);
        assert_int_equal(fixture_write(root, ref, HASH "\n"), 0);
        if (cold) {
                _cleanup_(cold_ctx_freep) ColdCtx *c = NULL;
                _cleanup_close_ int fd = open(adir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                ColdResult res;

                assert_true(fd >= 0);
                assert_int_equal(cold_ctx_new(COLD_LEVEL_DEFAULT, COLD_DICT_CURRENT, &c), 0);
                assert_int_equal(cold_ctx_compress(c, fd, name, fd, NULL, 0, NULL, NULL, &res), 0);
                assert_false(fixture_exists(root, rel));
        }
}

/* The store below root/top: ID1, ID2 listed (index_12), ID3 archived plain (its <id>.after:
 * after_3), ID4 compressed (none). */
static void build_store(const T *t, const char *top) {
        _cleanup_free_ char *proj = util_strprintf("%s/" PROJ, top);
        _cleanup_free_ char *arc = util_strprintf("%s/" ARC, top);
        _cleanup_free_ char *irel = util_strprintf("%s/sessions-index.json", proj);
        _cleanup_free_ char *arel = util_strprintf("%s/" ID3 ".after", arc);
        _cleanup_free_ char *index = index_text(t, index_12);

        assert_int_equal(fixture_write(t->root, irel, index), 0);
        write_session(t->root, proj, ID1);
        write_session(t->root, proj, ID2);
        write_archived(t->root, proj, arc, ID3, ENTRY(ID3, "[]"), false);
        write_archived(t->root, proj, arc, ID4, ENTRY4, true);
        assert_int_equal(fixture_write(t->root, arel, after_3), 0);
}

typedef void (*PrepFn)(const T *t);

/* Scan the store root/top/h/.deepcode, plan the restore of ids (NULL-terminated; only those
 * still archived when only_archived), call prep (may be NULL), execute: actions_run()'s
 * result, with the stats, and the plan's refusal of the first step in *ret_why (may be NULL). */
static int run_restore(const T *t, const char *top, const char *const *ids, bool only_archived,
                       PrepFn prep, ActionStats *st, char **ret_why) {
        _cleanup_free_ char *dc = util_strprintf("%s/%s/" DC, t->root, top);
        ScanOptions so = { .now = util_now_msec() };
        _cleanup_(plan_freep) Plan *p = NULL;
        Inventory *inv = NULL;
        Tree tr = {};
        int k;

        assert_int_equal(inventory_new(&inv), 0);
        assert_int_equal(deepcode_store.tree_from_dir(dc, &tr), 0);
        assert_int_equal(inventory_add_tree(inv, &tr, NULL), 0);
        assert_int_equal(scan_all(inv, &so), 0);
        assert_int_equal(inventory_index(inv), 0);
        assert_int_equal(plan_new_steps(inv, so.now, &p), 0);
        p->is_restore = true;
        for (const char *const *id = ids; *id; id++) {
                const Session *s = inventory_find(inv, 0, *id);

                if (!only_archived || (s && s->state == SESSION_ARCHIVED))
                        assert_true(restore_add_id(p, inv, 0, *id, false) >= 0);
        }
        if (ret_why)
                *ret_why = p->n_steps > 0 && p->steps[0].why ? strdup(p->steps[0].why) : NULL;
        if (prep)
                prep(t);
        *st = (ActionStats){};
        k = test_run_plan(p, st);
        p = plan_free(p);
        inventory_free(inv);
        return k;
}

static void check_index(const T *t, const char *top, const char *fmt) {
        _cleanup_free_ char *rel = util_strprintf("%s/" PROJ "/sessions-index.json", top);
        _cleanup_free_ char *got = NULL, *want = index_text(t, fmt);

        assert_int_equal(fixture_read(t->root, rel, &got, NULL), 0);
        assert_string_equal(got, want);
}

/* Session id back where Deep Code lists it, byte for byte, nothing of it left in the archive. */
static void check_restored(const T *t, const char *top, const char *id) {
        _cleanup_free_ char *rel = util_strprintf("%s/" PROJ "/%s.jsonl", top, id);
        _cleanup_free_ char *img = util_strprintf("%s/" PROJ "/images/%s/a.png", top, id);
        _cleanup_free_ char *arc = util_strprintf("%s/" ARC "/%s.entry.json", top, id);
        _cleanup_free_ char *got = NULL, *gimg = NULL, *want = line_of(id);

        assert_int_equal(fixture_read(t->root, rel, &got, NULL), 0);
        assert_string_equal(got, want);
        assert_int_equal(fixture_read(t->root, img, &gimg, NULL), 0);
        assert_string_equal(gimg, id);
        assert_false(fixture_exists(t->root, arc));
}

static void test_dc_restore_plain_and_compressed(void **state) {
        T *t = *state;
        _cleanup_free_ char *why = NULL, *log = NULL, *times = NULL;
        ActionStats st;

        build_store(t, ".");
        assert_int_equal(run_restore(t, ".", (const char *const[]){ ID3, ID4, NULL }, false, NULL,
                                     &st, &why),
                         0);
        assert_null(why);
        assert_int_equal(st.n_restored, 2);
        assert_int_equal(st.n_failed, 0);
        check_index(t, ".", index_4312);
        check_restored(t, ".", ID3);
        check_restored(t, ".", ID4);
        /* the archive's directories went with its last session, the markers with the run; the
         * restores' ends recorded (restore-grace) */
        assert_false(fixture_exists(t->root, DC "/.qgc-archive"));
        assert_false(fixture_exists(t->root, DC "/.qgc/restore-" ID3));
        assert_int_equal(fixture_read(t->root, DC "/.qgc/session-times", &times, NULL), 0);
        assert_non_null(strstr(times, " " ID3 "\n"));
        assert_non_null(strstr(times, " " ID4 "\n"));
        assert_true(strneq(times, "restored ", 9));
        assert_int_equal(fixture_read(t->root, "actions.log", &log, NULL), 0);
        assert_non_null(strstr(log, "QGC_ACTION=restored QGC_SESSION=" ID3));
        assert_non_null(strstr(log, "QGC_ACTION=restored QGC_SESSION=" ID4));
}

/* The scan takes the ends of qgc's restores from ~/.deepcode/.qgc/session-times by Deep Code's
 * id rule (dc_index_id_valid()), not Qwen's: a session whose id is no UUID, as Deep Code can
 * name one, gets the restored line dc-restore.c wrote for it (restore-grace). */
#define ID_NAMED "notes-1"
static void test_dc_restore_times_by_deepcode_id_rule(void **state) {
        T *t = *state;
        _cleanup_free_ char *dc = util_strprintf("%s/" DC, t->root);
        _cleanup_free_ char *index = NULL;
        ScanOptions so = { .now = util_now_msec() };
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        const Session *s;
        Tree tr = {};

        index = index_text(t, HEAD ENTRY(ID1, "null") ",\n" ENTRY(ID_NAMED, "[]") TAIL);
        assert_int_equal(fixture_write(t->root, PROJ "/sessions-index.json", index), 0);
        write_session(t->root, PROJ, ID1);
        write_session(t->root, PROJ, ID_NAMED);
        assert_int_equal(fixture_write(t->root, DC "/.qgc/session-times",
                                       "restored 1700000000001 " ID_NAMED "\n"
                                       "restore 1700000000002 " ID1 "\n"),
                         0);
        assert_int_equal(inventory_new(&inv), 0);
        assert_int_equal(deepcode_store.tree_from_dir(dc, &tr), 0);
        assert_int_equal(inventory_add_tree(inv, &tr, NULL), 0);
        assert_int_equal(scan_all(inv, &so), 0);
        assert_non_null(s = inventory_find(inv, 0, ID_NAMED));
        assert_int_equal(s->restored_at, 1700000000001);
        assert_false(s->restore_pending);
        assert_non_null(s = inventory_find(inv, 0, ID1));
        assert_int_equal(s->restored_at, 1700000000002);
        assert_true(s->restore_pending);
}

/* 50 entries: Deep Code's next save would cut the oldest (and delete its files). */
static char *index_50(const T *t) {
        StrBuf b = {};

        assert_int_equal(strbuf_printf(&b, "%s", HEAD), 0);
        for (int i = 0; i < 50; i++)
                assert_int_equal(strbuf_printf(&b, "%s    {\n      \"id\": \"bbbbbbbb-0000-4000-"
                                               "8000-%012d\",\n      \"updateTime\": \"2026-01-0"
                                               "2T00:00:00.000Z\"\n    }",
                                               i ? ",\n" : "", i), 0);
        assert_int_equal(strbuf_printf(&b, TAIL, t->orig), 0);
        return strbuf_steal(&b);
}

static void rm_rel(const T *t, const char *rel) {
        _cleanup_free_ char *path = fixture_path(t->root, rel);

        assert_int_equal(fixture_rm_rf(path), 0);
}

/* Under the unit's UMask=0077 a restore keeps the index's mode and gives a new images/ and the
 * transcript the modes Deep Code would (its project directory's). */
static void test_dc_restore_modes_under_umask(void **state) {
        T *t = *state;
        _cleanup_free_ char *proj = fixture_path(t->root, PROJ);
        _cleanup_free_ char *index = fixture_path(t->root, PROJ "/sessions-index.json");
        _cleanup_free_ char *images = fixture_path(t->root, PROJ "/images");
        _cleanup_free_ char *jsonl = fixture_path(t->root, PROJ "/" ID3 ".jsonl");
        ActionStats st;
        struct stat sb;
        mode_t old;

        build_store(t, ".");
        rm_rel(t, PROJ "/images");
        assert_int_equal(chmod(proj, 0755), 0);
        assert_int_equal(chmod(index, 0644), 0);
        old = umask(077);
        assert_int_equal(run_restore(t, ".", (const char *const[]){ ID3, NULL }, false, NULL, &st,
                                     NULL),
                         0);
        umask(old);
        assert_int_equal(st.n_restored, 1);
        assert_int_equal(stat(index, &sb), 0);
        assert_int_equal(sb.st_mode & 07777, 0644);
        assert_int_equal(stat(images, &sb), 0);
        assert_int_equal(sb.st_mode & 07777, 0755);
        assert_int_equal(stat(jsonl, &sb), 0);
        assert_int_equal(sb.st_mode & 07777, 0644);
}

/* ID3's <id>.after of size bytes: ID1 first, then lines of no indexed id. */
static void write_after(const T *t, size_t size) {
        StrBuf b = {};

        assert_int_equal(strbuf_printf(&b, "%s", ID1 "\n"), 0);
        while (b.len < size) {
                size_t k = MIN(size - b.len, (size_t)100);

                assert_int_equal(strbuf_printf(&b, "%.*s\n", (int)(k - 1),
                                               "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"
                                               "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"),
                                 0);
        }
        assert_int_equal(b.len, size);
        assert_int_equal(fixture_write(t->root, ARC "/" ID3 ".after", b.buf), 0);
        strbuf_done(&b);
}

/* Restore ID3 with an <id>.after of size bytes; what qgc logged. */
static char *restore_after(T *t, size_t size, const char *want_index) {
        _cleanup_free_ char *log = fixture_path(t->root, "stderr.log"), *text = NULL;
        _cleanup_close_ int fd = -EBADF, saved = -EBADF;
        ActionStats st;

        rm_rel(t, "h");
        build_store(t, ".");
        write_after(t, size);
        fflush(stderr);
        saved = dup(STDERR_FILENO);
        fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        assert_true(saved >= 0 && fd >= 0);
        assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
        assert_int_equal(run_restore(t, ".", (const char *const[]){ ID3, NULL }, false, NULL, &st,
                                     NULL),
                         0);
        fflush(stderr);
        assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
        assert_int_equal(st.n_restored, 1);
        assert_int_equal(st.n_failed, 0);
        check_index(t, ".", want_index);
        check_restored(t, ".", ID3);
        assert_false(fixture_exists(t->root, ARC "/" ID3 ".after"));
        assert_int_equal(fixture_read(t->root, "stderr.log", &text, NULL), 0);
        return TAKE_PTR(text);
}

/* <id>.after is read up to DC_INDEX_AFTER_MAX (64 KiB) bytes: at exactly that, used (ID3 before
 * ID1); one byte more, not read (Deep Code's place, after the equal ones), said in the log, and
 * the restore done. */
static void test_dc_restore_after_max(void **state) {
        T *t = *state;
        _cleanup_free_ char *at = NULL, *over = NULL;

        at = restore_after(t, 64 * 1024, index_312);
        assert_null(strstr(at, ".after"));
        over = restore_after(t, 64 * 1024 + 1, index_123);
        assert_non_null(strstr(over, ".qgc-archive/-srv-x/" ID3 ".after is over 65536 bytes: "
                                     "not read"));
}

static void prep_full(const T *t) {
        _cleanup_free_ char *text = index_50(t);

        assert_int_equal(fixture_write(t->root, PROJ "/sessions-index.json", text), 0);
}

static void prep_conflict(const T *t) {
        assert_int_equal(fixture_write(t->root, PROJ "/" ID3 ".jsonl", "{}\n"), 0);
}

/* Refused, in the plan and at run time: nothing changes. */
static void check_refused(const T *t, const char *before, const ActionStats *st, int k) {
        _cleanup_free_ char *after = fixture_snapshot_timeless(t->root, DC);

        assert_int_equal(k, 1);
        assert_int_equal(st->n_restored, 0);
        assert_string_equal(after, before);
}

static void test_dc_restore_refusals(void **state) {
        T *t = *state;
        _cleanup_free_ char *full = index_50(t);
        ActionStats st;
        int k;

        build_store(t, ".");
        /* 50 entries: in the plan (the scan saw them), and when they came after the plan */
        assert_int_equal(fixture_write(t->root, PROJ "/sessions-index.json", full), 0);
        {
                _cleanup_free_ char *before = NULL, *why = NULL;

                before = fixture_snapshot_timeless(t->root, DC);
                k = run_restore(t, ".", (const char *const[]){ ID3, NULL }, false, NULL, &st, &why);
                assert_non_null(why);
                assert_non_null(strstr(why, "holds 50 entries"));
                check_refused(t, before, &st, k);
        }
        {
                _cleanup_free_ char *before = NULL, *why = NULL, *index = index_text(t, index_12);

                assert_int_equal(fixture_write(t->root, PROJ "/sessions-index.json", index), 0);
                prep_full(t);
                before = fixture_snapshot_timeless(t->root, DC);
                assert_int_equal(fixture_write(t->root, PROJ "/sessions-index.json", index), 0);
                k = run_restore(t, ".", (const char *const[]){ ID4, NULL }, false, prep_full, &st,
                                &why);
                assert_null(why);
                check_refused(t, before, &st, k);
                assert_int_equal(fixture_write(t->root, PROJ "/sessions-index.json", index), 0);
        }
        /* Deep Code has the id too: a conflict in the plan, and when it came after the plan */
        {
                _cleanup_free_ char *before = NULL, *why = NULL;

                prep_conflict(t);
                before = fixture_snapshot_timeless(t->root, DC);
                rm_rel(t, PROJ "/" ID3 ".jsonl");
                k = run_restore(t, ".", (const char *const[]){ ID3, NULL }, false, prep_conflict,
                                &st, &why);
                assert_null(why);
                check_refused(t, before, &st, k);
                k = run_restore(t, ".", (const char *const[]){ ID3, NULL }, false, NULL, &st, &why);
                assert_non_null(why);
                assert_non_null(strstr(why, "conflict"));
                check_refused(t, before, &st, k);
                rm_rel(t, PROJ "/" ID3 ".jsonl");
        }
        /* its archive not whole (no entry): not proven */
        {
                _cleanup_free_ char *before = NULL, *why = NULL;

                rm_rel(t, ARC "/" ID3 ".entry.json");
                before = fixture_snapshot_timeless(t->root, DC);
                k = run_restore(t, ".", (const char *const[]){ ID3, NULL }, false, NULL, &st, &why);
                assert_non_null(why);
                assert_string_equal(why, "ownership not proven");
                check_refused(t, before, &st, k);
        }
}

/* A Deep Code process works in the project (its originalPath): refused in the plan, and when it
 * started after the plan. */
static pid_t live_pid;

static void prep_live(const T *t) {
        _cleanup_free_ char *work = fixture_path(t->root, "work/proj");

        live_pid = dc_process_start(work);
}

static void test_dc_restore_live_refused(void **state) {
        T *t = *state;
        _cleanup_free_ char *work = fixture_path(t->root, "work/proj"), *code = NULL;
        _cleanup_free_ char *before = NULL, *why = NULL, *log = NULL;
        ActionStats st;
        int k;

        assert_int_equal(fixture_mkdir(t->root, "work/proj"), 0);
        assert_int_equal(dc_project_code(work, &code), 0);
        t->orig = work;
        build_store(t, ".");
        /* the store's project directory named by the real path's code */
        {
                _cleanup_free_ char *a = fixture_path(t->root, DC "/projects/-srv-x");
                _cleanup_free_ char *b = util_strprintf("%s/" DC "/projects/%s", t->root, code);
                _cleanup_free_ char *c = fixture_path(t->root, DC "/.qgc-archive/-srv-x");
                _cleanup_free_ char *d = util_strprintf("%s/" DC "/.qgc-archive/%s", t->root, code);

                assert_int_equal(rename(a, b), 0);
                assert_int_equal(rename(c, d), 0);
        }
        before = fixture_snapshot_timeless(t->root, DC);
        k = run_restore(t, ".", (const char *const[]){ ID3, NULL }, false, prep_live, &st, &why);
        assert_null(why);
        check_refused(t, before, &st, k);
        assert_int_equal(fixture_read(t->root, "actions.log", &log, NULL), 0);
        assert_non_null(strstr(log, "Deep Code pid "));
        /* the process still there at the next scan: refused in the plan */
        free(why);
        why = NULL;
        k = run_restore(t, ".", (const char *const[]){ ID3, NULL }, false, NULL, &st, &why);
        dc_process_stop(live_pid);
        assert_non_null(why);
        assert_non_null(strstr(why, "Deep Code pid "));
        check_refused(t, before, &st, k);
}

/* ---------------------------------------------------------------- crash after every step */

/* Every entry of the index has its transcript and images (Deep Code lists only whole sessions). */
static void check_visible_whole(const T *t, const char *top) {
        _cleanup_free_ char *rel = util_strprintf("%s/" PROJ "/sessions-index.json", top);
        _cleanup_free_ char *text = NULL;
        json_object *root = NULL, *entries = NULL;
        size_t n = 0;

        assert_int_equal(fixture_read(t->root, rel, &text, &n), 0);
        assert_int_equal(json_parse(text, n, &root), 0);
        assert_true(json_object_object_get_ex(root, "entries", &entries));
        for (size_t i = 0; i < json_object_array_length(entries); i++) {
                const char *id = json_get_string(json_object_array_get_idx(entries, i), "id");
                _cleanup_free_ char *f = util_strprintf("%s/" PROJ "/%s.jsonl", top, id);
                _cleanup_free_ char *g = util_strprintf("%s/" PROJ "/images/%s/a.png", top, id);

                if (!fixture_exists(t->root, f) || !fixture_exists(t->root, g))
                        fail_msg("%s: an index entry without its transcript or images", id);
        }
        json_object_put(root);
}

/* The restores' record (its times differ from run to run) out of the comparison: the tree's
 * .qgc/ then holds no marker, as after an unkilled run. */
static void drop_times(const T *t, const char *top) {
        _cleanup_free_ char *f = util_strprintf("%s/" DC "/.qgc/session-times", top);
        _cleanup_free_ char *d = util_strprintf("%s/%s/" DC "/.qgc", t->root, top);

        rm_rel(t, f);
        (void)rmdir(d);
}

static void test_dc_restore_crash_after_every_step(void **state) {
        T *t = *state;
        static const char *const ids[] = { ID3, ID4, NULL };
        _cleanup_free_ char *want = NULL;
        ActionStats st;
        unsigned n;

        build_store(t, "ref");
        assert_int_equal(run_restore(t, "ref", ids, false, NULL, &st, NULL), 0);
        assert_int_equal(st.n_restored, 2);
        drop_times(t, "ref");
        want = fixture_snapshot_timeless(t->root, "ref/h");
        for (n = 1; n < 100; n++) {
                _cleanup_free_ char *top = util_strprintf("run-%u", n);
                _cleanup_free_ char *dir = fixture_path(t->root, top);
                _cleanup_free_ char *rel = util_strprintf("%s/h", top), *got = NULL;
                int status = 0;
                pid_t pid;

                build_store(t, top);
                pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                        hk.crash_after = n;
                        _exit(run_restore(t, top, ids, false, NULL, &st, NULL) == 0 ? 0 : 1);
                }
                assert_int_equal(waitpid(pid, &status, 0), pid);
                assert_true(WIFEXITED(status));
                if (WEXITSTATUS(status) != 99) {
                        assert_int_equal(WEXITSTATUS(status), 0); /* every step was crashed at */
                        break;
                }
                check_visible_whole(t, top);
                /* the rerun: recovery first, then the restores of what is still archived */
                assert_true(run_restore(t, top, ids, true, NULL, &st, NULL) >= 0);
                assert_int_equal(st.n_failed, 0);
                check_visible_whole(t, top);
                drop_times(t, top);
                got = fixture_snapshot_timeless(t->root, rel);
                if (!streq(got, want))
                        fail_msg("crash after step %u, then a rerun: not the unkilled run's "
                                 "tree\n--- unkilled\n%s--- crashed\n%s", n, want, got);
                assert_int_equal(fixture_rm_rf(dir), 0);
        }
        print_message("crashed after each of %u steps\n", n - 1);
        assert_true(n > 8); /* 2 restores of 5 to 7 steps each */
        assert_true(n < 100);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_dc_restore_plain_and_compressed, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_dc_restore_times_by_deepcode_id_rule, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_dc_restore_modes_under_umask, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_dc_restore_refusals, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dc_restore_after_max, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dc_restore_live_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dc_restore_crash_after_every_step, setup,
                                                teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
