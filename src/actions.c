/* actions.c: carries out a Plan, the only code that changes a managed tree. Every change is an
 * unlinkat() or renameat() relative to a directory fd opened without following symlinks, on the
 * tree's filesystem, after checking that the target is still what the scan saw.
 *
 * Crash safety, per session (each step atomic; `qgc` run again completes or repeats it):
 *   - salvage: the usage line is appended, fsynced and read back BEFORE any transcript goes,
 *     and skipped when usage_record.jsonl already has a line for the session, so a rerun never
 *     duplicates; a short write is undone (usageidx.c) and the session kept. Before the first
 *     line into a file with no v1 record, the history Qwen would rebuild is written (one rename;
 *     a crash before it leaves only .usage_record.jsonl.qgc-tmp, which the next rebuild
 *     replaces: the file still has no v1 record then);
 *   - archive: see archive.c (sidecars first, transcript last, every move a rename);
 *   - delete: first a pending marker, G/.qgc/pending/<id>.<hash> (recover.c), written durably
 *     (temp file, fsync, rename, fsync) and naming every file the delete is about to remove with
 *     its identity; then its rows and entry in the files Qwen shares (erase.h: logs.json,
 *     session-organization.v1.json), each an atomic rename, or, when that cannot be done now,
 *     nothing at all (the marker goes, the session stays whole for a later run); then the
 *     transcript (Qwen's newer removeSession order), then sidecars in both places,
 *     file-history/<id>/, subagents/<id>/, debug/<id>.txt, plans/<id>.md, the review scripts
 *     and dead runtime claims; last the marker. A crash after a shared-file edit and before the
 *     transcript goes leaves a whole session without those rows: the next run deletes it again. A crash before the transcript goes leaves the session
 *     whole (and maybe the marker or its temp file: the next run's recovery pass sees the
 *     transcript and drops them). A crash after it leaves the marker as proof: the recovery pass
 *     at the start of the next real run removes every listed file that still has its recorded
 *     identity, then the marker. Removing a claim only after the transcript keeps ownership
 *     evidence while it matters;
 *   - temporary files (".<name>.qgc-tmp" of a merge or a marker) left by a crash are removed by
 *     the recovery pass, under the tree lock that every writer of them holds;
 *   - restore: archive.c's move in the other direction, a plan step like the others.
 * The executor owns the run's resources: actions_run() takes every tree lock and opens the
 * action log; nothing is executed or journalled without them.
 *
 * Test hook: with QGC_TEST_CRASH_AFTER_STEP=N in the environment, the process _exit(99)s right
 * after its Nth mutating step (tests/faults/test_faults.c). */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "actions.h"
#include "archive.h"
#include "erase.h"
#include "fsutil.h"
#include "journal.h"
#include "live.h"
#include "lock.h"
#include "log.h"
#include "hygiene.h"
#include "orphans.h"
#include "macro.h"
#include "recover.h"
#include "restore.h"
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
        unsigned crash_after; /* QGC_TEST_CRASH_AFTER_STEP, 0 = off */
        unsigned n_steps;
        bool failed;
        int first_error; /* of a restore step: what actions_restore() returns */
        char *why; /* an allocated reason of the current session's outcome */
} ActionsContext;

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

static unsigned actions_crash_hook(void) {
        const char *e = getenv("QGC_TEST_CRASH_AFTER_STEP");
        char *end = NULL;
        unsigned long n;

        if (!e || !*e)
                return 0;
        n = strtoul(e, &end, 10);
        return end && *end == 0 && n < 1000000 ? (unsigned)n : 0;
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
                                                                          : "delete",
                                s->id, actions_project(s), path ? path : "?",
                                reason ? reason : "", error ? ": " : "",
                                error ? strerror(error) : "");
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

