/* plan.c: the ordered plan of a run (every session and orphan with its verdict, the steps in front
 * of it) and qgc status's disk use per project. The JSON rendering is plan-json.c, the text
 * renderings are render.c and render-status.c. */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "plan.h"
#include "reason.h"
#include "strtable.h"
#include "text.h"

static bool plan_session_verified(const Session *s) {
        return s->cwd && (s->owner == OWNER_OK || s->owner == OWNER_WORKTREE ||
                          s->owner == OWNER_CLAIM);
}

const char *plan_item_group(const Plan *p, const PlanItem *it, bool *ret_verified) {
        bool verified = false;
        const char *g;

        if (it->is_orphan) {
                const Orphan *o = &p->inv->orphans[it->index];
                g = o->project_dir ?: "";
        } else {
                const Session *s = &p->inv->sessions[it->index];
                verified = plan_session_verified(s);
                g = verified ? s->cwd : (s->project_dir ?: "");
        }
        if (ret_verified)
                *ret_verified = verified;
        return g;
}

Verb plan_item_verb(const PlanItem *it) {
        return it->verdict ? it->verdict->verb : VERB_KEEP;
}

char *plan_item_reason(const Plan *p, const PlanItem *it) {
        if (!it->verdict)
                return strdup("");
        if (it->is_orphan) {
                const Orphan *o = &p->inv->orphans[it->index];

                return reason_orphan(it->verdict, o, p->inv->trees[o->tree].store);
        }
        const Session *s = &p->inv->sessions[it->index];

        return reason_verdict(it->verdict, s, p->inv->trees[s->tree].store);
}

void plan_compress_forecast(const Plan *p, PlanCompressForecast *ret) {
        const Inventory *inv = p->inv;
        PlanCompressForecast fc = {};
        double out = 0;

        for (size_t t = 0; t < inv->n_trees; t++) {
                uint64_t in = 0, n = 0, cold = 0, orig = 0;

                for (size_t k = 0; k < p->n_items; k++) {
                        const PlanItem *it = &p->items[k];
                        const Session *s;

                        if (it->is_orphan || plan_item_verb(it) != VERB_COMPRESS ||
                            plan_item_tree(p, it) != t)
                                continue;
                        s = &inv->sessions[it->index];
                        in += s->transcript_bytes + s->sidecar_bytes;
                        n++;
                }
                if (n == 0)
                        continue;
                for (size_t i = 0; i < inv->n_sessions; i++)
                        if (inv->sessions[i].tree == t &&
                            inventory_session_is_cold(&inv->sessions[i])) {
                                cold += inv->sessions[i].cold_bytes;
                                orig += inv->sessions[i].cold_orig;
                        }
                if (orig > 0 && cold > 0)
                        out += (double)in * (double)cold / (double)orig;
                else {
                        out += (double)in / PLAN_COMPRESS_DEFAULT_RATIO;
                        fc.defaulted = true;
                }
                fc.n += n;
                fc.bytes_in += in;
        }
        fc.bytes_out = (uint64_t)(out + 0.5);
        fc.measured = fc.n > 0 && !fc.defaulted;
        fc.ratio = fc.bytes_out > 0 ? (double)fc.bytes_in / (double)fc.bytes_out : 0;
        *ret = fc;
}

/* Is rule a cap whose shortfall plan_foreach_warning() reports itself (CapUnmet)? */
static bool plan_rule_is_cap(const char *rule) {
        return rule && (streq(rule, "tree-max-size") || streq(rule, "keep-free") ||
                        streq(rule, "max-size") || streq(rule, "max-sessions"));
}

/* plan_held_back(), of every held-back session or (caps = false) only of those a cap did not
 * select. */
static void plan_held_back_full(const Plan *p, bool caps, PlanHeldBack *ret) {
        PlanHeldBack h = {};

        for (size_t k = 0; k < p->n_items; k++) {
                const PlanItem *it = &p->items[k];
                const Verdict *vd = it->verdict;

                if (!it->is_orphan && vd && vd->verb == VERB_SKIP && vd->rule &&
                    streq(vd->rule, policy_rule_limit)) {
                        uint64_t bytes = p->inv->sessions[it->index].bytes;

                        if (vd->blocked_verb == VERB_ARCHIVE) {
                                h.n_limit_archive++;
                                h.bytes_limit_archive += bytes;
                        } else {
                                h.n_limit++;
                                h.bytes_limit += bytes;
                        }
                        continue;
                }
                if (it->is_orphan || !vd || !policy_verdict_held_by(vd))
                        continue;
                if (!caps && plan_rule_is_cap(policy_verdict_held_rule(vd)))
                        continue;
                h.n++;
                h.bytes += p->inv->sessions[it->index].bytes;
                if (!h.limit)
                        h.limit = policy_verdict_held_by(vd);
                else if (!streq(h.limit, policy_verdict_held_by(vd)))
                        h.limit = "max-deletions and max-deletions-percent";
                const char *rule = policy_verdict_held_rule(vd);
                if (rule && (streq(rule, "tree-max-size") || streq(rule, "keep-free")))
                        h.tree_cap = true;
        }
        *ret = h;
}

