/* inventory.h: what the scan found, with no decisions: trees, sessions, orphans.
 *
 * Plain records so policy tests can build inventories from literals. The Inventory owns every
 * string its records point to; inventory_free() releases them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fs.h"
#include "hashmap.h"
#include "session-times.h"
#include "util.h"

#define SESSION_ID_MAX 36
#define PROJECT_HASH_LEN 64
/* The largest <id>.pr.json or <id>.ledger.jsonl an archive or a restore merges with the copy of
 * the same name in the other directory (archive.h); the scan records a merge past it
 * (Session.merge_too_big), and the plan skips the archive (refuses the restore). */
#define ARCHIVE_SIDECAR_MAX (64U * 1024 * 1024)

struct StoreOps;

/* A store's data directory pair (Qwen's as Qwen resolves it: roots.h). */
typedef struct Tree {
        char *global_dir;  /* G: usage_record.jsonl, file-history/, sessions/, plans/ */
        char *runtime_dir; /* R: projects/, tmp/, debug/ (== global_dir unless overridden) */
        char *user;        /* owning user name, NULL when unknown */
        uid_t uid;
        dev_t dev;           /* st_dev of runtime_dir; the scan never leaves it */
        uint64_t fs_size;    /* statvfs of runtime_dir: total bytes */
        uint64_t fs_avail;   /* bytes available to unprivileged users */
        bool fs_known;
        bool incomplete;     /* some directory could not be listed: its sessions are missing, so
                              * tree caps and orphans are not decided for it */
        const char *incomplete_why; /* static text when incomplete from the start (roots.c: not
                                     * every runtime root is known), NULL otherwise */
        const struct StoreOps *store; /* whose files these are (store.h) */
} Tree;

/* Why tree-level decisions were skipped for t (the text plan and the run-start entry say it),
 * or NULL when t is complete. */
static inline const char *inventory_tree_incomplete_why(const Tree *t) {
        if (!t->incomplete)
                return NULL;
        return t->incomplete_why ?: "it was not fully listed (a directory could not be read)";
}

typedef enum SessionState {
        SESSION_ACTIVE,   /* chats/<id>.jsonl */
        SESSION_ARCHIVED, /* chats/archive/<id>.jsonl */
        SESSION_CONFLICT, /* both: left alone, reported */
        _SESSION_STATE_MAX,
        _SESSION_STATE_INVALID = -22,
} SessionState;

/* The read-only ownership check of the first record (owner.c). */
typedef enum OwnerStatus {
        OWNER_OK,         /* sanitize_cwd(cwd) == project dir name */
        OWNER_WORKTREE,   /* cwd under <root>/.qwen/worktrees/<x>, root sanitizes to the dir */
        OWNER_CLAIM,      /* a runtime claim in chats/ vouches for it */
        OWNER_FOREIGN,    /* readable, but belongs to another project */
        OWNER_UNVERIFIED, /* unreadable, empty, not JSON, id mismatch, no cwd, ... */
        _OWNER_STATUS_MAX,
        _OWNER_STATUS_INVALID = -22,
} OwnerStatus;

/* How owner.c decided OwnerStatus; the owner reason is rendered from it (reason.h). */
typedef enum OwnerCause {
        OWNER_CAUSE_NONE,          /* no check ran */
        OWNER_CAUSE_UNREADABLE,    /* owner_detail: what the reader found (NULL: "unreadable") */
        OWNER_CAUSE_NO_SESSION_ID, /* the first record has no sessionId */
        OWNER_CAUSE_ID_MISMATCH,   /* owner_detail: the first record's sessionId */
        OWNER_CAUSE_NO_CWD,        /* the first record has no cwd */
        OWNER_CAUSE_CWD,           /* OWNER_OK: sanitizeCwd(cwd) is the project directory */
        OWNER_CAUSE_WORKTREE,      /* owner_dir: the worktree's root */
        OWNER_CAUSE_CLAIM,         /* owner_detail: the claim file; owner_dir: its work_dir */
        OWNER_CAUSE_FOREIGN,       /* owner_dir: the project directory cwd sanitizes to */
        _OWNER_CAUSE_MAX,
        _OWNER_CAUSE_INVALID = -22,
} OwnerCause;

/* Can a delete's edit of a file Qwen shares (erase.h) be done, as the scan found it? What the
 * executor would refuse is planned as a skip (policy.c), never met at run time. */
