/* cold.c: the compressed cold tier (cold.h): zstd streams of archived sessions' files, each
 * verified by decompressing it and comparing SHA-256 and size before the original goes. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "cold.h"
#include "macro.h"
#include "sha256.h"
#include "util.h"

#define COLD_CHUNK (1U << 20)
/* The trailing skippable frame: magic, payload size, "qgc-cold 1 <sha256> <size 20 digits>\n". */
#define COLD_SKIP_MAGIC 0x184D2A5EU
#define COLD_TRAILER_PAYLOAD (9 + 2 + 64 + 1 + 20 + 1)
#define COLD_TRAILER (8 + COLD_TRAILER_PAYLOAD)

static void cold_step(ColdStepFn step, void *userdata, const char *what) {
        if (step)
                step(userdata, what);
}

static void cold_put_le32(unsigned char *p, uint32_t v) {
        for (int i = 0; i < 4; i++)
                p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t cold_get_le32(const unsigned char *p) {
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Stream src_fd through zstd into dst_fd; SHA-256 and size of the input. */
static int cold_compress_fd(int src_fd, int dst_fd, int level, char sha[65], uint64_t *ret_size) {
        ZSTD_CCtx *cc = ZSTD_createCCtx();
        Sha256 *h = sha256_new();
        char *in = malloc(COLD_CHUNK), *out = malloc(ZSTD_CStreamOutSize());
        uint64_t size = 0;
        int r = 0;

        if (!cc || !h || !in || !out) {
                r = -ENOMEM;
                goto done;
        }
        if (ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, level)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1))) {
                r = -EINVAL;
                goto done;
        }
        for (bool last = false; !last && r >= 0;) {
                ssize_t k = read(src_fd, in, COLD_CHUNK);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        r = -errno;
                        break;
                }
                last = k == 0;
                size += (uint64_t)k;
                r = sha256_update(h, in, (size_t)k);
                ZSTD_inBuffer ib = { in, (size_t)k, 0 };
                for (bool finished = false; r >= 0 && !finished;) {
                        ZSTD_outBuffer ob = { out, ZSTD_CStreamOutSize(), 0 };
                        size_t left = ZSTD_compressStream2(cc, &ob, &ib,
                                                           last ? ZSTD_e_end : ZSTD_e_continue);
                        if (ZSTD_isError(left)) {
                                r = -EIO;
                                break;
                        }
                        r = write_all(dst_fd, out, ob.pos);
                        finished = last ? left == 0 : ib.pos == ib.size;
                }
        }
        if (r >= 0)
                r = sha256_final(h, sha);
        else
                sha256_free(h);
        h = NULL;
        *ret_size = size;
done:
        sha256_free(h);
        ZSTD_freeCCtx(cc);
        free(in);
        free(out);
        return r;
}

/* Decompress the whole of src_fd (from offset 0) into out_fd (-1: nowhere); SHA-256 and size of
 * the output. The trailing skippable frame is skipped by zstd itself. */
static int cold_decompress_fd(int src_fd, int out_fd, char sha[65], uint64_t *ret_size) {
        ZSTD_DCtx *dc = ZSTD_createDCtx();
        Sha256 *h = sha256_new();
        char *in = malloc(ZSTD_DStreamInSize()), *out = malloc(ZSTD_DStreamOutSize());
        uint64_t size = 0, off = 0;
        size_t hint = 1;
        int r = 0;

        if (!dc || !h || !in || !out) {
                r = -ENOMEM;
                goto done;
        }
        for (;;) {
                ssize_t k = pread(src_fd, in, ZSTD_DStreamInSize(), (off_t)off);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        r = -errno;
                        break;
                }
                if (k == 0) {
                        r = hint == 0 ? 0 : -EBADMSG; /* truncated */
                        break;
                }
                off += (uint64_t)k;
                ZSTD_inBuffer ib = { in, (size_t)k, 0 };
                for (bool full = true; r >= 0 && (ib.pos < ib.size || full);) {
                        ZSTD_outBuffer ob = { out, ZSTD_DStreamOutSize(), 0 };
                        hint = ZSTD_decompressStream(dc, &ob, &ib);
                        if (ZSTD_isError(hint)) {
                                r = -EBADMSG;
                                break;
                        }
                        full = ob.pos == ob.size;
                        size += ob.pos;
                        r = sha256_update(h, out, ob.pos);
                        if (r >= 0 && out_fd >= 0)
                                r = write_all(out_fd, out, ob.pos);
                }
                if (r < 0)
                        break;
        }
        if (r >= 0)
                r = sha256_final(h, sha);
        else
                sha256_free(h);
        h = NULL;
        *ret_size = size;
done:
        sha256_free(h);
        ZSTD_freeDCtx(dc);
        free(in);
        free(out);
        return r;
}

