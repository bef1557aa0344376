/* live.h: is a session in use now? Registry records (G/sessions), runtime claims (chats/),
 * writer locks (R/tmp/session-writer-locks). Read-only; fails closed (LIVE_UNKNOWN). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "claims.h"
#include "inventory.h"

typedef struct LiveProbe LiveProbe;

/* Load the registry of a tree once (G/sessions/<pid>.json), with this host's boot id and pid ns. */
int live_probe_new(const Tree *t, LiveProbe **ret);
LiveProbe *live_probe_free(LiveProbe *p);
static inline void live_probe_freep(LiveProbe **p) {
        live_probe_free(*p);
}

/* Bring p up to date for a re-check: the registry and the writer locks' directory are listed
 * again only when they changed since they were listed (or within a second of it), and only the
 * registry records whose file changed are read again (a verdict of an unchanged record stands:
 * a dead or reused pid does not come back, and a live one still keeps its session). */
int live_probe_refresh(LiveProbe *p);

/* Set s->live and s->live_reason from the probe, the claims of its chats/ (NULL: none) and the
 * writer lock. */
int live_check_claims(const LiveProbe *p, Session *s, const ClaimSet *claims);

/* What the scan found of a session that bears on its liveness. */
typedef struct LiveFacts {
        bool subagents_incomplete; /* subagents/ or its subagents/<id>/ could not be listed in
                                    * full: a recent write may be missing from last_write */
} LiveFacts;

/* The liveness pass over the n sessions of a project after the scan (facts[i] for sessions[i]):
 * live_check_claims() with the probe p and the claims of the project's chats/ (every session
 * LIVE_UNKNOWN when p is NULL), and LIVE_UNKNOWN where subagents were not listed in full.
 * 0 or -ENOMEM. */
int live_pass(const LiveProbe *p, Session *sessions, const LiveFacts *facts, size_t n,
              const ClaimSet *claims);

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
