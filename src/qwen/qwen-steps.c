/* qwen-steps.c: what Qwen's group commit does for one session before and around its removal: its
 * usage line (salvage, skipped when usage_record.jsonl or the batch already has one), the files
 * of a delete besides the transcript (sidecars in both places, file-history/, subagents/,
 * debug/, plans/, review scripts, dead runtime claims) and its pending-delete marker (which
 * files, with their identity), its rows in the files Qwen shares (one edit of each file per
 * batch), and the directories a batch's deletes look into, listed once per step. */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "archive.h"
#include "erase.h"
#include "cold.h"
#include "fs.h"
#include "journal.h"
#include "json.h"
#include "json-input.h"
#include "log.h"
#include "macro.h"
#include "rm-rf.h"
#include "recover-marker.h"
#include "store.h"
#include "usage.h"
#include "usage-ahead.h"
#include "usage-index.h"
#include "util.h"

#include "qwen-batch.h"
#include "qwen-steps.h"

static int qwen_steps_path(QwenAll *c, int root_fd, const char *rel, dev_t dev,
                              bool *ret_owned);
static int qwen_steps_listed(QwenAll *c, int dfd, const char *name);

/* Is a usage line for id waiting in the current batch? Then the session's own line is that one:
 * *ret_dep is its item (the session is kept if that line is not written). */
static bool qwen_steps_has_line(const QwenAll *c, const char *id, ssize_t *ret_dep) {
        const QwenBatch *b = c->batch;

        for (size_t i = 0; b && i < b->n; i++) {
                const QwenBatchItem *it = &b->items[i];

                if (it->line && (streq(it->s->id, id) || streq(it->sid, id))) {
                        *ret_dep = (ssize_t)i;
                        return true;
                }
        }
        return false;
}

/* The usage line to salvage from the transcript (dir_fd, name) before it goes, into *ret_line
 * (NULL: present already, in the file or in the batch, or nothing to salvage) and its
 * sessionId into *ret_sid; the batch appends it (qwen_commit_batch()). 0, -ESTALE changed
 * since scan, other -errno: fail closed. */
int qwen_steps_salvage(QwenAll *c, const QwenRun *t, const Session *s, int dir_fd,
                    const char *name, const FileId *fid, char **ret_line, char **ret_sid,
                    ssize_t *ret_dep) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *line = NULL;
        int r, v1;

        /* a line there already: nothing to read (the batch checks the identity before each step) */
        r = usage_index_has(t->usage, t->global_fd, s->id);
        if (r < 0)
                return r; /* cannot tell whether a line exists: never risk a duplicate */
        v1 = usage_index_has_v1(t->usage, t->global_fd);
        if (v1 < 0)
                return v1;
        if (r > 0 && v1 > 0)
                return 0;

        /* built on the salvage thread from the file with the scan's identity (usage-ahead.h),
         * or here */
        bool ahead = usage_ahead_take(c->ahead, s, &line) > 0;
        fd = ahead ? -EBADF : fs_openat(dir_fd, name, O_RDONLY | O_NONBLOCK, 0);
        if (!ahead && fd < 0)
                return fd == -ENOENT || fd == -ELOOP ? -ESTALE : fd;
        r = ahead ? 1 : fs_check_identity_fd(fd, fid);
        if (r <= 0)
                return r < 0 ? r : -ESTALE;
        /* a compressed transcript: salvaged from its content, checked against its SHA-256 */
        _cleanup_close_ int ufd =
                inventory_session_is_cold(s) ? cold_step_memfd(dir_fd, s->id) : -EBADF;
        if (inventory_session_is_cold(s) && ufd < 0)
                return ufd;

        r = ahead ? 0
             : ufd >= 0 ? usage_build_record(ufd, &line)
                        : usage_build_record_sized(fd, fid->size, &line);
        if (r < 0)
                return r;
        if (!line)
                return 0; /* no telemetry: Qwen writes nothing either */

        /* While the file has no v1 record Qwen rebuilds its totals from the transcripts: keep
         * them as they are now before this one goes (usageidx.h). */
        if (v1 == 0) {
                r = usage_index_freeze_history(t->usage, t->global_fd);
                if (r < 0)
                        return r;
                if (r > 0) {
                        _cleanup_free_ char *msg = util_strprintf(
                                "usage_record.jsonl had no version-1 record: wrote the usage "
                                "history Qwen rebuilds from the transcripts before session %s "
                                "goes, so that its totals stay as they are",
                                s->id);
                        qwen_batch_step(c, "usage_record.jsonl (Qwen's rebuilt history)");
                        JournalEntry e = {
                                .event = JOURNAL_SALVAGED,
                                .message = msg ?: "usage_record.jsonl: wrote Qwen's rebuilt "
                                                  "usage history",
                                .session = s->id,
                                .project = inventory_session_project(s),
                                .user = c->inv->trees[s->tree].user,
                        };
                        (void)journal_log(&e);
                }
        }
        r = usage_index_has(t->usage, t->global_fd, s->id);
        if (r < 0)
                return r;
        if (r > 0 || qwen_steps_has_line(c, s->id, ret_dep))
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
                if (r > 0 || qwen_steps_has_line(c, sid, ret_dep))
                        return 0;
        }

        /* the record covers the file as it was: it must not have grown meanwhile (checked by
         * name again just before the batch's append; the salvage thread checked its own read) */
        r = ahead ? 1 : fs_check_identity_fd(fd, fid);
        if (r <= 0)
                return r < 0 ? r : -ESTALE;
        *ret_line = TAKE_PTR(line);
        *ret_sid = TAKE_PTR(sid);
        return 0;
}

