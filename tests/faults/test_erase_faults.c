/* test_erase_faults.c: a batch's edit of the files Qwen shares (erase_sessions_shared()) under
 * injected failures (ld --wrap of the allocator, fsync and live_project_busy): whatever the
 * batch removed from a file on disk is counted in its sessions' EraseItem.done (the executor
 * journals those counts), and a file that was not written keeps every row, its sessions failed
 * with a reason. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>

#include "erase.h"
#include "erase-edit.h"
#include "fixture.h"
#include "inventory.h"
#include "live.h"
#include "macro.h"
#include "swap-hook.h"

#define A "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
#define B "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
#define X "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
#define HA "1111111111111111111111111111111111111111111111111111111111111111"
#define HB "2222222222222222222222222222222222222222222222222222222222222222"

#define LOGS(id1, id2)                                                                             \
        "[\n  {\n    \"sessionId\": \"" id1 "\",\n    \"messageId\": 0\n  },\n  {\n"           \
        "    \"sessionId\": \"" id2 "\",\n    \"messageId\": 0\n  }\n]"

static void erase_index_freep(EraseIndex **x) {
        erase_index_free(*x);
}

/* ---------------------------------------------------------------- the seams */

static bool fail_alloc;     /* every malloc/calloc/realloc/reallocarray of qgc's code fails */
static size_t alloc_max;    /* the largest malloc/realloc asked for since it was reset */
static bool fail_dir_fsync; /* fsync() of a directory fails with EIO */
static bool no_exchange;    /* renameat2(RENAME_EXCHANGE) fails EINVAL (a filesystem without it) */
/* The next fsync() first reads fsync_rel under fsync_root into *fsync_seen (and clears
 * fsync_seen): a reader of the file while qgc syncs a temp file or the directory, between two
 * of its exchanges. */
static char **fsync_seen;
static const char *fsync_root, *fsync_rel;

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void *__real_reallocarray(void *p, size_t k, size_t n);
int __real_fsync(int fd);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_reallocarray(void *p, size_t k, size_t n);
int __wrap_fsync(int fd);
int __real_renameat2(int olddfd, const char *oldname, int newdfd, const char *newname,
                     unsigned flags);
int __wrap_renameat2(int olddfd, const char *oldname, int newdfd, const char *newname,
                     unsigned flags);
int __wrap_live_project_busy(const Tree *t, int chats_fd,
                             bool (*elsewhere)(const char *id, void *userdata), void *userdata,
                             char **ret_reason);

void *__wrap_malloc(size_t n) {
        if (fail_alloc) {
                errno = ENOMEM;
                return NULL;
        }
        alloc_max = MAX(alloc_max, n);
        return __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n) {
        if (fail_alloc) {
                errno = ENOMEM;
                return NULL;
        }
        return __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n) {
        if (fail_alloc) {
                errno = ENOMEM;
                return NULL;
        }
        alloc_max = MAX(alloc_max, n);
        return __real_realloc(p, n);
}

void *__wrap_reallocarray(void *p, size_t k, size_t n) {
        if (fail_alloc) {
                errno = ENOMEM;
                return NULL;
        }
        return __real_reallocarray(p, k, n);
}

int __wrap_fsync(int fd) {
        struct stat st;
        size_t n;

        if (fsync_seen) {
                char **seen = TAKE_PTR(fsync_seen);

                assert_int_equal(fixture_read(fsync_root, fsync_rel, seen, &n), 0);
        }
        if (fail_dir_fsync && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
                errno = EIO;
                return -1;
        }
        return __real_fsync(fd);
}

int __wrap_renameat2(int olddfd, const char *oldname, int newdfd, const char *newname,
                     unsigned flags) {
        swap_hook_run(flags, newname);
        if (no_exchange && (flags & RENAME_EXCHANGE)) {
                errno = EINVAL;
                return -1;
        }
        return __real_renameat2(olddfd, oldname, newdfd, newname, flags);
}

/* No Qwen process is live (the liveness itself is test_live's), unless busy_id is set: then a
 * process of session busy_id is, which counts for every project but those the batch's filter
 * (elsewhere) says it belongs to only. Each call counts a probe. */
static const char *busy_id;
static unsigned n_probes;
/* Probe number write_at_probe writes write_text to write_root/write_rel first: Qwen writing the
 * file while qgc is about to edit it. */
static unsigned write_at_probe;
static const char *write_root, *write_rel, *write_text;

int __wrap_live_project_busy(const Tree *t, int chats_fd,
                             bool (*elsewhere)(const char *id, void *userdata), void *userdata,
                             char **ret_reason) {
        n_probes++;
        *ret_reason = NULL;
        if (write_at_probe == n_probes)
                assert_int_equal(fixture_write(write_root, write_rel, write_text), 0);
        if (busy_id && !elsewhere(busy_id, userdata)) {
                *ret_reason = strdup("session busy");
                return *ret_reason ? 1 : -ENOMEM;
        }
        return 0;
}

/* The batch's step hook (called right after each rename): arms the fault for what follows. */
typedef struct Arm {
        bool *fault;
        unsigned steps;
} Arm;

static void arm_on_step(void *userdata, const char *step) {
        Arm *a = userdata;

        a->steps++;
        *a->fault = true;
}

/* ---------------------------------------------------------------- the batch */

typedef struct Batch {
        char *root;
        Tree tree;
        Session s[2];
        Inventory inv;
        EraseItem items[2];
        int chats_fd;
} Batch;

/* Sessions A (tmp/HA/logs.json) and B (tmp/HB/logs.json), each file also holding a row of X; no
 * project directories. */
