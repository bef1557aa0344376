/* qwen-session.h: qwen_store's session actions of a run (store.h: run_begin, run_ready,
 * run_session, run_commit, run_end, their contract): a session's archive, delete or compress is
 * checked and queued into the group commit (qwen-commit.h), its outcome reported through
 * StoreRunEnv.report by the batch's commit. */
#pragma once

#include "plan.h"
#include "store.h"

int qwen_session_begin(const Plan *p, struct StoreRun *const *runs, const StoreRunEnv *env,
                       struct StoreRunAll **ret);
void qwen_session_ready(struct StoreRunAll *all);
int qwen_session_run(struct StoreRun *run, const Session *s, const struct Verdict *v,
                     StoreStep *step);
void qwen_session_commit(struct StoreRunAll *all);
void qwen_session_end(struct StoreRunAll *all);
