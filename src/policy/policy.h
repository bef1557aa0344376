/* policy.h: pure retention decisions. Inventory + Config + now -> one Verdict per session and
 * per orphan: structured (rule, Measure, blocked_by, held_by), never prose; reason.h renders
 * the text. No I/O, no clock. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

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
        PROT_RESTORED = 1 << 12,  /* restored (qgc restore) within restore-grace */
        _PROT_MAX = 13,
} Protection;

/* What a rule (or a protection) measured, in which unit, against which limit. */
typedef enum MeasureKind {
        MEASURE_NONE,  /* nothing measured */
        MEASURE_AGE,   /* milliseconds: idle, age, time since the last write */
        MEASURE_BYTES, /* a project's, an archive's or a tree's total, or free space */
        MEASURE_COUNT, /* sessions */
        MEASURE_RANK,  /* 1 = the newest active session of its project */
        _MEASURE_KIND_MAX,
        _MEASURE_KIND_INVALID = -22,
} MeasureKind;

typedef struct Measure {
        int64_t measured; /* ms, bytes (below 2^63), a count or a rank */
        int64_t limit;    /* the key's value (keep-free: in bytes); MSEC_INFINITY: an age key
                           * that is off */
        const char *key;  /* static: the policy key of the limit ("max-age", "keep-free", ...) */
        MeasureKind kind;
} Measure;

/* Verdict.flags: which form a protection's outcome takes. */
typedef enum VerdictFlags {
        VERDICT_RECENT_WRITE = 1 << 0, /* PROT_LIVE includes a write within min-idle */
        VERDICT_TITLE_UNREAD = 1 << 1, /* PROT_UNVERIFIED: the title of a selected session was
                                        * not read (the scan judged no rule could select it) */
        VERDICT_TASKS_HELD = 1 << 2,   /* PROT_SCHEDULED: a deletion of a session bound to
                                        * scheduled tasks, kept whatever keep-scheduled says */
} VerdictFlags;

/* Why a stale project entry is kept or goes (VerdictFacts.stale_why); reason.c words them. */
typedef enum StaleWhy {
        STALE_WHY_NONE,
        STALE_WHY_HELD,         /* some of its sessions held back by the deletion limits */
        STALE_WHY_OFF,          /* stale-project-min-age off */
        STALE_WHY_PROTECTED,    /* its project has protect = true */
        STALE_WHY_BACK,         /* a recorded cwd exists again: no longer stale */
        STALE_WHY_KEPT,         /* the scan's reason (Orphan.stale_why) */
        STALE_WHY_TITLE_UNREAD, /* a session's title was not read */
        STALE_WHY_SHARED,       /* a session's delete would be refused its shared-file edit */
        STALE_WHY_KEPT_BY,      /* a protected session, or one bound to a scheduled task */
        STALE_WHY_YOUNG,        /* a file written within stale-project-min-age */
        STALE_WHY_MARK,         /* not marked yet: the mark is written */
        STALE_WHY_MARKED,       /* marked within stale-project-min-age */
        STALE_WHY_DELETE,       /* marked longer ago: the entry and its sessions go */
        STALE_WHY_MEMBER,       /* a session of an entry that goes */
} StaleWhy;

/* What a verdict quotes beyond its rule's measure. Only a verdict that needs them has them
 * (Verdict.facts): 100k verdicts stay small. */
