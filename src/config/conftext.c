/* conftext.c: a policy file's text before libconfig parses it: the bounded reader, @include
 * expansion through that reader, the line map back to each file, and the literal of every
 * scalar value. The scanner below mirrors libconfig's (lib/scanner.l) for what matters here:
 * comments, strings, where an @include is recognised, and the shapes of numbers. config.c
 * checks that its list of values matches libconfig's tree one for one, so a divergence fails
 * closed instead of pairing a value with the wrong literal. The error list (ConfigErrors) of the
 * text, the values and the layering is kept here, below the parse that appends to it too. */
#include "autoconf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conftext.h"
#include "log.h"
#include "macro.h"
#include "util.h"

/* ------------------------------------------------------------------ reading */

/* Read a whole file of at most max bytes into *ret (NUL-terminated). With is_include, anything
 * but a regular file is refused before it is opened and again after (a FIFO or a device is never
 * read); otherwise a pipe or /dev/null is read as the main file always was. Returns 0, or a
 * negative errno with *ret_why set when the errno alone would not say it. */
static int conftext_read(const char *path, bool is_include, size_t max, char **ret, size_t *ret_len,
                         struct stat *ret_st, const char **ret_why) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t len = 0, cap;

        *ret_why = NULL;
        if (is_include) {
                if (stat(path, &st) < 0)
                        return -errno;
                if (S_ISDIR(st.st_mode))
                        return -EISDIR;
                if (!S_ISREG(st.st_mode)) {
                        *ret_why = "not a regular file";
                        return -EINVAL;
                }
        }
        /* O_NONBLOCK: opening a FIFO without a writer must not hang */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (is_include && !S_ISREG(st.st_mode)) {
                *ret_why = "not a regular file";
                return -EINVAL;
        }
        if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
                return -errno;
        /* sized to the file (a pipe's text grown as it comes), not to max: a 4 MiB block freed
         * at startup raised glibc's mmap threshold for the whole run, and later blocks below
         * that size stayed resident in the heap (peak RSS of a 100k-session run) */
        cap = MIN(S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : (size_t)4096, max + 1);
        buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                if (len == cap) { /* cap <= max here: else len > max returned */
                        size_t more = MIN(cap * 2, max + 1);
                        char *b = realloc(buf, more);

                        if (!b)
                                return -ENOMEM;
                        buf = b;
                        cap = more;
                }
                ssize_t n = read(fd, buf + len, cap - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                len += (size_t)n;
                if (len > max)
                        return -EFBIG;
        }
        buf[len] = '\0';
        if (strlen(buf) != len) {
                *ret_why = "contains a NUL byte";
                return -EBADMSG;
        }
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        *ret_st = st;
        return 0;
}

/* ------------------------------------------------------------------ the text being built */

void conftext_done(ConfText *t) {
        free(t->text);
        for (size_t i = 0; i < t->n_files; i++) {
                free(t->files[i].path);
                free(t->files[i].included_at);
        }
        free(t->files);
        free(t->segs);
        for (size_t i = 0; i < t->n_tokens; i++)
                free(t->tokens[i].raw);
        free(t->tokens);
        *t = (ConfText){};
}

typedef struct ConfLex {
        ConfText *t;
        ConfigErrors *errs;
        StrBuf out;           /* the expanded text */
        size_t alloc_files, alloc_segs, alloc_tokens;
        unsigned out_line;    /* line of `out` the next byte goes to */
        bool prev_string;     /* the last token was a string: the next one continues it */
        size_t n_included;    /* includes read so far */
        size_t depth;
        struct { dev_t dev; ino_t ino; } stack[CONFTEXT_DEPTH_MAX + 1]; /* files being read */
} ConfLex;

