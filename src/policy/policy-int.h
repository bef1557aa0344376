/* policy-int.h: what policy.c (the evaluation), policy-caps.c (disk caps, blast radius) and
 * policy-reason.c (names, and the verdict of a session from its selection and protections)
 * share. Not an interface: only these three
 * include it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "inventory.h"
#include "macro.h"
#include "policy.h"
#include "util.h"


#define PROT_SKIP_MASK (PROT_UNVERIFIED | PROT_FOREIGN | PROT_CONFLICT | PROT_LIVE)
#define PROT_KEEP_MASK                                                                             \
        (PROT_PROTECT | PROT_MIN_AGE | PROT_PINNED | PROT_TITLED | PROT_SCHEDULED | PROT_WORKTREE | \
         PROT_LATEST | PROT_RESTORED)
#define PROT_BLOCK_MASK (PROT_SKIP_MASK | PROT_KEEP_MASK)

/* Per-session working state of one evaluation. */
typedef struct PolicyInfo {
        const Policy *pol;
        msec_t idle;         /* now - last_activity, never negative */
        uint64_t size;       /* bytes counted by size caps (allocated or apparent) */
        size_t group;        /* index into PolicyRun.groups, SIZE_MAX when not verified */
        Verb sel_verb;       /* what a rule selected, VERB_KEEP = nothing; until
                              * policy_finish() the verdict's rule and measure are that rule's,
                              * and its facts->fallback_rule an archive (compression) a deletion
                              * replaced */
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
} PolicyRun;

/* policy.c */
VerdictFacts *policy_facts(Verdict *vd);
uint64_t policy_size(const PolicyRun *run, uint64_t bytes, uint64_t bytes_alloc);
bool policy_tasks_block(const PolicyRun *run, size_t i);
bool policy_deleting(const PolicyRun *run, size_t i);
int policy_select(PolicyRun *run, size_t i, Verb verb, const char *rule, const Measure *m);
int policy_cmp_oldest(const void *x, const void *y, void *userdata);

/* policy-caps.c */
int policy_tree(PolicyRun *run, size_t t, size_t *idx);
int policy_blast(PolicyRun *run, const PolicyOptions *opts);
int policy_caps_unmet(PolicyRun *run);

/* policy-reason.c */
int policy_finish(PolicyRun *run, size_t i);
