/* cold.c: the cold file format (cold.h): compression verified by decompressing before the
 * original goes, the table of every dictionary qgc shipped (colddict/), ColdCtx (the reused zstd
 * contexts and buffers). Restoring many files is cold-restore.c's. */
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
#include <zstd_errors.h>

#include "cold.h"
#include "macro.h"
#include "sha256.h"
#include "util.h"

#define COLD_CHUNK (1U << 20)
/* The trailing skippable frame: magic, payload size, "qgc-cold 1 <sha256> <size 20 digits>\n". */
#define COLD_SKIP_MAGIC 0x184D2A5EU
#define COLD_TRAILER_PAYLOAD (9 + 2 + 64 + 1 + 20 + 1)
#define COLD_TRAILER (8 + COLD_TRAILER_PAYLOAD)

#include "colddict/dict-1.inc"

/* Every dictionary qgc ever shipped (cold.h): never remove or change an entry. */
typedef struct ColdDict {
        unsigned version;
        uint32_t id; /* its zstd dictionary ID, as in the frame header */
        const unsigned char *data;
        size_t size;
} ColdDict;

static const ColdDict cold_dicts[] = {
        { 1, 0x71676301U, cold_dict_1, sizeof cold_dict_1 },
};

struct ColdCtx {
        int level;
        unsigned dict; /* the version compressed with, COLD_DICT_NONE for none */
        ZSTD_CCtx *cc;
        ZSTD_CDict *cdict; /* made on the first compression */
        ZSTD_DCtx *dc;
        ZSTD_DDict *ddicts[ELEMENTSOF(cold_dicts)]; /* made on first use */
        char *in;   /* COLD_CHUNK: the original, read */
        char *out;  /* ZSTD_CStreamOutSize() + COLD_TRAILER: compressed, to write */
        char *din;  /* ZSTD_DStreamInSize(): compressed, read back */
        char *dout; /* ZSTD_DStreamOutSize(): decompressed */
        size_t out_size, din_size, dout_size;
};

static const ColdDict *cold_dict_by_version(unsigned version) {
        for (size_t i = 0; i < ELEMENTSOF(cold_dicts); i++)
                if (cold_dicts[i].version == version)
                        return &cold_dicts[i];
        return NULL;
}

const char *cold_damage_why(int r) {
        switch (r) {
        case -EFBIG:
                return "compressed file is damaged (it inflates past its recorded size)";
        case -EBADMSG:
                return "compressed file is damaged (its frame or trailer is invalid, or its "
                       "content does not match the recorded size and checksum)";
        case -EPROTONOSUPPORT:
                return "compressed with a dictionary this qgc does not have";
        default:
                return NULL;
        }
}

