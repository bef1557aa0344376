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
