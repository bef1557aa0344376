/* utf8.h: the one UTF-8 decoder (and encoder) of qgc.
 *
 * Two readings of the same bytes, from one decoding step:
 *   - utf8_next(): as Node reads a file (WHATWG UTF-8): an ill-formed sequence gives U+FFFD and
 *     consumes its maximal subpart, at least one byte. JavaScript's string rules see these code
 *     points.
 *   - utf8_decode(): strict: 0 for anything that is not one well-formed character (the text
 *     cleaner, text.c, replaces such bytes one at a time).
 * Well-formed means RFC 3629: no overlong form, no surrogate (U+D800-U+DFFF), nothing above
 * U+10FFFF, no cut sequence. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UTF8_REPLACEMENT 0xfffd

/* One code point from s (n bytes) as Node decodes it; the bytes consumed (0 only for n == 0,
 * then *ret_cp is U+FFFD). */
size_t utf8_next(const char *s, size_t n, uint32_t *ret_cp);
/* The length (1-4) of the well-formed character at s with its code point in *ret_cp, or 0 when
 * the bytes at s are not one (n == 0, a stray continuation byte, an overlong form, a surrogate,
 * a cut sequence); *ret_cp is then untouched. */
size_t utf8_decode(const char *s, size_t n, uint32_t *ret_cp);
/* The UTF-8 bytes of cp (at most U+10FFFF; a surrogate is encoded as it is) into out; their
 * number (1-4). */
size_t utf8_encode(uint32_t cp, char out[4]);
/* The UTF-8 encoding of the string Node decodes from s[0..n): each ill-formed subpart becomes
 * EF BF BD. A new NUL-terminated string (NULL on ENOMEM) and its length in *ret_len (may be
 * NULL). */
char *utf8_node_normalize(const char *s, size_t n, size_t *ret_len);
/* The UTF-16 code units (a JavaScript string's length) Node holds for the complete sequences of
 * s[0..n); *ret_held: the length of a cut last sequence a streaming decoder keeps back (0 when
 * the last sequence is complete or ill-formed anyway). */
size_t utf8_utf16_units(const char *s, size_t n, size_t *ret_held);