void cold_step(ColdStepFn step, void *userdata, const char *what) {
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

ColdCtx *cold_ctx_free(ColdCtx *c) {
        if (!c)
                return NULL;
        ZSTD_freeCCtx(c->cc);
        ZSTD_freeCDict(c->cdict);
        ZSTD_freeDCtx(c->dc);
        for (size_t i = 0; i < ELEMENTSOF(c->ddicts); i++)
                ZSTD_freeDDict(c->ddicts[i]);
        free(c->in);
        free(c->out);
        free(c->din);
        free(c->dout);
        free(c);
        return NULL;
}

int cold_ctx_new(int level, unsigned dict, ColdCtx **ret) {
        _cleanup_(cold_ctx_freep) ColdCtx *c = NULL;

        if (level < 1 || level > ZSTD_maxCLevel())
                return -EINVAL;
        if (dict != COLD_DICT_NONE && !cold_dict_by_version(dict))
                return -EINVAL;
        c = calloc(1, sizeof *c);
        if (!c)
                return -ENOMEM;
        c->level = level;
        c->dict = dict;
        c->out_size = ZSTD_CStreamOutSize() + COLD_TRAILER;
        c->din_size = ZSTD_DStreamInSize();
        c->dout_size = ZSTD_DStreamOutSize();
        c->cc = ZSTD_createCCtx();
        c->dc = ZSTD_createDCtx();
        c->in = malloc(COLD_CHUNK);
        c->out = malloc(c->out_size);
        c->din = malloc(c->din_size);
        c->dout = malloc(c->dout_size);
        if (!c->cc || !c->dc || !c->in || !c->out || !c->din || !c->dout)
                return -ENOMEM;
        *ret = TAKE_PTR(c);
        return 0;
}

/* The context cold_ctx_compress()'s callers use: one per thread, kept for the next call.
 * level 0: any (decompression). */
static _Thread_local ColdCtx *cold_default_ctx;

void cold_default_free(void) {
        cold_default_ctx = cold_ctx_free(cold_default_ctx);
}

int cold_default(int level, ColdCtx **ret) {
        ColdCtx *c = cold_default_ctx;
        int r;

        if (c && level != 0 && c->level != level) {
                c->cdict = (ZSTD_freeCDict(c->cdict), NULL);
                c->level = level;
        }
        if (!c) {
                r = cold_ctx_new(level ? level : COLD_LEVEL_DEFAULT, COLD_DICT_CURRENT, &c);
                if (r < 0)
                        return r;
                cold_default_ctx = c;
        }
        *ret = c;
        return 0;
}

/* Ready c->cc for a new frame of src_size bytes. */
static int cold_cc_start(ColdCtx *c, uint64_t src_size) {
        ZSTD_CCtx *cc = c->cc;

        if (c->dict != COLD_DICT_NONE && !c->cdict) {
                const ColdDict *d = cold_dict_by_version(c->dict);
                c->cdict = d ? ZSTD_createCDict(d->data, d->size, c->level) : NULL;
                if (!c->cdict)
                        return -ENOMEM;
        }
        if (ZSTD_isError(ZSTD_CCtx_reset(cc, ZSTD_reset_session_and_parameters)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, c->level)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1)) ||
            (c->cdict && ZSTD_isError(ZSTD_CCtx_refCDict(cc, c->cdict))) ||
            ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(cc, src_size)))
                return -EINVAL;
        /* Reference the dictionary's tables instead of copying them into the context for every
         * file (zstd copies them for inputs over 16 KiB at level 3: 0.5-0.8 MB per file). This
         * is ZSTD_c_forceAttachDict = ZSTD_dictForceAttach, an experimental parameter: only
         * speed depends on it (the frames are the same format), so a libzstd without it is fine. */
        if (c->cdict)
                (void)ZSTD_CCtx_setParameter(cc, ZSTD_c_experimentalParam4, 1);
        return 0;
}

static void cold_trailer(unsigned char t[COLD_TRAILER], const char sha[65], uint64_t size) {
        char payload[COLD_TRAILER_PAYLOAD + 1];

        snprintf(payload, sizeof payload, "qgc-cold 1 %s %020" PRIu64 "\n", sha, size);
        cold_put_le32(t, COLD_SKIP_MAGIC);
        cold_put_le32(t + 4, COLD_TRAILER_PAYLOAD);
        memcpy(t + 8, payload, COLD_TRAILER_PAYLOAD);
}

/* Stream the src_size bytes of src_fd through zstd into dst_fd, then the trailer; the input is
 * read once, and hashed while it is read. SHA-256 of the input into sha; the bytes written into
 * *ret_out. -ESTALE when the file is shorter than src_size (it changed). */
