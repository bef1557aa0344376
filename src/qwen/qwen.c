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
#include "utf8.h"

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

bool qwen_session_id_valid(const char *id) {
        return id && qwen_id_span_valid(id, strlen(id));
}

bool qwen_session_id_equal(const char *a, const char *b) {
        return a && b && util_ascii_strcasecmp(a, b) == 0;
}

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
                size_t k = utf8_next(cwd + i, n - i, &cp);

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

int qwen_project_hash(const char *cwd, char ret[PROJECT_HASH_LEN + 1]) {
        _cleanup_free_ char *norm = NULL;
        size_t len;

        if (!cwd)
                return -EINVAL;
        norm = utf8_node_normalize(cwd, strlen(cwd), &len);
        if (!norm)
                return -ENOMEM;
        return sha256_hex(norm, len, ret);
}

bool qwen_project_hash_valid(const char *s, size_t n) {
        if (n != PROJECT_HASH_LEN)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return true;
}

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