/* The SHA-256 and size recorded in the trailing frame of fd. */
static int cold_read_trailer(int fd, uint64_t *ret_size, char sha[65]) {
        unsigned char t[COLD_TRAILER + 1];
        char num[21];
        struct stat st;
        char *end = NULL;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_size < COLD_TRAILER)
                return -EBADMSG;
        if (pread(fd, t, COLD_TRAILER, st.st_size - COLD_TRAILER) != COLD_TRAILER)
                return -EBADMSG;
        if (cold_get_le32(t) != COLD_SKIP_MAGIC || cold_get_le32(t + 4) != COLD_TRAILER_PAYLOAD ||
            memcmp(t + 8, "qgc-cold 1 ", 11) != 0 || t[8 + 11 + 64] != ' ' ||
            t[COLD_TRAILER - 1] != '\n')
                return -EBADMSG;
        memcpy(sha, t + 8 + 11, 64);
        sha[64] = 0;
        memcpy(num, t + 8 + 11 + 65, 20);
        num[20] = 0;
        errno = 0;
        *ret_size = strtoull(num, &end, 10);
        return errno || !end || *end ? -EBADMSG : 0;
}

static char *cold_tmp_name(const char *name) {
        return strprintf(".%s.qgc-tmp", name);
}

int cold_info(int cold_fd, const char *name, uint64_t *ret_size, char ret_sha[65]) {
        _cleanup_free_ char *z = strprintf("%s%s", name, COLD_SUFFIX);
        _cleanup_close_ int fd = -EBADF;

        if (!z)
                return -ENOMEM;
        fd = fs_openat(cold_fd, z, O_RDONLY | O_NONBLOCK, 0);
        if (fd < 0)
                return fd;
        return cold_read_trailer(fd, ret_size, ret_sha);
}

