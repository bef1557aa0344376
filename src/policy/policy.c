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
 *      (the time in the archive: policy_in_archive()) and archive-max-size delete; then compress-after compresses an archived session that is
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
 *   6. A protected session a rule selected is KEEP (or SKIP) with blocked_by naming the
 *      protection and blocked_verb, blocked_rule and the measure what it blocked (rendered
 *      "kept: pinned (a rule would select it: archive for idle 121d > max-age 90d)" by
 *      reason.c).
 *      A protected session does not count as freed, so size walks continue to the next one.
 *   7. Blast radius: deletions are allowed oldest first; past max-deletions for the run
 *      (defaults), the project's own max-deletions, or max-deletions-percent of the project's
 *      sessions, the newest excess becomes SKIP with PROT_BLAST, unless opts->force. A session
 *      that a project rule archives and a disk cap upgraded to a deletion falls back to the
 *      archive instead. Orphan reclaims do not count: they are leftovers, not sessions.
 *
 * Verdicts are data (policy.h: rule, Measure, blocked_by, held_by); no text is made here and
 * nothing here reads any: the reasons are rendered at the edge (reason.c).
 *
 * This file runs the evaluation (protections, project rules, archive and cold tiers, orphans,
 * stale projects) and owns policy_age_selects(), the one age test (the scan's title need calls
 * it); the disk caps and the blast radius are in policy-caps.c, the verb and protection names
 * and which protection wins in policy-reason.c. */
#include "autoconf.h"

#include <assert.h>
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
#include "policy-stale.h"
#include "qwen.h"