typedef enum SharedState {
        SHARED_OK,         /* absent, or what qgc edits */
        SHARED_TOO_BIG,    /* larger than ERASE_FILE_MAX */
        SHARED_MALFORMED,  /* not what Qwen Code writes (JSON.parse, the container) */
        SHARED_UNREADABLE, /* cannot be opened or read (a symlink, permissions, ...) */
} SharedState;

/* Liveness signals (live.c), a bit each. */
typedef enum LiveFlags {
        LIVE_REGISTRY = 1 << 0,  /* G/sessions/<pid>.json names it and the process is alive */
        LIVE_CLAIM = 1 << 1,     /* chats/<id>[.<pid>].runtime.json with a live pid / foreign host */
        LIVE_LOCK = 1 << 2,      /* tmp/session-writer-locks/<id>.lock held (or undecidable) */
        LIVE_RECENT = 1 << 3,    /* transcript or subagents/<id>/ written within min-idle */
        LIVE_UNKNOWN = 1 << 4,   /* a signal could not be evaluated: treated as live */
} LiveFlags;

/* Fields ordered to leave little padding, the flags in bits (100k sessions live in memory at
 * once: the _Static_assert below keeps it so). */
typedef struct Session {
        char id[SESSION_ID_MAX + 1]; /* as in the file name */
        bool future_clamped : 1;   /* mtime or last record was in the future */
        bool empty : 1;            /* 0-byte transcript */
        bool tail_incomplete : 1;  /* last line has no '\n' (possibly being written) */
        bool title_manual : 1;    /* titleSource manual or absent */
        bool title_unread : 1;    /* the scan skipped the title windows: no rule could select it
                                   * (TitleNeed); title is then NULL whatever the file holds */
        bool pinned : 1;          /* session-organization: pinnedAt */
        bool grouped : 1;         /* session-organization: groupId or color */
        bool live_worktree : 1;   /* <id>.worktree.json whose worktreePath exists */
        bool cold : 1;            /* archived in its compressed state (cold.h): the transcript is
                                   * chats/archive/.qgc-cold/<id>.jsonl.zst alone */
        bool cold_copy : 1;       /* a .zst of the transcript beside an uncompressed copy (a
                                   * compress or a restore that was cut short) */
        bool org_entry : 1;       /* it has an entry in session-organization.v1.json */
        bool org_unreadable : 1;  /* its project's session-organization.v1.json exists but cannot
                                   * be read or parsed: its pins and groups are unknown */
        bool review_dir : 1;      /* workflows/generated/review/<id>-<hash>/ exists */
        bool restore_pending : 1; /* a restore began and did not complete (session-times.h) */
        bool restore_to_archive : 1; /* ... a restore --to-archive */
        bool restore_full : 1;    /* its store would refuse its restore: the place it goes back
                                   * to is full (StoreOps.restore_full says why) */
        bool merge_too_big : 1;   /* chats/ and chats/archive/ both hold its .pr.json or
                                   * .ledger.jsonl, one larger than ARCHIVE_SIDECAR_MAX: its
                                   * archive (restore) would refuse the merge */
        uint8_t logs_state : 2;   /* SharedState of its tmp/<hash>/logs.json: whether a delete's
                                   * edit of it (erase.h) can be done */
        uint8_t owner_cause : 4; /* OwnerCause (bits beside the flags: it fills padding) */
        SessionState state;
        OwnerStatus owner;
        unsigned n_tasks;     /* scheduled tasks bound to it in tmp/<hash>/scheduled_tasks.json */
        unsigned n_log_rows;  /* its rows in tmp/<hash>/logs.json (prompt history) */
        unsigned live;        /* LiveFlags */
        uint32_t tree;               /* index into Inventory.trees (inventory_add_tree() keeps
                                      * their number below UINT32_MAX) */
        char *project_dir;           /* directory name under projects/ */
        char *cwd;                   /* first record's cwd; NULL when unverified */
        char *hash;                  /* sha256(cwd) hex (PROJECT_HASH_LEN); NULL when no cwd */
        FileId active;   /* chats/<id>.jsonl, .present when it exists */
        FileId archived; /* chats/archive/<id>.jsonl; of a compressed session (cold), its
                          * chats/archive/.qgc-cold/<id>.jsonl.zst */
        uint64_t cold_bytes; /* st_size of its .zst files (transcript and sidecars) */
        uint64_t cold_orig;  /* the sizes of their originals, as recorded in them */
        char *owner_detail; /* OwnerCause's fact (a reader's words, a sessionId, a claim file) */
        char *owner_dir;    /* OwnerCause's directory (worktree root, claim work_dir, the
                             * project directory of a foreign cwd) */

        /* bytes, st_size and allocated (st_blocks*512), transcript(s) + sidecars +
         * file-history/<id> + subagents/<id> */
        uint64_t bytes;
        uint64_t bytes_alloc;
        uint64_t transcript_bytes;
        uint64_t sidecar_bytes; /* st_size of its <id>.worktree.json, .pr.json, .ledger.jsonl:
                                 * with the transcript, what the cold tier compresses */

        msec_t mtime;          /* newest transcript mtime */
        msec_t last_write;     /* newest mtime of the transcript(s) and subagents/<id>/ * (for the
                                * policy's min-idle LIVE_RECENT signal) */
        msec_t last_record;    /* last record's timestamp (0 if unknown) */
        msec_t first_record;   /* first record's timestamp (0 if unknown) */
        msec_t last_activity;  /* max(mtime, last_record), clamped to now */
        msec_t archived_at;    /* when qgc archived it (session-times.h), 0 when not recorded */
        msec_t restored_at;    /* when a restore of it began (session-times.h), 0 when none */

        char *title;          /* last custom_title, NULL if none */
        char *live_reason;    /* e.g. "runtime claim pid 4242 alive" */
} Session;
_Static_assert(_OWNER_CAUSE_MAX <= 16, "OwnerCause fits Session.owner_cause");
_Static_assert(sizeof(Session) <= 320, "Session grew: 100k of them live in memory at once");

