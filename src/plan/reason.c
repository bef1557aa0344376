/* reason.c: the reason texts, rendered at the edge (the text and JSON plans, the journal) from
 * the structured outcomes: a Verdict's rule, measure, blocked_by, held_by and flags, the
 * OwnerCause of the ownership check, and the facts of the session or orphan they quote (its
 * live_reason, pins, scheduled tasks, state). The policy and the ownership check produce no
 * prose, and nothing decides from these texts.
 *
 *   selected      "idle 121d > max-age 90d"                       (rule, measure)
 *   kept          "idle 3d <= max-age 90d", "archived", "no rule applies"
 *   protected     "kept: pinned (a rule would select it: archive for idle 121d > max-age 90d)"
 *                 (blocked_by, blocked_verb, blocked_rule, measure); a skip-class protection
 *                 the same: "kept: in use: ... (a rule would select it: delete for ...)"
 *   skipped       "in use: runtime claim pid 42 alive", "unverified: empty transcript"
 *   held back     "held back by max-deletions (5 per run; use --force); would delete: ..."; a
 *                 fallback archive carries the clause on the deletion it replaced only:
 *                 "idle 121d > max-age 90d; its tree-max-size deletion held back by ..."
 *   cap unmet     "tree cap not met: 336K > max-size 200K after the plan; held by keep-latest
 *                 3 sessions (120K), in use 1 (16K)"                  (CapUnmet)
 *   stale entry   "stale project entry (cwd /tmp/x gone), marked 2d ago > 1d; ..."
 *                 (VerdictFacts.stale); one kept by a skipped session quotes its reason
 *
 * Pure: no I/O, no clock. */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "macro.h"
#include "reason.h"
#include "store.h"
#include "util.h"

/* What a verdict without facts quotes: zeros. */
static const VerdictFacts no_facts;

char *reason_format_limit(char *buf, size_t n, uint64_t bytes) {
        static const char suffixes[] = "TGMK";
        for (unsigned i = 0; i < 4; i++) {
                uint64_t f = UINT64_C(1) << (10 * (4 - i));
                if (bytes >= f && bytes % f == 0) {
                        snprintf(buf, n, "%" PRIu64 "%c", bytes / f, suffixes[i]);
                        return buf;
                }
        }
        return util_format_bytes(buf, n, bytes);
}

/* How each rule's measure reads. */
typedef enum ReasonForm {
        FORM_IDLE,         /* "idle A > KEY B" */
        FORM_ARCHIVED_IDLE, /* "archived, idle A > KEY B" */
        FORM_IN_ARCHIVE,    /* "archived A ago > KEY B" (the time in the archive) */
        FORM_RANK,         /* "rank A > KEY B" */
        FORM_PROJECT,      /* "project A > KEY B" (bytes) */
        FORM_ARCHIVE,      /* "archive A > KEY B" (bytes) */
        FORM_TREE,         /* "tree A > max-size B, shrinking to C (disk caps delete)" */
        FORM_FREE,         /* "free A < keep-free B (disk caps delete)" */
} ReasonForm;

static const struct {
        const char *rule;
        ReasonForm form;
} reason_forms[] = {
        { "max-age", FORM_IDLE },
        { "max-sessions", FORM_RANK },
        { "max-size", FORM_PROJECT },
        { "archive-max-age", FORM_IN_ARCHIVE },
        { "archive-max-size", FORM_ARCHIVE },
        { "compress-after", FORM_ARCHIVED_IDLE },
        { "tree-max-size", FORM_TREE },
        { "keep-free", FORM_FREE },
};

/* What rule selected, from its measure (and the verdict's facts f, may be NULL): "idle 121d >
 * max-age 90d". */
