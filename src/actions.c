/* actions.c: carries out a Plan, the only code that changes a managed tree. Every change is an
 * unlinkat() or renameat() relative to a directory fd opened without following symlinks, on the
 * tree's filesystem, after checking that the target is still what the scan saw.
 *
 * Group commit: sessions are not carried out one by one but in batches (see ActionsBatch below):
 * each session of a batch is checked (identity, liveness) and its usage line built; then, for
 * the whole batch, (1) the usage lines are appended with one write(), one fsync and a read-back
 * (a session whose transcript changed since its line was built is dropped first); (2) every
 * delete's pending marker goes into one file, written durably; (3) the transcripts and sidecars
 * are moved, then removed, each transcript's identity re-checked just before; (4) the
 * directories the moves touched are fsynced before the first removal, those the removals
 * touched after the last; (5) the deletes' other files go, then the batch's marker. No
 * transcript goes before its usage line is durable, and no name qgc added is undurable when
 * anything is removed (tests/faults' directory fsync audit). The states a crash can leave are
 * those below, for every session of the batch at once.
 *
 * Crash safety, per session (each step atomic; `qgc` run again completes or repeats it):
 *   - salvage: the usage line is appended, fsynced and read back BEFORE any transcript goes,
 *     and skipped when usage_record.jsonl already has a line for the session, so a rerun never
 *     duplicates; a short write is undone (usageidx.c) and the session kept. Before the first
 *     line into a file with no v1 record, the history Qwen would rebuild is written (one rename;
 *     a crash before it leaves only .usage_record.jsonl.qgc-tmp, which the next rebuild
 *     replaces: the file still has no v1 record then);
 *   - archive: see archive.c (sidecars first, transcript last, every move a rename);
 *   - delete: first a pending marker, G/.qgc/pending/<id>.<hash> (recover.c; one file holds the
 *     markers of a whole batch, named after its first session), written durably (temp file,
 *     fsync, rename, fsync) and naming every file the delete is about to remove with its
 *     identity; then its rows and entry in the files Qwen shares (erase.h: logs.json,
 *     session-organization.v1.json), each an atomic rename, or, when that cannot be done now,
 *     nothing of the session (it stays whole; the recovery pass finds its
 *     transcript and drops only its marker); then the transcript (Qwen's newer removeSession
 *     order), then sidecars in both places, file-history/<id>/, subagents/<id>/,
 *     debug/<id>.txt, plans/<id>.md, the review scripts and dead
 *     runtime claims; last the marker. A crash before the transcript goes leaves the session
 *     whole (and maybe the marker or its temp file: the next run's recovery pass sees the
 *     transcript and drops them). A crash after it leaves the marker as proof: the recovery pass
 *     at the start of the next real run removes every listed file that still has its recorded
 *     identity, then the marker. Removing a claim only after the transcript keeps ownership
 *     evidence while it matters;
 *   - temporary files (".<name>.qgc-tmp" of a merge or a marker) left by a crash are removed by
 *     the recovery pass, under the tree lock that every writer of them holds;
 *   - restore: archive.c's move in the other direction, a plan step like the others;
 *   - compress: like a delete for the usage line (the transcript leaves Qwen's view), then
 *     coldstep.h's steps (cold.h's COLD_BATCH: one syncfs and one fsync per cold directory per
 *     batch); a rerun finds a .zst beside its original and removes the original only when it
 *     has exactly the recorded content.
 * The executor owns the run's resources: actions_run() takes every tree lock and opens the
 * action log; nothing is executed or journalled without them.
 *
 * Test seam: test_seam_set_crash_after_step(N) (testseam.h; tests only, no environment variable)
 * makes the process _exit(99) right after its Nth mutating step (tests/faults/test_faults.c). */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "actions.h"
#include "archive.h"
#include "erase.h"
#include "cold.h"
#include "coldstep.h"
#include "fsutil.h"
#include "journal.h"
#include "json.h"
#include "live.h"
#include "lock.h"
#include "log.h"
#include "hygiene.h"
#include "orphans.h"
#include "macro.h"
#include "recover.h"
#include "restore.h"
#include "testseam.h"
#include "usage.h"
#include "usageidx.h"
#include "util.h"

/* Open directories and the liveness probe of one tree, for the length of a run. */
typedef struct ActionsTree {
        int global_fd;  /* G */
        int runtime_fd; /* R */
        dev_t global_dev; /* st_dev of G: removals below G never leave it */
        LiveProbe *probe;
        UsageIndex *usage; /* ids with a line in usage_record.jsonl, read incrementally */
        int error; /* why the tree cannot be acted on (negative errno), 0 when usable */
} ActionsTree;

typedef struct ActionsContext {
        const Inventory *inv;
        ActionStats *stats;
        ActionsTree *trees;
        int *runtime_fds; /* trees[i].runtime_fd, for orphans_transcript_anywhere() */
        unsigned crash_after; /* test_seam_crash_after_step(), 0 = off */
        unsigned n_steps;
        bool failed;
        int first_error; /* of a restore step: what actions_restore() returns */
        char *why; /* an allocated reason of the current session's outcome */
        struct ActionsBatch *batch;
        /* the runtime claim names of the chats/ being worked on, listed once per batch (NULL:
         * list the directory) */
        char **claim_names;
        size_t n_claim_names;
} ActionsContext;

/* The group commit (actions_batch_*()): sessions of one tree are prepared (checked, their usage
 * line built) one by one into a batch; then the batch's lines are appended with one write,
 * fsync and read-back, its pending-delete markers written with one flush, its transcripts and
 * sidecars removed or moved, and every touched directory fsynced once. A batch closes at
 * ACTIONS_BATCH_MAX sessions or a few ms of preparing, whichever comes first: ACTIONS_BATCH_MSEC,
 * or 4 times what the previous batch's usage and marker flushes took (up to
 * ACTIONS_BATCH_MSEC_MAX), so that flushes stay a small part of the run on a slow disk. */
#define ACTIONS_BATCH_MAX 256U
#define ACTIONS_BATCH_MSEC 10U
#define ACTIONS_BATCH_MSEC_MAX 100U
#define ACTIONS_BATCH_DIRS 64U /* chats/ (+ archive/) directories held open by one batch */

typedef struct ActionsBatchDir {
        const char *project_dir;
        int chats_fd, archive_fd;
        bool sync_chats, sync_archive; /* changed: fsync before any outcome is reported */
        int cold_fd; /* chats/archive/.qgc-cold/, opened by the first compression */
        bool sync_cold;
        char **claims; /* names of the runtime claims in chats/, listed once (claims_listed) */
        size_t n_claims;
        bool claims_listed;
        char **sidecar_ids; /* sorted ids with a sidecar in chats/, listed before the moves */
        size_t n_sidecar_ids;
        int sidecars_listed; /* 1 listed, 0 not yet, -errno could not be listed */
} ActionsBatchDir;

typedef struct ActionsBatchItem {
        const Session *s;
        const Verdict *v;
        size_t dir;
        char *line; /* the usage line to append first, or NULL */
        char *sid;  /* the line's sessionId */
        ssize_t dep; /* no line of its own: the item whose line has its sessionId, or -1 */
        bool appended; /* its line is durably in usage_record.jsonl */
        bool marked; /* in the batch's pending-delete marker */
        RecoverMarker mk;
        bool done;  /* outcome reported */
        bool removed; /* delete: the transcript is gone */
        ColdStep *cold; /* compress: what its first half placed */
} ActionsBatchItem;

typedef struct ActionsBatch {
        size_t tree;
        size_t n, n_dirs, max;
        uint64_t started_ns;
        uint64_t window_ns; /* how long the next batch may prepare */
        char *marker; /* the name of the file of the batch's pending-delete markers */
        ActionsBatchItem items[ACTIONS_BATCH_MAX];
        ActionsBatchDir dirs[ACTIONS_BATCH_DIRS];
} ActionsBatch;

/* Outcome of one action, for the journal and the stats. */
typedef enum ActionsOutcome {
        ACTIONS_DONE,
        ACTIONS_SKIPPED,
        ACTIONS_FAILED,
} ActionsOutcome;

/* Count a mutating step; the crash hook stops the process here in tests. */
static void actions_step(void *userdata, const char *what) {
        ActionsContext *c = userdata;

        c->n_steps++;
        log_debug("step %u: %s", c->n_steps, what);
        if (c->crash_after > 0 && c->n_steps >= c->crash_after)
                _exit(99);
}

static void actions_tree_done(ActionsTree *t) {
        t->global_fd = safe_close(t->global_fd);
        t->runtime_fd = safe_close(t->runtime_fd);
        t->probe = live_probe_free(t->probe);
        t->usage = usage_index_free(t->usage);
}

/* Open G and R of every tree once; a tree that cannot be opened is skipped whole. */
static int actions_open_trees(ActionsContext *c) {
        c->trees = calloc(c->inv->n_trees ? c->inv->n_trees : 1, sizeof(ActionsTree));
        c->runtime_fds = calloc(c->inv->n_trees ? c->inv->n_trees : 1, sizeof(int));
        if (!c->trees || !c->runtime_fds)
                return -ENOMEM;
        for (size_t i = 0; i < c->inv->n_trees; i++) {
                const Tree *tr = &c->inv->trees[i];
                ActionsTree *t = &c->trees[i];
                FsRoot root = FS_ROOT_NULL;
                int r;

                t->global_fd = t->runtime_fd = -EBADF;
                r = usage_index_new(&t->usage);
                if (r < 0)
                        return r;
                r = fs_root_open(tr->runtime_dir, tr->dev, &root);
                if (r < 0) {
                        t->error = r;
                        continue;
                }
                t->runtime_fd = TAKE_FD(root.fd);
                r = fs_root_open(tr->global_dir, 0, &root);
                if (r < 0) {
                        t->error = r;
                        continue;
                }
                t->global_fd = TAKE_FD(root.fd);
                t->global_dev = root.dev;
                r = live_probe_new(tr, &t->probe);
                if (r < 0)
                        t->error = r;
        }
        for (size_t i = 0; i < c->inv->n_trees; i++)
                c->runtime_fds[i] = c->trees[i].runtime_fd;
        return 0;
}

static const char *actions_project(const Session *s) {
        return s->cwd ? s->cwd : s->project_dir;
}

/* Journal one session outcome and count it. */
static int actions_report_session(ActionsContext *c, const Session *s, const Verdict *v,
                                   JournalEvent ev, const char *reason, int error) {
        const Tree *tr = &c->inv->trees[s->tree];
        bool archived = s->state == SESSION_ARCHIVED || ev == JOURNAL_ARCHIVED;
        _cleanup_free_ char *path = strprintf("%s/projects/%s/chats/%s%s.jsonl", tr->runtime_dir,
                                              s->project_dir, archived ? "archive/" : "", s->id);
        _cleanup_free_ char *msg = NULL;
        const char *verb = journal_event_to_string(ev);

        if (ev == JOURNAL_SKIPPED || ev == JOURNAL_FAILED)
                msg = strprintf("%s %s of session %s in %s ('%s'): %s%s%s",
                                ev == JOURNAL_SKIPPED ? "skipped" : "failed",
                                v && v->rule && streq(v->rule, "restore") ? "restore"
                                : v && v->verb == VERB_ARCHIVE            ? "archive"
                                : v && v->verb == VERB_COMPRESS           ? "compress"
                                                                          : "delete",
                                s->id, actions_project(s), path ? path : "?",
                                reason ? reason : "", error ? ": " : "",
                                error ? errno_to_string(error) : "");
        else
                msg = strprintf("%s session %s in %s (%s)", verb, s->id, actions_project(s),
                                v && v->reason ? v->reason : "");

        JournalEntry e = {
                .event = ev,
                .message = msg,
                .session = s->id,
                .project = actions_project(s),
                .path = path,
                .rule = v ? v->rule : NULL,
                .reason = ev == JOURNAL_SKIPPED || ev == JOURNAL_FAILED ? reason
                                                                          : (v ? v->reason : NULL),
                .bytes = s->bytes,
                .has_bytes = ev == JOURNAL_ARCHIVED || ev == JOURNAL_DELETED ||
                             ev == JOURNAL_RESTORED,
                .user = tr->user,
                .error = error,
        };
        if (journal_log(&e) < 0)
                log_warning("cannot write the action log entry for session %s", s->id);

        switch (ev) {
        case JOURNAL_ARCHIVED:
                c->stats->n_archived++;
                c->stats->bytes_archived += s->bytes;
                break;
        case JOURNAL_DELETED:
                c->stats->n_deleted++;
                c->stats->bytes_deleted += s->bytes;
                break;
        case JOURNAL_SKIPPED:
                c->stats->n_skipped++;
                break;
        case JOURNAL_FAILED:
                c->stats->n_failed++;
                c->failed = true;
                break;
        default:
                break;
        }
        return 0;
}

