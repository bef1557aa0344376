/* dc-git.h: the compaction of one Deep Code project's checkpoint repository
 * (projects/<code>/file-history/.git): the refs and reflogs of sessions gone from the index go,
 * every checkpoint a kept message names is kept (a keep-ref when no branch reaches it), the
 * unreachable objects are pruned and the loose ones packed. The plan (dc_git_plan()) reads only.
 *
 * Precondition of both: no Deep Code process of that project is alive and nothing else writes the
 * repository (Deep Code has no lock; the caller decides liveness), the caller runs as the user who
 * owns the repository (root mode's per-user child), and kept_ids is the whole index of a project
 * whose sessions-index.json parsed (an unparsed index would read as "no session kept"). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* The git program, by absolute path: PATH is never searched. */
#define DC_GIT_PROGRAM "/usr/bin/git"
/* The namespace of qgc's keep-refs: refs/qgc/keep/<40 hex> names that commit. */
#define DC_GIT_KEEP_PREFIX "refs/qgc/keep/"
#define DC_GIT_TIMEOUT_DEFAULT (10 * MSEC_PER_MIN)
#define DC_GIT_MAX_BYTES_DEFAULT (UINT64_C(4) << 30)

typedef struct DcGitInput {
        const char *const *kept_ids; /* the session ids of the project's index */
        size_t n_kept;
        const char *const *named;    /* checkpointHash values of kept sessions' messages */
        size_t n_named;
        msec_t timeout;              /* for the whole call; 0: DC_GIT_TIMEOUT_DEFAULT */
        uint64_t max_bytes;          /* a larger .git is kept as is; 0: DC_GIT_MAX_BYTES_DEFAULT */
} DcGitInput;

typedef struct DcGitReport {
        uint64_t bytes_before, bytes_after; /* the .git tree's allocated bytes, as du counts */
        uint64_t bytes_estimate;            /* what compacting frees, estimated (the plan's) */
        char **refs_removed;                /* refs/heads/<id> of sessions gone from the index */
        size_t n_refs_removed;
        size_t n_reflogs_removed;           /* logs/refs/heads/<id> of those sessions */
        size_t n_reflogs_expired;           /* kept sessions' reflogs emptied */
        size_t n_keep_refs;                 /* keep-refs after the run: named, on no branch */
        size_t n_keep_refs_added, n_keep_refs_removed;
        size_t n_named_missing;             /* named checkpoints already absent: nothing to keep */
        uint64_t loose_objects, unreachable_objects, unreachable_bytes; /* objectsize:disk */
        bool changed;                       /* dc_git_compact() wrote something */
        char *why; /* kept as is (return 0), or the failure (< 0): what, for the operator; raw
                    * git output may be in it, so it is text_clean()ed where it is shown */
} DcGitReport;

/* Is s a session id as Deep Code makes them (crypto.randomUUID(), lowercase 8-4-4-4-12): a
 * branch refs/heads/<s> is a session's, which compaction removes when no session keeps it. */
bool dc_git_is_session_id(const char *s);

/* What dc_git_compact() would do, from the repository open at git_fd (its .git directory),
 * writing nothing. 1 planned, 0 the repository is kept as is (*ret->why), or -errno. */
int dc_git_plan(int git_fd, const DcGitInput *in, DcGitReport *ret);

/* Compact: the plan, then keep-refs and ref deletions in one git transaction, the removed
 * sessions' reflogs, the kept ones emptied, prune, repack, pack-refs, and a check that `git fsck`
 * is clean and every named checkpoint still resolves to its tree (-EIO otherwise). Does nothing
 * when there is nothing to do (a second run). Returns as dc_git_plan(). */
int dc_git_compact(int git_fd, const DcGitInput *in, DcGitReport *ret);

void dc_git_report_done(DcGitReport *r);
