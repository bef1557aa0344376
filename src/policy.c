/* policy.c: pure retention decisions. Inventory + Config + now -> one Verdict per session and
 * per orphan. No I/O and no clock: `now` is passed in.
 *
 * Evaluation order:
 *   1. Protections of every session (all applicable bits are recorded):
 *      skip-class  unverified, foreign, conflict, live (registry/claim/lock/unknown, or a write
 *                  within min-idle) -> the session is SKIP whatever the rules say;
 *      keep-class  min-age, pinned/grouped, titled by a person, scheduled task, live worktree,
 *                  newest keep-latest of its project -> KEEP when a rule selected it.
 *      Age for min-age is now - first_record; when the first record's time is unknown the
 *      newest transcript mtime stands in, which can only make a session look younger (safe).
 *   2. Project rules on the ACTIVE sessions of each project (tree, cwd), with the project's
 *      effective policy (config_policy_for): max-age, max-sessions (rank by last_activity,
 *      newest = 1), max-size (oldest first until the active total is at or below the cap).
 *      Every selected session gets the project's `action`. Cutoffs are strict: idle == max-age,
 *      a count == limit and a total == cap all stay.
 *   3. Archive tier on ARCHIVED sessions, compressed ones (cold.h) included: archive-max-age
 *      and archive-max-size delete; then compress-after compresses an archived session that is
 *      not compressed yet (a deletion wins; held back by the blast radius it falls back to the
 *      compression).
 *   4. Orphans: idle (now - mtime) > orphan-min-age deletes; MSEC_INFINITY ("off") never.
 *   5. Disk caps per tree (tree max-size with its low watermark, keep-free). Archiving is a
 *      rename on the same filesystem and frees nothing, so DISK CAPS ALWAYS DELETE, whatever
 *      the project's action, oldest first across the whole tree (active and archived alike),
 *      and their reasons say so. The tree total counts every session (any state or owner) and
 *      every orphan; only unprotected deletions reduce the projection. keep-free counts
 *      allocated bytes (that is what frees disk space); tree max-size counts allocated or
 *      apparent bytes per tree.count-allocated.
 *   6. A protected session a rule selected is KEEP (or SKIP) with a reason naming the
 *      protection and what it blocked: "pinned (would archive: idle 121d > max-age 90d)".
 *      A protected session does not count as freed, so size walks continue to the next one.
 *   7. Blast radius: deletions are allowed oldest first; past max-deletions for the run
 *      (defaults), the project's own max-deletions, or max-deletions-percent of the project's
 *      sessions, the newest excess becomes SKIP with PROT_BLAST, unless opts->force. A session
 *      that a project rule archives and a disk cap upgraded to a deletion falls back to the
 *      archive instead. Orphan reclaims do not count: they are leftovers, not sessions. */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hygiene.h"
#include "macro.h"
#include "policy.h"
#include "qwen.h"

#define PROT_SKIP_MASK (PROT_UNVERIFIED | PROT_FOREIGN | PROT_CONFLICT | PROT_LIVE)
#define PROT_KEEP_MASK                                                                             \
        (PROT_PROTECT | PROT_MIN_AGE | PROT_PINNED | PROT_TITLED | PROT_SCHEDULED | PROT_WORKTREE | \
         PROT_LATEST)
#define PROT_BLOCK_MASK (PROT_SKIP_MASK | PROT_KEEP_MASK)

/* Per-session working state of one evaluation. */
typedef struct PolicyInfo {
        const Policy *pol;
        msec_t idle;         /* now - last_activity, never negative */
        uint64_t size;       /* bytes counted by size caps (allocated or apparent) */
        size_t group;        /* index into PolicyRun.groups, SIZE_MAX when not verified */
        Verb sel_verb;       /* what a rule selected; VERB_KEEP = nothing */
        const char *sel_rule;
        char *sel_reason;
        const char *fallback_rule; /* an archive a disk cap upgraded to a deletion */
        char *fallback_reason;
        Verb fallback_verb;        /* VERB_ARCHIVE, or VERB_COMPRESS */
        char *skip_reason;   /* for skip-class protections */
} PolicyInfo;

/* The verified sessions of one project (tree, cwd), newest first. */
typedef struct PolicyGroup {
        size_t tree;
        const char *cwd;
        const Policy *pol;
        const size_t *members;
        size_t n_members;
} PolicyGroup;

typedef struct PolicyRun {
        const Inventory *inv;
        const Config *cfg;
        msec_t now;      /* the policy's ages: --now when given */
        msec_t real_now; /* liveness graces: always the real clock */
        Verdicts *v;
        PolicyInfo *info;
        size_t *order; /* verified sessions by (tree, cwd, newest first, id) */
        size_t n_order;
        PolicyGroup *groups;
        size_t n_groups;
        /* format_duration_exact() of the last limit formatted (limits repeat per session) */
        msec_t exact_v;
        char exact_s[FORMAT_DURATION_MAX];
} PolicyRun;

/* format_duration_exact(v), remembered for the next call with the same v. */
static const char *policy_exact(PolicyRun *run, msec_t v) {
        if (!run->exact_s[0] || run->exact_v != v) {
                format_duration_exact(run->exact_s, sizeof run->exact_s, v);
                run->exact_v = v;
        }
        return run->exact_s;
}

static const char *const verb_table[_VERB_MAX] = {
        [VERB_KEEP] = "keep",
        [VERB_ARCHIVE] = "archive",
        [VERB_DELETE] = "delete",
        [VERB_SKIP] = "skip",
        [VERB_COMPRESS] = "compress",
};

const char *verb_to_string(Verb v) {
        if (v < 0 || v >= _VERB_MAX)
                return NULL;
        return verb_table[v];
}

