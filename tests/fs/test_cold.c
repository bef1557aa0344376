/* test_cold: the compressed cold tier (src/cold.c) on real files: byte-identical and
 * mtime-identical round trips (with the dictionary and without, empty, bigger than every
 * buffer, many files through one ColdCtx), verification before anything is removed, the
 * batched protocol, files of earlier qgc versions (tests/data/cold), a dictionary qgc lacks. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "cold-restore.h"
#include "cold.h"
#include "cold-step.h"
#include "fixture.h"
#include "macro.h"
#include "sha256.h"
#include "util.h"

/* cold_restore_files() of one file, *ret its result when it returns 0 or more */
static int cold_restore_file(int cold_fd, const char *name, int dst_fd, ColdStepFn step,
                             void *userdata, ColdResult *ret) {
        ColdResult res = {};
        int r = cold_restore_files(cold_fd, &name, 1, /* skip_missing= */ false, dst_fd, step,
                                   userdata, &res);

        if (r >= 0 && ret)
                *ret = res;
        return r;
}

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

        macro_safe_close(t->dir_fd);
        macro_safe_close(t->cold_fd);
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
        _cleanup_free_ char *rel = util_strprintf("archive/%s", name);
        _cleanup_free_ char *zrel = util_strprintf("archive/" COLD_DIR "/%s" COLD_SUFFIX, name);
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

        assert_int_equal(cold_restore_file(t->cold_fd, name, t->dir_fd, NULL, NULL, NULL), 0);
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
        assert_int_equal(cold_restore_file(t->cold_fd, name, t->dir_fd, NULL, NULL, NULL), -EBADMSG);
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
        assert_int_equal(cold_restore_file(t->cold_fd, "b.jsonl", t->dir_fd, NULL, NULL, NULL),
                         -EEXIST);
        assert_true(fixture_exists(t->root, "archive/" COLD_DIR "/b.jsonl.zst"));
        /* the target is exactly the original (a restore killed after its rename): the .zst goes */
        assert_int_equal(fixture_write(t->root, "archive/b.jsonl", "x\n"), 0);
        assert_int_equal(cold_restore_file(t->cold_fd, "b.jsonl", t->dir_fd, NULL, NULL, NULL), 0);
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

/* A compressed copy whose content does not match its trailer's SHA-256 is refused by
 * cold_cat() and cold_resolve() (the trailer is the last 97 bytes: "qgc-cold 1 <sha> <size>\n"). */