static char *reason_rule(const char *rule, const Measure *m, const VerdictFacts *f) {
        char a[FORMAT_DURATION_MAX], b[FORMAT_DURATION_MAX], c[32];

        for (size_t k = 0; rule && k < ELEMENTSOF(reason_forms); k++) {
                if (!streq(rule, reason_forms[k].rule))
                        continue;
                switch (reason_forms[k].form) {
                case FORM_IDLE:
                        return util_strjoin(
                                "idle ", util_format_duration(a, sizeof a, m->measured), " > ",
                                rule, " ", util_format_duration_exact(b, sizeof b, m->limit), NULL);
                case FORM_ARCHIVED_IDLE:
                        return util_strprintf("archived, idle %s > %s %s",
                                              util_format_duration(a, sizeof a, m->measured), rule,
                                              util_format_duration_exact(b, sizeof b, m->limit));
                case FORM_IN_ARCHIVE:
                        return util_strprintf("archived %s ago > %s %s",
                                              util_format_duration(a, sizeof a, m->measured), rule,
                                              util_format_duration_exact(b, sizeof b, m->limit));
                case FORM_RANK:
                        return util_strprintf("rank %" PRId64 " > %s %" PRId64, m->measured, rule,
                                              m->limit);
                case FORM_PROJECT:
                case FORM_ARCHIVE:
                        return util_strprintf(
                                "%s %s > %s %s",
                                reason_forms[k].form == FORM_PROJECT ? "project" : "archive",
                                util_format_bytes(a, sizeof a, (uint64_t)m->measured), rule,
                                reason_format_limit(b, sizeof b, (uint64_t)m->limit));
                case FORM_TREE:
                        return util_strprintf(
                                "tree %s > max-size %s, shrinking to %s (disk caps "
                                "delete)",
                                util_format_bytes(a, sizeof a, (uint64_t)m->measured),
                                reason_format_limit(b, sizeof b, (uint64_t)m->limit),
                                reason_format_limit(c, sizeof c, (uint64_t)(f ? f->target : 0)));
                case FORM_FREE:
                        if (f && f->percent > 0)
                                return util_strprintf(
                                        "free %s < keep-free %g%% (%s) (disk caps "
                                        "delete)",
                                        util_format_bytes(a, sizeof a, (uint64_t)m->measured),
                                        f->percent,
                                        util_format_bytes(b, sizeof b, (uint64_t)m->limit));
                        return util_strprintf("free %s < keep-free %s (disk caps delete)",
                                              util_format_bytes(a, sizeof a, (uint64_t)m->measured),
                                              reason_format_limit(b, sizeof b, (uint64_t)m->limit));
                }
        }
        return strdup(rule ?: ""); /* a rule without a measure: its name */
}

int reason_owner(const Session *s, char **ret) {
        const char *d = s->owner_detail, *dir = s->owner_dir;
        char *r = NULL;

        switch (s->owner_cause) {
        case OWNER_CAUSE_UNREADABLE:
                r = strdup(d ?: "unreadable");
                break;
        case OWNER_CAUSE_NO_SESSION_ID:
                r = strdup("first record has no sessionId");
                break;
        case OWNER_CAUSE_ID_MISMATCH:
                r = util_strprintf("first record's sessionId '%.64s' differs from the file name",
                                   d ?: "");
                break;
        case OWNER_CAUSE_NO_CWD:
                r = strdup("first record has no cwd");
                break;
        case OWNER_CAUSE_CWD:
                r = strdup("cwd matches the project directory");
                break;
        case OWNER_CAUSE_WORKTREE:
                r = util_strprintf("worktree of '%s'", dir ?: "");
                break;
        case OWNER_CAUSE_CLAIM:
                r = util_strprintf("runtime claim '%s' (work_dir '%s')", d ?: "", dir ?: "");
                break;
        case OWNER_CAUSE_FOREIGN:
                r = util_strprintf("cwd '%s' belongs to project directory '%s'", s->cwd ?: "",
                                   dir ?: "");
                break;
        default:
                *ret = NULL;
                return 0;
        }
        if (!r)
                return -ENOMEM;
        *ret = r;
        return 0;
}

