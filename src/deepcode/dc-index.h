/* dc-index.h: a project's sessions-index.json as Deep Code 0.2.1 reads it (loadSessionsIndex(),
 * normalizeSessionEntry()): bounded, read-only. */
#pragma once

#include <errno.h>
#include <stddef.h>

#include "fs.h"
#include "util.h"

/* The index's name in its project directory, and the temp file of qgc's edits of it. */
#define DC_INDEX_FILE "sessions-index.json"
#define DC_INDEX_TEMP FS_TEMP_NAME(DC_INDEX_FILE)

/* Deep Code rewrites the whole index per change (JSON.stringify(index, null, 2)); 50 entries,
 * each with its first prompt (summary), last reply and thinking: 16 MiB is far above what it
 * writes, and bounds what qgc parses. */
#define DC_INDEX_MAX (16u << 20)
/* MAX_SESSION_ENTRIES of session.ts: a save (createSession(), forkSession()) keeps the 50 newest
 * entries by updateTime and deletes the files of the others */
#define DC_INDEX_ENTRIES_MAX 50

/* SessionStatus; anything else reads as "pending" (normalizeSessionStatus()). */
typedef enum DcStatus {
        DC_STATUS_PENDING,
        DC_STATUS_PROCESSING,
        DC_STATUS_WAITING_FOR_USER,
        DC_STATUS_ASK_PERMISSION,
        DC_STATUS_COMPLETED,
        DC_STATUS_FAILED,
        DC_STATUS_INTERRUPTED,
        DC_STATUS_PERMISSION_DENIED,
        _DC_STATUS_MAX,
        _DC_STATUS_INVALID = -EINVAL,
} DcStatus;

/* Whether the index could be read as Deep Code writes it. Anything but OK or ABSENT: no
 * ownership can be proven, and the index must never be rewritten (Deep Code reads a
 * malformed index as empty and its next save overwrites it). */
typedef enum DcIndexState {
        DC_INDEX_OK,
        DC_INDEX_ABSENT,     /* no sessions-index.json: no session is indexed */
        DC_INDEX_TOO_BIG,    /* over DC_INDEX_MAX */
        DC_INDEX_MALFORMED,  /* not JSON.parse-able, not an object, no "entries" array or no
                              * "originalPath" string */
        DC_INDEX_UNREADABLE, /* cannot be opened or read (a symlink, permissions, ...) */
        _DC_INDEX_STATE_MAX,
        _DC_INDEX_STATE_INVALID = -EINVAL,
} DcIndexState;

typedef struct DcEntry {
        char *id;          /* NULL: not a string (Deep Code gives it a random id per load) */
        char *summary;     /* the title analogue (renameSession() edits it); NULL when none */
        char *forked_from; /* forkedFrom.sessionId, NULL when none */
        DcStatus status;
        msec_t create_time, update_time; /* Date.parse(); 0 when absent or not a date */
} DcEntry;

typedef struct DcIndex {
        DcIndexState state;
        char *original_path;
        DcEntry *entries;
        size_t n_entries;
} DcIndex;

/* Read and parse dfd's sessions-index.json into *ret (ret->state says how it went; the
 * entries are read only when OK). 0, or -ENOMEM. */
int dc_index_read(int dfd, DcIndex *ret);
void dc_index_done(DcIndex *idx);
const char *dc_index_status_to_string(DcStatus s);

/* One entry kept apart from its index (qgc's archive: dc-store.h's <id>.entry.json), at most
 * DC_INDEX_ENTRY_MAX: read from (dfd, name) and normalized as the index's entries are. 0;
 * -EBADMSG when it is not a JSON object with a string id; -EFBIG, -ENOMEM, another -errno. */
#define DC_INDEX_ENTRY_MAX (1u << 20)
int dc_index_entry_read(int dfd, const char *name, DcEntry *ret);
void dc_index_entry_done(DcEntry *e);

/* The order an entry kept apart had (qgc's archive: dc-store.h's <id>.after): the ids after it,
 * one a line, at most DC_INDEX_AFTER_MAX bytes (a person can write it: past that it is not
 * read). Lines that cannot be an id (dc_index_id_valid()) are left out. 0 with *ret (n ids, each its own allocation; *ret NULL when none); -EFBIG past
 * DC_INDEX_AFTER_MAX, -ENOENT, -ENOMEM, another -errno. */
#define DC_INDEX_AFTER_MAX (64u << 10)
#define DC_INDEX_ID_MAX 200
/* The one rule for a Deep Code session id qgc handles, s[0..n): can it be a file name as Deep
 * Code joins it (`${id}.jsonl`, images/<id>) and a line of qgc's markers and <id>.after: 1 to
 * DC_INDEX_ID_MAX bytes, no leading '.', no '/', no control character (C0, DEL). A session whose
 * id is not has no proof (the scan), is never changed (the run operations) and is no line of an
 * <id>.after. */
bool dc_index_id_valid(const char *s, size_t n);
int dc_index_after_read(int dfd, const char *name, char ***ret, size_t *ret_n);
void dc_index_after_free(char **ids, size_t n);