static void test_cold_trailer_mismatch_refused(void **state) {
        T *t = *state;
        _cleanup_free_ char *data = make_jsonl(30000), *z = NULL;
        const char *zrel = "archive/" COLD_DIR "/m.jsonl" COLD_SUFFIX;
        size_t len = 0;
        int fd;

        assert_int_equal(fixture_write(t->root, "archive/m.jsonl", data), 0);
        assert_int_equal(cold_compress(t->dir_fd, "m.jsonl", t->cold_fd, 3, NULL, NULL, NULL, NULL),
                         0);
        assert_int_equal(fixture_read(t->root, zrel, &z, &len), 0);
        assert_true(len > 97 && memcmp(z + len - 97, "qgc-cold 1 ", 11) == 0);
        z[len - 23] = z[len - 23] == '0' ? '1' : '0'; /* the SHA-256's last digit */
        assert_int_equal(fixture_write_bytes(t->root, zrel, z, len), 0);
        fd = openat(t->dir_fd, "out", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(cold_cat(t->cold_fd, "m.jsonl", fd), -EBADMSG);
        close(fd);
        assert_int_equal(fixture_write(t->root, "archive/m.jsonl", data), 0);
        assert_int_equal(cold_resolve(t->dir_fd, "m.jsonl", t->cold_fd, NULL, NULL), -EBADMSG);
        assert_true(fixture_exists(t->root, "archive/m.jsonl"));
        assert_true(fixture_exists(t->root, zrel));
}

#define CHUNK_BYTES (1U << 20)

/* Write archive/.qgc-cold/<name>.zst by hand: a plain zstd frame of the content prefix[0..np)
 * followed by n bytes of fill (made and compressed in 1 MiB pieces, never held whole), then
 * qgc's trailer recording `recorded` bytes and the SHA-256 of the real content (so only the size
 * lies when recorded is not np + n). */
static void write_frame(T *t, const char *name, const char *prefix, size_t np, uint64_t n,
                        char fill, uint64_t recorded) {
        _cleanup_free_ char *rel = util_strprintf("archive/" COLD_DIR "/%s" COLD_SUFFIX, name);
        _cleanup_free_ char *path = rel ? fixture_path(t->root, rel) : NULL;
        _cleanup_free_ char *in = malloc(CHUNK_BYTES), *out = malloc(ZSTD_CStreamOutSize());
        ZSTD_CCtx *cc = ZSTD_createCCtx();
        Sha256 *h = sha256_new();
        char sha[65], payload[97 + 1];
        unsigned char hdr[8] = { 0x5E, 0x2A, 0x4D, 0x18, 97, 0, 0, 0 };
        uint64_t left = n;
        bool first = true;
        FILE *f;

        assert_true(path && in && out && cc && h);
        memset(in, fill, CHUNK_BYTES);
        f = fopen(path, "we");
        assert_non_null(f);
        assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 1)));
        assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1)));
        for (bool last = false; !last;) {
                const char *src = first ? prefix : in;
                size_t k = first ? np : (size_t)MIN(left, (uint64_t)CHUNK_BYTES);

                if (!first)
                        left -= k;
                last = !first && left == 0;
                if (first && n == 0)
                        last = true;
                first = false;
                assert_int_equal(sha256_update(h, src, k), 0);
                ZSTD_inBuffer ib = { src, k, 0 };
                for (bool done = false; !done;) {
                        ZSTD_outBuffer ob = { out, ZSTD_CStreamOutSize(), 0 };
                        size_t rem = ZSTD_compressStream2(cc, &ob, &ib,
                                                          last ? ZSTD_e_end : ZSTD_e_continue);
                        assert_false(ZSTD_isError(rem));
                        assert_int_equal(fwrite(out, 1, ob.pos, f), ob.pos);
                        done = last ? rem == 0 : ib.pos == ib.size;
                }
        }
        assert_int_equal(sha256_final(h, sha), 0);
        snprintf(payload, sizeof payload, "qgc-cold 1 %s %020" PRIu64 "\n", sha, recorded);
        assert_int_equal(fwrite(hdr, 1, 8, f), 8);
        assert_int_equal(fwrite(payload, 1, 97, f), 97);
        assert_int_equal(fclose(f), 0);
        ZSTD_freeCCtx(cc);
}

/* The size of what fd holds (its st_size) and the bytes it takes in memory (st_blocks). */
static uint64_t fd_size(int fd, uint64_t *ret_alloc) {
        struct stat st;

        assert_int_equal(fstat(fd, &st), 0);
        if (ret_alloc)
                *ret_alloc = (uint64_t)st.st_blocks * 512;
        return (uint64_t)st.st_size;
}

/* Every decompression of a frame whose content is exactly its recorded size works; one byte more
 * than recorded is refused (-EFBIG) by each, before a byte past the recorded size is written,
 * and the compressed file is kept; one byte less is damaged (-EBADMSG). */
