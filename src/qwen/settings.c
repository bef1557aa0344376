/* settings.c: Qwen Code's settings files as its loadSettings() reads each one
 * (packages/cli/src/config/settings.ts): the text through strip-json-comments (default options),
 * then JSON.parse (json_parse()'s grammar), and $VAR / ${VAR} in string values
 * (resolveEnvVarsInString(), packages/cli/src/utils/envVarResolver.ts). Which files, and what
 * their merge means for the runtime root, is roots.c's. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "js.h"
#include "json.h"
#include "macro.h"
#include "settings.h"
#include "util.h"

#define SETTINGS_MAX (4 * 1024 * 1024)

/* strip-json-comments' stripWithWhitespace(): /\S/g -> ' ' over s[from..to). */
static void settings_blank(char *s, size_t from, size_t to) {
        while (from < to) {
                size_t k = js_space_at((const unsigned char *)s + from, to - from);

                if (k > 0)
                        from += k;
                else
                        s[from++] = ' ';
        }
}

/* isEscaped(): an odd run of backslashes right before s[i]. */
static bool settings_escaped(const char *s, size_t i) {
        size_t k = 0;

        while (i > k && s[i - k - 1] == '\\')
                k++;
        return k % 2 == 1;
}

/* strip-json-comments' default (whitespace: true), in place: each "//" comment (up to, not
 * including, the line end) and each block comment outside strings becomes the same text with
 * every character that is not whitespace to JavaScript's \s replaced by a space; an unclosed
 * block comment runs to the end. */
static void settings_strip_comments(char *s, size_t n) {
        enum { NONE, SINGLE, MULTI } in_comment = NONE;
        bool in_string = false;
        size_t offset = 0;

        for (size_t i = 0; i < n; i++) {
                char c = s[i], next = i + 1 < n ? s[i + 1] : 0;

                if (in_comment == NONE && c == '"' && !settings_escaped(s, i))
                        in_string = !in_string;
                if (in_string)
                        continue;
                if (in_comment == NONE && c == '/' && next == '/') {
                        offset = i;
                        in_comment = SINGLE;
                        i++;
                } else if (in_comment == SINGLE && c == '\r' && next == '\n') {
                        i++;
                        in_comment = NONE;
                        settings_blank(s, offset, i);
                        offset = i;
                } else if (in_comment == SINGLE && c == '\n') {
                        in_comment = NONE;
                        settings_blank(s, offset, i);
                        offset = i;
                } else if (in_comment == NONE && c == '/' && next == '*') {
                        offset = i;
                        in_comment = MULTI;
                        i++;
                } else if (in_comment == MULTI && c == '*' && next == '/') {
                        i++;
                        in_comment = NONE;
                        settings_blank(s, offset, i + 1);
                        offset = i + 1;
                }
        }
        if (in_comment != NONE)
                settings_blank(s, offset, n);
}

/* Is the (comment-stripped) text nested deeper than json_parse() reads (JSON_MAX_DEPTH)? */
static bool settings_too_deep(const char *s, size_t n) {
        bool in_string = false;
        size_t depth = 0;

        for (size_t i = 0; i < n; i++) {
                if (in_string) {
                        if (s[i] == '\\')
                                i++;
                        else if (s[i] == '"')
                                in_string = false;
                } else if (s[i] == '"')
                        in_string = true;
                else if (s[i] == '{' || s[i] == '[') {
                        if (++depth > JSON_MAX_DEPTH)
                                return true;
                } else if ((s[i] == '}' || s[i] == ']') && depth > 0)
                        depth--;
        }
        return false;
}

/* Read the file just opened at fd (-1: the open's errno) whole, when it is still the file st
 * describes: 0 with *ret_buf (NUL-terminated) and *ret_len, -ESTALE when it was replaced since
 * st was taken or grew past st's size while read, -ENOMEM or -errno. */
static int settings_read_fd(int fd, const struct stat *st, char **ret_buf, size_t *ret_len) {
        _cleanup_free_ char *buf = NULL;
        struct stat st2;
        ssize_t len;

        if (fd < 0 || fstat(fd, &st2) < 0)
                return -errno;
        if (st2.st_dev != st->st_dev || st2.st_ino != st->st_ino)
                return -ESTALE; /* replaced between the two opens */
        buf = malloc((size_t)st->st_size + 1);
        if (!buf)
                return -ENOMEM;
        len = fs_pread_full(fd, buf, (size_t)st->st_size + 1, 0);
        if (len < 0)
                return (int)len;
        if ((size_t)len > (size_t)st->st_size)
                return -ESTALE; /* grew past its size while read */
        buf[len] = 0;
        *ret_buf = TAKE_PTR(buf);
        *ret_len = (size_t)len;
        return 0;
}

