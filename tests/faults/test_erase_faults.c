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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erase.h"
#include "fixture.h"
#include "inventory.h"
#include "live.h"
#include "macro.h"

#define A "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
#define B "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
#define X "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
#define HA "1111111111111111111111111111111111111111111111111111111111111111"
#define HB "2222222222222222222222222222222222222222222222222222222222222222"

#define LOGS(id1, id2)                                                                             \
        "[\n  {\n    \"sessionId\": \"" id1 "\",\n    \"messageId\": 0\n  },\n  {\n"           \
        "    \"sessionId\": \"" id2 "\",\n    \"messageId\": 0\n  }\n]"

/* ---------------------------------------------------------------- the seams */

static bool fail_alloc;     /* every malloc/calloc/realloc/reallocarray of qgc's code fails */
static bool fail_dir_fsync; /* fsync() of a directory fails with EIO */

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
int __wrap_live_project_busy(const Tree *t, int chats_fd,
                             bool (*elsewhere)(const char *id, void *userdata), void *userdata,
                             char **ret_reason);

void *__wrap_malloc(size_t n) {
        if (fail_alloc) {
                errno = ENOMEM;
                return NULL;
        }
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

        if (fail_dir_fsync && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
                errno = EIO;
                return -1;
        }
        return __real_fsync(fd);
}

/* No Qwen process is live (the liveness itself is test_live's). */
int __wrap_live_project_busy(const Tree *t, int chats_fd,
                             bool (*elsewhere)(const char *id, void *userdata), void *userdata,
                             char **ret_reason) {
        *ret_reason = NULL;
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
                safe_close(b->items[i].tmp_fd);
                free(b->items[i].why);
        }
        safe_close(b->chats_fd);
        b->root = fixture_free(b->root);
}

/* Does the file rel still hold a row of id? */
static bool has_row(const Batch *b, const char *rel, const char *id) {
        _cleanup_free_ char *text = NULL;
        size_t n;

        assert_int_equal(fixture_read(b->root, rel, &text, &n), 0);
        return strstr(text, id) != NULL;
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

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_erase_batch_enomem_after_an_edit),
                cmocka_unit_test(test_erase_batch_dir_fsync_fails_after_rename),
                cmocka_unit_test(test_erase_batch_enomem_before_any_edit),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