/* Name the sessions the plan will salvage (no usage line yet; not compressed: those are read
 * through a memfd) to the salvage thread, which builds their lines ahead of the batches. */
void qwen_steps_salvage_ahead(QwenAll *c) {
        const Plan *p = c->plan;
        _cleanup_(usage_ahead_freep) UsageAhead *ua = NULL;

        if (c->env.one_thread) {
                log_debug("salvage thread: off (--jobs 1)");
                return;
        }
        if (usage_ahead_new(c->inv, c->runtime_fds, &ua) < 0)
                return;
        for (size_t i = 0; i < p->n_items; i++) {
                const PlanItem *it = &p->items[i];
                const Session *s;
                const QwenRun *t;
                Verb verb = it->verdict->verb;

                if (it->is_orphan || it->index >= p->inv->n_sessions ||
                    (verb != VERB_ARCHIVE && verb != VERB_DELETE && verb != VERB_COMPRESS))
                        continue;
                s = &p->inv->sessions[it->index];
                t = c->runs[s->tree];
                /* another store's sessions are not Qwen's to salvage */
                if (!t || t->session_error < 0 || inventory_session_is_cold(s) ||
                    (s->state != SESSION_ACTIVE && s->state != SESSION_ARCHIVED) ||
                    s->owner == OWNER_FOREIGN || s->owner == OWNER_UNVERIFIED)
                        continue;
                usage_index_hold(t->usage); /* one look at the file for the whole list */
                if (usage_index_has(t->usage, t->global_fd, s->id) == 0 &&
                    usage_ahead_add(ua, s) < 0)
                        return;
        }
        for (size_t i = 0; i < c->inv->n_trees; i++)
                if (c->runs[i])
                        usage_index_release(c->runs[i]->usage);
        if (usage_ahead_start(ua) > 0)
                c->ahead = TAKE_PTR(ua);
}

/* Unlink (dfd, name), ENOENT being a benign race. */
static int qwen_steps_unlink_benign(QwenAll *c, int dfd, const char *name, int flags) {
        int r = fs_unlink(dfd, name, flags);

        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        qwen_batch_step(c, name);
        return 0;
}

/* Does the runtime claim (dfd, name) name session id? */
static bool qwen_steps_claim_names(int dfd, const char *name, const char *id) {
        json_object *doc = NULL;
        const char *sid;
        bool match;

        if (json_input_read(dfd, name, JSON_INPUT_CLAIM, &doc) < 0)
                return false;
        sid = json_get_string(doc, "session_id");
        match = sid && util_ascii_strcasecmp(sid, id) == 0;
        json_object_put(doc);
        return match;
}

/* Unlink (dfd, name) when the step's listing of dfd (a batch's fd) may hold it, ENOENT benign. */
static int qwen_steps_unlink_listed(QwenAll *c, int dfd, const char *name) {
        if (qwen_steps_listed(c, dfd, name) == 0)
                return 0;
        return qwen_steps_unlink_benign(c, dfd, name, 0);
}