static int cold_compress_fd(ColdCtx *c, int src_fd, uint64_t src_size, int dst_fd, char sha[65],
                            uint64_t *ret_out) {
        Sha256 *h = NULL;
        uint64_t size = 0, written = 0;
        int r;

        r = cold_cc_start(c, src_size);
        if (r < 0)
                return r;
        h = sha256_new();
        if (!h)
                return -ENOMEM;
        for (bool last = false; !last && r >= 0;) {
                /* a whole chunk (so a file up to COLD_CHUNK is all in c->in) */
                size_t want = (size_t)MIN((uint64_t)COLD_CHUNK, src_size - size), got;
                ssize_t k = fs_pread_full(src_fd, c->in, want, (off_t)size);
                if (k < 0 || (size_t)k < want) {
                        r = k < 0 ? (int)k : -ESTALE; /* shorter than it was */
                        break;
                }
                got = (size_t)k;
                size += got;
                last = size == src_size;
                r = sha256_update(h, c->in, got);
                if (r >= 0 && last) {
                        r = sha256_final(h, sha);
                        h = NULL;
                }
                ZSTD_inBuffer ib = { c->in, got, 0 };
                for (bool finished = false; r >= 0 && !finished;) {
                        ZSTD_outBuffer ob = { c->out, c->out_size - COLD_TRAILER, 0 };
                        size_t left = ZSTD_compressStream2(c->cc, &ob, &ib,
                                                           last ? ZSTD_e_end : ZSTD_e_continue);
                        if (ZSTD_isError(left)) {
                                r = ZSTD_getErrorCode(left) == ZSTD_error_srcSize_wrong ? -ESTALE
                                                                                        : -EIO;
                                break;
                        }
                        finished = last ? left == 0 : ib.pos == ib.size;
                        if (finished && last) {
                                /* the trailer goes out with the frame's end: one write */
                                cold_trailer((unsigned char *)c->out + ob.pos, sha, size);
                                ob.pos += COLD_TRAILER;
                        }
                        r = util_write_all(dst_fd, c->out, ob.pos);
                        written += ob.pos;
                }
        }
        sha256_free(h);
        *ret_out = written;
        return r;
}

/* The decompression context ready for the frame that starts with head (head_len bytes): the
 * dictionary its header names, or none. -EPROTONOSUPPORT for a dictionary qgc does not have. */
static int cold_dc_start(ColdCtx *c, const void *head, size_t head_len) {
        unsigned id = ZSTD_getDictID_fromFrame(head, head_len);
        ZSTD_DDict *dd = NULL;

        if (id != 0) {
                size_t i;
                for (i = 0; i < ELEMENTSOF(cold_dicts) && cold_dicts[i].id != id; i++)
                        ;
                if (i == ELEMENTSOF(cold_dicts))
                        return -EPROTONOSUPPORT;
                if (!c->ddicts[i])
                        c->ddicts[i] = ZSTD_createDDict(cold_dicts[i].data, cold_dicts[i].size);
                dd = c->ddicts[i];
                if (!dd)
                        return -ENOMEM;
        }
        if (ZSTD_isError(ZSTD_DCtx_reset(c->dc, ZSTD_reset_session_only)) ||
            ZSTD_isError(ZSTD_DCtx_refDDict(c->dc, dd)))
                return -EINVAL;
        return 0;
}

/* Where cold_stream() gives the decompressed bytes: n bytes (at most the context's dout_size),
 * starting at offset at of the content. 0 to go on, or -errno to stop. */
typedef int (*ColdSinkFn)(void *userdata, const char *buf, size_t n, uint64_t at);

/* Decompress src_fd (from offset 0; src_len bytes when the caller knows its length, else
 * UINT64_MAX: to its end) into sink, piece by piece: the one decompression loop of the cold tier,
 * bounded. Once the content would pass limit bytes (the size recorded in the trailer, or what
 * the caller expects) it stops with -EFBIG before the sink sees a byte past it; after stop bytes
 * it stops with 0 and *ret_ended false; else it reads to the file's end (the trailer, a
 * skippable frame, is skipped by zstd itself) with *ret_ended true. -EBADMSG for a damaged or
 * truncated frame, -EPROTONOSUPPORT for a dictionary qgc does not have. *ret_size: the bytes
 * given to sink. */
