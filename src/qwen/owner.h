/* owner.h: the ownership pass: after the scan has read a project's transcripts, whose is each of
 * its sessions, decided the way Qwen's delete path decides it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "claims.h"
#include "inventory.h"
#include "record.h"

/* What the scan read of a session's primary transcript copy, for its ownership. */
typedef struct OwnerFacts {
        char *problem;        /* the copy cannot be verified (not a regular file, ...), or NULL */
        HeadInfo head;        /* its first record, when head_ok */
        bool head_ok;
        const char *head_why; /* why the first record could not be read (static) */
} OwnerFacts;
void owner_facts_done(OwnerFacts *f);

/* What the pass remembers of the last cwd it met (the sessions of a project mostly share one):
 * its project hash and whether it sanitizes to the project directory. */
typedef struct OwnerCache {
        char *cwd;          /* NULL: empty */
        char *project_dir;  /* the directory the sanitize test was made against */
        char hash[PROJECT_HASH_LEN + 1];
        int sanitizes;      /* 1, 0, or -1 when not computed yet */
} OwnerCache;
void owner_cache_done(OwnerCache *c);

/* Decide owner, owner_cause and its facts (owner_detail, owner_dir), cwd and hash of the n
 * sessions of project_dir (facts[i] is what the scan read for sessions[i]) with the runtime
 * claims of its chats/ and cache (may be NULL) for the cwds they share; a problem of the copy
 * makes an unverified owner whose detail it is (taken from the facts). The owner reason is
 * rendered from the facts (reason_owner(), reason.h). 0 or -ENOMEM. */
int owner_pass(Session *sessions, OwnerFacts *facts, size_t n, const char *project_dir,
               const ClaimSet *claims, OwnerCache *cache);
