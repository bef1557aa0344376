/* actions-int.h: below every actions file (actions.c, actions-batch.c, actions-erase.c,
 * actions-orphan.c, actions-store.c, actions-report.c) share, and nobody else uses. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cold.h"
#include "cold-step.h"
#include "erase.h"
#include "journal.h"
#include "live.h"
#include "plan.h"
#include "recover-marker.h"
#include "usage-index.h"
#include "util.h"

/* What a run did (actions_run()'s report). */
typedef struct ActionStats {
        unsigned n_archived, n_deleted, n_skipped, n_failed, n_orphans, n_salvaged;
        unsigned n_restored, n_recovered;
        unsigned n_erased; /* rows and entries removed from files Qwen shares (erase.h) */
        unsigned n_erased_files; /* files Qwen shares that were edited */
        uint64_t bytes_archived, bytes_deleted, bytes_orphans;
        unsigned n_compressed; /* sessions compressed into the cold tier (cold-step.h) */
        uint64_t bytes_compressed_in, bytes_compressed_out; /* their originals, compressed */
} ActionStats;

/* Open directories and the liveness probe of one tree, for the length of a run. */
typedef struct ActionsTree {
        int global_fd;  /* G */
        int runtime_fd; /* R */
        dev_t global_dev; /* st_dev of G: removals below G never leave it */
        LiveProbe *probe;
        UsageIndex *usage; /* ids with a line in usage_record.jsonl, read incrementally */
        int error; /* why the tree cannot be acted on (negative errno), 0 when usable */
        struct StoreRun *run; /* a store with run operations: its open tree (none of the above
                               * but error is used then), else NULL */
} ActionsTree;

typedef struct ActionsContext {
        const Inventory *inv;
        ActionStats *stats;
        ActionsTree *trees;
        int *runtime_fds; /* trees[i].runtime_fd, for the salvage thread (usage-ahead.h) */
        bool one_thread; /* --jobs 1: no salvage thread (ActionsRunOptions.one_thread) */
        unsigned n_steps;
        bool failed;
        char *why; /* an allocated reason of the current session's outcome */
        struct ActionsBatch *batch;
        /* the runtime claim names of the chats/ being worked on, listed once per batch (NULL:
         * list the directory) */
        char **claim_names;
        size_t n_claim_names;
        struct UsageAhead *ahead; /* the salvages' lines, built ahead (usage-ahead.h), or NULL */
        struct ActionsLists *lists; /* a step's directory listings (actions-erase.c), or NULL */
        struct EraseIndex *erase_index; /* the run's lookups of the shared-file edits (erase.h) */
} ActionsContext;

/* The group commit (actions_batch_*()): sessions of one tree are prepared (checked, their usage
 * line built) one by one into a batch; then the batch's lines are appended with one write,
 * fsync and read-back, its pending-delete markers written with one flush, its transcripts and
 * sidecars removed or moved, and every touched directory fsynced once. A batch closes at
 * ACTIONS_BATCH_MAX sessions (ACTIONS_BATCH_MAX_ARCHIVES while it holds only archives, whose
 * commit is a usage append and renames: fewer rounds of fsyncs, which on a busy disk are most of
 * an archive run's waiting) or a few ms of preparing, whichever comes first: ACTIONS_BATCH_MSEC,
 * or 4 times what the previous batch's usage and marker flushes took (up to
 * ACTIONS_BATCH_MSEC_MAX), so that flushes stay a small part of the run on a slow disk. */
#define ACTIONS_BATCH_MAX 256U
#define ACTIONS_BATCH_MAX_ARCHIVES 1024U
#define ACTIONS_BATCH_MSEC 10U
#define ACTIONS_BATCH_MSEC_MAX 100U
/* A batch of at least this many, prepared for at least what the last batch's flushes took, is
 * committed rather than wait for the salvage thread to build the next session's line
 * (usage-ahead.h): its moves run while the thread catches up. */
#define ACTIONS_BATCH_EARLY 64U
/* A batch that holds deletes closes at ACTIONS_BATCH_MAX_ARCHIVES too once the last batch's
 * shared-file edits (logs.json, session-organization.v1.json: each edited file is rewritten
 * whole, once per batch) took at least this long: in a project with thousands of sessions they
 * are most of a batch's cost, and a larger batch rewrites the file fewer times. */
#define ACTIONS_BATCH_EDIT_MSEC 10U
#define ACTIONS_BATCH_DIRS 64U /* chats/ (+ archive/) directories held open by one batch */

typedef struct ActionsBatchDir {
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
} ActionsBatchDir;

typedef struct ActionsBatchItem {
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
} ActionsBatchItem;

typedef struct ActionsBatch {
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
         * that need none of them run (actions_batch_salvage(), actions_batch_salvage_end()) */
        bool usage_pending;
        UsageAppend usage;
        int usage_sync_err;
        char *usage_buf;
        /* the fsync of the lines the batch's other sessions rely on, lines it did not write
         * (actions_batch_usage_sync()), on syncq from the start of the commit */
        bool usync_pending;
        UsageSync usync;
        int usync_err;
        /* directories below a root that the batch's deletes look into (file-history/, debug/,
         * plans/, a project's subagents/ and review directory), opened once per batch:
         * actions_batch_path() */
        struct {
                int root_fd;
                char *rel;
                int fd; /* or -errno */
        } paths[4 * ACTIONS_BATCH_DIRS + 8]; /* + tmp/<hash>/, projects/<dir>/ (the erase) */
        size_t n_paths;
        ActionsBatchItem items[ACTIONS_BATCH_MAX_ARCHIVES];
        ActionsBatchDir dirs[ACTIONS_BATCH_DIRS];
} ActionsBatch;