/* Is a usage line for id waiting in the current batch? Then the session's own line is that one:
 * *ret_dep is its item (the session is kept if that line is not written). */
static bool actions_batch_has_line(const ActionsContext *c, const char *id, ssize_t *ret_dep) {
        const ActionsBatch *b = c->batch;

        for (size_t i = 0; b && i < b->n; i++) {
                const ActionsBatchItem *it = &b->items[i];

                if (it->line && (streq(it->s->id, id) || streq(it->sid, id))) {
                        *ret_dep = (ssize_t)i;
                        return true;
                }
        }
        return false;
}

/* The usage line to salvage from the transcript (dir_fd, name) before it goes, into *ret_line
 * (NULL: present already, in the file or in the batch, or nothing to salvage) and its
 * sessionId into *ret_sid; the batch appends it (actions_batch_commit()). 0, -ESTALE changed
 * since scan, other -errno: fail closed. */
static int actions_salvage(ActionsContext *c, const ActionsTree *t, const Session *s, int dir_fd,
                           const char *name, const FileId *fid, char **ret_line, char **ret_sid,
                           ssize_t *ret_dep) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *line = NULL;
        int r, v1;

        /* a line there already (the caller checked the transcript's identity): nothing to read */
        r = usage_index_has(t->usage, t->global_fd, s->id);
        if (r < 0)
                return r; /* cannot tell whether a line exists: never risk a duplicate */
        v1 = usage_index_has_v1(t->usage, t->global_fd);
        if (v1 < 0)
                return v1;
        if (r > 0 && v1 > 0)
                return 0;

        fd = fs_openat(dir_fd, name, O_RDONLY | O_NONBLOCK, 0);
        if (fd < 0)
                return fd == -ENOENT || fd == -ELOOP ? -ESTALE : fd;
        r = fs_check_identity_fd(fd, fid);
        if (r <= 0)
                return r < 0 ? r : -ESTALE;
        /* a compressed transcript: salvaged from its content, checked against its SHA-256 */
        _cleanup_close_ int ufd = session_is_cold(s) ? cold_step_memfd(dir_fd, s->id) : -EBADF;
        if (session_is_cold(s) && ufd < 0)
                return ufd;

        r = usage_build_record(ufd >= 0 ? ufd : fd, &line);
        if (r < 0)
                return r;
        if (!line)
                return 0; /* no telemetry: Qwen writes nothing either */

        /* While the file has no v1 record Qwen rebuilds its totals from the transcripts: keep
         * them as they are now before this one goes (usageidx.h). */
        if (v1 == 0) {
                r = usage_history_freeze(t->usage, t->global_fd);
                if (r < 0)
                        return r;
                if (r > 0) {
                        _cleanup_free_ char *msg = strprintf(
                                "usage_record.jsonl had no version-1 record: wrote the usage "
                                "history Qwen rebuilds from the transcripts before session %s "
                                "goes, so that its totals stay as they are",
                                s->id);
                        actions_step(c, "usage_record.jsonl (Qwen's rebuilt history)");
                        JournalEntry e = {
                                .event = JOURNAL_SALVAGED,
                                .message = msg ?: "usage_record.jsonl: wrote Qwen's rebuilt "
                                                  "usage history",
                                .session = s->id,
                                .project = actions_project(s),
                                .user = c->inv->trees[s->tree].user,
                        };
                        (void)journal_log(&e);
                }
        }
        r = usage_index_has(t->usage, t->global_fd, s->id);
        if (r < 0)
                return r;
        if (r > 0 || actions_batch_has_line(c, s->id, ret_dep))
                return 0;

        /* Qwen dedupes on the first record's sessionId, which may differ from the file name in
         * case: check that one too. */
        _cleanup_free_ char *sid = NULL;
        r = usage_line_session_id(line, &sid);
        if (r < 0)
                return r;
        if (!streq(sid, s->id)) {
                r = usage_index_has(t->usage, t->global_fd, sid);
                if (r < 0)
                        return r;
                if (r > 0 || actions_batch_has_line(c, sid, ret_dep))
                        return 0;
        }

        /* the record covers the file as it was: it must not have grown meanwhile (checked by
         * name again just before the batch's append) */
        r = fs_check_identity_fd(fd, fid);
        if (r <= 0)
                return r < 0 ? r : -ESTALE;
        *ret_line = TAKE_PTR(line);
        *ret_sid = TAKE_PTR(sid);
        return 0;
}

/* Unlink (dfd, name), ENOENT being a benign race. */
static int actions_unlink_benign(ActionsContext *c, int dfd, const char *name, int flags) {
        int r = fs_unlink(dfd, name, flags);

        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        actions_step(c, name);
        return 0;
}

/* Does the runtime claim (dfd, name) name session id? */
static bool actions_claim_names(int dfd, const char *name, const char *id) {
        json_object *doc = NULL;
        const char *sid;
        bool match;

        if (json_read_input(dfd, name, JSON_INPUT_CLAIM, &doc) < 0)
                return false;
        sid = json_get_string(doc, "session_id");
        match = sid && strcasecmp(sid, id) == 0;
        json_object_put(doc);
        return match;
}

/* Remove the dead runtime claims of a session whose transcripts are gone. */
static int actions_remove_claims(ActionsContext *c, int chats_fd, const char *id) {
        _cleanup_free_ char *t = strprintf("%s.jsonl", id);
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        _cleanup_close_ int fd = -EBADF;
        const char *name;
        unsigned char type;
        int r = 0, k;

        if (!t || !d)
                return -ENOMEM;
        if (fs_exists(chats_fd, t) != 0)
                return 0; /* a transcript exists: claims prove its ownership */
        for (size_t i = 0; c->claim_names && i < c->n_claim_names; i++) {
                name = c->claim_names[i];
                if (!claims_is_claim_of(name, id) || !actions_claim_names(chats_fd, name, id))
                        continue;
                k = actions_unlink_benign(c, chats_fd, name, 0);
                if (k < 0 && r == 0)
                        r = k;
        }
        if (c->claim_names)
                return r;
        fd = fs_open_dir(chats_fd, "."); /* its own offset: chats_fd may have been read */
        if (fd < 0)
                return fd;
        fs_dir_init(d, fd);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                if (!claims_is_claim_of(name, id) || !actions_claim_names(chats_fd, name, id))
                        continue;
                k = actions_unlink_benign(c, chats_fd, name, 0);
                if (k < 0 && r == 0)
                        r = k;
        }
        if (k < 0 && r == 0)
                r = k;
        return r;
}

/* Remove (dfd, rel/name) as a regular file, ENOENT benign. */
static int actions_remove_file_in(ActionsContext *c, int root_fd, const char *rel, const char *name,
                                  dev_t dev) {
        _cleanup_close_ int fd = fs_open_path(root_fd, rel, dev);

        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;
        return actions_unlink_benign(c, fd, name, 0);
}

/* Remove directory (root_fd, rel/name) recursively by fd, ENOENT benign. */
static int actions_remove_dir_in(ActionsContext *c, int root_fd, const char *rel, const char *name,
                                 dev_t dev) {
        _cleanup_close_ int fd = fs_open_path(root_fd, rel, dev);
        uint64_t bytes = 0;
        int r;

        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;
        r = fs_exists(fd, name);
        if (r <= 0)
                return r;
        r = fs_rm_rf_at(fd, name, dev, &bytes);
        if (r < 0)
                return r;
        actions_step(c, name);
        return 0;
}

/* Everything but the transcript, in removeSession's order, then what Qwen leaves behind. */
static int actions_delete_rest(ActionsContext *c, const ActionsTree *t, const Session *s,
                               int chats_fd, int archive_fd) {
        static const char *const sidecars[] = { "worktree.json", "pr.json", "ledger.jsonl" };
        const Tree *tr = &c->inv->trees[s->tree];
        _cleanup_free_ char *proj = strprintf("projects/%s", s->project_dir);
        _cleanup_free_ char *proj_sub = strprintf("projects/%s/subagents", s->project_dir);
        _cleanup_free_ char *dbg = strprintf("%s.txt", s->id);
        _cleanup_free_ char *plan = strprintf("%s.md", s->id);
        _cleanup_free_ char *review = strprintf("projects/%s/" ERASE_REVIEW_DIR, s->project_dir);
        _cleanup_free_ char *rname = erase_review_dir_name(s->id);
        int r = 0, k;

        if (!proj || !proj_sub || !dbg || !plan || !review || !rname)
                return -ENOMEM;
        if (session_is_cold(s)) {
                _cleanup_close_ int cfd = archive_fd >= 0 ? fs_open_dir(archive_fd, COLD_DIR)
                                                          : -EBADF;
                for (size_t i = 0; cfd >= 0 && i < ELEMENTSOF(sidecars); i++) {
                        _cleanup_free_ char *z = strprintf("%s.%s" COLD_SUFFIX, s->id,
                                                           sidecars[i]);
                        k = z ? actions_unlink_benign(c, cfd, z, 0) : -ENOMEM;
                        if (k < 0 && r == 0)
                                r = k;
                }
        }
        for (size_t i = 0; i < ELEMENTSOF(sidecars); i++) {
                _cleanup_free_ char *n = strprintf("%s.%s", s->id, sidecars[i]);
                if (!n)
                        return -ENOMEM;
                k = actions_unlink_benign(c, chats_fd, n, 0);
                if (k < 0 && r == 0)
                        r = k;
                if (archive_fd >= 0) {
                        k = actions_unlink_benign(c, archive_fd, n, 0);
                        if (k < 0 && r == 0)
                                r = k;
                }
        }
        k = actions_remove_dir_in(c, t->global_fd, "file-history", s->id, t->global_dev);
        if (k < 0 && r == 0)
                r = k;
        k = actions_remove_dir_in(c, t->runtime_fd, proj_sub, s->id, tr->dev);
        if (k < 0 && r == 0)
                r = k;
        k = actions_remove_file_in(c, t->runtime_fd, "debug", dbg, tr->dev);
        if (k < 0 && r == 0)
                r = k;
        k = actions_remove_file_in(c, t->global_fd, "plans", plan, t->global_dev);
        if (k < 0 && r == 0)
                r = k;
        k = actions_remove_dir_in(c, t->runtime_fd, review, rname, tr->dev);
        if (k < 0 && r == 0)
                r = k;
        k = actions_remove_claims(c, chats_fd, s->id);
        if (k < 0 && r == 0)
                r = k;
        return r;
}

