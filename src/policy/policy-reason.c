/* policy-reason.c: what a verdict is. The verb and protection names (strtable.h), and the
 * verdict of a session from its selection and protections: which protection wins (blocked_by)
 * and what it blocked (blocked_verb, blocked_rule and the rule's measure). No text: the reason
 * is rendered from these at the edge (reason.c). Pure, like policy.c. */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "policy.h"
#include "policy-int.h"
#include "strtable.h"

static const char *const verb_table[_VERB_MAX] = {
        [VERB_KEEP] = "keep",
        [VERB_ARCHIVE] = "archive",
        [VERB_DELETE] = "delete",
        [VERB_SKIP] = "skip",
        [VERB_COMPRESS] = "compress",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(verb, Verb);

/* indexed by the bit number of a Protection */
static const char *const protection_bit_table[_PROT_MAX] = {
        "live",     "pinned",  "titled",     "scheduled", "worktree",     "keep-latest",
        "min-age",  "unverified", "foreign", "conflict",  "blast-radius", "protect",
        "restore-grace",
};

static DEFINE_STRING_TABLE_TO_STRING_FUNC(protection_bit_to_string, protection_bit_table, int);

/* The name of a single protection bit; NULL for none, several or one outside the table. */
const char *protection_to_string(Protection p) {
        unsigned u = (unsigned)p;

        if (u == 0 || (u & (u - 1)) != 0)
                return NULL;
        return protection_bit_to_string(__builtin_ctz(u));
}

/* The winning protection of a mask, in priority order (0 when none). */
static Protection policy_first_protection(unsigned prot) {
        static const Protection order[] = { PROT_UNVERIFIED, PROT_FOREIGN, PROT_CONFLICT,
                                            PROT_LIVE,       PROT_PROTECT, PROT_RESTORED,
                                            PROT_MIN_AGE,    PROT_PINNED,
                                            PROT_TITLED,     PROT_SCHEDULED, PROT_WORKTREE,
                                            PROT_LATEST,     PROT_BLAST };
        for (size_t k = 0; k < ELEMENTSOF(order); k++)
                if (prot & order[k])
                        return order[k];
        return 0;
}

/* A protection p won over what a rule selected (nothing when sel_verb is VERB_KEEP; the
 * verdict's measure is the selecting rule's). */
static void policy_block(Verdict *vd, const PolicyInfo *in, Verb verb, Protection p) {
        vd->blocked_rule = in->sel_verb != VERB_KEEP ? vd->rule : NULL;
        vd->blocked_verb = in->sel_verb;
        vd->blocked_by = p;
        vd->verb = verb;
        vd->rule = protection_to_string(p);
        if (in->sel_verb == VERB_KEEP)
                vd->measure = (Measure){};
}

/* The facts a protection's reason quotes: a write within min-idle (skip-class), min-age and
 * keep-latest and restore-grace (keep-class, all of them are listed). 0 or -ENOMEM. */
static int policy_block_facts(PolicyRun *run, size_t i) {
        const Session *s = &run->inv->sessions[i];
        const Policy *p = run->info[i].pol;
        Verdict *vd = &run->v->sessions[i];
        VerdictFacts *f;

        if (!(vd->flags & VERDICT_RECENT_WRITE) &&
            !(vd->verb == VERB_KEEP &&
              (vd->protections & (PROT_MIN_AGE | PROT_LATEST | PROT_RESTORED))))
                return 0;
        f = policy_facts(vd);
        if (!f)
                return -ENOMEM;
        if (vd->flags & VERDICT_RECENT_WRITE) {
                /* the real clock, as policy_skip_protections() measured it */
                f->since_write = run->real_now - (s->last_write > 0 ? s->last_write : s->mtime);
                f->min_idle = p->min_idle;
        }
        if (vd->protections & PROT_MIN_AGE) {
                msec_t born = s->first_record > 0 ? s->first_record : s->mtime;

                f->age = MAX(run->now - born, (msec_t)0);
                f->min_age = p->min_age;
        }
        if (vd->protections & PROT_LATEST)
                f->keep_latest = p->keep_latest;
        if (vd->protections & PROT_RESTORED) {
                f->restored_ago = MAX(run->real_now - s->restored_at, (msec_t)0);
                f->restore_grace = p->restore_grace;
        }
        return 0;
}

const char policy_rule_limit[] = "limit";

/* Turn the selections and protections of session i into its verdict. 0 or -ENOMEM. */
int policy_finish(PolicyRun *run, size_t i) {
        const Session *s = &run->inv->sessions[i];
        PolicyInfo *in = &run->info[i];
        Verdict *vd = &run->v->sessions[i];
        const Policy *p = in->pol;
        bool selected = in->sel_verb != VERB_KEEP;

        if (vd->protections & PROT_SKIP_MASK)
                policy_block(vd, in, VERB_SKIP,
                             policy_first_protection(vd->protections & PROT_SKIP_MASK));
        else if (selected && p->keep_titled && s->title_unread) {
                /* the scan judged no rule could select it and left its title unread: never act
                 * without knowing whether a person titled it. A scan that follows
                 * policy_title_need() with policy_age_selects() never leaves it so; the policy
                 * cannot check that its inventory came from such a scan (a net) */
                vd->protections |= PROT_UNVERIFIED;
                vd->flags |= VERDICT_TITLE_UNREAD;
                policy_block(vd, in, VERB_SKIP, PROT_UNVERIFIED);
        } else if (selected && (vd->protections & PROT_KEEP_MASK))
                policy_block(vd, in, VERB_KEEP,
                             policy_first_protection(vd->protections & PROT_KEEP_MASK));
        else if (selected && policy_tasks_block(run, i)) {
                vd->protections |= PROT_SCHEDULED;
                vd->flags |= VERDICT_TASKS_HELD;
                policy_block(vd, in, VERB_KEEP, PROT_SCHEDULED);
        } else if (selected && in->sel_verb == VERB_DELETE && policy_shared_refused(s)) {
                /* the run would skip it (its edit of tmp/<hash>/logs.json or the organisation
                 * file is refused: erase.h): planned so, nothing of it salvaged */
                vd->blocked_rule = vd->rule;
                vd->blocked_verb = VERB_DELETE;
                vd->verb = VERB_SKIP;
                vd->rule = policy_rule_limit;
        } else if (selected) {
                vd->verb = in->sel_verb; /* rule and measure: the selecting rule's */
        } else {
                vd->verb = VERB_KEEP;
                vd->rule = "none";
                /* idle vs max-age: what an active session is kept within */
                if (p->max_age > 0 && s->state == SESSION_ACTIVE)
                        vd->measure = (Measure){ .kind = MEASURE_AGE,
                                                 .key = "max-age",
                                                 .measured = in->idle,
                                                 .limit = p->max_age };
        }
        return policy_block_facts(run, i);
}