int cold_compress(int dir_fd, const char *name, int cold_fd, int level, const FileId *expect,
                  ColdStepFn step, void *userdata, ColdResult *ret) {
        _cleanup_free_ char *z = strprintf("%s%s", name, COLD_SUFFIX);
        _cleanup_free_ char *tmp = z ? cold_tmp_name(z) : NULL;
        _cleanup_close_ int fd = -EBADF, out = -EBADF;
        char sha[65], sha2[65], payload[COLD_TRAILER_PAYLOAD + 1];
        unsigned char trailer[COLD_TRAILER];
        uint64_t size = 0, size2 = 0;
        struct stat st, st_out;
        FileId before;
        int r;

        if (!z || !tmp)
                return -ENOMEM;
        if (level < 1 || level > ZSTD_maxCLevel())
                return -EINVAL;
        fd = fs_openat(dir_fd, name, O_RDONLY | O_NONBLOCK, 0);
        if (fd < 0)
                return fd == -ENOENT || fd == -ELOOP ? -ESTALE : fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -ESTALE;
        fs_fileid_from_stat(&before, &st);
        if (expect) {
                r = fs_check_identity_fd(fd, expect);
                if (r <= 0)
                        return r < 0 ? r : -ESTALE;
        }
        r = fs_exists(cold_fd, z);
        if (r != 0)
                return r < 0 ? r : -EEXIST;
        (void)fs_unlink(cold_fd, tmp, 0); /* a crashed run's, under the tree lock */
        out = fs_openat(cold_fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (out < 0)
                return out;
        r = cold_compress_fd(fd, out, level, sha, &size);
        if (r >= 0) {
                snprintf(payload, sizeof payload, "qgc-cold 1 %s %020" PRIu64 "\n", sha, size);
                cold_put_le32(trailer, COLD_SKIP_MAGIC);
                cold_put_le32(trailer + 4, COLD_TRAILER_PAYLOAD);
                memcpy(trailer + 8, payload, COLD_TRAILER_PAYLOAD);
                r = write_all(out, trailer, sizeof trailer);
        }
        if (r >= 0 && fsync(out) < 0)
                r = -errno;
        /* verified by decompressing what is on disk, before the original may go */
        if (r >= 0)
                r = cold_decompress_fd(out, -1, sha2, &size2);
        if (r >= 0 && (size2 != size || !streq(sha, sha2) || size != (uint64_t)st.st_size))
                r = -EBADMSG;
        if (r >= 0) {
                struct timespec ts[2] = { st.st_atim, st.st_mtim };
                if (futimens(out, ts) < 0)
                        r = -errno;
        }
        if (r >= 0 && fstat(out, &st_out) < 0)
                r = -errno;
        if (r >= 0)
                r = fs_rename_noreplace(cold_fd, tmp, cold_fd, z);
        if (r < 0) {
                (void)fs_unlink(cold_fd, tmp, 0);
                return r;
        }
        cold_step(step, userdata, z);
        r = fs_fsync(cold_fd);
        if (r < 0)
                return r;
        /* the original goes only if it is still what was compressed */
        r = fs_check_identity_fd(fd, &before);
        if (r > 0)
                r = fs_check_identity(dir_fd, name, &before);
        if (r <= 0) {
                (void)fs_unlink(cold_fd, z, 0);
                return r < 0 ? r : -ESTALE;
        }
        r = fs_unlink(dir_fd, name, 0);
        if (r < 0)
                return r;
        cold_step(step, userdata, name);
        r = fs_fsync(dir_fd);
        if (r < 0)
                return r;
        if (ret)
                *ret = (ColdResult){ .bytes_in = size, .bytes_out = (uint64_t)st_out.st_size };
        return 0;
}

int cold_decompress(int cold_fd, const char *name, int dst_fd, ColdStepFn step, void *userdata,
                    ColdResult *ret) {
        _cleanup_free_ char *z = strprintf("%s%s", name, COLD_SUFFIX);
        _cleanup_free_ char *tmp = cold_tmp_name(name);
        _cleanup_close_ int fd = -EBADF, out = -EBADF;
        char want[65], got[65];
        uint64_t want_size = 0, size = 0;
        struct stat st;
        int r;

        if (!z || !tmp)
                return -ENOMEM;
        fd = fs_openat(cold_fd, z, O_RDONLY | O_NONBLOCK, 0);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADMSG;
        r = cold_read_trailer(fd, &want_size, want);
        if (r < 0)
                return r;
        r = fs_exists(dst_fd, name);
        if (r < 0)
                return r;
        if (r > 0) {
                /* a restore interrupted after the rename: the target is exactly the original */
                _cleanup_close_ int tfd = fs_openat(dst_fd, name, O_RDONLY | O_NONBLOCK, 0);
                Sha256 *h = sha256_new();
                char buf[64 * 1024];
                ssize_t k = 0;

                r = tfd < 0 ? tfd : h ? 0 : -ENOMEM;
                while (r >= 0 && (k = read(tfd, buf, sizeof buf)) > 0) {
                        size += (uint64_t)k;
                        r = sha256_update(h, buf, (size_t)k);
                }
                if (r >= 0 && k < 0)
                        r = -errno;
                if (r >= 0) {
                        r = sha256_final(h, got);
                        h = NULL;
                }
                sha256_free(h);
                if (r < 0 || size != want_size || !streq(got, want))
                        return -EEXIST;
                r = fs_unlink(cold_fd, z, 0);
                if (r < 0 && r != -ENOENT)
                        return r;
                cold_step(step, userdata, z);
                if (ret)
                        *ret = (ColdResult){ .bytes_in = size, .bytes_out = (uint64_t)st.st_size };
                return fs_fsync(cold_fd);
        }
        (void)fs_unlink(dst_fd, tmp, 0);
        out = fs_openat(dst_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (out < 0)
                return out;
        r = cold_decompress_fd(fd, out, got, &size);
        if (r >= 0 && (size != want_size || !streq(got, want)))
                r = -EBADMSG;
        if (r >= 0 && fsync(out) < 0)
                r = -errno;
        if (r >= 0) {
                struct timespec ts[2] = { st.st_atim, st.st_mtim };
                if (futimens(out, ts) < 0)
                        r = -errno;
        }
        if (r >= 0)
                r = fs_rename_noreplace(dst_fd, tmp, dst_fd, name);
        if (r < 0) {
                (void)fs_unlink(dst_fd, tmp, 0);
                return r;
        }
        cold_step(step, userdata, name);
        r = fs_fsync(dst_fd);
        if (r < 0)
                return r;
        r = fs_unlink(cold_fd, z, 0);
        if (r < 0 && r != -ENOENT)
                return r;
        cold_step(step, userdata, z);
        if (ret)
                *ret = (ColdResult){ .bytes_in = size, .bytes_out = (uint64_t)st.st_size };
        return fs_fsync(cold_fd);
}

int cold_cat(int cold_fd, const char *name, int out_fd) {
        _cleanup_free_ char *z = strprintf("%s%s", name, COLD_SUFFIX);
        _cleanup_close_ int fd = -EBADF;
        char want[65], got[65];
        uint64_t want_size = 0, size = 0;
        int r;

        if (!z)
                return -ENOMEM;
        fd = fs_openat(cold_fd, z, O_RDONLY | O_NONBLOCK, 0);
        if (fd < 0)
                return fd;
        r = cold_read_trailer(fd, &want_size, want);
        if (r < 0)
                return r;
        r = cold_decompress_fd(fd, out_fd, got, &size);
        if (r < 0)
                return r;
        return size == want_size && streq(got, want) ? 0 : -EBADMSG;
}
