/* policy-stale.c: the verdict of a stale project entry (upstream PR #9110; the entry is found by
 * hygiene-scan.c): keep with the reason (and whether to write or remove its marker), or delete
 * with every session of the entry. Pure, like the rest of the policy. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hygiene.h"
#include "macro.h"
#include "policy.h"
#include "policy-stale.h"
#include "util.h"

/* The first recorded cwd of o, for reasons (into buf). */
static const char *policy_stale_first_cwd(const Orphan *o, char *buf, size_t n) {
        const char *c = o->cwds ?: "";
        size_t len = strcspn(c, "\n");

        snprintf(buf, n, "%.*s%s", (int)MIN(len, n - 8), c, c[len] && c[len + 1] ? ", ..." : "");
        return buf;
}

/* A session protection that keeps a stale entry: the person's, the liveness ones and min-age
 * ("never touched"); keep-latest does not apply (the entry goes whole). */
#define POLICY_STALE_BLOCK                                                                        \
        (PROT_LIVE | PROT_UNVERIFIED | PROT_FOREIGN | PROT_CONFLICT | PROT_PROTECT | PROT_PINNED | \
         PROT_TITLED | PROT_SCHEDULED | PROT_WORKTREE | PROT_MIN_AGE | PROT_RESTORED)

static int policy_stale_set(Verdict *vd, Verb verb, const char *rule, char *reason) {
        return verdict_set_fact(vd, verb, rule, reason);
}

