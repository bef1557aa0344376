/* config-load.c: a policy file -> Config. The text is read bounded (fs_read_fd()) and its
 * @includes expanded by qgc, with a map from each line back to its file and line; libconfig
 * parses it (it never opens a file itself); each setting is read through the key table, a number
 * checked on its literal as written (libconfig 1.5 silently wraps an integer that does not fit
 * 32 bits); then the groups, project blocks, contradictions between rules, and the layering of
 * files (the system file, conf.d drop-ins, a user's file, -c).
 *
 * Includes (see "INCLUDES" in qgc.conf(5)): a line `@include "path"` (leading blanks allowed, a
 * comment after it allowed, nothing else), outside a comment or a string, is replaced by that
 * file's text. A relative path is taken from the directory of the including file. An included
 * file must be a regular file (symlinks are followed); FIFOs, devices and directories are refused
 * without being read. At most CONFIG_LOAD_DEPTH_MAX levels, CONFIG_LOAD_FILES_MAX includes and
 * CONFIG_LOAD_SIZE_MAX bytes in all; a file that includes itself, directly or not, is an error. */
#include "autoconf.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libconfig.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "fs.h"
#include "log.h"
#include "macro.h"
#include "util.h"

#define CONFIG_LOAD_SIZE_MAX (4 * 1024 * 1024) /* one file, and all files together */
#define CONFIG_LOAD_DEPTH_MAX 10
#define CONFIG_LOAD_FILES_MAX 100

/* The characters of a number's or a boolean's literal ("-12", "0x1FL", "1e-3", "TRUE"). */
#define CONFIG_LOAD_LITERAL "+-.0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
#define CONFIG_LOAD_NAME "-_*0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

typedef struct ConfigSegment {
        unsigned first; /* first line of the expanded text in this segment (1-based) */
        size_t file;    /* index into Config.files */
        unsigned line;  /* its line in that file */
} ConfigSegment;

/* One file being applied: its expanded text, its line map, and what the parse has seen. */
typedef struct ConfigLoad {
        Config *c;
        ConfigErrors *errs;
        bool allow_admin;
        size_t first_file; /* this text's files are c->files[first_file..] */
        StrBuf out;        /* the expanded text */
        unsigned out_line; /* line of `out` the next byte goes to */
        ConfigSegment *segs;
        size_t n_segs, alloc_segs;
        size_t n_included, depth;
        struct { dev_t dev; ino_t ino; } stack[CONFIG_LOAD_DEPTH_MAX + 1]; /* files being read */
        const char *cur;   /* the literal finder: a line of `out`, its number, */
        unsigned cur_line;
        const char *pos;   /* and the end of the last literal found */
        struct { size_t project; char *loc; } *seen; /* the blocks of this file, and where */
        size_t n_seen, alloc_seen;
} ConfigLoad;

/* ------------------------------------------------------------------ reading */

/* A pipe (-c /dev/stdin) or a character device cannot be pread(): read it to its end. */
static int config_load_read_stream(int fd, char **ret, size_t *ret_len) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 0;

        if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
                return -errno;
        for (;;) {
                if (len == cap) {
                        char *b;

                        cap = MIN(MAX(cap * 2, (size_t)4096), (size_t)CONFIG_LOAD_SIZE_MAX + 1);
                        b = realloc(buf, cap + 1);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                }
                ssize_t n = read(fd, buf + len, cap - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                len += (size_t)n;
                if (len > CONFIG_LOAD_SIZE_MAX)
                        return -EFBIG;
        }
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

/* Read a whole file into *ret (NUL-terminated). With regular_only, anything but a regular file is
 * refused before it is opened and again after (a FIFO or a device is never read). Returns 0, or
 * a negative errno with *ret_why set when the errno alone would not say it. */
static int config_load_read(const char *path, bool regular_only, char **ret, size_t *ret_len,
                            struct stat *ret_st, const char **ret_why) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t len;
        int r;

        *ret_why = NULL;
        if (regular_only && stat(path, &st) >= 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
                *ret_why = "not a regular file";
                return -EINVAL;
        }
        /* O_NONBLOCK: opening a FIFO without a writer must not hang */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (S_ISREG(st.st_mode))
                r = fs_read_fd(fd, CONFIG_LOAD_SIZE_MAX, &buf, &len);
        else if (regular_only) {
                *ret_why = "not a regular file";
                return -EINVAL;
        } else
                r = config_load_read_stream(fd, &buf, &len);
        if (r < 0)
                return r;
        if (strlen(buf) != len) {
                *ret_why = "contains a NUL byte";
                return -EBADMSG;
        }
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        *ret_st = st;
        return 0;
}

/* ------------------------------------------------------------------ @include */

static int config_load_add_seg(ConfigLoad *cl, size_t file, unsigned line) {
        if (util_greedy_realloc((void **)&cl->segs, &cl->alloc_segs, cl->n_segs + 1,
                                sizeof(ConfigSegment)) < 0)
                return -ENOMEM;
        cl->segs[cl->n_segs++] = (ConfigSegment){ .first = cl->out_line, .file = file,
                                                  .line = line };
        return 0;
}

/* Append a file read to c->files, with the "file:line" of its @include (NULL for a main file). */
static int config_load_add_file(ConfigLoad *cl, const char *path, const char *included_at,
                                size_t *ret) {
        Config *c = cl->c;
        char *f = strdup(path), *w = util_strdup_or_null(included_at);

        if (!f || (included_at && !w) ||
            util_greedy_realloc((void **)&c->files, &(size_t){ c->n_files }, c->n_files + 1,
                                sizeof(char *)) < 0 ||
            util_greedy_realloc((void **)&c->files_from, &(size_t){ c->n_files }, c->n_files + 1,
                                sizeof(char *)) < 0) {
                free(f);
                free(w);
                return -ENOMEM;
        }
        c->files[c->n_files] = f;
        c->files_from[c->n_files] = w;
        *ret = c->n_files++;
        return 0;
}

