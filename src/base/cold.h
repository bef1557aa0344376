/* cold.h: the compressed cold tier. A file of an archived session (its transcript, its sidecars)
 * is compressed with zstd into chats/archive/.qgc-cold/<name>.zst: Qwen's listing reads only
 * the <id>.jsonl files of chats/archive/ (a directory entry is not one), so a compressed session
 * is invisible to Qwen until it is restored. The file is one zstd frame (content checksum on)
 * followed by a skippable frame that records the SHA-256 and the size of the original; its
 * mtime is the original's. The original is removed only after the compressed file is written,
 * fsynced, decompressed again and found to have the same content (compared byte for byte with
 * the bytes read when the original fits the 1 MiB read buffer, else by SHA-256) and size, and
 * renamed into place. Decompression checks the SHA-256 and size before the restored file gets
 * its name.
 *
 * Dictionaries. The frame is compressed with a zstd dictionary compiled into qgc (small
 * transcripts share most of their bytes: record keys, Qwen's telemetry, tool names), and the
 * zstd frame header names it by its dictionary ID; a frame without an ID (every file of qgc
 * before dictionaries, tests/data/cold) is plain zstd. The dictionaries are versioned
 * (src/colddict/dict-N.zdict, made by the committed, reproducible src/colddict/train.sh N, ID
 * 0x716763NN): a later qgc must restore every file an earlier one wrote, so a dictionary once
 * shipped is never changed or removed, only a new version added and made COLD_DICT_CURRENT.
 * A file naming a dictionary this qgc lacks (written by a newer qgc) is refused with
 * -EPROTONOSUPPORT and kept. Chosen over dictionaries stored in the tree: nothing next to the
 * cold files can be lost, removed while referenced, or differ between trees, and restoring
 * needs only the one .zst. The skippable frame is unchanged ("qgc-cold 1"). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fsutil.h"

#define COLD_DIR ".qgc-cold"
#define COLD_SUFFIX ".zst"
#define COLD_LEVEL_DEFAULT 3
/* The dictionary versions: none (plain zstd), and the one cold_compress() writes. */
#define COLD_DICT_NONE 0U
#define COLD_DICT_CURRENT 1U

typedef struct ColdResult {
        uint64_t bytes_in;  /* the original's size */
        uint64_t bytes_out; /* the compressed file's size */
        FileId original;    /* cold_ctx_compress(): the original's identity when it was read */
} ColdResult;

/* Called after every mutating step, like ArchiveStepFn. */
typedef void (*ColdStepFn)(void *userdata, const char *step);

/* Compress the regular file (dir_fd, name) into (cold_fd, name.zst) at level (1-19) with the
 * dictionary COLD_DICT_CURRENT, then remove the original (and fsync dir_fd) if it still has the
 * identity it had when read (expect, when not NULL, must match too). 0; -EEXIST: a compressed copy exists (nothing done); -ESTALE: the
 * original changed (the compressed copy is removed again, the original stays); -EBADMSG: the
 * verification failed (nothing removed); other -errno. */
int cold_compress(int dir_fd, const char *name, int cold_fd, int level, const FileId *expect,
                  ColdStepFn step, void *userdata, ColdResult *ret);

/* A context for many files: zstd's compression and decompression contexts, the digested
 * dictionaries and the buffers, made once and reused (cold_compress() and the others use one
 * per thread of their own). Not shared between threads. level 1..19 (-EINVAL otherwise), dict
 * COLD_DICT_NONE or a shipped version (COLD_DICT_CURRENT; -EINVAL for an unknown one). */
typedef struct ColdCtx ColdCtx;
int cold_ctx_new(int level, unsigned dict, ColdCtx **ret);
ColdCtx *cold_ctx_free(ColdCtx *c);
static inline void cold_ctx_freep(ColdCtx **c) {
        cold_ctx_free(*c);
}

/* cold_ctx_compress() flags. COLD_BATCH: the first step of a batched compression, where the
 * caller makes the batch durable with a few syncs instead of three fsyncs per file. The
 * compressed file is written and verified under its temporary name (.<name>.zst.qgc-tmp in
 * cold_fd), with the original's mtime, but not fsynced nor renamed, and the original stays.
 * Then, for the whole batch, in this order:
 *   1. syncfs() of the cold directories' filesystem (the temporary files' data is durable);
 *   2. cold_batch_commit() of each file (renamed into place, never replacing);
 *   3. fsync() of each cold directory (the new names are durable);
 *   4. cold_remove_original() of each file;
 *   5. fsync() of each original's directory.
 * A kill before 2 leaves temporary files only (the next cold_ctx_compress() of that name
 * replaces its own), after 2 complete, durable .zst files next to their originals. */
