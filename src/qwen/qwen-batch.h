/* qwen-batch.h: the group commit's state, shared by the files of Qwen's session steps
 * (qwen-session.c, qwen-commit.c, qwen-steps.c) and nobody else: the run's state (QwenAll,
 * qwen_store's struct StoreRunAll), the batch, its items and directories, and how an item's
 * outcome goes to the executor (StoreRunEnv.report). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cold.h"
#include "cold-step.h"
#include "plan.h"
#include "qwen-run.h"
#include "recover-marker.h"
#include "store.h"
#include "usage-append.h"
#include "usage-index.h"
#include "util.h"

/* The group commit (qwen-commit.h): sessions of one tree are prepared (checked, their usage line
 * built) one by one into a batch; then the batch's lines are appended with one write, fsync and
 * read-back, its pending-delete markers written with one flush, its transcripts and sidecars
 * removed or moved, and every touched directory fsynced once. A batch closes at QWEN_BATCH_MAX
 * sessions (QWEN_BATCH_MAX_ARCHIVES while it holds only archives, whose commit is a usage append
 * and renames: fewer rounds of fsyncs, which on a busy disk are most of an archive run's
 * waiting) or a few ms of preparing, whichever comes first: QWEN_BATCH_MSEC, or 4 times what the
 * previous batch's usage and marker flushes took (up to QWEN_BATCH_MSEC_MAX), so that flushes
 * stay a small part of the run on a slow disk. */
#define QWEN_BATCH_MAX 256U
#define QWEN_BATCH_MAX_ARCHIVES 1024U
#define QWEN_BATCH_MSEC 10U
#define QWEN_BATCH_MSEC_MAX 100U
/* A batch of at least this many, prepared for at least what the last batch's flushes took, is
 * committed rather than wait for the salvage thread to build the next session's line
 * (usage-ahead.h): its moves run while the thread catches up. */
#define QWEN_BATCH_EARLY 64U
/* A batch that holds deletes closes at QWEN_BATCH_MAX_ARCHIVES too once the last batch's
 * shared-file edits (logs.json, session-organization.v1.json: each edited file is rewritten
 * whole, once per batch) took at least this long: in a project with thousands of sessions they
 * are most of a batch's cost, and a larger batch rewrites the file fewer times. */
#define QWEN_BATCH_EDIT_MSEC 10U
#define QWEN_BATCH_DIRS 64U /* chats/ (+ archive/) directories held open by one batch */

typedef struct QwenBatchDir {
        const char *project_dir;
        int chats_fd, archive_fd;
        bool sync_chats, sync_archive; /* changed: fsync before any outcome is reported */
        int cold_fd; /* chats/archive/.qgc-cold/, opened by the first compression */
        bool sync_cold;
        char **claims; /* names of the runtime claims in chats/, listed once (claims_listed) */
        size_t n_claims;
        bool claims_listed;
        char **sidecar_ids; /* sorted ids with a sidecar in chats/, listed before the moves */
        size_t n_sidecar_ids;
        int sidecars_listed; /* 1 listed, 0 not yet, -errno could not be listed */
        bool sync_queued; /* its fsyncs of this pass are on the batch's SyncQ */
        int sync_err[3];  /* their results: chats/, archive/, the cold tier */
} QwenBatchDir;

typedef struct QwenBatchItem {
        const Session *s;
        const Verdict *v;
        size_t dir;
        char *line; /* the usage line to append first, or NULL */
        char *sid;  /* the line's sessionId */
        ssize_t dep; /* no line of its own: the item whose line has its sessionId, or -1 */
        bool appended; /* its line is durably in usage_record.jsonl */
        bool marked; /* in the batch's pending-delete marker */
        RecoverMarker mk;
        bool done;  /* outcome reported */
        bool removed; /* delete: the transcript is gone */
        bool moved; /* archive: moved before the batch's usage lines were durable (it needs none) */
        ColdStep *cold; /* compress: what its first half placed */
} QwenBatchItem;