/* Why a skip-class protection (v->blocked_by) holds the session. */
static char *reason_skip(const Verdict *v, const Session *s, const StoreOps *store) {
        const VerdictFacts *f = v->facts ?: &no_facts;
        char a[FORMAT_DURATION_MAX], b[FORMAT_DURATION_MAX], flags[64];
        _cleanup_free_ char *owner = NULL;
        unsigned live;

        switch (v->blocked_by) {
        case PROT_UNVERIFIED:
                if (reason_owner(s, &owner) < 0)
                        return NULL;
                return util_strprintf("unverified: %s", owner ?: "ownership not proven");
        case PROT_FOREIGN:
                if (reason_owner(s, &owner) < 0)
                        return NULL;
                if (owner)
                        return util_strprintf("foreign: %s", owner);
                return util_strprintf("foreign: cwd %s does not belong to projects/%s",
                                      s->cwd ?: "(null)", s->project_dir ?: "?");
        case PROT_CONFLICT:
                return strdup(store && store->conflict_what ? store->conflict_what
                                                            : "in both its place and the archive");
        case PROT_LIVE:
                live = s->live | (v->flags & VERDICT_RECENT_WRITE ? (unsigned)LIVE_RECENT : 0);
                if (live & ~(unsigned)LIVE_RECENT)
                        return util_strprintf("in use: %s",
                                              s->live_reason
                                                      ?: inventory_live_flags_to_string(
                                                                 flags, sizeof flags, live));
                if (f->since_write < 0)
                        return util_strprintf("in use: written %s in the future",
                                              util_format_duration(a, sizeof a, -f->since_write));
                return util_strprintf("in use: written %s ago < min-idle %s",
                                      util_format_duration(a, sizeof a, f->since_write),
                                      util_format_duration_exact(b, sizeof b, f->min_idle));
        default:
                return strdup(policy_protection_to_string(v->blocked_by) ?: "");
        }
}

/* Every keep-class protection of the session, in the order of their bits. */
static char *reason_keep(const Verdict *v, const Session *s) {
        const VerdictFacts *f = v->facts ?: &no_facts;
        char a[FORMAT_DURATION_MAX], b[FORMAT_DURATION_MAX];
        _cleanup_(strbuf_done) StrBuf sb = {};
        int r = 0;

        if (v->protections & PROT_PROTECT)
                r |= strbuf_printf(&sb, "%sprotected project (protect = true)", sb.len ? ", " : "");
        if (v->protections & PROT_RESTORED)
                r |= strbuf_printf(&sb, "%srestored %s ago (restore-grace %s)", sb.len ? ", " : "",
                                   util_format_duration(a, sizeof a, f->restored_ago),
                                   util_format_duration_exact(b, sizeof b, f->restore_grace));
        if (v->protections & PROT_MIN_AGE)
                r |= strbuf_printf(&sb, "%sage %s < min-age %s", sb.len ? ", " : "",
                                   util_format_duration(a, sizeof a, f->age),
                                   util_format_duration_exact(b, sizeof b, f->min_age));
        if (v->protections & PROT_PINNED)
                r |= strbuf_printf(&sb, "%s%s", sb.len ? ", " : "",
                                   s->pinned    ? "pinned"
                                   : s->grouped ? "grouped"
                                                : "pins unknown (session-organization.v1.json "
                                                  "unreadable)");
        if (v->protections & PROT_TITLED)
                r |= strbuf_printf(&sb, "%stitled by a person", sb.len ? ", " : "");
        if (v->protections & PROT_SCHEDULED)
                r |= strbuf_printf(&sb, "%sbound to %u scheduled task%s", sb.len ? ", " : "",
                                   s->n_tasks, s->n_tasks == 1 ? "" : "s");
        if (v->protections & PROT_WORKTREE)
                r |= strbuf_printf(&sb, "%slive worktree", sb.len ? ", " : "");
        if (v->protections & PROT_LATEST) /* named first: the project's newest are kept */
                r |= strbuf_printf(&sb, "%skeep-latest %" PRIu64 " (rank %u, newest first)",
                                   sb.len ? ", " : "", f->keep_latest, (unsigned)v->rank);
        if (r < 0)
                return NULL;
        return strbuf_steal(&sb);
}

/* A protection won (v->blocked_by): what it is, and what it blocked. The session stays, so the
 * text says "kept" and puts the rule's verb in the conditional ("a rule would select it"). */