static void test_cold_recorded_size_at_limit_and_one_past(void **state) {
        T *t = *state;
        _cleanup_free_ char *data = make_jsonl(70000);
        size_t n = strlen(data);
        const char *zrel = "archive/" COLD_DIR "/r.jsonl" COLD_SUFFIX;
        uint64_t size = 0;
        bool whole = false;
        int fd;

        /* at the limit: the content is the recorded size */
        write_frame(t, "r.jsonl", data, n, 300000, 'x', n + 300000);
        fd = memfd_create("t", MFD_CLOEXEC);
        assert_int_equal(cold_cat(t->cold_fd, "r.jsonl", fd), 0);
        assert_int_equal(fd_size(fd, NULL), n + 300000);
        close(fd);
        fd = memfd_create("t", MFD_CLOEXEC);
        assert_int_equal(cold_cat_head(t->cold_fd, "r.jsonl", fd, UINT64_MAX, &whole), 0);
        assert_true(whole);
        close(fd);
        fd = memfd_create("t", MFD_CLOEXEC);
        assert_int_equal(cold_cat_ends(t->cold_fd, "r.jsonl", fd, 4096, 65536, &size), 0);
        assert_int_equal(size, n + 300000);
        close(fd);
        fd = cold_step_memfd(t->cold_fd, "r");
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(cold_restore_file(t->cold_fd, "r.jsonl", t->dir_fd, NULL, NULL, NULL), 0);
        assert_true(fixture_exists(t->root, "archive/r.jsonl"));
        assert_false(fixture_exists(t->root, zrel));
        assert_int_equal(unlinkat(t->dir_fd, "r.jsonl", 0), 0);

        /* one past: the content is one byte longer than recorded */
        write_frame(t, "r.jsonl", data, n, 300001, 'x', n + 300000);
        fd = memfd_create("t", MFD_CLOEXEC);
        assert_int_equal(cold_cat(t->cold_fd, "r.jsonl", fd), -EFBIG);
        assert_true(fd_size(fd, NULL) <= n + 300000);
        close(fd);
        fd = memfd_create("t", MFD_CLOEXEC);
        assert_int_equal(cold_cat_head(t->cold_fd, "r.jsonl", fd, UINT64_MAX, &whole), -EFBIG);
        assert_true(fd_size(fd, NULL) <= n + 300000);
        close(fd);
        fd = memfd_create("t", MFD_CLOEXEC);
        assert_int_equal(cold_cat_ends(t->cold_fd, "r.jsonl", fd, 4096, 65536, &size), -EFBIG);
        close(fd);
        assert_int_equal(cold_step_memfd(t->cold_fd, "r"), -EFBIG);
        assert_int_equal(cold_restore_file(t->cold_fd, "r.jsonl", t->dir_fd, NULL, NULL, NULL),
                         -EFBIG);
        assert_true(fixture_exists(t->root, zrel));
        assert_false(fixture_exists(t->root, "archive/r.jsonl"));
        assert_false(fixture_exists(t->root, "archive/.r.jsonl.qgc-tmp"));
        assert_non_null(strstr(cold_damage_why(-EFBIG), "inflates past its recorded size"));

        /* one short: damaged too */
        write_frame(t, "r.jsonl", data, n, 299999, 'x', n + 300000);
        fd = memfd_create("t", MFD_CLOEXEC);
        assert_int_equal(cold_cat(t->cold_fd, "r.jsonl", fd), -EBADMSG);
        close(fd);
        fd = memfd_create("t", MFD_CLOEXEC);
        assert_int_equal(cold_cat_head(t->cold_fd, "r.jsonl", fd, UINT64_MAX, &whole), -EBADMSG);
        close(fd);
        assert_int_equal(cold_restore_file(t->cold_fd, "r.jsonl", t->dir_fd, NULL, NULL, NULL),
                         -EBADMSG);
        assert_true(fixture_exists(t->root, zrel));
}

/* A bomb: a transcript's bytes and then 1 GiB of zeros in one frame of about 40 KiB, whose
 * trailer records the transcript's size. Every reader stops right past the recorded size: what it
 * writes (a memfd, the restore's temporary file) never holds more than that, and the file stays. */
static void test_cold_bomb_stops_at_recorded_size(void **state) {
        T *t = *state;
        _cleanup_free_ char *data = make_jsonl(5000);
        size_t n = strlen(data);
        const char *zrel = "archive/" COLD_DIR "/b.jsonl" COLD_SUFFIX;
        uint64_t size = 0, alloc = 0;
        struct stat st;
        bool whole = false;
        int fd;

        write_frame(t, "b.jsonl", data, n, 1ULL << 30, 0, n);
        assert_int_equal(fstatat(t->cold_fd, "b.jsonl" COLD_SUFFIX, &st, 0), 0);
        assert_true(st.st_size < 1024 * 1024);
        fd = memfd_create("t", MFD_CLOEXEC);
        assert_int_equal(cold_cat(t->cold_fd, "b.jsonl", fd), -EFBIG); /* show */
        assert_true(fd_size(fd, NULL) <= n);
        close(fd);
        fd = memfd_create("t", MFD_CLOEXEC);
        assert_int_equal(cold_cat_head(t->cold_fd, "b.jsonl", fd, UINT64_MAX, &whole), -EFBIG);
        assert_true(fd_size(fd, NULL) <= n);
        close(fd);
        fd = memfd_create("t", MFD_CLOEXEC);
        assert_int_equal(cold_cat_ends(t->cold_fd, "b.jsonl", fd, 4096, 65536, &size), -EFBIG);
        assert_true(fd_size(fd, &alloc) <= n);
        close(fd);
        assert_int_equal(cold_step_memfd(t->cold_fd, "b"), -EFBIG); /* delete's salvage */
        assert_int_equal(cold_restore_file(t->cold_fd, "b.jsonl", t->dir_fd, NULL, NULL, NULL),
                         -EFBIG); /* restore */
        assert_true(fixture_exists(t->root, zrel));
        assert_false(fixture_exists(t->root, "archive/b.jsonl"));
        assert_false(fixture_exists(t->root, "archive/.b.jsonl.qgc-tmp"));
        assert_int_equal(cold_resolve(t->dir_fd, "b.jsonl", t->cold_fd, NULL, NULL), -EFBIG);
}

