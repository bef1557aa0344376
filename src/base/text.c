/* text.c: the one cleaning of text for terminals, text logs and JSON (see text.h). */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "macro.h"
#include "text.h"

/* Set once by main (from the locale) before any output; read-only afterwards, also by the
 * scan's threads. */
static bool text_utf8_terminal = true;

void text_set_terminal_utf8(bool utf8) {
        text_utf8_terminal = utf8;
}

/* Columns of one code point on the terminal. */
static size_t text_cp_width(uint32_t cp) {
        int w;

        if (cp >= 0x20 && cp < 0x7f)
                return 1;
        w = wcwidth((wchar_t)cp);
        return w < 0 ? 1 : (size_t)w;
}

size_t text_fit(const char *s, size_t n, size_t max_cols, size_t *ret_cols) {
        const unsigned char *u = (const unsigned char *)s;
        size_t i = 0, cols = 0;

        while (i < n) {
                uint32_t cp = 0;
                size_t k = u[i] < 0x80 ? 1 : utf8_decode((const char *)u + i, n - i, &cp), w;

                if (k == 0)
                        k = 1, cp = '?';
                else if (u[i] < 0x80)
                        cp = u[i];
                w = text_cp_width(cp);
                if (cols + w > max_cols)
                        break;
                cols += w;
                i += k;
        }
        if (ret_cols)
                *ret_cols = cols;
        return i;
}

size_t text_width(const char *s, size_t n) {
        size_t cols;

        (void)text_fit(s, n, SIZE_MAX, &cols);
        return cols;
}

/* Is cp a control (C0, DEL, C1 or a bidi control)? */
static bool text_is_control(uint32_t cp) {
        return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c || cp == 0x200e ||
               cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* Is the byte plain printable ASCII that every style keeps as it is? */
static bool text_plain(unsigned char c, TextStyle style) {
        return c >= 0x20 && c < 0x7f && !(style == TEXT_QUOTED && (c == '"' || c == '\\'));
}

/* Would text_clean() change s (of n bytes)? false for printable ASCII and clean UTF-8. */
static bool text_needs_cleaning(const char *s, size_t n, TextStyle style) {
        const unsigned char *u = (const unsigned char *)s;

        for (size_t i = 0; i < n;) {
                uint32_t cp;
                size_t k;

                if (text_plain(u[i], style)) {
                        i++;
                        continue;
                }
                k = utf8_decode((const char *)u + i, n - i, &cp);
                if (k == 0 || (style != TEXT_JSON && text_is_control(cp)) ||
                    (style == TEXT_QUOTED && (cp == '"' || cp == '\\')) ||
                    (style == TEXT_TERMINAL && !text_utf8_terminal && cp >= 0x80))
                        return true;
                i += k;
        }
        return false;
}

int text_clean_append(StrBuf *b, const char *s, size_t n, TextStyle style) {
        const unsigned char *u = (const unsigned char *)s;
        int r = 0;

        for (size_t i = 0; r >= 0 && i < n;) {
                size_t run = i, k;
                uint32_t cp;

                while (run < n && text_plain(u[run], style))
                        run++;
                if (run > i) {
                        r = strbuf_append(b, s + i, run - i);
                        i = run;
                        continue;
                }
                k = utf8_decode((const char *)u + i, n - i, &cp);
                if (k == 0) {
                        r = style == TEXT_QUOTED ? strbuf_printf(b, "\\x%02x", u[i])
                            : style == TEXT_TERMINAL && !text_utf8_terminal
                                    ? strbuf_append(b, "?", 1)
                                    : strbuf_append(b, "\xef\xbf\xbd", 3);
                        k = 1;
                } else if (style == TEXT_TERMINAL && !text_utf8_terminal && cp >= 0x80 &&
                           !text_is_control(cp))
                        r = cp > 0xffff ? strbuf_printf(b, "\\U%08x", (unsigned)cp)
                                        : strbuf_printf(b, "\\u%04x", (unsigned)cp);
                else if (style == TEXT_QUOTED && (cp == '"' || cp == '\\'))
                        r = strbuf_printf(b, "\\%c", (char)cp);
                else if (style == TEXT_JSON || !text_is_control(cp))
                        r = strbuf_append(b, s + i, k);
                else if (style == TEXT_TERMINAL)
                        r = strbuf_append(b, "?", 1);
                else if (cp == '\n')
                        r = strbuf_append(b, "\\n", 2);
                else if (cp == '\t')
                        r = strbuf_append(b, "\\t", 2);
                else if (cp < 0x80)
                        r = strbuf_printf(b, "\\x%02x", (unsigned)cp);
                else
                        r = strbuf_printf(b, "\\u%04x", (unsigned)cp);
                i += k;
        }
        return r < 0 ? -ENOMEM : 0;
}

char *text_clean(const char *s, TextStyle style) {
        _cleanup_(strbuf_done) StrBuf b = {};
        size_t n = strlen(s ?: "");

        if (!text_needs_cleaning(s ?: "", n, style))
                return strdup(s ?: "");
        if (text_clean_append(&b, s, n, style) < 0)
                return NULL;
        return strbuf_steal(&b);
}

int text_fputs_terminal(const char *s, size_t n, FILE *f) {
        _cleanup_(strbuf_done) StrBuf b = {};

        for (size_t i = 0; i < n;) {
                const char *nl = memchr(s + i, '\n', n - i);
                size_t len = nl ? (size_t)(nl - (s + i)) : n - i;

                if (text_clean_append(&b, s + i, len, TEXT_TERMINAL) < 0)
                        return -ENOMEM;
                if (nl && strbuf_append(&b, "\n", 1) < 0)
                        return -ENOMEM;
                i += len + (nl ? 1 : 0);
        }
        if (b.len > 0 && fwrite(b.buf, 1, b.len, f) != b.len)
                return -EIO;
        return 0;
}

char *text_json_escape_controls(const char *json) {
        _cleanup_(strbuf_done) StrBuf b = {};
        const unsigned char *u = (const unsigned char *)json;
        size_t n = strlen(json), done = 0;

        for (size_t i = 0; i < n;) {
                uint32_t cp = 0;
                size_t k = u[i] < 0x7f ? 1 : utf8_decode((const char *)u + i, n - i, &cp);

                if (k == 0)
                        k = 1; /* not UTF-8: kept as it is (callers pass clean text) */
                else if (u[i] >= 0x7f && text_is_control(cp)) {
                        if (strbuf_append(&b, json + done, i - done) < 0 ||
                            strbuf_printf(&b, "\\u%04x", (unsigned)cp) < 0)
                                return NULL;
                        done = i + k;
                }
                i += k;
        }
        if (done == 0)
                return strdup(json);
        if (strbuf_append(&b, json + done, n - done) < 0)
                return NULL;
        return strbuf_steal(&b);
}