static int cold_stream(ColdCtx *c, int src_fd, uint64_t src_len, uint64_t limit, uint64_t stop,
                       ColdSinkFn sink, void *userdata, uint64_t *ret_size, bool *ret_ended) {
        uint64_t size = 0, off = 0;
        size_t hint = 1;
        int r = 0;

        *ret_ended = false;
        while (r >= 0 && size < stop) {
                size_t want = (size_t)MIN((uint64_t)c->din_size, src_len - off);
                ssize_t k = fs_pread_full(src_fd, c->din, want, (off_t)off);
                if (k < 0) {
                        r = (int)k;
                        break;
                }
                if (k == 0) {
                        r = hint == 0 ? 0 : -EBADMSG; /* truncated */
                        *ret_ended = r >= 0;
                        break;
                }
                if (off == 0)
                        r = cold_dc_start(c, c->din, (size_t)k);
                off += (uint64_t)k;
                ZSTD_inBuffer ib = { c->din, (size_t)k, 0 };
                for (bool full = true; r >= 0 && size < stop && (ib.pos < ib.size || full);) {
                        ZSTD_outBuffer ob = { c->dout, c->dout_size, 0 };
                        hint = ZSTD_decompressStream(c->dc, &ob, &ib);
                        if (ZSTD_isError(hint)) {
                                r = -EBADMSG;
                                break;
                        }
                        full = ob.pos == ob.size;
                        if (ob.pos > limit - size) {
                                r = -EFBIG; /* inflates past its recorded size */
                                break;
                        }
                        size_t n = (size_t)MIN((uint64_t)ob.pos, stop - size);
                        if (n > 0)
                                r = sink(userdata, c->dout, n, size);
                        size += n;
                }
        }
        *ret_size = size;
        return r;
}

typedef struct ColdCheckSink {
        Sha256 *h;          /* hashing, or */
        const char *expect; /* comparing with expect_len bytes */
        size_t expect_len;
        int out_fd; /* and writing (-1: nowhere) */
} ColdCheckSink;

static int cold_check_sink(void *userdata, const char *buf, size_t n, uint64_t at) {
        ColdCheckSink *k = userdata;
        int r;

        if (k->expect)
                r = memcmp(k->expect + at, buf, n) == 0 ? 0 : -EBADMSG;
        else
                r = sha256_update(k->h, buf, n);
        if (r >= 0 && k->out_fd >= 0)
                r = util_write_all(k->out_fd, buf, n);
        return r;
}

/* Decompress the whole of src_fd (its length src_len when the caller knows it, else UINT64_MAX:
 * to its end) into out_fd (-1: nowhere); SHA-256 and size of the output, hashed as it streams by
 * (no buffer of the whole); -EFBIG once it passes limit bytes. With expect, the output is compared
 * with those expect_len bytes instead of hashed (sha is not set; -EBADMSG when it differs, -EFBIG
 * when it is longer): the verification of a file whose original is still in c->in. */
int cold_decompress_fd(ColdCtx *c, int src_fd, uint64_t src_len, uint64_t limit, int out_fd,
                       const char *expect, size_t expect_len, char sha[65], uint64_t *ret_size) {
        ColdCheckSink k = { .h = expect ? NULL : sha256_new(), .expect = expect,
                            .expect_len = expect_len, .out_fd = out_fd };
        bool ended;
        int r = k.h || expect ? 0 : -ENOMEM;

        if (expect)
                limit = MIN(limit, (uint64_t)expect_len);
        if (r >= 0)
                r = cold_stream(c, src_fd, src_len, limit, UINT64_MAX, cold_check_sink, &k,
                                ret_size, &ended);
        if (r >= 0 && k.h) {
                r = sha256_final(k.h, sha);
                k.h = NULL;
        }
        sha256_free(k.h);
        return r;
}

/* The SHA-256 and size recorded in the trailing frame of fd. */
int cold_read_trailer(int fd, uint64_t *ret_size, char sha[65]) {
        unsigned char t[COLD_TRAILER + 1];
        char num[21];
        struct stat st;
        char *end = NULL;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_size < COLD_TRAILER)
                return -EBADMSG;
        if (fs_pread_full(fd, t, COLD_TRAILER, st.st_size - COLD_TRAILER) != COLD_TRAILER)
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