static void batch_setup(Batch *b) {
        _cleanup_free_ char *ta = NULL, *tb = NULL;

        *b = (Batch){};
        assert_int_equal(fixture_new(&b->root), 0);
        assert_int_equal(fixture_write(b->root, "tmp/" HA "/logs.json", LOGS(A, X)), 0);
        assert_int_equal(fixture_write(b->root, "tmp/" HB "/logs.json", LOGS(X, B)), 0);
        ta = fixture_path(b->root, "tmp/" HA);
        tb = fixture_path(b->root, "tmp/" HB);
        assert_non_null(ta);
        assert_non_null(tb);
        b->chats_fd = open(b->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(b->chats_fd >= 0);
        strcpy(b->s[0].id, A);
        b->s[0].hash = (char *)HA;
        b->s[0].project_dir = (char *)"pa";
        strcpy(b->s[1].id, B);
        b->s[1].hash = (char *)HB;
        b->s[1].project_dir = (char *)"pb";
        b->inv = (Inventory){ .trees = &b->tree, .n_trees = 1, .sessions = b->s, .n_sessions = 2 };
        for (size_t i = 0; i < 2; i++)
                b->items[i] = (EraseItem){
                        .s = &b->s[i],
                        .chats_fd = b->chats_fd,
                        .tmp_fd = open(i == 0 ? ta : tb, O_RDONLY | O_DIRECTORY | O_CLOEXEC),
                        .pdir_fd = -ENOENT,
                };
        assert_true(b->items[0].tmp_fd >= 0 && b->items[1].tmp_fd >= 0);
}

static void batch_done(Batch *b) {
        for (size_t i = 0; i < 2; i++) {
                macro_safe_close(b->items[i].tmp_fd);
                free(b->items[i].why);
        }
        macro_safe_close(b->chats_fd);
        b->root = fixture_free(b->root);
}

/* Does the file rel under root still hold a row (or entry) of id? */
static bool has_row_in(const char *root, const char *rel, const char *id) {
        _cleanup_free_ char *text = NULL;
        size_t n;

        assert_int_equal(fixture_read(root, rel, &text, &n), 0);
        return strstr(text, id) != NULL;
}

static bool has_row(const Batch *b, const char *rel, const char *id) {
        return has_row_in(b->root, rel, id);
}

/* Out of memory right after the first file of the batch was renamed into place: that file's rows
 * are gone, so its session's count says so; the second file, never written, keeps its rows and
 * its session fails with a reason. (Before, the batch returned -ENOMEM, "nothing reliable", and
 * the executor reported every session failed with no count: removed rows went unreported.) */
static void test_erase_batch_enomem_after_an_edit(void **state) {
        Batch b;
        Arm arm = { .fault = &fail_alloc };
        int r;

        (void)state;
        batch_setup(&b);
        r = erase_sessions_shared(&b.inv, NULL, b.items, 2, arm_on_step, &arm);
        fail_alloc = false;

        assert_int_equal(arm.steps, 1);
        assert_false(has_row(&b, "tmp/" HA "/logs.json", A)); /* on disk: A's row is gone */
        assert_true(has_row(&b, "tmp/" HA "/logs.json", X));
        assert_true(has_row(&b, "tmp/" HB "/logs.json", B)); /* never written */
        assert_int_equal(r, 0);
        assert_int_equal(b.items[0].r, 0);
        assert_int_equal(b.items[0].done.log_rows, 1);
        assert_true(b.items[1].r < 0);
        assert_int_equal(b.items[1].done.log_rows, 0);
        batch_done(&b);
}

/* The directory fsync after the rename fails: the file on disk has lost the rows, so the count
 * is reported, and the session is kept (the edit may not survive a crash) with the reason. */
static void test_erase_batch_dir_fsync_fails_after_rename(void **state) {
        Batch b;
        Arm arm = { .fault = &fail_dir_fsync };
        int r;

        (void)state;
        batch_setup(&b);
        r = erase_sessions_shared(&b.inv, NULL, b.items, 1, arm_on_step, &arm);
        fail_dir_fsync = false;

        assert_int_equal(r, 0);
        assert_int_equal(arm.steps, 1);
        assert_false(has_row(&b, "tmp/" HA "/logs.json", A)); /* renamed into place */
        assert_int_equal(b.items[0].done.log_rows, 1);
        assert_int_equal(b.items[0].r, -EIO);
        assert_non_null(b.items[0].why);
        batch_done(&b);
}

/* Out of memory before anything is written: -ENOMEM, and every file as it was. */
static void test_erase_batch_enomem_before_any_edit(void **state) {
        Batch b;
        int r;

        (void)state;
        batch_setup(&b);
        fail_alloc = true;
        r = erase_sessions_shared(&b.inv, NULL, b.items, 2, NULL, NULL);
        fail_alloc = false;

        assert_int_equal(r, -ENOMEM);
        assert_true(has_row(&b, "tmp/" HA "/logs.json", A));
        assert_true(has_row(&b, "tmp/" HB "/logs.json", B));
        batch_done(&b);
}

/* ---------------------------------------------------------------- what a batch read before */

#define ROW1(id) "  {\n    \"sessionId\": \"" id "\",\n    \"messageId\": 0\n  }"
#define Z "ffffffff-ffff-4fff-8fff-ffffffffffff"

/* Qwen adds a row to the file after the batch read it and before qgc edits it (right before
 * the edit's liveness probe): the edit does not splice the text read before (the file's stat
 * changed), it reads the file again, so A's row goes and Qwen's stays, as when the edit read
 * the file itself. */
static void test_erase_batch_qwen_writes_before_the_edit(void **state) {
        _cleanup_free_ char *text = NULL;
        Batch b;
        size_t n;

        (void)state;
        batch_setup(&b);
        n_probes = 0;
        write_at_probe = 2; /* 1: before the edits, 2: right before logs.json's */
        write_root = b.root;
        write_rel = "tmp/" HA "/logs.json";
        write_text = "[\n" ROW1(A) ",\n" ROW1(X) ",\n" ROW1(Z) "\n]";
        assert_int_equal(erase_sessions_shared(&b.inv, NULL, b.items, 1, NULL, NULL), 0);
        write_at_probe = 0;
        assert_int_equal(n_probes, 2);
        assert_int_equal(b.items[0].r, 0);
        assert_int_equal(b.items[0].done.log_rows, 1);
        assert_int_equal(fixture_read(b.root, "tmp/" HA "/logs.json", &text, &n), 0);
        assert_string_equal(text, "[\n" ROW1(X) ",\n" ROW1(Z) "\n]");
        batch_done(&b);
}

/* The batches of a run (one index) edit one file in turn: the second starts from what the first
 * wrote (its parse kept, not read again), and the kept parse is only ever taken for the very
 * text it was made from: a file rewritten in place with other bytes of the same size and the
 * same mtime is read as what it is. */
static void test_erase_batch_kept_parse_follows_the_text(void **state) {
        _cleanup_(erase_index_freep) EraseIndex *ix = NULL;
        _cleanup_free_ char *text = NULL, *path = NULL;
        struct stat st;
        Batch b;
        size_t n;

        (void)state;
        batch_setup(&b);
        assert_int_equal(fixture_write(b.root, "tmp/" HA "/logs.json",
                                       "[\n" ROW1(A) ",\n" ROW1(X) ",\n" ROW1(Z) "\n]"),
                         0);
        strcpy(b.s[1].id, Z); /* the second item: Z, of A's hash */
        b.s[1].hash = (char *)HA;
        macro_safe_close(b.items[1].tmp_fd);
        b.items[1].tmp_fd = dup(b.items[0].tmp_fd);
        assert_true(b.items[1].tmp_fd >= 0);

        assert_int_equal(erase_sessions_shared(&b.inv, &ix, &b.items[0], 1, NULL, NULL), 0);
        assert_int_equal(b.items[0].done.log_rows, 1);
        assert_int_equal(erase_sessions_shared(&b.inv, &ix, &b.items[1], 1, NULL, NULL), 0);
        assert_int_equal(b.items[1].r, 0);
        assert_int_equal(b.items[1].done.log_rows, 1);
        assert_int_equal(fixture_read(b.root, "tmp/" HA "/logs.json", &text, &n), 0);
        assert_string_equal(text, "[\n" ROW1(X) "\n]");
        free(text);
        text = NULL;

        /* X's row becomes Z's: the same size, the same inode, the same mtime */
        path = fixture_path(b.root, "tmp/" HA "/logs.json");
        assert_non_null(path);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(fixture_write(b.root, "tmp/" HA "/logs.json", "[\n" ROW1(Z) "\n]"), 0);
        assert_int_equal(utimensat(AT_FDCWD, path, (const struct timespec[]){ st.st_atim, st.st_mtim },
                                   0),
                         0);
        assert_int_equal(erase_sessions_shared(&b.inv, &ix, &b.items[1], 1, NULL, NULL), 0);
        assert_int_equal(b.items[1].r, 0);
        assert_int_equal(b.items[1].done.log_rows, 1);
        assert_int_equal(fixture_read(b.root, "tmp/" HA "/logs.json", &text, &n), 0);
        assert_string_equal(text, "[]");
        batch_done(&b);
}

/* ---------------------------------------------------------------- the liveness probes */

#define A2 "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
#define Y "eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee"
#define Y_UPPER "EEEEEEEE-EEEE-4EEE-8EEE-EEEEEEEEEEEE"
#define ORG(id1, id2) "{\n  \"sessions\": {\n    \"" id1 "\": {},\n    \"" id2 "\": {}\n  }\n}"

/* Sessions s[0] and s[1] of project pa (projects/pa/, its organisation file with both), s[0] of
 * hash HA, s[1] of hash h1; s[2] (no item) of project pc and hash HB. */
typedef struct Probes {
        char *root;
        Tree tree;
        Session s[3];
        Inventory inv;
        EraseItem items[2];
        int chats_fd, pdir_fd;
} Probes;

static void probes_setup(Probes *b, const char *id1, const char *h1) {
        _cleanup_free_ char *ta = NULL, *tb = NULL, *pa = NULL;
        const char *ids[] = { A, id1, Y }, *hashes[] = { HA, h1, HB };
        const char *dirs[] = { "pa", "pa", "pc" };

        *b = (Probes){};
        assert_int_equal(fixture_new(&b->root), 0);
        if (streq(h1, HA))
                assert_int_equal(fixture_write(b->root, "tmp/" HA "/logs.json", LOGS(A, A2)), 0);
        else {
                assert_int_equal(fixture_write(b->root, "tmp/" HA "/logs.json", LOGS(A, X)), 0);
                assert_int_equal(fixture_write(b->root, "tmp/" HB "/logs.json", LOGS(X, B)), 0);
        }
        assert_int_equal(fixture_write(b->root, "projects/pa/session-organization.v1.json",
                                       streq(h1, HA) ? ORG(A, A2) : ORG(A, B)),
                         0);
        ta = fixture_path(b->root, "tmp/" HA);
        tb = fixture_path(b->root, streq(h1, HA) ? "tmp/" HA : "tmp/" HB);
        pa = fixture_path(b->root, "projects/pa");
        b->chats_fd = open(b->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        b->pdir_fd = open(pa, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(b->chats_fd >= 0 && b->pdir_fd >= 0);
        for (size_t i = 0; i < 3; i++) {
                strcpy(b->s[i].id, ids[i]);
                b->s[i].hash = (char *)hashes[i];
                b->s[i].project_dir = (char *)dirs[i];
        }
        b->inv = (Inventory){ .trees = &b->tree, .n_trees = 1, .sessions = b->s, .n_sessions = 3 };
        b->items[0] = (EraseItem){ .s = &b->s[0], .chats_fd = b->chats_fd, .pdir_fd = b->pdir_fd,
                                   .tmp_fd = open(ta, O_RDONLY | O_DIRECTORY | O_CLOEXEC) };
        b->items[1] = (EraseItem){ .s = &b->s[1], .chats_fd = b->chats_fd, .pdir_fd = b->pdir_fd,
                                   .tmp_fd = streq(h1, HA) ? b->items[0].tmp_fd
                                                           : open(tb, O_RDONLY | O_DIRECTORY |
                                                                              O_CLOEXEC) };
        assert_true(b->items[0].tmp_fd >= 0 && b->items[1].tmp_fd >= 0);
        n_probes = 0;
        busy_id = NULL;
}

static void probes_done(Probes *b) {
        if (b->items[1].tmp_fd != b->items[0].tmp_fd)
                macro_safe_close(b->items[1].tmp_fd);
        macro_safe_close(b->items[0].tmp_fd);
        for (size_t i = 0; i < 2; i++)
                free(b->items[i].why);
        macro_safe_close(b->pdir_fd);
        macro_safe_close(b->chats_fd);
        b->root = fixture_free(b->root);
        busy_id = NULL;
}

/* Two sessions of one project (one hash, one chats/): they ask live_project_busy() the same
 * question, so it is asked once before the edits and once right before each file's edit (not
 * once per session each time); both files edited. */
static void test_erase_batch_one_probe_per_question(void **state) {
        _cleanup_free_ char *org = NULL;
        Probes b;
        size_t n;

        (void)state;
        probes_setup(&b, A2, HA);
        assert_int_equal(erase_sessions_shared(&b.inv, NULL, b.items, 2, NULL, NULL), 0);
        assert_int_equal(n_probes, 3); /* before the edits, before logs.json, before the org file */
        for (size_t i = 0; i < 2; i++) {
                assert_int_equal(b.items[i].r, 0);
                assert_int_equal(b.items[i].done.log_rows, 1);
                assert_int_equal(b.items[i].done.org_entries, 1);
        }
        assert_int_equal(fixture_read(b.root, "projects/pa/session-organization.v1.json", &org, &n),
                         0);
        assert_string_equal(org, "{\n  \"sessions\": {}\n}");
        probes_done(&b);
}

/* Two sessions of one project directory but of different hashes (their organisation file is one,
 * their logs.json two): they ask different questions, each answered by its own probe. A process
 * of Y (named in another case), a session of B's hash only, makes B's project busy and not A's:
 * A's logs.json is edited, B's is not, and their common organisation file is not (B was found
 * busy); the reason is B's, also for A. Then Y of A's hash instead, with the index the first
 * call built kept (a run's): the other way round. */
static void test_erase_batch_probes_tell_hashes_apart(void **state) {
        _cleanup_(erase_index_freep) EraseIndex *ix = NULL;
        Probes b;

        (void)state;
        for (int round = 0; round < 2; round++) {
                probes_setup(&b, B, HB);
                if (round == 1)
                        b.s[2].hash = (char *)HA; /* Y now of A's hash: A busy, not B */
                busy_id = Y_UPPER;
                assert_int_equal(erase_sessions_shared(&b.inv, &ix, b.items, 2, NULL, NULL), 0);
                assert_non_null(ix);
                assert_int_equal(n_probes, 3); /* A, B; A again before its logs.json */
                assert_int_equal(b.items[round].done.log_rows, 1);
                assert_int_equal(b.items[round].r, -EAGAIN);
                assert_int_equal(b.items[1 - round].done.log_rows, 0);
                assert_int_equal(b.items[1 - round].r, -EAGAIN);
                assert_non_null(strstr(b.items[1 - round].why, "(session busy)"));
                assert_string_equal(b.items[round].why, b.items[1 - round].why);
                const char *edited = round ? "tmp/" HB "/logs.json" : "tmp/" HA "/logs.json";
                const char *kept = round ? "tmp/" HA "/logs.json" : "tmp/" HB "/logs.json";

                assert_false(has_row_in(b.root, edited, round ? B : A));
                assert_true(has_row_in(b.root, kept, round ? A : B));
                assert_true(has_row_in(b.root, "projects/pa/session-organization.v1.json", A));
                assert_true(has_row_in(b.root, "projects/pa/session-organization.v1.json", B));
                probes_done(&b);
        }
}

/* The scan found Y (of B's hash, another project directory) live: B is not edited, named for Y
 * (no probe asked for it), A is (its logs.json; their organisation file is not, as B is busy). */
static void test_erase_batch_scan_live_session_of_the_project(void **state) {
        Probes b;

        (void)state;
        probes_setup(&b, B, HB);
        b.s[2].live = LIVE_CLAIM;
        assert_int_equal(erase_sessions_shared(&b.inv, NULL, b.items, 2, NULL, NULL), 0);
        assert_int_equal(n_probes, 2); /* A before the edits, A before its logs.json */
        assert_int_equal(b.items[1].r, -EAGAIN);
        assert_string_equal(b.items[1].why, "session " Y " of the project is in use: its shared "
                                            "files are not edited now");
        assert_int_equal(b.items[0].r, -EAGAIN);
        assert_string_equal(b.items[0].why, b.items[1].why);
        assert_int_equal(b.items[0].done.log_rows, 1);
        assert_int_equal(b.items[1].done.log_rows, 0);
        assert_true(has_row_in(b.root, "tmp/" HB "/logs.json", B));
        assert_true(has_row_in(b.root, "projects/pa/session-organization.v1.json", A));
        probes_done(&b);
}

/* ---------------------------------------------------------------- a writer during the edit */

/* A writer of logs.json as Qwen's Logger is one: it reads the file, adds its row, and writes the
 * whole text back, by rename (atomicWriteFile) or in place (fs.writeFile: Qwen 0.15, and newer
 * ones when the file's owner is another user), framed as JSON.stringify(rows, null, 2). Its rows
 * are "<tag>-<n>" of session id, n counting from 0. */
typedef struct Writer {
        const char *root;
        const char *rel;  /* tmp/<hash>/logs.json */
        bool in_place;
        const char *id;
        char tag;
        unsigned n;       /* rows written */
        unsigned round;   /* writer_hook(): its calls in this edit */
        unsigned only;    /* writer_hook() writes in this round of an edit only (0: in each) */
        pthread_mutex_t *lock; /* held for each write (another thread writes too), or NULL */
} Writer;

/* The writer's next row added to text (n bytes, the file as it read it), written to the file. */
static void writer_put(Writer *w, const char *text, size_t n) {
        _cleanup_free_ char *row = NULL, *out = NULL, *tmp = NULL, *path = NULL;
        int fd;

        row = util_strprintf(
                "{\n    \"sessionId\": \"%s\",\n    \"messageId\": %u,\n    \"message\": "
                "\"%c-%u\"\n  }",
                w->id, w->n, w->tag, w->n);
        assert_non_null(row);
        if (streq(text, "[]"))
                out = util_strprintf("[\n  %s\n]", row);
        else {
                assert_true(n >= 2 && streq(text + n - 2, "\n]"));
                out = util_strprintf("%.*s,\n  %s\n]", (int)(n - 2), text, row);
        }
        assert_non_null(out);
        path = fixture_path(w->root, w->rel);
        tmp = util_strprintf("%s.%c.tmp", path, w->tag);
        fd = open(w->in_place ? path : tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, out, strlen(out)), (ssize_t)strlen(out));
        assert_int_equal(close(fd), 0);
        if (!w->in_place)
                assert_int_equal(rename(tmp, path), 0);
        w->n++;
}

static void writer_write(Writer *w) {
        _cleanup_free_ char *text = NULL;
        size_t n = 0;

        if (w->lock)
                pthread_mutex_lock(w->lock);
        assert_int_equal(fixture_read(w->root, w->rel, &text, &n), 0);
        writer_put(w, text, n);
        if (w->lock)
                pthread_mutex_unlock(w->lock);
}

static int open_dir_in(const char *root, const char *rel) {
        _cleanup_free_ char *p = fixture_path(root, rel);
        int fd;

        assert_non_null(p);
        fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        return fd;
}

/* erase.h's seam: right before qgc's version replaces the file. */
static void writer_hook(void *userdata, const char *name) {
        Writer *w = userdata;

        if (!streq(name, "logs.json"))
                return;
        w->round++;
        if (w->only == 0 || w->round == w->only)
                writer_write(w);
}

/* Is row "<tag>-<i>" in rel? */
static bool has_writer_row(const char *root, const char *rel, char tag, unsigned i) {
        _cleanup_free_ char *text = NULL, *want = util_strprintf("\"%c-%u\"", tag, i);
        size_t n;

        assert_non_null(want);
        if (fixture_read(root, rel, &text, &n) < 0)
                return false;
        return strstr(text, want) != NULL;
}

/* The edit of logs.json for one session (erase_edit(), as a batch runs it for a file). */
static int logs_rows_edit(int dir_fd, const char *id) {
        const EraseIds ids = { .ids = &id, .n = 1 };
        unsigned removed;

        return erase_edit(dir_fd, ERASE_LOGS_FILE, erase_splice_parse_logs, &ids, NULL, NULL,
                          &removed, NULL, 0, NULL);
}

/* The names of the versions qgc kept beside logs.json (erase_keep_unmerged()), ' '-separated. */
static char *kept_versions(const char *root) {
        _cleanup_free_ char *dir = fixture_path(root, "tmp/" HA);
        _cleanup_(strbuf_done) StrBuf sb = {};
        DIR *d = opendir(dir);
        struct dirent *de;

        assert_non_null(d);
        while ((de = readdir(d)))
                if (strneq(de->d_name, "logs.json.qgc-unmerged-", 23))
                        assert_int_equal(strbuf_printf(&sb, "%s ", de->d_name), 0);
        closedir(d);
        return strbuf_steal(&sb);
}

/* A writer adds a row of another session in the window where qgc's rename used to replace it
 * unseen (Qwen's Logger takes no lock; a Qwen started during the edit is not live yet): its
 * version comes back from the exchange, is merged, and put in place in a second round. Many
 * edits, by rename and in place: no row of the writer is ever lost, none of A's stays, and
 * every edit took exactly two rounds (the write did happen between qgc's read and its replace).
 * Before, the same write in that window was lost every time. */
static void writer_in_the_window(bool exchange) {
        _cleanup_free_ char *root = NULL;
        _cleanup_close_ int dfd = -EBADF;
        Writer a = { .rel = "tmp/" HA "/logs.json", .id = A, .tag = 'a' };
        Writer x = { .rel = "tmp/" HA "/logs.json", .id = X, .tag = 'x', .only = 1 };

        assert_int_equal(fixture_new(&root), 0);
        a.root = x.root = root;
        assert_int_equal(fixture_write(root, a.rel, "[]"), 0);
        dfd = open_dir_in(root, "tmp/" HA);
        no_exchange = !exchange;
        swap_hook_set(writer_hook, &x);
        for (unsigned i = 0; i < 100; i++) {
                /* two rows of A, which the edit removes */
                writer_write(&a);
                writer_write(&a);
                x.in_place = i % 2 == 1;
                x.round = 0;
                assert_int_equal(logs_rows_edit(dfd, A), 2);
                assert_int_equal(x.n, i + 1);
                for (unsigned j = 0; j < x.n; j++)
                        assert_true(has_writer_row(root, x.rel, 'x', j));
                assert_false(has_row_in(root, x.rel, A));
                assert_int_equal(x.round, exchange ? 3 : 2);
        }
        swap_hook_set(NULL, NULL);
        no_exchange = false;
        assert_false(fixture_exists(root, "tmp/" HA "/.logs.json.qgc-tmp"));
        assert_false(fixture_exists(root, "tmp/" HA "/.logs.json.qgc-tmp2"));
        root = fixture_free(root);
}

static void test_erase_writer_in_the_window_merged(void **state) {
        (void)state;
        writer_in_the_window(true);
}

/* The same where the filesystem cannot exchange: the name is opened right before the rename, and
 * a writer before that open is seen the same way. */
static void test_erase_writer_in_the_window_merged_without_exchange(void **state) {
        (void)state;
        writer_in_the_window(false);
}

/* The writer adds a row of the very session being deleted (it is being written: a Qwen resumed
 * it): its version is put back whole, nothing of A more goes, and the edit fails (-EAGAIN: the
 * executor keeps the session, a later run retries). */
static void test_erase_writer_of_the_deleted_session_wins(void **state) {
        _cleanup_free_ char *root = NULL, *text = NULL;
        _cleanup_close_ int dfd = -EBADF;
        Writer a = { .rel = "tmp/" HA "/logs.json", .id = A, .tag = 'a', .only = 1 };
        Writer x = { .rel = "tmp/" HA "/logs.json", .id = X, .tag = 'x' };
        size_t n;

        (void)state;
        assert_int_equal(fixture_new(&root), 0);
        a.root = x.root = root;
        assert_int_equal(fixture_write(root, a.rel, "[]"), 0);
        writer_write(&x);
        writer_write(&a);
        dfd = open_dir_in(root, "tmp/" HA);
        swap_hook_set(writer_hook, &a);
        assert_int_equal(logs_rows_edit(dfd, A), -EAGAIN);
        swap_hook_set(NULL, NULL);
        assert_int_equal(a.round, 2); /* replaced, then put back */
        assert_int_equal(fixture_read(root, a.rel, &text, &n), 0);
        assert_string_equal(text, "[\n  {\n    \"sessionId\": \"" X "\",\n    \"messageId\": 0,\n"
                                  "    \"message\": \"x-0\"\n  },\n  {\n    \"sessionId\": \"" A
                                  "\",\n    \"messageId\": 0,\n    \"message\": \"a-0\"\n  },\n  {\n"
                                  "    \"sessionId\": \"" A "\",\n    \"messageId\": 1,\n"
                                  "    \"message\": \"a-1\"\n  }\n]");
        root = fixture_free(root);
}

/* A writer that rewrites the file before every one of qgc's exchanges (those that put a writer's
 * version back too): after ERASE_EDIT_ROUNDS (8) the edit stops and fails (-EAGAIN: A is kept, a
 * later run retries); a writer's version is at the name, and what qgc merged (every row the
 * writer wrote, without A's) is kept beside and reported. Nothing of the writer is lost. */
static void test_erase_writer_outruns_the_rounds(void **state) {
        _cleanup_free_ char *root = NULL, *kept = NULL, *rel = NULL;
        _cleanup_close_ int dfd = -EBADF;
        Writer a = { .rel = "tmp/" HA "/logs.json", .id = A, .tag = 'a' };
        Writer x = { .rel = "tmp/" HA "/logs.json", .id = X, .tag = 'x' };

        (void)state;
        assert_int_equal(fixture_new(&root), 0);
        a.root = x.root = root;
        assert_int_equal(fixture_write(root, a.rel, "[]"), 0);
        writer_write(&a);
        dfd = open_dir_in(root, "tmp/" HA);
        swap_hook_set(writer_hook, &x);
        assert_int_equal(logs_rows_edit(dfd, A), -EAGAIN);
        swap_hook_set(NULL, NULL);
        assert_int_equal(x.round, 8);
        kept = kept_versions(root);
        assert_non_null(kept);
        assert_non_null(strchr(kept, ' '));
        assert_ptr_equal(strchr(kept, ' ') + 1, kept + strlen(kept)); /* exactly one */
        *strchr(kept, ' ') = 0;
        rel = util_strprintf("tmp/" HA "/%s", kept);
        for (unsigned j = 0; j < x.n; j++)
                assert_true(has_writer_row(root, rel, 'x', j));
        assert_false(has_row_in(root, rel, A));
        assert_false(fixture_exists(root, "tmp/" HA "/.logs.json.qgc-tmp"));
        assert_false(fixture_exists(root, "tmp/" HA "/.logs.json.qgc-tmp2"));
        root = fixture_free(root);
}

/* A writer whose version an exchange displaced hides no row from the next reader: X adds its row
 * right before qgc's first exchange (by rename or in place), so qgc's version, without that row,
 * is at the name after it; Y reads the file while qgc syncs its next temp file or the directory
 * (the next fsync()), and writes its row after the edit, on the text it read. The exchange puts
 * X's version back at the name at once, before any fsync, so Y read X's row and wrote it again:
 * no row of X is lost. Before, qgc's version stayed at the name for the whole next round (temp
 * file written and synced) and Y's write lost X's row every time. Y may bring back rows of A
 * that X's version still held (Y read them); that loses nothing. The limit: a reader in the
 * microseconds between the exchange and the exchange back still reads qgc's version. */
typedef struct Hider {
        Writer x;
        char *seen; /* the text Y read */
} Hider;

static void hider_hook(void *userdata, const char *name) {
        Hider *h = userdata;

        if (!streq(name, "logs.json") || ++h->x.round != 1)
                return;
        writer_write(&h->x);
        fsync_root = h->x.root;
        fsync_rel = h->x.rel;
        fsync_seen = &h->seen;
}

static void test_erase_writer_version_hides_no_row(void **state) {
        _cleanup_free_ char *root = NULL;
        _cleanup_close_ int dfd = -EBADF;
        Writer a = { .rel = "tmp/" HA "/logs.json", .id = A, .tag = 'a' };
        Writer y = { .rel = "tmp/" HA "/logs.json", .id = B, .tag = 'y' };
        Hider h = { .x = { .rel = "tmp/" HA "/logs.json", .id = X, .tag = 'x' } };

        (void)state;
        assert_int_equal(fixture_new(&root), 0);
        a.root = y.root = h.x.root = root;
        assert_int_equal(fixture_write(root, a.rel, "[]"), 0);
        dfd = open_dir_in(root, "tmp/" HA);
        swap_hook_set(hider_hook, &h);
        for (unsigned i = 0; i < 40; i++) {
                writer_write(&a);
                writer_write(&a);
                h.x.in_place = i % 2 == 1;
                y.in_place = i % 4 >= 2;
                h.x.round = 0;
                assert_true(logs_rows_edit(dfd, A) >= 2);
                assert_int_equal(h.x.n, i + 1);
                assert_null(fsync_seen); /* Y did read */
                assert_non_null(h.seen);
                writer_put(&y, h.seen, strlen(h.seen));
                free(h.seen);
                h.seen = NULL;
                for (unsigned j = 0; j < h.x.n; j++)
                        assert_true(has_writer_row(root, h.x.rel, 'x', j));
                for (unsigned j = 0; j < y.n; j++)
                        assert_true(has_writer_row(root, y.rel, 'y', j));
        }
        swap_hook_set(NULL, NULL);
        root = fixture_free(root);
}

/* Where the filesystem cannot exchange, the name is opened right before qgc's rename: a writer's
 * version there that qgc cannot read back (over ERASE_FILE_MAX) is then held only by that fd.
 * It is kept beside the file (copied a chunk at a time: qgc never holds it whole), never
 * dropped, and the edit fails
 * (-EAGAIN: A is kept, a later run retries). Before, the edit failed and the version was lost:
 * qgc's version was at the name, and the writer's row in none. */
static void big_hook(void *userdata, const char *name) {
        Writer *w = userdata;
        _cleanup_free_ char *text = NULL, *tmp = NULL, *path = NULL;
        const char *pre = "[\n  {\n    \"sessionId\": \"" X "\",\n    \"messageId\": 0,\n"
                          "    \"message\": \"x-big ";
        size_t n = ERASE_FILE_MAX + 1;

        if (!streq(name, "logs.json") || ++w->round != 1)
                return;
        text = __real_malloc(n); /* not counted in alloc_max: the writer's, not qgc's */
        assert_non_null(text);
        memset(text, 'y', n);
        memcpy(text, pre, strlen(pre));
        memcpy(text + n - 8, "\"\n  }\n]", 8);
        path = fixture_path(w->root, w->rel);
        tmp = util_strprintf("%s.big.tmp", path);
        assert_non_null(tmp);
        assert_int_equal(fixture_write_bytes(w->root, "tmp/" HA "/logs.json.big.tmp", text, n), 0);
        assert_int_equal(rename(tmp, path), 0);
}

static void test_erase_unreadable_writer_version_kept_without_exchange(void **state) {
        _cleanup_free_ char *root = NULL, *kept = NULL, *rel = NULL, *text = NULL;
        _cleanup_close_ int dfd = -EBADF;
        Writer a = { .rel = "tmp/" HA "/logs.json", .id = A, .tag = 'a' };
        Writer x = { .rel = "tmp/" HA "/logs.json", .id = X, .tag = 'x' };
        size_t n;

        (void)state;
        assert_int_equal(fixture_new(&root), 0);
        a.root = x.root = root;
        assert_int_equal(fixture_write(root, a.rel, "[]"), 0);
        writer_write(&a);
        dfd = open_dir_in(root, "tmp/" HA);
        no_exchange = true;
        swap_hook_set(big_hook, &x);
        alloc_max = 0;
        assert_int_equal(logs_rows_edit(dfd, A), -EAGAIN);
        assert_true(alloc_max < ERASE_FILE_MAX / 2);
        swap_hook_set(NULL, NULL);
        no_exchange = false;
        kept = kept_versions(root);
        assert_non_null(kept);
        assert_non_null(strchr(kept, ' '));
        assert_ptr_equal(strchr(kept, ' ') + 1, kept + strlen(kept)); /* exactly one */
        *strchr(kept, ' ') = 0;
        rel = util_strprintf("tmp/" HA "/%s", kept);
        assert_non_null(rel);
        assert_int_equal(fixture_read(root, rel, &text, &n), 0);
        assert_int_equal(n, ERASE_FILE_MAX + 1);
        assert_non_null(strstr(text, "\"x-big y"));
        assert_false(fixture_exists(root, "tmp/" HA "/.logs.json.qgc-tmp"));
        assert_false(fixture_exists(root, "tmp/" HA "/.logs.json.qgc-keep"));
        root = fixture_free(root);
}

/* A writer thread rewrites logs.json again and again during each edit (by rename, as Qwen 0.24
 * does, and in place): qgc's hook, right before each of its replaces, lets the thread write once
 * and waits for that write (so each race is known to have happened, and is counted), for the
 * first three replaces of every edit. 200 edits: every edit takes four rounds, no row the thread
 * wrote is lost, none of A's stays. */
typedef struct Loop {
        Writer w;
        pthread_mutex_t m;
        pthread_cond_t c;
        unsigned go, done; /* writes asked for, writes done */
        bool stop;
        unsigned races;
} Loop;

static void *loop_writer(void *userdata) {
        Loop *l = userdata;

        pthread_mutex_lock(&l->m);
        for (;;) {
                while (!l->stop && l->go == l->done)
                        pthread_cond_wait(&l->c, &l->m);
                if (l->stop)
                        break;
                pthread_mutex_unlock(&l->m);
                l->w.in_place = l->done % 3 == 2;
                writer_write(&l->w);
                pthread_mutex_lock(&l->m);
                l->done++;
                pthread_cond_broadcast(&l->c);
        }
        pthread_mutex_unlock(&l->m);
        return NULL;
}

static void loop_hook(void *userdata, const char *name) {
        Loop *l = userdata;

        if (!streq(name, "logs.json") || ++l->w.round > 3)
                return;
        pthread_mutex_lock(&l->m);
        l->go++;
        pthread_cond_broadcast(&l->c);
        while (l->done != l->go)
                pthread_cond_wait(&l->c, &l->m);
        l->races++;
        pthread_mutex_unlock(&l->m);
}

static void test_erase_writer_thread_loses_no_row(void **state) {
        _cleanup_free_ char *root = NULL, *kept = NULL;
        _cleanup_close_ int dfd = -EBADF;
        Writer a = { .rel = "tmp/" HA "/logs.json", .id = A, .tag = 'a' };
        Loop l = { .w = { .rel = "tmp/" HA "/logs.json", .id = X, .tag = 'x' },
                   .m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER };
        unsigned edits = 200;
        pthread_t th;

        (void)state;
        assert_int_equal(fixture_new(&root), 0);
        a.root = l.w.root = root;
        assert_int_equal(fixture_write(root, a.rel, "[]"), 0);
        dfd = open_dir_in(root, "tmp/" HA);
        assert_int_equal(pthread_create(&th, NULL, loop_writer, &l), 0);
        swap_hook_set(loop_hook, &l);
        for (unsigned i = 0; i < edits; i++) {
                writer_write(&a);
                writer_write(&a);
                l.w.round = 0;
                assert_int_equal(logs_rows_edit(dfd, A), 2);
                assert_int_equal(l.w.round, 5);
                assert_false(has_row_in(root, l.w.rel, A));
        }
        swap_hook_set(NULL, NULL);
        pthread_mutex_lock(&l.m);
        l.stop = true;
        pthread_cond_broadcast(&l.c);
        pthread_mutex_unlock(&l.m);
        assert_int_equal(pthread_join(th, NULL), 0);
        assert_int_equal(l.races, 3 * edits);
        assert_int_equal(l.w.n, 3 * edits);
        for (unsigned j = 0; j < l.w.n; j++)
                assert_true(has_writer_row(root, l.w.rel, 'x', j));
        kept = kept_versions(root);
        assert_string_equal(kept, ""); /* nothing kept beside */
        root = fixture_free(root);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_erase_batch_enomem_after_an_edit),
                cmocka_unit_test(test_erase_batch_dir_fsync_fails_after_rename),
                cmocka_unit_test(test_erase_batch_enomem_before_any_edit),
                cmocka_unit_test(test_erase_batch_qwen_writes_before_the_edit),
                cmocka_unit_test(test_erase_batch_kept_parse_follows_the_text),
                cmocka_unit_test(test_erase_batch_one_probe_per_question),
                cmocka_unit_test(test_erase_batch_probes_tell_hashes_apart),
                cmocka_unit_test(test_erase_batch_scan_live_session_of_the_project),
                cmocka_unit_test(test_erase_writer_in_the_window_merged),
                cmocka_unit_test(test_erase_writer_in_the_window_merged_without_exchange),
                cmocka_unit_test(test_erase_writer_of_the_deleted_session_wins),
                cmocka_unit_test(test_erase_writer_outruns_the_rounds),
                cmocka_unit_test(test_erase_writer_thread_loses_no_row),
                cmocka_unit_test(test_erase_writer_version_hides_no_row),
                cmocka_unit_test(test_erase_unreadable_writer_version_kept_without_exchange),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
