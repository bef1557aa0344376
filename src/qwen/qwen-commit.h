/* qwen-commit.h: Qwen's group commit (qwen-batch.h): a batch of prepared sessions of one tree
 * carried out in order, every outcome reported (StoreRunEnv.report) before it returns. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "qwen-batch.h"

/* The commit's clock (CLOCK_MONOTONIC, ns). */
uint64_t qwen_commit_now_ns(void);
/* Does batch b hold as many sessions as it may? QWEN_BATCH_MAX_ARCHIVES while it holds only
 * archives or while the last batch's shared-file edits took QWEN_BATCH_EDIT_MSEC or more, else
 * QWEN_BATCH_MAX. */
bool qwen_commit_full(const QwenBatch *b);
/* Run the batch's steps in order, report every outcome, then empty it. */
void qwen_commit_batch(QwenAll *c);
/* The batch's directory entry for s's chats/, opened on first use (the batch committed first
 * when it holds QWEN_BATCH_DIRS). Index, or -errno (*ret_why). */
int qwen_commit_dir(QwenAll *c, const QwenRun *t, const Session *s, const char **ret_why);
