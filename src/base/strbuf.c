/* strbuf.c: the growable string buffer (strbuf.h). */
#include "autoconf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "strbuf.h"

int strbuf_append_bytes(StrBuf *b, const char *s, size_t n) {
        size_t need = b->len + n + 1;

        if (need > b->cap) {
                size_t cap = MAX(need * 2, (size_t)16);
                char *p = need > SIZE_MAX / 2 ? NULL : realloc(b->buf, cap);

                if (!p)
                        return -ENOMEM;
                b->buf = p;
                b->cap = cap;
        }
        memcpy(b->buf + b->len, s, n);
        b->len += n;
        b->buf[b->len] = '\0';
        return 0;
}

int strbuf_printf(StrBuf *b, const char *fmt, ...) {
        va_list ap;
        char *s = NULL;
        int n, r;

        va_start(ap, fmt);
        n = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -ENOMEM;
        r = strbuf_append(b, s, (size_t)n);
        free(s);
        return r;
}

void strbuf_done(StrBuf *b) {
        free(b->buf);
        *b = (StrBuf){};
}

char *strbuf_steal(StrBuf *b) {
        char *s;
        if (!b->buf && strbuf_append(b, "", 0) < 0)
                return NULL;
        s = b->buf;
        *b = (StrBuf){};
        return s;
}