/* Note (dfd, name) in the marker as rel when it exists (of type is_dir). */
static int actions_mark_file(RecoverMarker *m, int dfd, bool in_global, const char *rel,
                             const char *name, bool is_dir, bool is_transcript) {
        struct stat st;

        if (dfd < 0 || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return 0;
        if (is_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
                return 0;
        return recover_marker_add(m, in_global, rel, &st, is_transcript);
}

/* Note the file (below the root, on dev) dir/name in the marker when it exists. */
static int actions_mark_in(RecoverMarker *m, int root_fd, dev_t dev, bool in_global,
                           const char *dir, const char *name, bool is_dir) {
        _cleanup_close_ int fd = fs_open_path(root_fd, dir, dev);
        _cleanup_free_ char *rel = strprintf("%s/%s", dir, name);

        if (!rel)
                return -ENOMEM;
        return fd < 0 ? 0 : actions_mark_file(m, fd, in_global, rel, name, is_dir, false);
}

/* Note the runtime claims naming session id in chats/ (rel chats) in the marker; names: the
 * claim names of chats/ when listed already (n of them), else NULL. */
static int actions_mark_claims(RecoverMarker *m, int chats_fd, const char *chats, const char *id,
                               char *const *names, size_t n) {
        DIR *d;
        struct dirent *de;
        int fd, r = 0;

        for (size_t i = 0; names && r >= 0 && i < n; i++) {
                _cleanup_free_ char *rel = NULL;

                if (!claims_is_claim_of(names[i], id) ||
                    !actions_claim_names(chats_fd, names[i], id))
                        continue;
                rel = strprintf("%s/%s", chats, names[i]);
                r = rel ? actions_mark_file(m, chats_fd, false, rel, names[i], false, false)
                        : -ENOMEM;
        }
        if (names)
                return r;

        fd = fcntl(chats_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                safe_close(fd);
                return -errno;
        }
        rewinddir(d);
        while (r >= 0 && (de = readdir(d))) {
                _cleanup_free_ char *rel = NULL;

                if (!claims_is_claim_of(de->d_name, id) ||
                    !actions_claim_names(chats_fd, de->d_name, id))
                        continue;
                rel = strprintf("%s/%s", chats, de->d_name);
                r = rel ? actions_mark_file(m, chats_fd, false, rel, de->d_name, false, false)
                        : -ENOMEM;
        }
        closedir(d);
        return r;
}

/* The pending-delete marker of s (recover.h): every file the delete is about to remove, with its
 * identity now. Written with the others of its batch (recover_markers_write()). */
static int actions_mark_delete(ActionsContext *c, const ActionsTree *t, const Session *s,
                               int chats_fd, int archive_fd, RecoverMarker *ret) {
        static const char *const exts[] = { "jsonl", "worktree.json", "pr.json", "ledger.jsonl" };
        const Tree *tr = &c->inv->trees[s->tree];
        _cleanup_(recover_marker_done) RecoverMarker m = {
                .session = strdup(s->id), .project_dir = strdup(s->project_dir)
        };
        _cleanup_free_ char *chats = strprintf("projects/%s/chats", s->project_dir);
        _cleanup_free_ char *sub = strprintf("projects/%s/subagents", s->project_dir);
        _cleanup_free_ char *dbg = strprintf("%s.txt", s->id);
        _cleanup_free_ char *plan = strprintf("%s.md", s->id);
        _cleanup_free_ char *review = strprintf("projects/%s/" ERASE_REVIEW_DIR, s->project_dir);
        _cleanup_free_ char *rname = erase_review_dir_name(s->id);
        int r = 0;

        if (!m.session || !m.project_dir || !chats || !sub || !dbg || !plan || !review || !rname)
                return -ENOMEM;
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(exts); i++) {
                _cleanup_free_ char *n = strprintf("%s.%s", s->id, exts[i]);
                _cleanup_free_ char *a = strprintf("%s/%s", chats, n);
                _cleanup_free_ char *b = strprintf("%s/archive/%s", chats, n);
                if (!n || !a || !b)
                        return -ENOMEM;
                r = actions_mark_file(&m, chats_fd, false, a, n, false, i == 0);
                if (r >= 0)
                        r = actions_mark_file(&m, archive_fd, false, b, n, false, i == 0);
        }
        if (r >= 0 && session_is_cold(s)) {
                _cleanup_close_ int cfd = archive_fd >= 0 ? fs_open_dir(archive_fd, COLD_DIR)
                                                          : -EBADF;
                for (size_t i = 0; r >= 0 && cfd >= 0 && i < ELEMENTSOF(exts); i++) {
                        _cleanup_free_ char *z = strprintf("%s.%s" COLD_SUFFIX, s->id, exts[i]);
                        _cleanup_free_ char *rz = z ? strprintf("%s/archive/" COLD_DIR "/%s",
                                                                chats, z)
                                                    : NULL;
                        r = rz ? actions_mark_file(&m, cfd, false, rz, z, false, i == 0)
                               : -ENOMEM;
                }
        }
        if (r >= 0)
                r = actions_mark_in(&m, t->global_fd, t->global_dev, true, "file-history", s->id,
                                    true);
        if (r >= 0)
                r = actions_mark_in(&m, t->runtime_fd, tr->dev, false, sub, s->id, true);
        if (r >= 0)
                r = actions_mark_in(&m, t->runtime_fd, tr->dev, false, "debug", dbg, false);
        if (r >= 0)
                r = actions_mark_in(&m, t->global_fd, t->global_dev, true, "plans", plan, false);
        if (r >= 0)
                r = actions_mark_in(&m, t->runtime_fd, tr->dev, false, review, rname, true);
        if (r >= 0)
                r = actions_mark_claims(&m, chats_fd, chats, s->id, c->claim_names,
                                        c->n_claim_names);
        if (r < 0)
                return r;
        *ret = m;
        m = (RecoverMarker){};
        return 0;
}

/* Does chats/<name> (in_archive: chats/archive/<name>) exist now? 1 yes, 0 no, -errno. */
static int actions_copy_exists(int chats_fd, const char *name, bool in_archive) {
        _cleanup_close_ int afd = in_archive ? fs_open_dir(chats_fd, "archive") : -EBADF;

        if (!in_archive)
                return fs_exists(chats_fd, name);
        if (afd == -ENOENT)
                return 0;
        return afd < 0 ? afd : fs_exists(afd, name);
}

/* Journal one edit of a shared file (counts, never content). */
static void actions_report_erased(ActionsContext *c, const Session *s, const char *dir,
                                  const char *file, unsigned n, const char *what) {
        const Tree *tr = &c->inv->trees[s->tree];
        _cleanup_free_ char *path = strprintf("%s/%s/%s", tr->runtime_dir, dir, file);
        _cleanup_free_ char *msg = strprintf("removed %u %s of session %s from '%s'", n, what,
                                             s->id, path ? path : file);
        _cleanup_free_ char *extra = strprintf("QGC_ERASED=%u\n", n);
        JournalEntry e = {
                .event = JOURNAL_ERASED,
                .message = msg,
                .session = s->id,
                .project = actions_project(s),
                .path = path,
                .user = tr->user,
                .extra = extra,
        };

        if (n == 0)
                return;
        if (journal_log(&e) < 0)
                log_warning("cannot write the action log entry for session %s", s->id);
        c->stats->n_erased += n;
        c->stats->n_erased_files++;
}

/* Remove the session's rows and entries from the files Qwen shares (erase.h). -EAGAIN: not now
 * (the session stays, *ret_why says why). */
static int actions_erase_shared(ActionsContext *c, const ActionsTree *t, const Session *s,
                                int chats_fd, const char **ret_why) {
        _cleanup_free_ char *tmp = strprintf("tmp/%s", s->hash ? s->hash : "");
        _cleanup_free_ char *pdir = strprintf("projects/%s", s->project_dir);
        EraseDone done = {};
        int r;

        free(c->why);
        c->why = NULL;
        r = erase_session_shared(c->inv, s, t->runtime_fd, c->inv->trees[s->tree].dev, chats_fd,
                                 actions_step, c, &done, &c->why);
        actions_report_erased(c, s, tmp ? tmp : "tmp", ERASE_LOGS_FILE, done.log_rows,
                              "prompt history row(s)");
        actions_report_erased(c, s, pdir ? pdir : "projects", ERASE_ORG_FILE, done.org_entries,
                              "organization entry(ies)");
        if (r < 0)
                *ret_why = c->why ? c->why : "cannot edit the files Qwen shares between sessions";
        return r;
}

/* ------------------------------------------------------------------ the group commit */

static uint64_t actions_now_ns(void) {
        struct timespec ts;

        (void)clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static unsigned actions_batch_max(void) {
        const char *e = getenv("QGC_TEST_BATCH_SESSIONS");
        char *end = NULL;
        unsigned long n;

        if (!e || !*e)
                return ACTIONS_BATCH_MAX;
        n = strtoul(e, &end, 10);
        return end && *end == 0 && n >= 1 && n <= ACTIONS_BATCH_MAX ? (unsigned)n
                                                                       : ACTIONS_BATCH_MAX;
}

/* The transcript of item i: its directory fd and name. */
static int actions_batch_dir_fd(const ActionsBatch *b, const ActionsBatchItem *it) {
        const ActionsBatchDir *d = &b->dirs[it->dir];

        if (session_is_cold(it->s))
                return d->cold_fd;
        return it->s->state == SESSION_ARCHIVED ? d->archive_fd : d->chats_fd;
}

static const FileId *actions_fid(const Session *s) {
        return s->state == SESSION_ARCHIVED ? &s->archived : &s->active;
}

/* The transcript's name: <id>.jsonl, or <id>.jsonl.zst in the cold tier. */
static char *actions_tname(const Session *s) {
        return strprintf("%s.jsonl%s", s->id, session_is_cold(s) ? COLD_SUFFIX : "");
}

/* Report item it once. */
static void actions_batch_report(ActionsContext *c, ActionsBatchItem *it, JournalEvent ev,
                                 const char *why, int error) {
        if (it->done)
                return;
        it->done = true;
        (void)actions_report_session(c, it->s, it->v, ev, why, error);
}

/* Report a failure of a step: -ESTALE and conflicts are skips, the rest failures. */
static void actions_batch_fail(ActionsContext *c, ActionsBatchItem *it, int r, const char *why) {
        if (r == -ESTALE)
                actions_batch_report(c, it, JOURNAL_SKIPPED, "changed since scan", 0);
        else if (r == -EEXIST && why && strstr(why, "(conflict)"))
                actions_batch_report(c, it, JOURNAL_SKIPPED, why, 0);
        else
                actions_batch_report(c, it, JOURNAL_FAILED, why, -r);
}

/* 0: the liveness re-check of every session of the batch, just before its first step, with the
 * registry, locks and each directory's runtime claims read once for the batch. */
static void actions_batch_live(ActionsContext *c, ActionsBatch *b) {
        LiveProbe *fresh = c->trees[b->tree].probe; /* the tree's, refreshed by what changed */
        ClaimSet *claims = calloc(b->n_dirs ? b->n_dirs : 1, sizeof(ClaimSet));
        int *loaded = calloc(b->n_dirs ? b->n_dirs : 1, sizeof(int));
        int r;

        r = !claims || !loaded ? -ENOMEM : fresh ? live_probe_refresh(fresh) : -EIO;
        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];
                Session copy;
                int k;

                if (it->done)
                        continue;
                if (r < 0) {
                        actions_batch_report(c, it, JOURNAL_SKIPPED, "liveness cannot be checked",
                                             0);
                        continue;
                }
                if (loaded[it->dir] == 0) {
                        k = claims_load(&claims[it->dir], b->dirs[it->dir].chats_fd);
                        claims_sort(&claims[it->dir]);
                        loaded[it->dir] = k == -ENOMEM ? -ENOMEM : k < 0 ? -EIO : 1;
                }
                copy = *it->s;
                copy.live = 0;
                copy.live_reason = NULL;
                if (loaded[it->dir] == -EIO) {
                        actions_batch_report(c, it, JOURNAL_SKIPPED,
                                             "in use since scan: runtime claims unreadable", 0);
                        continue;
                }
                k = loaded[it->dir] == -ENOMEM ? -ENOMEM
                                                : live_check_claims(fresh, &copy, &claims[it->dir]);
                /* LIVE_RECENT came from the scan's clock; identity covers later writes */
                if (k < 0)
                        actions_batch_report(c, it, JOURNAL_SKIPPED, "liveness cannot be checked",
                                             0);
                else if ((copy.live & ~(unsigned)LIVE_RECENT) != 0) {
                        _cleanup_free_ char *m = strprintf("in use since scan: %s",
                                                           copy.live_reason ?: "in use");
                        actions_batch_report(c, it, JOURNAL_SKIPPED,
                                             m ?: "in use since scan", 0);
                }
                free(copy.live_reason);
        }
        for (size_t j = 0; claims && j < b->n_dirs; j++)
                claims_done(&claims[j]);
        free(claims);
        free(loaded);
}

