/* render-int.h: what the text renderings share: render.c's cell, wrapping and verb helpers, used
 * by the summary (render-summary.c) and qgc status (render-status.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "inventory.h"
#include "plan.h"

/* The verb column's width; set by plan_render_text(). */
extern int render_verb_w;

unsigned render_columns(const RenderOptions *o);
int render_field(FILE *f, const char *s, size_t width, bool pad, bool right);
int render_wrap(FILE *f, const char *s, size_t first_w, size_t indent, size_t width);
const char *render_verb(Verb v);
int render_nothing(const Inventory *inv, FILE *f);
void render_item_size(const Plan *p, const PlanItem *it, uint64_t *bytes, msec_t *idle);

/* render-summary.c */
int render_summary(const Plan *p, unsigned cols, FILE *f);