/* The trailer is the file's last 105 bytes, exactly: a file without it, one byte short of it, or
 * with another payload length is damaged for every reader (the scan's head read included), and
 * kept. */
static void test_cold_trailer_garbled_refused(void **state) {
        T *t = *state;
        _cleanup_free_ char *data = make_jsonl(3000), *z = NULL;
        const char *zrel = "archive/" COLD_DIR "/g.jsonl" COLD_SUFFIX;
        size_t len = 0;

        assert_int_equal(fixture_write(t->root, "archive/g.jsonl", data), 0);
        assert_int_equal(cold_compress(t->dir_fd, "g.jsonl", t->cold_fd, 3, NULL, NULL, NULL, NULL),
                         0);
        assert_int_equal(fixture_read(t->root, zrel, &z, &len), 0);
        assert_true(len > 105);
        for (int v = 0; v < 3; v++) {
                _cleanup_free_ char *b = malloc(len);
                size_t n = len;
                uint64_t size = 0;
                char sha[65];
                bool whole = false;
                int fd;

                assert_non_null(b);
                memcpy(b, z, len);
                if (v == 0)
                        n = len - 105; /* no trailer */
                else if (v == 1)
                        n = len - 1; /* one byte short */
                else
                        b[len - 105 + 4] = 96; /* another payload length */
                assert_int_equal(fixture_write_bytes(t->root, zrel, b, n), 0);
                assert_int_equal(cold_info(t->cold_fd, "g.jsonl", &size, sha), -EBADMSG);
                fd = memfd_create("t", MFD_CLOEXEC);
                assert_int_equal(cold_cat(t->cold_fd, "g.jsonl", fd), -EBADMSG);
                assert_int_equal(cold_cat_head(t->cold_fd, "g.jsonl", fd, 4096, &whole), -EBADMSG);
                assert_int_equal(fd_size(fd, NULL), 0);
                close(fd);
                assert_int_equal(cold_restore_file(t->cold_fd, "g.jsonl", t->dir_fd, NULL, NULL,
                                                 NULL), -EBADMSG);
                assert_true(fixture_exists(t->root, zrel));
                assert_false(fixture_exists(t->root, "archive/g.jsonl"));
        }
}

/* The scan's title read: the whole content streams by, but the memfd holds only its two ends (a
 * hole between), at their offsets. 64 MiB of content, head 4 KiB, tail 64 KiB. */
static void test_cold_cat_ends_holds_only_the_ends(void **state) {
        T *t = *state;
        const char *head = "{\"first\":1}\n";
        uint64_t n = 64ULL << 20, size = 0, alloc = 0;
        char buf[16];
        int fd;

        write_frame(t, "e.jsonl", head, strlen(head), n, 'y', n + strlen(head));
        fd = memfd_create("t", MFD_CLOEXEC);
        assert_int_equal(cold_cat_ends(t->cold_fd, "e.jsonl", fd, 4096, 65536, &size), 0);
        assert_int_equal(size, n + strlen(head));
        assert_int_equal(fd_size(fd, &alloc), size);
        assert_true(alloc <= 256 * 1024);
        assert_int_equal(pread(fd, buf, strlen(head), 0), (ssize_t)strlen(head));
        assert_memory_equal(buf, head, strlen(head));
        assert_int_equal(pread(fd, buf, 1, (off_t)size - 65536), 1);
        assert_int_equal(buf[0], 'y');
        assert_int_equal(pread(fd, buf, 1, (off_t)size - 65537), 1);
        assert_int_equal(buf[0], 0); /* the hole */
        close(fd);
}

#define DICT_1_ID 0x71676301U /* src/colddict/train.sh 1 */
#define CHUNK (1U << 20)      /* cold.c's read buffer */