/* What became of one action (a session's archive, delete, compress or restore; an orphan): each
 * step says which, and actions_report_event() alone maps it to the journal event (the done
 * event is the action's own: archived, deleted, restored, orphan-reclaimed). The reason that
 * goes with it is the step's text, unchanged. */
typedef enum ActionsOutcome {
        ACTIONS_DONE,
        ACTIONS_SKIPPED_CHANGED,  /* a file is not what the scan saw ("changed since scan") */
        ACTIONS_SKIPPED_CONFLICT, /* a copy in the other place (or a .zst with other content) */
        ACTIONS_SKIPPED_LIVE,     /* in use since the scan, or liveness cannot be checked */
        ACTIONS_SKIPPED_REFUSED,  /* the verdict no longer holds (ownership, state), or the
                                   * deletion limits held it back */
        ACTIONS_SKIPPED_NOT_NOW,  /* a check of the step said not now: a file Qwen shares cannot
                                   * be edited, the usage line it shares was not written, an
                                   * orphan's own re-check */
        ACTIONS_FAILED,
        _ACTIONS_OUTCOME_MAX,
        _ACTIONS_OUTCOME_INVALID = -22,
} ActionsOutcome;

/* The transcript's identity at scan time, and its name: <id>.jsonl, or <id>.jsonl.zst in the
 * cold tier. */
static inline const FileId *actions_fid(const Session *s) {
        return s->state == SESSION_ARCHIVED ? &s->archived : &s->active;
}

static inline char *actions_tname(const Session *s) {
        return util_strprintf("%s.jsonl%s", s->id, session_is_cold(s) ? COLD_SUFFIX : "");
}

/* actions-report.c: the bottom; every other file of the executor calls it */
void actions_report_step(void *userdata, const char *what);
const char *actions_report_project(const Session *s);
JournalEvent actions_report_event(ActionsOutcome o, JournalEvent done);
/* The outcome of a step that returned r: done, -ESTALE (a file changed since the scan) a skip,
 * any other -errno a failure. A step that knows better (a conflict) says so itself. */
ActionsOutcome actions_report_errno(int r);
/* The outcome of a store's run operation that returned r (store.h's return codes). */
ActionsOutcome actions_report_store(int r);
int actions_report_session(ActionsContext *c, const Session *s, const Verdict *v,
                           ActionsOutcome o, const char *reason, int error);
void actions_report_item(ActionsContext *c, ActionsBatchItem *it, ActionsOutcome o,
                          const char *why, int error);
void actions_report_item_fail(ActionsContext *c, ActionsBatchItem *it, ActionsOutcome o, int r,
                        const char *why);

/* actions-erase.c */
int actions_erase_salvage(ActionsContext *c, const ActionsTree *t, const Session *s, int dir_fd,
                    const char *name, const FileId *fid, char **ret_line, char **ret_sid,
                    ssize_t *ret_dep);
void actions_erase_salvage_ahead(ActionsContext *c, const Plan *p);
int actions_erase_rest(ActionsContext *c, const ActionsTree *t, const Session *s,
                        int chats_fd, int archive_fd);
int actions_erase_mark(ActionsContext *c, const ActionsTree *t, const Session *s,
                        int chats_fd, int archive_fd, RecoverMarker *ret);
int actions_erase_copy_exists(int chats_fd, int archive_fd, const char *name, bool in_archive);
void actions_erase_lists_drop(ActionsContext *c);
void actions_erase_batch(ActionsContext *c, ActionsBatch *b, const ActionsTree *t);

/* actions-batch.c */
uint64_t actions_batch_now_ns(void);
bool actions_batch_full(const ActionsBatch *b);
void actions_batch_commit(ActionsContext *c);
int actions_batch_dir(ActionsContext *c, const ActionsTree *t, const Session *s,
                      const char **ret_why);

/* actions-store.c: a tree whose store has run operations (ActionsTree.run) */
void actions_store_recover(ActionsContext *c, size_t t);
/* A recovery step (PLAN_STEP_RECOVER_*) the tree's store planned, carried out by it
 * (StoreOps.run_recover_step), journalled and counted. */
void actions_store_recover_step(ActionsContext *c, const PlanStep *st);
int actions_store_session(ActionsContext *c, const Session *s, const Verdict *v);
/* Before any RESTORE step of p: every tree's store records their start (StoreOps.
 * run_restore_begin: what its recovery pass finishes after a kill). ok[t]: tree t's record is
 * durable (else its restores do not run). 0 or -ENOMEM. */
int actions_store_restore_begin(ActionsContext *c, const Plan *p, bool *ok);
/* A RESTORE step, carried out by its tree's store (StoreOps.run_restore), journalled and
 * counted. 0 or -errno. */
int actions_store_restore(ActionsContext *c, const PlanStep *st);

/* actions-orphan.c */
int actions_orphan_step(ActionsContext *c, const Orphan *o, const Verdict *v);