static int conftext_add_seg(ConfLex *lx, size_t file, unsigned line) {
        ConfText *t = lx->t;

        if (greedy_realloc((void **)&t->segs, &lx->alloc_segs, t->n_segs + 1, sizeof(ConfSegment)) < 0)
                return -ENOMEM;
        t->segs[t->n_segs++] = (ConfSegment){ .first = lx->out_line, .file = file, .line = line };
        return 0;
}

static int conftext_add_file(ConfLex *lx, const char *path, const char *included_at, size_t *ret) {
        ConfText *t = lx->t;
        ConfFile f = { .path = strdup(path), .included_at = strdup_or_null(included_at) };

        if (!f.path || (included_at && !f.included_at) ||
            greedy_realloc((void **)&t->files, &lx->alloc_files, t->n_files + 1, sizeof(ConfFile)) < 0) {
                free(f.path);
                free(f.included_at);
                return -ENOMEM;
        }
        *ret = t->n_files;
        t->files[t->n_files++] = f;
        return 0;
}

static int conftext_add_token(ConfLex *lx, ConfTokenKind kind, const char *raw, size_t n) {
        ConfText *t = lx->t;
        char *r = NULL;

        if (kind == CONF_TOKEN_STRING && lx->prev_string)
                return 0; /* "a" "b" is one value */
        lx->prev_string = kind == CONF_TOKEN_STRING;
        if (raw && !(r = strndup(raw, n)))
                return -ENOMEM;
        if (greedy_realloc((void **)&t->tokens, &lx->alloc_tokens, t->n_tokens + 1, sizeof(ConfToken)) < 0) {
                free(r);
                return -ENOMEM;
        }
        t->tokens[t->n_tokens++] = (ConfToken){ .kind = kind, .raw = r };
        return 0;
}

/* Append text[0, n) to the expanded text. */
static int conftext_emit(ConfLex *lx, const char *text, size_t n) {
        if (lx->out.len + n > CONFTEXT_SIZE_MAX + CONFTEXT_FILES_MAX + 1) /* + a newline each */
                return -EFBIG;
        if (strbuf_append(&lx->out, text, n) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                lx->out_line += text[i] == '\n';
        return 0;
}

/* ------------------------------------------------------------------ the scanner */

static size_t conftext_span(const char *s, const char *set) {
        return strspn(s, set);
}

#define DIGITS "0123456789"
#define HEXDIGITS "0123456789abcdefABCDEF"

/* An optional 'L' or "LL" (libconfig's 64-bit suffix). */
static size_t conftext_suffix64(const char *s) {
        return s[0] == 'L' ? (s[1] == 'L' ? 2 : 1) : 0;
}

/* [eE][-+]?[0-9]+ */
static size_t conftext_exponent(const char *s) {
        size_t i = 1, d;

        if (s[0] != 'e' && s[0] != 'E')
                return 0;
        if (s[i] == '+' || s[i] == '-')
                i++;
        d = conftext_span(s + i, DIGITS);
        return d > 0 ? i + d : 0;
}

/* The length of the number at s, as flex's longest match among libconfig's integer, integer64,
 * hex, hex64 and float rules would take it; 0 when none matches. */
static size_t conftext_number(const char *s, ConfTokenKind *ret_kind) {
        size_t sign = (s[0] == '+' || s[0] == '-'), best = 0, i, d;

        /* integer, integer64: [-+]?[0-9]+(L(L)?)? */
        d = conftext_span(s + sign, DIGITS);
        if (d > 0) {
                best = sign + d + conftext_suffix64(s + sign + d);
                *ret_kind = CONF_TOKEN_INTEGER;
        }
        /* hex, hex64: 0[Xx][0-9A-Fa-f]+(L(L)?)? */
        if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && (d = conftext_span(s + 2, HEXDIGITS)) > 0) {
                i = 2 + d + conftext_suffix64(s + 2 + d);
                if (i > best) {
                        best = i;
                        *ret_kind = CONF_TOKEN_INTEGER;
                }
        }
        /* float: [-+]?[0-9]*\.[0-9]*([eE][-+]?[0-9]+)? */
        i = sign + conftext_span(s + sign, DIGITS);
        if (s[i] == '.') {
                i++;
                i += conftext_span(s + i, DIGITS);
                i += conftext_exponent(s + i);
                if (i > best) {
                        best = i;
                        *ret_kind = CONF_TOKEN_FLOAT;
                }
        }
        /* float: [-+]?[0-9]+(\.[0-9]*)?[eE][-+]?[0-9]+ */
        d = conftext_span(s + sign, DIGITS);
        if (d > 0) {
                i = sign + d;
                if (s[i] == '.') {
                        i++;
                        i += conftext_span(s + i, DIGITS);
                }
                d = conftext_exponent(s + i);
                if (d > 0 && i + d > best) {
                        best = i + d;
                        *ret_kind = CONF_TOKEN_FLOAT;
                }
        }
        return best;
}

