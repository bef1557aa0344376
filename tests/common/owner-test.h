/* owner-test.h: one session through the ownership pass (owner_pass(), the production entry
 * point), for the tests of the ownership proof. The head is borrowed. */
#pragma once

#include <errno.h>
#include <stddef.h>

#include "claims.h"
#include "owner.h"

static inline int owner_test_check_cached(Session *s, const HeadInfo *head, const char *why,
                                          const char *project_dir, const ClaimSet *claims,
                                          OwnerCache *cache) {
        OwnerFacts f = { .head_ok = head != NULL, .head_why = why };

        if (head)
                f.head = *head;
        return owner_pass(s, &f, 1, project_dir, claims, cache);
}

static inline int owner_test_check_claims(Session *s, const HeadInfo *head, const char *why,
                                          const char *project_dir, const ClaimSet *claims) {
        return owner_test_check_cached(s, head, why, project_dir, claims, NULL);
}

/* The claims of chats_fd read first (unreadable claims vouch for nothing). */
static inline int owner_test_check(Session *s, const HeadInfo *head, const char *why,
                                   const char *project_dir, int chats_fd) {
        ClaimSet claims = {};
        int r = 0;

        if (chats_fd >= 0 && head)
                r = claims_load(&claims, chats_fd);
        if (r != -ENOMEM)
                r = owner_test_check_claims(s, head, why, project_dir, &claims);
        claims_done(&claims);
        return r;
}

/* A copy that cannot be verified (why: taken): unverified with why as its detail. */
static inline void owner_test_set_unreadable(Session *s, char *why) {
        OwnerFacts f = { .problem = why };

        (void)owner_pass(s, &f, 1, "", NULL, NULL);
}
