/* dc-store.h: the read side of a Deep Code 0.2.1 store (~/.deepcode): each projects/<code>/, its
 * index, its sessions (indexed, or files the index does not name), their bytes by kind, the
 * ownership proof, the checkpoints their messages name, the evidence that they are in use, and
 * the bytes of the checkpoint repository file-history/.git. Writes nothing. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cold.h"
#include "dc-gitobj.h"
#include "dc-index.h"
#include "dc-messages.h"
#include "fs.h"
#include "inventory.h"
#include "util.h"

/* qgc's archive of Deep Code's sessions (Deep Code has none; dc-archive.c archives, dc-restore.c
 * restores), in a directory Deep Code never reads: ~/.deepcode/.qgc-archive/<code>/, 0700, with
 * per session <id>.jsonl (the transcript, byte for byte) or <id>.jsonl.zst (compressed:
 * cold.h), <id>.entry.json (its index entry, js_stringify_indent(entry, 2)), <id>.checkpoints
 * (the checkpointHash values its messages name, one 40-hex per line, sorted), <id>.after (the
 * ids after its entry in the project's order when it was archived, one a line: the index with
 * the sessions archived before at their places; its restore's place; absent in archives of qgc
 * before it) and <id>.images/ (its images/<id>/, when it had one). Its branch stays in
 * file-history/.git. */
#define DC_ARCHIVE_DIR ".qgc-archive"
#define DC_ARCHIVE_ZST ".jsonl" COLD_SUFFIX
#define DC_ARCHIVE_ENTRY ".entry.json"
#define DC_ARCHIVE_CHECKPOINTS ".checkpoints"
#define DC_ARCHIVE_IMAGES ".images"
#define DC_ARCHIVE_AFTER ".after"
/* <id>.checkpoints past this is not read: its checkpoints are unknown (41 bytes a checkpoint) */
#define DC_ARCHIVE_CHECKPOINTS_MAX (16u << 20)

/* How long an index status of a prompt in progress (processing, ask_permission,
 * waiting_for_user) keeps its session live after its updateTime: Deep Code saves the index at
 * every step of a prompt, and a question waits for a person, overnight perhaps. A status left
 * by a process that died stops counting after it. */
#define DC_STATUS_WINDOW (24 * MSEC_PER_HOUR)

/* Evidence that a session is in use (Deep Code has no registry and no lock), a bit each. */
typedef enum DcLive {
        DC_LIVE_PROCESS = 1 << 0, /* a process naming Deep Code has the project's root as cwd */
        DC_LIVE_STATUS = 1 << 1,  /* its index status is processing, ask_permission or
                                   * waiting_for_user, and its updateTime within
                                   * DC_STATUS_WINDOW (or not a date) */
        DC_LIVE_UNKNOWN = 1 << 2, /* a Deep Code process of the store's user (or root) whose cwd
                                   * cannot be read, or too many: treated as live */
} DcLive;
/* Recent writes are the policy's min-idle over DcSession.last_write, as for Qwen. */

typedef enum DcRoot {
        DC_ROOT_EXISTS,  /* originalPath is a directory */
        DC_ROOT_GONE,    /* it does not exist (ENOENT, ENOTDIR) */
        DC_ROOT_UNKNOWN, /* no originalPath, or stat(2) failed otherwise */
} DcRoot;

/* Bytes as du counts them: st_size and st_blocks * 512 of every file and directory. */
typedef struct DcBytes {
        uint64_t bytes, alloc;
        msec_t mtime;    /* the newest mtime inside */
        bool incomplete; /* a directory could not be listed, a mount point, too deep */
} DcBytes;

typedef struct DcSession {
        char *id;          /* the index entry's id, or the file's name without ".jsonl" */
        char *summary;     /* index: the title analogue (NULL when none or not indexed) */
        bool summary_manual; /* the summary is not what createSession() made of the first
                              * prompt (its first 100 UTF-16 units, or "[Image Prompt]"):
                              * renameSession() set it, or that cannot be told */
        char *forked_from; /* index: forkedFrom.sessionId */
        DcStatus status;
        msec_t create_time, update_time; /* index: Date.parse(), 0 when unknown */
        bool indexed;      /* the index names it (else: an orphan file or images/<id>/) */
        bool proven;       /* its project's code is proven and every message is its own */
        char *why;         /* !proven: why */
        unsigned live;     /* DcLive */
        pid_t live_pid;    /* DC_LIVE_PROCESS: the process */
        FileId jsonl;      /* <id>.jsonl, .present when it exists */
        FileId images_dir; /* images/<id>/, .present when it exists */
        DcBytes images;    /* images/<id>/ (0 when absent) */
        bool has_images;
        msec_t last_write; /* the newest mtime of the .jsonl and images/<id>/ */
        DcMessages messages; /* what its .jsonl says (empty when absent) */
        /* in qgc's archive (DC_ARCHIVE_DIR/<code>/): archived when <id>.jsonl or
         * <id>.jsonl.zst is there (.present of each); its entry's fields fill the index's
         * above when the index does not name it */
        bool archived;
        FileId arc_jsonl, arc_zst, arc_entry, arc_checkpoints, arc_images_dir;
        DcBytes arc_images;   /* <id>.images/ */
        uint64_t arc_zst_orig; /* the size the .zst records of its original */
        char *arc_why;        /* why the archive of it is not whole (NULL: whole) */
        char (*arc_hashes)[DC_HASH_LEN + 1]; /* <id>.checkpoints, read whole (arc_why else) */
        size_t n_arc_hashes;
} DcSession;