/* Is the session in use now? Re-runs the liveness probe on a copy. 1 live, 0 not, -errno. */
static int actions_is_live(const ActionsTree *t, const Session *s, int chats_fd,
                           char **ret_reason) {
        Session copy = *s;
        int r;

        copy.live = 0;
        copy.live_reason = NULL;
        r = live_check(t->probe, &copy, chats_fd);
        if (r < 0) {
                free(copy.live_reason);
                return r;
        }
        /* LIVE_RECENT came from the scan's clock; identity covers later writes. */
        if ((copy.live & ~(unsigned)LIVE_RECENT) == 0) {
                free(copy.live_reason);
                return 0;
        }
        *ret_reason = copy.live_reason ? copy.live_reason : strdup("in use");
        return 1;
}

/* Salvage the usage of the transcript (dir_fd, name) before it goes. 0 done (written, present
 * already, or nothing to salvage), -ESTALE changed since scan, other -errno: fail closed. */
static int actions_salvage(ActionsContext *c, const ActionsTree *t, const Session *s, int dir_fd,
                           const char *name, const FileId *fid) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *line = NULL;
        int r, v1;

        fd = fs_openat(dir_fd, name, O_RDONLY | O_NONBLOCK, 0);
        if (fd < 0)
                return fd == -ENOENT || fd == -ELOOP ? -ESTALE : fd;
        r = fs_check_identity_fd(fd, fid);
        if (r <= 0)
                return r < 0 ? r : -ESTALE;

        r = usage_index_has(t->usage, t->global_fd, s->id);
        if (r < 0)
                return r; /* cannot tell whether a line exists: never risk a duplicate */
        v1 = usage_index_has_v1(t->usage, t->global_fd);
        if (v1 < 0)
                return v1;
        if (r > 0 && v1 > 0)
                return 0;

        r = usage_build_record(fd, &line);
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
        if (r > 0)
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
                if (r > 0)
                        return 0;
        }

        /* the record covers the file as it was: it must not have grown meanwhile */
        r = fs_check_identity_fd(fd, fid);
        if (r <= 0)
                return r < 0 ? r : -ESTALE;
        r = fs_check_identity(dir_fd, name, fid);
        if (r <= 0)
                return r < 0 ? r : -ESTALE;

        r = usage_append(t->global_fd, line);
        if (r < 0)
                return r;
        actions_step(c, "usage_record.jsonl");
        c->stats->n_salvaged++;

        _cleanup_free_ char *msg = strprintf("salvaged the usage record of session %s before "
                                             "its transcript goes",
                                             s->id);
        JournalEntry e = {
                .event = JOURNAL_SALVAGED,
                .message = msg ?: "salvaged the usage record before the transcript goes",
                .session = s->id,
                .project = actions_project(s),
                .user = c->inv->trees[s->tree].user,
        };
        (void)journal_log(&e);
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
        _cleanup_free_ char *buf = NULL;
        json_object *doc, *sid;
        size_t n;
        bool match = false;

        if (fs_read_file(dfd, name, 1024 * 1024, &buf, &n) < 0)
                return false;
        doc = json_tokener_parse(buf);
        if (doc && json_object_object_get_ex(doc, "session_id", &sid) &&
            json_object_is_type(sid, json_type_string))
                match = strcasecmp(json_object_get_string(sid), id) == 0;
        if (doc)
                json_object_put(doc);
        return match;
}

/* Is name "<id>.runtime.json" or "<id>.<pid>.runtime.json"? */
static bool actions_is_claim_name(const char *name, const char *id) {
        size_t l = strlen(id);
        const char *p;

        if (strncasecmp(name, id, l) != 0 || name[l] != '.')
                return false;
        p = name + l + 1;
        if (streq(p, "runtime.json"))
                return true;
        if (*p < '0' || *p > '9')
                return false;
        while (*p >= '0' && *p <= '9')
                p++;
        return streq(p, ".runtime.json");
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
        fd = fs_open_dir(chats_fd, "."); /* its own offset: chats_fd may have been read */
        if (fd < 0)
                return fd;
        fs_dir_init(d, fd);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                if (!actions_is_claim_name(name, id) || !actions_claim_names(chats_fd, name, id))
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

/* Note the runtime claims naming session id in chats/ (rel chats) in the marker. */
static int actions_mark_claims(RecoverMarker *m, int chats_fd, const char *chats, const char *id) {
        DIR *d;
        struct dirent *de;
        int fd, r = 0;

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

                if (!actions_is_claim_name(de->d_name, id) ||
                    !actions_claim_names(chats_fd, de->d_name, id))
                        continue;
                rel = strprintf("%s/%s", chats, de->d_name);
                r = rel ? actions_mark_file(m, chats_fd, false, rel, de->d_name, false, false)
                        : -ENOMEM;
        }
        closedir(d);
        return r;
}

