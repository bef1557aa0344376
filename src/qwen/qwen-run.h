/* qwen-run.h: a Qwen tree open for a run (qwen_store's run_open: QwenRun), and what a real run
 * changes there through qwen_store's run operations on one tree (store.h: their contract): its
 * orphans (file-history/, subagents/, empty projects, the hygiene kinds and stale project
 * entries), and the steps of its recovery pass (recover.h). Its sessions' archive, delete and
 * compress are the run's group commit (qwen-session.h), their restore qwen-restore.h. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "inventory.h"
#include "live.h"
#include "store.h"
#include "usage-index.h"

/* A Qwen tree open for a run (struct StoreRun is each store's own type); qwen-restore.c
 * restores through it too. */
typedef struct QwenRun {
        const Inventory *inv;
        size_t tree;
        int error;        /* why the tree's roots cannot be opened (-errno), 0 when they are */
        int session_error; /* why its sessions cannot be acted on: error, or no liveness probe */
        int global_fd;    /* G */
        int runtime_fd;   /* R */
        dev_t global_dev; /* st_dev of G: removals below G never leave it */
        int *runtime_fds; /* R of every tree of the run's store (-EBADF: not open, or another
                           * store's: orphans_transcript_anywhere() then fails closed) */
        LiveProbe *probe; /* its sessions' liveness, re-checked before each batch */
        UsageIndex *usage; /* ids with a line in usage_record.jsonl, read incrementally */
        struct QwenAll *all; /* the run's group commit (qwen-session.h), once it began */
} QwenRun;


int qwen_run_open(const Inventory *inv, size_t t, struct StoreRun **ret);
void qwen_run_close(struct StoreRun *run);
/* A step of Qwen's recovery pass (recover.h): StoreOps.run_recover_step. */
int qwen_run_recover_step(struct StoreRun *run, const struct PlanStep *st, StoreStep *step);
int qwen_run_orphan(struct StoreRun *run, const Orphan *o, const struct Verdict *v,
                    StoreStep *step);
