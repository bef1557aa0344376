/* qwen-steps.h: what Qwen's group commit (qwen-commit.h) does for one session besides its move:
 * its usage line salvaged (built here or by the salvage thread), the pending-delete marker of a
 * delete, its rows in the files Qwen shares, and the rest of a delete (sidecars, file-history/,
 * subagents/, debug/, plans/, review scripts, dead runtime claims). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "qwen-batch.h"

/* The usage line to salvage from the transcript (dir_fd, name) before it goes, into *ret_line
 * (NULL: present already, in the file or in the batch, or nothing to salvage) and its
 * sessionId into *ret_sid; *ret_dep: the batch's item whose line it shares, or -1. 0, -ESTALE
 * changed since scan, other -errno: fail closed. */
int qwen_steps_salvage(QwenAll *c, const QwenRun *t, const Session *s, int dir_fd,
                       const char *name, const FileId *fid, char **ret_line, char **ret_sid,
                       ssize_t *ret_dep);
/* Start the salvage thread (usage-ahead.h) on the sessions of the run's plan it will salvage. */
void qwen_steps_salvage_ahead(QwenAll *c);
/* Everything of deleted session s but the transcript. 0 or the first -errno. */
int qwen_steps_rest(QwenAll *c, const QwenRun *t, const Session *s, int chats_fd,
                    int archive_fd);
/* s's pending-delete marker (recover.h) into *ret. 0 or -errno. */
int qwen_steps_mark(QwenAll *c, const QwenRun *t, const Session *s, int chats_fd,
                    int archive_fd, RecoverMarker *ret);
int qwen_steps_copy_exists(int chats_fd, int archive_fd, const char *name, bool in_archive);
/* Drop the step's directory listings: the next step lists afresh. */
void qwen_steps_lists_drop(QwenAll *c);
/* The batch's deletes (markers written) out of the files Qwen shares, each edited once. */
void qwen_steps_shared(QwenAll *c, QwenBatch *b, const QwenRun *t);
