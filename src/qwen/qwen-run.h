/* qwen-run.h: what a real run changes in Qwen's trees through qwen_store's run operations
 * (store.h: their contract): a run's open tree, its orphans (file-history/, subagents/, empty
 * projects, the hygiene kinds and stale project entries), and the steps of its recovery pass
 * (recover.h); its restores: qwen-restore.h. A session's archive, delete and compress are still
 * the executor's own steps (exec/), so qwen_store has no run_session. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "inventory.h"
#include "store.h"

/* A Qwen tree open for a run (struct StoreRun is each store's own type); qwen-restore.c
 * restores through it. */
typedef struct QwenRun {
        const Inventory *inv;
        size_t tree;
        int error;        /* why the tree's roots cannot be opened (-errno), 0 when they are */
        int global_fd;    /* G */
        int runtime_fd;   /* R */
        dev_t global_dev; /* st_dev of G: removals below G never leave it */
        int *runtime_fds; /* R of every tree of the run's store (-EBADF: not open, or another
                           * store's: orphans_transcript_anywhere() then fails closed) */
} QwenRun;

int qwen_run_open(const Inventory *inv, size_t t, struct StoreRun **ret);
void qwen_run_close(struct StoreRun *run);
/* A step of Qwen's recovery pass (recover.h): StoreOps.run_recover_step. */
int qwen_run_recover_step(struct StoreRun *run, const struct PlanStep *st, StoreStep *step);
int qwen_run_orphan(struct StoreRun *run, const Orphan *o, const struct Verdict *v,
                    StoreStep *step);