/* Which transcripts the scan reads the title windows of (policy_title_need() fills it). The
 * title only matters for "titled by a person", a protection of sessions that some rule selects,
 * and for the JSON plan. A session whose newest transcript mtime says it is idle for at most
 * the threshold of its state cannot be selected by max-age (its idle is at most now - mtime),
 * so its title is not read when no count, size or tree rule could select it either. */
typedef struct TitleNeed {
        bool all;               /* read every title (JSON plan, count/size/tree rules) */
        msec_t active_idle;     /* active copies idle for longer need it; MSEC_INFINITY: none */
        msec_t archived_idle;   /* the same for archived copies */
} TitleNeed;

typedef enum OrphanKind {
        ORPHAN_FILE_HISTORY,   /* G/file-history/<id>/ with no transcript in any tree */
        ORPHAN_SUBAGENTS,      /* R/projects/<p>/subagents/<id>/ with no transcript */
        ORPHAN_EMPTY_PROJECT,  /* R/projects/<p>/ holding nothing but empty chats/ dirs */
        /* tree hygiene (hygiene.h), looked for only when their policy key is on; project_dir
         * is then the entry's directory relative to its root (R, or G for plans) */
        ORPHAN_TOOL_RESULT,    /* R/tmp/<hash>/tool-results/<f>, R/tmp/<hash>/<f>.output */
        ORPHAN_TMP_PROJECT,    /* R/tmp/<hash>/ of no session in any state, all of it understood */
        ORPHAN_DEBUG_LOG,      /* R/debug/<id>.txt with no transcript for <id> */
        ORPHAN_PLAN,           /* G/plans/<id>.md with no transcript for <id> */
        ORPHAN_LEGACY,         /* Qwen <= 0.1: R/tmp/<hash>/chats/session-*.json, checkpoint*.json */
        ORPHAN_STALE_PROJECT,  /* R/projects/<p>/ whose every recorded cwd is a vanished temporary
                                * directory (upstream PR #9110); project_dir is "projects" */
        /* Deep Code's (dc-store.h): project_dir is <code>, name the path below projects/<code>/
         * (ORPHAN_DC_UNINDEXED: the id) */
        ORPHAN_DC_UNINDEXED,   /* <id>.jsonl (and images/<id>/) the index does not name, every
                                * message's sessionId <id>: Deep Code cannot list it */
        ORPHAN_DC_IMAGES,      /* images/<id>/ of no session, or images/ when empty */
        ORPHAN_DC_ERROR_LOG,   /* ~/.deepcode/logs/error.log (project_dir NULL) over its size:
                                * reported, never changed */
        ORPHAN_DC_CHECKPOINTS, /* file-history/.git compacted (dc-git.h); bytes: the estimate */
        _ORPHAN_KIND_MAX,
        _ORPHAN_KIND_INVALID = -22,
} OrphanKind;

