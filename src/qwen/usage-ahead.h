/* usage-ahead.h: the usage lines of a run's salvages, built ahead of the executor on a thread of
 * their own. Qwen's group commit (qwen-steps.c) names, before its first batch, the sessions of the plan whose
 * transcript it will salvage (no line in usage_record.jsonl yet); the thread opens each transcript
 * in that order, checks that it has the identity the scan saw (before and after reading it),
 * and builds its line with usage_build_record(), at most USAGE_AHEAD_MAX sessions ahead of the
 * executor. The executor takes a session's line when it gets to it: built (and checked), or
 * "do it yourself" (not started yet: the thread skips it then; or it failed: the executor
 * reads the file itself and reports what it finds). The thread changes nothing, logs nothing
 * and uses only the sessions (read-only while the executor runs) and the trees' fds. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "inventory.h"

#define USAGE_AHEAD_MAX 1024U /* sessions built ahead of the executor (about one batch of archives) */

typedef struct UsageAhead UsageAhead;

/* An empty list for the sessions of inv, whose tree i is opened at runtime_fds[i] (the caller's,
 * open until usage_ahead_free()). */
int usage_ahead_new(const Inventory *inv, const int *runtime_fds, UsageAhead **ret);
/* Name the next session to salvage (an active or archived, not compressed transcript), in the
 * order in which the executor gets to them. */
int usage_ahead_add(UsageAhead *ua, const Session *s);
/* Start the thread (when there is more than one CPU to run on and enough to build); without it
 * usage_ahead_take() always says "do it yourself". 1 started, 0 not, -errno. */
int usage_ahead_start(UsageAhead *ua);
/* s's line: 1 built from the transcript with s's identity (*ret_line, the caller's; NULL when the
 * transcript has nothing to salvage), 0 do it yourself. Waits only for a line being built. */
int usage_ahead_take(UsageAhead *ua, const Session *s, char **ret_line);
/* Would usage_ahead_take() of s wait for its line, or build it on the caller's thread (a line
 * the thread has not built yet)? Then the executor commits what it has prepared first. */
bool usage_ahead_would_wait(UsageAhead *ua, const Session *s);
/* How many lines the thread built, and how many the executor took (for the debug log). */
void usage_ahead_counts(const UsageAhead *ua, size_t *ret_built, size_t *ret_taken);
/* Stop and join the thread, free what is left. */
UsageAhead *usage_ahead_free(UsageAhead *ua);
static inline void usage_ahead_freep(UsageAhead **p) {
        usage_ahead_free(*p);
}