static char *reason_blocked(const Verdict *v, const Session *s, const StoreOps *store) {
        _cleanup_free_ char *sel = NULL, *head = NULL;
        const char *would = policy_verb_to_string(v->blocked_verb);

        if (v->blocked_verb != VERB_KEEP) {
                sel = reason_rule(v->blocked_rule, &v->measure, v->facts);
                if (!sel)
                        return NULL;
        }
        if (v->flags & VERDICT_TITLE_UNREAD)
                head = strdup("unverified: title not read");
        else if (v->flags & VERDICT_TASKS_HELD)
                head = util_strprintf("bound to %u scheduled task%s, which qgc does not remove",
                                      s->n_tasks, s->n_tasks == 1 ? "" : "s");
        else
                head = v->verb == VERB_SKIP ? reason_skip(v, s, store) : reason_keep(v, s);
        if (!head || !sel)
                return TAKE_PTR(head);
        return util_strjoin("kept: ", head, " (a rule would select it: ", would, " for ", sel, ")",
                            NULL);
}

#define REASON_CWD_MAX 248 /* the bytes of a stale entry's first cwd that its reasons quote */

/* A stale project entry's reason (VerdictFacts.stale), on the entry or one of its sessions. */
static char *reason_stale(const Verdict *v, const StoreOps *store) {
        static const char key[] = "stale-project-min-age";
        const VerdictFacts *f = v->facts;
        const Orphan *o = f->stale;
        const char *c = o->cwds ?: "", *id = f->quote_session ? f->quote_session->id : "";
        const char *what = f->stale_prot ? policy_protection_to_string(f->stale_prot)
                                         : "bound to a scheduled task";
        size_t len = strcspn(c, "\n");
        char a[FORMAT_DURATION_MAX], b[FORMAT_DURATION_MAX];
        _cleanup_free_ char *cwd = util_strprintf("%.*s%s", (int)MIN(len, (size_t)REASON_CWD_MAX),
                                                  c, c[len] && c[len + 1] ? ", ..." : "");
        _cleanup_free_ char *q = NULL;

        if (!cwd)
                return NULL;
        util_format_duration(a, sizeof a, f->stale_age);
        util_format_duration_exact(b, sizeof b, f->stale_limit);
        switch (f->stale_why) {
        case STALE_WHY_HELD:
                return util_strprintf("stale project entry, %zu of its sessions held back by the "
                                      "deletion limits: it goes in a later run",
                                      f->stale_n);
        case STALE_WHY_OFF:
                return util_strprintf("stale project entry (%s off)", key);
        case STALE_WHY_PROTECTED:
                return strdup("stale project entry, protected project (protect = true)");
        case STALE_WHY_BACK:
                return util_strprintf("project entry, no longer stale: %s%s",
                                      o->stale_why ?: "a recorded cwd exists",
                                      v->mark ? "; would remove its mark" : "");
        case STALE_WHY_KEPT:
                return util_strprintf("stale project entry (cwd %s gone), kept: %s", cwd,
                                      o->stale_why);
        case STALE_WHY_TITLE_UNREAD:
                return util_strprintf(
                        "stale project entry (cwd %s gone), kept: session %.8s: title "
                        "not read",
                        cwd, id);
        case STALE_WHY_SHARED:
                return util_strprintf(
                        "stale project entry (cwd %s gone), kept: session %.8s: a file "
                        "Qwen shares that qgc does not edit (limit)",
                        cwd, id);
        case STALE_WHY_KEPT_BY:
                if (!f->quote)
                        return util_strprintf("stale project entry (cwd %s gone), kept by session "
                                              "%.8s (%s)",
                                              cwd, id, what);
                /* "... (live: in use: runtime claim pid 4242 alive)" */
                q = reason_verdict(f->quote, f->quote_session, store);
                return q ? util_strprintf("stale project entry (cwd %s gone), kept by session %.8s "
                                          "(%s: %s)",
                                          cwd, id, what, q)
                         : NULL;
        case STALE_WHY_YOUNG:
                return util_strprintf("stale project entry (cwd %s gone), a file written %s ago <= "
                                      "%s %s",
                                      cwd, a, key, b);
        case STALE_WHY_MARK:
                return util_strprintf("stale project entry (cwd %s gone): would mark it; it goes "
                                      "once the mark is older than %s %s",
                                      cwd, key, b);
        case STALE_WHY_MARKED:
                return util_strprintf("stale project entry (cwd %s gone), marked %s ago <= %s %s",
                                      cwd, a, key, b);
        case STALE_WHY_DELETE:
                if (f->stale_n == 0)
                        return util_strprintf(
                                "stale project entry (cwd %s gone, no session), marked "
                                "%s ago > %s",
                                cwd, a, b);
                return util_strprintf(
                        "stale project entry (cwd %s gone), marked %s ago > %s; its %zu "
                        "session%s deleted first",
                        cwd, a, b, f->stale_n, f->stale_n == 1 ? "" : "s");
        case STALE_WHY_MEMBER:
                return util_strprintf("stale project entry: cwd %s gone, marked %s ago > %s %s",
                                      cwd, a, key, b);
        default:
                return strdup("stale project entry");
        }
}