Verdicts *verdicts_free(Verdicts *v) {
        if (!v)
                return NULL;
        for (size_t i = 0; i < v->n_sessions; i++) {
                if (v->sessions[i].facts)
                        free(v->sessions[i].facts->fact);
                free(v->sessions[i].facts);
        }
        for (size_t i = 0; i < v->n_orphans; i++) {
                if (v->orphans[i].facts)
                        free(v->orphans[i].facts->fact);
                free(v->orphans[i].facts);
        }
        free(v->sessions);
        free(v->orphans);
        free(v->caps);
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

/* A rule selects session i with what it measured (into the verdict's measure): 1, 0 when an
 * earlier selection wins, or -ENOMEM. */
int policy_select(PolicyRun *run, size_t i, Verb verb, const char *rule, const Measure *m) {
        PolicyInfo *in = &run->info[i];
        Verdict *vd = &run->v->sessions[i];

        if (!policy_would_select(run, i, verb))
                return 0;
        if (in->sel_verb == VERB_ARCHIVE || in->sel_verb == VERB_COMPRESS) {
                /* kept so the blast radius can fall back to the archive (compression) */
                if (!policy_facts(vd))
                        return -ENOMEM;
                vd->facts->fallback = vd->measure;
                vd->facts->fallback_rule = vd->rule;
                vd->facts->fallback_verb = in->sel_verb;
        }
        vd->measure = *m;
        vd->rule = rule;
        in->sel_verb = verb;
        return 1;
}

/* The verdict's facts beyond its measure, allocated on first use; NULL on ENOMEM. */
VerdictFacts *policy_facts(Verdict *vd) {
        if (!vd->facts)
                vd->facts = calloc(1, sizeof(VerdictFacts));
        return vd->facts;
}

bool policy_age_selects(msec_t limit, msec_t idle) {
        return limit > 0 && limit != MSEC_INFINITY && idle > limit;
}

int verdict_set_fact(Verdict *vd, Verb verb, const char *rule, char *fact) {
        if (!fact)
                return -ENOMEM;
        if (!policy_facts(vd)) {
                free(fact);
                return -ENOMEM;
        }
        free(vd->facts->fact);
        vd->verb = verb;
        vd->rule = rule;
        vd->facts->fact = fact;
        vd->measure = (Measure){};
        vd->blocked_by = 0;
        vd->blocked_verb = VERB_KEEP;
        vd->blocked_rule = NULL;
        vd->facts->quote = NULL, vd->facts->quote_session = NULL;
        return 0;
}

/* Skip-class protections of session i, and the facts of a write within min-idle. */
static void policy_skip_protections(PolicyRun *run, size_t i) {
        const Session *s = &run->inv->sessions[i];
        PolicyInfo *in = &run->info[i];
        Verdict *vd = &run->v->sessions[i];
        /* the real clock: --now forecasts ages, it never makes a fresh write look idle */
        msec_t since = run->real_now - policy_last_write(s);

        if (since < in->pol->min_idle)
                vd->flags |= VERDICT_RECENT_WRITE;
        if (s->owner == OWNER_UNVERIFIED || (!s->cwd && s->owner != OWNER_FOREIGN))
                vd->protections |= PROT_UNVERIFIED;
        if (s->owner == OWNER_FOREIGN)
                vd->protections |= PROT_FOREIGN;
        if (s->state == SESSION_CONFLICT)
                vd->protections |= PROT_CONFLICT;
        if (s->live || (vd->flags & VERDICT_RECENT_WRITE))
                vd->protections |= PROT_LIVE;
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
        /* the real clock, like min-idle: --now forecasts ages, it never ends a grace early */
        if (p->restore_grace > 0 && s->restored_at > 0 &&
            run->real_now - s->restored_at < p->restore_grace)
                vd->protections |= PROT_RESTORED;
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
        unsigned rank = 0;
        int r = 0;

        for (size_t k = 0; k < g->n_members; k++) {
                size_t i = g->members[k];
                Verdict *vd = &run->v->sessions[i];

                if (run->inv->sessions[i].state != SESSION_ACTIVE)
                        continue;
                if (rank >= VERDICT_RANK_MAX)
                        return -EOVERFLOW; /* Verdict.rank's width: 512k sessions in a project */
                vd->rank = ++rank;
                if (p->keep_latest > 0 && rank <= p->keep_latest)
                        vd->protections |= PROT_LATEST;
                if (policy_age_selects(p->max_age, run->info[i].idle))
                        r = policy_select(run, i, verb, "max-age",
                                          &(Measure){ .kind = MEASURE_AGE,
                                                      .key = "max-age",
                                                      .measured = run->info[i].idle,
                                                      .limit = p->max_age });
                if (r >= 0 && p->max_sessions > 0 && rank > p->max_sessions)
                        r = policy_select(run, i, verb, "max-sessions",
                                          &(Measure){ .kind = MEASURE_RANK,
                                                      .key = "max-sessions",
                                                      .measured = rank,
                                                      .limit = (int64_t)p->max_sessions });
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Shrink the sessions of one state in a project, oldest first, until at or below cap. */
static int policy_project_shrink(PolicyRun *run, const PolicyGroup *g, SessionState state,
                                 uint64_t cap, Verb verb, const char *rule) {
        uint64_t total = 0, projected;
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
                r = policy_select(run, i, verb, rule,
                                  &(Measure){ .kind = MEASURE_BYTES,
                                              .key = rule,
                                              .measured = (int64_t)total,
                                              .limit = (int64_t)cap });
                if (r < 0)
                        return r;
                if (policy_going(run, i))
                        projected -= run->info[i].size;
        }
        return 0;
}

/* How long session s has been in the archive: since qgc archived it (Session.archived_at,
 * session-times.h), else since its archived file's ctime (the rename into chats/archive/ set it;
 * of a compressed session, its .zst's, the compression: later, so never longer than the truth
 * unless the file was changed since, which makes it younger still). */
static msec_t policy_in_archive(const PolicyRun *run, const Session *s) {
        msec_t since = s->archived_at > 0 ? s->archived_at
                                          : (msec_t)(s->archived.ctime_ns / 1000000);
        return since > 0 ? MAX(run->now - since, (msec_t)0) : 0;
}

/* Archive tier: sessions in the archive longer than archive-max-age are deleted. */
static int policy_archive_age(PolicyRun *run, const PolicyGroup *g) {
        const Policy *p = g->pol;
        int r;

        for (size_t k = 0; k < g->n_members; k++) {
                size_t i = g->members[k];
                const Session *s = &run->inv->sessions[i];
                msec_t in_archive = policy_in_archive(run, s);

                if (s->state != SESSION_ARCHIVED ||
                    !policy_age_selects(p->archive_max_age, in_archive))
                        continue;
                r = policy_select(run, i, VERB_DELETE, "archive-max-age",
                                  &(Measure){ .kind = MEASURE_AGE,
                                              .key = "archive-max-age",
                                              .measured = in_archive,
                                              .limit = p->archive_max_age });
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Cold tier: archived sessions idle beyond compress-after that are not compressed yet are
 * compressed. One a rule deletes keeps the compression as its fallback (policy_blast()). */
static int policy_compress(PolicyRun *run, const PolicyGroup *g) {
        const Policy *p = g->pol;

        for (size_t k = 0; k < g->n_members; k++) {
                size_t i = g->members[k];
                const Session *s = &run->inv->sessions[i];
                PolicyInfo *in = &run->info[i];
                Measure m = { .kind = MEASURE_AGE, .key = "compress-after", .measured = in->idle,
                              .limit = p->compress_after };

                if (s->state != SESSION_ARCHIVED || session_is_cold(s) ||
                    !policy_age_selects(p->compress_after, in->idle))
                        continue;
                assert(p->compress_level <= VERDICT_COMPRESS_LEVEL_MAX); /* config: 1..19 */
                run->v->sessions[i].compress_level = (unsigned)p->compress_level;
                if (in->sel_verb == VERB_DELETE) {
                        VerdictFacts *f = policy_facts(&run->v->sessions[i]);

                        if (!f)
                                return -ENOMEM;
                        if (!f->fallback_rule) {
                                f->fallback = m;
                                f->fallback_rule = "compress-after";
                                f->fallback_verb = VERB_COMPRESS;
                        }
                        continue;
                }
                if (policy_select(run, i, VERB_COMPRESS, "compress-after", &m) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* All project-level rules of one project. */
static int policy_project(PolicyRun *run, const PolicyGroup *g) {
        Verb verb = g->pol->action == POLICY_ACTION_DELETE ? VERB_DELETE : VERB_ARCHIVE;
        int r;

        r = policy_project_age_count(run, g);
        if (r >= 0)
                r = policy_project_shrink(run, g, SESSION_ACTIVE, g->pol->max_size, verb,
                                          "max-size");
        if (r >= 0)
                r = policy_archive_age(run, g);
        if (r >= 0)
                r = policy_project_shrink(run, g, SESSION_ARCHIVED, g->pol->archive_max_size,
                                          VERB_DELETE, "archive-max-size");
        if (r >= 0)
                r = policy_compress(run, g);
        return r;
}

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
static void policy_orphans(PolicyRun *run) {
        const Policy *p = &run->cfg->defaults;

        for (size_t i = 0; i < run->inv->n_orphans; i++) {
                const Orphan *o = &run->inv->orphans[i];
                Verdict *vd = &run->v->orphans[i];
                /* the age the rule sees (--now), but never older than it really is: an orphan
                 * written a minute ago is not reclaimed by a forecast clock */
                msec_t idle = MAX(MIN(run->now, run->real_now) - o->mtime, (msec_t)0);
                const char *key;
                /* hygiene kinds have a key each (hygiene.h), the others orphan-min-age */
                msec_t limit = hygiene_limit(p, o->kind, &key);

                if (o->kind == ORPHAN_STALE_PROJECT)
                        continue; /* policy_stale_projects(), once every session is decided */

                vd->measure = (Measure){ .kind = MEASURE_AGE, .key = key, .measured = idle,
                                         .limit = limit };
                if (policy_orphan_protected(run, o)) {
                        vd->verb = VERB_KEEP;
                        vd->rule = protection_to_string(PROT_PROTECT);
                        vd->protections |= PROT_PROTECT;
                        vd->blocked_by = PROT_PROTECT;
                } else if (limit != MSEC_INFINITY && idle > limit) {
                        vd->verb = VERB_DELETE;
                        vd->rule = hygiene_kind(o->kind) ? key : "orphan";
                } else {
                        vd->verb = VERB_KEEP;
                        vd->rule = "none";
                }
        }
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
                r = policy_stale_decide(run->inv, i, &run->cfg->defaults,
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
        free(run->info);
        free(run->order);
        free(run->groups);
}

/* Per-session set-up: effective policy, idle time, counted size, protections. */
static void policy_prepare(PolicyRun *run) {
        for (size_t i = 0; i < run->inv->n_sessions; i++) {
                const Session *s = &run->inv->sessions[i];
                PolicyInfo *in = &run->info[i];

                in->pol = config_policy_for(run->cfg, policy_is_verified(s) ? s->cwd : NULL);
                if (!in->pol)
                        in->pol = &run->cfg->defaults;
                in->idle = MAX(run->now - s->last_activity, (msec_t)0);
                in->size = policy_size(run, s->bytes, s->bytes_alloc);
                in->group = SIZE_MAX;
                in->sel_verb = VERB_KEEP;
                policy_skip_protections(run, i);
                policy_keep_protections(run, i);
        }
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

        policy_prepare(&run);
        r = policy_build_groups(&run);
        for (size_t g = 0; r >= 0 && g < run.n_groups; g++)
                r = policy_project(&run, &run.groups[g]);
        if (r >= 0)
                policy_orphans(&run);
        for (size_t t = 0; r >= 0 && t < inv->n_trees; t++)
                r = policy_tree(&run, t, idx);
        for (size_t i = 0; r >= 0 && i < inv->n_sessions; i++)
                r = policy_finish(&run, i);
        if (r >= 0)
                r = policy_stale_projects(&run, /* after_limits= */ false);
        if (r >= 0)
                r = policy_blast(&run, opts);
        if (r >= 0)
                r = policy_caps_unmet(&run);
        if (r >= 0)
                r = policy_stale_projects(&run, /* after_limits= */ true);
        policy_run_done(&run);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(v);
        return 0;
}