/* SHA-256 and size of the whole file open at fd. */
int cold_hash_fd(int fd, char sha[65], uint64_t *ret_size) {
        Sha256 *h = sha256_new();
        char buf[64 * 1024];
        uint64_t size = 0;
        ssize_t k = 0;
        int r = h ? 0 : -ENOMEM;

        while (r >= 0 && (k = fs_pread_full(fd, buf, sizeof buf, (off_t)size)) > 0) {
                size += (uint64_t)k;
                r = sha256_update(h, buf, (size_t)k);
        }
        if (r >= 0 && k < 0)
                r = (int)k;
        if (r >= 0) {
                r = sha256_final(h, sha);
                h = NULL;
        }
        sha256_free(h);
        *ret_size = size;
        return r;
}

/* Open the compressed copy of name, name + COLD_SUFFIX in cold_fd, for reading. */
static int cold_open_z(int cold_fd, const char *name) {
        _cleanup_free_ char *z = util_strprintf("%s%s", name, COLD_SUFFIX);

        if (!z)
                return -ENOMEM;
        return fs_openat(cold_fd, z, O_RDONLY | O_NONBLOCK, 0);
}

/* Decompress the whole of zfd (a compressed copy) to out_fd (-1: nowhere) and check it against
 * its trailer: -EBADMSG where it does not match; the trailer's size and hash in ret_*. */
static int cold_check_z(int zfd, int out_fd, uint64_t *ret_size, char ret_sha[65]) {
        ColdCtx *c = NULL;
        char got[65];
        uint64_t size = 0;
        int r;

        r = cold_read_trailer(zfd, ret_size, ret_sha);
        if (r < 0)
                return r;
        r = cold_default(0, &c);
        if (r >= 0)
                r = cold_decompress_fd(c, zfd, UINT64_MAX, *ret_size, out_fd, NULL, 0, got,
                                       &size);
        if (r < 0)
                return r;
        return size == *ret_size && streq(got, ret_sha) ? 0 : -EBADMSG;
}

int cold_info(int cold_fd, const char *name, uint64_t *ret_size, char ret_sha[65]) {
        _cleanup_close_ int fd = cold_open_z(cold_fd, name);

        if (fd < 0)
                return fd;
        return cold_read_trailer(fd, ret_size, ret_sha);
}

int cold_remove_original(int dir_fd, const char *name, int cold_fd, const FileId *id,
                         ColdStepFn step, void *userdata) {
        int r;

        /* the original goes only if it is still what was compressed */
        r = fs_check_identity(dir_fd, name, id);
        if (r <= 0) {
                _cleanup_free_ char *z = util_strprintf("%s%s", name, COLD_SUFFIX);
                if (z && fs_unlink(cold_fd, z, 0) >= 0)
                        cold_step(step, userdata, z);
                return r < 0 ? r : -ESTALE;
        }
        r = fs_unlink(dir_fd, name, 0);
        if (r < 0)
                return r;
        cold_step(step, userdata, name);
        return 0;
}

int cold_batch_commit(int cold_fd, const char *name, ColdStepFn step, void *userdata) {
        _cleanup_free_ char *z = util_strprintf("%s%s", name, COLD_SUFFIX);
        _cleanup_free_ char *tmp = z ? fs_temp_name(z, false) : NULL;
        int r;

        if (!z || !tmp)
                return -ENOMEM;
        r = fs_rename_noreplace(cold_fd, tmp, cold_fd, z);
        if (r < 0) {
                (void)fs_unlink(cold_fd, tmp, 0);
                return r;
        }
        cold_step(step, userdata, z);
        return 0;
}

