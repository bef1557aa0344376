/* policy-stale.h: the verdict of a stale project entry (policy-stale.c), which policy.c asks for
 * each ORPHAN_STALE_PROJECT of the inventory (hygiene.h finds them). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "inventory.h"
#include "policy.h"

/* The verdict of stale project entry inv->orphans[oi] (pure; now: the rule's clock, never later
 * than the real one). Before the deletion limits: keep (with the reason, and v->mark to write or
 * remove its marker) or delete, and then every session of the entry is deleted by this rule
 * (usage salvaged first, as every delete). is_protected: its project has protect = true. With
 * after_limits: an entry some of whose sessions the limits held back is kept. 0 or -ENOMEM. */
int policy_stale_decide(const Inventory *inv, size_t oi, const Policy *p, msec_t now,
                        bool is_protected, bool after_limits, Verdicts *v);