#define COLD_BATCH (1U << 0)

/* cold_compress() with c's level and dictionary, and flags. ret->original is set. */
int cold_ctx_compress(ColdCtx *c, int dir_fd, const char *name, int cold_fd, const FileId *expect,
                      unsigned flags, ColdStepFn step, void *userdata, ColdResult *ret);

/* Step 2 of COLD_BATCH: rename (cold_fd, .name.zst.qgc-tmp) to name.zst, never replacing
 * (-EEXIST; the temporary file is removed on every error). No fsync. */
int cold_batch_commit(int cold_fd, const char *name, ColdStepFn step, void *userdata);

/* Step 4 of COLD_BATCH: unlink (dir_fd, name) if it still has the identity id it had when it
 * was compressed (ColdResult.original; no fsync); if it changed, (cold_fd, name.zst) goes
 * instead and the result is -ESTALE. */
int cold_remove_original(int dir_fd, const char *name, int cold_fd, const FileId *id,
                         ColdStepFn step, void *userdata);

/* Finish a compression killed after its .zst got its name and before the original went (both
 * exist; cold_compress() says -EEXIST): when (cold_fd, name.zst) decompresses to what its
 * trailer records and the original (dir_fd, name) has exactly that content, the original goes
 * (then dir_fd is fsynced). Else both stay: -EBADMSG (the .zst does not match its record),
 * -ESTALE (the original differs: it changed since), -EPROTONOSUPPORT, -errno. */
int cold_resolve(int dir_fd, const char *name, int cold_fd, ColdStepFn step, void *userdata);

/* The largest content the scan decompresses for a compressed session's title (which needs its
 * last 64 KiB): above it the title counts as unread, and a rule that needs it keeps the session.
 * 64 MiB: a transcript rarely reaches a few MiB; decompressing 64 MiB takes about 0.1 s. */
#define COLD_TITLE_MAX (64ULL * 1024 * 1024)

/* Why a compressed file cannot be used, for the error r of a function below: the frame is damaged
 * (-EFBIG: it inflates past its recorded size; -EBADMSG: no valid trailer or frame, or content
 * that does not match the recorded size and checksum) or needs a dictionary this qgc does not
 * have (-EPROTONOSUPPORT); NULL for any other error. */
const char *cold_damage_why(int r);

/* Every decompression below stops with -EFBIG once the content would pass the size recorded in
 * the file's trailer (none: -EBADMSG), before a byte past it is written: a frame that inflates
 * further (a "bomb" written by hand) is damaged, kept, and never restored or salvaged from. */
/* Write the original content of (cold_fd, name.zst) to out_fd, checked against its SHA-256 at
 * the end (-EBADMSG after the bytes were written when it does not match; -EPROTONOSUPPORT
 * before any byte for a dictionary this qgc does not have). */
int cold_cat(int cold_fd, const char *name, int out_fd);

/* The original size and SHA-256 recorded in (cold_fd, name.zst). */
int cold_info(int cold_fd, const char *name, uint64_t *ret_size, char ret_sha[65]);

/* Write at most max bytes of the start of the original content of (cold_fd, name.zst) to
 * out_fd, not checked against the SHA-256 (the scan reads the first record this way; what acts
 * on the content, cold_cat() and cold_restore_file(), checks it). *ret_whole: the whole content
 * was written (it ended within max bytes, with exactly the recorded size: else -EBADMSG). */
int cold_cat_head(int cold_fd, const char *name, int out_fd, uint64_t max, bool *ret_whole);

/* The two ends of the original content of (cold_fd, name.zst) in out_fd (empty, at offset 0),
 * at their offsets: its first head bytes and its last tail bytes, what lies between a hole
 * (out_fd is made the content's size; a memfd holds only the two ends). The whole content is
 * decompressed (time linear in the recorded size), memory stays tail bytes. Not checked against
 * the SHA-256; its size must be the recorded one (-EBADMSG). *ret_size: the content's size. */
int cold_cat_ends(int cold_fd, const char *name, int out_fd, uint64_t head, size_t tail,
                  uint64_t *ret_size);
