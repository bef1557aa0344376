/* dc-project.c: getProjectCode() of Deep Code, byte for byte (see dc-project.h). */
#include "autoconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dc-project.h"
#include "macro.h"
#include "sha256.h"
#include "utf8.h"
#include "util.h"

#define DC_CODE_MAX 64  /* MAX_PROJECT_CODE_LENGTH */
#define DC_CODE_HASH 16 /* PROJECT_CODE_HASH_LENGTH */

/* The UTF-16 length of s[0..n), or SIZE_MAX when s is not well-formed UTF-8. */
static size_t dc_project_units(const char *s, size_t n) {
        size_t units = 0;

        for (size_t i = 0, l; i < n; i += l) {
                uint32_t cp;

                l = utf8_decode(s + i, n - i, &cp);
                if (l == 0)
                        return SIZE_MAX;
                units += cp >= 0x10000 ? 2 : 1;
        }
        return units;
}

/* path.resolve() of an absolute POSIX path into out (as long as p): "." and empty components
 * dropped, ".." climbs (not above "/"), no trailing '/'. Its length. */
static size_t dc_project_resolve(const char *p, char *out) {
        size_t len = 0;

        while (*p) {
                size_t n;

                while (*p == '/')
                        p++;
                n = strcspn(p, "/");
                if (n == 0 || (n == 1 && p[0] == '.')) {
                } else if (n == 2 && p[0] == '.' && p[1] == '.') {
                        while (len > 0 && out[--len] != '/')
                                ;
                } else {
                        out[len++] = '/';
                        memcpy(out + len, p, n);
                        len += n;
                }
                p += n;
        }
        if (len == 0)
                out[len++] = '/';
        out[len] = 0;
        return len;
}

static bool dc_project_code_char(char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '_' || c == '-';
}

static size_t dc_project_trim_end(const char *s, size_t n) {
        while (n > 0 && (s[n - 1] == '-' || s[n - 1] == '.'))
                n--;
        return n;
}

/* sanitizeProjectCodePart(basename).slice(0, 47).replace(/[-.]+$/, "") || "project" into out
 * (every kept UTF-16 unit is ASCII, so bytes are units). 0 or -ENOMEM. */
static int dc_project_prefix(const char *base, char out[DC_CODE_MAX - DC_CODE_HASH]) {
        size_t n = strlen(base), len = 0, start = 0;
        _cleanup_free_ char *s = malloc(n + 1);

        if (!s)
                return -ENOMEM;
        for (size_t i = 0, l; i < n; i += l) {
                uint32_t cp = 0;
                char c;

                l = utf8_decode(base + i, n - i, &cp);
                c = cp < 0x80 && dc_project_code_char((char)cp) ? (char)cp : '-';
                if (c != '-' || len == 0 || s[len - 1] != '-') /* /-+/g -> "-" */
                        s[len++] = c;
        }
        while (start < len && (s[start] == '-' || s[start] == '.'))
                start++;
        len = dc_project_trim_end(s + start, len - start);
        len = dc_project_trim_end(s + start, MIN(len, (size_t)(DC_CODE_MAX - DC_CODE_HASH - 1)));
        if (len == 0)
                strcpy(out, "project");
        else {
                memcpy(out, s + start, len);
                out[len] = 0;
        }
        return 0;
}

int dc_project_code(const char *root, char **ret) {
        size_t n = strlen(root), len = 0;
        _cleanup_free_ char *legacy = malloc(n + 1), *resolved = NULL;
        char hex[SHA256_HEX_LEN + 1], prefix[DC_CODE_MAX - DC_CODE_HASH];
        int r;

        if (!legacy)
                return -ENOMEM;
        if (dc_project_units(root, n) == SIZE_MAX)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (root[i] != ':')
                        legacy[len++] = root[i] == '/' || root[i] == '\\' ? '-' : root[i];
        legacy[len] = 0;
        if (dc_project_units(legacy, len) <= DC_CODE_MAX) {
                *ret = TAKE_PTR(legacy);
                return 0;
        }
        if (root[0] != '/')
                return -EINVAL;
        resolved = malloc(n + 2);
        if (!resolved)
                return -ENOMEM;
        len = dc_project_resolve(root, resolved);
        if (sha256_hex(resolved, len, hex) < 0)
                return -EIO;
        r = dc_project_prefix(strrchr(resolved, '/') + 1, prefix);
        if (r < 0)
                return r;
        hex[DC_CODE_HASH] = 0;
        *ret = util_strjoin(prefix, "-", hex, NULL);
        return *ret ? 0 : -ENOMEM;
}