/* Append text[0, n) to the expanded text. */
static int config_load_emit(ConfigLoad *cl, const char *text, size_t n) {
        /* all files together, and a newline after each */
        if (cl->out.len + n > CONFIG_LOAD_SIZE_MAX + CONFIG_LOAD_FILES_MAX + 1)
                return -EFBIG;
        if (strbuf_append(&cl->out, text, n) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                cl->out_line += text[i] == '\n';
        return 0;
}

/* Is there an include directive (^[ \t]*@include[ \t]+") at s? Returns the offset just past
 * the opening quote, or 0. */
static size_t config_load_include_at(const char *s) {
        size_t i = strspn(s, " \t"), b;

        if (!strneq(s + i, "@include", 8))
                return 0;
        i += 8;
        b = strspn(s + i, " \t");
        if (b == 0 || s[i + b] != '"')
                return 0;
        return i + b + 1;
}

static int config_load_text(ConfigLoad *cl, size_t file, const char *text, size_t len,
                            bool is_include);

/* The error of an include at loc. Returns -EINVAL or -ENOMEM. */
static int config_load_include_error(ConfigLoad *cl, const char *loc, const char *arg,
                                     const char *path, int r, const char *why) {
        if (r == -ENOMEM)
                return r;
        if (!why)
                why = r == -EFBIG ? "larger than 4194304 bytes" : log_errno_to_string(-r);
        if (streq(arg, path))
                return config_error(cl->errs, loc, "@include \"%s\": %s", arg, why);
        return config_error(cl->errs, loc, "@include \"%s\" ('%s'): %s", arg, path, why);
}

/* Read the file an @include names and expand it in place. loc is the directive's "file:line". */
static int config_load_include(ConfigLoad *cl, size_t from, const char *arg, const char *loc) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        const char *dir_end = strrchr(cl->c->files[from], '/');
        const char *why = NULL;
        struct stat st;
        size_t len, file;
        int r;

        if (arg[0] == '\0')
                return config_error(cl->errs, loc, "@include \"\": empty path");
        /* relative to the including file's directory */
        if (arg[0] == '/' || !dir_end)
                path = strdup(arg);
        else
                path = util_strprintf("%.*s/%s", (int)(dir_end - cl->c->files[from]),
                                      cl->c->files[from], arg);
        if (!path)
                return -ENOMEM;
        if (cl->depth >= CONFIG_LOAD_DEPTH_MAX)
                return config_load_include_error(cl, loc, arg, path, -ELOOP,
                                                 "includes nested too deep (at most 10 levels)");
        if (cl->n_included >= CONFIG_LOAD_FILES_MAX)
                return config_load_include_error(cl, loc, arg, path, -E2BIG,
                                                 "too many includes (at most 100 in all)");
        r = config_load_read(path, /* regular_only= */ true, &text, &len, &st, &why);
        if (r < 0)
                return config_load_include_error(cl, loc, arg, path, r, why);
        for (size_t i = 0; i <= cl->depth; i++)
                if (cl->stack[i].dev == st.st_dev && cl->stack[i].ino == st.st_ino)
                        return config_load_include_error(cl, loc, arg, path, -ELOOP,
                                                         "include cycle: the file is already "
                                                         "being read");
        r = config_load_add_file(cl, path, loc, &file);
        if (r < 0)
                return r;
        cl->n_included++;
        cl->depth++;
        cl->stack[cl->depth].dev = st.st_dev;
        cl->stack[cl->depth].ino = st.st_ino;
        r = config_load_text(cl, file, text, len, /* is_include= */ true);
        cl->depth--;
        return r;
}

/* Parse the directive whose path starts at s (after the quote) into *ret_arg; *ret_end is the
 * end of its line (the '\n' or the NUL). Returns "", or a static error message (NULL: ENOMEM). */
static const char *config_load_directive(const char *s, char **ret_arg, const char **ret_end) {
        _cleanup_(strbuf_done) StrBuf b = {};
        const char *p = s;

        for (; *p != '"'; p++) {
                if (*p == '\0' || *p == '\n')
                        return "unterminated @include path";
                if (*p == '\\') {
                        if (p[1] != '\\' && p[1] != '"')
                                return "invalid escape in @include path (only \\\\ and \\\")";
                        p++;
                }
                if (strbuf_append(&b, p, 1) < 0)
                        return NULL;
        }
        p++;
        p += strspn(p, " \t\r");
        if (*p == '#' || (p[0] == '/' && p[1] == '/'))
                p += strcspn(p, "\n");
        if (*p != '\0' && *p != '\n')
                return "only a comment may follow @include \"...\" on its line";
        *ret_end = p;
        *ret_arg = b.buf ? strbuf_steal(&b) : strdup("");
        return *ret_arg ? "" : NULL;
}

/* Expand one file's text into the output. libconfig's scanner (lib/scanner.l) sees a directive
 * only at the start of a line outside a comment or a string; strings and block comments may
 * span lines. */
static int config_load_text(ConfigLoad *cl, size_t file, const char *text, size_t len,
                            bool is_include) {
        enum { INITIAL, COMMENT, STRING } state = INITIAL;
        const char *p = text, *end = text + len, *chunk = text;
        unsigned line = 1;
        bool bol = true;
        int r;

        r = config_load_add_seg(cl, file, 1);
        if (r < 0)
                return r;
        while (p < end) {
                if (state == COMMENT) {
                        if (p[0] == '*' && p[1] == '/') {
                                state = INITIAL;
                                p += 2;
                        } else
                                line += *p++ == '\n';
                        continue;
                }
                if (state == STRING) {
                        if (*p == '\\' && p + 1 < end) {
                                line += p[1] == '\n';
                                p += 2;
                        } else if (*p == '"') {
                                state = INITIAL;
                                p++;
                        } else
                                line += *p++ == '\n';
                        continue;
                }
                size_t q = bol ? config_load_include_at(p) : 0;
                if (q > 0) {
                        _cleanup_free_ char *arg = NULL, *loc = NULL;
                        const char *eol = NULL, *why;

                        loc = util_strprintf("%s:%u", cl->c->files[file], line);
                        if (!loc)
                                return -ENOMEM;
                        why = config_load_directive(p + q, &arg, &eol);
                        if (!why)
                                return -ENOMEM;
                        if (why[0] != '\0')
                                return config_error(cl->errs, loc, "%s", why);
                        /* the text before the directive's line, then the file's */
                        r = config_load_emit(cl, chunk, (size_t)(p - chunk));
                        if (r >= 0)
                                r = config_load_include(cl, file, arg, loc);
                        if (r < 0)
                                return r;
                        /* back in this file: the line after the directive */
                        p = eol < end ? eol + 1 : end;
                        chunk = p;
                        line++;
                        r = config_load_add_seg(cl, file, line);
                        if (r < 0)
                                return r;
                        continue;
                }
                bol = *p == '\n';
                if (*p == '#' || (p[0] == '/' && p[1] == '/'))
                        p += strcspn(p, "\n");
                else if (p[0] == '/' && p[1] == '*') {
                        state = COMMENT;
                        p += 2;
                } else {
                        state = *p == '"' ? STRING : INITIAL;
                        line += *p++ == '\n';
                }
        }
        if (is_include && state != INITIAL)
                return config_error(cl->errs, NULL,
                                    "%s:%u: unterminated %s at the end of an included file",
                                    cl->c->files[file], line,
                                    state == STRING ? "string" : "comment");
        r = config_load_emit(cl, chunk, (size_t)(end - chunk));
        /* the next line of the including file must start a line of its own */
        if (r >= 0 && len > 0 && text[len - 1] != '\n')
                r = config_load_emit(cl, "\n", 1);
        return r;
}

/* "file:line" of a line of the expanded text (line 0, or past the end, maps to the last
 * segment); the file's index in *ret_file and its line in *ret_line when asked. */
static char *config_load_where(const ConfigLoad *cl, unsigned line, size_t *ret_file,
                               unsigned *ret_line) {
        size_t lo = 0, hi = cl->n_segs;

        /* the last segment that starts at or before line (an empty one is followed by one
         * starting at the same line, which wins) */
        while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;
                if (cl->segs[mid].first <= line)
                        lo = mid;
                else
                        hi = mid;
        }
        const ConfigSegment *s = &cl->segs[lo];
        unsigned l = s->first > line ? line : s->line + (line - s->first);

        if (ret_file)
                *ret_file = s->file;
        if (ret_line)
                *ret_line = l;
        return util_strprintf("%s:%u", cl->c->files[s->file], l);
}

