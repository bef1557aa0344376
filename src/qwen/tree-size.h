/* tree-size.h: where every byte of a Qwen tree goes, by kind, for qgc status. A walk of the
 * tree's roots (R, and G when it is elsewhere) through the safe-filesystem layer, counting
 * every file once (hard links once, as du does) and every directory's own size, so the total
 * is what `du --apparent-size` (or du's allocated blocks) says of the tree. A mount point
 * inside is not entered and makes the measure incomplete. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "store.h"

typedef enum TreeKind {
        TREE_KIND_SESSIONS,     /* projects/<p>/chats/: transcripts, sidecars, claims; and
                                 * projects/<p>/session-organization.v1.json */
        TREE_KIND_ARCHIVE,      /* projects/<p>/chats/archive/ */
        TREE_KIND_FILE_HISTORY, /* G/file-history/ */
        TREE_KIND_SUBAGENTS,    /* projects/<p>/subagents/ */
        TREE_KIND_LOGS,         /* tmp/<hash>/logs.json, shell_history; debug/ */
        TREE_KIND_TOOL_RESULTS, /* tmp/<hash>/tool-results/, tmp/<hash>/<f>.output */
        TREE_KIND_WORKFLOWS,    /* projects/<p>/workflows/ */
        TREE_KIND_LEGACY,       /* Qwen <= 0.1: tmp/<hash>/chats/, tmp/<hash>/checkpoint*.json */
        TREE_KIND_USAGE,        /* usage_record.jsonl, usage/ */
        TREE_KIND_QGC,          /* qgc's own: G/.qgc.lock, G/.qgc/, its .<name>.qgc-tmp files */
        TREE_KIND_STATE,        /* other files Qwen writes: settings, memory, plans, registry,
                                 * locks, scheduled tasks, checkpoints/, extensions, ... */
        TREE_KIND_UNKNOWN,      /* anything qgc does not recognise (never touched) */
        TREE_KIND_DIRS,         /* the directories themselves */
        _TREE_KIND_MAX,
        _TREE_KIND_INVALID = -22,
} TreeKind;

_Static_assert(_TREE_KIND_MAX <= STORE_SIZE_KINDS, "TreeKind fits StoreSize");

const char *tree_size_kind_to_string(TreeKind k); /* "active sessions", ... */
const char *tree_size_kind_key(TreeKind k);       /* "sessions", ... (JSON) */

/* Measure tree t (its roots as configured) by TreeKind (files, bytes, alloc, totals, unknown
 * paths, incomplete). 0 or -errno (the runtime root cannot be opened); -ENOMEM. */
int tree_size_measure(const Tree *t, StoreSize *ret);
