/* cold.h: the compressed cold tier. A file of an archived session (its transcript, its sidecars)
 * is compressed with zstd into chats/archive/.qgc-cold/<name>.zst: Qwen's listing reads only
 * the <id>.jsonl files of chats/archive/ (a directory entry is not one), so a compressed session
 * is invisible to Qwen until it is restored. The file is one zstd frame (content checksum on)
 * followed by a skippable frame that records the SHA-256 and the size of the original; its
 * mtime is the original's. The original is removed only after the compressed file is written,
 * fsynced, decompressed again and found to have the same SHA-256 and size, and renamed into
 * place. Decompression checks the same before the restored file gets its name. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fsutil.h"

#define COLD_DIR ".qgc-cold"
#define COLD_SUFFIX ".zst"
#define COLD_LEVEL_DEFAULT 3

typedef struct ColdResult {
        uint64_t bytes_in;  /* the original's size */
        uint64_t bytes_out; /* the compressed file's size */
} ColdResult;

/* Called after every mutating step, like ArchiveStepFn. */
typedef void (*ColdStepFn)(void *userdata, const char *step);

/* Compress the regular file (dir_fd, name) into (cold_fd, name.zst) at level (1-19), then remove
 * the original (and fsync dir_fd) if it still has the identity it had when read (expect, when
 * not NULL, must match too). 0; -EEXIST: a compressed copy exists (nothing done); -ESTALE: the
 * original changed (the compressed copy is removed again, the original stays); -EBADMSG: the
 * verification failed (nothing removed); other -errno. */
int cold_compress(int dir_fd, const char *name, int cold_fd, int level, const FileId *expect,
                  ColdStepFn step, void *userdata, ColdResult *ret);

/* Decompress (cold_fd, name.zst) into (dst_fd, name), never replacing: a temp file, checked
 * against the recorded SHA-256 and size, fsynced, its mtime set, renamed; then the .zst goes.
 * A target that exists already with exactly the recorded content (a run killed after the rename)
 * only makes the .zst go. 0, -EEXIST (another target exists), -EBADMSG (the content does not
 * match), -errno. */
int cold_decompress(int cold_fd, const char *name, int dst_fd, ColdStepFn step, void *userdata,
                    ColdResult *ret);

/* Write the original content of (cold_fd, name.zst) to out_fd, checked against its SHA-256 at
 * the end (-EBADMSG after the bytes were written when it does not match). */
int cold_cat(int cold_fd, const char *name, int out_fd);

/* The original size and SHA-256 recorded in (cold_fd, name.zst). */
int cold_info(int cold_fd, const char *name, uint64_t *ret_size, char ret_sha[65]);