/* Remove the dead runtime claims of a session whose transcripts are gone. */
static int qwen_steps_remove_claims(QwenAll *c, int chats_fd, const char *id) {
        _cleanup_free_ char *t = util_strprintf("%s.jsonl", id);
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
                if (!claims_is_claim_of(name, id) || !qwen_steps_claim_names(chats_fd, name, id))
                        continue;
                k = qwen_steps_unlink_benign(c, chats_fd, name, 0);
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
                if (!claims_is_claim_of(name, id) || !qwen_steps_claim_names(chats_fd, name, id))
                        continue;
                k = qwen_steps_unlink_benign(c, chats_fd, name, 0);
                if (k < 0 && r == 0)
                        r = k;
        }
        if (k < 0 && r == 0)
                r = k;
        return r;
}

/* Remove (dfd, rel/name) as a regular file, ENOENT benign. */
static int qwen_steps_remove_file_in(QwenAll *c, int root_fd, const char *rel, const char *name,
                                  dev_t dev) {
        bool owned;
        int fd = qwen_steps_path(c, root_fd, rel, dev, &owned);
        _cleanup_close_ _unused_ int own = owned ? fd : -EBADF; /* closed on return */

        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;
        return owned ? qwen_steps_unlink_benign(c, fd, name, 0) : qwen_steps_unlink_listed(c, fd, name);
}

/* Remove directory (root_fd, rel/name) recursively by fd, ENOENT benign. */
static int qwen_steps_remove_dir_in(QwenAll *c, int root_fd, const char *rel, const char *name,
                                 dev_t dev) {
        bool owned;
        int fd = qwen_steps_path(c, root_fd, rel, dev, &owned);
        _cleanup_close_ _unused_ int own = owned ? fd : -EBADF; /* closed on return */
        uint64_t bytes = 0;
        int r;

        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;
        r = owned ? 1 : qwen_steps_listed(c, fd, name);
        if (r > 0)
                r = fs_exists(fd, name);
        if (r <= 0)
                return r;
        r = rm_rf_at(fd, name, dev, &bytes);
        if (r < 0)
                return r;
        qwen_batch_step(c, name);
        return 0;
}

/* The names of a session's files outside chats/ that a delete removes, for the delete and its
 * pending-delete marker alike. */
typedef struct QwenStepsPaths {
        char *sub;    /* projects/<dir>/subagents (runtime dir): <id>/ in it */
        char *dbg;    /* <id>.txt in debug/ (runtime dir) */
        char *plan;   /* <id>.md in plans/ (global dir) */
        char *review; /* projects/<dir>/<ERASE_REVIEW_DIR> (runtime dir) */
        char *rname;  /* the session's directory in review */
} QwenStepsPaths;

static void qwen_steps_paths_done(QwenStepsPaths *p) {
        free(p->sub);
        free(p->dbg);
        free(p->plan);
        free(p->review);
        free(p->rname);
        *p = (QwenStepsPaths){};
}

static int qwen_steps_paths_init(QwenStepsPaths *p, const Session *s) {
        p->sub = util_strprintf("projects/%s/subagents", s->project_dir);
        p->dbg = util_strprintf("%s.txt", s->id);
        p->plan = util_strprintf("%s.md", s->id);
        p->review = util_strprintf("projects/%s/" ERASE_REVIEW_DIR, s->project_dir);
        p->rname = erase_review_dir_name(s->id);
        return p->sub && p->dbg && p->plan && p->review && p->rname ? 0 : -ENOMEM;
}