/* Read a file Qwen would read whole: 1 when stat() finds nothing (fs.existsSync()), 0 with
 * *ret_buf (NUL-terminated) and *ret_len, or the errors of settings_read_file(). */
static int settings_load(const char *path, char **ret_buf, size_t *ret_len) {
        _cleanup_close_ int pfd = -EBADF, fd = -EBADF;
        struct stat st;

        /* Qwen reads a file that fs.existsSync() (a stat) finds: one stat() does not find is
         * none (missing, a symlink loop, a parent it may not search); anything it finds is
         * read by Qwen, so one qgc does not read is an error, never "no file" */
        if (stat(path, &st) < 0)
                return 1;
        /* look before opening for reading: a FIFO or a device is never opened to be read */
        pfd = open(path, O_PATH | O_CLOEXEC);
        if (pfd < 0)
                return errno == ENOENT ? -ESTALE : -errno;
        if (fstat(pfd, &st) < 0)
                return -errno;
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode))
                return SETTINGS_NOT_REGULAR;
        if (st.st_size > SETTINGS_MAX)
                return -EFBIG;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        return settings_read_fd(fd, &st, ret_buf, ret_len);
}

/* settings_load() of name in the directory dfd without following a symlink (-ELOOP): 1 when
 * there is nothing of that name, -EPERM when qgc runs as root and the file belongs to neither
 * root nor owner ((uid_t)-1: anyone), else as settings_load(). */
static int settings_load_at(int dfd, const char *name, uid_t owner, char **ret_buf,
                            size_t *ret_len) {
        _cleanup_close_ int pfd = -EBADF, fd = -EBADF;
        struct stat st;

        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 1 : -errno;
        if (S_ISLNK(st.st_mode))
                return -ELOOP; /* Qwen follows it; qgc does not read where it points */
        pfd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (pfd < 0)
                return errno == ENOENT ? -ESTALE : -errno;
        if (fstat(pfd, &st) < 0)
                return -errno;
        if (S_ISLNK(st.st_mode))
                return -ELOOP;
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode))
                return SETTINGS_NOT_REGULAR;
        if (owner != (uid_t)-1 && geteuid() == 0 && st.st_uid != 0 && st.st_uid != owner)
                return -EPERM; /* root never reads another user's file for a user */
        if (st.st_size > SETTINGS_MAX)
                return -EFBIG;
        /* a project's file: its atime stays (a dry run changes nothing) where permitted */
        fd = openat(dfd, name,
                    O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_NOATIME);
        if (fd < 0 && errno == EPERM)
                fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
        return settings_read_fd(fd, &st, ret_buf, ret_len);
}

/* The text of a settings file (buf, len; NUL-terminated, modified) as Qwen parses it. */
static int settings_parse(char *buf, size_t len, struct json_object **ret) {
        struct json_object *o = NULL;
        size_t off = 0;
        int r;

        /* stripUtf8Bom() first (Qwen 0.24: loadAndMigrate()): one leading U+FEFF goes */
        if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
                off = 3;
        settings_strip_comments(buf + off, len - off);
        r = json_parse(buf + off, len - off, &o);
        if (r == -EBADMSG && settings_too_deep(buf + off, len - off))
                return -ELOOP; /* JSON.parse would read it: not "no JSON" */
        if (r < 0)
                return r;
        if (!json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                return -EBADMSG; /* "Settings file is not a valid JSON object." */
        }
        *ret = o;
        return 0;
}

int settings_read_file_at(int dfd, const char *name, uid_t owner, struct json_object **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r;

        *ret = NULL;
        r = settings_load_at(dfd, name, owner, &buf, &len);
        if (r != 0)
                return r > 0 ? 0 : r;
        r = settings_parse(buf, len, ret);
        /* a symlink is -ELOOP here: too deep a nesting is -EBADMSG, both "not used" */
        return r == -ELOOP ? -EBADMSG : r;
}

int settings_read_file(const char *path, struct json_object **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r;

        *ret = NULL;
        r = settings_load(path, &buf, &len);
        if (r != 0)
                return r > 0 ? 0 : r;
        return settings_parse(buf, len, ret);
}

static bool settings_word_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_';
}

static const char *settings_getenv(char *const *env, const char *name, size_t n) {
        if (!env || memchr(name, '=', n))
                return NULL; /* no variable of Node's process.env has '=' in its name */
        for (char *const *e = env; *e; e++)
                if (strneq(*e, name, n) && (*e)[n] == '=')
                        return *e + n + 1;
        return NULL;
}