/* Write the pending-delete marker of s (recover.h): every file the delete is about to remove,
 * with its identity now. *ret_name: the marker's name. */
static int actions_mark_delete(ActionsContext *c, const ActionsTree *t, const Session *s,
                               int chats_fd, int archive_fd, char **ret_name) {
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
                r = actions_mark_claims(&m, chats_fd, chats, s->id);
        if (r < 0)
                return r;
        return recover_marker_write(t->global_fd, t->global_dev, &m, actions_step, c, ret_name);
}

/* The delete completed (or never began): its marker goes. A failure only leaves work for the
 * recovery pass, which then finds the transcript or nothing left to remove. */
static void actions_unmark_delete(ActionsContext *c, const ActionsTree *t, const char *marker) {
        int r;

        if (!marker)
                return;
        r = recover_marker_remove(t->global_fd, t->global_dev, marker, actions_step, c);
        if (r < 0)
                log_warning_errno(r, "cannot remove the pending-delete marker '%s'", marker);
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

/* Delete a session: its transcript (re-checked), then everything else that is its alone. */
static int actions_delete(ActionsContext *c, const ActionsTree *t, const Session *s, int chats_fd,
                          int archive_fd, int dir_fd, const FileId *fid, const char **ret_why) {
        _cleanup_free_ char *name = strprintf("%s.jsonl", s->id);
        _cleanup_free_ char *marker = NULL;
        int r;

        if (!name)
                return -ENOMEM;
        r = fs_check_identity(dir_fd, name, fid);
        if (r <= 0) {
                *ret_why = "changed since scan";
                return r < 0 ? r : -ESTALE;
        }
        /* a copy in the other place since the scan (a TUI recreating chats/<id>.jsonl by path, a
         * restore) is a conflict, and the id's sidecars and file-history are in use again */
        r = actions_copy_exists(chats_fd, name, s->state != SESSION_ARCHIVED);
        if (r != 0) {
                *ret_why = "a copy in the other place appeared since the scan (conflict)";
                return r < 0 ? r : -EEXIST;
        }
        /* the proof for the recovery pass, should the run die before the delete completes */
        r = actions_mark_delete(c, t, s, chats_fd, archive_fd, &marker);
        if (r < 0) {
                *ret_why = "cannot write the pending-delete marker";
                return r;
        }
        /* what Qwen's own delete paths remove from shared files goes first: when it cannot,
         * nothing is removed and a later run retries the whole delete (erase.h) */
        r = actions_erase_shared(c, t, s, chats_fd, ret_why);
        if (r < 0) {
                actions_unmark_delete(c, t, marker);
                return r;
        }
        r = fs_unlink(dir_fd, name, 0);
        if (r < 0) {
                *ret_why = r == -ENOENT ? "vanished" : "cannot remove the transcript";
                actions_unmark_delete(c, t, marker);
                return r;
        }
        actions_step(c, name);
        r = fs_fsync(dir_fd);
        if (r < 0) {
                *ret_why = "removed, but fsync of chats/ failed";
                return r;
        }
        /* the same race just after the unlink: what is left belongs to the new copy */
        r = actions_copy_exists(chats_fd, name, false);
        if (r == 0)
                r = actions_copy_exists(chats_fd, name, true);
        if (r != 0) {
                log_warning("session %s: a transcript appeared as it was deleted; its sidecars "
                            "and file-history are kept",
                            s->id);
                if (r < 0)
                        *ret_why = "transcript removed, but whether a copy appeared is unknown";
                else
                        actions_unmark_delete(c, t, marker);
                return r < 0 ? r : 0;
        }
        r = actions_delete_rest(c, t, s, chats_fd, archive_fd);
        if (r < 0) {
                *ret_why = r == -EBUSY ? "transcript removed; kept: a mount point inside"
                                       : "transcript removed, but not everything else";
                return r; /* the marker stays: the next run's recovery pass retries */
        }
        actions_unmark_delete(c, t, marker);
        return 0;
}

/* Archive a session: chats/<id>.jsonl and sidecars into chats/archive/. */
static int actions_archive(ActionsContext *c, const Session *s, int chats_fd, int *archive_fd,
                           const char **ret_why) {
        int r;

        if (*archive_fd < 0) {
                r = fs_mkdirat(chats_fd, "archive", 0700);
                if (r < 0) {
                        if (r != -EEXIST) {
                                *ret_why = "cannot create chats/archive/";
                                return r;
                        }
                } else
                        actions_step(c, "archive/");
                r = fs_open_dir(chats_fd, "archive");
                if (r < 0) {
                        *ret_why = "cannot open chats/archive/";
                        return r;
                }
                *archive_fd = r;
        }
        return archive_move(chats_fd, *archive_fd, s->id, &s->active, /* to_archive= */ true,
                            actions_step, c, ret_why);
}

/* Why a session the plan names must still not be touched, or NULL. */
static const char *actions_refusal(const Session *s, const Verdict *v) {
        if (s->state == SESSION_CONFLICT)
                return "active and archived copies both exist (conflict)";
        if (s->owner == OWNER_FOREIGN || s->owner == OWNER_UNVERIFIED)
                return "ownership not proven";
        if (v->verb == VERB_ARCHIVE && s->state != SESSION_ACTIVE)
                return "not an active session";
        return NULL;
}

/* Execute one ARCHIVE or DELETE item for a session. */
static int actions_session(ActionsContext *c, const Session *s, const Verdict *v) {
        const Tree *tr = &c->inv->trees[s->tree];
        const ActionsTree *t = &c->trees[s->tree];
        _cleanup_free_ char *rel = strprintf("projects/%s/chats", s->project_dir);
        _cleanup_free_ char *name = strprintf("%s.jsonl", s->id);
        _cleanup_free_ char *live = NULL;
        _cleanup_close_ int chats_fd = -EBADF, archive_fd = -EBADF;
        const char *why = actions_refusal(s, v);
        bool archived = s->state == SESSION_ARCHIVED;
        const FileId *fid = archived ? &s->archived : &s->active;
        int dir_fd, r;

        if (why)
                return actions_report_session(c, s, v, JOURNAL_SKIPPED, why, 0);
        if (!rel || !name)
                return actions_report_session(c, s, v, JOURNAL_FAILED, "out of memory", ENOMEM);
        if (t->error < 0)
                return actions_report_session(c, s, v, JOURNAL_FAILED, "cannot open the tree",
                                              -t->error);

        chats_fd = fs_open_path(t->runtime_fd, rel, tr->dev);
        if (chats_fd < 0)
                return actions_report_session(c, s, v, JOURNAL_SKIPPED,
                                              "changed since scan (chats/ cannot be opened)", 0);
        archive_fd = fs_open_dir(chats_fd, "archive");
        if (archive_fd < 0 && archive_fd != -ENOENT)
                return actions_report_session(c, s, v, JOURNAL_FAILED,
                                              "cannot open chats/archive/", -archive_fd);
        dir_fd = archived ? archive_fd : chats_fd;
        if (dir_fd < 0)
                return actions_report_session(c, s, v, JOURNAL_SKIPPED, "changed since scan", 0);

        r = fs_check_identity(dir_fd, name, fid);
        if (r <= 0)
                return actions_report_session(c, s, v, r < 0 ? JOURNAL_FAILED : JOURNAL_SKIPPED,
                                              "changed since scan", r < 0 ? -r : 0);
        r = actions_is_live(t, s, chats_fd, &live);
        if (r != 0) {
                _cleanup_free_ char *m = r > 0 ? strprintf("in use since scan: %s", live) : NULL;
                return actions_report_session(c, s, v, JOURNAL_SKIPPED,
                                              m ? m : "liveness cannot be checked", 0);
        }

        r = actions_salvage(c, t, s, dir_fd, name, fid);
        if (r == -ESTALE)
                return actions_report_session(c, s, v, JOURNAL_SKIPPED, "changed since scan", 0);
        if (r < 0)
                return actions_report_session(c, s, v, JOURNAL_FAILED,
                                              "cannot salvage the usage record; session kept", -r);

        if (v->verb == VERB_ARCHIVE)
                r = actions_archive(c, s, chats_fd, &archive_fd, &why);
        else
                r = actions_delete(c, t, s, chats_fd, archive_fd, dir_fd, fid, &why);
        if (r == -ESTALE)
                return actions_report_session(c, s, v, JOURNAL_SKIPPED, "changed since scan", 0);
        if (r == -EAGAIN && why) /* a shared file cannot be edited now: kept, retried later */
                return actions_report_session(c, s, v, JOURNAL_SKIPPED, why, 0);
        if (r == -EEXIST && why && strstr(why, "(conflict)"))
                return actions_report_session(c, s, v, JOURNAL_SKIPPED, why, 0); /* appeared */
        if (r < 0)
                return actions_report_session(c, s, v, JOURNAL_FAILED, why, -r);
        return actions_report_session(c, s, v,
                                      v->verb == VERB_ARCHIVE ? JOURNAL_ARCHIVED : JOURNAL_DELETED,
                                      NULL, 0);
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
                                error ? ": " : "", error ? strerror(error) : "");
        JournalEntry e = {
                .event = ev,
                .message = msg,
                .session = o->kind == ORPHAN_FILE_HISTORY || o->kind == ORPHAN_SUBAGENTS ? o->name
                                                                                        : NULL,
                .project = o->project_dir,
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
        if (hygiene_kind(o->kind))
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
                          s->id, tr->runtime_dir, rel, why, strerror(-r));
                (void)actions_report_session(c, s, &v, JOURNAL_FAILED, why, -r);
                return r;
        }
        Session moved = *s;
        moved.state = SESSION_ACTIVE;
        (void)actions_report_session(c, &moved, &v, JOURNAL_RESTORED, NULL, 0);
        log_info("restored session %s into %s/%s", s->id, tr->runtime_dir, rel);
        return 0;
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
                                error ? ": " : "", error ? strerror(error) : "");
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