int conftext_integer(const char *raw, long long *ret) {
        const char *p = raw;
        bool neg = false, hex = false;
        uint64_t v = 0, limit;
        size_t n;

        if (*p == '+' || *p == '-')
                neg = *p++ == '-';
        if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && !neg && p == raw) {
                hex = true;
                p += 2;
        }
        n = conftext_span(p, hex ? HEXDIGITS : DIGITS);
        if (n == 0 || (!streq(p + n, "") && !streq(p + n, "L") && !streq(p + n, "LL")))
                return -EINVAL;
        limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        for (size_t i = 0; i < n; i++) {
                unsigned dgt = isdigit((unsigned char)p[i]) ? (unsigned)(p[i] - '0')
                                                            : (unsigned)(tolower((unsigned char)p[i]) - 'a' + 10);
                unsigned base = hex ? 16 : 10;
                if (v > (limit - dgt) / base)
                        return -ERANGE;
                v = v * base + dgt;
        }
        *ret = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(long long)v) : (long long)v;
        return 0;
}

/* Is there an include directive (^[ \t]*@include[ \t]+") at s? Returns the offset just past
 * the opening quote, or 0. */
static size_t conftext_include_at(const char *s) {
        size_t i = conftext_span(s, " \t"), b;

        if (!strneq(s + i, "@include", 8))
                return 0;
        i += 8;
        b = conftext_span(s + i, " \t");
        if (b == 0 || s[i + b] != '"')
                return 0;
        return i + b + 1;
}

static int conftext_file(ConfLex *lx, size_t file, const char *text, size_t len, bool is_include);

/* The error of an include at loc. Returns -EINVAL or -ENOMEM. */
static int conftext_include_error(ConfLex *lx, const char *loc, const char *arg, const char *path,
                                  int r, const char *why) {
        if (r == -ENOMEM)
                return r;
        if (!why)
                why = r == -EFBIG ? "too large" : errno_to_string(-r);
        if (streq(arg, path))
                r = config_errors_add(lx->errs, "%s: @include \"%s\": %s", loc, arg, why);
        else
                r = config_errors_add(lx->errs, "%s: @include \"%s\" ('%s'): %s", loc, arg, path, why);
        return r < 0 ? -ENOMEM : -EINVAL;
}