static const char *const protection_table[_PROT_MAX] = {
        "live",     "pinned",  "titled",     "scheduled", "worktree",     "keep-latest",
        "min-age",  "unverified", "foreign", "conflict",  "blast-radius", "protect",
};

const char *protection_to_string(Protection p) {
        for (unsigned i = 0; i < _PROT_MAX; i++)
                if ((unsigned)p == 1u << i)
                        return protection_table[i];
        return NULL;
}

Verdicts *verdicts_free(Verdicts *v) {
        if (!v)
                return NULL;
        for (size_t i = 0; i < v->n_sessions; i++)
                free(v->sessions[i].reason);
        for (size_t i = 0; i < v->n_orphans; i++)
                free(v->orphans[i].reason);
        free(v->sessions);
        free(v->orphans);
        free(v);
        return NULL;
}

/* A limit as configured: "5G" rather than "5.0G" when it is a whole number of units. */
static char *policy_format_limit(char *buf, size_t n, uint64_t bytes) {
        static const char suffixes[] = "TGMK";
        for (unsigned i = 0; i < 4; i++) {
                uint64_t f = UINT64_C(1) << (10 * (4 - i));
                if (bytes >= f && bytes % f == 0) {
                        snprintf(buf, n, "%" PRIu64 "%c", bytes / f, suffixes[i]);
                        return buf;
                }
        }
        return format_bytes(buf, n, bytes);
}

static bool policy_is_verified(const Session *s) {
        return s->cwd && (s->owner == OWNER_OK || s->owner == OWNER_WORKTREE ||
                          s->owner == OWNER_CLAIM);
}

/* The last write to the session's files; the liveness grace is measured from it. */
static msec_t policy_last_write(const Session *s) {
        return s->last_write > 0 ? s->last_write : s->mtime;
}

static uint64_t policy_size(const PolicyRun *run, uint64_t bytes, uint64_t bytes_alloc) {
        return run->cfg->tree.count_allocated ? bytes_alloc : bytes;
}

/* Qwen's daemon deletes a session's bound tasks under its cron lock; qgc never edits
 * scheduled_tasks.json, so a session bound to a task is never deleted, even with keep-scheduled
 * off (which then only lets it be archived): the task would point at nothing. */
static bool policy_tasks_block(const PolicyRun *run, size_t i) {
        return run->info[i].sel_verb == VERB_DELETE && run->inv->sessions[i].n_tasks > 0;
}

/* Whether a selected session really goes (no protection blocks it). */
static bool policy_going(const PolicyRun *run, size_t i) {
        return run->info[i].sel_verb != VERB_KEEP &&
               !(run->v->sessions[i].protections & PROT_BLOCK_MASK) &&
               !policy_tasks_block(run, i);
}

static bool policy_deleting(const PolicyRun *run, size_t i) {
        return run->info[i].sel_verb == VERB_DELETE && policy_going(run, i);
}

/* Would a rule selecting session i with verb win? The first rule wins, except that a deletion
 * replaces an archive or a compression. */
static bool policy_would_select(const PolicyRun *run, size_t i, Verb verb) {
        const PolicyInfo *in = &run->info[i];
        return !(in->sel_verb == VERB_DELETE ||
                 ((in->sel_verb == VERB_ARCHIVE || in->sel_verb == VERB_COMPRESS) &&
                  verb != VERB_DELETE));
}

/* A rule selects session i with the reason s (taken; NULL means out of memory). */
static int policy_select_reason(PolicyRun *run, size_t i, Verb verb, const char *rule, char *s) {
        PolicyInfo *in = &run->info[i];

        if (!policy_would_select(run, i, verb)) {
                free(s);
                return 0;
        }
        if (!s)
                return -ENOMEM;
        if (in->sel_verb == VERB_ARCHIVE || in->sel_verb == VERB_COMPRESS) {
                /* kept so the blast radius can fall back to the archive (compression) */
                free(in->fallback_reason);
                in->fallback_reason = in->sel_reason;
                in->fallback_rule = in->sel_rule;
                in->fallback_verb = in->sel_verb;
        } else
                free(in->sel_reason);
        in->sel_reason = s;
        in->sel_verb = verb;
        in->sel_rule = rule;
        return 1;
}

/* A rule selects session i, the reason formatted. */
_printf_(5, 6) static int policy_select(PolicyRun *run, size_t i, Verb verb, const char *rule,
                                        const char *fmt, ...) {
        va_list ap;
        char *s = NULL;

        if (!policy_would_select(run, i, verb))
                return 0;
        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                s = NULL;
        va_end(ap);
        return policy_select_reason(run, i, verb, rule, s);
}

/* Skip-class protections of session i and the reason for the first of them. */
static int policy_skip_protections(PolicyRun *run, size_t i) {
        const Session *s = &run->inv->sessions[i];
        PolicyInfo *in = &run->info[i];
        Verdict *vd = &run->v->sessions[i];
        /* the real clock: --now forecasts ages, it never makes a fresh write look idle */
        msec_t since = run->real_now - policy_last_write(s);
        char a[FORMAT_DURATION_MAX], b[FORMAT_DURATION_MAX], flags[64];
        unsigned live = s->live;
        char *why = NULL;

        if (since < in->pol->min_idle)
                live |= LIVE_RECENT;
        if (s->owner == OWNER_UNVERIFIED || (!s->cwd && s->owner != OWNER_FOREIGN))
                vd->protections |= PROT_UNVERIFIED;
        if (s->owner == OWNER_FOREIGN)
                vd->protections |= PROT_FOREIGN;
        if (s->state == SESSION_CONFLICT)
                vd->protections |= PROT_CONFLICT;
        if (live)
                vd->protections |= PROT_LIVE;

        if (vd->protections & PROT_UNVERIFIED) {
                const char *r = s->owner_reason ?: "ownership not proven";
                why = strneq(r, "unverified", 10) ? strdup(r) : strprintf("unverified: %s", r);
        } else if (vd->protections & PROT_FOREIGN) {
                if (s->owner_reason)
                        why = strneq(s->owner_reason, "foreign", 7)
                                      ? strdup(s->owner_reason)
                                      : strprintf("foreign: %s", s->owner_reason);
                else
                        why = strprintf("foreign: cwd %s does not belong to projects/%s", s->cwd,
                                        s->project_dir ?: "?");
        } else if (vd->protections & PROT_CONFLICT)
                why = strdup("in both chats/ and chats/archive/");
        else if (live & ~(unsigned)LIVE_RECENT)
                why = s->live_reason ? strprintf("in use: %s", s->live_reason)
                                     : strprintf("in use: %s",
                                                 live_flags_to_string(flags, sizeof flags, live));
        else if (live)
                why = since < 0 ? strprintf("in use: written %s in the future",
                                            format_duration(a, sizeof a, -since))
                                : strprintf("in use: written %s ago < min-idle %s",
                                            format_duration(a, sizeof a, since),
                                            format_duration_exact(b, sizeof b, in->pol->min_idle));
        else
                return 0;
        if (!why)
                return -ENOMEM;
        in->skip_reason = why;
        return 0;
}