/* 1: the usage lines of the batch, one write, one fsync, read back; a session whose transcript
 * changed since its line was built is skipped (before the append). */
static void actions_batch_salvage(ActionsContext *c, ActionsBatch *b, const ActionsTree *t) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, n = 0;
        int r;

        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];
                _cleanup_free_ char *name = NULL;

                if (!it->line || it->done)
                        continue;
                name = actions_tname(it->s);
                r = name ? fs_check_identity(actions_batch_dir_fd(b, it), name,
                                             actions_fid(it->s))
                         : -ENOMEM;
                if (r == 0)
                        actions_batch_report(c, it, JOURNAL_SKIPPED, "changed since scan", 0);
                else if (r < 0)
                        actions_batch_report(c, it, JOURNAL_FAILED,
                                             "cannot salvage the usage record; session kept", -r);
                else {
                        char *nb = realloc(buf, len + strlen(it->line) + 1);
                        if (!nb) {
                                actions_batch_report(c, it, JOURNAL_FAILED, "out of memory",
                                                     ENOMEM);
                                continue;
                        }
                        buf = nb;
                        memcpy(buf + len, it->line, strlen(it->line) + 1);
                        len += strlen(it->line);
                        n++;
                }
        }
        if (n > 0)
                r = usage_append_lines(t->global_fd, buf, len);
        else
                r = 0;
        if (r >= 0 && n > 0)
                actions_step(c, "usage_record.jsonl");
        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];

                if (!it->line || it->done)
                        continue;
                if (r < 0) {
                        actions_batch_report(c, it, JOURNAL_FAILED,
                                             "cannot salvage the usage record; session kept", -r);
                        continue;
                }
                c->stats->n_salvaged++;
                it->appended = true;
                _cleanup_free_ char *msg = strprintf("salvaged the usage record of session %s "
                                                     "before its transcript goes",
                                                     it->s->id);
                JournalEntry e = {
                        .event = JOURNAL_SALVAGED,
                        .message = msg ?: "salvaged the usage record before the transcript goes",
                        .session = it->s->id,
                        .project = actions_project(it->s),
                        .user = c->inv->trees[it->s->tree].user,
                };
                (void)journal_log(&e);
        }
        /* a session that shares another's line goes only when that line was written */
        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];

                if (it->done || it->line || it->dep < 0 || b->items[it->dep].appended)
                        continue;
                actions_batch_report(c, it, JOURNAL_SKIPPED,
                                     "the usage line it shares with another file was not written; "
                                     "session kept",
                                     0);
        }
}

/* Point the context at the runtime claim names of d's chats/, listing it on first use (on
 * failure the context says "not listed", and the callers list the directory themselves). */
static void actions_batch_claims(ActionsContext *c, ActionsBatchDir *d) {
        _cleanup_free_ FsDir *dir = NULL;
        _cleanup_close_ int fd = -EBADF;
        const char *name;
        unsigned char type;
        int k;

        c->claim_names = NULL;
        c->n_claim_names = 0;
        if (!d->claims_listed) {
                dir = malloc(sizeof(FsDir));
                fd = dir ? fs_open_dir(d->chats_fd, ".") : -ENOMEM;
                if (fd < 0)
                        return;
                fs_dir_init(dir, fd);
                while ((k = fs_dir_next(dir, &name, &type)) > 0) {
                        char **n;

                        if (!claims_is_claim_name(name))
                                continue;
                        n = realloc(d->claims, (d->n_claims + 1) * sizeof(char *));
                        if (n)
                                d->claims = n;
                        if (!n || !(d->claims[d->n_claims] = strdup(name))) {
                                k = -ENOMEM;
                                break;
                        }
                        d->n_claims++;
                }
                if (k < 0) {
                        for (size_t i = 0; i < d->n_claims; i++)
                                free(d->claims[i]);
                        free(d->claims);
                        d->claims = NULL;
                        d->n_claims = 0;
                        return;
                }
                d->claims_listed = true;
        }
        static char *none[1];
        /* never NULL once listed, even with no claims */
        c->claim_names = d->claims ? d->claims : none;
        c->n_claim_names = d->n_claims;
}

/* 2: the pending-delete markers of the batch's deletes, written with one flush. */
static void actions_batch_mark(ActionsContext *c, ActionsBatch *b, const ActionsTree *t) {
        _cleanup_free_ RecoverMarker **m = calloc(b->n ? b->n : 1, sizeof(*m));
        _cleanup_free_ size_t *idx = calloc(b->n ? b->n : 1, sizeof(size_t));
        size_t n = 0;
        int r;

        if (!m || !idx) {
                for (size_t i = 0; i < b->n; i++)
                        if (b->items[i].v->verb == VERB_DELETE)
                                actions_batch_report(c, &b->items[i], JOURNAL_FAILED,
                                                     "out of memory", ENOMEM);
                return;
        }
        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];
                ActionsBatchDir *d = &b->dirs[it->dir];
                _cleanup_free_ char *name = NULL;

                if (it->done || it->v->verb != VERB_DELETE)
                        continue;
                name = actions_tname(it->s);
                if (!name) {
                        actions_batch_report(c, it, JOURNAL_FAILED, "out of memory", ENOMEM);
                        continue;
                }
                r = fs_check_identity(actions_batch_dir_fd(b, it), name, actions_fid(it->s));
                if (r <= 0) {
                        actions_batch_fail(c, it, r < 0 ? r : -ESTALE, "changed since scan");
                        continue;
                }
                /* a copy in the other place since the scan (a TUI recreating chats/<id>.jsonl by
                 * path, a restore) is a conflict, and the id's sidecars and file-history are in
                 * use again */
                if (session_is_cold(it->s)) {
                        /* compressed: a copy in chats/ or chats/archive/ is one */
                        _cleanup_free_ char *plain = strprintf("%s.jsonl", it->s->id);
                        r = plain ? actions_copy_exists(d->chats_fd, plain, false) : -ENOMEM;
                        if (r == 0)
                                r = actions_copy_exists(d->chats_fd, plain, true);
                } else
                        r = actions_copy_exists(d->chats_fd, name, it->s->state != SESSION_ARCHIVED);
                if (r != 0) {
                        actions_batch_fail(c, it, r < 0 ? r : -EEXIST,
                                           "a copy in the other place appeared since the scan "
                                           "(conflict)");
                        continue;
                }
                actions_batch_claims(c, d);
                r = actions_mark_delete(c, t, it->s, d->chats_fd, d->archive_fd, &it->mk);
                c->claim_names = NULL;
                if (r < 0) {
                        actions_batch_report(c, it, JOURNAL_FAILED,
                                             "cannot write the pending-delete marker", -r);
                        continue;
                }
                m[n] = &it->mk;
                idx[n++] = i;
        }
        if (n == 0)
                return;
        /* the proof for the recovery pass, should the run die before the deletes complete */
        r = recover_markers_write(t->global_fd, t->global_dev, m, n, actions_step, c,
                                  &b->marker);
        for (size_t j = 0; j < n; j++) {
                ActionsBatchItem *it = &b->items[idx[j]];

                if (r < 0)
                        actions_batch_report(c, it, JOURNAL_FAILED,
                                             "cannot write the pending-delete marker", -r);
                else
                        it->marked = true;
        }
}

/* 2b: what Qwen's own delete paths remove from the files it shares (erase.h), for every delete of
 * the batch whose marker is written: when it cannot be done now, nothing of that session goes
 * (it is skipped with the reason; a later run retries the whole delete). */
static void actions_batch_erase(ActionsContext *c, ActionsBatch *b, const ActionsTree *t) {
        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];
                const char *why = NULL;
                int r;

                if (it->done || it->v->verb != VERB_DELETE || !it->marked)
                        continue;
                r = actions_erase_shared(c, t, it->s, b->dirs[it->dir].chats_fd, &why);
                if (r == -EAGAIN && why)
                        actions_batch_report(c, it, JOURNAL_SKIPPED, why, 0);
                else if (r < 0)
                        actions_batch_report(c, it, JOURNAL_FAILED,
                                             why ?: "cannot edit the files Qwen shares", -r);
        }
}

/* chats/archive/ of dir d, created when missing. */
static int actions_batch_archive_dir(ActionsContext *c, ActionsBatchDir *d, const char **ret_why) {
        int r;

        if (d->archive_fd >= 0)
                return 0;
        r = fs_mkdirat(d->chats_fd, "archive", 0700);
        if (r < 0) {
                if (r != -EEXIST) {
                        *ret_why = "cannot create chats/archive/";
                        return r;
                }
        } else {
                actions_step(c, "archive/");
                d->sync_chats = true;
        }
        r = fs_open_dir(d->chats_fd, "archive");
        if (r < 0) {
                *ret_why = "cannot open chats/archive/";
                return r;
        }
        d->archive_fd = r;
        return 0;
}

