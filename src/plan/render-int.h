/* render-int.h: what the text renderings share: the cell, wrapping and verb helpers
 * (render-cell.c), used by the plan (render.c), the summary (render-summary.c) and qgc status
 * (render-status.c); the short id widths (render-id.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "inventory.h"
#include "plan.h"

/* The verb column's width; set by plan_render_text(). */
extern int render_verb_w;

/* render-cell.c */
unsigned render_columns(const RenderOptions *o);
void render_pad(FILE *f, size_t n);
int render_field(FILE *f, const char *s, size_t width, bool pad, bool right);
void render_wrap_clean(FILE *f, const char *c, size_t first_w, size_t indent, size_t width);
int render_wrap(FILE *f, const char *s, size_t first_w, size_t indent, size_t width);
const char *render_verb(Verb v);

/* render.c */
int render_nothing(const Inventory *inv, FILE *f);
void render_item_size(const Plan *p, const PlanItem *it, uint64_t *bytes, msec_t *idle);

/* render-id.c: per tree, the fewest leading characters of the ids (at least 8) that tell every
 * session of the tree apart (and the orphans named by a session id). ret[t]; malloc'ed. */
int render_id_widths(const Inventory *inv, size_t **ret);

/* render-summary.c */
int render_summary(const Plan *p, unsigned cols, FILE *f);
int render_incomplete(const Inventory *inv, unsigned cols, FILE *f);
