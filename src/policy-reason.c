/* policy-reason.c: what a verdict says. The verb and protection names (strtable.h), limits as
 * configured ("5G"), and the verdict of a session from its selection and protections: which
 * protection wins, and the reason text naming it and what it blocked ("pinned (would archive:
 * idle 121d > max-age 90d)"). Pure, like policy.c. */
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
};

static DEFINE_STRING_TABLE_TO_STRING_FUNC(protection_bit_to_string, protection_bit_table, int);

/* The name of a single protection bit; NULL for none, several or one outside the table. */
const char *protection_to_string(Protection p) {
        unsigned u = (unsigned)p;

        if (u == 0 || (u & (u - 1)) != 0)
                return NULL;
        return protection_bit_to_string(__builtin_ctz(u));
}

/* A limit as configured: "5G" rather than "5.0G" when it is a whole number of units. */
char *policy_format_limit(char *buf, size_t n, uint64_t bytes) {
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

/* Turn the selections and protections of session i into its verdict. */
int policy_finish(PolicyRun *run, size_t i) {
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