static int actions_strcmpp(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* List d's chats/ for the ids that have an archive sidecar there (archive.h), once, after the
 * batch's liveness check: a session without one is moved by archive_move_bare_nosync(), without
 * a lookup per sidecar. A sidecar written between the listing and the move (only a live session
 * writes one, and the batch just checked that none is live) stays in chats/ beside the archived
 * transcript, as one written just after the move would: Qwen's delete and qgc's remove
 * sidecars in both places. */
static void actions_batch_sidecars(ActionsBatchDir *d) {
        static const char *const exts[] = { ".worktree.json", ".pr.json", ".ledger.jsonl" };
        _cleanup_free_ FsDir *dir = NULL;
        _cleanup_close_ int fd = -EBADF;
        const char *name;
        unsigned char type;
        int k;

        if (d->sidecars_listed != 0)
                return;
        dir = malloc(sizeof(FsDir));
        fd = dir ? fs_open_dir(d->chats_fd, ".") : -ENOMEM;
        if (fd < 0) {
                d->sidecars_listed = fd;
                return;
        }
        fs_dir_init(dir, fd);
        while ((k = fs_dir_next(dir, &name, &type)) > 0) {
                size_t len = strlen(name);

                for (size_t i = 0; i < ELEMENTSOF(exts); i++) {
                        size_t el = strlen(exts[i]);
                        char **n;

                        if (len <= el || !streq(name + len - el, exts[i]))
                                continue;
                        n = realloc(d->sidecar_ids, (d->n_sidecar_ids + 1) * sizeof(char *));
                        if (n)
                                d->sidecar_ids = n;
                        if (!n || !(d->sidecar_ids[d->n_sidecar_ids] = strndup(name, len - el))) {
                                d->sidecars_listed = -ENOMEM;
                                return;
                        }
                        d->n_sidecar_ids++;
                        break;
                }
        }
        if (k < 0) {
                d->sidecars_listed = k;
                return;
        }
        if (d->n_sidecar_ids > 1)
                qsort(d->sidecar_ids, d->n_sidecar_ids, sizeof(char *), actions_strcmpp);
        d->sidecars_listed = 1;
}

/* Did the listing of d's chats/ see no sidecar of id? (false when it could not be listed) */
static bool actions_batch_no_sidecars(const ActionsBatchDir *d, const char *id) {
        if (d->sidecars_listed != 1)
                return false;
        return !d->sidecar_ids || !bsearch(&id, d->sidecar_ids, d->n_sidecar_ids, sizeof(char *),
                                           actions_strcmpp);
}

/* 3a: the compressions of the batch (coldstep.h, cold.h's COLD_BATCH): every file compressed
 * and verified under its temporary name, one syncfs(), each renamed into place, one fsync per
 * cold directory, then the originals go (chats/archive/ is fsynced with the other directories
 * in 4). */
static void actions_batch_compress(ActionsContext *c, ActionsBatch *b) {
        _cleanup_(cold_ctx_freep) ColdCtx *ctx = NULL;
        int level = 0, sync_fd = -EBADF, r;

        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];
                ActionsBatchDir *d = &b->dirs[it->dir];
                const char *why = "cannot create chats/archive/" COLD_DIR "/";
                int want = it->v->compress_level > 0 ? it->v->compress_level : COLD_LEVEL_DEFAULT;
                bool created = false;

                if (it->done || it->v->verb != VERB_COMPRESS)
                        continue;
                r = 0;
                if (d->cold_fd < 0) {
                        r = d->archive_fd < 0 ? -ESTALE
                                              : cold_step_open_dir(d->archive_fd, &created,
                                                                   actions_step, c);
                        if (r >= 0)
                                d->cold_fd = r;
                        /* the new directory is durable before anything is moved into it */
                        if (r >= 0 && created)
                                r = fs_fsync(d->archive_fd);
                }
                if (r >= 0 && (!ctx || level != want)) {
                        ctx = cold_ctx_free(ctx);
                        level = want;
                        why = "cannot set up zstd";
                        r = cold_ctx_new(level, COLD_DICT_CURRENT, &ctx);
                }
                if (r >= 0)
                        r = (it->cold = calloc(1, sizeof(ColdStep))) ? 0 : -ENOMEM;
                if (r >= 0)
                        r = cold_step_begin(ctx, d->archive_fd, d->cold_fd, it->s->id,
                                            &it->s->archived, actions_step, c, it->cold, &why);
                if (r < 0) {
                        actions_batch_fail(c, it, r, why);
                        continue;
                }
                d->sync_cold = true;
                sync_fd = d->cold_fd;
        }
        if (sync_fd < 0)
                return;
        /* the temporary files' data, for the whole batch (one tree: one filesystem) */
        r = syncfs(sync_fd) < 0 ? -errno : 0;
        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];
                const char *why = NULL;
                int k;

                if (it->done || it->v->verb != VERB_COMPRESS)
                        continue;
                k = r < 0 ? r
                          : cold_step_commit(b->dirs[it->dir].cold_fd, it->cold, actions_step, c,
                                             &why);
                if (k < 0)
                        actions_batch_fail(c, it, k, why ?: "cannot sync the compressed files");
        }
        for (size_t j = 0; j < b->n_dirs; j++) {
                ActionsBatchDir *d = &b->dirs[j];
                int k = d->sync_cold ? fs_fsync(d->cold_fd) : 0;

                d->sync_cold = false;
                for (size_t i = 0; k < 0 && i < b->n; i++)
                        if (b->items[i].dir == j && b->items[i].v->verb == VERB_COMPRESS)
                                actions_batch_report(c, &b->items[i], JOURNAL_FAILED,
                                                     "compressed, but fsync of the cold tier "
                                                     "failed; the originals stay",
                                                     -k);
        }
        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];
                ActionsBatchDir *d = &b->dirs[it->dir];
                const char *why = NULL;
                int k;

                if (it->done || it->v->verb != VERB_COMPRESS)
                        continue;
                k = cold_step_end(d->archive_fd, d->cold_fd, it->cold, actions_step, c, &why);
                d->sync_archive = true;
                if (k < 0)
                        actions_batch_fail(c, it, k, why);
        }
}

/* Journal a compression with both sizes, and count it. */
static void actions_batch_compressed(ActionsContext *c, ActionsBatchItem *it) {
        const Session *s = it->s;
        const Tree *tr = &c->inv->trees[s->tree];
        uint64_t in = it->cold ? it->cold->bytes_in : 0, out = it->cold ? it->cold->bytes_out : 0;
        _cleanup_free_ char *path = strprintf("%s/projects/%s/chats/archive/" COLD_DIR
                                              "/%s.jsonl" COLD_SUFFIX,
                                              tr->runtime_dir, s->project_dir, s->id);
        _cleanup_free_ char *msg = strprintf("compressed session %s in %s (%s): %" PRIu64
                                             " bytes into %" PRIu64,
                                             s->id, actions_project(s),
                                             it->v->reason ? it->v->reason : "", in, out);
        _cleanup_free_ char *extra = strprintf("QGC_ORIGINAL_BYTES=%" PRIu64
                                               "\nQGC_COMPRESSED_BYTES=%" PRIu64 "\n",
                                               in, out);
        JournalEntry e = {
                .event = JOURNAL_COMPRESSED,
                .message = msg,
                .session = s->id,
                .project = actions_project(s),
                .path = path,
                .rule = it->v->rule,
                .reason = it->v->reason,
                .bytes = in,
                .has_bytes = true,
                .user = tr->user,
                .extra = extra,
        };

        it->done = true;
        if (journal_log(&e) < 0)
                log_warning("cannot write the action log entry for session %s", s->id);
        c->stats->n_compressed++;
        c->stats->bytes_compressed_in += in;
        c->stats->bytes_compressed_out += out;
}

/* 3: every move of the batch, one fsync per directory they touched; then every transcript
 * unlink (identity re-checked before each), and 4: one fsync per directory they touched. */
static void actions_batch_move_sync(ActionsContext *c, ActionsBatch *b, bool moves);

static void actions_batch_move(ActionsContext *c, ActionsBatch *b) {
        /* first the compressions, each complete with its own fsyncs (3a); then two passes: the
         * moves, their directories' fsyncs, then the unlinks, so that no name a move added is
         * lost in a crash that keeps a later unlink (tests/faults' fsync audit) */
        actions_batch_compress(c, b);
        for (size_t k = 0; k < 2 * b->n; k++) {
                ActionsBatchItem *it = &b->items[k % b->n];
                ActionsBatchDir *d = &b->dirs[it->dir];
                _cleanup_free_ char *name = NULL;
                const char *why = NULL;
                int dir_fd, r;

                if (k == b->n)
                        actions_batch_move_sync(c, b, /* moves= */ true);
                if (it->done || it->v->verb == VERB_COMPRESS ||
                    (it->v->verb == VERB_ARCHIVE) != (k < b->n))
                        continue;
                name = actions_tname(it->s);
                if (!name) {
                        actions_batch_report(c, it, JOURNAL_FAILED, "out of memory", ENOMEM);
                        continue;
                }
                if (it->v->verb == VERB_ARCHIVE) {
                        r = actions_batch_archive_dir(c, d, &why);
                        if (r >= 0)
                                actions_batch_sidecars(d);
                        if (r >= 0 && actions_batch_no_sidecars(d, it->s->id))
                                r = archive_move_bare_nosync(d->chats_fd, d->archive_fd,
                                                             it->s->id, &it->s->active,
                                                             actions_step, c, &why);
                        else if (r >= 0)
                                r = archive_move_nosync(d->chats_fd, d->archive_fd, it->s->id,
                                                        &it->s->active, /* to_archive= */ true,
                                                        actions_step, c, &why);
                        if (r < 0) {
                                actions_batch_fail(c, it, r, why);
                                continue;
                        }
                        d->sync_chats = d->sync_archive = true;
                        continue;
                }
                dir_fd = actions_batch_dir_fd(b, it);
                r = fs_check_identity(dir_fd, name, actions_fid(it->s));
                if (r <= 0) {
                        actions_batch_fail(c, it, r < 0 ? r : -ESTALE, "changed since scan");
                        continue;
                }
                r = fs_unlink(dir_fd, name, 0);
                if (r < 0) {
                        actions_batch_report(c, it, JOURNAL_FAILED,
                                             r == -ENOENT ? "vanished"
                                                          : "cannot remove the transcript",
                                             -r);
                        continue;
                }
                actions_step(c, name);
                it->removed = true;
                if (session_is_cold(it->s))
                        d->sync_cold = true;
                else if (it->s->state == SESSION_ARCHIVED)
                        d->sync_archive = true;
                else
                        d->sync_chats = true;
        }
        actions_batch_move_sync(c, b, /* moves= */ false);
}

/* One fsync per directory the moves (or the unlinks) touched. */
static void actions_batch_move_sync(ActionsContext *c, ActionsBatch *b, bool moves) {
        /* the touched directories, fsynced at once (fs_fsync_many()) */
        int fds[3 * ACTIONS_BATCH_DIRS], errs[3 * ACTIONS_BATCH_DIRS];

        for (size_t j = 0; j < b->n_dirs; j++) {
                fds[3 * j] = b->dirs[j].sync_chats ? b->dirs[j].chats_fd : -EBADF;
                fds[3 * j + 1] = b->dirs[j].sync_archive ? b->dirs[j].archive_fd : -EBADF;
                fds[3 * j + 2] = b->dirs[j].sync_cold ? b->dirs[j].cold_fd : -EBADF;
        }
        fs_fsync_many(fds, 3 * b->n_dirs, errs);
        for (size_t j = 0; j < b->n_dirs; j++) {
                int r = errs[3 * j] < 0 ? errs[3 * j] : errs[3 * j + 1] < 0 ? errs[3 * j + 1]
                                                                            : errs[3 * j + 2];

                b->dirs[j].sync_chats = b->dirs[j].sync_archive = b->dirs[j].sync_cold = false;
                if (r >= 0)
                        continue;
                /* a compression's chats/archive/ is synced with the moves */
                for (size_t i = 0; i < b->n; i++)
                        if (b->items[i].dir == j && !b->items[i].done &&
                            (b->items[i].v->verb == VERB_ARCHIVE ||
                             b->items[i].v->verb == VERB_COMPRESS) == moves)
                                actions_batch_report(
                                        c, &b->items[i], JOURNAL_FAILED,
                                        b->items[i].v->verb == VERB_ARCHIVE
                                                ? "moved, but fsync of the directories failed"
                                        : b->items[i].v->verb == VERB_COMPRESS
                                                ? "compressed, but fsync of chats/archive/ failed"
                                                : "removed, but fsync of chats/ failed",
                                        -r);
        }
}

/* 5: what else of each deleted session is its alone; then the batch's marker goes when every
 * delete it covers is complete or never began (else the next run's recovery pass finishes
 * them), and every outcome is reported. */
