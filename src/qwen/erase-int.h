/* erase-int.h: what erase.c (a batch's edits), erase-edit.c (the edit of one file) and
 * erase-splice.c (the texts) share. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "erase.h"
#include "json.h"

/* The sessions an edit removes: ids[0..n); counts[i] (when not NULL) is set to how many
 * elements of ids[i] it found. */
typedef struct EraseIds {
        const char *const *ids;
        size_t n;
        unsigned *counts;
} EraseIds;

/* A splice of erase.h (erase_splice_logs(), erase_splice_org()) for every id of ids. ret NULL:
 * only count (*ret_removed and ids->counts, exactly as the splice would), nothing is built. */
int erase_splice_logs_ids(const char *text, size_t n, const EraseIds *ids, char **ret,
                          size_t *ret_size, unsigned *ret_removed);
int erase_splice_org_ids(const char *text, size_t n, const EraseIds *ids, char **ret,
                         size_t *ret_size, unsigned *ret_removed);

/* The id an element of a shared file's container is of (a logs.json row's "sessionId", an
 * organisation entry's key), as JSON.parse decodes it: text[e.start + off, + len) when the raw
 * bytes are the decoded string (no escape, ASCII only), else dec (malloc'ed, len bytes);
 * off == SIZE_MAX: none (not an object, no such member, not a string). Offsets are relative to
 * the element, so that an element moved by a splice keeps its id. */
typedef struct EraseElemId {
        size_t off, len;
        char *dec;
} EraseElemId;

/* What a splice needs of a text (no copy of it): the container whose elements are removed (the
 * array of logs.json, the "sessions" object of the organisation file: has false when there is
 * none, then nothing is ever removed), at indent level depth, its elements and their ids. */
typedef struct EraseParsed {
        bool has;
        size_t open, close; /* the container's brackets */
        unsigned depth;
        JsonElem *e;
        EraseElemId *id;
        size_t ne;
} EraseParsed;

/* Parse the text of a logs.json (a top-level array of rows) or of a session-organization.v1.json
 * (a top-level object) with JSON.parse's grammar: 0, -EBADMSG (not what JSON.parse accepts, or
 * not the container) or -ENOMEM. */
typedef int (*EraseParseFn)(const char *text, size_t n, EraseParsed *ret);
int erase_parse_logs(const char *text, size_t n, EraseParsed *ret);
int erase_parse_org(const char *text, size_t n, EraseParsed *ret);
void erase_parsed_done(EraseParsed *p); /* frees what p holds, resets it */

/* Which elements of p are of one of ids: drop[i] (drop may be NULL), ids->counts (the first of
 * ids equal to the element's, exactly as Qwen compares), *ret_k. 0 or -ENOMEM. */
int erase_parsed_find(const char *text, const EraseParsed *p, const EraseIds *ids, bool *drop,
                      unsigned *ret_k);
/* The text without the elements marked in drop, the container framed as
 * JSON.stringify(v, null, 2) frames it: *ret (NUL-terminated), *ret_size. ret_parsed (may be
 * NULL): what erase_parse_*() finds in the new text, derived from p without parsing it again.
 * Returns 0; 1 when the text was built but *ret_parsed could not be (out of memory: it is then
 * empty and not what the text holds); -ENOMEM (nothing built). */
int erase_parsed_splice(const char *text, size_t n, const EraseParsed *p, const bool *drop,
                        char **ret, size_t *ret_size, EraseParsed *ret_parsed);

/* The merge of two versions of a file (erase_edit()): which elements of x (text xt) are
 * neither in w (the same bytes) nor in d (the same bytes; of an object, the same key): add[i]
 * (x->ne of them), *ret_k. 0 or -ENOMEM. */
int erase_parsed_missing(const char *xt, const EraseParsed *x, const char *wt, const EraseParsed *w,
                         const char *dt, const EraseParsed *d, bool *add, unsigned *ret_k);
/* erase_parsed_splice() (no parse derived) with the elements of x marked in add appended after
 * the kept ones, their bytes as they are. 0 or -ENOMEM. */
int erase_parsed_merge(const char *text, size_t n, const EraseParsed *p, const bool *drop,
                       const char *xt, const EraseParsed *x, const bool *add, char **ret,
                       size_t *ret_size);

/* erase-edit.c */
/* The largest file of parse qgc edits: ERASE_FILE_MAX for logs.json, the scan's limit for the
 * organisation file (erase.h). */
size_t erase_file_max(EraseParseFn parse);
/* A parse of a shared file kept between the edits of a run (EraseIndex.cache): the text it
 * was made from and what erase_parse_*() found in it. A text read later is looked up by its
 * whole content (erase_cache_match()), so that an entry is never taken for another text: a file
 * that changed since is parsed afresh. */
typedef struct EraseCached {
        dev_t dev; /* the file's directory */
        ino_t ino;
        EraseParseFn parse;
        char *text;
        size_t n;
        EraseParsed p;
        unsigned gen; /* the erase_sessions_shared() call that last used it */
        bool fresh;   /* text is what this call read of the file (erase_file_has()), with st */
        struct stat st;
} EraseCached;

/* (dir_fd, name) opened for reading, with its stat: the fd, or -errno. */
int erase_open(int dir_fd, const char *name, struct stat *ret_st);
/* Has fd exactly st's identity and the n bytes of text? 1, 0, or -errno. */
int erase_fd_is(int fd, const struct stat *st, const char *text, size_t n);
void erase_cache_clear(EraseCached *c);
/* Keep *text (taken) and p (taken) in c, total being what the run's cache holds. */
void erase_cache_put(EraseCached *c, size_t total, char **text, size_t n, EraseParsed *p);
/* Remove what a crashed edit of name left in dir_fd. 0 or -errno. */
int erase_leftovers_remove(int dir_fd, const char *name);
/* The edit of one file: the elements of ids spliced out, *ret_removed of them (erase.h); a
 * writer's version merged (erase-edit.c), or kept beside the file as *ret_kept (may be NULL;
 * allocated: the name of the version it could not merge). */
int erase_edit(int dir_fd, const char *name, EraseParseFn parse, const EraseIds *ids,
               EraseStepFn step, void *userdata, unsigned *ret_removed, EraseCached *cache,
               size_t total, char **ret_kept);