/* Names resolveEnvVarsInString() leaves literal whatever the environment holds (Qwen 0.24):
 * SESSION_ID, QWEN_CODE_SESSION_ID and isInternalSecretEnvVar()'s list (sanitize-child-env.ts),
 * compared after JavaScript's toUpperCase(). Of the non-ASCII letters, only U+0131 (to 'I') and
 * U+017F (to 'S') upper-case into letters of these names. */
static bool settings_env_literal(const char *name, size_t n) {
        static const char *const literal[] = {
                "SESSION_ID",        "QWEN_CODE_SESSION_ID",
                "QWEN_SERVER_TOKEN", "QWEN_DAEMON_TOKEN",
                "QWEN_CODE_EXTERNAL_TOOL_GUARD_TOKEN", "QWEN_CODE_PRIVATE_ACP_CAPABILITY",
        };
        char up[64];
        size_t k = 0;

        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)name[i];

                if (k >= sizeof(up) - 1)
                        return false;
                if (c == 0xc4 && i + 1 < n && (unsigned char)name[i + 1] == 0xb1) {
                        up[k++] = 'I';
                        i++;
                } else if (c == 0xc5 && i + 1 < n && (unsigned char)name[i + 1] == 0xbf) {
                        up[k++] = 'S';
                        i++;
                } else
                        up[k++] = (char)(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
        }
        up[k] = 0;
        for (size_t i = 0; i < ELEMENTSOF(literal); i++)
                if (streq(up, literal[i]))
                        return true;
        return false;
}

int settings_resolve_env(const char *s, char *const *env, char **ret, char **ret_var) {
        _cleanup_(strbuf_done) StrBuf b = {};
        const char *p = s;

        *ret = NULL;
        if (ret_var)
                *ret_var = NULL;
        while (*p) {
                const char *name = NULL, *v;
                size_t n = 0, skip = 0;

                if (p[0] == '$' && settings_word_char(p[1])) {
                        name = p + 1;
                        while (settings_word_char(name[n]))
                                n++;
                        skip = 1 + n;
                } else if (p[0] == '$' && p[1] == '{' && p[2] && p[2] != '}') {
                        const char *end = strchr(p + 2, '}');
                        if (end) {
                                name = p + 2;
                                n = (size_t)(end - name);
                                skip = 3 + n;
                        }
                }
                if (!name) {
                        if (strbuf_append(&b, p, 1) < 0)
                                return -ENOMEM;
                        p++;
                        continue;
                }
                if (settings_env_literal(name, n)) {
                        if (strbuf_append(&b, p, skip) < 0)
                                return -ENOMEM;
                        p += skip;
                        continue;
                }
                v = settings_getenv(env, name, n);
                if (!v) {
                        if (ret_var) {
                                *ret_var = strndup(name, n);
                                if (!*ret_var)
                                        return -ENOMEM;
                        }
                        return -ENOKEY;
                }
                if (strbuf_append(&b, v, strlen(v)) < 0)
                        return -ENOMEM;
                p += skip;
        }
        *ret = strbuf_steal(&b);
        if (!*ret)
                return -ENOMEM;
        return 0;
}

static bool settings_dotenv_key_char(char c) {
        return settings_word_char(c) || c == '.' || c == '-';
}

static bool settings_space(char c) {
        return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r';
}

/* One line of a dotenv file, [s, e) without its '\n', as dotenv.parse()'s LINE matches it
 * when the line is simple: ret_key and ret_klen the key (klen 0: no entry, a blank or comment
 * line), ret_val and ret_vlen the value (quotes removed). Returns 0, or -EBADMSG when the line
 * is not simple (a quote that is not one whole value on the line, a backslash in a quoted
 * value, "KEY:" with nothing after: dotenv may join it with the next line). */