static void actions_batch_finish(ActionsContext *c, ActionsBatch *b, const ActionsTree *t) {
        bool keep_marker = false;
        int r;

        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];
                ActionsBatchDir *d = &b->dirs[it->dir];
                _cleanup_free_ char *name = strprintf("%s.jsonl", it->s->id);

                if (it->v->verb != VERB_DELETE || !it->marked || !it->removed)
                        continue; /* never began: nothing for the marker to finish */
                if (it->done) {
                        keep_marker = true; /* the next run's recovery pass retries */
                        continue;
                }
                /* the same race just after the unlink: what is left belongs to the new copy */
                r = name ? actions_copy_exists(d->chats_fd, name, false) : -ENOMEM;
                if (r == 0)
                        r = actions_copy_exists(d->chats_fd, name, true);
                if (r != 0) {
                        log_warning("session %s: a transcript appeared as it was deleted; its "
                                    "sidecars and file-history are kept",
                                    it->s->id);
                        if (r < 0) {
                                keep_marker = true;
                                actions_batch_report(c, it, JOURNAL_FAILED,
                                                     "transcript removed, but whether a copy "
                                                     "appeared is unknown",
                                                     -r);
                        }
                        continue;
                }
                actions_batch_claims(c, d);
                r = actions_delete_rest(c, t, it->s, d->chats_fd, d->archive_fd);
                c->claim_names = NULL;
                if (r < 0) {
                        keep_marker = true; /* the next run's recovery pass retries */
                        actions_batch_report(
                                c, it, JOURNAL_FAILED,
                                r == -EBUSY ? "transcript removed; kept: a mount point inside"
                                            : "transcript removed, but not everything else",
                                -r);
                }
        }
        if (b->marker && !keep_marker) {
                r = recover_marker_remove(t->global_fd, t->global_dev, b->marker, actions_step, c);
                if (r < 0)
                        log_warning_errno(r, "cannot remove the pending-delete marker '%s'",
                                          b->marker);
        }
        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];

                if (it->v->verb == VERB_COMPRESS && !it->done) {
                        actions_batch_compressed(c, it);
                        continue;
                }
                actions_batch_report(c, it,
                                     it->v->verb == VERB_ARCHIVE ? JOURNAL_ARCHIVED
                                                                 : JOURNAL_DELETED,
                                     NULL, 0);
        }
}

/* Run the batch's steps in order, then empty it. */
static void actions_batch_commit(ActionsContext *c) {
        ActionsBatch *b = c->batch;

        uint64_t t0, t1, t2, t3;

        if (!b || b->n == 0)
                return;
        t0 = actions_now_ns();
        actions_batch_live(c, b);
        actions_batch_salvage(c, b, &c->trees[b->tree]);
        actions_batch_mark(c, b, &c->trees[b->tree]);
        actions_batch_erase(c, b, &c->trees[b->tree]);
        t1 = actions_now_ns();
        actions_batch_move(c, b);
        t2 = actions_now_ns();
        actions_batch_finish(c, b, &c->trees[b->tree]);
        t3 = actions_now_ns();
        /* the next batch prepares for at least 4 times what this one's flushes took, so that
         * they stay a small part of the run however slow the disk is */
        b->window_ns = MIN(MAX(4 * (t1 - t0), ACTIONS_BATCH_MSEC * 1000000ULL),
                           ACTIONS_BATCH_MSEC_MAX * 1000000ULL);
        log_debug("batch of %zu sessions: prepared in %.1f ms, usage+markers %.1f ms, moves %.1f "
                  "ms, rest %.1f ms",
                  b->n, (double)(t0 - b->started_ns) / 1e6, (double)(t1 - t0) / 1e6,
                  (double)(t2 - t1) / 1e6, (double)(t3 - t2) / 1e6);

        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];
                free(it->line);
                free(it->sid);
                recover_marker_done(&it->mk);
                if (it->cold)
                        cold_step_done(it->cold);
                free(it->cold);
        }
        for (size_t j = 0; j < b->n_dirs; j++) {
                safe_close(b->dirs[j].chats_fd);
                safe_close(b->dirs[j].archive_fd);
                safe_close(b->dirs[j].cold_fd);
                for (size_t i = 0; i < b->dirs[j].n_claims; i++)
                        free(b->dirs[j].claims[i]);
                free(b->dirs[j].claims);
                for (size_t i = 0; i < b->dirs[j].n_sidecar_ids; i++)
                        free(b->dirs[j].sidecar_ids[i]);
                free(b->dirs[j].sidecar_ids);
        }
        free(b->marker);
        b->marker = NULL;
        b->n = b->n_dirs = 0;
}

/* The batch's directory entry for s's chats/, opened on first use. Index, or -errno (*ret_why). */
static int actions_batch_dir(ActionsContext *c, const ActionsTree *t, const Session *s,
                             const char **ret_why) {
        ActionsBatch *b = c->batch;
        const Tree *tr = &c->inv->trees[s->tree];
        _cleanup_free_ char *rel = NULL;
        _cleanup_close_ int chats_fd = -EBADF;
        int archive_fd;

        for (size_t j = b->n_dirs; j > 0; j--)
                if (streq(b->dirs[j - 1].project_dir, s->project_dir))
                        return (int)(j - 1);
        if (b->n_dirs == ACTIONS_BATCH_DIRS)
                actions_batch_commit(c);
        rel = strprintf("projects/%s/chats", s->project_dir);
        if (!rel) {
                *ret_why = "out of memory";
                return -ENOMEM;
        }
        chats_fd = fs_open_path(t->runtime_fd, rel, tr->dev);
        if (chats_fd < 0) {
                *ret_why = "changed since scan (chats/ cannot be opened)";
                return -ESTALE;
        }
        archive_fd = fs_open_dir(chats_fd, "archive");
        if (archive_fd < 0 && archive_fd != -ENOENT) {
                *ret_why = "cannot open chats/archive/";
                return archive_fd;
        }
        b->dirs[b->n_dirs] = (ActionsBatchDir){
                .project_dir = s->project_dir,
                .chats_fd = TAKE_FD(chats_fd),
                .archive_fd = archive_fd,
                .cold_fd = -EBADF,
        };
        return (int)b->n_dirs++;
}

/* Why a session the plan names must still not be touched, or NULL. */
static const char *actions_refusal(const Session *s, const Verdict *v) {
        if (s->state == SESSION_CONFLICT)
                return "active and archived copies both exist (conflict)";
        if (s->owner == OWNER_FOREIGN || s->owner == OWNER_UNVERIFIED)
                return "ownership not proven";
        if (v->verb == VERB_ARCHIVE && s->state != SESSION_ACTIVE)
                return "not an active session";
        if (v->verb == VERB_COMPRESS && (s->state != SESSION_ARCHIVED || session_is_cold(s)))
                return "not an uncompressed archived session";
        return NULL;
}

/* Check one ARCHIVE or DELETE item for a session and build its usage line into the batch; the
 * batch does the rest (actions_batch_commit()). */
static int actions_session(ActionsContext *c, const Session *s, const Verdict *v) {
        const ActionsTree *t = &c->trees[s->tree];
        ActionsBatch *b = c->batch;
        _cleanup_free_ char *name = actions_tname(s);
        _cleanup_free_ char *line = NULL, *sid = NULL;
        const char *why = actions_refusal(s, v);
        const FileId *fid = actions_fid(s);
        int dir_fd, k, r;

        if (why)
                return actions_report_session(c, s, v, JOURNAL_SKIPPED, why, 0);
        if (!name)
                return actions_report_session(c, s, v, JOURNAL_FAILED, "out of memory", ENOMEM);
        if (t->error < 0)
                return actions_report_session(c, s, v, JOURNAL_FAILED, "cannot open the tree",
                                              -t->error);
        if (b->n > 0 && b->tree != s->tree)
                actions_batch_commit(c);
        b->tree = s->tree;

        k = actions_batch_dir(c, t, s, &why);
        if (k < 0)
                return actions_report_session(c, s, v,
                                              k == -ESTALE ? JOURNAL_SKIPPED : JOURNAL_FAILED, why,
                                              k == -ESTALE ? 0 : -k);
        dir_fd = s->state == SESSION_ARCHIVED ? b->dirs[k].archive_fd : b->dirs[k].chats_fd;
        if (session_is_cold(s) && dir_fd >= 0) {
                if (b->dirs[k].cold_fd < 0)
                        b->dirs[k].cold_fd = fs_open_dir(dir_fd, COLD_DIR);
                dir_fd = b->dirs[k].cold_fd;
        }
        if (dir_fd < 0)
                return actions_report_session(c, s, v, JOURNAL_SKIPPED, "changed since scan", 0);

        r = fs_check_identity(dir_fd, name, fid);
        if (r <= 0)
                return actions_report_session(c, s, v, r < 0 ? JOURNAL_FAILED : JOURNAL_SKIPPED,
                                              "changed since scan", r < 0 ? -r : 0);
        /* liveness: re-checked for the whole batch just before its first step */
        ssize_t dep = -1;
        r = actions_salvage(c, t, s, dir_fd, name, fid, &line, &sid, &dep);
        if (r == -ESTALE)
                return actions_report_session(c, s, v, JOURNAL_SKIPPED, "changed since scan", 0);
        if (r < 0)
                return actions_report_session(c, s, v, JOURNAL_FAILED,
                                              "cannot salvage the usage record; session kept", -r);

        if (b->n == 0)
                b->started_ns = actions_now_ns();
        b->items[b->n++] = (ActionsBatchItem){
                .s = s, .v = v, .dir = (size_t)k, .line = TAKE_PTR(line), .sid = TAKE_PTR(sid),
                .dep = dep,
        };
        if (b->n >= b->max ||
            actions_now_ns() - b->started_ns >= MAX(b->window_ns, ACTIONS_BATCH_MSEC * 1000000ULL))
                actions_batch_commit(c);
        return 0;
}

/* Journal an orphan outcome and count it. */
static int actions_report_orphan(ActionsContext *c, const Orphan *o, const Verdict *v,
                                  JournalEvent ev, const char *path, const char *reason, int error) {
        _cleanup_free_ char *msg = NULL;

        if (ev == JOURNAL_ORPHAN_RECLAIMED)
                msg = strprintf("reclaimed orphan %s '%s'", orphan_kind_to_string(o->kind), path);
        else
                msg = strprintf("%s orphan %s '%s': %s%s%s",
                                ev == JOURNAL_SKIPPED ? "skipped" : "failed to reclaim",
                                orphan_kind_to_string(o->kind), path, reason ? reason : "",
                                error ? ": " : "", error ? errno_to_string(error) : "");
        JournalEntry e = {
                .event = ev,
                .message = msg,
                .session = o->kind == ORPHAN_FILE_HISTORY || o->kind == ORPHAN_SUBAGENTS ? o->name
                                                                                        : NULL,
                /* a stale project entry is a project: its directory's name */
                .project = o->kind == ORPHAN_STALE_PROJECT ? o->name : o->project_dir,
                .path = path,
                .rule = v ? v->rule : NULL,
                .reason = ev == JOURNAL_ORPHAN_RECLAIMED ? (v ? v->reason : NULL) : reason,
                .bytes = o->bytes,
                .has_bytes = ev == JOURNAL_ORPHAN_RECLAIMED,
                .user = c->inv->trees[o->tree].user,
                .error = error,
        };
        (void)journal_log(&e);
        if (ev == JOURNAL_ORPHAN_RECLAIMED) {
                c->stats->n_orphans++;
                c->stats->bytes_orphans += o->bytes;
        } else if (ev == JOURNAL_SKIPPED)
                c->stats->n_skipped++;
        else {
                c->stats->n_failed++;
                c->failed = true;
        }
        return 0;
}

/* Write or remove a stale project entry's marker (hygiene.h) and journal it. */
static int actions_stale_mark(ActionsContext *c, const Orphan *o, const Verdict *v,
                              const char *path) {
        const ActionsTree *t = &c->trees[o->tree];
        _cleanup_free_ char *msg = NULL;
        const char *why = NULL;
        int r = t->error < 0 ? t->error
                             : hygiene_stale_act(c->inv, o, v->mark, /* remove= */ false,
                                                 t->runtime_fd, c->inv->trees[o->tree].dev,
                                                 actions_step, c, &why);

        if (r <= 0)
                return actions_report_orphan(c, o, v, r == 0 ? JOURNAL_SKIPPED : JOURNAL_FAILED,
                                             path, why ?: "cannot open the tree", -r);
        msg = strprintf(v->mark > 0 ? "marked stale project entry '%s'"
                                    : "removed the stale mark of project entry '%s'", path);
        JournalEntry e = {
                .event = JOURNAL_STALE_MARK,
                .message = msg,
                .project = o->name,
                .path = path,
                .rule = v->rule,
                /* what happened, not the plan's "would" */
                .reason = v->mark > 0 ? "every recorded cwd is a vanished temporary directory"
                                      : o->stale_why ?: "a recorded cwd exists again",
                .user = c->inv->trees[o->tree].user,
        };
        (void)journal_log(&e);
        return 0;
}