typedef struct Orphan {
        OrphanKind kind;
        size_t tree;
        char *project_dir; /* for SUBAGENTS and EMPTY_PROJECT, NULL for FILE_HISTORY; the
                            * directory (relative to its root) for the hygiene kinds */
        char *name;        /* session id, the project dir name, or the hygiene entry's name */
        FileId dir;        /* identity of the directory itself */
        uint64_t bytes, bytes_alloc;
        msec_t mtime;      /* newest mtime inside */
        /* ORPHAN_STALE_PROJECT only (hygiene.h): what the scan found */
        FileId marker;         /* projects/<p>/.qwen-orphan-since, .present when it exists */
        char *stale_why;       /* why it cannot go, NULL when only its age decides */
        bool cwd_back;         /* a recorded cwd exists (again): the mark is cancelled */
        char *cwds;            /* its recorded cwds, each ending in '\n' */
} Orphan;

typedef struct Inventory {
        Tree *trees;
        size_t n_trees;
        Session *sessions;
        size_t n_sessions;
        Orphan *orphans;
        size_t n_orphans;
        size_t alloc_trees, alloc_sessions, alloc_orphans;
        /* Lookup index for inventory_find(): session indices sorted by (tree, id ignoring case),
         * built by inventory_index(), dropped by inventory_add_session() and inventory_sort(). When
         * absent, inventory_find() falls back to a linear search. */
        size_t *by_id;
        size_t n_by_id;
        /* One copy of each distinct project_dir, cwd, hash, owner_detail and owner_dir of the
         * sessions (most are shared by a whole project): a set of C strings (hashmap.h). The
         * sessions point into it; inventory_free() releases it. */
        Hashmap strings;
} Inventory;

int inventory_new(Inventory **ret);
Inventory *inventory_free(Inventory *inv); /* accepts NULL, returns NULL */
static inline void inventory_freep(Inventory **p) {
        inventory_free(*p);
}

/* Append records; the inventory takes ownership of the strings inside (on success and failure).
 * A session's project_dir, cwd, hash, owner_detail and owner_dir are replaced by the
 * inventory's shared copies. */
int inventory_add_tree(Inventory *inv, Tree *t, size_t *ret_index);
int inventory_add_session(Inventory *inv, Session *s);
int inventory_add_orphan(Inventory *inv, Orphan *o);

/* Sort sessions by (tree, project_dir, cwd, id) for stable output. */
void inventory_sort(Inventory *inv);
/* Build the lookup index of inventory_find(). 0 or -ENOMEM. */
int inventory_index(Inventory *inv);
/* Find a session by id (case-insensitive) in a tree; NULL if absent. O(log n) after
 * inventory_index(), linear otherwise. tree == SIZE_MAX: in any tree. */
const Session *inventory_find(const Inventory *inv, size_t tree, const char *id);

/* One line of qgc's record of archive and restore times (session-times.h) into session id of
 * tree, when there is one: archived_at, restored_at, restore_pending, restore_to_archive, a
 * later line replacing what an earlier one said. The store checked id by its rule. */
void inventory_session_time(Inventory *inv, size_t tree, SessionTimeEvent ev, msec_t at,
                            const char *id);
/* The cold tier's totals: how many sessions are compressed, their bytes, their original bytes. */
void inventory_cold_totals(const Inventory *inv, size_t *ret_n, uint64_t *ret_bytes,
                           uint64_t *ret_orig);

void inventory_session_done(Session *s);
void inventory_orphan_done(Orphan *o);
void inventory_tree_done(Tree *t);

/* An archived session whose transcript is compressed in the cold tier (and has no
 * uncompressed copy). */
static inline bool inventory_session_is_cold(const Session *s) {
        return s->state == SESSION_ARCHIVED && s->cold;
}

/* The project a session's journal entries name: its cwd, else its project directory. */
static inline const char *inventory_session_project(const Session *s) {
        return s->cwd ? s->cwd : s->project_dir;
}

const char *inventory_session_state_to_string(SessionState s);
const char *inventory_owner_status_to_string(OwnerStatus s);
const char *inventory_orphan_kind_to_string(OrphanKind k);
/* "registry,claim" etc. into buf */
char *inventory_live_flags_to_string(char *buf, size_t n, unsigned flags);
/* Is k one of the hygiene kinds (ORPHAN_TOOL_RESULT .. ORPHAN_STALE_PROJECT, hygiene.h)? */
bool inventory_hygiene_kind(OrphanKind k);
/* Is s a session of stale project entry o (its tree and project directory)? */
bool inventory_stale_member(const Orphan *o, const Session *s);