static int settings_dotenv_line(const char *s, const char *e, const char **ret_key,
                                size_t *ret_klen, const char **ret_val, size_t *ret_vlen) {
        const char *p = s, *k, *v, *ve;
        bool colon;

        *ret_klen = 0;
        while (p < e && settings_space(*p))
                p++;
        if (p == e || *p == '#')
                return 0;
        if (e - p > 7 && strneq(p, "export", 6) && settings_space(p[6])) {
                const char *q = p + 6;
                while (q < e && settings_space(*q))
                        q++;
                if (q < e && settings_dotenv_key_char(*q))
                        p = q;
        }
        k = p;
        while (p < e && settings_dotenv_key_char(*p))
                p++;
        if (p == k)
                return memchr(s, '"', (size_t)(e - s)) || memchr(s, '\'', (size_t)(e - s)) ||
                                       memchr(s, '`', (size_t)(e - s))
                               ? -EBADMSG
                               : 0;
        *ret_key = k;
        *ret_klen = (size_t)(p - k);
        while (p < e && settings_space(*p))
                p++;
        if (p == e || (*p != '=' && *p != ':'))
                return -EBADMSG; /* no entry here, but "KEY\n=v" is one */
        colon = *p == ':';
        p++;
        if (colon && (p == e || !settings_space(*p)))
                return -EBADMSG;
        while (p < e && settings_space(*p))
                p++;
        if (p == e)
                return colon ? -EBADMSG : (*ret_val = p, *ret_vlen = 0, 0);
        if (*p == '"' || *p == '\'' || *p == '`') {
                char q = *p;
                const char *t;
                v = p + 1;
                ve = memchr(v, q, (size_t)(e - v));
                if (!ve || memchr(v, '\\', (size_t)(ve - v)))
                        return -EBADMSG;
                t = ve + 1;
                while (t < e && settings_space(*t))
                        t++;
                if (t < e && *t != '#')
                        return -EBADMSG;
                if (t < e && (memchr(t, '"', (size_t)(e - t)) || memchr(t, '\'', (size_t)(e - t)) ||
                              memchr(t, '`', (size_t)(e - t))))
                        return -EBADMSG;
        } else {
                v = p;
                ve = memchr(v, '#', (size_t)(e - v)) ?: e;
                if (memchr(v, '"', (size_t)(e - v)) || memchr(v, '\'', (size_t)(e - v)) ||
                    memchr(v, '`', (size_t)(e - v)))
                        return -EBADMSG;
                while (ve > v && settings_space(ve[-1]))
                        ve--;
        }
        *ret_val = v;
        *ret_vlen = (size_t)(ve - v);
        return 0;
}

/* The value of key in a dotenv text (buf, len): settings_read_dotenv()'s answers. */
static int settings_dotenv_value(const char *buf, size_t len, const char *key, char **ret) {
        const char *val = NULL, *p, *end;
        size_t vlen = 0, n = strlen(key);
        int r;

        *ret = NULL;
        if (!memmem(buf, len, key, n))
                return 0; /* no entry can have that key */
        if (memchr(buf, 0, len))
                return -EBADMSG;
        for (size_t i = 0; i < len; i++)
                if (buf[i] == '\r' && (i + 1 == len || buf[i + 1] != '\n'))
                        return -EBADMSG; /* a line break to dotenv */
        /* every line must be simple: a quote left open joins lines; non-ASCII may be a space to
         * JavaScript's \s */
        for (p = buf, end = buf + len; p < end;) {
                const char *e = memchr(p, '\n', (size_t)(end - p)) ?: end, *k = NULL, *v = NULL;
                size_t kl = 0, vl = 0;

                r = settings_dotenv_line(p, e, &k, &kl, &v, &vl);
                if (r < 0)
                        return r;
                if (kl == n && strneq(k, key, n)) {
                        for (size_t i = 0; i < vl; i++)
                                if ((unsigned char)v[i] >= 0x80 && (i == 0 || i == vl - 1))
                                        return -EBADMSG;
                        val = v; /* the last one wins */
                        vlen = vl;
                } else if (kl == 0 && memmem(p, (size_t)(e - p), key, n) &&
                           p[strspn(p, " \t\v\f\r")] != '#')
                        return -EBADMSG;
                p = e + 1;
        }
        if (!val || vlen == 0)
                return 0;
        *ret = strndup(val, vlen);
        return *ret ? 0 : -ENOMEM;
}

int settings_read_dotenv(const char *path, const char *key, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r;

        *ret = NULL;
        r = settings_load(path, &buf, &len);
        if (r != 0)
                return r > 0 ? 0 : r;
        return settings_dotenv_value(buf, len, key, ret);
}

int settings_read_dotenv_at(int dfd, const char *name, uid_t owner, const char *const *keys,
                            char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r;

        for (size_t i = 0; keys[i]; i++)
                ret[i] = NULL;
        r = settings_load_at(dfd, name, owner, &buf, &len);
        if (r != 0)
                return r > 0 ? 0 : r;
        for (size_t i = 0; keys[i]; i++) {
                r = settings_dotenv_value(buf, len, keys[i], &ret[i]);
                if (r < 0) {
                        for (size_t j = 0; j < i; j++) {
                                free(ret[j]);
                                ret[j] = NULL;
                        }
                        return r;
                }
        }
        return 1;
}
