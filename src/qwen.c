/* qwen.c: Qwen Code's own naming rules in C (session file names, sanitizeCwd, getProjectHash,
 * worktree roots). Strings arrive as UTF-8 bytes; where Qwen sees a JavaScript string we decode
 * the way Node does (WHATWG UTF-8: one U+FFFD per maximal invalid subpart). */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "qwen.h"
#include "sha256.h"

#define SESSION_ID_MIN 32
#define QWEN_WORKTREE_MARK "/.qwen/worktrees/"

static bool qwen_is_id_char(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
               c == '-';
}

static bool qwen_id_span_valid(const char *s, size_t n) {
        if (n < SESSION_ID_MIN || n > SESSION_ID_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!qwen_is_id_char(s[i]))
                        return false;
        return true;
}

/* SESSION_FILE_PATTERN /^[0-9a-fA-F-]{32,36}\.jsonl$/ on a directory entry name. */
bool qwen_session_file_name(const char *name, char ret_id[SESSION_ID_MAX + 1]) {
        static const char ext[] = ".jsonl";
        size_t n, ext_len = sizeof(ext) - 1;

        if (!name)
                return false;
        n = strlen(name);
        if (n <= ext_len || !streq(name + n - ext_len, ext))
                return false;
        if (!qwen_id_span_valid(name, n - ext_len))
                return false;
        if (ret_id) {
                memcpy(ret_id, name, n - ext_len);
                ret_id[n - ext_len] = '\0';
        }
        return true;
}

/* A session id as the file name pattern allows it. */
bool qwen_session_id_valid(const char *id) {
        return id && qwen_id_span_valid(id, strlen(id));
}

/* ASCII case-insensitive equality of two ids (NULL equals nothing). */
bool qwen_session_id_equal(const char *a, const char *b) {
        if (!a || !b)
                return false;
        for (;; a++, b++) {
                char x = *a, y = *b;
                if (x >= 'A' && x <= 'Z')
                        x = (char)(x - 'A' + 'a');
                if (y >= 'A' && y <= 'Z')
                        y = (char)(y - 'A' + 'a');
                if (x != y)
                        return false;
                if (x == '\0')
                        return true;
        }
}

/* Decode one code point from s (n > 0 bytes) as Node's UTF-8 decoder does: an invalid sequence
 * yields U+FFFD and consumes its maximal subpart (at least one byte). Returns bytes consumed. */
size_t qwen_utf8_next(const char *s, size_t n, uint32_t *ret_cp) {
        const unsigned char *p = (const unsigned char *)s;
        unsigned char lo = 0x80, hi = 0xbf;
        size_t need, i;
        uint32_t cp;

        if (n == 0) {
                *ret_cp = 0xfffd;
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
                        lo = 0xa0;
                else if (p[0] == 0xed)
                        hi = 0x9f;
        } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
                need = 3;
                cp = p[0] & 0x07;
                if (p[0] == 0xf0)
                        lo = 0x90;
                else if (p[0] == 0xf4)
                        hi = 0x8f;
        } else {
                *ret_cp = 0xfffd;
                return 1;
        }

        for (i = 1; i <= need; i++) {
                if (i >= n || p[i] < lo || p[i] > hi) {
                        *ret_cp = 0xfffd;
                        return i;
                }
                cp = (cp << 6) | (p[i] & 0x3f);
                lo = 0x80;
                hi = 0xbf;
        }
        *ret_cp = cp;
        return need + 1;
}

/* sanitizeCwd(): each UTF-16 code unit outside [A-Za-z0-9] becomes '-' (two for a code point
 * outside the BMP). */
char *qwen_sanitize_cwd(const char *cwd) {
        size_t n, i = 0, o = 0;
        char *out;

        if (!cwd) {
                errno = EINVAL;
                return NULL;
        }
        n = strlen(cwd);
        /* Each byte gives at most one unit, except 4-byte sequences which give two. */
        out = malloc(n + 1);
        if (!out)
                return NULL;
        while (i < n) {
                uint32_t cp;
                size_t k = qwen_utf8_next(cwd + i, n - i, &cp);

                i += k;
                if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
                    (cp >= '0' && cp <= '9'))
                        out[o++] = (char)cp;
                else if (cp >= 0x10000) {
                        out[o++] = '-';
                        out[o++] = '-';
                } else
                        out[o++] = '-';
        }
        out[o] = '\0';
        return out;
}

/* The UTF-8 encoding of the JavaScript string Node decodes from s: invalid subparts become
 * EF BF BD. Returns a new string (NULL on ENOMEM) and its length. */
char *qwen_utf8_normalize(const char *s, size_t n, size_t *ret_len) {
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
                size_t k = qwen_utf8_next(s + i, n - i, &cp);

                if (cp == 0xfffd && !(k == 3 && (unsigned char)s[i] == 0xef)) {
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

/* getProjectHash(): sha256 hex of the UTF-8 encoding of the (JavaScript) string. */
int qwen_project_hash(const char *cwd, char ret[PROJECT_HASH_LEN + 1]) {
        _cleanup_free_ char *norm = NULL;
        size_t len;

        if (!cwd)
                return -EINVAL;
        norm = qwen_utf8_normalize(cwd, strlen(cwd), &len);
        if (!norm)
                return -ENOMEM;
        return sha256_hex(norm, len, ret);
}

/* The main checkout of a Qwen worktree path: the part of cwd before the last
 * "/.qwen/worktrees/". NULL (errno 0) when there is none or it starts at index 0. */
char *qwen_worktree_root(const char *cwd) {
        const char *last = NULL, *p;
        char *r;

        errno = 0;
        if (!cwd)
                return NULL;
        for (p = strstr(cwd, QWEN_WORKTREE_MARK); p; p = strstr(p + 1, QWEN_WORKTREE_MARK))
                last = p;
        /* Qwen requires the marker past index 0 (markerIdx > 0). */
        if (!last || last == cwd)
                return NULL;
        r = strndup(cwd, (size_t)(last - cwd));
        if (!r)
                errno = ENOMEM;
        return r;
}
