/* test_cold: the compressed cold tier (src/cold.c) on real files: byte-identical and
 * mtime-identical round trips, verification before anything is removed. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cold.h"
#include "fixture.h"
#include "macro.h"
#include "util.h"

typedef struct T {
        char *root;
        int dir_fd, cold_fd;
} T;

static int setup(void **state) {
        T *t = calloc(1, sizeof(T));
        _cleanup_free_ char *cold = NULL;

        assert_non_null(t);
        assert_int_equal(fixture_new(&t->root), 0);
        assert_int_equal(fixture_mkdir(t->root, "archive"), 0);
        assert_int_equal(fixture_mkdir(t->root, "archive/" COLD_DIR), 0);
        cold = fixture_path(t->root, "archive/" COLD_DIR);
        t->cold_fd = open(cold, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        free(cold);
        cold = fixture_path(t->root, "archive");
        t->dir_fd = open(cold, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(t->cold_fd >= 0 && t->dir_fd >= 0);
        *state = t;
        return 0;
}

static int teardown(void **state) {
        T *t = *state;

        safe_close(t->dir_fd);
        safe_close(t->cold_fd);
        t->root = fixture_free(t->root);
        free(t);
        return 0;
}

/* A transcript-like file of about n bytes. */
static char *make_jsonl(size_t n) {
        StrBuf b = {};

        for (unsigned i = 0; b.len < n; i++)
                assert_true(strbuf_printf(&b,
                                          "{\"uuid\":\"%08x\",\"type\":\"assistant\","
                                          "\"message\":{\"parts\":[{\"text\":\"line %u\"}]}}\n",
                                          i * 2654435761U, i) >= 0);
        return strbuf_steal(&b);
}

static void roundtrip(T *t, size_t n) {
        _cleanup_free_ char *data = make_jsonl(n), *back = NULL;
        const char *name = "11111111-2222-3333-4444-555555555555.jsonl";
        _cleanup_free_ char *rel = strprintf("archive/%s", name);
        _cleanup_free_ char *zrel = strprintf("archive/" COLD_DIR "/%s" COLD_SUFFIX, name);
        _cleanup_free_ char *p = fixture_path(t->root, rel), *zp = fixture_path(t->root, zrel);
        ColdResult res = {};
        struct stat st0, st1, stz;
        size_t len = 0;

        assert_int_equal(fixture_write(t->root, rel, data), 0);
        assert_int_equal(fixture_set_times(t->root, rel, 1600000000, 1700000000), 0);
        assert_int_equal(stat(p, &st0), 0);

        assert_int_equal(cold_compress(t->dir_fd, name, t->cold_fd, 3, NULL, NULL, NULL, &res),
                         0);
        assert_false(fixture_exists(t->root, rel));
        assert_int_equal(stat(zp, &stz), 0);
        assert_int_equal(stz.st_mtim.tv_sec, 1700000000);
        assert_int_equal(res.bytes_in, strlen(data));
        assert_int_equal(res.bytes_out, (uint64_t)stz.st_size);
        if (n > 4096)
                assert_true(res.bytes_out * 4 < res.bytes_in);

        assert_int_equal(cold_decompress(t->cold_fd, name, t->dir_fd, NULL, NULL, NULL), 0);
        assert_false(fixture_exists(t->root, zrel));
        assert_int_equal(fixture_read(t->root, rel, &back, &len), 0);
        assert_int_equal(len, strlen(data));
        assert_memory_equal(back, data, len);
        assert_int_equal(stat(p, &st1), 0);
        assert_int_equal(st1.st_mtim.tv_sec, st0.st_mtim.tv_sec);
        assert_int_equal(st1.st_mtim.tv_nsec, st0.st_mtim.tv_nsec);
        assert_int_equal(fixture_rm_rf(p), 0);
}

static void test_cold_roundtrip_byte_and_mtime_identical(void **state) {
        roundtrip(*state, 0);
        roundtrip(*state, 100);
        roundtrip(*state, 300 * 1000);
        roundtrip(*state, 5 * 1024 * 1024); /* several zstd blocks and read chunks */
}

