/* actions.h: carries out a Plan. The only module that changes a managed tree. No dry-run flag:
 * a dry run never calls it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "actions-int.h"
#include "journal.h"
#include "plan.h"

/* How a real run opens its action log. */
typedef struct ActionsRunOptions {
        JournalTarget log_target;
        const char *log_file;   /* the FILE target when set */
        bool quiet;             /* the stderr target shows warnings and worse only */
        bool log_is_open;       /* --all-users: the root parent opened the action log before it
                                 * dropped privileges; use that one and leave it open */
        bool one_thread;        /* --jobs 1: no thread of a store's beside the executor
                                 * (StoreRunEnv.one_thread: Qwen's salvage thread), the
                                 * gentlest run on a busy machine */
} ActionsRunOptions;

/* A real run of the plan p: take the lock of every tree (-EWOULDBLOCK when another qgc holds
 * one; nothing done), open the action log (unless log_is_open), then execute the plan: first the
 * recovery steps (StoreOps.run_recover_step), then every ARCHIVE, DELETE or COMPRESS item
 * (sessions and orphans), each carried out by its tree's store (StoreOps.run_session,
 * run_orphan: identity and liveness re-checked, usage salvaged, archive by rename, delete by
 * unlinkat); then the
 * restore steps (restore.h: `qgc restore`). Each outcome is journalled; a failed action does
 * not stop the run. Close the log and the locks. Returns 0 when all succeeded (or were skipped
 * for safety), 1 when some failed, -errno on a fatal error. */
int actions_run(const Plan *p, const ActionsRunOptions *o, ActionStats *ret_stats);

/* Open the action log of a run (a fresh run id). actions_run() calls it; only the --all-users
 * parent calls it itself, before its children drop privileges and run (log_is_open). */
int actions_open_log(const ActionsRunOptions *o);
