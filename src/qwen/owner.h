/* owner.h: the read-only ownership check of one transcript, the way Qwen's delete path does it. */
#pragma once

#include "inventory.h"
#include "claims.h"
#include "record.h"

/* Decide s->owner, owner_cause with its facts (owner_detail, owner_dir), cwd and hash from the
 * parsed head of the transcript (head may be NULL when it could not be read; why then says why),
 * the project directory's name, and the runtime claims found in chats/ (chats_fd, read-only).
 * The owner reason is rendered from them (reason_owner(), reason.h). */
int owner_check(Session *s, const HeadInfo *head, const char *why, const char *project_dir,
                int chats_fd);

/* The transcript could not be read at all (why: the reader's words, taken): unverified. */
void owner_set_unreadable(Session *s, char *why);

/* owner_check() with the claims of chats/ already loaded (the scan reads each chats/ once). */
int owner_check_claims(Session *s, const HeadInfo *head, const char *why, const char *project_dir,
                       const ClaimSet *claims);

/* What owner_check_cached() remembers of the last cwd it met (the sessions of a project mostly
 * share one): its project hash and whether it sanitizes to the project directory. */
typedef struct OwnerCache {
        char *cwd;          /* NULL: empty */
        char *project_dir;  /* the directory the sanitize test was made against */
        char hash[PROJECT_HASH_LEN + 1];
        int sanitizes;      /* 1, 0, or -1 when not computed yet */
} OwnerCache;
void owner_cache_done(OwnerCache *c);

/* owner_check_claims() reusing cache (may be NULL) for the hash and the sanitizeCwd() test. */
int owner_check_cached(Session *s, const HeadInfo *head, const char *why, const char *project_dir,
                       const ClaimSet *claims, OwnerCache *cache);
