/* erase-splice.h: the text side of the shared-file edits (erase.h), no files: a logs.json or
 * session-organization.v1.json text parsed once, the rows or entries of given sessions found in
 * it and spliced out, every other byte kept and the container reframed as
 * JSON.stringify(v, null, 2) frames it; and the merge of a writer's version. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "json.h"

/* The sessions an edit removes: ids[0..n); counts[i] (when not NULL) is set to how many
 * elements of ids[i] it found. */
typedef struct EraseIds {
        const char *const *ids;
        size_t n;
        unsigned *counts;
} EraseIds;

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
int erase_splice_parse_logs(const char *text, size_t n, EraseParsed *ret);
int erase_splice_parse_org(const char *text, size_t n, EraseParsed *ret);
void erase_splice_parsed_done(EraseParsed *p); /* frees what p holds, resets it */

/* Which elements of p are of one of ids: drop[i] (drop may be NULL), ids->counts (the first of
 * ids equal to the element's, exactly as Qwen compares), *ret_k. 0 or -ENOMEM. */
int erase_splice_find(const char *text, const EraseParsed *p, const EraseIds *ids, bool *drop,
                      unsigned *ret_k);
/* The text without the elements of p marked in drop, followed by the elements of x (text xt;
 * x NULL: none) marked in add, their bytes as they are (the merge of two versions), the container
 * framed as JSON.stringify(v, null, 2) frames it: *ret (NUL-terminated), *ret_size. ret_parsed
 * (may be NULL): what erase_splice_parse_*() finds in the new text, derived from p and x without
 * parsing it again. Returns 0; 1 when the text was built but *ret_parsed could not be (out of
 * memory: it is then empty and not what the text holds); -ENOMEM (nothing built). */
int erase_splice_text(const char *text, size_t n, const EraseParsed *p, const bool *drop,
                      const char *xt, const EraseParsed *x, const bool *add, char **ret,
                      size_t *ret_size, EraseParsed *ret_parsed);

/* The merge of two versions of a file (erase_edit()): which elements of x (text xt) are not in
 * d (of an object, the same key; of an array, the same bytes): add[i] (x->ne of them), *ret_k.
 * 0 or -ENOMEM. */
int erase_splice_missing(const char *xt, const EraseParsed *x, const char *dt, const EraseParsed *d,
                         bool *add, unsigned *ret_k);