/* Read the file an @include names and expand it in place. loc is the directive's "file:line". */
static int conftext_include(ConfLex *lx, size_t from, const char *arg, const char *loc) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        const char *dir_end = strrchr(lx->t->files[from].path, '/');
        const char *why = NULL;
        struct stat st;
        size_t len, file;
        int r;

        if (arg[0] == '\0')
                return config_errors_add(lx->errs, "%s: @include \"\": empty path", loc) < 0 ? -ENOMEM
                                                                                           : -EINVAL;
        /* relative to the including file's directory */
        if (arg[0] == '/' || !dir_end)
                path = strdup(arg);
        else
                path = strprintf("%.*s/%s", (int)(dir_end - lx->t->files[from].path),
                                 lx->t->files[from].path, arg);
        if (!path)
                return -ENOMEM;
        if (lx->depth >= CONFTEXT_DEPTH_MAX)
                return conftext_include_error(lx, loc, arg, path, -ELOOP,
                                              "includes nested too deep (at most 10 levels)");
        if (lx->n_included >= CONFTEXT_FILES_MAX)
                return conftext_include_error(lx, loc, arg, path, -E2BIG,
                                              "too many includes (at most 100 in all)");
        r = conftext_read(path, /* is_include= */ true, CONFTEXT_SIZE_MAX, &text, &len, &st, &why);
        if (r == -EFBIG)
                why = "larger than 4194304 bytes";
        if (r < 0)
                return conftext_include_error(lx, loc, arg, path, r, why);
        for (size_t i = 0; i <= lx->depth; i++)
                if (lx->stack[i].dev == st.st_dev && lx->stack[i].ino == st.st_ino)
                        return conftext_include_error(lx, loc, arg, path, -ELOOP,
                                                      "include cycle: the file is already being "
                                                      "read");
        r = conftext_add_file(lx, path, loc, &file);
        if (r < 0)
                return r;
        lx->n_included++;
        lx->depth++;
        lx->stack[lx->depth].dev = st.st_dev;
        lx->stack[lx->depth].ino = st.st_ino;
        r = conftext_file(lx, file, text, len, /* is_include= */ true);
        lx->depth--;
        return r;
}

/* Parse the directive whose path starts at s (after the quote) into *ret_arg; *ret_end is the
 * end of its line (the '\n' or the NUL). Returns 0, or a static error message. */
static const char *conftext_directive(const char *s, char **ret_arg, const char **ret_end) {
        StrBuf b = {};
        const char *p = s;

        for (;; p++) {
                if (*p == '"')
                        break;
                if (*p == '\0' || *p == '\n') {
                        strbuf_done(&b);
                        return "unterminated @include path";
                }
                if (*p == '\\') {
                        if (p[1] != '\\' && p[1] != '"') {
                                strbuf_done(&b);
                                return "invalid escape in @include path (only \\\\ and \\\")";
                        }
                        p++;
                }
                if (strbuf_append(&b, p, 1) < 0) {
                        strbuf_done(&b);
                        return NULL; /* ENOMEM, told by *ret_arg == NULL */
                }
        }
        p++;
        p += conftext_span(p, " \t\r");
        if (*p == '#' || (p[0] == '/' && p[1] == '/'))
                p += strcspn(p, "\n");
        if (*p != '\0' && *p != '\n') {
                strbuf_done(&b);
                return "only a comment may follow @include \"...\" on its line";
        }
        *ret_end = p;
        *ret_arg = strbuf_steal(&b);
        if (!*ret_arg)
                *ret_arg = strdup("");
        return "";
}

typedef enum ConfLexState {
        CONF_LEX_INITIAL,
        CONF_LEX_COMMENT,
        CONF_LEX_STRING,
} ConfLexState;

