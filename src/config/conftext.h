/* conftext.h: the text of a policy file before libconfig sees it: the bounded reader, @include
 * expanded by qgc (through the same reader), a map from each line back to its file and line, and
 * every value's literal as written, so that errors can echo it and numbers can be checked
 * exactly (libconfig 1.5 silently wraps an integer that does not fit 32 bits).
 *
 * Includes (see "INCLUDES" in qgc.conf(5)): a line `@include "path"` (leading blanks allowed, a
 * comment after it allowed, nothing else) is replaced by that file's text. A relative path is
 * taken relative to the directory of the file that includes it. An included file must be a
 * regular file (symlinks are followed, as for the main file); FIFOs, devices and directories
 * are refused without being read. At most CONFTEXT_DEPTH_MAX levels, CONFTEXT_FILES_MAX
 * includes and CONFTEXT_SIZE_MAX bytes in all; a file that includes itself, directly or not, is
 * an error. libconfig never opens a file itself. */
#pragma once

#include <stdbool.h>
#include <stddef.h>


#define CONFTEXT_SIZE_MAX (4 * 1024 * 1024) /* one file, and all files together */
#define CONFTEXT_DEPTH_MAX 10
#define CONFTEXT_FILES_MAX 100

/* The kinds of scalar values, as libconfig's scanner tells them apart. */
typedef enum ConfTokenKind {
        CONF_TOKEN_INTEGER, /* 12, -3, 0x1F, 5L, 0x10LL */
        CONF_TOKEN_FLOAT,   /* 1.5, .5, 1e3 */
        CONF_TOKEN_STRING,  /* "a", or "a" "b" (adjacent strings are one value) */
        CONF_TOKEN_BOOL,    /* true, FALSE */
} ConfTokenKind;

/* One scalar value in the order it appears in the expanded text. */
typedef struct ConfToken {
        ConfTokenKind kind;
        char *raw; /* the literal exactly as written; NULL for strings (libconfig's value is it) */
} ConfToken;

typedef struct ConfFile {
        char *path;        /* the main file's name, or an include's path as resolved */
        char *included_at; /* "file:line" of the @include; NULL for the main file */
} ConfFile;

typedef struct ConfSegment {
        unsigned first;   /* first line of the expanded text in this segment (1-based) */
        size_t file;      /* index into files */
        unsigned line;    /* its line in that file */
} ConfSegment;

typedef struct ConfText {
        char *text; /* the expanded text, NUL-terminated */
        size_t len;
        ConfFile *files; /* the main file first, then each include in the order read */
        size_t n_files;
        ConfSegment *segs;
        size_t n_segs;
        ConfToken *tokens;
        size_t n_tokens;
} ConfText;

void conftext_done(ConfText *t);

/* A list of "file:line: message" errors: of the text here, and of the policy's values and layering
 * (config.h). */
typedef struct ConfigErrors {
        char **msgs;
        size_t n;
        size_t alloc;
} ConfigErrors;

void config_errors_done(ConfigErrors *e);
/* Append one printf-formatted message. 0 or -ENOMEM. */
int config_errors_add(ConfigErrors *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Read the file at path (bounded; not a directory) and expand its includes. With regular_only
 * anything but a regular file is refused before it is read (the system file and users' files:
 * a FIFO there must not hang a run); without it a pipe is read too (an operator's -c FILE, such
 * as -c /dev/stdin). -ENOENT silently when path does not exist; -EINVAL with every problem
 * appended to errs as "file:line: message" (or "file: message"); -ENOMEM. */
int conftext_load(ConfText *ret, const char *path, bool regular_only, ConfigErrors *errs);
/* The same for a buffer labelled name; its relative includes resolve against the current
 * directory. */
int conftext_from_string(ConfText *ret, const char *text, const char *name, ConfigErrors *errs);

/* The file and line of a line of t->text (line 0, or past the end, maps to the last segment). */
void conftext_where(const ConfText *t, unsigned line, const char **ret_file, unsigned *ret_line);
/* "file:line" for a line of t->text, or NULL on ENOMEM. */
char *conftext_loc(const ConfText *t, unsigned line);

/* The exact value of an integer literal ("-12", "0x1FL"): 0, or -ERANGE when it does not fit in
 * an int64_t, -EINVAL when raw is not an integer literal. */
int conftext_integer(const char *raw, long long *ret);