typedef struct VerdictFacts {
        msec_t age;           /* PROT_MIN_AGE: its age (now - first record) ... */
        msec_t min_age;       /* ... and min-age */
        msec_t since_write;   /* VERDICT_RECENT_WRITE: real now - its last write (< 0: in the
                               * future) ... */
        msec_t min_idle;      /* ... and min-idle */
        uint64_t keep_latest; /* PROT_LATEST: the keep-latest its rank is within */
        msec_t restored_ago;  /* PROT_RESTORED: now - the restore's start (session-times.h) ... */
        msec_t restore_grace; /* ... and restore-grace */
        Measure held;         /* held_by (MEASURE_COUNT): the deletions its limit had allowed
                               * before this one, and max-deletions' limit, or for
                               * max-deletions-percent the number of the project's sessions */
        double held_percent;  /* held_by max-deletions-percent */
        bool held_project;    /* held_by max-deletions: the project's own limit, not the run's */
        int64_t target;       /* a tree-max-size measure: the total it shrinks to */
        double percent;       /* a keep-free measure given in percent of the filesystem, else 0 */
        /* the policy's scratch: the archive (compression) a deletion replaced, for the blast
         * radius to fall back to */
        const char *fallback_rule; /* NULL: none */
        Verb fallback_verb;
        Measure fallback;
        /* a stale project entry's verdict (upstream PR #9110), on the entry and, when it goes,
         * on each of its sessions; pointers into the same Inventory and Verdicts */
        const Orphan *stale;   /* the entry, NULL: not a stale entry's verdict */
        StaleWhy stale_why;
        size_t stale_n;        /* its sessions (STALE_WHY_DELETE), or those held back (STALE_WHY_HELD) */
        msec_t stale_age;      /* since its newest write (STALE_WHY_YOUNG), or its mark's */
        msec_t stale_limit;    /* stale-project-min-age */
        Protection stale_prot; /* STALE_WHY_KEPT_BY: the session's protection, 0: a scheduled task */
        const Session *quote_session; /* the session that keeps it (STALE_WHY_TITLE_UNREAD ..) */
        const struct Verdict *quote;  /* ... its verdict, when skipped: its reason is quoted */
        /* rarely set, so here and not in every Verdict (policy_verdict_held_by() etc. read them) */
        const char *held_by;   /* static: the deletion limit that held the session back
                                * ("max-deletions", "max-deletions-percent"), else NULL */
        const char *held_rule; /* static: the rule whose deletion was held back, else NULL */
        const char *fact;      /* static: a whole reason set outside the policy's rules (the
                                * journal's "qgc restore"), else NULL */
} VerdictFacts;

/* A decision and the facts it was made from; no prose. The reason text is rendered from these
 * (and the session's or orphan's own facts) by reason.h, at the edge: the plan's renderings and
 * the journal. */
typedef struct Verdict {
        const char *rule;     /* static: "max-age", "max-sessions", "max-size", "tree-max-size",
                               * "keep-free", "archive-max-age", "archive-max-size", "orphan",
                               * "compress-after", "limit",
                               * or the protection that won ("pinned", "live", ...), or "none" */
        const char *blocked_rule; /* static: the rule blocked_by blocked, else NULL */
        Measure measure;      /* what the deciding rule measured: of `rule` when it acts, of
                               * blocked_rule when a protection won, of held_rule when the
                               * deletion limits skip it; rule "none": idle vs max-age (or
                               * nothing) */
        VerdictFacts *facts;  /* owned; NULL when it quotes nothing beyond its measure (and has
                               * no held_by, held_rule or fact: policy_verdict_held_by() etc.) */
        /* the small fields in two words (100k verdicts live at once; a bit-field never
         * straddles its 32-bit unit, so the first word is verb .. compress_level, the second
         * blocked_by and rank) */
        unsigned verb : 4;    /* Verb (unsigned: _VERB_INVALID is never stored) */
        unsigned blocked_verb : 4; /* Verb: what blocked_by blocked, the verb a rule selected;
                                    * VERB_KEEP when no rule selected it */
        unsigned protections : _PROT_MAX; /* every protection that applies to the session */
        unsigned flags : 3;   /* VerdictFlags */
        signed mark : 2;       /* ORPHAN_STALE_PROJECT (hygiene.h): 1 write its marker, -1 remove
                               * it, 0 neither */
        unsigned compress_level : 5; /* VERB_COMPRESS: the zstd level (compress-level, 1..19) */
        Protection blocked_by : _PROT_MAX; /* the protection that won (and names `rule`), 0
                                            * when none did */
        unsigned rank : 19;   /* 1 = newest in its project (active sessions), 0 = n/a; at most
                               * VERDICT_RANK_MAX (policy_evaluate() fails beyond) */
} Verdict;

/* 100k sessions' verdicts live at once: issue 14's peak-RSS target (64 MiB at 100k sessions)
 * needs them this small. Rarely set fields go to VerdictFacts. */