/* Scan one file's text: record its values, expand its includes, append it to the output. */
static int conftext_file(ConfLex *lx, size_t file, const char *text, size_t len, bool is_include) {
        ConfLexState state = CONF_LEX_INITIAL;
        const char *p = text, *end = text + len, *chunk = text;
        unsigned line = 1;
        bool bol = true;
        int r;

        r = conftext_add_seg(lx, file, 1);
        if (r < 0)
                return r;
        while (p < end) {
                if (state == CONF_LEX_COMMENT) {
                        if (p[0] == '*' && p[1] == '/') {
                                state = CONF_LEX_INITIAL;
                                p += 2;
                        } else
                                line += *p++ == '\n';
                        continue;
                }
                if (state == CONF_LEX_STRING) {
                        if (*p == '\\' && p + 1 < end) {
                                line += p[1] == '\n';
                                p += 2;
                        } else if (*p == '"') {
                                state = CONF_LEX_INITIAL;
                                p++;
                        } else
                                line += *p++ == '\n';
                        continue;
                }
                if (bol) {
                        size_t q = conftext_include_at(p);
                        if (q > 0) {
                                _cleanup_free_ char *arg = NULL, *loc = NULL;
                                const char *eol = NULL, *why;

                                loc = strprintf("%s:%u", lx->t->files[file].path, line);
                                if (!loc)
                                        return -ENOMEM;
                                why = conftext_directive(p + q, &arg, &eol);
                                if (!why || (why[0] == '\0' && !arg))
                                        return -ENOMEM;
                                if (why[0] != '\0')
                                        return config_errors_add(lx->errs, "%s: %s", loc, why) < 0
                                                       ? -ENOMEM
                                                       : -EINVAL;
                                /* the text before the directive's line, then the file's */
                                r = conftext_emit(lx, chunk, (size_t)(p - chunk));
                                if (r >= 0)
                                        r = conftext_include(lx, file, arg, loc);
                                if (r < 0)
                                        return r;
                                /* back in this file: the line after the directive */
                                p = eol < end ? eol + 1 : end;
                                chunk = p;
                                line++;
                                r = conftext_add_seg(lx, file, line);
                                if (r < 0)
                                        return r;
                                continue;
                        }
                }
                bol = *p == '\n';
                if (*p == '\n') {
                        line++;
                        p++;
                } else if (strchr(" \t\r\f", *p))
                        p++;
                else if (*p == '#' || (p[0] == '/' && p[1] == '/'))
                        p += strcspn(p, "\n");
                else if (p[0] == '/' && p[1] == '*') {
                        state = CONF_LEX_COMMENT;
                        p += 2;
                } else if (*p == '"') {
                        r = conftext_add_token(lx, CONF_TOKEN_STRING, NULL, 0);
                        if (r < 0)
                                return r;
                        state = CONF_LEX_STRING;
                        p++;
                } else if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '*') {
                        /* a name, or true/false (which win a tie with a name) */
                        size_t n = 1 + conftext_span(p + 1, "-_*" DIGITS
                                                            "abcdefghijklmnopqrstuvwxyz"
                                                            "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
                        bool is_bool = (n == 4 && strncasecmp(p, "true", 4) == 0) ||
                                       (n == 5 && strncasecmp(p, "false", 5) == 0);
                        lx->prev_string = false;
                        if (is_bool && (r = conftext_add_token(lx, CONF_TOKEN_BOOL, p, n)) < 0)
                                return r;
                        p += n;
                } else {
                        ConfTokenKind kind = CONF_TOKEN_INTEGER;
                        size_t n = conftext_number(p, &kind);
                        lx->prev_string = false;
                        if (n > 0 && (r = conftext_add_token(lx, kind, p, n)) < 0)
                                return r;
                        p += n > 0 ? n : 1; /* punctuation, or garbage libconfig refuses */
                }
        }
        if (is_include && state != CONF_LEX_INITIAL)
                return config_errors_add(lx->errs, "%s:%u: unterminated %s at the end of an included file",
                                         lx->t->files[file].path, line,
                                         state == CONF_LEX_STRING ? "string" : "comment") < 0
                               ? -ENOMEM
                               : -EINVAL;
        r = conftext_emit(lx, chunk, (size_t)(end - chunk));
        /* the next line of the including file must start a line of its own */
        if (r >= 0 && len > 0 && text[len - 1] != '\n')
                r = conftext_emit(lx, "\n", 1);
        return r;
}

