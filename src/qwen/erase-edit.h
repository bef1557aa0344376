/* erase-edit.h: the edit of one file Qwen shares (erase.h): read it, splice the rows or entries
 * of given sessions out (erase-splice.h), write the new text to a temp file, fsync, exchange it
 * with the file, merge a version a writer left meanwhile, fsync the directory; and the parse of a
 * text kept between a run's batches (EraseCached). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "erase-splice.h"

/* The largest logs.json qgc edits (Qwen reads each whole); the organisation file's limit is the
 * scan's (json.h's JSON_INPUT_ORGANIZATION: over it, its sessions' pins are unknown), so that the
 * plan knows what the edit refuses (SharedState, inventory.h): erase_edit_file_max(). */
#define ERASE_FILE_MAX (64U * 1024 * 1024)

/* Called after every mutating step (the executor's crash hook). */
typedef void (*EraseStepFn)(void *userdata, const char *step);

/* The largest file of parse qgc edits. */
size_t erase_edit_file_max(EraseParseFn parse);

/* A parse of a shared file kept between the edits of a run (EraseIndex.cache): the text it
 * was made from and what erase_splice_parse_*() found in it. A text read later is looked up by
 * its whole content, so that an entry is never taken for another text: a file that changed since
 * is parsed afresh. */
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

/* (dir_fd, name) opened for reading, with its stat: the fd, or -errno (-EBADMSG: not a regular
 * file). */
int erase_edit_open(int dir_fd, const char *name, struct stat *ret_st);
/* Has fd exactly st's identity and the n bytes of text? 1, 0, or -errno. */
int erase_edit_fd_is(int fd, const struct stat *st, const char *text, size_t n);
void erase_edit_cache_clear(EraseCached *c);
/* Keep *text (taken) and p (taken) in c, total being what the run's cache holds. */
void erase_edit_cache_put(EraseCached *c, size_t total, char **text, size_t n, EraseParsed *p);
/* Remove what a crashed edit of name left in dir_fd. 0 or -errno. */
int erase_edit_leftovers_remove(int dir_fd, const char *name);

/* Edit (dir_fd, name) with the splice for ids: returns how many rows/entries were removed (0: no
 * file, or nothing of ids in it), -EAGAIN when a writer's version written during the edit could
 * not be merged (it is what the file holds), -EBADMSG when it is not what Qwen writes, -EFBIG
 * past erase_edit_file_max(), -errno. *ret_removed: how many the file lost on disk (also when
 * the directory's fsync then fails). A writer's version the rounds could not merge is kept
 * beside the file: *ret_kept (may be NULL; allocated), its name. cache (may be NULL): the file's
 * entry, total: what the run's other entries hold. */
int erase_edit(int dir_fd, const char *name, EraseParseFn parse, const EraseIds *ids,
               EraseStepFn step, void *userdata, unsigned *ret_removed, EraseCached *cache,
               size_t total, char **ret_kept);
