/* cold.h: the cold file format: name.zst in a cold directory, one zstd frame (content checksum
 * on, a compiled-in dictionary named by its ID; none for the oldest files) and a skippable frame
 * "qgc-cold 1" with the original's SHA-256 and size; its mtime is the original's. The original
 * goes only after the .zst is written, fsynced, decompressed and found equal. A dictionary once
 * shipped (colddict/dict-N, ID 0x716763NN) is never changed; an unknown one is -EPROTONOSUPPORT. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fs.h"

#define COLD_DIR ".qgc-cold"
#define COLD_SUFFIX ".zst"
#define COLD_LEVEL_DEFAULT 3
/* The dictionary versions: none (plain zstd), and the one cold_ctx_compress() writes. */
#define COLD_DICT_NONE 0U
#define COLD_DICT_CURRENT 1U

typedef struct ColdResult {
        uint64_t bytes_in;  /* the original's size */
        uint64_t bytes_out; /* the compressed file's size */
        FileId original;    /* cold_ctx_compress(): the original's identity when it was read */
} ColdResult;

/* Called after every mutating step, like ArchiveStepFn. */
typedef void (*ColdStepFn)(void *userdata, const char *step);

/* A context for many files: zstd's compression and decompression contexts, the digested
 * dictionaries and the buffers, made once and reused (cold_ctx_compress() callers get one
 * per thread from cold_default()). Not shared between threads. level 1..19 (-EINVAL otherwise), dict
 * COLD_DICT_NONE or a shipped version (COLD_DICT_CURRENT; -EINVAL for an unknown one). */
typedef struct ColdCtx ColdCtx;
int cold_ctx_new(int level, unsigned dict, ColdCtx **ret);
ColdCtx *cold_ctx_free(ColdCtx *c);
static inline void cold_ctx_freep(ColdCtx **c) {
        cold_ctx_free(*c);
}

/* cold_ctx_compress() flag: write and verify the .zst under its temporary name only (no fsync,
 * no rename, the original stays); the caller then runs syncfs, cold_batch_commit() of each file,
 * fsync of the cold directories, cold_remove_original() of each, fsync of their directories
 * (crash states: doc/architecture.md). */
#define COLD_BATCH (1U << 0)

/* Compress the regular file (dir_fd, name) into (cold_fd, name.zst) with c's level and
 * dictionary, then (without COLD_BATCH) remove the original and fsync dir_fd if it still has the
 * identity it had when read (expect, when not NULL, must match too). ret->original is set. 0;
 * -EEXIST: a compressed copy exists (nothing done); -ESTALE: the original changed (the
 * compressed copy is removed again, the original stays); -EBADMSG: the verification failed
 * (nothing removed); other -errno. */
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
 * exist; cold_ctx_compress() says -EEXIST): when (cold_fd, name.zst) decompresses to what its
 * trailer records and the original (dir_fd, name) has exactly that content, the original goes
 * (then dir_fd is fsynced). Else both stay: -EBADMSG (the .zst does not match its record),
 * -ESTALE (the original differs: it changed since), -EPROTONOSUPPORT, -errno. */
int cold_resolve(int dir_fd, const char *name, int cold_fd, ColdStepFn step, void *userdata);

/* The largest content a reader decompresses to see a file's end: about 0.1 s of work. */
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
 * on the content, cold_cat() and cold_restore_files(), checks it). *ret_whole: the whole content
 * was written (it ended within max bytes, with exactly the recorded size: else -EBADMSG). */
int cold_cat_head(int cold_fd, const char *name, int out_fd, uint64_t max, bool *ret_whole);

/* The two ends of the original content of (cold_fd, name.zst) in out_fd (empty, at offset 0),
 * at their offsets: its first head bytes and its last tail bytes, what lies between a hole
 * (out_fd is made the content's size; a memfd holds only the two ends). The whole content is
 * decompressed (time linear in the recorded size), memory stays tail bytes. Not checked against
 * the SHA-256; its size must be the recorded one (-EBADMSG). *ret_size: the content's size. */
int cold_cat_ends(int cold_fd, const char *name, int out_fd, uint64_t head, size_t tail,
                  uint64_t *ret_size);

/* The parts cold-restore.c shares. */
/* Call step (when not NULL) after a mutating step. */
void cold_step(ColdStepFn step, void *userdata, const char *what);
/* The calling thread's context, kept for its next call; level 0: any (decompression). */
/* Free the calling thread's context of cold_default(), before a short-lived thread ends. */
void cold_default_free(void);
int cold_default(int level, ColdCtx **ret);
/* Decompress src_fd (src_len bytes, UINT64_MAX: to its end) into out_fd (-1: nowhere), the
 * SHA-256 and size of the content into sha and *ret_size; with expect, compare instead. Never
 * more than limit bytes of content (the size the trailer records): -EFBIG once it would pass. */
int cold_decompress_fd(ColdCtx *c, int src_fd, uint64_t src_len, uint64_t limit, int out_fd,
                       const char *expect, size_t expect_len, char sha[65], uint64_t *ret_size);
/* The SHA-256 and size recorded in the trailing frame of fd. */
int cold_read_trailer(int fd, uint64_t *ret_size, char sha[65]);
/* SHA-256 and size of the whole file open at fd. */
int cold_hash_fd(int fd, char sha[65], uint64_t *ret_size);