/* Keep-class protections that do not depend on the project's ranking. */
static void policy_keep_protections(PolicyRun *run, size_t i) {
        const Session *s = &run->inv->sessions[i];
        const Policy *p = run->info[i].pol;
        Verdict *vd = &run->v->sessions[i];
        msec_t born = s->first_record > 0 ? s->first_record : s->mtime;

        if (p->protect)
                vd->protections |= PROT_PROTECT;
        if (p->min_age > 0 && run->now - born < p->min_age)
                vd->protections |= PROT_MIN_AGE;
        if (p->keep_pinned && (s->pinned || s->grouped || s->org_unreadable))
                vd->protections |= PROT_PINNED;
        if (p->keep_titled && s->title && s->title_manual)
                vd->protections |= PROT_TITLED;
        if (p->keep_scheduled && s->n_tasks > 0)
                vd->protections |= PROT_SCHEDULED;
        if (p->keep_worktree && s->live_worktree)
                vd->protections |= PROT_WORKTREE;
}

/* Older first: last activity, then the record timestamps (which decide when a copy gave every
 * transcript the same mtime). 0 when tied. */
static int policy_cmp_age(const Session *a, const Session *b) {
        if (a->last_activity != b->last_activity)
                return a->last_activity < b->last_activity ? -1 : 1;
        if (a->last_record != b->last_record)
                return a->last_record < b->last_record ? -1 : 1;
        if (a->first_record != b->first_record)
                return a->first_record < b->first_record ? -1 : 1;
        return 0;
}

/* Order verified sessions by tree, project, newest first, id. */
static int policy_cmp_group(const void *x, const void *y, void *userdata) {
        const Inventory *inv = userdata;
        const Session *a = &inv->sessions[*(const size_t *)x], *b = &inv->sessions[*(const size_t *)y];
        int c;

        if (a->tree != b->tree)
                return a->tree < b->tree ? -1 : 1;
        c = a->cwd == b->cwd ? 0 : strcmp(a->cwd, b->cwd); /* shared copies (inventory.h) */
        if (c != 0)
                return c;
        c = policy_cmp_age(a, b);
        if (c != 0)
                return -c;
        return strcmp(a->id, b->id);
}

/* Oldest first, then id: the order size walks and the blast radius consume sessions. */
static int policy_cmp_oldest(const void *x, const void *y, void *userdata) {
        const Inventory *inv = userdata;
        const Session *a = &inv->sessions[*(const size_t *)x], *b = &inv->sessions[*(const size_t *)y];
        int c;

        c = policy_cmp_age(a, b);
        if (c != 0)
                return c;
        if (a->tree != b->tree)
                return a->tree < b->tree ? -1 : 1;
        c = strcmp(a->id, b->id);
        if (c != 0)
                return c;
        return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

/* The span key of policy_cmp_group(): (tree, cwd). */
static int policy_cmp_project(const void *x, const void *y, void *userdata) {
        const Inventory *inv = userdata;
        const Session *a = &inv->sessions[*(const size_t *)x], *b = &inv->sessions[*(const size_t *)y];

        if (a->tree != b->tree)
                return a->tree < b->tree ? -1 : 1;
        return a->cwd == b->cwd ? 0 : strcmp(a->cwd, b->cwd);
}

/* Group the verified sessions per project (tree, cwd). */
static int policy_build_groups(PolicyRun *run) {
        const Inventory *inv = run->inv;
        size_t n = 0;
        int r;

        run->order = calloc(inv->n_sessions ?: 1, sizeof(size_t));
        run->groups = calloc(inv->n_sessions ?: 1, sizeof(PolicyGroup));
        if (!run->order || !run->groups)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_sessions; i++)
                if (!(run->v->sessions[i].protections & (PROT_UNVERIFIED | PROT_FOREIGN)) &&
                    policy_is_verified(&inv->sessions[i]))
                        run->order[n++] = i;
        run->n_order = n;
        /* the inventory keeps a project's sessions together (inventory_sort()) */
        r = sort_by_runs(run->order, n, sizeof(size_t), policy_cmp_project, policy_cmp_group,
                         (void *)inv);
        if (r <= 0) /* a project in two places of the inventory, or short of memory */
                qsort_r(run->order, n, sizeof(size_t), policy_cmp_group, (void *)inv);

        for (size_t k = 0; k < n;) {
                const Session *s = &inv->sessions[run->order[k]];
                PolicyGroup *g = &run->groups[run->n_groups];
                size_t e = k;

                while (e < n && inv->sessions[run->order[e]].tree == s->tree &&
                       streq(inv->sessions[run->order[e]].cwd, s->cwd))
                        run->info[run->order[e++]].group = run->n_groups;
                *g = (PolicyGroup){ .tree = s->tree,
                                    .cwd = s->cwd,
                                    .pol = run->info[run->order[k]].pol,
                                    .members = run->order + k,
                                    .n_members = e - k };
                run->n_groups++;
                k = e;
        }
        return 0;
}

