/* render-cell.c: the cell and wrapping helpers every text rendering shares (render-int.h): the
 * terminal's width, padding, a padded cell, text wrapped at spaces onto indented lines (nothing
 * is ever cut), and the verbs' words. Widths are display columns (text_width():
 * wcwidth). */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "plan.h"
#include "render-int.h"
#include "text.h"

unsigned render_columns(const RenderOptions *o) {
        return o && o->columns > 0 ? o->columns : 100;
}

void render_pad(FILE *f, size_t n) {
        static const char spaces[] = "                                ";

        while (n > 0) {
                size_t k = MIN(n, sizeof(spaces) - 1);
                fwrite(spaces, 1, k, f);
                n -= k;
        }
}

/* Print s (cleaned for the terminal), padded to width columns when asked (right-aligned when
 * right); never cut: a wider s is printed whole. */
int render_field(FILE *f, const char *s, size_t width, bool pad, bool right) {
        _cleanup_free_ char *c = NULL;
        const char *q = s ?: "";
        size_t w;

        /* fast path: printable ASCII needs no cleaning and no copy */
        while ((unsigned char)*q >= 0x20 && (unsigned char)*q < 0x7f)
                q++;
        if (*q == '\0') {
                w = (size_t)(q - (s ?: ""));
                c = strdup(s ?: "");
        } else {
                c = text_clean(s, TEXT_TERMINAL);
                w = c ? text_width(c, strlen(c)) : 0;
        }
        if (!c)
                return -ENOMEM;
        if (pad && right && w < width)
                render_pad(f, width - w);
        fputs(c, f);
        if (pad && !right && w < width)
                render_pad(f, width - w);
        return 0;
}

/* Write the clean text c wrapped: its first line in first_w columns (the caller already wrote
 * what stands before it), each further line indented by indent and at most width columns.
 * Breaks at a space; a word longer than a line is broken at the width. Never cuts; ends the
 * last line with '\n'. */
void render_wrap_clean(FILE *f, const char *c, size_t first_w, size_t indent, size_t width) {
        size_t n = strlen(c), avail = first_w;
        bool first = true;

        width = MAX(width, (size_t)1);
        while (n > 0) {
                size_t fit = text_fit(c, n, avail, NULL), cut = fit, skip = 0;

                if (fit < n) {
                        /* break at the last space within what fits, else in the word */
                        for (size_t i = fit; i > 0; i--)
                                if (c[i] == ' ') {
                                        cut = i;
                                        break;
                                }
                        if (cut == 0 && fit == 0 && !first) {
                                /* not one character fits a whole line: write one anyway */
                                uint32_t cp;
                                cut = utf8_decode(c, n, &cp) ?: 1;
                        }
                        while (cut + skip < n && c[cut + skip] == ' ')
                                skip++;
                }
                fwrite(c, 1, cut, f);
                c += cut + skip;
                n -= cut + skip;
                fputc('\n', f);
                if (n > 0)
                        render_pad(f, indent);
                first = false;
                avail = width;
        }
}

/* render_wrap_clean() of s cleaned for the terminal; an empty s ends the line. */
int render_wrap(FILE *f, const char *s, size_t first_w, size_t indent, size_t width) {
        _cleanup_free_ char *c = text_clean(s, TEXT_TERMINAL);

        if (!c)
                return -ENOMEM;
        if (!*c) {
                fputc('\n', f);
                return 0;
        }
        render_wrap_clean(f, c, first_w, indent, width);
        return 0;
}

const char *render_verb(Verb v) {
        switch (v) {
        case VERB_ARCHIVE:
                return "would archive";
        case VERB_DELETE:
                return "would delete";
        case VERB_SKIP:
                return "skip";
        case VERB_COMPRESS:
                return "would compress";
        default:
                return "keep";
        }
}