static char *config_load_loc(const ConfigLoad *cl, const config_setting_t *s) {
        return config_load_where(cl, config_setting_source_line(s), NULL, NULL);
}

/* ------------------------------------------------------------------ literals */

/* The exact value of an integer literal ("-12", "0x1FL"): 0, -ERANGE when it does not fit in an
 * int64_t, -EINVAL when s is not an integer literal. */
static int config_load_integer(const char *s, long long *ret) {
        bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
        const char *d = s + (hex ? 2 : s[0] == '-' || s[0] == '+');
        size_t n = strspn(d, hex ? "0123456789abcdefABCDEF" : "0123456789");
        unsigned long long u;

        if (n == 0 || (!streq(d + n, "") && !streq(d + n, "L") && !streq(d + n, "LL")))
                return -EINVAL;
        errno = 0;
        if (!hex) {
                *ret = strtoll(s, NULL, 10);
                return errno == ERANGE ? -ERANGE : 0;
        }
        u = strtoull(s, NULL, 16);
        if (errno == ERANGE || u > INT64_MAX)
                return -ERANGE;
        *ret = (long long)u;
        return 0;
}

/* Does lit read as libconfig read setting s? Where libconfig cannot go wrong, it must agree. */
static bool config_load_agrees(const config_setting_t *s, const char *lit) {
        long long v;
        int r = config_load_integer(lit, &v);

        switch (config_setting_type(s)) {
        case CONFIG_TYPE_INT:
        case CONFIG_TYPE_INT64:
                return r == -ERANGE || (r == 0 && (v < INT32_MIN || v > INT32_MAX ||
                                                   v == config_setting_get_int64(s)));
        case CONFIG_TYPE_FLOAT:
                return r == -EINVAL && strtod(lit, NULL) == config_setting_get_float(s);
        case CONFIG_TYPE_BOOL:
                return !util_ascii_strcasecmp(lit, config_setting_get_bool(s) ? "true" : "false");
        }
        return false;
}

/* p past blanks and comments. */
static const char *config_load_skip(const char *p) {
        for (;;) {
                p += strspn(p, " \t\r\n\f");
                if (*p == '#' || (p[0] == '/' && p[1] == '/'))
                        p += strcspn(p, "\n");
                else if (p[0] == '/' && p[1] == '*' && strstr(p + 2, "*/"))
                        p = strstr(p + 2, "*/") + 2;
                else
                        return p;
        }
}

/* The start of line n of the expanded text. Settings come in the order of the text, so a
 * cursor moves forward. */
static const char *config_load_line(ConfigLoad *cl, unsigned n) {
        if (!cl->cur || n < cl->cur_line) {
                cl->cur = cl->out.buf;
                cl->cur_line = 1;
        }
        for (const char *nl; cl->cur_line < n && (nl = strchr(cl->cur, '\n')); cl->cur_line++)
                cl->cur = nl + 1;
        return cl->cur;
}

/* Hook to every named number and boolean its literal as written, which libconfig does not keep:
 * on the setting's line, the first value after its name and '=' (or ':') that reads as
 * libconfig read it, past the literal of the setting before (settings come in the order of the
 * text). A setting without one has no literal, and its value is refused. */
static int config_load_literals(ConfigLoad *cl, config_setting_t *s) {
        int type = config_setting_type(s);
        const char *name = config_setting_name(s), *line;
        size_t nl;

        if (type == CONFIG_TYPE_GROUP || type == CONFIG_TYPE_LIST || type == CONFIG_TYPE_ARRAY) {
                for (int j = 0; j < config_setting_length(s); j++) {
                        int r = config_load_literals(cl, config_setting_get_elem(s, (unsigned)j));
                        if (r < 0)
                                return r;
                }
                return 0;
        }
        if (!name || type == CONFIG_TYPE_STRING)
                return 0;
        line = config_load_line(cl, config_setting_source_line(s));
        nl = strlen(name);
        for (const char *q = MAX(line, cl->pos); *q && *q != '\n'; q++) {
                const char *v = q + nl;
                char *lit;

                if (!strneq(q, name, nl) || (q > line && strchr(CONFIG_LOAD_NAME, q[-1])) ||
                    (*v && strchr(CONFIG_LOAD_NAME, *v)))
                        continue;
                v = config_load_skip(v);
                if (*v != '=' && *v != ':')
                        continue;
                v = config_load_skip(v + 1);
                lit = strndup(v, strspn(v, CONFIG_LOAD_LITERAL));
                if (!lit)
                        return -ENOMEM;
                if (config_load_agrees(s, lit)) {
                        config_setting_set_hook(s, lit);
                        cl->pos = v + strlen(lit);
                        return 0;
                }
                free(lit);
        }
        return 0;
}

/* ------------------------------------------------------------------ values */

static const char *config_load_type_name(int type) {
        switch (type) {
        case CONFIG_TYPE_GROUP:
                return "a group";
        case CONFIG_TYPE_INT:
        case CONFIG_TYPE_INT64:
                return "an integer";
        case CONFIG_TYPE_FLOAT:
                return "a float";
        case CONFIG_TYPE_STRING:
                return "a string";
        case CONFIG_TYPE_BOOL:
                return "a boolean";
        case CONFIG_TYPE_ARRAY:
                return "an array";
        case CONFIG_TYPE_LIST:
                return "a list";
        default:
                return "something else";
        }
}

/* The literal of a number or boolean as written (config_load_literals()), or NULL. */
static const char *config_load_raw(const config_setting_t *s) {
        return config_setting_get_hook(s);
}

/* "an integer (4294967297)", "a string (\"x\")", "a list": the type and the value as given,
 * for messages. NULL on ENOMEM. */
static char *config_load_describe(const config_setting_t *s) {
        int type = config_setting_type(s);
        const char *raw = config_load_raw(s);

        if (type == CONFIG_TYPE_STRING)
                return util_strprintf("a string (\"%s\")", config_setting_get_string(s));
        if (raw)
                return util_strprintf("%s (%s)", config_load_type_name(type), raw);
        return strdup(config_load_type_name(type));
}

/* Append "loc: <key>: expected <what>, got <s described>". */
static int config_load_expected(ConfigErrors *errs, const char *loc, const char *key,
                                const char *what, const config_setting_t *s) {
        _cleanup_free_ char *got = config_load_describe(s);

        if (!got)
                return -ENOMEM;
        return config_error(errs, loc, "%s: expected %s, got %s", key, what, got);
}

/* The exact value of an integer setting, from its literal. -ERANGE when it does not fit in 64
 * bits; -EINVAL (with an error appended) when the literal is unknown. */
static int config_load_exact(const config_setting_t *s, const char *key, const char *loc,
                             long long *ret, ConfigErrors *errs) {
        const char *raw = config_load_raw(s);
        int r;

        r = raw ? config_load_integer(raw, ret) : -EINVAL;
        if (r == -EINVAL)
                return config_error(errs, loc, "%s: cannot tell the value as written", key);
        return r;
}