_Static_assert(sizeof(Verdict) <= 64, "Verdict must stay small (issue 14's RSS target)");
#define VERDICT_RANK_MAX ((1U << 19) - 1)
#define VERDICT_COMPRESS_LEVEL_MAX 31U

static inline const char *policy_verdict_held_by(const Verdict *v) {
        return v->facts ? v->facts->held_by : NULL;
}
static inline const char *policy_verdict_held_rule(const Verdict *v) {
        return v->facts ? v->facts->held_rule : NULL;
}
static inline const char *policy_verdict_fact(const Verdict *v) {
        return v->facts ? v->facts->fact : NULL;
}

/* What keeps a cap unmet after the plan: the sessions a protection (prot) or a deletion limit
 * (limit, "max-deletions" or "max-deletions-percent") kept although the cap selected them, or
 * (both unset) the tree's orphans that stay. */
typedef struct CapHolder {
        Protection prot;
        const char *limit; /* static */
        uint64_t n, bytes;
} CapHolder;

#define CAP_HOLDERS_MAX 16

/* A cap the plan leaves unmet (policy_evaluate(), after the deletion limits): a tree's max-size
 * or keep-free, a project's max-size or max-sessions. Facts only: reason.c renders them. */
typedef struct CapUnmet {
        const char *cap;     /* static: "tree-max-size", "keep-free", "max-size", "max-sessions" */
        size_t tree;
        const char *project; /* a project cap's cwd (the inventory's), else NULL */
        uint64_t after;      /* after the plan: the bytes it counts (keep-free: the free
                              * bytes), or the sessions (max-sessions) */
        uint64_t limit;
        double percent;      /* keep-free given in percent, else 0 */
        CapHolder held[CAP_HOLDERS_MAX];
        size_t n_held;
} CapUnmet;

typedef struct Verdicts {
        Verdict *sessions; /* parallel to inv->sessions */
        size_t n_sessions;
        Verdict *orphans;  /* parallel to inv->orphans */
        size_t n_orphans;
        CapUnmet *caps;    /* the caps the plan leaves unmet, trees first */
        size_t n_caps;
} Verdicts;

/* What tree max-size compares for a tree (policy_tree()): every session of the tree in any
 * state (active, archived, compressed; transcripts with their sidecars, file-history/<id> and
 * subagents/<id>; a compressed one its .zst files) and every orphan the scan listed there,
 * allocated or apparent bytes (tree.count). */
typedef struct TreeCounted {
        uint64_t session_bytes, orphan_bytes;
        size_t n_sessions, n_orphans;
} TreeCounted;
/* The total for tree t of inv, its parts in *ret (may be NULL). Pure. */
uint64_t policy_tree_counted(const Inventory *inv, size_t t, bool allocated, TreeCounted *ret);

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
/* May a rule with the age limit `limit` (max-age, archive-max-age, compress-after; <= 0 or
 * MSEC_INFINITY: off) select a session idle for `idle`? Cutoffs are strict: idle == limit
 * stays. The one test of every age rule, and the scan's (scan_want_title()). */
bool policy_age_selects(msec_t limit, msec_t idle);
/* Verdict.rule of a delete planned as a skip because its edit of a file Qwen shares would be
 * refused (Session.logs_state, Session.org_unreadable; erase.h), or of an archive because its
 * sidecar merge would be (Session.merge_too_big): the run would skip it. */
extern const char policy_rule_limit[];
/* Would a delete of s be refused its edit of the files Qwen shares? */
static inline bool policy_shared_refused(const Session *s) {
        return s->logs_state != SHARED_OK || s->org_unreadable;
}

Verdicts *policy_verdicts_free(Verdicts *v);
static inline void policy_verdicts_freep(Verdicts **p) {
        policy_verdicts_free(*p);
}

const char *policy_verb_to_string(Verb v); /* "keep", "archive", "delete", "skip", "compress" */
const char *policy_protection_to_string(Protection p); /* "live", "pinned", ... (one bit) */
/* The limit p sets for orphan kind k (MSEC_INFINITY: off) and, in *ret_key, the key's name:
 * each hygiene kind has its own key (hygiene.h), the others orphan-min-age. */
msec_t policy_hygiene_limit(const Policy *p, OrphanKind k, const char **ret_key);