/* Ranks, keep-latest, max-age and max-sessions on a project's active sessions. */
static int policy_project_age_count(PolicyRun *run, const PolicyGroup *g) {
        const Policy *p = g->pol;
        Verb verb = p->action == POLICY_ACTION_DELETE ? VERB_DELETE : VERB_ARCHIVE;
        char a[FORMAT_DURATION_MAX];
        unsigned rank = 0;
        int r;

        for (size_t k = 0; k < g->n_members; k++) {
                size_t i = g->members[k];
                Verdict *vd = &run->v->sessions[i];

                if (run->inv->sessions[i].state != SESSION_ACTIVE)
                        continue;
                vd->rank = ++rank;
                if (p->keep_latest > 0 && rank <= p->keep_latest)
                        vd->protections |= PROT_LATEST;
                if (p->max_age > 0 && run->info[i].idle > p->max_age &&
                    policy_would_select(run, i, verb)) {
                        /* the most common reason: joined, not printf'd */
                        r = policy_select_reason(
                                run, i, verb, "max-age",
                                strjoin("idle ", format_duration(a, sizeof a, run->info[i].idle),
                                        " > max-age ", policy_exact(run, p->max_age), NULL));
                        if (r < 0)
                                return r;
                }
                if (p->max_sessions > 0 && rank > p->max_sessions) {
                        r = policy_select(run, i, verb, "max-sessions",
                                          "rank %u > max-sessions %" PRIu64, rank,
                                          p->max_sessions);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* Shrink the sessions of one state in a project, oldest first, until at or below cap. */
static int policy_project_shrink(PolicyRun *run, const PolicyGroup *g, SessionState state,
                                 uint64_t cap, Verb verb, const char *rule, const char *what) {
        uint64_t total = 0, projected;
        char a[FORMAT_BYTES_MAX], b[32];
        int r;

        if (cap == 0)
                return 0;
        for (size_t k = 0; k < g->n_members; k++)
                if (run->inv->sessions[g->members[k]].state == state)
                        total += run->info[g->members[k]].size;
        if (total <= cap)
                return 0;
        projected = total;
        for (size_t k = 0; k < g->n_members; k++) {
                size_t i = g->members[k];
                if (run->inv->sessions[i].state == state && policy_going(run, i))
                        projected -= run->info[i].size;
        }
        /* members are newest first: walk backwards for oldest first */
        for (size_t k = g->n_members; k > 0 && projected > cap; k--) {
                size_t i = g->members[k - 1];
                if (run->inv->sessions[i].state != state || policy_going(run, i))
                        continue;
                r = policy_select(run, i, verb, rule, "%s %s > %s %s", what,
                                  format_bytes(a, sizeof a, total), rule,
                                  policy_format_limit(b, sizeof b, cap));
                if (r < 0)
                        return r;
                if (policy_going(run, i))
                        projected -= run->info[i].size;
        }
        return 0;
}

/* Archive tier: archived sessions idle beyond archive-max-age are deleted. */
static int policy_archive_age(PolicyRun *run, const PolicyGroup *g) {
        const Policy *p = g->pol;
        char a[FORMAT_DURATION_MAX], b[FORMAT_DURATION_MAX];
        int r;

        if (p->archive_max_age <= 0)
                return 0;
        for (size_t k = 0; k < g->n_members; k++) {
                size_t i = g->members[k];
                if (run->inv->sessions[i].state != SESSION_ARCHIVED ||
                    run->info[i].idle <= p->archive_max_age)
                        continue;
                r = policy_select(run, i, VERB_DELETE, "archive-max-age",
                                  "archived, idle %s > archive-max-age %s",
                                  format_duration(a, sizeof a, run->info[i].idle),
                                  format_duration_exact(b, sizeof b, p->archive_max_age));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Cold tier: archived sessions idle beyond compress-after that are not compressed yet are
 * compressed. One a rule deletes keeps the compression as its fallback (policy_blast()). */
static int policy_compress(PolicyRun *run, const PolicyGroup *g) {
        const Policy *p = g->pol;
        char a[FORMAT_DURATION_MAX], b[FORMAT_DURATION_MAX];

        if (p->compress_after <= 0)
                return 0;
        for (size_t k = 0; k < g->n_members; k++) {
                size_t i = g->members[k];
                const Session *s = &run->inv->sessions[i];
                PolicyInfo *in = &run->info[i];
                char *why;

                if (s->state != SESSION_ARCHIVED || session_is_cold(s) ||
                    in->idle <= p->compress_after)
                        continue;
                run->v->sessions[i].compress_level = (int)p->compress_level;
                why = strprintf("archived, idle %s > compress-after %s",
                                format_duration(a, sizeof a, in->idle),
                                format_duration_exact(b, sizeof b, p->compress_after));
                if (!why)
                        return -ENOMEM;
                if (in->sel_verb == VERB_DELETE && !in->fallback_reason) {
                        in->fallback_reason = why;
                        in->fallback_rule = "compress-after";
                        in->fallback_verb = VERB_COMPRESS;
                        continue;
                }
                if (policy_select_reason(run, i, VERB_COMPRESS, "compress-after", why) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* All project-level rules of one project. */
static int policy_project(PolicyRun *run, const PolicyGroup *g) {
        Verb verb = g->pol->action == POLICY_ACTION_DELETE ? VERB_DELETE : VERB_ARCHIVE;
        int r;

        r = policy_project_age_count(run, g);
        if (r < 0)
                return r;
        r = policy_project_shrink(run, g, SESSION_ACTIVE, g->pol->max_size, verb, "max-size",
                                  "project");
        if (r < 0)
                return r;
        r = policy_archive_age(run, g);
        if (r < 0)
                return r;
        r = policy_project_shrink(run, g, SESSION_ARCHIVED, g->pol->archive_max_size, VERB_DELETE,
                                  "archive-max-size", "archive");
        if (r < 0)
                return r;
        return policy_compress(run, g);
}

static const char *const orphan_what[_ORPHAN_KIND_MAX] = {
        [ORPHAN_FILE_HISTORY] = "orphan file-history, no transcript",
        [ORPHAN_SUBAGENTS] = "orphan subagents, no transcript",
        [ORPHAN_EMPTY_PROJECT] = "empty project directory",
};

/* Does orphan o belong to a project with protect = true? Its project directory is that of a
 * protected session of its tree, or the sanitized path of an exact protected project. */
static bool policy_orphan_protected(const PolicyRun *run, const Orphan *o) {
        if (!o->project_dir || !o->project_dir[0])
                return false; /* file-history: the session is gone, its project unknown */
        for (size_t i = 0; i < run->inv->n_sessions; i++) {
                const Session *s = &run->inv->sessions[i];
                if (s->tree == o->tree && run->info[i].pol->protect && s->project_dir &&
                    streq(s->project_dir, o->project_dir) && policy_is_verified(s))
                        return true;
        }
        for (size_t k = 0; k < run->cfg->n_projects; k++) {
                const ProjectOverride *po = &run->cfg->projects[k];
                _cleanup_free_ char *dir = NULL;

                if (!po->policy.protect || po->is_glob)
                        continue;
                dir = qwen_sanitize_cwd(po->pattern);
                if (dir && streq(dir, o->project_dir))
                        return true;
        }
        return false;
}

/* Orphans older than orphan-min-age (idle = now - newest mtime inside) are reclaimed. */
static int policy_orphans(PolicyRun *run) {
        const Policy *p = &run->cfg->defaults;
        char a[FORMAT_DURATION_MAX], b[FORMAT_DURATION_MAX];

        for (size_t i = 0; i < run->inv->n_orphans; i++) {
                const Orphan *o = &run->inv->orphans[i];
                Verdict *vd = &run->v->orphans[i];
                /* the age the rule sees (--now), but never older than it really is: an orphan
                 * written a minute ago is not reclaimed by a forecast clock */
                msec_t idle = MAX(MIN(run->now, run->real_now) - o->mtime, (msec_t)0);
                const char *what = o->kind >= 0 && o->kind < _ORPHAN_KIND_MAX && orphan_what[o->kind]
                                           ? orphan_what[o->kind]
                                           : hygiene_what(o->kind);
                const char *key;
                /* hygiene kinds have a key each (hygiene.h), the others orphan-min-age */
                msec_t limit = hygiene_limit(p, o->kind, &key);

                if (o->kind == ORPHAN_STALE_PROJECT)
                        continue; /* policy_stale_projects(), once every session is decided */

                format_duration(a, sizeof a, idle);
                format_duration_exact(b, sizeof b, limit);
                if (policy_orphan_protected(run, o)) {
                        vd->verb = VERB_KEEP;
                        vd->rule = protection_to_string(PROT_PROTECT);
                        vd->protections |= PROT_PROTECT;
                        vd->reason = strprintf("%s, protected project (protect = true)", what);
                } else if (limit != MSEC_INFINITY && idle > limit) {
                        vd->verb = VERB_DELETE;
                        vd->rule = hygiene_kind(o->kind) ? key : "orphan";
                        vd->reason = strprintf("%s, idle %s > %s", what, a, b);
                } else {
                        vd->verb = VERB_KEEP;
                        vd->rule = "none";
                        vd->reason = limit != MSEC_INFINITY
                                             ? strprintf("%s, idle %s <= %s %s", what, a, key, b)
                                             : strprintf("%s (%s off)", what, key);
                }
                if (!vd->reason)
                        return -ENOMEM;
        }
        return 0;
}

/* Stale project entries (hygiene.h), which depend on their sessions' verdicts: after them and
 * before the deletion limits, then again after the limits. */
static int policy_stale_projects(PolicyRun *run, bool after_limits) {
        for (size_t i = 0; i < run->inv->n_orphans; i++) {
                const Orphan *o = &run->inv->orphans[i];
                Orphan dir = { .tree = o->tree, .project_dir = o->name };
                int r;

                if (o->kind != ORPHAN_STALE_PROJECT)
                        continue;
                r = hygiene_stale_decide(run->inv, i, &run->cfg->defaults,
                                         MIN(run->now, run->real_now),
                                         policy_orphan_protected(run, &dir), after_limits, run->v);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Delete oldest first across the tree until `enough` says so; disk caps always delete. */
static int policy_tree_walk(PolicyRun *run, const size_t *idx, size_t n, const char *rule,
                            const char *reason, uint64_t *progress, uint64_t goal, bool up,
                            bool alloc) {
        int r;

        for (size_t k = 0; k < n; k++) {
                size_t i = idx[k];
                const Session *s = &run->inv->sessions[i];
                if (up ? *progress >= goal : *progress <= goal)
                        break;
                if (policy_deleting(run, i))
                        continue;
                r = policy_select(run, i, VERB_DELETE, rule, "%s", reason);
                if (r < 0)
                        return r;
                if (policy_deleting(run, i)) {
                        uint64_t sz = alloc ? s->bytes_alloc : run->info[i].size;
                        if (up)
                                *progress += sz;
                        else
                                *progress -= MIN(sz, *progress);
                }
        }
        return 0;
}

/* Tree max-size (to the low watermark) and keep-free for tree t. */
static int policy_tree(PolicyRun *run, size_t t, size_t *idx) {
        const TreeLimits *tl = &run->cfg->tree;
        const Tree *tree = &run->inv->trees[t];
        uint64_t total = 0, deleted = 0;
        char a[FORMAT_BYTES_MAX], b[32], c[32];
        _cleanup_free_ char *reason = NULL;
        bool sorted = false;
        size_t n = 0;
        int r;

        /* a tree that was not fully listed: its total and its oldest sessions are unknown */
        if (tree->incomplete)
                return 0;
        for (size_t i = 0; i < run->inv->n_sessions; i++) {
                if (run->inv->sessions[i].tree != t)
                        continue;
                idx[n++] = i;
                total += run->info[i].size;
                if (policy_deleting(run, i))
                        deleted += run->info[i].size;
        }
        for (size_t i = 0; i < run->inv->n_orphans; i++) {
                const Orphan *o = &run->inv->orphans[i];
                if (o->tree != t)
                        continue;
                total += policy_size(run, o->bytes, o->bytes_alloc);
                if (run->v->orphans[i].verb == VERB_DELETE)
                        deleted += policy_size(run, o->bytes, o->bytes_alloc);
        }
        /* idx is put in age order only when a cap walks it (most runs have none in effect) */
        if (tl->max_size > 0 && total > tl->max_size) {
                uint64_t target = tl->low_watermark > 0 && tl->low_watermark < tl->max_size
                                          ? tl->low_watermark
                                          : tl->max_size;
                uint64_t projected = total - MIN(deleted, total);

                reason = strprintf("tree %s > max-size %s, shrinking to %s (disk caps delete)",
                                   format_bytes(a, sizeof a, total),
                                   policy_format_limit(b, sizeof b, tl->max_size),
                                   policy_format_limit(c, sizeof c, target));
                if (!reason)
                        return -ENOMEM;
                qsort_r(idx, n, sizeof(size_t), policy_cmp_oldest, (void *)run->inv);
                sorted = true;
                r = policy_tree_walk(run, idx, n, "tree-max-size", reason, &projected, target,
                                     /* up= */ false, /* alloc= */ false);
                if (r < 0)
                        return r;
                free(reason);
                reason = NULL;
        }

        if (tl->keep_free.is_set && tree->fs_known) {
                uint64_t floor_bytes = tl->keep_free.is_percent
                                               ? (uint64_t)floor((double)tree->fs_size *
                                                                 tl->keep_free.percent / 100.0)
                                               : tl->keep_free.bytes;
                uint64_t freed = 0;

                if (tree->fs_avail >= floor_bytes)
                        return 0;
                for (size_t k = 0; k < n; k++)
                        if (policy_deleting(run, idx[k]))
                                freed += run->inv->sessions[idx[k]].bytes_alloc;
                for (size_t i = 0; i < run->inv->n_orphans; i++)
                        if (run->inv->orphans[i].tree == t &&
                            run->v->orphans[i].verb == VERB_DELETE)
                                freed += run->inv->orphans[i].bytes_alloc;
                if (tl->keep_free.is_percent)
                        reason = strprintf("free %s < keep-free %g%% (%s) (disk caps delete)",
                                           format_bytes(a, sizeof a, tree->fs_avail),
                                           tl->keep_free.percent,
                                           format_bytes(b, sizeof b, floor_bytes));
                else
                        reason = strprintf("free %s < keep-free %s (disk caps delete)",
                                           format_bytes(a, sizeof a, tree->fs_avail),
                                           policy_format_limit(b, sizeof b, floor_bytes));
                if (!reason)
                        return -ENOMEM;
                if (!sorted)
                        qsort_r(idx, n, sizeof(size_t), policy_cmp_oldest, (void *)run->inv);
                r = policy_tree_walk(run, idx, n, "keep-free", reason, &freed,
                                     floor_bytes - tree->fs_avail, /* up= */ true,
                                     /* alloc= */ true);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Keep-class description for a KEEP verdict that a protection won. */
static char *policy_keep_description(const PolicyRun *run, size_t i) {
        const Session *s = &run->inv->sessions[i];
        const Verdict *vd = &run->v->sessions[i];
        const Policy *p = run->info[i].pol;
        char a[FORMAT_DURATION_MAX], b[FORMAT_DURATION_MAX];
        msec_t born = s->first_record > 0 ? s->first_record : s->mtime;
        _cleanup_(strbuf_done) StrBuf sb = {};
        int r = 0;

        if (vd->protections & PROT_PROTECT)
                r |= strbuf_printf(&sb, "%sprotected project (protect = true)", sb.len ? ", " : "");
        if (vd->protections & PROT_MIN_AGE)
                r |= strbuf_printf(&sb, "%sage %s < min-age %s", sb.len ? ", " : "",
                                   format_duration(a, sizeof a, MAX(run->now - born, (msec_t)0)),
                                   format_duration_exact(b, sizeof b, p->min_age));
        if (vd->protections & PROT_PINNED)
                r |= strbuf_printf(&sb, "%s%s", sb.len ? ", " : "",
                                   s->pinned    ? "pinned"
                                   : s->grouped ? "grouped"
                                                : "pins unknown (session-organization.v1.json "
                                                  "unreadable)");
        if (vd->protections & PROT_TITLED)
                r |= strbuf_printf(&sb, "%stitled by a person", sb.len ? ", " : "");
        if (vd->protections & PROT_SCHEDULED)
                r |= strbuf_printf(&sb, "%sbound to %u scheduled task%s", sb.len ? ", " : "",
                                   s->n_tasks, s->n_tasks == 1 ? "" : "s");
        if (vd->protections & PROT_WORKTREE)
                r |= strbuf_printf(&sb, "%slive worktree", sb.len ? ", " : "");
        if (vd->protections & PROT_LATEST)
                r |= strbuf_printf(&sb, "%srank %u <= keep-latest %" PRIu64, sb.len ? ", " : "",
                                   vd->rank, p->keep_latest);
        if (r < 0)
                return NULL;
        return strbuf_steal(&sb);
}

/* The winning protection of a mask, in priority order. */
static const char *policy_first_protection(unsigned prot) {
        static const Protection order[] = { PROT_UNVERIFIED, PROT_FOREIGN, PROT_CONFLICT,
                                            PROT_LIVE,       PROT_PROTECT, PROT_MIN_AGE, PROT_PINNED,
                                            PROT_TITLED,     PROT_SCHEDULED, PROT_WORKTREE,
                                            PROT_LATEST,     PROT_BLAST };
        for (size_t k = 0; k < ELEMENTSOF(order); k++)
                if (prot & order[k])
                        return protection_to_string(order[k]);
        return "none";
}

static void policy_title_need_one(const Policy *p, TitleNeed *t) {
        if (!p->keep_titled)
                return;
        if (p->max_sessions > 0 || p->max_size > 0 || p->archive_max_size > 0)
                t->all = true;
        if (p->max_age > 0)
                t->active_idle = MIN(t->active_idle, p->max_age);
        if (p->archive_max_age > 0)
                t->archived_idle = MIN(t->archived_idle, p->archive_max_age);
        if (p->compress_after > 0)
                t->archived_idle = MIN(t->archived_idle, p->compress_after);
}

void policy_title_need(const Config *cfg, bool json, TitleNeed *ret) {
        TitleNeed t = { .all = json, .active_idle = MSEC_INFINITY, .archived_idle = MSEC_INFINITY };

        policy_title_need_one(&cfg->defaults, &t);
        for (size_t i = 0; i < cfg->n_projects; i++)
                policy_title_need_one(&cfg->projects[i].policy, &t);
        if (cfg->tree.max_size > 0 || cfg->tree.keep_free.is_set)
                t.all = true;
        if (cfg->defaults.stale_project_min_age != MSEC_INFINITY)
                t.all = true; /* a stale entry's sessions go whatever their age (hygiene.h) */
        *ret = t;
}

/* Turn the selections and protections of session i into its verdict. */
static int policy_finish(PolicyRun *run, size_t i) {
        const Session *s = &run->inv->sessions[i];
        PolicyInfo *in = &run->info[i];
        Verdict *vd = &run->v->sessions[i];
        const Policy *p = in->pol;
        char a[FORMAT_DURATION_MAX];
        bool selected = in->sel_verb != VERB_KEEP;

        if (vd->protections & PROT_SKIP_MASK) {
                vd->verb = VERB_SKIP;
                vd->rule = policy_first_protection(vd->protections & PROT_SKIP_MASK);
                vd->reason = selected ? strjoin(in->skip_reason, " (would ",
                                                verb_to_string(in->sel_verb), ": ",
                                                in->sel_reason, ")", NULL)
                                      : TAKE_PTR(in->skip_reason);
        } else if (selected && p->keep_titled && s->title_unread) {
                /* the scan judged no rule could select it and left its title unread: never act
                 * without knowing whether a person titled it (cannot happen with the TitleNeed
                 * of policy_title_need(); a safety net) */
                vd->verb = VERB_SKIP;
                vd->protections |= PROT_UNVERIFIED;
                vd->rule = protection_to_string(PROT_UNVERIFIED);
                vd->reason = strprintf("unverified: title not read (would %s: %s)",
                                       verb_to_string(in->sel_verb), in->sel_reason);
        } else if (selected && (vd->protections & PROT_KEEP_MASK)) {
                _cleanup_free_ char *d = policy_keep_description(run, i);
                if (!d)
                        return -ENOMEM;
                vd->verb = VERB_KEEP;
                vd->rule = policy_first_protection(vd->protections & PROT_KEEP_MASK);
                vd->reason = strjoin(d, " (would ", verb_to_string(in->sel_verb), ": ",
                                     in->sel_reason, ")", NULL);
        } else if (selected && policy_tasks_block(run, i)) {
                vd->verb = VERB_KEEP;
                vd->protections |= PROT_SCHEDULED;
                vd->rule = protection_to_string(PROT_SCHEDULED);
                vd->reason = strprintf("bound to %u scheduled task%s, which qgc does not remove "
                                       "(would delete: %s)",
                                       s->n_tasks, s->n_tasks == 1 ? "" : "s", in->sel_reason);
        } else if (selected) {
                vd->verb = in->sel_verb;
                vd->rule = in->sel_rule;
                vd->reason = TAKE_PTR(in->sel_reason);
        } else {
                vd->verb = VERB_KEEP;
                vd->rule = "none";
                if (session_is_cold(s))
                        vd->reason = strdup("archived, compressed");
                else if (s->state == SESSION_ARCHIVED)
                        vd->reason = strdup("archived");
                else if (p->max_age > 0)
                        vd->reason = strjoin("idle ", format_duration(a, sizeof a, in->idle),
                                             " <= max-age ", policy_exact(run, p->max_age), NULL);
                else
                        vd->reason = strdup("no rule applies");
        }
        return vd->reason ? 0 : -ENOMEM;
}

/* Blast radius: the newest deletions beyond the run's and the projects' limits are skipped. */
static int policy_blast(PolicyRun *run, const PolicyOptions *opts) {
        const Inventory *inv = run->inv;
        uint64_t global = run->cfg->defaults.max_deletions, n_global = 0;
        _cleanup_free_ size_t *idx = NULL, *per_group = NULL, *group_size = NULL;
        size_t n = 0;

        if (opts && opts->force)
                return 0;
        idx = calloc(inv->n_sessions ?: 1, sizeof(size_t));
        per_group = calloc(run->n_groups ?: 1, sizeof(size_t));
        group_size = calloc(run->n_groups ?: 1, sizeof(size_t));
        if (!idx || !per_group || !group_size)
                return -ENOMEM;
        for (size_t g = 0; g < run->n_groups; g++)
                group_size[g] = run->groups[g].n_members;
        for (size_t i = 0; i < inv->n_sessions; i++)
                if (run->v->sessions[i].verb == VERB_DELETE)
                        idx[n++] = i;
        qsort_r(idx, n, sizeof(size_t), policy_cmp_oldest, (void *)inv);

        for (size_t k = 0; k < n; k++) {
                size_t i = idx[k], g = run->info[i].group;
                PolicyInfo *in = &run->info[i];
                const Policy *p = in->pol;
                Verdict *vd = &run->v->sessions[i];
                _cleanup_free_ char *limit = NULL;
                const char *held_by = "max-deletions";
                char *why;

                if (g == SIZE_MAX)
                        continue; /* cannot happen: unverified sessions are skipped */
                if (global > 0 && n_global >= global)
                        limit = strprintf("%" PRIu64 " per run", global);
                else if (p->max_deletions > 0 && per_group[g] >= p->max_deletions)
                        limit = strprintf("%" PRIu64 " per run in this project", p->max_deletions);
                else if (p->max_deletions_percent > 0 &&
                         (double)(per_group[g] + 1) >
                                 p->max_deletions_percent * (double)group_size[g] / 100.0) {
                        limit = strprintf("%g%% of the project's %zu sessions per run",
                                          p->max_deletions_percent, group_size[g]);
                        held_by = "max-deletions-percent";
                } else {
                        n_global++;
                        per_group[g]++;
                        continue;
                }
                if (!limit)
                        return -ENOMEM;
                vd->held_by = held_by;
                vd->held_rule = vd->rule;
                if (in->fallback_reason) {
                        /* a disk cap wanted it deleted, a project rule archives it anyway */
                        why = strprintf("%s (held back by %s: %s; use --force)",
                                        in->fallback_reason, held_by, limit);
                        vd->verb = in->fallback_verb;
                        vd->rule = in->fallback_rule;
                } else {
                        why = strprintf("held back by %s (%s; use --force); would delete: %s",
                                        held_by, limit, vd->reason);
                        vd->verb = VERB_SKIP;
                        vd->rule = protection_to_string(PROT_BLAST);
                }
                if (!why)
                        return -ENOMEM;
                free(vd->reason);
                vd->reason = why;
                vd->protections |= PROT_BLAST;
        }
        return 0;
}

static void policy_run_done(PolicyRun *run) {
        if (run->info)
                for (size_t i = 0; i < run->inv->n_sessions; i++) {
                        free(run->info[i].sel_reason);
                        free(run->info[i].fallback_reason);
                        free(run->info[i].skip_reason);
                }
        free(run->info);
        free(run->order);
        free(run->groups);
}

/* Per-session set-up: effective policy, idle time, counted size, protections. */
static int policy_prepare(PolicyRun *run) {
        for (size_t i = 0; i < run->inv->n_sessions; i++) {
                const Session *s = &run->inv->sessions[i];
                PolicyInfo *in = &run->info[i];
                int r;

                in->pol = config_policy_for(run->cfg, policy_is_verified(s) ? s->cwd : NULL);
                if (!in->pol)
                        in->pol = &run->cfg->defaults;
                in->idle = MAX(run->now - s->last_activity, (msec_t)0);
                in->size = policy_size(run, s->bytes, s->bytes_alloc);
                in->group = SIZE_MAX;
                in->sel_verb = VERB_KEEP;
                r = policy_skip_protections(run, i);
                if (r < 0)
                        return r;
                policy_keep_protections(run, i);
        }
        return 0;
}

int policy_evaluate(const Inventory *inv, const Config *cfg, msec_t now, const PolicyOptions *opts,
                    Verdicts **ret) {
        _cleanup_(verdicts_freep) Verdicts *v = NULL;
        _cleanup_free_ size_t *idx = NULL;
        PolicyRun run = { .inv = inv, .cfg = cfg, .now = now,
                          .real_now = opts && opts->real_now > 0 ? opts->real_now : now };
        int r;

        if (!inv || !cfg || !ret)
                return -EINVAL;
        v = calloc(1, sizeof(Verdicts));
        if (!v)
                return -ENOMEM;
        v->sessions = calloc(inv->n_sessions ?: 1, sizeof(Verdict));
        v->orphans = calloc(inv->n_orphans ?: 1, sizeof(Verdict));
        if (!v->sessions || !v->orphans)
                return -ENOMEM;
        v->n_sessions = inv->n_sessions;
        v->n_orphans = inv->n_orphans;
        run.v = v;
        run.info = calloc(inv->n_sessions ?: 1, sizeof(PolicyInfo));
        idx = calloc(inv->n_sessions ?: 1, sizeof(size_t));
        if (!run.info || !idx) {
                policy_run_done(&run);
                return -ENOMEM;
        }

        r = policy_prepare(&run);
        if (r >= 0)
                r = policy_build_groups(&run);
        for (size_t g = 0; r >= 0 && g < run.n_groups; g++)
                r = policy_project(&run, &run.groups[g]);
        if (r >= 0)
                r = policy_orphans(&run);
        for (size_t t = 0; r >= 0 && t < inv->n_trees; t++)
                r = policy_tree(&run, t, idx);
        for (size_t i = 0; r >= 0 && i < inv->n_sessions; i++)
                r = policy_finish(&run, i);
        if (r >= 0)
                r = policy_stale_projects(&run, /* after_limits= */ false);
        if (r >= 0)
                r = policy_blast(&run, opts);
        if (r >= 0)
                r = policy_stale_projects(&run, /* after_limits= */ true);
        policy_run_done(&run);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(v);
        return 0;
}