static bool config_load_is_number(const config_setting_t *s) {
        return config_setting_type(s) == CONFIG_TYPE_INT ||
               config_setting_type(s) == CONFIG_TYPE_INT64;
}

/* A setting's string value, or NULL. */
static const char *config_load_string_of(const config_setting_t *s) {
        return config_setting_type(s) == CONFIG_TYPE_STRING ? config_setting_get_string(s) : NULL;
}

/* The readers of each type of value: setting s at loc as key k into f (the key's field). Every
 * problem is appended to errs as "loc: <key>: ..." and returns -EINVAL; -ENOMEM. */

/* A duration string ("90d") or "off", within the key's bounds. */
static int config_load_duration(const ConfigKeyInfo *k, const config_setting_t *s, const char *loc,
                                msec_t *f, ConfigErrors *errs) {
        char buf[FORMAT_DURATION_MAX];
        const char *why = NULL, *v = config_load_string_of(s);
        msec_t d;

        if (config_load_is_number(s)) {
                const char *raw = config_load_raw(s) ?: "?";
                bool plain = raw[strspn(raw, "0123456789")] == '\0' && strlen(raw) <= 6;
                return config_error(errs, loc,
                                    "%s: expected a duration string with a unit such as \"%sd\", "
                                    "got a bare number (%s)",
                                    k->name, plain ? raw : "90", raw);
        }
        if (!v)
                return config_load_expected(errs, loc, k->name,
                                            "a duration string such as \"90d\"", s);
        if (streq(v, "off")) {
                if (k->off == CONFIG_OFF_NO)
                        return config_error(errs, loc, "%s cannot be \"off\"", k->name);
                *f = k->off == CONFIG_OFF_ZERO ? 0 : MSEC_INFINITY;
                return 0;
        }
        if (util_parse_duration(v, &d, &why) < 0)
                return config_error(errs, loc, "%s: invalid duration \"%s\": %s", k->name, v, why);
        if (d == 0 && k->off != CONFIG_OFF_NO)
                return config_error(errs, loc,
                                    "%s: a zero limit is ambiguous (\"%s\"); write \"off\" to "
                                    "disable it",
                                    k->name, v);
        if (d < (msec_t)k->min)
                return config_error(errs, loc, "%s: %s is too short (at least %s)", k->name, v,
                                    util_format_duration_exact(buf, sizeof buf, (msec_t)k->min));
        if (d > (msec_t)k->max)
                return config_error(errs, loc, "%s: %s is out of range (at most %s)", k->name, v,
                                    util_format_duration_exact(buf, sizeof buf, (msec_t)k->max));
        *f = d;
        return 0;
}

/* An integer count, or "off" when allowed; checked on the literal, not libconfig's value. */
static int config_load_count(const ConfigKeyInfo *k, const config_setting_t *s, const char *loc,
                             uint64_t *f, ConfigErrors *errs) {
        bool allow_off = k->off == CONFIG_OFF_ZERO;
        const char *v = config_load_string_of(s);
        long long n = 0;
        int r;

        if (allow_off && v && streq(v, "off")) {
                *f = 0;
                return 0;
        }
        if (!config_load_is_number(s))
                return config_load_expected(errs, loc, k->name,
                                            allow_off ? "an integer or \"off\"" : "an integer", s);
        r = config_load_exact(s, k->name, loc, &n, errs);
        if (r < 0 && r != -ERANGE)
                return r;
        if (r >= 0 && n == 0 && allow_off)
                return config_error(errs, loc,
                                    "%s: a zero limit is ambiguous (%s); write \"off\" to disable "
                                    "it",
                                    k->name, config_load_raw(s));
        if (r == -ERANGE || n < 0 || (uint64_t)n < k->min || (uint64_t)n > k->max)
                return config_error(errs, loc,
                                    "%s: %s is out of range (%" PRIu64 " to %" PRIu64 ")", k->name,
                                    config_load_raw(s), k->min, k->max);
        *f = (uint64_t)n;
        return 0;
}

/* A size string ("5G"; "10%" for SIZE_OR_PERCENT, below k->max percent) or "off" (is_set
 * false). */
static int config_load_size(const ConfigKeyInfo *k, const config_setting_t *s, const char *loc,
                            SizeSpec *f, ConfigErrors *errs) {
        const char *why = NULL, *v = config_load_string_of(s);
        bool allow_percent = k->type == CONFIG_VALUE_SIZE_OR_PERCENT;
        SizeSpec sz;

        if (config_load_is_number(s))
                return config_error(errs, loc,
                                    "%s: expected a size string with a unit such as \"5G\", got a "
                                    "bare number (%s)",
                                    k->name, config_load_raw(s) ?: "?");
        if (!v)
                return config_load_expected(errs, loc, k->name, "a size string such as \"5G\"", s);
        if (streq(v, "off")) {
                *f = (SizeSpec){};
                return 0;
        }
        if (util_parse_size(v, allow_percent, &sz, &why) < 0)
                return config_error(errs, loc, "%s: invalid size \"%s\": %s", k->name, v, why);
        if (sz.is_percent && strchr(v, '.'))
                return config_error(errs, loc,
                                    "%s: invalid size \"%s\": fractional percentages are not "
                                    "supported (write a whole number such as \"10%%\")",
                                    k->name, v);
        if ((sz.is_percent && sz.percent <= 0) || (!sz.is_percent && sz.bytes == 0))
                return config_error(errs, loc,
                                    "%s: a zero limit is ambiguous (\"%s\"); write \"off\" to "
                                    "disable it",
                                    k->name, v);
        if (v[strspn(v, "0123456789")] == '\0') /* "500": bytes, or a forgotten "M"? */
                return config_error(errs, loc,
                                    "%s: invalid size \"%s\": missing unit (K, M, G or T; B for "
                                    "bytes)",
                                    k->name, v);
        if (sz.is_percent && sz.percent >= (double)k->max)
                return config_error(errs, loc, "%s: %s is out of range (below %" PRIu64 "%%)",
                                    k->name, v, k->max);
        *f = sz;
        return 0;
}

/* A percentage: 50, 12.5, "50%" or "off"; (0, 100]. */
static int config_load_percent(const ConfigKeyInfo *k, const config_setting_t *s, const char *loc,
                               double *f, ConfigErrors *errs) {
        _cleanup_free_ char *quoted = NULL;
        const char *shown = config_load_raw(s), *v = config_load_string_of(s), *why;
        long long n;
        SizeSpec sz;
        double d;
        int r;

        if (config_load_is_number(s)) {
                r = config_load_exact(s, k->name, loc, &n, errs);
                if (r == -EINVAL || r == -ENOMEM)
                        return r;
                d = r == -ERANGE ? -1 : (double)n;
        } else if (config_setting_type(s) == CONFIG_TYPE_FLOAT)
                d = config_setting_get_float(s);
        else if (!v)
                return config_load_expected(errs, loc, k->name, "a percentage", s);
        else if (streq(v, "off")) {
                *f = 0;
                return 0;
        } else if (!strchr(v, '%') || util_parse_size(v, /* allow_percent= */ true, &sz, &why) < 0)
                return config_error(errs, loc,
                                    "%s: invalid percentage \"%s\" (write 50, 12.5 or \"off\")",
                                    k->name, v);
        else {
                d = sz.percent;
                shown = quoted = util_strprintf("\"%s\"", v);
                if (!quoted)
                        return -ENOMEM;
        }
        if (!shown)
                return config_error(errs, loc, "%s: cannot tell the value as written", k->name);
        if (d == 0)
                return config_error(errs, loc,
                                    "%s: a zero limit is ambiguous (%s); write \"off\" to disable "
                                    "it",
                                    k->name, shown);
        if (!(d > 0 && d <= 100))
                return config_error(errs, loc, "%s: %s is out of range (more than 0, at most 100)",
                                    k->name, shown);
        *f = d;
        return 0;
}