/* Expand text (the main file, labelled name) into *ret. */
static int conftext_expand(ConfText *ret, const char *text, size_t len, const char *name,
                           const struct stat *st, ConfigErrors *errs) {
        ConfText t = {};
        ConfLex lx = { .t = &t, .errs = errs, .out_line = 1 };
        size_t file;
        int r;

        if (st) {
                lx.stack[0].dev = st->st_dev;
                lx.stack[0].ino = st->st_ino;
        }
        r = conftext_add_file(&lx, name, NULL, &file);
        if (r >= 0)
                r = conftext_file(&lx, file, text, len, /* is_include= */ false);
        if (r == -EFBIG)
                r = config_errors_add(errs, "%s: larger than %d bytes with its includes", name,
                                      CONFTEXT_SIZE_MAX) < 0
                            ? -ENOMEM
                            : -EINVAL;
        if (r >= 0 && !lx.out.buf && strbuf_append(&lx.out, "", 0) < 0)
                r = -ENOMEM;
        if (r < 0) {
                strbuf_done(&lx.out);
                conftext_done(&t);
                return r;
        }
        t.len = lx.out.len;
        t.text = strbuf_steal(&lx.out);
        *ret = t;
        return 0;
}

int conftext_load(ConfText *ret, const char *path, bool regular_only, ConfigErrors *errs) {
        _cleanup_free_ char *text = NULL;
        const char *why = NULL;
        struct stat st;
        size_t len;
        int r;

        r = conftext_read(path, /* is_include= */ regular_only, CONFTEXT_SIZE_MAX, &text, &len, &st,
                          &why);
        if (r == -ENOENT || r == -ENOMEM)
                return r;
        if (r == -EFBIG)
                return config_errors_add(errs, "%s: larger than %d bytes", path, CONFTEXT_SIZE_MAX) < 0
                               ? -ENOMEM
                               : -EINVAL;
        if (r < 0 && why)
                return config_errors_add(errs, "%s: %s", path, why) < 0 ? -ENOMEM : -EINVAL;
        if (r < 0)
                return config_errors_add(errs, "%s: cannot read: %s", path, errno_to_string(-r)) < 0
                               ? -ENOMEM
                               : -EINVAL;
        /* a pipe has no identity worth comparing; a regular file does */
        return conftext_expand(ret, text, len, path, S_ISREG(st.st_mode) ? &st : NULL, errs);
}

int conftext_from_string(ConfText *ret, const char *text, const char *name, ConfigErrors *errs) {
        return conftext_expand(ret, text, strlen(text), name, NULL, errs);
}

void conftext_where(const ConfText *t, unsigned line, const char **ret_file, unsigned *ret_line) {
        size_t lo = 0, hi = t->n_segs;

        if (t->n_segs == 0) {
                *ret_file = t->n_files > 0 ? t->files[0].path : "?";
                *ret_line = line;
                return;
        }
        /* the last segment that starts at or before line (an empty one is followed by one
         * starting at the same line, which wins) */
        while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;
                if (t->segs[mid].first <= line)
                        lo = mid;
                else
                        hi = mid;
        }
        if (t->segs[lo].first > line) {
                *ret_file = t->files[t->segs[lo].file].path;
                *ret_line = line;
                return;
        }
        *ret_file = t->files[t->segs[lo].file].path;
        *ret_line = t->segs[lo].line + (line - t->segs[lo].first);
}

char *conftext_loc(const ConfText *t, unsigned line) {
        const char *f;
        unsigned l;

        conftext_where(t, line, &f, &l);
        return strprintf("%s:%u", f, l);
}

void config_errors_done(ConfigErrors *e) {
        for (size_t i = 0; i < e->n; i++)
                free(e->msgs[i]);
        free(e->msgs);
        *e = (ConfigErrors){};
}

int config_errors_add(ConfigErrors *e, const char *fmt, ...) {
        va_list ap;
        char *s = NULL;
        int n;

        if (greedy_realloc((void **)&e->msgs, &e->alloc, e->n + 1, sizeof(char *)) < 0)
                return -ENOMEM;
        va_start(ap, fmt);
        n = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -ENOMEM;
        e->msgs[e->n++] = s;
        return 0;
}
