/* ownership.h: the ownership pass: after the scan has read a project's transcripts, whose is each
 * of its sessions (owner.h's check of one transcript, over the project's sessions in order). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "claims.h"
#include "inventory.h"
#include "owner.h"
#include "record.h"

/* What the scan read of a session's primary transcript copy, for its ownership. */
typedef struct OwnerFacts {
        char *problem;        /* the copy cannot be verified (not a regular file, ...), or NULL */
        HeadInfo head;        /* its first record, when head_ok */
        bool head_ok;
        const char *head_why; /* why the first record could not be read (static) */
} OwnerFacts;
void owner_facts_done(OwnerFacts *f);

/* Decide owner, owner_cause and its facts, cwd and hash of the n sessions of project_dir (facts[i] is what
 * the scan read for sessions[i]) with the runtime claims of its chats/ and cache (owner.h) for
 * the cwds they share; a problem of the copy makes an unverified owner whose detail it is (taken
 * from the facts: owner_set_unreadable()). 0 or -ENOMEM. */
int owner_pass(Session *sessions, OwnerFacts *facts, size_t n, const char *project_dir,
                   const ClaimSet *claims, OwnerCache *cache);