/* Reclaim one orphan (orphans.c), journal and count the outcome. */
static int actions_orphan(ActionsContext *c, const Orphan *o, const Verdict *v) {
        const Tree *tr = &c->inv->trees[o->tree];
        const ActionsTree *t = &c->trees[o->tree];
        _cleanup_free_ char *rel = NULL, *path = NULL;
        const char *why = NULL;
        int root_fd, r;
        dev_t dev = tr->dev;

        switch (o->kind) {
        case ORPHAN_FILE_HISTORY:
                rel = strdup("file-history");
                path = strprintf("%s/file-history/%s", tr->global_dir, o->name);
                root_fd = t->global_fd;
                dev = t->global_dev;
                break;
        case ORPHAN_SUBAGENTS:
                rel = strprintf("projects/%s/subagents", o->project_dir);
                path = strprintf("%s/%s/%s", tr->runtime_dir, rel ? rel : "", o->name);
                root_fd = t->runtime_fd;
                break;
        case ORPHAN_EMPTY_PROJECT:
                rel = strdup("projects");
                path = strprintf("%s/projects/%s", tr->runtime_dir, o->name);
                root_fd = t->runtime_fd;
                break;
        default:
                if (!hygiene_kind(o->kind))
                        return 0;
                /* hygiene (hygiene.h): project_dir is the directory below R, or G for plans */
                rel = strdup(o->project_dir ?: "");
                root_fd = o->kind == ORPHAN_PLAN ? t->global_fd : t->runtime_fd;
                dev = o->kind == ORPHAN_PLAN ? t->global_dev : dev;
                path = strprintf("%s/%s/%s", o->kind == ORPHAN_PLAN ? tr->global_dir : tr->runtime_dir,
                                 rel ? rel : "", o->name);
                break;
        }
        if (!rel || !path)
                return actions_report_orphan(c, o, v, JOURNAL_FAILED, o->name, "out of memory",
                                             ENOMEM);
        if (t->error < 0)
                return actions_report_orphan(c, o, v, JOURNAL_FAILED, path, "cannot open the tree",
                                             -t->error);
        if (o->kind == ORPHAN_STALE_PROJECT && v->verb != VERB_DELETE)
                return actions_stale_mark(c, o, v, path);
        if (o->kind == ORPHAN_STALE_PROJECT)
                r = hygiene_stale_act(c->inv, o, 0, /* remove= */ true, root_fd, dev, actions_step,
                                      c, &why);
        else if (hygiene_kind(o->kind))
                r = hygiene_reclaim(o, root_fd, dev, c->runtime_fds, c->inv->n_trees, actions_step,
                                    c, &why);
        else
                r = orphans_reclaim(o, root_fd, rel, dev, c->runtime_fds, c->inv->n_trees,
                                    actions_step, c, &why);
        if (r == 0)
                return actions_report_orphan(c, o, v, JOURNAL_SKIPPED, path, why, 0);
        if (r < 0)
                return actions_report_orphan(c, o, v, JOURNAL_FAILED, path, why, -r);
        return actions_report_orphan(c, o, v, JOURNAL_ORPHAN_RECLAIMED, path, NULL, 0);
}

/* Journal every session the deletion limits held back as skipped, with the limit as its reason
 * (the executor never sees them: their verdict is SKIP, or ARCHIVE instead of DELETE). */
static void actions_report_held_back(ActionsContext *c, const Plan *p) {
        for (size_t i = 0; i < p->n_items; i++) {
                const PlanItem *it = &p->items[i];

                if (it->is_orphan || !it->verdict->held_by || it->verdict->verb != VERB_SKIP ||
                    it->index >= p->inv->n_sessions)
                        continue;
                (void)actions_report_session(c, &p->inv->sessions[it->index], it->verdict,
                                             JOURNAL_SKIPPED, it->verdict->reason, 0);
        }
}

/* The run-start entry, or the summary: counts, bytes freed (deletions and orphans) and moved to
 * the archive (which frees nothing), and the warning when deletion limits held work back. */
static void actions_journal_run(const ActionsContext *c, const Plan *p, bool start,
                                size_t n_planned) {
        const ActionStats *st = c->stats;
        _cleanup_free_ char *msg = NULL, *extra = NULL, *warning = NULL;
        char freed_s[FORMAT_BYTES_MAX], archived_s[FORMAT_BYTES_MAX];
        uint64_t freed = st->bytes_deleted + st->bytes_orphans;
        PlanHeldBack h = {};

        if (start)
                msg = strprintf("qgc run started: %zu actions planned", n_planned);
        else {
                plan_held_back(p, &h);
                warning = plan_held_back_warning(&h);
                msg = strprintf("qgc run finished: archived %u (%s moved to the archive), deleted "
                                "%u, orphans reclaimed %u, skipped %u, failed %u; freed %s%s%s",
                                st->n_archived, format_bytes(archived_s, sizeof archived_s,
                                                             st->bytes_archived),
                                st->n_deleted, st->n_orphans, st->n_skipped, st->n_failed,
                                format_bytes(freed_s, sizeof freed_s, freed),
                                warning ? "; warning: " : "", warning ?: "");
                extra = strprintf("QGC_ARCHIVED=%u\nQGC_DELETED=%u\nQGC_ORPHANS=%u\n"
                                  "QGC_SKIPPED=%u\nQGC_FAILED=%u\nQGC_SALVAGED=%u\n"
                                  "QGC_FREED_BYTES=%" PRIu64 "\nQGC_ARCHIVED_BYTES=%" PRIu64
                                  "\nQGC_HELD_BACK=%zu\nQGC_HELD_BACK_BYTES=%" PRIu64 "\n%s%s%s",
                                  st->n_archived, st->n_deleted, st->n_orphans, st->n_skipped,
                                  st->n_failed, st->n_salvaged, freed, st->bytes_archived, h.n,
                                  h.bytes, warning ? "QGC_WARNING=" : "", warning ?: "",
                                  warning ? "\n" : "");
                if (extra && st->n_compressed > 0) {
                        char *x = strprintf("%sQGC_COMPRESSED=%u\nQGC_ORIGINAL_BYTES=%" PRIu64
                                            "\nQGC_COMPRESSED_BYTES=%" PRIu64 "\n",
                                            extra, st->n_compressed, st->bytes_compressed_in,
                                            st->bytes_compressed_out);
                        free(extra);
                        extra = x;
                }
        }
        JournalEntry e = {
                .event = start ? JOURNAL_RUN_START : JOURNAL_RUN_SUMMARY,
                .message = msg,
                /* unchanged meaning: archived + deleted + reclaimed (see QGC_FREED_BYTES) */
                .bytes = st->bytes_archived + st->bytes_deleted + st->bytes_orphans,
                .has_bytes = !start,
                .extra = extra,
                .priority = !start && st->n_failed > 0 ? 4 /* warning */ : 0,
        };
        (void)journal_log(&e);
}

/* Restore one archived session of one tree. 0 done, -errno (logged and journalled). */
static int actions_restore_one(ActionsContext *c, const Session *s) {
        const Tree *tr = &c->inv->trees[s->tree];
        const ActionsTree *t = &c->trees[s->tree];
        _cleanup_free_ char *rel = strprintf("projects/%s/chats", s->project_dir);
        _cleanup_close_ int chats_fd = -EBADF, archive_fd = -EBADF;
        const char *why = NULL;
        Verdict v = { .verb = VERB_KEEP, .rule = "restore", .reason = (char *)"qgc restore" };
        int r;

        if (!rel)
                return -ENOMEM;
        if (s->state == SESSION_CONFLICT)
                why = "an active copy exists (conflict)";
        else if (s->state != SESSION_ARCHIVED)
                why = "not archived";
        else if (s->owner == OWNER_FOREIGN || s->owner == OWNER_UNVERIFIED)
                why = "ownership not proven";
        if (why) {
                log_error("restore: cannot restore session %s in '%s/projects/%s/chats': %s",
                          s->id, tr->runtime_dir, s->project_dir, why);
                (void)actions_report_session(c, s, &v, JOURNAL_FAILED, why, 0);
                return -EEXIST;
        }
        r = t->error;
        if (r >= 0) {
                chats_fd = fs_open_path(t->runtime_fd, rel, tr->dev);
                r = chats_fd;
        }
        if (r >= 0) {
                archive_fd = fs_open_dir(chats_fd, "archive");
                r = archive_fd;
        }
        if (r >= 0)
                r = archive_move(archive_fd, chats_fd, s->id, &s->archived, /* to_archive= */ false,
                                 actions_step, c, &why);
        if (r < 0) {
                if (!why)
                        why = "cannot open the session's directories";
                log_error("restore: cannot restore session %s from '%s/%s/archive': %s: %s",
                          s->id, tr->runtime_dir, rel, why, errno_to_string(-r));
                (void)actions_report_session(c, s, &v, JOURNAL_FAILED, why, -r);
                return r;
        }
        Session moved = *s;
        moved.state = SESSION_ACTIVE;
        (void)actions_report_session(c, &moved, &v, JOURNAL_RESTORED, NULL, 0);
        log_info("restored session %s into %s/%s", s->id, tr->runtime_dir, rel);
        return 0;
}

/* Restore a session compressed in the cold tier (restore.c's step without an inventory session):
 * decompress its sidecars, then its transcript, into chats/archive/ (cold_decompress(): checked,
 * never replacing; a rerun after a kill completes it). 0, -errno (logged and journalled). */
static int actions_restore_cold(ActionsContext *c, const PlanStep *st) {
        static const char *const exts[] = { "worktree.json", "pr.json", "ledger.jsonl", "jsonl" };
        const Tree *tr = &c->inv->trees[st->tree];
        const ActionsTree *t = &c->trees[st->tree];
        size_t l = strlen(st->dir), lc = strlen("/" COLD_DIR);
        _cleanup_free_ char *arel = l > lc ? strndup(st->dir, l - lc) : NULL;
        _cleanup_free_ char *path = NULL, *msg = NULL, *extra = NULL;
        _cleanup_close_ int cfd = -EBADF, afd = -EBADF;
        const char *why = st->why;
        uint64_t in = 0, out = 0;
        int r = why ? -EEXIST : t->error;

        if (r >= 0 && !arel)
                r = -ENOMEM;
        if (r >= 0) {
                cfd = fs_open_path(t->runtime_fd, st->dir, tr->dev);
                afd = cfd < 0 ? cfd : fs_open_path(t->runtime_fd, arel, tr->dev);
                r = afd;
                if (r < 0)
                        why = "cannot open the session's directories";
        }
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(exts); i++) {
                _cleanup_free_ char *n = strprintf("%s.%s", st->name, exts[i]);
                ColdResult res = {};

                r = n ? cold_decompress(cfd, n, afd, actions_step, c, &res) : -ENOMEM;
                if (r == -ENOENT && i + 1 < ELEMENTSOF(exts)) {
                        r = 0; /* no such sidecar */
                        continue;
                }
                if (r < 0)
                        why = r == -EEXIST ? "an uncompressed copy exists (conflict)"
                              : r == -EBADMSG ? "the compressed file does not match its checksum"
                                              : "cannot decompress";
                in += res.bytes_in;
                out += res.bytes_out;
        }
        path = strprintf("%s/%s/%s.jsonl", tr->runtime_dir, arel ? arel : st->dir, st->name);
        if (r < 0) {
                log_error("cannot restore session %s: %s: %s", st->session_id, why,
                          errno_to_string(-r));
                msg = strprintf("failed restore of compressed session %s: %s", st->session_id,
                                why);
        } else {
                log_info("restored compressed session %s into %s/%s", st->session_id,
                         tr->runtime_dir, arel);
                msg = strprintf("restored compressed session %s into chats/archive/ (%" PRIu64
                                " bytes from %" PRIu64 " compressed)",
                                st->session_id, in, out);
                extra = strprintf("QGC_COMPRESSED_BYTES=%" PRIu64 "\n", out);
        }
        JournalEntry e = {
                .event = r < 0 ? JOURNAL_FAILED : JOURNAL_RESTORED,
                .message = msg,
                .session = st->session_id,
                .path = path,
                .rule = "restore",
                .reason = r < 0 ? why : "qgc restore",
                .bytes = in,
                .has_bytes = r >= 0,
                .user = tr->user,
                .error = r < 0 ? -r : 0,
                .extra = extra,
        };
        (void)journal_log(&e);
        return r;
}