static int actions_execute_full(const Plan *p, ActionStats *ret_stats, int *ret_first_error) {
        ActionStats stats = {};
        ActionsContext c = {
                .inv = p->inv,
                .stats = &stats,
                .crash_after = actions_crash_hook(),
        };
        size_t n_planned = 0;
        int r;

        if (!journal_is_open())
                return -EBADF; /* every action is journalled: nothing runs without the log */
        for (size_t i = 0; i < p->n_items; i++) {
                Verb verb = p->items[i].verdict->verb;
                n_planned += verb == VERB_ARCHIVE || verb == VERB_DELETE;
        }
        n_planned += p->n_steps;
        r = actions_open_trees(&c);
        if (r < 0)
                return r;
        actions_journal_run(&c, p, /* start= */ true, n_planned);

        /* first what an interrupted run left behind (style.md 2.2), then the policy's actions */
        actions_steps(&c, p, /* restore= */ false);
        for (size_t i = 0; i < p->n_items; i++) {
                const PlanItem *it = &p->items[i];
                const Verdict *v = it->verdict;

                if (v->verb != VERB_ARCHIVE && v->verb != VERB_DELETE)
                        continue;
                if (it->is_orphan) {
                        if (v->verb == VERB_DELETE && it->index < p->inv->n_orphans)
                                (void)actions_orphan(&c, &p->inv->orphans[it->index], v);
                } else if (it->index < p->inv->n_sessions)
                        (void)actions_session(&c, &p->inv->sessions[it->index], v);
        }
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
        return actions_execute_full(p, ret_stats, NULL);
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
                r = actions_execute(p, ret_stats);
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
        r = actions_execute_full(p, NULL, &first);
        if (r < 0)
                return r;
        return first < 0 ? first : r;
}