/* Everything but the transcript, in removeSession's order, then what Qwen leaves behind. */
int qwen_steps_rest(QwenAll *c, const QwenRun *t, const Session *s,
                        int chats_fd, int archive_fd) {
        static const char *const sidecars[] = { "worktree.json", "pr.json", "ledger.jsonl" };
        const Tree *tr = &c->inv->trees[s->tree];
        _cleanup_(qwen_steps_paths_done) QwenStepsPaths p = {};
        int r = 0, k;

        if (qwen_steps_paths_init(&p, s) < 0)
                return -ENOMEM;
        if (inventory_session_is_cold(s)) {
                _cleanup_close_ int cfd = archive_fd >= 0 ? fs_open_dir(archive_fd, COLD_DIR)
                                                          : -EBADF;
                for (size_t i = 0; cfd >= 0 && i < ELEMENTSOF(sidecars); i++) {
                        _cleanup_free_ char *z =
                                util_strprintf("%s.%s" COLD_SUFFIX, s->id, sidecars[i]);
                        k = z ? qwen_steps_unlink_benign(c, cfd, z, 0) : -ENOMEM;
                        if (k < 0 && r == 0)
                                r = k;
                }
        }
        for (size_t i = 0; i < ELEMENTSOF(sidecars); i++) {
                _cleanup_free_ char *n = util_strprintf("%s.%s", s->id, sidecars[i]);
                if (!n)
                        return -ENOMEM;
                k = qwen_steps_unlink_listed(c, chats_fd, n);
                if (k < 0 && r == 0)
                        r = k;
                if (archive_fd >= 0) {
                        k = qwen_steps_unlink_listed(c, archive_fd, n);
                        if (k < 0 && r == 0)
                                r = k;
                }
        }
        k = qwen_steps_remove_dir_in(c, t->global_fd, "file-history", s->id, t->global_dev);
        if (k < 0 && r == 0)
                r = k;
        k = qwen_steps_remove_dir_in(c, t->runtime_fd, p.sub, s->id, tr->dev);
        if (k < 0 && r == 0)
                r = k;
        k = qwen_steps_remove_file_in(c, t->runtime_fd, "debug", p.dbg, tr->dev);
        if (k < 0 && r == 0)
                r = k;
        k = qwen_steps_remove_file_in(c, t->global_fd, "plans", p.plan, t->global_dev);
        if (k < 0 && r == 0)
                r = k;
        k = qwen_steps_remove_dir_in(c, t->runtime_fd, p.review, p.rname, tr->dev);
        if (k < 0 && r == 0)
                r = k;
        k = qwen_steps_remove_claims(c, chats_fd, s->id);
        if (k < 0 && r == 0)
                r = k;
        return r;
}

/* Note (dfd, name) in the marker as rel when it exists (of type is_dir); c: look into the step's
 * listing of dfd first (a batch's fd), NULL: by name. */
