/* strbuf.h: StrBuf, the one growable string buffer (always NUL-terminated once written). */
#pragma once

#include <stddef.h>

typedef struct StrBuf {
        char *buf;
        size_t len, cap;
} StrBuf;

/* The global symbol is strbuf_append_bytes(): libconfig 1.5 exports its own strbuf_append(),
 * and a global qgc function of that name would interpose on it (its strings then parse as ""). */
int strbuf_append_bytes(StrBuf *b, const char *s, size_t n);
static inline int strbuf_append(StrBuf *b, const char *s, size_t n) {
        return strbuf_append_bytes(b, s, n);
}
int strbuf_printf(StrBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_done(StrBuf *b);
char *strbuf_steal(StrBuf *b); /* returns buf (NUL-terminated, never NULL on success), resets */
