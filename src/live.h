/* live.h: is a session in use now? Registry records (G/sessions), runtime claims (chats/),
 * writer locks (R/tmp/session-writer-locks). Read-only; fails closed (LIVE_UNKNOWN). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "inventory.h"

typedef struct LiveProbe LiveProbe;

/* Load the registry of a tree once (G/sessions/<pid>.json), with this host's boot id and pid ns. */
int live_probe_new(const Tree *t, LiveProbe **ret);
LiveProbe *live_probe_free(LiveProbe *p);
static inline void live_probe_freep(LiveProbe **p) {
        live_probe_free(*p);
}

/* Set s->live and s->live_reason from the registry, claims in chats_fd and the writer lock, all
 * read afresh (for the executor's re-check; p supplies the tree's directories). */
int live_check(const LiveProbe *p, Session *s, int chats_fd);

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

/* The claims of one chats/ directory, read once and shared by owner.c and live.c. */
typedef struct ClaimSet {
        RuntimeClaim *claims;
        size_t n, alloc;
        bool sorted; /* by live_claims_sort(): lookups by id are O(log n) */
} ClaimSet;

/* Does the name look like a runtime claim ("*.runtime.json", as Qwen's readRuntimeStatusClaims)? */
bool live_is_claim_name(const char *name);
/* Is name "<id>.runtime.json" or "<id>.<pid>.runtime.json", a claim of session id (case
 * ignored in the id, as Qwen's ids are compared)? */
bool live_is_claim_of(const char *name, const char *id);
/* Read (chats_fd, name) no-follow, non-blocking, bounded, and append it to set (malformed ones
 * too). Only -ENOMEM is returned as an error. */
int live_claims_add(ClaimSet *set, int chats_fd, const char *name);
/* Read every claim file of a chats/ directory. 0 or -errno (from opening the listing). */
int live_claims_load(ClaimSet *set, int chats_fd);
void live_claims_done(ClaimSet *set);
/* Order the claims by the id they name (session_id, or the file name's id part when
 * malformed), so that live_claims_range() can bisect. */
void live_claims_sort(ClaimSet *set);
/* The index range [*ret_first, *ret_end) of claims that may name id: all of them when the set is
 * not sorted. Callers still test each with live_claim_matches(). */
void live_claims_range(const ClaimSet *set, const char *id, size_t *ret_first, size_t *ret_end);
/* Does claim c name session id (session_id equal ignoring case, or, when malformed, a file name
 * starting with "<id>.")? */
bool live_claim_matches(const RuntimeClaim *c, const char *id);

/* live_check() with the claims already loaded (the scan reads each chats/ once). */
int live_check_claims(const LiveProbe *p, Session *s, const ClaimSet *claims);

/* Start ticks (field 22 of /proc/<pid>/stat) of a live, non-zombie pid: 1 alive (ticks set),
 * 0 dead (ESRCH or zombie), -errno when it cannot be told. */
int live_pid_start(int64_t pid, uint64_t *ret_ticks);

/* May a Qwen process be writing the files a project shares between its sessions (logs.json,
 * session-organization.v1.json)? Read afresh: every live or undecidable registry record, runtime
 * claim of the project's chats_fd and writer lock counts, unless elsewhere(id, userdata) says
 * its session belongs to another project (an unknown id counts: a new process has no transcript
 * yet). 1 with *ret_reason, 0 when none, -errno. */
int live_project_busy(const Tree *t, int chats_fd, bool (*elsewhere)(const char *id, void *userdata),
                      void *userdata, char **ret_reason);
