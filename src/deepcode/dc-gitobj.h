/* dc-gitobj.h: a read-only reader of a Deep Code checkpoint repository's objects
 * (projects/<code>/file-history/.git) for qgc status: every object, loose or packed, classified
 * by what reaches it, with its bytes. It never runs git: git opens without O_NOATIME, and status
 * changes no atime (every open here is fs_open_noatime(), no symlink followed). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "dc-git.h"

/* Limits: the repository is user input, root reads it. Past any of them, or on a malformed
 * object, pack, index or ref, the figures are unknown (never a failure of status). */
#define DC_GITOBJ_MAX_OBJECT (UINT64_C(64) << 20) /* inflated bytes of one object or delta */
#define DC_GITOBJ_MAX_OBJECTS 1000000             /* objects (and refs) of a repository */
#define DC_GITOBJ_MAX_DEPTH 50                    /* deltas on top of a base object */
#define DC_GITOBJ_MAX_WORK (UINT64_C(4) << 30)    /* inflated bytes per repository */

typedef enum DcGitobjClass {
        DC_GITOBJ_LIVE,        /* reachable from a kept session's branch, a checkpoint a kept
                                * session's message names, a keep-ref, HEAD or any other ref */
        DC_GITOBJ_ORPHAN,      /* reachable only from refs/heads/<id> of sessions not kept */
        DC_GITOBJ_UNREACHABLE, /* reachable from nothing (reflogs are not roots) */
        _DC_GITOBJ_CLASS_MAX,
} DcGitobjClass;

/* A loose object counts its file's st_blocks * 512; a packed one its entry's bytes in the pack;
 * the rest of each pack and its .idx counts as live. An object both loose and packed counts
 * once, with the bytes of every copy. */
typedef struct DcGitobjCounts {
        bool known;
        const char *why; /* !known: why (static) */
        uint64_t objects[_DC_GITOBJ_CLASS_MAX];
        uint64_t alloc[_DC_GITOBJ_CLASS_MAX];
} DcGitobjCounts;

/* Classify the objects of the repository open at git_fd (its .git directory) with the kept
 * sessions and named checkpoints of in (in->timeout and max_bytes unused). 0 (*ret known or
 * not), or -ENOMEM. */
int dc_gitobj_count(int git_fd, const DcGitInput *in, DcGitobjCounts *ret);