void plan_held_back(const Plan *p, PlanHeldBack *ret) {
        plan_held_back_full(p, true, ret);
}

/* "policy not met: 2 sessions (1.2M) not deleted: a file Qwen shares is one qgc does not edit
 * (limit)", or (archive) "... not archived: a sidecar to merge is larger than qgc merges
 * (limit)"; NULL on ENOMEM. */
static char *plan_limit_warning(size_t n, uint64_t bytes, bool archive) {
        char sz[FORMAT_BYTES_MAX];

        return util_strprintf("policy not met: %zu session%s (%s) %s (limit)", n, n == 1 ? "" : "s",
                              util_format_bytes(sz, sizeof sz, bytes),
                              archive ? "not archived: a sidecar to merge is larger than qgc merges"
                                      : "not deleted: a file Qwen shares is one qgc does not edit");
}

/* "policy not met: 3 sessions (12K) held back by max-deletions" ("tree cap not met: ..." when
 * h->tree_cap; plan_foreach_warning() reports a cap's held-back sessions in its CapUnmet line
 * instead); malloc'ed; NULL when nothing is held back or on ENOMEM. */
static char *plan_held_back_warning(const PlanHeldBack *h) {
        char sz[FORMAT_BYTES_MAX];

        if (h->n == 0)
                return NULL;
        return util_strprintf("%s not met: %zu session%s (%s) held back by %s",
                              h->tree_cap ? "tree cap" : "policy", h->n, h->n == 1 ? "" : "s",
                              util_format_bytes(sz, sizeof sz, h->bytes),
                              h->limit ?: "max-deletions");
}