/* Held back by a deletion limit: skipped, or the archive (compression) it falls back to. */
static char *reason_held(const Verdict *v, const StoreOps *store) {
        const VerdictFacts *f = v->facts ?: &no_facts;
        _cleanup_free_ char *inner = NULL;
        char limit[96];

        if (streq(policy_verdict_held_by(v), "max-deletions-percent"))
                snprintf(limit, sizeof limit, "%g%% of the project's %" PRIu64 " sessions per run",
                         f->held_percent, (uint64_t)f->held.limit);
        else
                snprintf(limit, sizeof limit, "%" PRIu64 " per run%s", (uint64_t)f->held.limit,
                         f->held_project ? " in this project" : "");
        if (v->verb != VERB_SKIP) {
                /* the archive (compression) was not held back: the deletion it replaces was */
                inner = reason_rule(v->rule, &v->measure, v->facts);
                return inner ? util_strprintf(
                                       "%s; its %s deletion held back by %s (%s; use --force)",
                                       inner, policy_verdict_held_rule(v) ?: "",
                                       policy_verdict_held_by(v), limit)
                             : NULL;
        }
        inner = policy_verdict_fact(v) ? strdup(policy_verdict_fact(v))
                : f->stale      ? reason_stale(v, store)
                                : reason_rule(policy_verdict_held_rule(v), &v->measure, v->facts);
        return inner ? util_strprintf("held back by %s (%s; use --force); would delete: %s",
                                      policy_verdict_held_by(v), limit, inner)
                     : NULL;
}

/* A session action the run would skip: a limit of the store's own files would refuse it
 * (policy.h: policy_rule_limit), in the store's words (StoreOps.limit_reason). */
static char *reason_limit(const Verdict *v, const Session *s, const StoreOps *store) {
        _cleanup_free_ char *sel = reason_rule(v->blocked_rule, &v->measure, v->facts);

        if (!sel)
                return NULL;
        if (store && store->limit_reason)
                return store->limit_reason(s, v->blocked_verb == VERB_ARCHIVE, sel);
        return util_strprintf("a file of the store's is over what qgc edits (limit) (would %s: %s)",
                              policy_verb_to_string(v->blocked_verb), sel);
}

char *reason_verdict(const Verdict *v, const Session *s, const StoreOps *store) {
        char a[FORMAT_DURATION_MAX], b[FORMAT_DURATION_MAX];

        if (v->verb == VERB_SKIP && v->rule && streq(v->rule, policy_rule_limit))
                return reason_limit(v, s, store);

        if ((v->protections & PROT_BLAST) && policy_verdict_held_by(v))
                return reason_held(v, store);
        if (policy_verdict_fact(v))
                return strdup(policy_verdict_fact(v));
        if (v->facts && v->facts->stale)
                return reason_stale(v, store);
        if (v->blocked_by)
                return reason_blocked(v, s, store);
        if (v->verb != VERB_KEEP)
                return reason_rule(v->rule, &v->measure, v->facts);
        if (inventory_session_is_cold(s))
                return strdup("archived, compressed");
        if (s->state == SESSION_ARCHIVED)
                return strdup("archived");
        if (v->measure.kind == MEASURE_AGE)
                return util_strjoin("idle ", util_format_duration(a, sizeof a, v->measure.measured),
                                    " <= max-age ",
                                    util_format_duration_exact(b, sizeof b, v->measure.limit),
                                    NULL);
        return strdup("no rule applies");
}