int policy_stale_decide(const Inventory *inv, size_t oi, const Policy *p, msec_t now,
                        bool is_protected, bool after_limits, Verdicts *v) {
        const Orphan *o = &inv->orphans[oi];
        Verdict *vd = &v->orphans[oi];
        const char *key = "stale-project-min-age";
        msec_t limit = p->stale_project_min_age;
        char a[FORMAT_DURATION_MAX], b[FORMAT_DURATION_MAX], cwd[256];
        size_t n = 0, held = 0;
        int r;

        if (after_limits) {
                /* the deletion limits held some of its sessions back: the entry waits */
                if (vd->verb != VERB_DELETE)
                        return 0;
                for (size_t i = 0; i < inv->n_sessions; i++)
                        if (inventory_stale_member(o, &inv->sessions[i]) &&
                            v->sessions[i].verb != VERB_DELETE)
                                held++;
                if (held == 0)
                        return 0;
                return policy_stale_set(vd, VERB_KEEP, key,
                                        strprintf("stale project entry, %zu of its sessions held "
                                                  "back by the deletion limits: it goes in a "
                                                  "later run", held));
        }
        vd->mark = 0;
        (void)policy_stale_first_cwd(o, cwd, sizeof cwd);
        format_duration_exact(b, sizeof b, limit);
        if (limit == MSEC_INFINITY)
                return policy_stale_set(vd, VERB_KEEP, "none",
                                        strprintf("stale project entry (%s off)", key));
        if (is_protected) {
                vd->protections |= PROT_PROTECT;
                return policy_stale_set(vd, VERB_KEEP, protection_to_string(PROT_PROTECT),
                                        strdup("stale project entry, protected project "
                                               "(protect = true)"));
        }
        if (o->cwd_back) {
                vd->mark = o->marker.present ? -1 : 0;
                return policy_stale_set(vd, VERB_KEEP, "none",
                                        strprintf("project entry, no longer stale: %s%s",
                                                  o->stale_why ?: "a recorded cwd exists",
                                                  vd->mark ? "; would remove its mark" : ""));
        }
        if (o->stale_why)
                return policy_stale_set(vd, VERB_KEEP, "none",
                                        strprintf("stale project entry (cwd %s gone), kept: %s",
                                                  cwd, o->stale_why));
        for (size_t i = 0; i < inv->n_sessions; i++) {
                const Session *s = &inv->sessions[i];
                const Verdict *sv = &v->sessions[i];

                if (!inventory_stale_member(o, s))
                        continue;
                n++;
                if (p->keep_titled && s->title_unread)
                        /* policy_title_need() reads every title with this key on: a net */
                        return policy_stale_set(vd, VERB_KEEP, "none",
                                                strprintf("stale project entry (cwd %s gone), "
                                                          "kept: session %.8s: title not read",
                                                          cwd, s->id));
                if (policy_shared_refused(s))
                        /* its delete would be skipped: the entry could not go whole */
                        return policy_stale_set(vd, VERB_KEEP, "none",
                                                strprintf("stale project entry (cwd %s gone), "
                                                          "kept: session %.8s: a file Qwen "
                                                          "shares that qgc does not edit "
                                                          "(limit)",
                                                          cwd, s->id));
                if ((sv->protections & POLICY_STALE_BLOCK) || s->n_tasks > 0) {
                        unsigned prot = sv->protections & POLICY_STALE_BLOCK;
                        const char *what = "bound to a scheduled task";

                        for (unsigned bit = 0; bit < _PROT_MAX && prot; bit++)
                                if (prot & (1u << bit)) {
                                        what = protection_to_string((Protection)(1u << bit));
                                        break;
                                }
                        if (sv->verb != VERB_SKIP)
                                return policy_stale_set(vd, VERB_KEEP, "none",
                                                        strprintf("stale project entry (cwd %s "
                                                                  "gone), kept by session %.8s "
                                                                  "(%s)",
                                                                  cwd, s->id, what));
                        /* the session's own reason is quoted at the edge (reason.h):
                         * "... (live: in use: runtime claim pid 4242 alive)" */
                        r = policy_stale_set(vd, VERB_KEEP, "none",
                                             strprintf("stale project entry (cwd %s gone), kept "
                                                       "by session %.8s (%s",
                                                       cwd, s->id, what));
                        if (r < 0)
                                return r;
                        if (!vd->facts && !(vd->facts = calloc(1, sizeof(VerdictFacts))))
                                return -ENOMEM;
                        vd->facts->quote_session = s;
                        vd->facts->quote = sv;
                        return 0;
                }
        }
        format_duration(a, sizeof a, MAX(now - o->mtime, (msec_t)0));
        if (now - o->mtime <= limit)
                return policy_stale_set(vd, VERB_KEEP, "none",
                                        strprintf("stale project entry (cwd %s gone), a file "
                                                  "written %s ago <= %s %s",
                                                  cwd, a, key, b));
        if (!o->marker.present) {
                vd->mark = 1;
                return policy_stale_set(vd, VERB_KEEP, key,
                                        strprintf("stale project entry (cwd %s gone): would mark "
                                                  "it; it goes once the mark is older than %s %s",
                                                  cwd, key, b));
        }
        format_duration(a, sizeof a, MAX(now - o->marker.mtime_ns / 1000000, (msec_t)0));
        if (now - o->marker.mtime_ns / 1000000 <= limit)
                return policy_stale_set(vd, VERB_KEEP, "none",
                                        strprintf("stale project entry (cwd %s gone), marked %s "
                                                  "ago <= %s %s", cwd, a, key, b));
        r = policy_stale_set(vd, VERB_DELETE, key,
                             n > 0 ? strprintf("stale project entry (cwd %s gone), marked %s ago "
                                               "> %s; its %zu session%s deleted first",
                                               cwd, a, b, n, n == 1 ? "" : "s")
                                   : strprintf("stale project entry (cwd %s gone, no session), "
                                               "marked %s ago > %s", cwd, a, b));
        if (r < 0)
                return r;
        for (size_t i = 0; i < inv->n_sessions; i++) {
                Verdict *sv = &v->sessions[i];

                if (!inventory_stale_member(o, &inv->sessions[i]))
                        continue;
                r = policy_stale_set(sv, VERB_DELETE, key,
                                     strprintf("stale project entry: cwd %s gone, marked %s ago "
                                               "> %s %s", cwd, a, key, b));
                if (r < 0)
                        return r;
                sv->protections &= ~(unsigned)PROT_LATEST;
        }
        return 0;
}
