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
 *      archive instead. Orphan reclaims do not count: they are leftovers, not sessions.
 *
 * This file runs the evaluation (protections, project rules, archive and cold tiers, orphans,
 * stale projects); the disk caps and the blast radius are in policy-caps.c, the verb and
 * protection names and the rendering of verdicts and their reasons in policy-reason.c. */
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
#include "policy-int.h"
#include "qwen.h"

/* format_duration_exact(v), remembered for the next call with the same v. */
const char *policy_exact(PolicyRun *run, msec_t v) {
        if (!run->exact_s[0] || run->exact_v != v) {
                format_duration_exact(run->exact_s, sizeof run->exact_s, v);
                run->exact_v = v;
        }
        return run->exact_s;
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

static bool policy_is_verified(const Session *s) {
        return s->cwd && (s->owner == OWNER_OK || s->owner == OWNER_WORKTREE ||
                          s->owner == OWNER_CLAIM);
}

/* The last write to the session's files; the liveness grace is measured from it. */
static msec_t policy_last_write(const Session *s) {
        return s->last_write > 0 ? s->last_write : s->mtime;
}

uint64_t policy_size(const PolicyRun *run, uint64_t bytes, uint64_t bytes_alloc) {
        return run->cfg->tree.count_allocated ? bytes_alloc : bytes;
}

/* Qwen's daemon deletes a session's bound tasks under its cron lock; qgc never edits
 * scheduled_tasks.json, so a session bound to a task is never deleted, even with keep-scheduled
 * off (which then only lets it be archived): the task would point at nothing. */
bool policy_tasks_block(const PolicyRun *run, size_t i) {
        return run->info[i].sel_verb == VERB_DELETE && run->inv->sessions[i].n_tasks > 0;
}

/* Whether a selected session really goes (no protection blocks it). */
static bool policy_going(const PolicyRun *run, size_t i) {
        return run->info[i].sel_verb != VERB_KEEP &&
               !(run->v->sessions[i].protections & PROT_BLOCK_MASK) &&
               !policy_tasks_block(run, i);
}

bool policy_deleting(const PolicyRun *run, size_t i) {
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
_printf_(5, 6) int policy_select(PolicyRun *run, size_t i, Verb verb, const char *rule,
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
int policy_cmp_oldest(const void *x, const void *y, void *userdata) {
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
