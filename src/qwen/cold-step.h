/* cold-step.h: the executor's compress step (VERB_COMPRESS): an archived session's sidecars and
 * transcript into the cold tier (cold.h), in cold.h's COLD_BATCH steps so that the group commit
 * (qwen-commit.c) makes a whole batch durable with one syncfs() and one fsync per directory:
 *   cold_step_begin()   every file compressed and verified under its temporary name (the
 *                       originals all stay);
 *   (the caller: syncfs() of the tree's filesystem)
 *   cold_step_commit()  each renamed into place;
 *   (the caller: fsync() of each cold directory)
 *   cold_step_end()     the originals go, sidecars first, the transcript last, each only if it
 *                       still has the identity it had when it was compressed;
 *   (the caller: fsync() of chats/archive/).
 * A crash leaves temporary files (the rerun's compression replaces its own), or complete,
 * durable .zst files beside their originals (the rerun finds them, -EEXIST, and removes an
 * original only when it has exactly the recorded content: cold_resolve()), or the session
 * compressed. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "cold.h"
#include "inventory.h"

#define COLD_STEP_FILES 4 /* <id>.worktree.json, .pr.json, .ledger.jsonl, .jsonl */

typedef struct ColdStep {
        char *names[COLD_STEP_FILES]; /* in chats/archive/, the transcript last */
        FileId orig[COLD_STEP_FILES];
        bool resolve[COLD_STEP_FILES]; /* its .zst existed already: cold_resolve() at the end */
        size_t n;
        uint64_t bytes_in, bytes_out; /* originals, compressed files */
} ColdStep;

/* chats/archive/.qgc-cold/ of archive_fd, created (mode 0700) when missing: then *ret_created
 * and the caller fsyncs archive_fd before any original goes. fd or -errno. */
int cold_step_open_dir(int archive_fd, bool *ret_created, ColdStepFn step, void *userdata);

/* The first step for session id, whose transcript must still be `transcript`, with ctx (its
 * level and dictionary). 0; -ESTALE the transcript changed; -EBADMSG the verification failed;
 * other -errno (*ret_why says what). */
int cold_step_begin(ColdCtx *ctx, int archive_fd, int cold_fd, const char *id,
                    const FileId *transcript, ColdStepFn step, void *userdata, ColdStep *st,
                    const char **ret_why);

/* The second, after the syncfs(): each temporary file gets its name. */
int cold_step_commit(int cold_fd, ColdStep *st, ColdStepFn step, void *userdata,
                     const char **ret_why);

/* The last, after the cold directory's fsync: the originals go. 0 or -errno (-ESTALE: an
 * original changed; its .zst was removed again and it stays; -EEXIST: a .zst with other
 * content than its original's, "(conflict)"). */
int cold_step_end(int archive_fd, int cold_fd, ColdStep *st, ColdStepFn step, void *userdata,
                  const char **ret_why);

void cold_step_done(ColdStep *st);

/* The transcript of compressed session id in cold_fd, decompressed into a memfd and checked
 * against its SHA-256 (what a delete salvages its usage from). fd or -errno. */
int cold_step_memfd(int cold_fd, const char *id);
