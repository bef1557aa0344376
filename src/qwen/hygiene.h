/* hygiene.h: tree hygiene outside sessions, as orphan kinds of the inventory (inventory.h):
 * tool-results and *.output files (Qwen's own 24 h rule), tmp/<hash>/ directories of no session,
 * debug/<id>.txt and plans/<id>.md with no transcript, and the legacy (Qwen <= 0.1) chat and
 * checkpoint files. Each kind has its own policy key (config.h), "off" by default; the scan
 * looks for a kind only when its key is on. What this module does not recognise it never
 * touches: a tmp/<hash>/ holding an unknown name is no candidate (qgc status counts it as
 * unknown, tree-size.h). Stale project entries (every recorded cwd a vanished temporary directory,
 * upstream PR #9110) are marked first and go a stale-project-min-age later, their sessions
 * through the normal delete (see hygiene.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "config.h"
#include "hashmap.h"
#include "inventory.h"
#include "orphans.h"
#include "store.h"
#include "util.h"

/* Where upstream (PR #9110) keeps the time an entry was first seen stale: its mtime. */
#define HYGIENE_STALE_MARKER ".qwen-orphan-since"
/* The most of it that is read (its recorded cwds, one a line; the tree's user can write it too):
 * a larger one "cannot be read", which keeps the entry. 1 MiB: some 15000 cwds, where a stale
 * entry of Qwen's records one or a few. */
#define HYGIENE_STALE_MARKER_MAX (1024U * 1024)

/* What an item of kind k is, for the plan's reason ("tool result older than Qwen keeps it"). */
const char *hygiene_what(OrphanKind k);
/* The kinds the policy p can act on: bit (1u << kind) for each whose key is on. */
unsigned hygiene_need(const Policy *p);

/* Add the hygiene items of the kinds in need (hygiene_need()) of every tree of inv whose store
 * is store; runs after the sessions of every tree are in inv. Items that depend on "no session" (stale tmp, debug,
 * plans) are not looked for when a tree was not listed in full; a stale tmp/<hash>/ not when a
 * session of the tree has no proven cwd (its hash is unknown). 0 or -ENOMEM. */
int hygiene_scan(Inventory *inv, const StoreOps *store, unsigned need);

/* Stale project entries of tree t (issue #7906, upstream PR #9110): projects/<dir>/ whose every
 * session is verified (its first record's cwd sanitises to <dir>), not in conflict, not live,
 * and whose cwd is a temporary directory (/tmp/..., /var/tmp/...) that no longer exists. Only
 * counted, for qgc status: qgc removes no project entry (no marker, no 24 h wait yet). A cwd that
 * exists again, or any other cwd, keeps the project out. 0 or -ENOMEM. */
int hygiene_stale_projects(const Inventory *inv, size_t t, size_t *ret_stale, size_t *ret_projects,
                           uint64_t *ret_bytes);

#define HYGIENE_DEPTH_MAX 32

/* Sizes and the newest mtime below dfd. A mount point, another filesystem or a directory
 * that cannot be listed makes it incomplete. */
typedef struct HygieneSum {
        uint64_t bytes, bytes_alloc;
        msec_t mtime;
        bool incomplete;
} HygieneSum;

/* What a tmp/<hash>/ holds, as far as the stale-tmp rule is concerned. */
typedef struct HygieneTmp {
        const char *why; /* why it is no candidate: NULL when everything is understood */
} HygieneTmp;

/* What one projects/<dir>/ holds, as far as the stale-project rule is concerned. */
typedef struct HygieneStale {
        const Inventory *inv;
        size_t tree;
        const char *dir;      /* the entry's name under projects/ */
        size_t first, end;    /* its sessions in inv (sorted by tree, project_dir) */
        dev_t dev;
        char *why;            /* the first reason it cannot go */
        bool cwd_back;        /* a recorded cwd exists, or is no temporary directory */
        bool transcripts;     /* a transcript is in chats/ */
        bool skip_org;        /* the executor's re-check: qgc's own edit of the organization
                               * file is no activity */
        StrBuf cwds;          /* distinct recorded cwds, each followed by '\n' */
        Hashmap cwd_set;      /* the offsets (+1) in cwds of those indexed, for the dedup */
        size_t cwd_indexed;   /* cwds.buf[0..cwd_indexed) is in cwd_set */
        msec_t mtime;         /* newest regular file inside, the marker excepted */
        uint64_t bytes, bytes_alloc;
        FileId marker;
} HygieneStale;

/* hygiene.c: the names Qwen leaves, opens and sums through the safe-filesystem layer */
bool hygiene_is_legacy_chat(const char *n);
bool hygiene_is_checkpoint(const char *n);
int hygiene_open_dir(int dfd, const char *name, dev_t dev, struct stat *ret_st);
bool hygiene_regular(int dfd, const char *name, dev_t dev, struct stat *ret_st);
void hygiene_sum(int dfd, dev_t dev, unsigned depth, HygieneSum *s);
int hygiene_tmp_classify(int hfd, dev_t dev, HygieneTmp *ret);
bool hygiene_temp_path(const char *p);

/* hygiene-stale.c: one project entry examined for the stale-project rule */
void hygiene_stale_done(HygieneStale *h);
int hygiene_stale_walk(HygieneStale *h, int pfd);
int hygiene_stale_judge_cwds(HygieneStale *h);
bool hygiene_stale_elsewhere(const char *id, void *userdata);
int hygiene_stale_examine(HygieneStale *h, int pfd);