int plan_foreach_warning(const Plan *p, PlanWarningFn fn, void *userdata) {
        const Verdicts *v = p->verdicts;
        PlanHeldBack h;
        int r;

        for (size_t k = 0; v && k < v->n_caps; k++) {
                const CapUnmet *c = &v->caps[k];
                _cleanup_free_ char *dir = p->inv->n_trees > 1 && c->tree < p->inv->n_trees
                                                   ? strdup(p->inv->trees[c->tree].runtime_dir)
                                                   : NULL;
                _cleanup_free_ char *raw = reason_cap_unmet(c, dir);
                /* a project's path and a tree's directory come from the user's files */
                _cleanup_free_ char *w = raw ? text_clean(raw, TEXT_TERMINAL) : NULL;

                if (!w)
                        return -ENOMEM;
                r = fn(userdata, w, false);
                if (r < 0)
                        return r;
        }
        if (!v)
                return 0;
        plan_held_back_full(p, false, &h);
        if (h.n > 0) {
                _cleanup_free_ char *w = plan_held_back_warning(&h);

                if (!w)
                        return -ENOMEM;
                r = fn(userdata, w, true);
                if (r < 0)
                        return r;
        }
        for (int archive = 0; archive < 2; archive++) {
                size_t n = archive ? h.n_limit_archive : h.n_limit;
                _cleanup_free_ char *w = NULL;

                if (n == 0)
                        continue;
                w = plan_limit_warning(n, archive ? h.bytes_limit_archive : h.bytes_limit, archive);
                if (!w)
                        return -ENOMEM;
                r = fn(userdata, w, false);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Display order of verbs: what changes first. */
static int plan_verb_order(Verb v) {
        switch (v) {
        case VERB_DELETE:
                return 0;
        case VERB_ARCHIVE:
                return 1;
        case VERB_COMPRESS:
                return 2;
        case VERB_SKIP:
                return 3;
        default:
                return 4;
        }
}

size_t plan_item_tree(const Plan *p, const PlanItem *it) {
        return it->is_orphan ? p->inv->orphans[it->index].tree : p->inv->sessions[it->index].tree;
}

static const char *plan_item_name(const Plan *p, const PlanItem *it) {
        return it->is_orphan ? (p->inv->orphans[it->index].name ?: "")
                             : p->inv->sessions[it->index].id;
}

/* The sort key of one item (tree, sessions before orphans, verified groups before unverified,
 * group, verb, id, index), gathered once so the sort does not chase pointers. */
typedef struct PlanKey {
        const char *group;
        const char *name;
        uint32_t item; /* position in the unsorted items: same order as the index within a kind */
        uint32_t tree;
        uint8_t orphan, verified, verb;
} PlanKey;

static int plan_cmp_key_group(const void *x, const void *y, void *userdata);

static int plan_cmp_key(const void *x, const void *y) {
        const PlanKey *a = x, *b = y;
        int c;

        c = plan_cmp_key_group(x, y, NULL);
        if (c != 0)
                return c;
        if (a->verb != b->verb)
                return a->verb < b->verb ? -1 : 1;
        c = a->name == b->name ? 0 : strcmp(a->name, b->name);
        if (c != 0)
                return c;
        return a->item < b->item ? -1 : a->item > b->item ? 1 : 0;
}

/* plan_cmp_key()'s span key: (tree, orphan, verified, group). */
static int plan_cmp_key_group(const void *x, const void *y, void *userdata) {
        const PlanKey *a = x, *b = y;

        if (a->tree != b->tree)
                return a->tree < b->tree ? -1 : 1;
        if (a->orphan != b->orphan)
                return a->orphan ? 1 : -1;
        if (a->verified != b->verified)
                return a->verified ? -1 : 1;
        return a->group == b->group ? 0 : strcmp(a->group, b->group);
}

/* A run of keys with one span key (tree, orphan, verified, group), as the inventory's order
 * leaves them: a project's sessions together. */
typedef struct PlanRun {
        size_t start, n;
} PlanRun;

static int plan_cmp_run(const void *x, const void *y, void *userdata) {
        const PlanKey *keys = userdata;

        return plan_cmp_key_group(&keys[((const PlanRun *)x)->start],
                                  &keys[((const PlanRun *)y)->start], NULL);
}

/* Sort keys in plan_cmp_key() order: the runs are put in span key order and each is sorted on
 * its own, the order of one qsort() of the whole with small sorts (util.h's util_sort_by_runs(),
 * but what is sorted is read through runs, not copied back). *ret_runs: the runs in order (the
 * keys of run j at keys[runs[j].start...]). 1: sorted; 0: a span key has two runs (nothing
 * changed); -ENOMEM. */
static int plan_sort_runs(PlanKey *keys, size_t n, PlanRun **ret_runs, size_t *ret_n_runs) {
        _cleanup_free_ PlanRun *runs = NULL;
        size_t n_runs = 0, alloc = 0;

        for (size_t i = 0; i < n; i++) {
                if (i > 0 && plan_cmp_key_group(&keys[i - 1], &keys[i], NULL) == 0) {
                        runs[n_runs - 1].n++;
                        continue;
                }
                if (util_greedy_realloc((void **)&runs, &alloc, n_runs + 1, sizeof(PlanRun)) < 0)
                        return -ENOMEM;
                runs[n_runs++] = (PlanRun){ .start = i, .n = 1 };
        }
        qsort_r(runs, n_runs, sizeof(PlanRun), plan_cmp_run, keys);
        for (size_t j = 1; j < n_runs; j++)
                if (plan_cmp_run(&runs[j - 1], &runs[j], keys) == 0)
                        return 0;
        for (size_t j = 0; j < n_runs; j++)
                qsort(keys + runs[j].start, runs[j].n, sizeof(PlanKey), plan_cmp_key);
        *ret_runs = TAKE_PTR(runs);
        *ret_n_runs = n_runs;
        return 1;
}

/* Fill p->items in plan_cmp_key() order. The order is found on compact keys made straight from
 * the inventory (key.item: a session's index, or n_sessions + an orphan's), and p->items is made
 * from them once sorted, so the items are never held twice. -EOVERFLOW (past 2^32 items or
 * trees), -ENOMEM. */
static int plan_sort(Plan *p, size_t n) {
        const Inventory *inv = p->inv;
        _cleanup_free_ PlanKey *keys = NULL;
        _cleanup_free_ PlanRun *runs = NULL;
        size_t max_tree = 0, n_runs = 0, k = 0;
        int r;

        for (size_t i = 0; i < inv->n_sessions; i++)
                max_tree = MAX(max_tree, (size_t)inv->sessions[i].tree);
        for (size_t i = 0; i < inv->n_orphans; i++)
                max_tree = MAX(max_tree, inv->orphans[i].tree);
        if (n > UINT32_MAX || max_tree > UINT32_MAX)
                return -EOVERFLOW;
        keys = calloc(n ?: 1, sizeof(PlanKey));
        if (!keys)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                bool orphan = i >= inv->n_sessions;
                PlanItem it = { .is_orphan = orphan, .index = orphan ? i - inv->n_sessions : i };
                bool verified;

                it.verdict = orphan ? &p->verdicts->orphans[it.index]
                                    : &p->verdicts->sessions[it.index];
                keys[i] = (PlanKey){
                        .group = plan_item_group(p, &it, &verified),
                        .name = plan_item_name(p, &it),
                        .item = (uint32_t)i,
                        .tree = (uint32_t)plan_item_tree(p, &it),
                        .orphan = orphan,
                        .verified = verified,
                        .verb = (uint8_t)plan_verb_order(plan_item_verb(&it)),
                };
        }
        /* a project's sessions come together: sort each run */
        r = n < 2 ? 0 : plan_sort_runs(keys, n, &runs, &n_runs);
        if (r < 0)
                return r;
        if (r == 0) {
                qsort(keys, n, sizeof(PlanKey), plan_cmp_key);
                runs = malloc(sizeof(PlanRun));
                if (!runs)
                        return -ENOMEM;
                runs[0] = (PlanRun){ .start = 0, .n = n };
                n_runs = 1;
        }
        p->items = calloc(n ?: 1, sizeof(PlanItem));
        if (!p->items)
                return -ENOMEM;
        for (size_t j = 0; j < n_runs; j++)
                for (size_t i = runs[j].start; i < runs[j].start + runs[j].n; i++) {
                        size_t x = keys[i].item;
                        bool orphan = x >= inv->n_sessions;

                        p->items[k++] = (PlanItem){
                                .is_orphan = orphan,
                                .index = orphan ? x - inv->n_sessions : x,
                                .verdict = orphan ? &p->verdicts->orphans[x - inv->n_sessions]
                                                  : &p->verdicts->sessions[x],
                        };
                }
        p->n_items = k;
        return 0;
}

/* An empty plan over inv at now; NULL when memory is short. */
static Plan *plan_alloc(const Inventory *inv, msec_t now) {
        Plan *p = calloc(1, sizeof(Plan));

        if (p) {
                p->inv = inv;
                p->now = now;
        }
        return p;
}

int plan_build(const Inventory *inv, Verdicts **verdicts, msec_t now, Plan **ret) {
        _cleanup_(plan_freep) Plan *p = NULL;
        size_t n;
        int r;

        if (!inv || !verdicts || !*verdicts || !ret)
                return -EINVAL;
        if ((*verdicts)->n_sessions != inv->n_sessions || (*verdicts)->n_orphans != inv->n_orphans)
                return -EINVAL;
        p = plan_alloc(inv, now);
        if (!p)
                return -ENOMEM;
        p->verdicts = TAKE_PTR(*verdicts);
        n = inv->n_sessions + inv->n_orphans;
        r = plan_sort(p, n);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}

int plan_new_steps(const Inventory *inv, msec_t now, Plan **ret) {
        Plan *p;

        if (!inv || !ret)
                return -EINVAL;
        p = plan_alloc(inv, now);
        if (!p)
                return -ENOMEM;
        p->is_restore = true;
        *ret = p;
        return 0;
}

static const char *const plan_step_kind_table[_PLAN_STEP_KIND_MAX] = {
        [PLAN_STEP_RECOVER_DELETE] = "finish-delete",
        [PLAN_STEP_RECOVER_TEMP] = "remove-temporary",
        [PLAN_STEP_RESTORE] = "restore",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(plan_step_kind, PlanStepKind);

void plan_step_done(PlanStep *step) {
        if (!step)
                return;
        for (size_t i = 0; i < step->n_paths; i++) {
                free(step->paths[i].from);
                free(step->paths[i].to);
        }
        free(step->paths);
        free(step->session_id);
        free(step->dir);
        free(step->name);
        free(step->why);
        *step = (PlanStep){};
}

int plan_step_add_path(PlanStep *step, const char *from, const char *to) {
        PlanPath *n = realloc(step->paths, (step->n_paths + 1) * sizeof(PlanPath));
        char *f = strdup(from ?: ""), *t = to ? strdup(to) : NULL;

        if (n)
                step->paths = n;
        if (!n || !f || (to && !t)) {
                free(f);
                free(t);
                return -ENOMEM;
        }
        step->paths[step->n_paths++] = (PlanPath){ .from = f, .to = t };
        return 0;
}

int plan_add_step(Plan *p, PlanStep *step) {
        if (util_greedy_realloc((void **)&p->steps, &p->n_steps_alloc, p->n_steps + 1,
                                sizeof(PlanStep)) < 0) {
                plan_step_done(step);
                return -ENOMEM;
        }
        p->steps[p->n_steps++] = *step;
        *step = (PlanStep){};
        return 0;
}

int plan_take_steps(Plan *p, Plan *from) {
        int r = 0;

        for (size_t i = 0; i < from->n_steps; i++)
                if (r >= 0)
                        r = plan_add_step(p, &from->steps[i]);
                else
                        plan_step_done(&from->steps[i]);
        from->n_steps = 0;
        return r;
}

Plan *plan_free(Plan *p) {
        if (!p)
                return NULL;
        for (size_t i = 0; i < p->n_steps; i++)
                plan_step_done(&p->steps[i]);
        free(p->steps);
        policy_verdicts_free(p->verdicts);
        free(p->items);
        free(p);
        return NULL;
}

/* ---- qgc status: disk use per project */


/* Largest first, then tree and name. */
static int plan_use_cmp(const void *x, const void *y) {
        const PlanUse *a = x, *b = y;
        if (a->tree != b->tree)
                return a->tree < b->tree ? -1 : 1;
        if (a->bytes_alloc != b->bytes_alloc)
                return a->bytes_alloc > b->bytes_alloc ? -1 : 1;
        if (a->bytes != b->bytes)
                return a->bytes > b->bytes ? -1 : 1;
        if (a->verified != b->verified)
                return a->verified ? -1 : 1;
        return strcmp(a->group, b->group);
}


static const char *plan_session_group(const Session *s) {
        return plan_session_verified(s) ? s->cwd : (s->project_dir ?: "");
}

/* Sessions by tree, verified first, project. */
static int plan_session_cmp(const void *x, const void *y, void *userdata) {
        const Inventory *inv = userdata;
        const Session *a = &inv->sessions[*(const size_t *)x], *b = &inv->sessions[*(const size_t *)y];
        bool va = plan_session_verified(a), vb = plan_session_verified(b);

        if (a->tree != b->tree)
                return a->tree < b->tree ? -1 : 1;
        if (va != vb)
                return va ? -1 : 1;
        return strcmp(plan_session_group(a), plan_session_group(b));
}

/* Aggregate the inventory per (tree, project), largest first within each tree. */
int plan_status_collect(const Inventory *inv, PlanUse **ret, size_t *ret_n) {
        _cleanup_free_ PlanUse *u = calloc(inv->n_sessions ?: 1, sizeof(PlanUse));
        _cleanup_free_ size_t *idx = calloc(inv->n_sessions ?: 1, sizeof(size_t));
        size_t n = 0;

        if (!u || !idx)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_sessions; i++)
                idx[i] = i;
        qsort_r(idx, inv->n_sessions, sizeof(size_t), plan_session_cmp, (void *)inv);
        for (size_t k = 0; k < inv->n_sessions; k++) {
                const Session *s = &inv->sessions[idx[k]];
                bool verified = plan_session_verified(s);
                const char *g = plan_session_group(s);
                PlanUse *cur = n > 0 ? &u[n - 1] : NULL;

                if (!cur || cur->tree != s->tree || cur->verified != verified ||
                    !streq(cur->group, g)) {
                        cur = &u[n++];
                        *cur = (PlanUse){ .tree = s->tree,
                                          .group = g,
                                          .verified = verified,
                                          .project_dir = s->project_dir,
                                          .oldest = s->last_activity,
                                          .newest = s->last_activity };
                }
                if (s->state == SESSION_ARCHIVED)
                        cur->n_archived++;
                else
                        cur->n_active++;
                cur->bytes += s->bytes;
                cur->bytes_alloc += s->bytes_alloc;
                cur->oldest = MIN(cur->oldest, s->last_activity);
                cur->newest = MAX(cur->newest, s->last_activity);
        }
        qsort(u, n, sizeof(PlanUse), plan_use_cmp);
        *ret = TAKE_PTR(u);
        *ret_n = n;
        return 0;
}
