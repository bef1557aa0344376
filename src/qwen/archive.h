/* archive.h: Qwen's chats/archive/ layout: move a transcript and its sidecars by rename, with
 * Qwen's collision rules (.worktree.json refused, .pr.json merged by PR number, .ledger.jsonl
 * append-merged). */
#pragma once

#include <stdbool.h>

#include "inventory.h"

/* Called after every mutating step (rename, write, unlink), with a short name of the step. */
typedef void (*ArchiveStepFn)(void *userdata, const char *step);

/* Keep at most this many PR bindings, like Qwen's SESSION_PR_LIST_LIMIT. */
#define ARCHIVE_PR_LIST_LIMIT 10

/* Move <id>.jsonl and its sidecars from src_fd to dst_fd: chats/ -> chats/archive/ when
 * to_archive, else back. Sidecars go first and the transcript last, so an interrupted move is
 * completed by running it again (the session stays where its transcript is).
 * -ESTALE (the renamed sidecars put back) when a merged sidecar was written to meanwhile.
 * Refuses before changing anything: -ESTALE when the transcript is not `expect` (may be NULL),
 * -EEXIST when the target transcript or both .worktree.json exist, -EBADMSG when a .pr.json to
 * merge is not valid. *ret_why (may be NULL) gets a static explanation on failure:
 * archive_why_conflict itself when the target transcript exists (a conflict, not a failure). */
extern const char archive_why_conflict[];
int archive_move(int src_fd, int dst_fd, const char *id, const FileId *expect, bool to_archive,
                 ArchiveStepFn step, void *userdata, const char **ret_why);

/* archive_move() without step 6: the caller fsyncs both directories, once for every session of
 * a batch it moved (the executor's group commit), before it reports any of them moved. */
int archive_move_nosync(int src_fd, int dst_fd, const char *id, const FileId *expect,
                        bool to_archive, ArchiveStepFn step, void *userdata,
                        const char **ret_why);

/* archive_move_nosync() of a session whose src_fd holds none of the three sidecars (the caller
 * listed the directory after the liveness check): the identity check against expect (not
 * NULL), then the transcript's rename, which never replaces. The same errors and *ret_why
 * (not NULL) as archive_move_nosync() for such a session, without its lookups of sidecars. */
int archive_move_bare_nosync(int src_fd, int dst_fd, const char *id, const FileId *expect,
                             ArchiveStepFn step, void *userdata, const char **ret_why);
