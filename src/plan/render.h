/* render.h: the cell and wrapping helpers of the text renderings (render.c), which qgc status's
 * text (render-status.c) shares. Widths are display columns. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "inventory.h"
#include "plan.h"

/* The terminal's width: o->columns, or 100. */
unsigned render_columns(const RenderOptions *o);
void render_pad(FILE *f, size_t n);
/* s cleaned for the terminal, padded to width columns when pad (right-aligned when right);
 * never cut: a wider s is printed whole. */
int render_field(FILE *f, const char *s, size_t width, bool pad, bool right);
/* The clean text c wrapped at spaces: its first line in first_w columns, each further line
 * indented by indent and at most width columns; ends with '\n'. Never cuts. */
void render_wrap_clean(FILE *f, const char *c, size_t first_w, size_t indent, size_t width);
/* render_wrap_clean() of s cleaned for the terminal; an empty s ends the line. */
int render_wrap(FILE *f, const char *s, size_t first_w, size_t indent, size_t width);
/* "no sessions found in A, B" */
int render_nothing(const Inventory *inv, FILE *f);
