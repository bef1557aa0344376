/* qwen-restore.h: `qgc restore` in a Qwen tree: qwen_store's plan_restore, run_restore_begin,
 * run_restore and run_restore_end (store.h: their contract). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "inventory.h"
#include "store.h"

int qwen_restore_plan(struct Plan *p, const Inventory *inv, size_t t, const char *id,
                      bool to_archive);
int qwen_restore_begin(struct StoreRun *run, const struct Plan *p, StoreStep *step);
int qwen_restore_run(struct StoreRun *run, const struct PlanStep *st, StoreStep *step);
void qwen_restore_end(struct StoreRun *run, const struct PlanStep *st, int r, StoreStep *step);
