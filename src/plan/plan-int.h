/* plan-int.h: what the plan (plan.c) and its JSON rendering (plan-json.c) share. */
#pragma once

#include <stddef.h>

#include "plan.h"

/* The tree index of an item (its session's or orphan's). */
size_t plan_item_tree(const Plan *p, const PlanItem *it);
