/* qwen-run.h: what a real run changes in Qwen's trees through qwen_store's run operations
 * (store.h: their contract): so far its orphans (file-history/, subagents/, empty projects, the
 * hygiene kinds and stale project entries), and the steps of its recovery pass (recover.h). A
 * session's archive, delete, compress and restore
 * are still the executor's own steps (exec/), so qwen_store has no run_session. */
#pragma once

#include <stddef.h>

#include "inventory.h"
#include "store.h"

int qwen_run_open(const Inventory *inv, size_t t, struct StoreRun **ret);
void qwen_run_close(struct StoreRun *run);
/* A step of Qwen's recovery pass (recover.h): StoreOps.run_recover_step. */
int qwen_run_recover_step(struct StoreRun *run, const struct PlanStep *st, StoreStep *step);
int qwen_run_orphan(struct StoreRun *run, const Orphan *o, const struct Verdict *v,
                    StoreStep *step);