/* The zstd dictionary ID in the frame header of (archive/.qgc-cold/name.zst). */
static unsigned frame_dict_id(T *t, const char *name) {
        _cleanup_free_ char *rel = util_strprintf("archive/" COLD_DIR "/%s" COLD_SUFFIX, name);
        _cleanup_free_ char *z = NULL;
        size_t len = 0;

        assert_int_equal(fixture_read(t->root, rel, &z, &len), 0);
        return ZSTD_getDictID_fromFrame(z, len);
}

/* Compress name through c (cold_compress() when c is NULL), restore it, compare bytes and mtime. */
static void roundtrip_data(T *t, ColdCtx *c, const char *name, const char *data, size_t n,
                           unsigned want_dict_id) {
        _cleanup_free_ char *rel = util_strprintf("archive/%s", name), *back = NULL;
        _cleanup_free_ char *zrel = util_strprintf("archive/" COLD_DIR "/%s" COLD_SUFFIX, name);
        ColdResult res = {};
        size_t len = 0;
        struct stat st;
        _cleanup_free_ char *p = fixture_path(t->root, rel);

        assert_int_equal(fixture_write_bytes(t->root, rel, data, n), 0);
        assert_int_equal(fixture_set_times(t->root, rel, 1600000000, 1700000000), 0);
        if (c)
                assert_int_equal(cold_ctx_compress(c, t->dir_fd, name, t->cold_fd, NULL, 0, NULL,
                                                   NULL, &res),
                                 0);
        else
                assert_int_equal(cold_compress(t->dir_fd, name, t->cold_fd, 3, NULL, NULL, NULL,
                                               &res),
                                 0);
        assert_int_equal(res.bytes_in, n);
        assert_false(fixture_exists(t->root, rel));
        assert_int_equal(frame_dict_id(t, name), want_dict_id);
        assert_int_equal(cold_restore_file(t->cold_fd, name, t->dir_fd, NULL, NULL, NULL), 0);
        assert_false(fixture_exists(t->root, zrel));
        assert_int_equal(fixture_read(t->root, rel, &back, &len), 0);
        assert_int_equal(len, n);
        if (n > 0)
                assert_memory_equal(back, data, n);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_mtim.tv_sec, 1700000000);
        assert_int_equal(unlink(p), 0);
}

/* Bytes that do not compress (so the compressed stream is bigger than zstd's output buffer). */
static char *make_noise(size_t n) {
        char *b = malloc(n ? n : 1);
        uint64_t x = 88172645463325252ULL;

        assert_non_null(b);
        for (size_t i = 0; i < n; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                b[i] = (char)(x >> 24);
        }
        return b;
}

/* cold_compress() writes dictionary 1's frames (the ID in the zstd header), and restores them. */
static void test_cold_dictionary_roundtrip(void **state) {
        T *t = *state;
        static const size_t sizes[] = { 0, 1, 100, 5000, 300 * 1000, CHUNK - 1, CHUNK, CHUNK + 1,
                                        5 * CHUNK + 17 };

        for (size_t i = 0; i < ELEMENTSOF(sizes); i++) {
                _cleanup_free_ char *data = make_jsonl(sizes[i]);
                /* make_jsonl() ends at a line end past n: cut to exactly n */
                roundtrip_data(t, NULL, "d.jsonl", data, sizes[i], DICT_1_ID);
        }
}

/* The same without a dictionary (the format before dictionaries), and noise bigger than every
 * buffer, through one context reused for every file. */
static void test_cold_ctx_reused_with_and_without_dictionary(void **state) {
        T *t = *state;
        _cleanup_(cold_ctx_freep) ColdCtx *plain = NULL, *dict = NULL;
        _cleanup_free_ char *noise = make_noise(3 * CHUNK + 5);
        static const size_t sizes[] = { 0, 7, 70000, CHUNK, 2 * CHUNK + 3, 40 };

        assert_int_equal(cold_ctx_new(3, 99, &plain), -EINVAL);
        assert_int_equal(cold_ctx_new(0, COLD_DICT_NONE, &plain), -EINVAL);
        assert_int_equal(cold_ctx_new(3, COLD_DICT_NONE, &plain), 0);
        assert_int_equal(cold_ctx_new(1, COLD_DICT_CURRENT, &dict), 0);
        for (size_t i = 0; i < ELEMENTSOF(sizes); i++) {
                _cleanup_free_ char *data = make_jsonl(sizes[i]);
                roundtrip_data(t, plain, "p.jsonl", data, sizes[i], 0);
                roundtrip_data(t, dict, "q.jsonl", data, sizes[i], DICT_1_ID);
        }
        roundtrip_data(t, plain, "n.jsonl", noise, 3 * CHUNK + 5, 0);
        roundtrip_data(t, dict, "n.jsonl", noise, 3 * CHUNK + 5, DICT_1_ID);
        roundtrip_data(t, dict, "m.jsonl", noise, CHUNK, DICT_1_ID);
}

