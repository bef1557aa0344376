/* actions-erase.c: what the executor does for one session before and around its removal: its
 * usage line (salvage, skipped when usage_record.jsonl or the batch already has one), the files
 * of a delete besides the transcript (sidecars in both places, file-history/, subagents/,
 * debug/, plans/, review scripts, dead runtime claims) and its pending-delete marker (which
 * files, with their identity). Its rows in the files Qwen shares are actions-erase-shared.c;
 * the directories a batch's deletes look into, listed once per step, actions-erase-list.c. The
 * crash-safety order is described at the top of actions.c. */
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
#include "fsutil.h"
#include "rm-rf.h"
#include "journal.h"
#include "json.h"
#include "json-input.h"
#include "log.h"
#include "macro.h"
#include "recover.h"
#include "usage.h"
#include "usageahead.h"
#include "usage-index.h"
#include "util.h"

#include "actions-int.h"

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
int actions_erase_salvage(ActionsContext *c, const ActionsTree *t, const Session *s, int dir_fd,
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

        /* built on the salvage thread from the file with the scan's identity (usageahead.h),
         * or here */
        bool ahead = usage_ahead_take(c->ahead, s, &line) > 0;
        fd = ahead ? -EBADF : fs_openat(dir_fd, name, O_RDONLY | O_NONBLOCK, 0);
        if (!ahead && fd < 0)
                return fd == -ENOENT || fd == -ELOOP ? -ESTALE : fd;
        r = ahead ? 1 : fs_check_identity_fd(fd, fid);
        if (r <= 0)
                return r < 0 ? r : -ESTALE;
        /* a compressed transcript: salvaged from its content, checked against its SHA-256 */
        _cleanup_close_ int ufd = session_is_cold(s) ? cold_step_memfd(dir_fd, s->id) : -EBADF;
        if (session_is_cold(s) && ufd < 0)
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
                        _cleanup_free_ char *msg = strprintf(
                                "usage_record.jsonl had no version-1 record: wrote the usage "
                                "history Qwen rebuilds from the transcripts before session %s "
                                "goes, so that its totals stay as they are",
                                s->id);
                        actions_report_step(c, "usage_record.jsonl (Qwen's rebuilt history)");
                        JournalEntry e = {
                                .event = JOURNAL_SALVAGED,
                                .message = msg ?: "usage_record.jsonl: wrote Qwen's rebuilt "
                                                  "usage history",
                                .session = s->id,
                                .project = actions_report_project(s),
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
void actions_erase_salvage_ahead(ActionsContext *c, const Plan *p) {
        _cleanup_(usage_ahead_freep) UsageAhead *ua = NULL;

        if (c->one_thread) {
                log_debug("salvage thread: off (--jobs 1)");
                return;
        }
        if (usage_ahead_new(c->inv, c->runtime_fds, &ua) < 0)
                return;
        for (size_t i = 0; i < p->n_items; i++) {
                const PlanItem *it = &p->items[i];
                const Session *s;
                const ActionsTree *t;
                Verb verb = it->verdict->verb;

                if (it->is_orphan || it->index >= p->inv->n_sessions ||
                    (verb != VERB_ARCHIVE && verb != VERB_DELETE && verb != VERB_COMPRESS))
                        continue;
                s = &p->inv->sessions[it->index];
                t = &c->trees[s->tree];
                if (t->error < 0 || session_is_cold(s) ||
                    (s->state != SESSION_ACTIVE && s->state != SESSION_ARCHIVED) ||
                    s->owner == OWNER_FOREIGN || s->owner == OWNER_UNVERIFIED)
                        continue;
                usage_index_hold(t->usage); /* one look at the file for the whole list */
                if (usage_index_has(t->usage, t->global_fd, s->id) == 0 &&
                    usage_ahead_add(ua, s) < 0)
                        return;
        }
        for (size_t i = 0; i < c->inv->n_trees; i++)
                usage_index_release(c->trees[i].usage);
        if (usage_ahead_start(ua) > 0)
                c->ahead = TAKE_PTR(ua);
}

/* Unlink (dfd, name), ENOENT being a benign race. */
static int actions_unlink_benign(ActionsContext *c, int dfd, const char *name, int flags) {
        int r = fs_unlink(dfd, name, flags);

        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        actions_report_step(c, name);
        return 0;
}

/* Does the runtime claim (dfd, name) name session id? */
static bool actions_claim_names(int dfd, const char *name, const char *id) {
        json_object *doc = NULL;
        const char *sid;
        bool match;

        if (json_input_read(dfd, name, JSON_INPUT_CLAIM, &doc) < 0)
                return false;
        sid = json_get_string(doc, "session_id");
        match = sid && ascii_strcasecmp(sid, id) == 0;
        json_object_put(doc);
        return match;
}

/* Unlink (dfd, name) when the step's listing of dfd (a batch's fd) may hold it, ENOENT benign. */
static int actions_unlink_listed(ActionsContext *c, int dfd, const char *name) {
        if (actions_listed(c, dfd, name) == 0)
                return 0;
        return actions_unlink_benign(c, dfd, name, 0);
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
        bool owned;
        int fd = actions_batch_path(c, root_fd, rel, dev, &owned);
        _cleanup_close_ _unused_ int own = owned ? fd : -EBADF; /* closed on return */

        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;
        return owned ? actions_unlink_benign(c, fd, name, 0) : actions_unlink_listed(c, fd, name);
}

/* Remove directory (root_fd, rel/name) recursively by fd, ENOENT benign. */
static int actions_remove_dir_in(ActionsContext *c, int root_fd, const char *rel, const char *name,
                                 dev_t dev) {
        bool owned;
        int fd = actions_batch_path(c, root_fd, rel, dev, &owned);
        _cleanup_close_ _unused_ int own = owned ? fd : -EBADF; /* closed on return */
        uint64_t bytes = 0;
        int r;

        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;
        r = owned ? 1 : actions_listed(c, fd, name);
        if (r > 0)
                r = fs_exists(fd, name);
        if (r <= 0)
                return r;
        r = rm_rf_at(fd, name, dev, &bytes);
        if (r < 0)
                return r;
        actions_report_step(c, name);
        return 0;
}

/* The names of a session's files outside chats/ that a delete removes, for the delete and its
 * pending-delete marker alike. */
typedef struct ActionsPaths {
        char *sub;    /* projects/<dir>/subagents (runtime dir): <id>/ in it */
        char *dbg;    /* <id>.txt in debug/ (runtime dir) */
        char *plan;   /* <id>.md in plans/ (global dir) */
        char *review; /* projects/<dir>/<ERASE_REVIEW_DIR> (runtime dir) */
        char *rname;  /* the session's directory in review */
} ActionsPaths;

static void actions_paths_done(ActionsPaths *p) {
        free(p->sub);
        free(p->dbg);
        free(p->plan);
        free(p->review);
        free(p->rname);
        *p = (ActionsPaths){};
}

static int actions_paths_init(ActionsPaths *p, const Session *s) {
        p->sub = strprintf("projects/%s/subagents", s->project_dir);
        p->dbg = strprintf("%s.txt", s->id);
        p->plan = strprintf("%s.md", s->id);
        p->review = strprintf("projects/%s/" ERASE_REVIEW_DIR, s->project_dir);
        p->rname = erase_review_dir_name(s->id);
        return p->sub && p->dbg && p->plan && p->review && p->rname ? 0 : -ENOMEM;
}

/* Everything but the transcript, in removeSession's order, then what Qwen leaves behind. */
int actions_erase_rest(ActionsContext *c, const ActionsTree *t, const Session *s,
                        int chats_fd, int archive_fd) {
        static const char *const sidecars[] = { "worktree.json", "pr.json", "ledger.jsonl" };
        const Tree *tr = &c->inv->trees[s->tree];
        _cleanup_(actions_paths_done) ActionsPaths p = {};
        int r = 0, k;

        if (actions_paths_init(&p, s) < 0)
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
                k = actions_unlink_listed(c, chats_fd, n);
                if (k < 0 && r == 0)
                        r = k;
                if (archive_fd >= 0) {
                        k = actions_unlink_listed(c, archive_fd, n);
                        if (k < 0 && r == 0)
                                r = k;
                }
        }
        k = actions_remove_dir_in(c, t->global_fd, "file-history", s->id, t->global_dev);
        if (k < 0 && r == 0)
                r = k;
        k = actions_remove_dir_in(c, t->runtime_fd, p.sub, s->id, tr->dev);
        if (k < 0 && r == 0)
                r = k;
        k = actions_remove_file_in(c, t->runtime_fd, "debug", p.dbg, tr->dev);
        if (k < 0 && r == 0)
                r = k;
        k = actions_remove_file_in(c, t->global_fd, "plans", p.plan, t->global_dev);
        if (k < 0 && r == 0)
                r = k;
        k = actions_remove_dir_in(c, t->runtime_fd, p.review, p.rname, tr->dev);
        if (k < 0 && r == 0)
                r = k;
        k = actions_remove_claims(c, chats_fd, s->id);
        if (k < 0 && r == 0)
                r = k;
        return r;
}

/* Note (dfd, name) in the marker as rel when it exists (of type is_dir); c: look into the step's
 * listing of dfd first (a batch's fd), NULL: by name. */
static int actions_mark_file(ActionsContext *c, RecoverMarker *m, int dfd, bool in_global,
                             const char *rel, const char *name, bool is_dir, bool is_transcript) {
        struct stat st;

        if (dfd < 0 || (c && actions_listed(c, dfd, name) == 0) ||
            fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return 0;
        if (is_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
                return 0;
        return recover_marker_add(m, in_global, rel, &st, is_transcript);
}

/* Note the file (below the root, on dev) dir/name in the marker when it exists. */
static int actions_mark_in(ActionsContext *c, RecoverMarker *m, int root_fd, dev_t dev,
                           bool in_global, const char *dir, const char *name, bool is_dir) {
        bool owned;
        int fd = actions_batch_path(c, root_fd, dir, dev, &owned);
        _cleanup_close_ _unused_ int own = owned ? fd : -EBADF; /* closed on return */
        _cleanup_free_ char *rel = strprintf("%s/%s", dir, name);

        if (!rel)
                return -ENOMEM;
        return fd < 0 ? 0 : actions_mark_file(owned ? NULL : c, m, fd, in_global, rel, name, is_dir,
                                              false);
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
                r = rel ? actions_mark_file(NULL, m, chats_fd, false, rel, names[i], false, false)
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
                r = rel ? actions_mark_file(NULL, m, chats_fd, false, rel, de->d_name, false, false)
                        : -ENOMEM;
        }
        closedir(d);
        return r;
}

/* The pending-delete marker of s (recover.h): every file the delete is about to remove, with its
 * identity now. Written with the others of its batch (recover_marker_write_many()). */
int actions_erase_mark(ActionsContext *c, const ActionsTree *t, const Session *s,
                        int chats_fd, int archive_fd, RecoverMarker *ret) {
        static const char *const exts[] = { "jsonl", "worktree.json", "pr.json", "ledger.jsonl" };
        const Tree *tr = &c->inv->trees[s->tree];
        _cleanup_(recover_marker_done) RecoverMarker m = {
                .session = strdup(s->id), .project_dir = strdup(s->project_dir)
        };
        _cleanup_free_ char *chats = strprintf("projects/%s/chats", s->project_dir);
        _cleanup_(actions_paths_done) ActionsPaths p = {};
        int r = 0;

        if (!m.session || !m.project_dir || !chats || actions_paths_init(&p, s) < 0)
                return -ENOMEM;
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(exts); i++) {
                _cleanup_free_ char *n = strprintf("%s.%s", s->id, exts[i]);
                _cleanup_free_ char *a = strprintf("%s/%s", chats, n);
                _cleanup_free_ char *b = strprintf("%s/archive/%s", chats, n);
                if (!n || !a || !b)
                        return -ENOMEM;
                r = actions_mark_file(c, &m, chats_fd, false, a, n, false, i == 0);
                if (r >= 0)
                        r = actions_mark_file(c, &m, archive_fd, false, b, n, false, i == 0);
        }
        if (r >= 0 && session_is_cold(s)) {
                _cleanup_close_ int cfd = archive_fd >= 0 ? fs_open_dir(archive_fd, COLD_DIR)
                                                          : -EBADF;
                for (size_t i = 0; r >= 0 && cfd >= 0 && i < ELEMENTSOF(exts); i++) {
                        _cleanup_free_ char *z = strprintf("%s.%s" COLD_SUFFIX, s->id, exts[i]);
                        _cleanup_free_ char *rz = z ? strprintf("%s/archive/" COLD_DIR "/%s",
                                                                chats, z)
                                                    : NULL;
                        r = rz ? actions_mark_file(NULL, &m, cfd, false, rz, z, false, i == 0)
                               : -ENOMEM;
                }
        }
        if (r >= 0)
                r = actions_mark_in(c, &m, t->global_fd, t->global_dev, true, "file-history",
                                    s->id, true);
        if (r >= 0)
                r = actions_mark_in(c, &m, t->runtime_fd, tr->dev, false, p.sub, s->id, true);
        if (r >= 0)
                r = actions_mark_in(c, &m, t->runtime_fd, tr->dev, false, "debug", p.dbg, false);
        if (r >= 0)
                r = actions_mark_in(c, &m, t->global_fd, t->global_dev, true, "plans", p.plan,
                                    false);
        if (r >= 0)
                r = actions_mark_in(c, &m, t->runtime_fd, tr->dev, false, p.review, p.rname,
                                    true);
        if (r >= 0)
                r = actions_mark_claims(&m, chats_fd, chats, s->id, c->claim_names,
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
int actions_erase_copy_exists(int chats_fd, int archive_fd, const char *name, bool in_archive) {
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
