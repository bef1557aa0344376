/* policy-caps.c: the limits applied after every project's rules (policy.c's evaluation order,
 * steps 5 and 7): the disk caps of each tree (tree max-size down to its low watermark,
 * keep-free; oldest first across the tree, always deleting) and the blast radius (max-deletions
 * per run, per project and in percent of a project; the newest excess held back). The project
 * caps (max-sessions, max-size) stay in policy.c with the project rules. Pure, like policy.c. */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "macro.h"
#include "policy.h"
#include "policy-int.h"

/* Delete oldest first across the tree until `enough` says so; disk caps always delete. A
 * selected session's facts get the cap's target (tree max-size) or percent (keep-free). */
static int policy_tree_walk(PolicyRun *run, const size_t *idx, size_t n, const char *rule,
                            const Measure *m, const VerdictFacts *cap, uint64_t *progress,
                            uint64_t goal, bool up, bool alloc) {
        int r;

        for (size_t k = 0; k < n; k++) {
                size_t i = idx[k];
                const Session *s = &run->inv->sessions[i];
                if (up ? *progress >= goal : *progress <= goal)
                        break;
                if (policy_deleting(run, i))
                        continue;
                r = policy_select(run, i, VERB_DELETE, rule, m);
                if (r < 0)
                        return r;
                if (r > 0) {
                        VerdictFacts *f = policy_facts(&run->v->sessions[i]);

                        if (!f)
                                return -ENOMEM;
                        f->target = cap->target;
                        f->percent = cap->percent;
                }
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

uint64_t policy_tree_counted(const Inventory *inv, size_t t, bool allocated, TreeCounted *ret) {
        TreeCounted c = {};

        for (size_t i = 0; i < inv->n_sessions; i++)
                if (inv->sessions[i].tree == t) {
                        c.session_bytes += allocated ? inv->sessions[i].bytes_alloc
                                                     : inv->sessions[i].bytes;
                        c.n_sessions++;
                }
        for (size_t i = 0; i < inv->n_orphans; i++)
                if (inv->orphans[i].tree == t) {
                        c.orphan_bytes += allocated ? inv->orphans[i].bytes_alloc
                                                    : inv->orphans[i].bytes;
                        c.n_orphans++;
                }
        if (ret)
                *ret = c;
        return c.session_bytes + c.orphan_bytes;
}

/* Tree max-size (to the low watermark) and keep-free for tree t. */
int policy_tree(PolicyRun *run, size_t t, size_t *idx) {
        const TreeLimits *tl = &run->cfg->tree;
        const Tree *tree = &run->inv->trees[t];
        uint64_t total = 0, deleted = 0;
        bool sorted = false;
        size_t n = 0;
        int r;

        /* a tree that was not fully listed: its total and its oldest sessions are unknown */
        if (tree->incomplete)
                return 0;
        total = policy_tree_counted(run->inv, t, tl->count_allocated, NULL);
        for (size_t i = 0; i < run->inv->n_sessions; i++) {
                if (run->inv->sessions[i].tree != t)
                        continue;
                idx[n++] = i;
                if (policy_deleting(run, i))
                        deleted += run->info[i].size;
        }
        for (size_t i = 0; i < run->inv->n_orphans; i++) {
                const Orphan *o = &run->inv->orphans[i];
                if (o->tree == t && run->v->orphans[i].verb == VERB_DELETE)
                        deleted += policy_size(run, o->bytes, o->bytes_alloc);
        }
        /* idx is put in age order only when a cap walks it (most runs have none in effect) */
        if (tl->max_size > 0 && total > tl->max_size) {
                uint64_t target = tl->low_watermark > 0 && tl->low_watermark < tl->max_size
                                          ? tl->low_watermark
                                          : tl->max_size;
                uint64_t projected = total - MIN(deleted, total);
                Measure m = { .kind = MEASURE_BYTES,
                              .key = "max-size",
                              .measured = (int64_t)total,
                              .limit = (int64_t)tl->max_size };

                qsort_r(idx, n, sizeof(size_t), policy_cmp_oldest, (void *)run->inv);
                sorted = true;
                r = policy_tree_walk(run, idx, n, "tree-max-size", &m,
                                     &(VerdictFacts){ .target = (int64_t)target }, &projected,
                                     target, /* up= */ false, /* alloc= */ false);
                if (r < 0)
                        return r;
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
                Measure m = { .kind = MEASURE_BYTES,
                              .key = "keep-free",
                              .measured = (int64_t)tree->fs_avail,
                              .limit = (int64_t)floor_bytes };
                VerdictFacts cap = { .percent = tl->keep_free.is_percent ? tl->keep_free.percent
                                                                         : 0 };

                if (!sorted)
                        qsort_r(idx, n, sizeof(size_t), policy_cmp_oldest, (void *)run->inv);
                r = policy_tree_walk(run, idx, n, "keep-free", &m, &cap, &freed,
                                     floor_bytes - tree->fs_avail, /* up= */ true,
                                     /* alloc= */ true);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Blast radius: the newest deletions beyond the run's and the projects' limits are skipped. */
int policy_blast(PolicyRun *run, const PolicyOptions *opts) {
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
                VerdictFacts held = {};
                const char *held_by;

                if (g == SIZE_MAX)
                        continue; /* cannot happen: unverified sessions are skipped */
                if (global > 0 && n_global >= global) {
                        held_by = "max-deletions";
                        held.held = (Measure){ .measured = (int64_t)n_global,
                                               .limit = (int64_t)global };
                } else if (p->max_deletions > 0 && per_group[g] >= p->max_deletions) {
                        held_by = "max-deletions";
                        held.held = (Measure){ .measured = (int64_t)per_group[g],
                                               .limit = (int64_t)p->max_deletions };
                        held.held_project = true;
                } else if (p->max_deletions_percent > 0 &&
                           (double)(per_group[g] + 1) >
                                   p->max_deletions_percent * (double)group_size[g] / 100.0) {
                        held_by = "max-deletions-percent";
                        held.held = (Measure){ .measured = (int64_t)per_group[g],
                                               .limit = (int64_t)group_size[g] };
                        held.held_percent = p->max_deletions_percent;
                } else {
                        n_global++;
                        per_group[g]++;
                        continue;
                }
                if (!policy_facts(vd))
                        return -ENOMEM;
                held.held.kind = MEASURE_COUNT;
                held.held.key = held_by;
                vd->facts->held = held.held;
                vd->facts->held_percent = held.held_percent;
                vd->facts->held_project = held.held_project;
                vd->facts->held_by = held_by;
                vd->facts->held_rule = vd->rule;
                if (vd->facts->fallback_rule) {
                        /* a disk cap wanted it deleted, a project rule archives it anyway */
                        vd->verb = vd->facts->fallback_verb;
                        vd->rule = vd->facts->fallback_rule;
                        vd->measure = vd->facts->fallback;
                } else {
                        /* skipped: what it blocked is the deletion (measure stays the rule's) */
                        vd->verb = VERB_SKIP;
                        vd->rule = protection_to_string(PROT_BLAST);
                        vd->blocked_by = PROT_BLAST;
                        vd->blocked_verb = VERB_DELETE;
                        vd->blocked_rule = vd->facts->held_rule;
                }
                vd->protections |= PROT_BLAST;
        }
        return 0;
}

/* Count session i (bytes) as holding cap c, when something kept it although a rule wanted it
 * gone: a deletion limit, or the protection that won. Others are not holders. */
static void policy_cap_hold(const PolicyRun *run, CapUnmet *c, size_t i, uint64_t bytes) {
        const Verdict *vd = &run->v->sessions[i];
        Protection prot = 0;
        const char *limit = NULL;

        if (verdict_held_by(vd) && (vd->protections & PROT_BLAST))
                limit = verdict_held_by(vd);
        else if (vd->blocked_by && vd->blocked_verb != VERB_KEEP)
                prot = vd->blocked_by;
        else
                return;
        for (size_t k = 0; k < c->n_held; k++)
                if (c->held[k].prot == prot && c->held[k].limit == limit) {
                        c->held[k].n++;
                        c->held[k].bytes += bytes;
                        return;
                }
        if (c->n_held < CAP_HOLDERS_MAX)
                c->held[c->n_held++] = (CapHolder){ .prot = prot, .limit = limit, .n = 1,
                                                    .bytes = bytes };
}

static int policy_cap_add(PolicyRun *run, const CapUnmet *c) {
        Verdicts *v = run->v;
        CapUnmet *caps = reallocarray(v->caps, v->n_caps + 1, sizeof(CapUnmet));

        if (!caps)
                return -ENOMEM;
        v->caps = caps;
        v->caps[v->n_caps++] = *c;
        return 0;
}

/* The tree caps of tree t that the plan leaves unmet: what stays (or is free) after every
 * planned deletion, and who holds it. */
static int policy_tree_unmet(PolicyRun *run, size_t t) {
        const TreeLimits *tl = &run->cfg->tree;
        const Tree *tree = &run->inv->trees[t];
        const Inventory *inv = run->inv;
        uint64_t total, deleted = 0, freed = 0, orphans_n = 0, orphans_b = 0;
        int r;

        if (tree->incomplete)
                return 0;
        total = policy_tree_counted(inv, t, tl->count_allocated, NULL);
        for (size_t i = 0; i < inv->n_sessions; i++)
                if (inv->sessions[i].tree == t && run->v->sessions[i].verb == VERB_DELETE) {
                        deleted += run->info[i].size;
                        freed += inv->sessions[i].bytes_alloc;
                }
        for (size_t i = 0; i < inv->n_orphans; i++) {
                const Orphan *o = &inv->orphans[i];
                if (o->tree != t)
                        continue;
                if (run->v->orphans[i].verb == VERB_DELETE) {
                        deleted += policy_size(run, o->bytes, o->bytes_alloc);
                        freed += o->bytes_alloc;
                } else {
                        orphans_n++;
                        orphans_b += policy_size(run, o->bytes, o->bytes_alloc);
                }
        }
        if (tl->max_size > 0 && total - MIN(deleted, total) > tl->max_size) {
                CapUnmet c = { .cap = "tree-max-size", .tree = t,
                               .after = total - MIN(deleted, total), .limit = tl->max_size };

                for (size_t i = 0; i < inv->n_sessions; i++)
                        if (inv->sessions[i].tree == t && run->v->sessions[i].verb != VERB_DELETE)
                                policy_cap_hold(run, &c, i, run->info[i].size);
                if (orphans_n > 0 && c.n_held < CAP_HOLDERS_MAX)
                        c.held[c.n_held++] = (CapHolder){ .n = orphans_n, .bytes = orphans_b };
                r = policy_cap_add(run, &c);
                if (r < 0)
                        return r;
        }
        if (tl->keep_free.is_set && tree->fs_known) {
                uint64_t floor_bytes = tl->keep_free.is_percent
                                               ? (uint64_t)floor((double)tree->fs_size *
                                                                 tl->keep_free.percent / 100.0)
                                               : tl->keep_free.bytes;
                CapUnmet c = { .cap = "keep-free", .tree = t, .after = tree->fs_avail + freed,
                               .limit = floor_bytes,
                               .percent = tl->keep_free.is_percent ? tl->keep_free.percent : 0 };

                if (c.after >= floor_bytes)
                        return 0;
                for (size_t i = 0; i < inv->n_sessions; i++)
                        if (inv->sessions[i].tree == t && run->v->sessions[i].verb != VERB_DELETE)
                                policy_cap_hold(run, &c, i, inv->sessions[i].bytes_alloc);
                return policy_cap_add(run, &c);
        }
        return 0;
}

/* A project's max-size and max-sessions on its active sessions: those that stay active after
 * the plan (neither archived nor deleted), and who holds them. */
static int policy_project_unmet(PolicyRun *run, const PolicyGroup *g) {
        const Policy *p = g->pol;
        uint64_t n = 0, bytes = 0;
        int r;

        if (p->max_size == 0 && p->max_sessions == 0)
                return 0;
        for (size_t k = 0; k < g->n_members; k++) {
                size_t i = g->members[k];
                Verb vb = run->v->sessions[i].verb;

                if (run->inv->sessions[i].state != SESSION_ACTIVE || vb == VERB_ARCHIVE ||
                    vb == VERB_DELETE)
                        continue;
                n++;
                bytes += run->info[i].size;
        }
        for (unsigned which = 0; which < 2; which++) {
                CapUnmet c = { .tree = g->tree, .project = g->cwd };

                if (which == 0 && p->max_size > 0 && bytes > p->max_size)
                        c.cap = "max-size", c.after = bytes, c.limit = p->max_size;
                else if (which == 1 && p->max_sessions > 0 && n > p->max_sessions)
                        c.cap = "max-sessions", c.after = n, c.limit = p->max_sessions;
                else
                        continue;
                for (size_t k = 0; k < g->n_members; k++) {
                        size_t i = g->members[k];
                        Verb vb = run->v->sessions[i].verb;

                        /* max-sessions: the newest max-sessions stay anyway; only those
                         * beyond it hold the cap */
                        if (run->inv->sessions[i].state == SESSION_ACTIVE &&
                            vb != VERB_ARCHIVE && vb != VERB_DELETE &&
                            (which == 0 || run->v->sessions[i].rank > p->max_sessions))
                                policy_cap_hold(run, &c, i, run->info[i].size);
                }
                r = policy_cap_add(run, &c);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Every cap the plan leaves unmet (Verdicts.caps), after the deletion limits: trees first. */
int policy_caps_unmet(PolicyRun *run) {
        int r;

        for (size_t t = 0; t < run->inv->n_trees; t++) {
                r = policy_tree_unmet(run, t);
                if (r < 0)
                        return r;
        }
        for (size_t g = 0; g < run->n_groups; g++) {
                r = policy_project_unmet(run, &run->groups[g]);
                if (r < 0)
                        return r;
        }
        return 0;
}