/* A real transcript (the corpus's, 8926 bytes) compresses to well under what plain zstd at the
 * same level gave (tests/data/cold/old-format.jsonl.zst: 2047 bytes with the trailer). */
static void test_cold_dictionary_ratio(void **state) {
        T *t = *state;
        _cleanup_free_ char *dir = strdup(fixture_testdata("cold")), *data = NULL;
        ColdResult res = {};
        size_t len = 0;

        assert_non_null(dir);
        assert_int_equal(fixture_read(dir, "old-format.jsonl", &data, &len), 0);
        assert_int_equal(fixture_write_bytes(t->root, "archive/r.jsonl", data, len), 0);
        assert_int_equal(cold_compress(t->dir_fd, "r.jsonl", t->cold_fd, 3, NULL, NULL, NULL,
                                       &res),
                         0);
        assert_int_equal(res.bytes_in, 8926);
        assert_true(res.bytes_out < 2047 * 9 / 10);
        assert_int_equal(cold_restore_file(t->cold_fd, "r.jsonl", t->dir_fd, NULL, NULL, NULL), 0);
}

/* Files written by qgc before dictionaries (tests/data/cold) restore and cat byte-identical. */
static void test_cold_old_format_fixture(void **state) {
        T *t = *state;
        _cleanup_free_ char *dir = strdup(fixture_testdata("cold"));
        static const char *const names[] = { "old-format.jsonl", "old-format-empty.jsonl" };

        assert_non_null(dir);
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                _cleanup_free_ char *want = NULL, *z = NULL, *got = NULL, *cat = NULL;
                _cleanup_free_ char *zname = util_strprintf("%s" COLD_SUFFIX, names[i]);
                _cleanup_free_ char *zrel = util_strprintf("archive/" COLD_DIR "/%s", zname);
                _cleanup_free_ char *rel = util_strprintf("archive/%s", names[i]);
                size_t wlen = 0, zlen = 0, glen = 0;
                uint64_t size = 0;
                char sha[65];
                int fd;

                assert_int_equal(fixture_read(dir, names[i], &want, &wlen), 0);
                assert_int_equal(fixture_read(dir, zname, &z, &zlen), 0);
                assert_int_equal(fixture_write_bytes(t->root, zrel, z, zlen), 0);
                assert_int_equal(cold_info(t->cold_fd, names[i], &size, sha), 0);
                assert_int_equal(size, wlen);
                fd = openat(t->dir_fd, "cat.out", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                assert_true(fd >= 0);
                assert_int_equal(cold_cat(t->cold_fd, names[i], fd), 0);
                close(fd);
                assert_int_equal(fixture_read(t->root, "archive/cat.out", &cat, &glen), 0);
                assert_int_equal(glen, wlen);
                assert_memory_equal(cat, want, wlen);
                assert_int_equal(cold_restore_file(t->cold_fd, names[i], t->dir_fd, NULL, NULL, NULL),
                                 0);
                assert_false(fixture_exists(t->root, zrel));
                assert_int_equal(fixture_read(t->root, rel, &got, &glen), 0);
                assert_int_equal(glen, wlen);
                assert_memory_equal(got, want, wlen);
        }
}