/* Journal a recovery step and count it. */
static void actions_report_recover(ActionsContext *c, const PlanStep *st, const char *path,
                                   JournalEvent ev, const char *reason, int error) {
        const char *what = st->kind == PLAN_STEP_RECOVER_DELETE
                                   ? "finished the interrupted delete of session"
                                   : "removed the stale temporary file";
        _cleanup_free_ char *msg = NULL;

        if (ev == JOURNAL_RECOVERED)
                msg = st->kind == PLAN_STEP_RECOVER_DELETE
                              ? strprintf("%s %s (%s)", what, st->session_id,
                                          reason ? reason : "marker removed")
                              : strprintf("%s '%s'", what, path);
        else
                msg = strprintf("recovery failed for '%s': %s%s%s", path, reason ? reason : "",
                                error ? ": " : "", error ? errno_to_string(error) : "");
        JournalEntry e = {
                .event = ev,
                .message = msg,
                .session = st->session_id,
                .path = path,
                .rule = "recover",
                .reason = reason,
                .user = c->inv->trees[st->tree].user,
                .error = error,
        };
        (void)journal_log(&e);
        if (ev == JOURNAL_RECOVERED)
                c->stats->n_recovered++;
        else if (ev == JOURNAL_FAILED) {
                c->stats->n_failed++;
                c->failed = true;
        }
}

/* Execute one recovery step (recover.c) under the tree lock. */
static void actions_recover(ActionsContext *c, const PlanStep *st) {
        const Tree *tr = &c->inv->trees[st->tree];
        const ActionsTree *t = &c->trees[st->tree];
        _cleanup_free_ char *path = strprintf("%s/%s/%s",
                                              st->in_global ? tr->global_dir : tr->runtime_dir,
                                              st->dir, st->name);
        const char *why = NULL;
        int r;

        if (t->error < 0) {
                actions_report_recover(c, st, path, JOURNAL_FAILED, "cannot open the tree",
                                       -t->error);
                return;
        }
        if (st->kind == PLAN_STEP_RECOVER_TEMP) {
                r = recover_remove_temp(st->in_global ? t->global_fd : t->runtime_fd,
                                        st->in_global ? t->global_dev : tr->dev, st, actions_step,
                                        c);
                if (r < 0)
                        actions_report_recover(c, st, path, JOURNAL_FAILED,
                                               "cannot remove the temporary file", -r);
                else if (r > 0)
                        actions_report_recover(c, st, path, JOURNAL_RECOVERED, NULL, 0);
                return;
        }
        r = recover_finish_delete(t->global_fd, t->global_dev, t->runtime_fd, tr->dev, st,
                                  actions_step, c, &why);
        if (r == -ESTALE)
                return; /* the marker was replaced or removed since the scan: not ours to judge */
        if (r < 0) {
                actions_report_recover(c, st, path, JOURNAL_FAILED, why, -r);
                return;
        }
        _cleanup_free_ char *n = why ? NULL : strprintf("%d file(s) of the session removed", r);
        actions_report_recover(c, st, path, JOURNAL_RECOVERED, why ?: n, 0);
}

/* Run every step of kind restore (true) or recovery (false). */
static void actions_steps(ActionsContext *c, const Plan *p, bool restore) {
        for (size_t i = 0; i < p->n_steps; i++) {
                const PlanStep *st = &p->steps[i];

                if ((st->kind == PLAN_STEP_RESTORE) != restore || st->tree >= c->inv->n_trees)
                        continue;
                if (restore) {
                        int r = st->session < c->inv->n_sessions
                                        ? actions_restore_one(c, &c->inv->sessions[st->session])
                                : st->session == SIZE_MAX && st->dir && st->name
                                        ? actions_restore_cold(c, st)
                                        : -EINVAL;
                        if (r < 0) {
                                c->failed = true;
                                if (c->first_error == 0)
                                        c->first_error = r;
                        } else
                                c->stats->n_restored++;
                } else
                        actions_recover(c, st);
        }
}

/* Progress of a long real run on a terminal: "done/total sessions, bytes" on one line of stderr,
 * rewritten at most every 200 ms from half a second on, erased at the end. */
typedef struct ActionsProgress {
        bool on;
        size_t total, done;
        double started, shown;
        bool printed;
} ActionsProgress;

static void actions_progress(ActionsProgress *pr, const ActionStats *st, bool end) {
        char b[FORMAT_BYTES_MAX];
        double now;

        if (!pr->on)
                return;
        if (end) {
                if (pr->printed)
                        fputs("\r\033[K", stderr);
                return;
        }
        now = mono_sec();
        if (now - pr->started < 0.5 || now - pr->shown < 0.2)
                return;
        pr->shown = now;
        pr->printed = true;
        fprintf(stderr, "\rqgc: %zu/%zu sessions, %s\033[K", pr->done, pr->total,
                format_bytes(b, sizeof b, st->bytes_deleted + st->bytes_archived));
        fflush(stderr);
}

static int actions_execute_full(const Plan *p, ActionStats *ret_stats, int *ret_first_error,
                                bool progress) {
        ActionStats stats = {};
        ActionsProgress pr = { .on = progress, .started = mono_sec() };
        ActionsContext c = {
                .inv = p->inv,
                .stats = &stats,
                .crash_after = test_seam_crash_after_step(),
        };
        size_t n_planned = 0;
        int r;

        if (!journal_is_open())
                return -EBADF; /* every action is journalled: nothing runs without the log */
        for (size_t i = 0; i < p->n_items; i++) {
                Verb verb = p->items[i].verdict->verb;
                n_planned += verb == VERB_ARCHIVE || verb == VERB_DELETE || verb == VERB_COMPRESS ||
                             p->items[i].verdict->mark != 0;
        }
        pr.total = n_planned;
        n_planned += p->n_steps;
        c.batch = calloc(1, sizeof(ActionsBatch));
        if (!c.batch)
                return -ENOMEM;
        c.batch->max = actions_batch_max();
        r = actions_open_trees(&c);
        if (r < 0) {
                free(c.batch);
                return r;
        }
        actions_journal_run(&c, p, /* start= */ true, n_planned);

        /* first what an interrupted run left behind (style.md 2.2), then the policy's actions */
        actions_steps(&c, p, /* restore= */ false);
        for (size_t i = 0; i < p->n_items; i++) {
                const PlanItem *it = &p->items[i];
                const Verdict *v = it->verdict;

                if (v->verb != VERB_ARCHIVE && v->verb != VERB_DELETE && v->verb != VERB_COMPRESS &&
                    v->mark == 0)
                        continue;
                if (it->is_orphan) {
                        actions_batch_commit(&c);
                        if ((v->verb == VERB_DELETE || v->mark != 0) && it->index < p->inv->n_orphans)
                                (void)actions_orphan(&c, &p->inv->orphans[it->index], v);
                } else if (it->index < p->inv->n_sessions)
                        (void)actions_session(&c, &p->inv->sessions[it->index], v);
                pr.done++;
                actions_progress(&pr, &stats, false);
        }
        actions_batch_commit(&c);
        actions_progress(&pr, &stats, true);
        free(c.batch);
        c.batch = NULL;
        actions_steps(&c, p, /* restore= */ true);

        actions_report_held_back(&c, p);
        actions_journal_run(&c, p, /* start= */ false, n_planned);
        for (size_t i = 0; i < p->inv->n_trees; i++)
                actions_tree_done(&c.trees[i]);
        free(c.why);
        free(c.trees);
        free(c.runtime_fds);
        if (ret_stats)
                *ret_stats = stats;
        if (ret_first_error)
                *ret_first_error = c.first_error;
        return c.failed ? 1 : 0;
}

int actions_execute(const Plan *p, ActionStats *ret_stats) {
        return actions_execute_full(p, ret_stats, NULL, false);
}

/* Take the lock of every tree of inv; *ret_fds holds them (-EBADF where there is no tree). */
static int actions_lock_trees(const Inventory *inv, int **ret_fds) {
        _cleanup_free_ int *fds = calloc(inv->n_trees ? inv->n_trees : 1, sizeof(int));

        if (!fds)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_trees; i++) {
                int r = lock_tree(inv->trees[i].global_dir);

                fds[i] = -EBADF;
                if (r == -ENOENT)
                        continue; /* no tree there: nothing to lock, nothing to do */
                if (r < 0) {
                        for (size_t j = 0; j < i; j++)
                                safe_close(fds[j]);
                        if (r == -EWOULDBLOCK)
                                log_error("another qgc is working on '%s'; try again later",
                                          inv->trees[i].global_dir);
                        else
                                log_error_errno(r, "cannot lock '%s'", inv->trees[i].global_dir);
                        return r;
                }
                fds[i] = r;
        }
        *ret_fds = TAKE_PTR(fds);
        return 0;
}

int actions_open_log(const ActionsRunOptions *o) {
        char run_id[33];
        int r;

        r = journal_new_run_id(run_id);
        if (r >= 0)
                r = journal_open(o->log_file ? JOURNAL_TARGET_FILE : o->log_target, o->log_file,
                                 run_id);
        if (r < 0 && o->log_file)
                return log_error_errno(r == -EBADFD ? -EINVAL : r,
                                       "--log-file '%s': cannot open the action log%s", o->log_file,
                                       r == -EBADFD ? " (not a regular file)" : "");
        if (r < 0)
                return log_error_errno(r, "cannot open the action log");
        if (o->quiet)
                journal_set_stderr_max_priority(4 /* LOG_WARNING */);
        return 0;
}

int actions_run(const Plan *p, const ActionsRunOptions *o, ActionStats *ret_stats) {
        _cleanup_free_ int *lock_fds = NULL;
        int r;

        r = actions_lock_trees(p->inv, &lock_fds);
        if (r < 0)
                return r;
        if (!o->log_is_open)
                r = actions_open_log(o);
        if (r >= 0) {
                /* progress only for a person watching: a terminal, not --quiet, and not mixed
                 * into the action log on that terminal */
                bool progress = !o->quiet && isatty(STDERR_FILENO) &&
                                journal_get_target() != JOURNAL_TARGET_STDERR;
                r = actions_execute_full(p, ret_stats, NULL, progress);
                if (!o->log_is_open)
                        journal_close();
        }
        for (size_t i = 0; i < p->inv->n_trees; i++)
                safe_close(lock_fds[i]);
        return r;
}

int actions_restore(const Inventory *inv, const char *id) {
        _cleanup_(plan_freep) Plan *p = NULL;
        int r, first = 0;

        r = restore_plan(inv, id, now_msec(), &p);
        if (r == -ENOENT)
                return log_error_errno(r, "no session %s in any tree", id);
        if (r < 0)
                return r;
        r = actions_execute_full(p, NULL, &first, false);
        if (r < 0)
                return r;
        return first < 0 ? first : r;
}
