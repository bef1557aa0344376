/* text.h: the one cleaning of text that reaches a terminal, a text log or JSON.
 *
 * Most text qgc shows was written by others (in --all-users mode, by every user); none of it
 * reaches root's terminal or a log raw: a control character could move the cursor, clear the
 * screen, set the clipboard (OSC 52) or reorder what is shown (bidi). "Control" here is:
 *   - C0 (U+0000-U+001F), DEL (U+007F) and C1 (U+0080-U+009F: CSI, OSC, ... as one code point);
 *   - the bidi controls: U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069.
 * Bytes that are not well-formed UTF-8 are replaced too (U+FFFD), so no C1 byte passes alone. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "utf8.h"
#include "util.h"

typedef enum TextStyle {
        /* a terminal line: each control becomes '?', like ls -q (plan, status, diagnostics);
         * when the terminal is not UTF-8 (text_set_terminal_utf8(false): a C or Latin-1
         * locale), every other non-ASCII character becomes \uNNNN (\UNNNNNNNN above the BMP)
         * and an ill-formed byte '?', so the line is ASCII */
        TEXT_TERMINAL,
        /* the inside of a quoted log value: '"' and '\' are escaped, a control becomes \n, \t,
         * \xNN (below U+0080) or \uNNNN, an ill-formed byte \xNN: nothing is lost, nothing
         * acts on a terminal, and the line stays one line */
        TEXT_QUOTED,
        /* text that json-c will quote: ill-formed bytes become U+FFFD, everything else is kept
         * (json-c escapes C0; text_json_escape_controls() escapes the rest) */
        TEXT_JSON,
} TextStyle;

/* Whether TEXT_TERMINAL may write UTF-8: main sets it from the LC_CTYPE codeset, after
 * setlocale(LC_CTYPE, ""). The default (true) is for tests. */
void text_set_terminal_utf8(bool utf8);
/* The display columns of n bytes of s, cleaned text (wcwidth() of each code point: 2 for CJK
 * and most emoji, 0 for combining marks; 1 for a code point wcwidth() does not know). */
size_t text_width(const char *s, size_t n);
/* The byte length of the longest start of s (n bytes) that fits in max_cols columns, never
 * cutting a character; its width in *ret_cols (may be NULL). */
size_t text_fit(const char *s, size_t n, size_t max_cols, size_t *ret_cols);

/* Append n bytes of s to b, cleaned in style. 0 or -ENOMEM. */
int text_clean_append(StrBuf *b, const char *s, size_t n, TextStyle style);
/* A cleaned copy of the NUL-terminated s (NULL is ""), malloc'ed; NULL on ENOMEM. */
char *text_clean(const char *s, TextStyle style);
/* Write s (of n bytes) to f cleaned for the terminal, keeping its '\n' line breaks. */
int text_fputs_terminal(const char *s, size_t n, FILE *f);
/* JSON text as json-c wrote it, with every control json-c leaves raw (DEL, C1, the bidi
 * controls) written as \uNNNN. The input must be JSON with well-formed UTF-8 (a raw control
 * can only be inside a string there). Malloc'ed; NULL on ENOMEM. */
char *text_json_escape_controls(const char *json);