int cold_ctx_compress(ColdCtx *c, int dir_fd, const char *name, int cold_fd, const FileId *expect,
                      unsigned flags, ColdStepFn step, void *userdata, ColdResult *ret) {
        _cleanup_free_ char *z = util_strprintf("%s%s", name, COLD_SUFFIX);
        _cleanup_free_ char *tmp = z ? fs_temp_name(z, false) : NULL;
        _cleanup_close_ int fd = -EBADF, out = -EBADF;
        char sha[65], sha2[65];
        uint64_t size = (uint64_t)-1, written = 0;
        struct stat st;
        FileId before;
        int r;

        if (!z || !tmp)
                return -ENOMEM;
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
        out = fs_openat(cold_fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (out == -EEXIST) {
                (void)fs_unlink(cold_fd, tmp, 0); /* a crashed run's, under the tree lock */
                out = fs_openat(cold_fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        }
        if (out < 0)
                return out;
        r = cold_compress_fd(c, fd, (uint64_t)st.st_size, out, sha, &written);
        if (r >= 0 && !(flags & COLD_BATCH) && fsync(out) < 0)
                r = -errno;
        /* verified by decompressing what is on disk, before the original may go: compared with
         * the original's bytes when it was read in one piece, else with its SHA-256 */
        if (r >= 0) {
                bool whole = (uint64_t)st.st_size <= COLD_CHUNK;
                r = cold_decompress_fd(c, out, written, (uint64_t)st.st_size, -1,
                                       whole ? c->in : NULL, (size_t)st.st_size, sha2, &size);
                if (r == -EFBIG)
                        r = -EBADMSG; /* longer than the original: did not verify */
                if (r >= 0 && (size != (uint64_t)st.st_size || (!whole && !streq(sha, sha2))))
                        r = -EBADMSG;
        }
        if (r >= 0) {
                r = fs_check_identity_fd(fd, &before); /* changed while it was read */
                if (r == 0)
                        r = -ESTALE;
        }
        if (r >= 0) {
                struct timespec ts[2] = { st.st_atim, st.st_mtim };
                if (futimens(out, ts) < 0)
                        r = -errno;
        }
        if (r >= 0 && !(flags & COLD_BATCH))
                r = fs_rename_noreplace(cold_fd, tmp, cold_fd, z);
        if (r < 0) {
                (void)fs_unlink(cold_fd, tmp, 0);
                return r;
        }
        if (!(flags & COLD_BATCH)) {
                cold_step(step, userdata, z);
                r = fs_fsync(cold_fd);
                if (r >= 0)
                        r = cold_remove_original(dir_fd, name, cold_fd, &before, step, userdata);
                if (r >= 0)
                        r = fs_fsync(dir_fd);
                if (r < 0)
                        return r;
        } /* else the caller: syncfs(), cold_batch_commit(), ... (cold.h) */
        if (ret)
                *ret = (ColdResult){ .bytes_in = size, .bytes_out = written, .original = before };
        return 0;
}

int cold_resolve(int dir_fd, const char *name, int cold_fd, ColdStepFn step, void *userdata) {
        _cleanup_close_ int zfd = -EBADF, fd = -EBADF;
        char want[65], osha[65];
        uint64_t want_size = 0, osize = 0;
        struct stat st;
        FileId id;
        int r;

        zfd = cold_open_z(cold_fd, name);
        if (zfd < 0)
                return zfd;
        r = cold_check_z(zfd, -1, &want_size, want);
        if (r < 0)
                return r;
        fd = fs_openat(dir_fd, name, O_RDONLY | O_NONBLOCK, 0);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -ESTALE;
        fs_fileid_from_stat(&id, &st);
        r = cold_hash_fd(fd, osha, &osize);
        if (r < 0)
                return r;
        if (osize != want_size || !streq(osha, want))
                return -ESTALE;
        r = fs_check_identity_fd(fd, &id);
        if (r <= 0)
                return r < 0 ? r : -ESTALE;
        r = cold_remove_original(dir_fd, name, cold_fd, &id, step, userdata);
        if (r < 0)
                return r;
        return fs_fsync(dir_fd);
}

int cold_cat(int cold_fd, const char *name, int out_fd) {
        _cleanup_close_ int fd = cold_open_z(cold_fd, name);
        char want[65];
        uint64_t want_size = 0;

        if (fd < 0)
                return fd;
        return cold_check_z(fd, out_fd, &want_size, want);
}

typedef struct ColdEndsSink {
        int out_fd;
        uint64_t head;     /* the first head bytes are written as they come */
        char *tail;        /* and the last tail_max bytes are kept: tail[0..tail_len) */
        size_t tail_max, tail_len;
} ColdEndsSink;

static int cold_ends_sink(void *userdata, const char *buf, size_t n, uint64_t at) {
        ColdEndsSink *k = userdata;
        int r = 0;

        if (at < k->head) {
                size_t h = (size_t)MIN((uint64_t)n, k->head - at);
                r = util_write_all(k->out_fd, buf, h);
        }
        if (r < 0 || k->tail_max == 0)
                return r;
        if (n >= k->tail_max) {
                memcpy(k->tail, buf + n - k->tail_max, k->tail_max);
                k->tail_len = k->tail_max;
                return 0;
        }
        if (k->tail_len + n > k->tail_max) {
                size_t drop = k->tail_len + n - k->tail_max;
                memmove(k->tail, k->tail + drop, k->tail_len - drop);
                k->tail_len -= drop;
        }
        memcpy(k->tail + k->tail_len, buf, n);
        k->tail_len += n;
        return 0;
}

/* cold_cat_head() and cold_cat_ends(): the trailer read first, its size the limit. */
static int cold_cat_bounded(int cold_fd, const char *name, int out_fd, uint64_t head,
                            size_t tail, bool *ret_whole, uint64_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_(cold_ctx_freep) ColdCtx *c = NULL;
        _cleanup_free_ char *buf = tail > 0 ? malloc(tail) : NULL;
        ColdEndsSink k = { .out_fd = out_fd, .head = head, .tail = buf, .tail_max = tail };
        uint64_t recorded = 0, size = 0;
        char sha[65];
        bool ended = false;
        int r;

        if (tail > 0 && !buf)
                return -ENOMEM;
        fd = cold_open_z(cold_fd, name);
        if (fd < 0)
                return fd;
        r = cold_read_trailer(fd, &recorded, sha);
        if (r < 0)
                return r;
        /* a context of its own, not the thread's cold_default(): the scan's threads end, and
         * their thread-local context would be lost with them */
        r = cold_ctx_new(COLD_LEVEL_DEFAULT, COLD_DICT_NONE, &c);
        if (r >= 0)
                r = cold_stream(c, fd, UINT64_MAX, recorded, tail > 0 ? UINT64_MAX : head,
                                cold_ends_sink, &k, &size, &ended);
        if (r >= 0 && ended && size != recorded)
                r = -EBADMSG; /* shorter than recorded */
        if (r >= 0 && tail > 0 && size > head) {
                /* the last bytes at their place; what lies between the two stays a hole */
                uint64_t at = MAX(head, size - k.tail_len);
                size_t skip = (size_t)(at - (size - k.tail_len));
                for (size_t done = skip; r >= 0 && done < k.tail_len;) {
                        ssize_t w = pwrite(out_fd, k.tail + done, k.tail_len - done,
                                           (off_t)(size - k.tail_len + done));
                        if (w < 0 && errno == EINTR)
                                continue;
                        if (w <= 0)
                                r = w < 0 ? -errno : -EIO;
                        else
                                done += (size_t)w;
                }
                if (r >= 0 && ftruncate(out_fd, (off_t)size) < 0)
                        r = -errno;
        }
        if (r >= 0 && ret_whole)
                *ret_whole = ended;
        if (r >= 0 && ret_size)
                *ret_size = size;
        return r;
}

int cold_cat_head(int cold_fd, const char *name, int out_fd, uint64_t max, bool *ret_whole) {
        return cold_cat_bounded(cold_fd, name, out_fd, max, 0, ret_whole, NULL);
}

int cold_cat_ends(int cold_fd, const char *name, int out_fd, uint64_t head, size_t tail,
                  uint64_t *ret_size) {
        return cold_cat_bounded(cold_fd, name, out_fd, head, tail, NULL, ret_size);
}