/* A list of absolute paths: ( "/srv/home", ... ). All or nothing. */
static int config_load_path_list(const ConfigKeyInfo *k, const config_setting_t *s,
                                 const char *loc, void *base, ConfigErrors *errs) {
        int m = config_setting_length(s), r = 0;
        char **v;

        if (!config_setting_is_list(s) && !config_setting_is_array(s)) {
                _cleanup_free_ char *what =
                        util_strprintf("a list of paths such as ( \"%s\" )", k->example);
                return what ? config_load_expected(errs, loc, k->name, what, s) : -ENOMEM;
        }
        v = calloc((size_t)m + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        for (int j = 0; j < m && r != -ENOMEM; j++) {
                const config_setting_t *e = config_setting_get_elem(s, (unsigned)j);
                const char *d = config_load_string_of(e);

                if (!d || d[0] != '/') {
                        _cleanup_free_ char *got = config_load_describe(e);
                        r = got ? config_error(errs, loc,
                                               "%s: entry %d, %s, is not an absolute path",
                                               k->name, j + 1, got)
                                : -ENOMEM;
                } else if (!(v[j] = strdup(d)))
                        r = -ENOMEM;
        }
        if (r < 0) {
                config_strv_free(v, (size_t)m);
                return r;
        }
        config_strv_free(*(char ***)config_key_ptr(k, base), *config_key_count(k, base));
        *(char ***)config_key_ptr(k, base) = v;
        *config_key_count(k, base) = (size_t)m;
        return 0;
}

/* Read setting s as key k into base (see config_key_ptr()). */
static int config_load_value(const ConfigKeyInfo *k, const config_setting_t *s, const char *loc,
                             void *base, ConfigErrors *errs) {
        const char *v = config_load_string_of(s), *const *w = k->words;
        void *f = config_key_ptr(k, base);
        SizeSpec sz;
        int r;

        switch (k->type) {
        case CONFIG_VALUE_CHOICE: {
                for (size_t i = 0; v && i < k->n_words; i++)
                        if (streq(v, w[i])) {
                                config_key_set_choice(k, base, (int)i);
                                return 0;
                        }
                if (v)
                        return config_error(errs, loc,
                                            "%s: invalid value \"%s\" (expected \"%s\" or \"%s\")",
                                            k->name, v, w[0], w[1]);
                _cleanup_free_ char *what = util_strprintf("\"%s\" or \"%s\"", w[0], w[1]);
                return what ? config_load_expected(errs, loc, k->name, what, s) : -ENOMEM;
        }
        case CONFIG_VALUE_DURATION:
                return config_load_duration(k, s, loc, f, errs);
        case CONFIG_VALUE_COUNT:
                return config_load_count(k, s, loc, f, errs);
        case CONFIG_VALUE_SIZE:
                r = config_load_size(k, s, loc, &sz, errs);
                if (r >= 0)
                        *(uint64_t *)f = sz.is_set ? sz.bytes : 0;
                return r;
        case CONFIG_VALUE_SIZE_OR_PERCENT:
                return config_load_size(k, s, loc, f, errs);
        case CONFIG_VALUE_BOOL:
                if (v)
                        return config_error(errs, loc,
                                            "%s: expected true or false (without quotes), got a "
                                            "string (\"%s\")",
                                            k->name, v);
                if (config_setting_type(s) != CONFIG_TYPE_BOOL)
                        return config_load_expected(errs, loc, k->name, "true or false", s);
                *(bool *)f = config_setting_get_bool(s);
                return 0;
        case CONFIG_VALUE_PERCENT:
                return config_load_percent(k, s, loc, f, errs);
        case CONFIG_VALUE_PATH: {
                if (v && v[0] == '/')
                        return config_set_str(f, v);
                _cleanup_free_ char *what =
                        util_strprintf("an absolute path such as \"%s\"", k->example);
                return what ? config_load_expected(errs, loc, k->name, what, s) : -ENOMEM;
        }
        case CONFIG_VALUE_PATH_LIST:
                return config_load_path_list(k, s, loc, base, errs);
        }
        return -EINVAL;
}

/* "unknown key 'x' in <where>" with a did-you-mean from names, and a hint for a policy or tree
 * key in the wrong group. */
static int config_load_unknown(ConfigErrors *errs, const char *loc, const char *name,
                               const char *where, const char *const *names, size_t n) {
        const char *s = util_closest_name(name, names, n);
        bool is_policy = config_key_find(CONFIG_SCOPE_POLICY, name) != NULL;
        bool is_tree = config_key_find(CONFIG_SCOPE_TREE, name) != NULL;

        if (s)
                return config_error(errs, loc, "unknown key '%s' in %s; did you mean '%s'?", name,
                                    where, s);
        if (is_policy)
                return config_error(errs, loc,
                                    "'%s' is a policy key: put it in defaults = { ... } or a "
                                    "project block",
                                    name);
        if (is_tree)
                return config_error(errs, loc, "'%s' is a tree key: put it in tree = { ... }",
                                    name);
        return config_error(errs, loc, "unknown key '%s' in %s", name, where);
}


/* ------------------------------------------------------------------ groups */

/* Parse every key of a group of `scope` into base (the Policy of defaults or a project block,
 * or the Config), the origins and *mask (project blocks: their "path" is not a key). */
static int config_load_group(ConfigLoad *cl, const config_setting_t *g, ConfigScope scope,
                             const char *where, void *base, PolicyOrigin *o, unsigned *mask) {
        const char *names[_CONFIG_KEY_MAX + 1];
        bool is_project = mask != NULL;
        size_t n_names = 0;
        int n = config_setting_length(g);

        for (size_t i = 0; i < _CONFIG_KEY_MAX; i++)
                if (config_keys[i].scope == scope)
                        names[n_names++] = config_keys[i].name;
        if (is_project)
                names[n_names++] = "path";
        for (int i = 0; i < n; i++) {
                const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
                const char *name = config_setting_name(s);
                _cleanup_free_ char *loc = config_load_loc(cl, s);
                const ConfigKeyInfo *k;
                char **origin;
                int r;

                if (!loc)
                        return -ENOMEM;
                if (is_project && name && streq(name, "path"))
                        continue;
                k = config_key_find(scope, name);
                if (!k) {
                        r = config_load_unknown(cl->errs, loc, name ? name : "?", where, names,
                                                n_names);
                        if (r == -ENOMEM)
                                return r;
                        continue;
                }
                r = config_load_value(k, s, loc, base, cl->errs);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue;
                origin = config_key_origin(k, cl->c, o);
                free(*origin);
                *origin = TAKE_PTR(loc);
                if (mask)
                        *mask |= 1u << config_key_index(k);
        }
        return 0;
}

/* Validate and normalize a project path: absolute (or a glob starting with a wildcard), no
 * trailing slash. */
static int config_load_pattern(const config_setting_t *g, const char *loc, ConfigErrors *errs,
                               char **ret) {
        const config_setting_t *s = config_setting_get_member(g, "path");
        const char *v;
        char *p;
        size_t l;

        if (!s)
                return config_error(errs, loc, "project block without a path");
        if (config_setting_type(s) != CONFIG_TYPE_STRING)
                return config_load_expected(errs, loc, "path", "a string", s);
        v = config_setting_get_string(s);
        if (v[0] != '/' && v[0] != '*')
                return config_error(errs, loc,
                                    "path: \"%s\" is not an absolute path (or a glob starting "
                                    "with '*')",
                                    v);
        p = strdup(v);
        if (!p)
                return -ENOMEM;
        l = strlen(p);
        while (l > 1 && p[l - 1] == '/')
                p[--l] = '\0';
        *ret = p;
        return 0;
}

static int config_load_project(ConfigLoad *cl, const config_setting_t *g) {
        Config *c = cl->c;
        _cleanup_free_ char *loc = config_load_loc(cl, g), *pattern = NULL, *where = NULL;
        PolicyOrigin o = {};
        Policy p = c->defaults;
        unsigned mask = 0;
        ProjectOverride *po = NULL;
        int r;

        if (!loc)
                return -ENOMEM;
        if (!config_setting_is_group(g)) {
                r = config_error(cl->errs, loc,
                                 "each entry of projects must be a group: { path = \"...\"; ... }");
                return r == -ENOMEM ? r : 0; /* go on: report the file's other errors too */
        }
        r = config_load_pattern(g, loc, cl->errs, &pattern);
        if (r == -ENOMEM)
                return r;
        where = util_strprintf("project '%s'", pattern ? pattern : "?");
        if (!where)
                return -ENOMEM;
        r = config_load_group(cl, g, CONFIG_SCOPE_POLICY, where, &p, &o, &mask);
        if (r < 0 || !pattern)
                goto finish;

        for (size_t i = 0; i < cl->n_seen; i++)
                if (streq(c->projects[cl->seen[i].project].pattern, pattern)) {
                        r = config_error(cl->errs, loc,
                                         "project path '%s' is already configured at %s", pattern,
                                         cl->seen[i].loc);
                        goto finish;
                }
        for (size_t i = 0; i < c->n_projects; i++)
                if (streq(c->projects[i].pattern, pattern))
                        po = &c->projects[i]; /* from an earlier file: layer on top of it */
        if (!po) {
                /* no capacity is kept: grow by one each time (a file has few blocks) */
                if (util_greedy_realloc((void **)&c->projects, &(size_t){ c->n_projects },
                                        c->n_projects + 1, sizeof(ProjectOverride)) < 0) {
                        r = -ENOMEM;
                        goto finish;
                }
                size_t file;
                unsigned line;

                free(config_load_where(cl, config_setting_source_line(g), &file, &line));
                po = &c->projects[c->n_projects++];
                *po = (ProjectOverride){ .pattern = TAKE_PTR(pattern), .policy = c->defaults,
                                         .line = (int)line };
                po->is_glob = strpbrk(po->pattern, "*?[\\") != NULL;
                po->file = strdup(c->files[file]);
                if (!po->file) {
                        r = -ENOMEM;
                        goto finish;
                }
        }
        if (util_greedy_realloc((void **)&cl->seen, &cl->alloc_seen, cl->n_seen + 1,
                                sizeof(*cl->seen)) < 0) {
                r = -ENOMEM;
                goto finish;
        }
        cl->seen[cl->n_seen].project = (size_t)(po - c->projects);
        cl->seen[cl->n_seen++].loc = TAKE_PTR(loc);
        for (size_t k = 0; k < _POLICY_KEY_MAX; k++) {
                if (!(mask & (1u << k)))
                        continue;
                config_key_copy(&config_keys[k], &po->policy, &p);
                free(po->origin.where[k]);
                po->origin.where[k] = TAKE_PTR(o.where[k]);
        }
        po->set_mask |= mask;
        r = 0;
finish:
        config_origin_done(&o);
        return r == -ENOMEM ? r : 0;
}

static int config_load_projects(ConfigLoad *cl, const config_setting_t *l) {
        int n = config_setting_length(l);

        if (!config_setting_is_list(l)) {
                _cleanup_free_ char *loc = config_load_loc(cl, l);
                if (!loc)
                        return -ENOMEM;
                int r = config_error(cl->errs, loc,
                                     "projects must be a list: projects = ( { path = \"...\"; "
                                     "... }, ... );");
                return r == -ENOMEM ? r : 0;
        }
        for (int i = 0; i < n; i++) {
                int r = config_load_project(cl, config_setting_get_elem(l, (unsigned)i));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ------------------------------------------------------------------ contradictions */

static bool config_load_owns(const ConfigLoad *cl, const char *origin) {
        return config_origin_in_files(origin, cl->c->files + cl->first_file,
                                      cl->c->n_files - cl->first_file);
}

/* Report "a > b" for keys ka, kb of a policy, at the line of whichever this file set. */
static int config_load_check_pair(ConfigLoad *cl, const Policy *p, const PolicyOrigin *o,
                                  const char *ctx, PolicyKey ka, PolicyKey kb,
                                  const char *relation) {
        char va[32], vb[32];
        const char *oa = o->where[ka], *ob = o->where[kb];
        const char *loc = config_load_owns(cl, ob) ? ob : config_load_owns(cl, oa) ? oa : ob;

        return config_error(cl->errs, loc, "%s%s %s (%s) is %s %s %s (%s)", ctx,
                            config_keys[ka].name,
                            config_key_format_buf(&config_keys[ka], p, va, sizeof va), oa,
                            relation, config_keys[kb].name,
                            config_key_format_buf(&config_keys[kb], p, vb, sizeof vb), ob);
}

/* The position in c->files of the file an origin ("file:line") names; -1 when none. */
static ssize_t config_load_rank(const Config *c, const char *origin) {
        const char *colon = strrchr(origin, ':');
        size_t len = colon ? (size_t)(colon - origin) : strlen(origin);

        for (size_t i = c->n_files; i > 0; i--)
                if (strlen(c->files[i - 1]) == len && strneq(c->files[i - 1], origin, len))
                        return (ssize_t)(i - 1);
        return -1;
}
/* A grace that must not exceed a limit (when the limit is on). */
static const struct {
        PolicyKey grace, limit;
        const char *relation;
} config_load_pairs[] = {
        { POLICY_KEY_MIN_AGE, POLICY_KEY_MAX_AGE, "longer than" },
        { POLICY_KEY_MIN_IDLE, POLICY_KEY_MAX_AGE, "longer than" },
        { POLICY_KEY_MIN_AGE, POLICY_KEY_ARCHIVE_MAX_AGE, "longer than" },
        { POLICY_KEY_KEEP_LATEST, POLICY_KEY_MAX_SESSIONS, "more than" },
};

/* Rules that contradict each other within one effective policy. Only pairs touching `mask`
 * are reported, so a contradiction in the defaults is not repeated for every project. A grace
 * (min-age, min-idle, keep-latest) longer than a limit is reported only when a file wrote both
 * and the grace comes from the same file as the limit or a later one: a grace of an earlier
 * layer (the built-in default, the system file, a drop-in) simply wins over a short limit of a
 * later one, so "max-age 1d" is valid alone and under the shipped /etc/qgc/qgc.conf alike,
 * which writes the built-in values (issue 11). */
static int config_load_check_policy(ConfigLoad *cl, const Policy *p, const PolicyOrigin *o,
                                    unsigned mask, const char *ctx) {
#define WRITTEN(k) (o->where[k] && !streq(o->where[k], CONFIG_BUILTIN))
#define TOUCHES(a, b)                                                                              \
        ((mask & ((1u << (a)) | (1u << (b)))) && WRITTEN(a) && WRITTEN(b) &&                      \
         config_load_rank(cl->c, o->where[a]) >= config_load_rank(cl->c, o->where[b]))
        int r = 0;

        for (size_t i = 0; i < ELEMENTSOF(config_load_pairs) && r != -ENOMEM; i++) {
                PolicyKey g = config_load_pairs[i].grace, l = config_load_pairs[i].limit;
                uint64_t vg = config_key_number(&config_keys[g], p);
                uint64_t vl = config_key_number(&config_keys[l], p);

                if (vl > 0 && vg > vl && TOUCHES(g, l))
                        r = config_load_check_pair(cl, p, o, ctx, g, l,
                                                   config_load_pairs[i].relation);
        }
        return r == -ENOMEM ? r : 0;
#undef TOUCHES
#undef WRITTEN
}

static int config_load_check_tree(ConfigLoad *cl) {
        const TreeLimits *t = &cl->c->tree;
        char a[FORMAT_SIZE_EXACT_MAX], b[FORMAT_SIZE_EXACT_MAX];
        const char *loc;
        int r = 0;

        if (t->low_watermark == 0)
                return 0;
        loc = config_load_owns(cl, t->origin_low_watermark) ? t->origin_low_watermark
                                                                  : t->origin_max_size;
        if (t->max_size == 0)
                r = config_error(cl->errs, loc,
                                 "tree low-watermark %s (%s) is set but tree max-size is off",
                                 util_format_size_exact(a, sizeof a, t->low_watermark),
                                 t->origin_low_watermark);
        else if (t->low_watermark >= t->max_size)
                r = config_error(
                        cl->errs, loc, "tree low-watermark %s (%s) is not below max-size %s (%s)",
                        util_format_size_exact(a, sizeof a, t->low_watermark),
                        t->origin_low_watermark, util_format_size_exact(b, sizeof b, t->max_size),
                        t->origin_max_size);
        return r == -ENOMEM ? r : 0;
}

static int config_load_check(ConfigLoad *cl) {
        Config *c = cl->c;
        int r;

        r = config_load_check_policy(cl, &c->defaults, &c->defaults_origin, ~0u, "");
        if (r < 0)
                return r;
        for (size_t i = 0; i < c->n_projects; i++) {
                _cleanup_free_ char *ctx = util_strprintf("project '%s': ", c->projects[i].pattern);
                if (!ctx)
                        return -ENOMEM;
                r = config_load_check_policy(cl, &c->projects[i].policy, &c->projects[i].origin,
                                        c->projects[i].set_mask, ctx);
                if (r < 0)
                        return r;
        }
        return config_load_check_tree(cl);
}

/* ------------------------------------------------------------------ applying */

static int config_load_root(ConfigLoad *cl, const config_setting_t *root) {
        static const char *const top[] = { "defaults", "tree", "projects", "admin" };
        int n = config_setting_length(root);
        int r;

        for (int i = 0; i < n; i++) {
                const config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
                const char *name = config_setting_name(s);
                _cleanup_free_ char *loc = config_load_loc(cl, s);
                int scope = -1;

                if (!loc)
                        return -ENOMEM;
                if (streq(name, "projects")) {
                        r = config_load_projects(cl, s);
                        if (r < 0)
                                return r;
                        continue;
                }
                for (size_t j = 0; j < _CONFIG_SCOPE_MAX; j++)
                        if (streq(name, config_scopes[j].group))
                                scope = (int)j;
                if (scope < 0)
                        r = config_load_unknown(cl->errs, loc, name, "the top level", top,
                                                ELEMENTSOF(top));
                else if (!config_setting_is_group(s))
                        r = config_error(cl->errs, loc, "%s must be a group: %s = { ... };", name,
                                         name);
                else if (config_scopes[scope].system_only && !cl->allow_admin)
                        r = config_error(cl->errs, loc,
                                         "%s settings are only allowed in the system file", name);
                else if (scope == CONFIG_SCOPE_POLICY)
                        r = config_load_group(cl, s, CONFIG_SCOPE_POLICY, name, &cl->c->defaults,
                                               &cl->c->defaults_origin, NULL);
                else
                        r = config_load_group(cl, s, (ConfigScope)scope, name, cl->c, NULL, NULL);
                if (r == -ENOMEM)
                        return r;
        }
        return 0;
}

/* libconfig's syntax error at line err_line of text (the expanded text), made useful: the line
 * and a hint for the two mistakes people make. A string left open (libconfig takes the next
 * lines into it and fails a line or more later, or at the end): the line where it starts. A
 * value with a unit, or a word, without quotes (`max-age = 10d;`): how to quote it. One pass over
 * the text (comments # // and block comments, strings with escapes); *ret_line is err_line when
 * there is no better one, *ret_hint NULL when there is no hint. */
static int config_load_hint(const char *text, unsigned err_line, unsigned *ret_line,
                            char **ret_hint) {
        unsigned line = 1, open_line = 0;
        const char *at = NULL; /* the start of err_line */

        *ret_line = err_line;
        *ret_hint = NULL;
        for (const char *p = text; *p; p++) {
                if (line == err_line && !at)
                        at = p;
                if (*p == '\n') {
                        line++;
                        continue;
                }
                if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
                        p += strcspn(p, "\n") - 1;
                        continue;
                }
                if (p[0] == '/' && p[1] == '*') {
                        for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++)
                                line += *p == '\n';
                        if (!*p)
                                break;
                        p++;
                        continue;
                }
                if (*p != '"')
                        continue;
                for (p++; *p && *p != '"' && *p != '\n'; p++)
                        if (*p == '\\' && p[1] && p[1] != '\n')
                                p++;
                if (*p != '"') { /* the line ends, or the text, inside the string */
                        open_line = line;
                        break;
                }
        }
        if (open_line > 0 && open_line <= err_line) {
                *ret_line = open_line;
                *ret_hint = strdup("a string is not closed on this line (a missing '\"')");
                return *ret_hint ? 0 : -ENOMEM;
        }
        if (!at)
                return 0;
        /* KEY = VALUE on the error line, VALUE unquoted: a number with a unit, or a word */
        size_t eol = strcspn(at, "\n");
        for (const char *eq = at; (eq = memchr(eq, '=', eol - (size_t)(eq - at))); eq++) {
                const char *k = eq, *v = eq + 1 + strspn(eq + 1, " \t");
                size_t vn = strcspn(v, ";,}\n#"), kn;
                bool digits = isdigit((unsigned char)*v), unit = false;

                while (k > at && strchr(" \t", k[-1]))
                        k--;
                kn = (size_t)(k - at);
                while (k > at && (isalnum((unsigned char)k[-1]) || k[-1] == '-' || k[-1] == '_'))
                        k--;
                kn -= (size_t)(k - at);
                while (vn > 0 && strchr(" \t", v[vn - 1]))
                        vn--;
                for (size_t i = 0; i < vn; i++)
                        unit = unit || isalpha((unsigned char)v[i]);
                if (kn == 0 || vn == 0 || !(digits ? unit : isalpha((unsigned char)*v)))
                        continue; /* quoted, a number, true/false are not the mistake */
                _cleanup_free_ char *val = strndup(v, vn);
                msec_t d;
                SizeSpec sz;

                if (!val)
                        return -ENOMEM;
                if (!digits && (util_ascii_strcasecmp(val, "true") == 0 ||
                                util_ascii_strcasecmp(val, "false") == 0))
                        continue;
                const char *what = !digits ? "a word (or true, false)"
                                   : util_parse_duration(val, &d, NULL) >= 0 ? "a duration"
                                   : util_parse_size(val, false, &sz, NULL) >= 0
                                           ? "a size"
                                           : "a value with a unit";
                *ret_hint =
                        util_strprintf("%s must be quoted: %.*s = \"%s\";", what, (int)kn, k, val);
                return *ret_hint ? 0 : -ENOMEM;
        }
        return 0;
}

/* ------------------------------------------------------------------ applying */

/* Expand text (the main file, labelled name; st its identity, or NULL), parse it and apply it
 * on top of *c. */
static int config_load_apply(Config *c, const char *name, const char *text, size_t len,
                             const struct stat *st, bool allow_admin, ConfigErrors *errs) {
        ConfigLoad cl = { .c = c, .errs = errs, .allow_admin = allow_admin,
                          .first_file = c->n_files, .out_line = 1 };
        size_t n_before = errs->n, file;
        config_t cf;
        int r;

        if (st) {
                cl.stack[0].dev = st->st_dev;
                cl.stack[0].ino = st->st_ino;
        }
        r = config_load_add_file(&cl, name, NULL, &file);
        if (r >= 0)
                r = config_load_text(&cl, file, text, len, /* is_include= */ false);
        if (r == -EFBIG)
                r = config_error(errs, name, "larger than %d bytes with its includes",
                                 CONFIG_LOAD_SIZE_MAX);
        if (r >= 0 && !cl.out.buf && strbuf_append(&cl.out, "", 0) < 0)
                r = -ENOMEM;
        if (r < 0)
                goto finish;

        config_init(&cf);
        config_set_destructor(&cf, free); /* the literals hooked to settings */
        if (!config_read_string(&cf, cl.out.buf)) {
                _cleanup_free_ char *loc = NULL, *hint = NULL;
                unsigned line;

                r = config_load_hint(cl.out.buf, (unsigned)MAX(config_error_line(&cf), 0), &line,
                                     &hint);
                loc = r >= 0 ? config_load_where(&cl, line, NULL, NULL) : NULL;
                r = loc ? config_error(errs, loc, "%s%s%s", config_error_text(&cf),
                                       hint ? ": " : "", hint ?: "")
                        : -ENOMEM;
        } else {
                r = config_load_literals(&cl, config_root_setting(&cf));
                if (r >= 0)
                        r = config_load_root(&cl, config_root_setting(&cf));
        }
        config_destroy(&cf);
        if (r >= 0)
                r = config_inherit_defaults(c);
        if (r >= 0)
                r = config_load_check(&cl);
finish:
        strbuf_done(&cl.out);
        free(cl.segs);
        for (size_t i = 0; i < cl.n_seen; i++)
                free(cl.seen[i].loc);
        free(cl.seen);
        if (r < 0)
                return r;
        return errs->n > n_before ? -EINVAL : 0;
}

static int config_load(Config *c, const char *path, bool allow_admin, bool regular_only,
                       ConfigErrors *errs) {
        _cleanup_free_ char *text = NULL;
        const char *why;
        struct stat st;
        size_t len;
        int r;

        r = config_load_read(path, regular_only, &text, &len, &st, &why);
        if (r == -ENOENT || r == -ENOMEM)
                return r;
        if (r == -EFBIG)
                return config_error(errs, path, "larger than %d bytes", CONFIG_LOAD_SIZE_MAX);
        if (r < 0 && why)
                return config_error(errs, path, "%s", why);
        if (r < 0)
                return config_error(errs, path, "cannot read: %s", log_errno_to_string(-r));
        /* a pipe has no identity worth comparing; a regular file does */
        return config_load_apply(c, path, text, len, S_ISREG(st.st_mode) ? &st : NULL, allow_admin,
                                 errs);
}

int config_load_file(Config *c, const char *path, ConfigErrors *errs) {
        return config_load(c, path, c->n_files == 0, /* regular_only= */ false, errs);
}

int config_load_system_file(Config *c, const char *path, ConfigErrors *errs) {
        return config_load(c, path, c->n_files == 0, /* regular_only= */ true, errs);
}

static int config_load_is_dropin(const struct dirent *de) {
        size_t len = strlen(de->d_name);
        return de->d_name[0] != '.' && len > 5 && streq(de->d_name + len - 5, ".conf");
}

static int config_load_cmp(const struct dirent **a, const struct dirent **b) {
        return strcmp((*a)->d_name, (*b)->d_name);
}

int config_load_dropins(Config *c, const char *dir, ConfigErrors *errs) {
        struct dirent **names = NULL;
        int n = scandir(dir, &names, config_load_is_dropin, config_load_cmp), r = 0, applied = 0;

        if (n < 0)
                return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *path = util_path_join(dir, names[i]->d_name);
                int k = path ? config_load(c, path, /* allow_admin= */ true,
                                           /* regular_only= */ true, errs)
                             : -ENOMEM;

                if (k == -ENOENT)
                        continue; /* removed meanwhile */
                if (k < 0 && r >= 0)
                        r = k;
                else if (k >= 0)
                        applied++;
        }
        for (int i = 0; i < n; i++)
                free(names[i]);
        free(names);
        return r < 0 ? r : applied;
}

int config_load_user_file(Config *c, const char *path, ConfigErrors *errs) {
        return config_load(c, path, /* allow_admin= */ false, /* regular_only= */ true, errs);
}