typedef struct DcProject {
        char *code;            /* the directory's name under projects/ */
        DcIndexState index_state;
        FileId dir;            /* projects/<code>/ itself */
        FileId index;          /* sessions-index.json, as it was just before the read */
        char *original_path;   /* the index's originalPath (NULL unless index_state is OK) */
        bool code_proven;      /* dc_project_code(original_path) is the directory's name */
        DcRoot root;
        unsigned live;         /* DC_LIVE_PROCESS, DC_LIVE_UNKNOWN: of the whole project */
        pid_t live_pid;
        size_t n_nameless;     /* index entries without a string id */
        DcSession *sessions;   /* the indexed ones first, in index order; then the others */
        size_t n_sessions, alloc_sessions;
        FileId images;         /* images/, .present when it exists */
        bool images_empty;     /* images/ holds nothing (Deep Code leaves it after a delete) */
        DcBytes total;         /* projects/<code>/ as a whole */
        DcBytes file_history;  /* file-history/ (its .git: the checkpoint repository) */
        bool has_file_history;
        uint64_t git_loose, git_loose_bytes, git_loose_alloc; /* loose objects of .git */
        /* the compaction of file-history/.git (dc_store_plan_git()): planned (the estimate
         * in git_estimate), or why not (git_why, NULL when not looked at) */
        bool git_planned;
        FileId git;
        uint64_t git_estimate;
        char *git_why;
        DcGitobjCounts git_objects; /* file-history/.git's objects by what reaches them: qgc
                                     * status only (deepcode-store.c), not the scan */
        bool incomplete;       /* the directory could not be listed in full */
        bool unknown;          /* it holds an entry Deep Code does not write */
        FileId marker;         /* DC_STALE_MARKER, .present when it exists */
        size_t n_entries;      /* the index's entries, nameless ones too */
        bool absent;           /* no projects/<code>/: only archived sessions of the code */
        size_t n_archived;     /* sessions with their files in qgc's archive */
} DcProject;

/* Where qgc keeps, in a project of a vanished originalPath, the time it first saw it stale (its
 * mtime; its line the originalPath): Deep Code reads only the index, the transcripts, images/
 * and file-history/ of a project. */
#define DC_STALE_MARKER ".qgc-stale-since"

typedef struct DcStore {
        uid_t uid;             /* the owner of the store's directory */
        dev_t dev;
        uint64_t fs_size, fs_avail; /* statvfs: total bytes, bytes available to users */
        bool fs_known;
        DcProject *projects;
        size_t n_projects, alloc_projects;
        DcBytes total;         /* the whole store, as du counts it */
        FileId error_log;      /* logs/error.log (global; Deep Code appends to it forever) */
        bool incomplete;       /* projects/ or DC_ARCHIVE_DIR could not be listed in full */
} DcStore;

/* Scan the store at path (a ~/.deepcode) at time now, each checkpoint repository's compaction
 * planned (DcProject.git_*). 0, or -errno when path cannot be opened, -ENOMEM. */
int dc_store_scan(const char *path, msec_t now, DcStore **ret);
DcStore *dc_store_free(DcStore *s);

/* The archived sessions of p->code in qgc's archive (open at archive_fd; -errno: none) added to
 * p's sessions, their files read (entry, checkpoints, the .zst's record, a plain transcript's
 * messages) and, with apath (the archive's path), <id>.images/ measured; p->incomplete when it
 * cannot be listed. 0 or -ENOMEM. */
int dc_store_archived(DcProject *p, int archive_fd, dev_t dev, const char *apath);
void dc_store_session_done(DcSession *s);

/* The DcGitInput of project p (dc-git.h): every session with a transcript, an index entry or
 * qgc's archive of it is kept, every checkpoint a transcript or an archived <id>.checkpoints
 * names is a root. Arrays owned by the caller (free()). */
int dc_store_git_input(const DcProject *p, const char ***ret_kept, size_t *ret_n_kept,
                       const char ***ret_named, size_t *ret_n_named);

/* The store-neutral records of s for tree `tree` of inv (model/inventory.h): the tree's dev,
 * fs_size, fs_avail, fs_known; a Session per
 * session with a .jsonl or an index entry (OWNER_OK only when proven; a .jsonl the index does
 * not name is OWNER_UNVERIFIED: Deep Code cannot list it), or archived (SESSION_ARCHIVED, cold
 * for a .zst alone, cold_copy for both, archived_at the mtime of its <id>.entry.json, written
 * once when qgc archived it; OWNER_OK when its archive is whole and its project proven;
 * SESSION_CONFLICT when Deep Code has it too: indexed, a .jsonl or images/<id>/), live bits LIVE_REGISTRY (a
 * process), LIVE_CLAIM (the index status) and LIVE_UNKNOWN, with live_reason; the tree
 * incomplete when s or a project is, or an id is longer than SESSION_ID_MAX. 0 or -ENOMEM. */
int dc_store_inventory(const DcStore *s, Inventory *inv, size_t tree, msec_t now);

/* logs/error.log past this is reported (ORPHAN_DC_ERROR_LOG), never trimmed: Deep Code appends
 * to it with no lock from any of its processes, and it is the user's diagnostics. */
#define DC_ERROR_LOG_REPORT (UINT64_C(64) << 20)
/* The orphans of s (ORPHAN_DC_*, inventory.h) for tree `tree` of inv: a proven <id>.jsonl the
 * index does not name (with its images/<id>/), an images/<id>/ of no session, an empty
 * images/, logs/error.log over DC_ERROR_LOG_REPORT, and each planned compaction (nothing of a
 * project in use, nothing of a project whose code is not proven); and an ORPHAN_STALE_PROJECT
 * (project_dir "projects", name the code) for a project whose originalPath is gone, or whose
 * marker is left when it is back, with Qwen's guards (stale_why: what keeps it). 0 or -ENOMEM. */
int dc_store_orphans(const DcStore *s, Inventory *inv, size_t tree);
