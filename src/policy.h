/* policy.h: pure retention decisions. Inventory + Config + now -> one Verdict per session and
 * per orphan. No I/O, no clock. */
#pragma once

#include <stdbool.h>

#include "config.h"
#include "inventory.h"

typedef enum Verb {
        VERB_KEEP,    /* no rule applies, or a protection holds it */
        VERB_ARCHIVE, /* move to chats/archive/ */
        VERB_DELETE,  /* remove with sidecars (or reclaim an orphan) */
        VERB_SKIP,    /* cannot be acted on safely: in use, unverified, foreign, conflict, limit */
        VERB_COMPRESS, /* an archived session into the cold tier (cold.h) */
        _VERB_MAX,
        _VERB_INVALID = -22,
} Verb;

/* Protections: why a session a rule selected (or might select) stays. A bit each. */
typedef enum Protection {
        PROT_LIVE = 1 << 0,       /* a liveness signal (registry, claim, lock, recent write) */
        PROT_PINNED = 1 << 1,     /* pinned or grouped */
        PROT_TITLED = 1 << 2,     /* titled by a person */
        PROT_SCHEDULED = 1 << 3,  /* bound to a scheduled task */
        PROT_WORKTREE = 1 << 4,   /* live git worktree */
        PROT_LATEST = 1 << 5,     /* among the newest keep-latest of its project */
        PROT_MIN_AGE = 1 << 6,    /* younger than min-age */
        PROT_UNVERIFIED = 1 << 7, /* ownership not proven */
        PROT_FOREIGN = 1 << 8,    /* belongs to another project */
        PROT_CONFLICT = 1 << 9,   /* active and archived copies both exist */
        PROT_BLAST = 1 << 10,     /* blast-radius limit reached (use --force) */
        PROT_PROTECT = 1 << 11,   /* its project has protect = true: no rule touches it */
        _PROT_MAX = 12,
} Protection;

typedef struct Verdict {
        Verb verb;
        const char *rule;     /* static: "max-age", "max-sessions", "max-size", "tree-max-size",
                               * "keep-free", "archive-max-age", "archive-max-size", "orphan",
                               * "compress-after",
                               * or the protection that won ("pinned", "live", ...), or "none" */
        char *reason;         /* owned: "idle 121d > max-age 90d" */
        unsigned protections; /* every protection that applies to the session */
        unsigned rank;        /* 1 = newest in its project (active sessions), 0 = n/a */
        const char *held_by;  /* static: the deletion limit that held the session back
                               * ("max-deletions", "max-deletions-percent"), else NULL */
        const char *held_rule; /* static: the rule whose deletion was held back, else NULL */
        int mark;             /* ORPHAN_STALE_PROJECT (hygiene.h): 1 write its marker, -1 remove
                               * it, 0 neither */
        int compress_level;    /* VERB_COMPRESS: the zstd level (compress-level) */
} Verdict;

typedef struct Verdicts {
        Verdict *sessions; /* parallel to inv->sessions */
        size_t n_sessions;
        Verdict *orphans;  /* parallel to inv->orphans */
        size_t n_orphans;
} Verdicts;

typedef struct PolicyOptions {
        bool force; /* ignore the blast-radius limit */
        msec_t real_now; /* the real clock, for min-idle and orphan graces (0: the same as now).
                          * `now` may be a forecast (--now); liveness never is. */
} PolicyOptions;

int policy_evaluate(const Inventory *inv, const Config *cfg, msec_t now, const PolicyOptions *opts,
                    Verdicts **ret);
/* What the scan must read for policy_evaluate() to decide exactly as with every title read:
 * all when json (the plan lists every title) or when any policy with keep-titled has a count or
 * size rule (max-sessions, max-size, archive-max-size) or a tree cap is set; else the smallest
 * max-age (active) and archive-max-age (archived) among policies with keep-titled. */
void policy_title_need(const Config *cfg, bool json, TitleNeed *ret);
Verdicts *verdicts_free(Verdicts *v);
static inline void verdicts_freep(Verdicts **p) {
        verdicts_free(*p);
}

const char *verb_to_string(Verb v); /* "keep", "archive", "delete", "skip", "compress" */
const char *protection_to_string(Protection p); /* "live", "pinned", ... (one bit) */
