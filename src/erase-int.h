/* erase-int.h: what erase.c (the file edits) and erase-splice.c (the texts) share. */
#pragma once

#include <stddef.h>

/* The sessions an edit removes: ids[0..n); counts[i] (when not NULL) is set to how many
 * elements of ids[i] it found. */
typedef struct EraseIds {
        const char *const *ids;
        size_t n;
        unsigned *counts;
} EraseIds;

/* A splice of erase.h (erase_splice_logs(), erase_splice_org()) for every id of ids. ret NULL:
 * only count (*ret_removed and ids->counts, exactly as the splice would), nothing is built. */
typedef int (*EraseSpliceFn)(const char *text, size_t n, const EraseIds *ids, char **ret,
                             size_t *ret_size, unsigned *ret_removed);
int erase_splice_logs_ids(const char *text, size_t n, const EraseIds *ids, char **ret,
                          size_t *ret_size, unsigned *ret_removed);
int erase_splice_org_ids(const char *text, size_t n, const EraseIds *ids, char **ret,
                         size_t *ret_size, unsigned *ret_removed);
