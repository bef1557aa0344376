/* enrich.h: the enrichment pass: after the scan has read a project's sessions, what other files
 * of the tree say about each: its scheduled tasks and prompt-history rows (tmp/<hash>/, read once
 * per hash), its entry in session-organization.v1.json (pinned, grouped), its review directory,
 * and whether a worktree sidecar names a worktree that exists. Runs after the ownership pass
 * (tasks are found by the session's project hash). Read-only. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "inventory.h"

/* Scheduled tasks of one tmp/<hash>/: the bound session ids. */
typedef struct EnrichTasks {
        char hash[PROJECT_HASH_LEN + 1];
        char **ids;
        size_t n;
        bool malformed; /* unreadable: every session of the hash counts as bound */
        char **log_ids; /* sessionId of every row of tmp/<hash>/logs.json (erase.h) */
        size_t n_log;
        SharedState logs_state; /* whether a delete's edit of logs.json can be done */
} EnrichTasks;

/* The tmp/<hash>/ read so far, sorted by hash: one per scan thread, kept across projects. */
typedef struct EnrichCache {
        EnrichTasks *tasks;
        size_t n_tasks, alloc_tasks;
} EnrichCache;
void enrich_cache_done(EnrichCache *c);

/* What the scan found of a project for the pass: directory fds (-EBADF when absent) and the
 * organization file's "sessions" object (NULL when absent, borrowed). */
typedef struct EnrichProject {
        int tmp_fd;          /* R/tmp */
        int chats_fd, archive_fd;
        int review_fd;       /* workflows/generated/review/ */
        json_object *org;
        bool org_unreadable; /* the organization file exists and does not parse */
} EnrichProject;

/* What the scan listed for one session: the worktree sidecars of its copies. */
typedef struct EnrichFacts {
        /* <worktree_id[k]>.worktree.json is listed in chats/ (k = 0) or chats/archive/ (k = 1);
         * the id as the copy's file name spells it */
        bool worktree[2];
        char worktree_id[2][SESSION_ID_MAX + 1];
        bool worktree_cold; /* a compressed <id>.worktree.json.zst: not read, a live worktree */
} EnrichFacts;

/* Set pinned, grouped, org_entry, org_unreadable, review_dir, n_tasks, n_log_rows and
 * live_worktree of the n sessions of project p (facts[i] for sessions[i]), reading each
 * tmp/<hash>/ once through cache. 0 or -ENOMEM. */
int enrich_pass(const EnrichProject *p, Session *sessions, const EnrichFacts *facts, size_t n,
                EnrichCache *cache);