static int qwen_steps_mark_file(QwenAll *c, RecoverMarker *m, int dfd, bool in_global,
                             const char *rel, const char *name, bool is_dir, bool is_transcript) {
        struct stat st;

        if (dfd < 0 || (c && qwen_steps_listed(c, dfd, name) == 0) ||
            fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return 0;
        if (is_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
                return 0;
        return recover_marker_add(m, in_global, rel, &st, is_transcript);
}

/* Note the file (below the root, on dev) dir/name in the marker when it exists. */
static int qwen_steps_mark_in(QwenAll *c, RecoverMarker *m, int root_fd, dev_t dev,
                           bool in_global, const char *dir, const char *name, bool is_dir) {
        bool owned;
        int fd = qwen_steps_path(c, root_fd, dir, dev, &owned);
        _cleanup_close_ _unused_ int own = owned ? fd : -EBADF; /* closed on return */
        _cleanup_free_ char *rel = util_strprintf("%s/%s", dir, name);

        if (!rel)
                return -ENOMEM;
        return fd < 0 ? 0 : qwen_steps_mark_file(owned ? NULL : c, m, fd, in_global, rel, name, is_dir,
                                              false);
}

/* Note the runtime claims naming session id in chats/ (rel chats) in the marker; names: the
 * claim names of chats/ when listed already (n of them), else NULL. */
static int qwen_steps_mark_claims(RecoverMarker *m, int chats_fd, const char *chats, const char *id,
                               char *const *names, size_t n) {
        DIR *d;
        struct dirent *de;
        int fd, r = 0;

        for (size_t i = 0; names && r >= 0 && i < n; i++) {
                _cleanup_free_ char *rel = NULL;

                if (!claims_is_claim_of(names[i], id) ||
                    !qwen_steps_claim_names(chats_fd, names[i], id))
                        continue;
                rel = util_strprintf("%s/%s", chats, names[i]);
                r = rel ? qwen_steps_mark_file(NULL, m, chats_fd, false, rel, names[i], false, false)
                        : -ENOMEM;
        }
        if (names)
                return r;

        fd = fcntl(chats_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                macro_safe_close(fd);
                return -errno;
        }
        rewinddir(d);
        while (r >= 0 && (de = readdir(d))) {
                _cleanup_free_ char *rel = NULL;

                if (!claims_is_claim_of(de->d_name, id) ||
                    !qwen_steps_claim_names(chats_fd, de->d_name, id))
                        continue;
                rel = util_strprintf("%s/%s", chats, de->d_name);
                r = rel ? qwen_steps_mark_file(NULL, m, chats_fd, false, rel, de->d_name, false, false)
                        : -ENOMEM;
        }
        closedir(d);
        return r;
}

/* The pending-delete marker of s (recover.h): every file the delete is about to remove, with its
 * identity now. Written with the others of its batch (recover_marker_write_many()). */
int qwen_steps_mark(QwenAll *c, const QwenRun *t, const Session *s,
                        int chats_fd, int archive_fd, RecoverMarker *ret) {
        static const char *const exts[] = { "jsonl", "worktree.json", "pr.json", "ledger.jsonl" };
        const Tree *tr = &c->inv->trees[s->tree];
        _cleanup_(recover_marker_done) RecoverMarker m = {
                .session = strdup(s->id), .project_dir = strdup(s->project_dir)
        };
        _cleanup_free_ char *chats = util_strprintf("projects/%s/chats", s->project_dir);
        _cleanup_(qwen_steps_paths_done) QwenStepsPaths p = {};
        int r = 0;

        if (!m.session || !m.project_dir || !chats || qwen_steps_paths_init(&p, s) < 0)
                return -ENOMEM;
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(exts); i++) {
                _cleanup_free_ char *n = util_strprintf("%s.%s", s->id, exts[i]);
                _cleanup_free_ char *a = util_strprintf("%s/%s", chats, n);
                _cleanup_free_ char *b = util_strprintf("%s/archive/%s", chats, n);
                if (!n || !a || !b)
                        return -ENOMEM;
                r = qwen_steps_mark_file(c, &m, chats_fd, false, a, n, false, i == 0);
                if (r >= 0)
                        r = qwen_steps_mark_file(c, &m, archive_fd, false, b, n, false, i == 0);
        }
        if (r >= 0 && inventory_session_is_cold(s)) {
                _cleanup_close_ int cfd = archive_fd >= 0 ? fs_open_dir(archive_fd, COLD_DIR)
                                                          : -EBADF;
                for (size_t i = 0; r >= 0 && cfd >= 0 && i < ELEMENTSOF(exts); i++) {
                        _cleanup_free_ char *z =
                                util_strprintf("%s.%s" COLD_SUFFIX, s->id, exts[i]);
                        _cleanup_free_ char *rz =
                                z ? util_strprintf("%s/archive/" COLD_DIR "/%s", chats, z) : NULL;
                        r = rz ? qwen_steps_mark_file(NULL, &m, cfd, false, rz, z, false, i == 0)
                               : -ENOMEM;
                }
        }
        if (r >= 0)
                r = qwen_steps_mark_in(c, &m, t->global_fd, t->global_dev, true, "file-history",
                                    s->id, true);
        if (r >= 0)
                r = qwen_steps_mark_in(c, &m, t->runtime_fd, tr->dev, false, p.sub, s->id, true);
        if (r >= 0)
                r = qwen_steps_mark_in(c, &m, t->runtime_fd, tr->dev, false, "debug", p.dbg, false);
        if (r >= 0)
                r = qwen_steps_mark_in(c, &m, t->global_fd, t->global_dev, true, "plans", p.plan,
                                    false);
        if (r >= 0)
                r = qwen_steps_mark_in(c, &m, t->runtime_fd, tr->dev, false, p.review, p.rname,
                                    true);
        if (r >= 0)
                r = qwen_steps_mark_claims(&m, chats_fd, chats, s->id, c->claim_names,
                                        c->n_claim_names);
        if (r < 0)
                return r;
        *ret = m;
        m = (RecoverMarker){};
        return 0;
}

/* Does chats/<name> (in_archive: chats/archive/<name>) exist now? 1 yes, 0 no, -errno. Always
 * looked up by name; archive_fd: chats/archive/ when the batch holds it open, else (< 0) it is
 * opened here (it may have been created since). */
int qwen_steps_copy_exists(int chats_fd, int archive_fd, const char *name, bool in_archive) {
        _cleanup_close_ int afd = in_archive && archive_fd < 0 ? fs_open_dir(chats_fd, "archive")
                                                               : -EBADF;

        if (!in_archive)
                return fs_exists(chats_fd, name);
        if (archive_fd >= 0)
                return fs_exists(archive_fd, name);
        if (afd == -ENOENT)
                return 0;
        return afd < 0 ? afd : fs_exists(afd, name);
}

/* fs_open_path(root_fd, rel, dev), opened once per batch (the batch's deletes look into the same
 * few directories for every session): the batch's fd (*ret_owned false), or when the batch holds
 * too many, the caller's (*ret_owned true); or -errno, also once per batch. */
static int qwen_steps_path(QwenAll *c, int root_fd, const char *rel, dev_t dev,
                       bool *ret_owned) {
        QwenBatch *b = c->batch;
        char *copy;

        *ret_owned = false;
        for (size_t j = 0; b && j < b->n_paths; j++)
                if (b->paths[j].root_fd == root_fd && streq(b->paths[j].rel, rel))
                        return b->paths[j].fd;
        if (!b || b->n_paths == ELEMENTSOF(b->paths) || !(copy = strdup(rel))) {
                *ret_owned = true;
                return fs_open_path(root_fd, rel, dev);
        }
        b->paths[b->n_paths].root_fd = root_fd;
        b->paths[b->n_paths].rel = copy;
        b->paths[b->n_paths].fd = fs_open_path(root_fd, rel, dev);
        return b->paths[b->n_paths++].fd;
}

/* The directories a step of the batch looks into (the marker and the shared-file edits; the rest
 * of the delete) are listed once for that step: a name the listing does not hold is not looked
 * up (most deleted sessions have none of a delete's other files: about 20 system calls each).
 * The listings are dropped after each step (qwen_steps_lists_drop()), so the rest of a delete never
 * relies on a listing taken before its transcript went. A listing is a snapshot: a file created
 * after it (only by a live Qwen process, and the batch just checked that none is) is missed, so
 * a missed name is a file kept, never one removed by mistake. A directory that cannot be listed,
 * or is large for the batch (more entries by its size than QWEN_STEPS_LIST_PER_SESSION per session),
 * is looked into by name. */
#define QWEN_STEPS_LIST_PER_SESSION 4U
#define QWEN_STEPS_LIST_MIN 64U
#define QWEN_STEPS_LIST_DIRENT 64 /* bytes of st_size per entry of a 36-character name (ext4) */

typedef struct QwenStepsList {
        int fd;       /* the directory (the batch's fd: open for the whole step) */
        char **names; /* sorted */
        size_t n;
        bool listed;  /* false: look up by name */
} QwenStepsList;

typedef struct QwenStepsLists {
        QwenStepsList *l;
        size_t n;
} QwenStepsLists;

static int qwen_steps_list_cmp(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static void qwen_steps_list_done(QwenStepsList *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->names[i]);
        free(l->names);
        *l = (QwenStepsList){ .fd = -EBADF };
}

void qwen_steps_lists_drop(QwenAll *c) {
        QwenStepsLists *ls = c->lists;

        if (!ls)
                return;
        for (size_t i = 0; i < ls->n; i++)
                qwen_steps_list_done(&ls->l[i]);
        free(ls->l);
        free(ls);
        c->lists = NULL;
}

/* List dfd into l, up to max entries (l->listed false when it cannot be listed whole). */
static void qwen_steps_list(QwenStepsList *l, int dfd, size_t max) {
        _cleanup_free_ FsDir *dir = malloc(sizeof(FsDir));
        _cleanup_close_ int fd = dir ? fs_open_dir(dfd, ".") : -ENOMEM; /* its own offset */
        size_t cap = 0;
        const char *name;
        unsigned char type;
        struct stat st;
        int k;

        *l = (QwenStepsList){ .fd = dfd };
        if (fd < 0 || fstat(fd, &st) < 0 || st.st_size / QWEN_STEPS_LIST_DIRENT > (off_t)max)
                return;
        fs_dir_init(dir, fd);
        while ((k = fs_dir_next(dir, &name, &type)) > 0) {
                if (l->n == max)
                        break;
                if (l->n == cap) {
                        char **n = reallocarray(l->names, cap ? 2 * cap : 64, sizeof(char *));
                        if (!n)
                                break;
                        l->names = n;
                        cap = cap ? 2 * cap : 64;
                }
                if (!(l->names[l->n] = strdup(name)))
                        break;
                l->n++;
        }
        if (k != 0) { /* an error, out of memory or too many: by name */
                qwen_steps_list_done(l);
                l->fd = dfd;
                return;
        }
        if (l->n > 1)
                qsort(l->names, l->n, sizeof(char *), qwen_steps_list_cmp);
        l->listed = true;
}

/* May (dfd, name) exist? 0 when this step's listing of dfd (taken on first use) does not hold
 * name, 1 otherwise (listed, or dfd could not be listed): the caller looks it up by name. dfd
 * must stay open for the whole step (the batch's fds; never one closed on return). */
static int qwen_steps_listed(QwenAll *c, int dfd, const char *name) {
        QwenStepsLists *ls = c->lists;
        QwenStepsList *l = NULL;

        if (dfd < 0)
                return 1;
        if (!ls) {
                ls = c->lists = calloc(1, sizeof(QwenStepsLists));
                if (!ls)
                        return 1;
        }
        for (size_t i = 0; i < ls->n && !l; i++)
                if (ls->l[i].fd == dfd)
                        l = &ls->l[i];
        if (!l) {
                QwenStepsList *n = reallocarray(ls->l, ls->n + 1, sizeof(QwenStepsList));
                if (!n)
                        return 1;
                ls->l = n;
                l = &ls->l[ls->n++];
                qwen_steps_list(l, dfd,
                             QWEN_STEPS_LIST_MIN +
                                     QWEN_STEPS_LIST_PER_SESSION * (c->batch ? c->batch->n : 1));
        }
        if (!l->listed)
                return 1;
        if (l->n == 0)
                return 0; /* an empty directory */
        return bsearch(&name, l->names, l->n, sizeof(char *), qwen_steps_list_cmp) ? 1 : 0;
}

/* Journal one edit of a shared file (counts, never content). */
static void qwen_steps_report_erased(QwenAll *c, const Session *s, const char *dir,
                                  const char *file, unsigned n, const char *what) {
        const Tree *tr = &c->inv->trees[s->tree];
        _cleanup_free_ char *path = util_strprintf("%s/%s/%s", tr->runtime_dir, dir, file);
        _cleanup_free_ char *msg = util_strprintf("removed %u %s of session %s from '%s'", n, what,
                                                  s->id, path ? path : file);
        const JournalField fields[] = { JOURNAL_FIELD_U64("QGC_ERASED", n) };
        JournalEntry e = {
                .event = JOURNAL_ERASED,
                .message = msg,
                .session = s->id,
                .project = inventory_session_project(s),
                .path = path,
                .user = tr->user,
                .fields = fields,
                .n_fields = ELEMENTSOF(fields),
        };

        if (n == 0)
                return;
        if (journal_log(&e) < 0)
                log_warning("cannot write the action log entry for session %s", s->id);
        c->env.counts->n_erased += n;
        c->env.counts->n_erased_files++;
}

/* 2b of the group commit: the rows and entries of the batch's deletes (their markers written)
 * out of the files Qwen shares (erase.h), each file read and edited once for all of them
 * (erase_sessions_shared()). A delete whose edit cannot be done now is skipped with the reason
 * (nothing of it goes; a later run retries the whole delete). */
void qwen_steps_shared(QwenAll *c, QwenBatch *b, const QwenRun *t) {
        _cleanup_free_ EraseItem *items = calloc(b->n ? b->n : 1, sizeof(EraseItem));
        _cleanup_free_ size_t *idx = calloc(b->n ? b->n : 1, sizeof(size_t));
        _cleanup_free_ int *owned = calloc(2 * b->n + 1, sizeof(int));
        size_t n = 0, n_owned = 0;
        int r = 0;

        for (size_t i = 0; items && idx && owned && r >= 0 && i < b->n; i++) {
                QwenBatchItem *it = &b->items[i];
                const Session *s = it->s;
                _cleanup_free_ char *tmp = NULL, *pdir = NULL;
                dev_t dev = c->inv->trees[s->tree].dev;
                bool owned_t = false, owned_p = false;
                int tfd, pfd;

                if (it->done || it->v->verb != VERB_DELETE || !it->marked)
                        continue;
                tmp = util_strprintf("tmp/%s", s->hash ? s->hash : "");
                pdir = util_strprintf("projects/%s", s->project_dir);
                if (!tmp || !pdir) {
                        r = -ENOMEM;
                        break;
                }
                /* the batch's directories (its deletes are mostly of a few projects): the same
                 * directory, the same fd, so that its file is edited once */
                tfd = s->hash ? qwen_steps_path(c, t->runtime_fd, tmp, dev, &owned_t) : -ENOENT;
                if (owned_t && tfd >= 0)
                        owned[n_owned++] = tfd;
                pfd = qwen_steps_path(c, t->runtime_fd, pdir, dev, &owned_p);
                if (owned_p && pfd >= 0)
                        owned[n_owned++] = pfd;
                /* neither file in this step's listing of its directory: nothing of the session in
                 * them (what erase_sessions_shared() finds first, without opening them) */
                if ((tfd == -ENOENT || (tfd >= 0 && !owned_t &&
                                        qwen_steps_listed(c, tfd, ERASE_LOGS_FILE) == 0)) &&
                    (pfd == -ENOENT || (pfd >= 0 && !owned_p &&
                                        qwen_steps_listed(c, pfd, ERASE_ORG_FILE) == 0)))
                        continue;
                items[n] = (EraseItem){
                        .s = s,
                        .chats_fd = b->dirs[it->dir].chats_fd,
                        .tmp_fd = tfd,
                        .pdir_fd = pfd,
                };
                idx[n++] = i;
        }
        if (!items || !idx || !owned)
                r = -ENOMEM;
        /* r < 0: no file was written (erase_sessions_shared() fails only before its first edit);
         * after it, what each file lost is in its sessions' counts, journalled below also for a
         * session that failed */
        if (r >= 0 && n > 0)
                r = erase_sessions_shared(c->inv, &c->erase_index, items, n, c->env.hook, c->env.userdata);
        for (size_t i = 0; r < 0 && i < b->n; i++) {
                QwenBatchItem *it = &b->items[i];

                if (!it->done && it->v->verb == VERB_DELETE && it->marked)
                        qwen_batch_report(c, it, STORE_FAILED,
                                             "cannot edit the files Qwen shares", -r);
        }
        for (size_t j = 0; r >= 0 && j < n; j++) {
                QwenBatchItem *it = &b->items[idx[j]];
                const Session *s = it->s;
                _cleanup_free_ char *tmp = util_strprintf("tmp/%s", s->hash ? s->hash : "");
                _cleanup_free_ char *pdir = util_strprintf("projects/%s", s->project_dir);

                qwen_steps_report_erased(c, s, tmp ? tmp : "tmp", ERASE_LOGS_FILE,
                                      items[j].done.log_rows, "prompt history row(s)");
                qwen_steps_report_erased(c, s, pdir ? pdir : "projects", ERASE_ORG_FILE,
                                      items[j].done.org_entries, "organization entry(ies)");
                /* a writer outran the edit's merges: what it wrote last is beside the file */
                if (items[j].kept)
                        log_warning("a version of a file Qwen shares, written while qgc edited "
                                    "it, was not merged: kept as '%s/%s/%s' (without the deleted "
                                    "sessions' rows)",
                                    c->inv->trees[s->tree].runtime_dir,
                                    strneq(items[j].kept, ERASE_LOGS_FILE, strlen(ERASE_LOGS_FILE)) ? (tmp ?: "tmp")
                                                                               : (pdir ?: "projects"),
                                    items[j].kept);
                if (items[j].r == -EAGAIN && items[j].why)
                        qwen_batch_report(c, it, STORE_SKIPPED_NOT_NOW, items[j].why, 0);
                else if (items[j].r < 0)
                        qwen_batch_report(c, it, STORE_FAILED,
                                             items[j].why ?: "cannot edit the files Qwen shares",
                                             -items[j].r);
        }
        for (size_t j = 0; items && j < n; j++) {
                free(items[j].why);
                free(items[j].kept);
        }
        for (size_t j = 0; j < n_owned; j++)
                macro_safe_close(owned[j]);
}
