/* utf8.c: the UTF-8 decoder and encoder (utf8.h). */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

size_t utf8_next(const char *s, size_t n, uint32_t *ret_cp) {
        const unsigned char *p = (const unsigned char *)s;
        unsigned char lo = 0x80, hi = 0xbf;
        size_t need, i;
        uint32_t cp;

        if (n == 0) {
                *ret_cp = UTF8_REPLACEMENT;
                return 0;
        }
        if (p[0] < 0x80) {
                *ret_cp = p[0];
                return 1;
        }
        if (p[0] >= 0xc2 && p[0] <= 0xdf) {
                need = 1;
                cp = p[0] & 0x1f;
        } else if (p[0] >= 0xe0 && p[0] <= 0xef) {
                need = 2;
                cp = p[0] & 0x0f;
                if (p[0] == 0xe0)
                        lo = 0xa0; /* no overlong form */
                else if (p[0] == 0xed)
                        hi = 0x9f; /* no surrogate */
        } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
                need = 3;
                cp = p[0] & 0x07;
                if (p[0] == 0xf0)
                        lo = 0x90; /* no overlong form */
                else if (p[0] == 0xf4)
                        hi = 0x8f; /* nothing above U+10FFFF */
        } else {
                *ret_cp = UTF8_REPLACEMENT;
                return 1;
        }

        for (i = 1; i <= need; i++) {
                if (i >= n || p[i] < lo || p[i] > hi) {
                        *ret_cp = UTF8_REPLACEMENT;
                        return i;
                }
                cp = (cp << 6) | (p[i] & 0x3f);
                lo = 0x80;
                hi = 0xbf;
        }
        *ret_cp = cp;
        return need + 1;
}

/* Did utf8_next() decode a well-formed character (k bytes at s, code point cp)? U+FFFD is
 * well-formed only as its own three bytes (an ill-formed subpart is at most 3 bytes only after
 * an F0-F4 lead). */
static bool utf8_was_valid(const char *s, size_t k, uint32_t cp) {
        return cp != UTF8_REPLACEMENT || (k == 3 && (unsigned char)s[0] == 0xef);
}

size_t utf8_decode(const char *s, size_t n, uint32_t *ret_cp) {
        uint32_t cp;
        size_t k;

        if (n == 0)
                return 0;
        k = utf8_next(s, n, &cp);
        if (!utf8_was_valid(s, k, cp))
                return 0;
        *ret_cp = cp;
        return k;
}

size_t utf8_encode(uint32_t cp, char out[4]) {
        if (cp < 0x80) {
                out[0] = (char)cp;
                return 1;
        }
        if (cp < 0x800) {
                out[0] = (char)(0xc0 | (cp >> 6));
                out[1] = (char)(0x80 | (cp & 0x3f));
                return 2;
        }
        if (cp < 0x10000) {
                out[0] = (char)(0xe0 | (cp >> 12));
                out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
                out[2] = (char)(0x80 | (cp & 0x3f));
                return 3;
        }
        out[0] = (char)(0xf0 | (cp >> 18));
        out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[3] = (char)(0x80 | (cp & 0x3f));
        return 4;
}

char *utf8_node_normalize(const char *s, size_t n, size_t *ret_len) {
        size_t i = 0, o = 0;
        char *out;

        /* Worst case: every byte becomes three. */
        if (n > (SIZE_MAX - 1) / 3) {
                errno = ENOMEM;
                return NULL;
        }
        out = malloc(n * 3 + 1);
        if (!out)
                return NULL;
        while (i < n) {
                uint32_t cp;
                size_t k = utf8_next(s + i, n - i, &cp);

                if (!utf8_was_valid(s + i, k, cp)) {
                        memcpy(out + o, "\xef\xbf\xbd", 3);
                        o += 3;
                } else {
                        memcpy(out + o, s + i, k);
                        o += k;
                }
                i += k;
        }
        out[o] = '\0';
        if (ret_len)
                *ret_len = o;
        return out;
}

size_t utf8_utf16_units(const char *s, size_t n, size_t *ret_held) {
        size_t i = 0, units = 0;

        *ret_held = 0;
        while (i < n) {
                uint32_t cp;
                size_t k = utf8_next(s + i, n - i, &cp);

                if (cp == UTF8_REPLACEMENT && i + k == n && k < 4) {
                        /* Possibly a sequence cut by the read: is it a valid prefix? */
                        unsigned char c = (unsigned char)s[i];
                        size_t need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 1;
                        if (need > k && c >= 0xc2 && c <= 0xf4) {
                                *ret_held = k;
                                break;
                        }
                }
                units += cp >= 0x10000 ? 2 : 1;
                i += k;
        }
        return units;
}
