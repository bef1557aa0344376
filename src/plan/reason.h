/* reason.h: the reason texts of the plan and the journal, rendered at the edge from what the
 * policy and the ownership check decided (Verdict, OwnerCause) and the facts of the session or
 * orphan. Pure: no I/O, no clock. Nothing decides from these texts. */
#pragma once

#include "inventory.h"
#include "policy.h"

struct StoreOps;

/* The reason of session s's verdict v: "idle 121d > max-age 90d", "kept: pinned (a rule would
 * select it: archive for idle 121d > max-age 90d)", ... malloc'ed; NULL only on ENOMEM. store:
 * s's tree's, for the words only it knows (StoreOps.limit_reason). */
char *reason_verdict(const Verdict *v, const Session *s, const struct StoreOps *store);

/* The reason of orphan o's verdict v: "orphan file-history, no transcript, idle 40d > 30d", ...
 * malloc'ed; NULL only on ENOMEM. store: o's tree's (StoreOps.orphan_what). */
char *reason_orphan(const Verdict *v, const Orphan *o, const struct StoreOps *store);

/* How the ownership of s was proven or why not ("cwd matches the project directory", "first
 * line longer than 1 MiB", ...): *ret malloc'ed, NULL when no check ran. 0 or -ENOMEM. */
int reason_owner(const Session *s, char **ret);

/* A byte limit as configured: "5G" rather than "5.0G" when it is a whole number of units. */
char *reason_format_limit(char *buf, size_t n, uint64_t bytes);

/* A cap the plan leaves unmet, and what holds it: "tree cap not met: 336K > max-size 200K after
 * the plan; held by keep-latest 3 sessions (120K), in use 1 (16K)"; tree_dir names the tree
 * (when there are several), may be NULL. malloc'ed; NULL only on ENOMEM. */
char *reason_cap_unmet(const CapUnmet *c, const char *tree_dir);
