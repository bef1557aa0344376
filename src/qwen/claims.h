/* claims.h: the runtime claims of a chats/ directory, read once per directory and shared by the
 * ownership pass (owner.h), the liveness check (live.h) and the executor. Whether a claim makes
 * its session live is live.h's question. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inventory.h"

/* A runtime claim file in chats/: <id>.runtime.json (v0.21) or <id>.<pid>.runtime.json (newer),
 * {schema_version, pid, session_id, work_dir, hostname, started_at, qwen_version}. */
typedef struct RuntimeClaim {
        char *file;       /* name in chats/ */
        char *session_id; /* NULL when absent or not a string */
        char *work_dir;   /* NULL when absent or not a string */
        char *hostname;   /* NULL when absent or not a string */
        int64_t pid;      /* 0 when absent */
        FileId id;        /* identity (for sizes) */
        bool malformed;   /* unreadable, not a regular file, not a JSON object */
} RuntimeClaim;

/* The claims of one chats/ directory. */
typedef struct ClaimSet {
        RuntimeClaim *claims;
        size_t n, alloc;
        bool sorted; /* by claims_sort(): lookups by id are O(log n) */
} ClaimSet;

/* Does the name look like a runtime claim ("*.runtime.json", as Qwen's readRuntimeStatusClaims)? */
bool claims_is_claim_name(const char *name);
/* Is name "<id>.runtime.json" or "<id>.<pid>.runtime.json", a claim of session id (case
 * ignored in the id, as Qwen's ids are compared)? */
bool claims_is_claim_of(const char *name, const char *id);
/* Read (chats_fd, name) no-follow, non-blocking, bounded, and append it to set (malformed ones
 * too). Only -ENOMEM is returned as an error. */
int claims_add(ClaimSet *set, int chats_fd, const char *name);
/* Read every claim file of a chats/ directory. 0 or -errno (from opening the listing). */
int claims_load(ClaimSet *set, int chats_fd);
void claims_done(ClaimSet *set);
/* Order the claims by the id they name (session_id, or the file name's id part when
 * malformed), so that claims_range() can bisect. */
void claims_sort(ClaimSet *set);
/* The index range [*ret_first, *ret_end) of claims that may name id: all of them when the set is
 * not sorted. Callers still test each with claims_match(). */
void claims_range(const ClaimSet *set, const char *id, size_t *ret_first, size_t *ret_end);
/* Does claim c name session id (session_id equal ignoring case, or, when malformed, a file name
 * starting with "<id>.")? */
bool claims_match(const RuntimeClaim *c, const char *id);
