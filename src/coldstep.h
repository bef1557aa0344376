/* coldstep.h: the executor's compress step (VERB_COMPRESS): an archived session's sidecars and
 * transcript into the cold tier (cold.h), in two halves so that the group commit (actions.c)
 * fsyncs each directory once per batch:
 *   cold_step_begin()  every file compressed, fsynced, verified and renamed into
 *                      chats/archive/.qgc-cold/ (the originals all stay);
 *   (the caller fsyncs the cold directory)
 *   cold_step_end()    the originals go, sidecars first, the transcript last, each only if it
 *                      still has the identity it had when it was compressed;
 *   (the caller fsyncs chats/archive/).
 * A crash anywhere leaves every file either uncompressed, or compressed with its original still
 * there (a rerun finds the .zst with the original's content and only removes the original), or
 * compressed alone: nothing is ever only in a file that is not durable and verified. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "cold.h"
#include "inventory.h"

#define COLD_STEP_FILES 4 /* <id>.worktree.json, .pr.json, .ledger.jsonl, .jsonl */

typedef struct ColdStep {
        char *names[COLD_STEP_FILES]; /* in chats/archive/, the transcript last */
        FileId orig[COLD_STEP_FILES];
        size_t n;
        uint64_t bytes_in, bytes_out; /* originals, compressed files */
} ColdStep;

/* chats/archive/.qgc-cold/ of archive_fd, created (mode 0700) when missing: then *ret_created
 * and the caller fsyncs archive_fd before any original goes. fd or -errno. */
int cold_step_open_dir(int archive_fd, bool *ret_created, ColdStepFn step, void *userdata);

/* The first half for session id, whose transcript must still be `transcript`. A .zst that
 * exists already with exactly the original's content (SHA-256 and size) counts as written.
 * 0; -ESTALE the transcript changed; -EEXIST a .zst with other content exists (*ret_why says
 * "(conflict)"); -EBADMSG the verification failed; other -errno. The files this call placed stay
 * on failure (a rerun uses them). */
int cold_step_begin(int archive_fd, int cold_fd, const char *id, const FileId *transcript,
                    int level, ColdStepFn step, void *userdata, ColdStep *st, const char **ret_why);

/* The second half, after cold_fd was fsynced. 0 or -errno (-ESTALE: an original changed; its
 * .zst was removed again and it stays). */
int cold_step_end(int archive_fd, int cold_fd, ColdStep *st, ColdStepFn step, void *userdata,
                  const char **ret_why);

void cold_step_done(ColdStep *st);

/* The transcript of compressed session id in cold_fd, decompressed into a memfd and checked
 * against its SHA-256 (what a delete salvages its usage from). fd or -errno. */
int cold_step_memfd(int cold_fd, const char *id);
