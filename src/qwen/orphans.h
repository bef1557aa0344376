/* orphans.h: reclaiming what no session owns any more: G/file-history/<id>/ and
 * projects/<dir>/subagents/<id>/ with no transcript for <id> in any tree, and empty
 * projects/<dir>/. The mechanics only; the executor (actions-orphan.c) journals and counts. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "inventory.h"

/* Called after every mutating step, with a short name of the step (as ArchiveStepFn). */
typedef void (*OrphansStepFn)(void *userdata, const char *step);

/* Is there an <id>.jsonl in chats/ or chats/archive/ of any project below any of the n open
 * runtime roots (Qwen follows a symlinked project, and so does this look)? Fails closed: true
 * when it cannot tell, e.g. for a negative fd. */
bool orphans_transcript_anywhere(const int *runtime_fds, size_t n, const char *id);

/* Reclaim o, the entry o->name of directory root_fd/rel (opened no-follow, on filesystem dev
 * when dev != 0): re-check its identity and, for file-history and subagents, that no transcript
 * for the id exists now (runtime_fds as above); then remove it by fd, an empty project only by
 * rmdir(). 1 reclaimed; 0 skipped, -errno failed, both with *ret_why a static reason. */
int orphans_reclaim(const Orphan *o, int root_fd, const char *rel, dev_t dev,
                    const int *runtime_fds, size_t n_runtime, OrphansStepFn step, void *userdata,
                    const char **ret_why);