typedef struct QwenBatch {
        size_t tree;
        size_t n, n_dirs;
        size_t n_not_archive; /* items that are no archive: the batch closes at max */
        uint64_t started_ns;
        uint64_t window_ns; /* how long the next batch may prepare */
        uint64_t flush_ns;  /* what the last batch's usage and marker flushes took */
        uint64_t edit_ns;   /* what the last batch's shared-file edits took */
        char *marker; /* the name of the file of the batch's pending-delete markers */
        struct SyncQ *syncq; /* the directories' fsyncs (syncq.h), for the run */
        /* the batch's usage lines, written, their fsync on syncq while the moves of sessions
         * that need none of them run (qwen_commit_salvage(), qwen_commit_salvage_end()) */
        bool usage_pending;
        UsageAppend usage;
        int usage_sync_err;
        char *usage_buf;
        /* the fsync of the lines the batch's other sessions rely on, lines it did not write
         * (qwen_commit_usage_sync()), on syncq from the start of the commit */
        bool usync_pending;
        UsageSync usync;
        int usync_err;
        /* directories below a root that the batch's deletes look into (file-history/, debug/,
         * plans/, a project's subagents/ and review directory), opened once per batch:
         * qwen_steps_path() */
        struct {
                int root_fd;
                char *rel;
                int fd; /* or -errno */
        } paths[4 * QWEN_BATCH_DIRS + 8]; /* + tmp/<hash>/, projects/<dir>/ (the erase) */
        size_t n_paths;
        QwenBatchItem items[QWEN_BATCH_MAX_ARCHIVES];
        QwenBatchDir dirs[QWEN_BATCH_DIRS];
} QwenBatch;

/* The run's state of Qwen's session steps, over all of qwen_store's trees (struct StoreRunAll). */
typedef struct QwenAll {
        const Plan *plan;
        const Inventory *inv;
        StoreRunEnv env;
        QwenRun **runs;   /* by tree: its open tree, NULL for another store's */
        int *runtime_fds; /* runs[i]->runtime_fd, for the salvage thread (usage-ahead.h) */
        QwenBatch *batch;
        /* the runtime claim names of the chats/ being worked on, listed once per batch (NULL:
         * list the directory) */
        char **claim_names;
        size_t n_claim_names;
        struct UsageAhead *ahead; /* the salvages' lines, built ahead (usage-ahead.h), or NULL */
        struct QwenStepsLists *lists; /* a step's directory listings (qwen-steps.c), or NULL */
        struct EraseIndex *erase_index; /* the run's lookups of the shared-file edits (erase.h) */
} QwenAll;

/* A mutating step (StoreRunEnv.hook: the executor counts it, and the crash tests kill there). */
static inline void qwen_batch_step(QwenAll *c, const char *what) {
        c->env.hook(c->env.userdata, what);
}

/* The transcript's identity at scan time, and its name: <id>.jsonl, or <id>.jsonl.zst in the
 * cold tier. */
static inline const FileId *qwen_batch_fid(const Session *s) {
        return s->state == SESSION_ARCHIVED ? &s->archived : &s->active;
}

static inline char *qwen_batch_tname(const Session *s) {
        return util_strprintf("%s.jsonl%s", s->id, inventory_session_is_cold(s) ? COLD_SUFFIX : "");
}

/* The outcome of a step that returned r: done, -ESTALE (a file changed since the scan) a skip,
 * any other -errno a failure. A step that knows better (a conflict) says so itself. */
static inline StoreOutcome qwen_batch_errno(int r) {
        return r >= 0 ? STORE_DONE : r == -ESTALE ? STORE_SKIPPED_CHANGED : STORE_FAILED;
}

/* Report item it once. */
static inline void qwen_batch_report(QwenAll *c, QwenBatchItem *it, StoreOutcome o,
                                     const char *why, int error) {
        if (it->done)
                return;
        it->done = true;
        c->env.report(c->env.userdata, it->s, it->v, o, why, error);
}

/* Report the step of it that returned r < 0 with why, as o (qwen_batch_errno(r), or what the
 * step knows, a conflict): a skip carries no errno, and a file that changed since the scan is
 * reported as that, whichever check of the step found it. */
static inline void qwen_batch_report_fail(QwenAll *c, QwenBatchItem *it, StoreOutcome o, int r,
                                          const char *why) {
        if (o == STORE_SKIPPED_CHANGED)
                why = "changed since scan";
        qwen_batch_report(c, it, o, why, o == STORE_FAILED ? -r : 0);
}