/* A compressed file that does not decompress to what it recorded is never restored. */
static void test_cold_corrupt_file_refused(void **state) {
        T *t = *state;
        _cleanup_free_ char *data = make_jsonl(50000), *z = NULL;
        const char *name = "a.jsonl";
        size_t len = 0;

        assert_int_equal(fixture_write(t->root, "archive/a.jsonl", data), 0);
        assert_int_equal(cold_compress(t->dir_fd, name, t->cold_fd, 3, NULL, NULL, NULL, NULL), 0);
        assert_int_equal(fixture_read(t->root, "archive/" COLD_DIR "/a.jsonl.zst", &z, &len), 0);
        z[len / 2] ^= 0x55;
        assert_int_equal(fixture_write_bytes(t->root, "archive/" COLD_DIR "/a.jsonl.zst", z, len),
                         0);
        assert_int_equal(cold_decompress(t->cold_fd, name, t->dir_fd, NULL, NULL, NULL), -EBADMSG);
        assert_false(fixture_exists(t->root, "archive/a.jsonl"));
        assert_false(fixture_exists(t->root, "archive/.a.jsonl.qgc-tmp"));
        assert_true(fixture_exists(t->root, "archive/" COLD_DIR "/a.jsonl.zst"));
}

/* Never replaces: an existing compressed copy, or an existing target on restore. */
static void test_cold_never_replaces(void **state) {
        T *t = *state;
        _cleanup_free_ char *zp = fixture_path(t->root, "archive/" COLD_DIR "/b.jsonl.zst");

        assert_int_equal(fixture_write(t->root, "archive/b.jsonl", "x\n"), 0);
        assert_int_equal(fixture_write(t->root, "archive/" COLD_DIR "/b.jsonl.zst", "junk"), 0);
        assert_int_equal(cold_compress(t->dir_fd, "b.jsonl", t->cold_fd, 3, NULL, NULL, NULL, NULL),
                         -EEXIST);
        assert_true(fixture_exists(t->root, "archive/b.jsonl"));
        assert_int_equal(fixture_rm_rf(zp), 0);
        assert_int_equal(cold_compress(t->dir_fd, "b.jsonl", t->cold_fd, 3, NULL, NULL, NULL, NULL),
                         0);
        assert_int_equal(fixture_write(t->root, "archive/b.jsonl", "new\n"), 0);
        assert_int_equal(cold_decompress(t->cold_fd, "b.jsonl", t->dir_fd, NULL, NULL, NULL),
                         -EEXIST);
        assert_true(fixture_exists(t->root, "archive/" COLD_DIR "/b.jsonl.zst"));
        /* the target is exactly the original (a restore killed after its rename): the .zst goes */
        assert_int_equal(fixture_write(t->root, "archive/b.jsonl", "x\n"), 0);
        assert_int_equal(cold_decompress(t->cold_fd, "b.jsonl", t->dir_fd, NULL, NULL, NULL), 0);
        assert_false(fixture_exists(t->root, "archive/" COLD_DIR "/b.jsonl.zst"));
}

/* A file that changed since the caller saw it (expect) is left alone. */
static void test_cold_changed_original_kept(void **state) {
        T *t = *state;
        FileId old;
        struct stat st;
        _cleanup_free_ char *p = fixture_path(t->root, "archive/c.jsonl");

        assert_int_equal(fixture_write(t->root, "archive/c.jsonl", "one\n"), 0);
        assert_int_equal(stat(p, &st), 0);
        fs_fileid_from_stat(&old, &st);
        assert_int_equal(fixture_append(t->root, "archive/c.jsonl", "two\n"), 0);
        assert_int_equal(cold_compress(t->dir_fd, "c.jsonl", t->cold_fd, 3, &old, NULL, NULL, NULL),
                         -ESTALE);
        assert_true(fixture_exists(t->root, "archive/c.jsonl"));
        assert_false(fixture_exists(t->root, "archive/" COLD_DIR "/c.jsonl.zst"));
}

/* cold_cat() writes the original bytes. */
static void test_cold_cat(void **state) {
        T *t = *state;
        _cleanup_free_ char *data = make_jsonl(70000), *got = NULL;
        size_t len = 0;
        int fd;

        assert_int_equal(fixture_write(t->root, "archive/d.jsonl", data), 0);
        assert_int_equal(cold_compress(t->dir_fd, "d.jsonl", t->cold_fd, 3, NULL, NULL, NULL, NULL),
                         0);
        fd = openat(t->dir_fd, "out", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(cold_cat(t->cold_fd, "d.jsonl", fd), 0);
        close(fd);
        assert_int_equal(fixture_read(t->root, "archive/out", &got, &len), 0);
        assert_int_equal(len, strlen(data));
        assert_memory_equal(got, data, len);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_cold_roundtrip_byte_and_mtime_identical, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_cold_corrupt_file_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cold_never_replaces, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cold_changed_original_kept, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cold_cat, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