/* A file naming a dictionary this qgc does not have (a newer qgc's) is refused and kept. */
static void test_cold_unknown_dictionary_kept(void **state) {
        T *t = *state;
        _cleanup_free_ char *data = make_jsonl(20000), *z = NULL;
        const char *zrel = "archive/" COLD_DIR "/u.jsonl.zst";
        size_t len = 0, at;
        int fd;

        assert_int_equal(fixture_write(t->root, "archive/u.jsonl", data), 0);
        assert_int_equal(cold_compress(t->dir_fd, "u.jsonl", t->cold_fd, 3, NULL, NULL, NULL, NULL),
                         0);
        assert_int_equal(fixture_read(t->root, zrel, &z, &len), 0);
        /* the 4-byte dictionary ID follows the magic and the frame header descriptor (byte 4:
         * Dictionary_ID_flag 3, Single_Segment_flag off: one window descriptor byte) */
        assert_int_equal((unsigned char)z[4] & 3, 3);
        at = 4 + 1 + (((unsigned char)z[4] & 0x20) ? 0 : 1);
        assert_int_equal(z[at] | z[at + 1] << 8 | z[at + 2] << 16 | z[at + 3] << 24,
                         (int)DICT_1_ID);
        z[at] = 0x7f; /* 0x7167637f: not a dictionary qgc has */
        assert_int_equal(fixture_write_bytes(t->root, zrel, z, len), 0);
        assert_int_equal(cold_restore_file(t->cold_fd, "u.jsonl", t->dir_fd, NULL, NULL, NULL),
                         -EPROTONOSUPPORT);
        assert_true(fixture_exists(t->root, zrel));
        assert_false(fixture_exists(t->root, "archive/u.jsonl"));
        assert_false(fixture_exists(t->root, "archive/.u.jsonl.qgc-tmp"));
        fd = openat(t->dir_fd, "cat.out", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(cold_cat(t->cold_fd, "u.jsonl", fd), -EPROTONOSUPPORT);
        close(fd);
}

/* COLD_BATCH: nothing visible but a temporary file until the caller commits; the original goes
 * only by cold_remove_original(), and not when it changed (then the .zst goes). */
static void test_cold_batch(void **state) {
        T *t = *state;
        _cleanup_(cold_ctx_freep) ColdCtx *c = NULL;
        _cleanup_free_ char *a = make_jsonl(30000), *b = make_jsonl(100), *back = NULL;
        ColdResult ra = {}, rb = {};
        size_t len = 0;

        assert_int_equal(cold_ctx_new(COLD_LEVEL_DEFAULT, COLD_DICT_CURRENT, &c), 0);
        assert_int_equal(fixture_write(t->root, "archive/a.jsonl", a), 0);
        assert_int_equal(fixture_write(t->root, "archive/b.jsonl", b), 0);
        assert_int_equal(cold_ctx_compress(c, t->dir_fd, "a.jsonl", t->cold_fd, NULL, COLD_BATCH,
                                           NULL, NULL, &ra),
                         0);
        assert_int_equal(cold_ctx_compress(c, t->dir_fd, "b.jsonl", t->cold_fd, NULL, COLD_BATCH,
                                           NULL, NULL, &rb),
                         0);
        assert_true(fixture_exists(t->root, "archive/a.jsonl"));
        assert_false(fixture_exists(t->root, "archive/" COLD_DIR "/a.jsonl.zst"));
        assert_true(fixture_exists(t->root, "archive/" COLD_DIR "/.a.jsonl.zst.qgc-tmp"));
        /* a kill here: the next compression of that name replaces the temporary file */
        assert_int_equal(syncfs(t->cold_fd), 0);
        assert_int_equal(cold_batch_commit(t->cold_fd, "a.jsonl", NULL, NULL), 0);
        assert_int_equal(cold_batch_commit(t->cold_fd, "b.jsonl", NULL, NULL), 0);
        assert_false(fixture_exists(t->root, "archive/" COLD_DIR "/.a.jsonl.zst.qgc-tmp"));
        assert_true(fixture_exists(t->root, "archive/" COLD_DIR "/a.jsonl.zst"));
        assert_int_equal(fsync(t->cold_fd), 0);
        assert_int_equal(fixture_append(t->root, "archive/b.jsonl", "more\n"), 0);
        assert_int_equal(cold_remove_original(t->dir_fd, "a.jsonl", t->cold_fd, &ra.original,
                                              NULL, NULL),
                         0);
        assert_int_equal(cold_remove_original(t->dir_fd, "b.jsonl", t->cold_fd, &rb.original,
                                              NULL, NULL),
                         -ESTALE);
        assert_false(fixture_exists(t->root, "archive/a.jsonl"));
        assert_true(fixture_exists(t->root, "archive/b.jsonl"));
        assert_false(fixture_exists(t->root, "archive/" COLD_DIR "/b.jsonl.zst"));
        assert_int_equal(cold_restore_file(t->cold_fd, "a.jsonl", t->dir_fd, NULL, NULL, NULL), 0);
        assert_int_equal(fixture_read(t->root, "archive/a.jsonl", &back, &len), 0);
        assert_int_equal(len, strlen(a));
        assert_memory_equal(back, a, len);

        /* a temporary file left by a killed batch does not block the next compression */
        assert_int_equal(cold_ctx_compress(c, t->dir_fd, "a.jsonl", t->cold_fd, NULL, COLD_BATCH,
                                           NULL, NULL, &ra),
                         0);
        assert_int_equal(cold_ctx_compress(c, t->dir_fd, "a.jsonl", t->cold_fd, NULL, 0, NULL,
                                           NULL, &ra),
                         0);
        assert_false(fixture_exists(t->root, "archive/a.jsonl"));
        assert_false(fixture_exists(t->root, "archive/" COLD_DIR "/.a.jsonl.zst.qgc-tmp"));
}

/* A run killed after the .zst got its name, before the original went: cold_resolve() removes the
 * original when both hold the same content, and keeps both otherwise. */
static void test_cold_resolve(void **state) {
        T *t = *state;
        _cleanup_(cold_ctx_freep) ColdCtx *c = NULL;
        _cleanup_free_ char *a = make_jsonl(40000), *z = NULL;
        const char *zrel = "archive/" COLD_DIR "/e.jsonl.zst";
        ColdResult res = {};
        size_t len = 0;

        assert_int_equal(cold_ctx_new(COLD_LEVEL_DEFAULT, COLD_DICT_CURRENT, &c), 0);
        assert_int_equal(fixture_write(t->root, "archive/e.jsonl", a), 0);
        assert_int_equal(cold_ctx_compress(c, t->dir_fd, "e.jsonl", t->cold_fd, NULL, COLD_BATCH,
                                           NULL, NULL, &res),
                         0);
        assert_int_equal(cold_batch_commit(t->cold_fd, "e.jsonl", NULL, NULL), 0);
        /* killed here */
        assert_int_equal(cold_compress(t->dir_fd, "e.jsonl", t->cold_fd, 3, NULL, NULL, NULL, NULL),
                         -EEXIST);
        /* the original changed since: both stay */
        assert_int_equal(fixture_append(t->root, "archive/e.jsonl", "x\n"), 0);
        assert_int_equal(cold_resolve(t->dir_fd, "e.jsonl", t->cold_fd, NULL, NULL), -ESTALE);
        assert_true(fixture_exists(t->root, "archive/e.jsonl"));
        assert_true(fixture_exists(t->root, zrel));
        /* the same content: the original goes, the .zst restores it */
        assert_int_equal(fixture_write(t->root, "archive/e.jsonl", a), 0);
        assert_int_equal(cold_resolve(t->dir_fd, "e.jsonl", t->cold_fd, NULL, NULL), 0);
        assert_false(fixture_exists(t->root, "archive/e.jsonl"));
        assert_int_equal(cold_restore_file(t->cold_fd, "e.jsonl", t->dir_fd, NULL, NULL, NULL), 0);
        /* a .zst that does not match its record: both stay */
        assert_int_equal(cold_compress(t->dir_fd, "e.jsonl", t->cold_fd, 3, NULL, NULL, NULL, NULL),
                         0);
        assert_int_equal(fixture_write(t->root, "archive/e.jsonl", a), 0);
        assert_int_equal(fixture_read(t->root, zrel, &z, &len), 0);
        z[len / 3] ^= 0x10;
        assert_int_equal(fixture_write_bytes(t->root, zrel, z, len), 0);
        assert_int_equal(cold_resolve(t->dir_fd, "e.jsonl", t->cold_fd, NULL, NULL), -EBADMSG);
        assert_true(fixture_exists(t->root, "archive/e.jsonl"));
        assert_true(fixture_exists(t->root, zrel));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_cold_roundtrip_byte_and_mtime_identical, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_cold_corrupt_file_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cold_never_replaces, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cold_changed_original_kept, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cold_cat, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cold_trailer_mismatch_refused, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_cold_dictionary_roundtrip, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cold_ctx_reused_with_and_without_dictionary,
                                                setup, teardown),
                cmocka_unit_test_setup_teardown(test_cold_dictionary_ratio, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cold_old_format_fixture, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cold_unknown_dictionary_kept, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_cold_batch, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cold_resolve, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cold_recorded_size_at_limit_and_one_past,
                                                setup, teardown),
                cmocka_unit_test_setup_teardown(test_cold_bomb_stops_at_recorded_size, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_cold_cat_ends_holds_only_the_ends, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_cold_trailer_garbled_refused, setup,
                                                teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