char *reason_orphan(const Verdict *v, const Orphan *o, const StoreOps *store) {
        char a[FORMAT_DURATION_MAX], b[FORMAT_DURATION_MAX];
        const char *what = store && store->orphan_what ? store->orphan_what(o->kind) : "orphan";
        const Measure *m = &v->measure;

        if (v->facts && v->facts->stale)
                return reason_stale(v, store);
        if (policy_verdict_fact(v))
                return strdup(policy_verdict_fact(v));
        if (v->blocked_by == PROT_PROTECT)
                return util_strprintf("%s, protected project (protect = true)", what);
        if (v->verb == VERB_DELETE)
                return util_strprintf("%s, idle %s > %s", what,
                                      util_format_duration(a, sizeof a, m->measured),
                                      util_format_duration_exact(b, sizeof b, m->limit));
        if (m->limit != MSEC_INFINITY)
                return util_strprintf("%s, idle %s <= %s %s", what,
                                      util_format_duration(a, sizeof a, m->measured), m->key ?: "",
                                      util_format_duration_exact(b, sizeof b, m->limit));
        if (!m->key)
                return strdup(what); /* a kind only reported */
        return util_strprintf("%s (%s off)", what, m->key);
}

/* A holder's name: the protection as the plan's reasons say it ("in use" for live), the
 * deletion limit, or the orphans that stay. */
static const char *cap_holder_name(const CapHolder *h) {
        if (h->limit)
                return h->limit;
        if (h->prot == PROT_LIVE)
                return "in use";
        if (h->prot == PROT_BLAST)
                return "max-deletions";
        return h->prot ? policy_protection_to_string(h->prot) ?: "protected" : "orphans";
}

char *reason_cap_unmet(const CapUnmet *c, const char *tree_dir) {
        _cleanup_(strbuf_done) StrBuf sb = {};
        char a[FORMAT_BYTES_MAX], b[FORMAT_BYTES_MAX];
        bool tree_cap = !c->project;
        int r;

        r = strbuf_printf(&sb, "%s cap not met", tree_cap ? "tree" : "project");
        if (r >= 0 && tree_cap && tree_dir)
                r = strbuf_printf(&sb, " in %s", tree_dir);
        if (r >= 0 && !tree_cap)
                r = strbuf_printf(&sb, " in %s", c->project);
        if (r < 0)
                return NULL;
        if (streq(c->cap, "keep-free") && c->percent > 0)
                r = strbuf_printf(&sb, ": free %s < keep-free %g%% (%s)",
                                  util_format_bytes(a, sizeof a, c->after), c->percent,
                                  util_format_bytes(b, sizeof b, c->limit));
        else if (streq(c->cap, "keep-free"))
                r = strbuf_printf(&sb, ": free %s < keep-free %s",
                                  util_format_bytes(a, sizeof a, c->after),
                                  reason_format_limit(b, sizeof b, c->limit));
        else if (streq(c->cap, "max-sessions"))
                r = strbuf_printf(&sb, ": %" PRIu64 " active sessions > max-sessions %" PRIu64,
                                  c->after, c->limit);
        else
                r = strbuf_printf(&sb, ": %s%s > max-size %s", tree_cap ? "" : "active ",
                                  util_format_bytes(a, sizeof a, c->after),
                                  reason_format_limit(b, sizeof b, c->limit));
        if (r >= 0)
                r = strbuf_printf(&sb, " after the plan");
        for (size_t k = 0; r >= 0 && k < c->n_held; k++)
                r = strbuf_printf(&sb, "%s%s %" PRIu64 "%s (%s)", k == 0 ? "; held by " : ", ",
                                  cap_holder_name(&c->held[k]), c->held[k].n,
                                  k > 0 || (!c->held[k].prot && !c->held[k].limit) ? ""
                                  : c->held[k].n == 1                              ? " session"
                                                                                   : " sessions",
                                  util_format_bytes(a, sizeof a, c->held[k].bytes));
        if (r < 0)
                return NULL;
        return strbuf_steal(&sb);
}
