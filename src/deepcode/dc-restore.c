/* dc-restore.c: qgc restore of an archived Deep Code session (see dc-restore.h).
 *
 * Order, each change after its hook (StoreStep.hook), so that Deep Code never lists a session
 * that is not whole and a kill anywhere converges (dc_restore_recover_one()):
 *   1. the checks (identity of the archived transcript, ownership, liveness, nothing of the id
 *      in the project, fewer than DC_INDEX_ENTRIES_MAX index entries); the marker
 *      .qgc/restore-<id>, durable;
 *   2. the transcript back to projects/<code>/<id>.jsonl: a hard link of <id>.jsonl, or <id>.jsonl.zst
 *      decompressed (checked against its record) into a temp file there, fsync, renamed without
 *      replacing; the directory fsynced;
 *   3. <id>.images/ renamed back to images/<id>/ (images/ made when absent), both fsynced;
 *   4. the entry inserted into the index (dc_run_index_edit()) at its place: before the first id
 *      its <id>.after (dc-archive.c's: the ids after it in the project's order, the index with the
 *      sessions archived before at their places) names that is indexed, else last -- so that
 *      restores in any order give the index's order back, also one Deep Code left unsorted;
 *      without <id>.after (an archive of an older qgc; one over DC_INDEX_AFTER_MAX, logged) at
 *      Deep Code's place: before the first entry strictly older by updateTime, as
 *      createSession()'s sort orders them (equal times keep index order) -- from here Deep Code
 *      lists it, whole;
 *   5. the archive files of the id removed (transcripts, checkpoints, entry and .after last);
 *      the marker.
 * Recovery: the entry in the index -> 5; else, the archive still whole -> 2-5 again; a refusal
 * at 4 (the index full, Deep Code live, not its text) or an archive no longer whole -> 2-3
 * undone (only what is still a copy of the archive's), the marker dropped. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cold.h"
#include "dc-index.h"
#include "dc-restore.h"
#include "dc-store.h"
#include "fs.h"
#include "js.h"
#include "json.h"
#include "log.h"
#include "macro.h"
#include "session-times.h"
#include "util.h"


/* The archive of one session: its names in .qgc-archive/<code>/ (cfd) and projects/<code>/ (pfd). */
typedef struct DcRestore {
        const char *code, *id;
        int pfd, cfd;
        char *jsonl, *zst, *entry, *hashes, *images, *after; /* <id>.jsonl, .jsonl.zst, ... */
} DcRestore;

static void dc_restore_done(DcRestore *d) {
        macro_safe_close(d->pfd);
        macro_safe_close(d->cfd);
        free(d->jsonl);
        free(d->zst);
        free(d->entry);
        free(d->hashes);
        free(d->images);
        free(d->after);
}

/* Open the project and archive directories of (code, id). 0, -ENOENT (either is gone), -errno. */
static int dc_restore_open(const struct StoreRun *run, const char *code, const char *id,
                           DcRestore *ret) {
        _cleanup_close_ int afd = -EBADF;

        *ret = (DcRestore){ .code = code, .id = id, .pfd = -EBADF, .cfd = -EBADF };
        ret->jsonl = util_strprintf("%s.jsonl", id);
        ret->zst = util_strprintf("%s.jsonl" COLD_SUFFIX, id);
        ret->entry = util_strprintf("%s" DC_ARCHIVE_ENTRY, id);
        ret->hashes = util_strprintf("%s" DC_ARCHIVE_CHECKPOINTS, id);
        ret->images = util_strprintf("%s" DC_ARCHIVE_IMAGES, id);
        ret->after = util_strprintf("%s" DC_ARCHIVE_AFTER, id);
        if (!ret->jsonl || !ret->zst || !ret->entry || !ret->hashes || !ret->images ||
            !ret->after)
                return -ENOMEM;
        if (run->projects_fd < 0)
                return run->projects_fd;
        ret->pfd = fs_open_dir(run->projects_fd, code);
        if (ret->pfd < 0)
                return ret->pfd;
        afd = fs_open_dir(run->store_fd, DC_ARCHIVE_DIR);
        ret->cfd = afd < 0 ? afd : fs_open_dir(afd, code);
        return ret->cfd < 0 ? ret->cfd : 0;
}

/* DcRunIndexEditFn of a restore: with entry NULL, only the checks (2: the id is not there and
 * the index has room; -EEXIST, -ENOSPC); else entry inserted at its place (1), or 2 when it is
 * there already (a rerun). Its place: with its <id>.after (ordered), before the first id listed
 * there that the index holds, else last; without (an archive of an older qgc, or one not read),
 * Deep Code's place by updateTime. */
typedef struct DcRestoreInsert {
        json_object *entry;
        bool ordered;
        char **after;
        size_t n_after;
} DcRestoreInsert;

/* Is index entry o strictly older than (t, up), as Deep Code's sort of the entries says? */
static bool dc_restore_older(json_object *o, const char *up, msec_t t, bool t_ok) {
        const char *eu = json_get_string(o, "updateTime");
        msec_t et;

        if (!eu || !up)
                return false;
        if (t_ok && js_date_parse(eu, &et) >= 0)
                return et < t;
        return strcmp(eu, up) < 0; /* localeCompare of two that are not dates: ASCII's order */
}

static int dc_restore_index_insert(json_object *entries, const char *id, void *userdata,
                                   StoreStep *step) {
        const DcRestoreInsert *ins = userdata;
        size_t n = json_object_array_length(entries), at = n;
        const char *up = ins->entry ? json_get_string(ins->entry, "updateTime") : NULL;
        msec_t t = 0;
        bool t_ok = up && js_date_parse(up, &t) >= 0;

        for (size_t i = 0; i < n; i++) {
                const char *eid = json_get_string(json_object_array_get_idx(entries, i), "id");

                if (eid && streq(eid, id))
                        return ins->entry ? 2 : dc_run_why(step, -EEXIST, "Deep Code lists it "
                                                           "(its index names it): conflict");
        }
        if (n >= DC_INDEX_ENTRIES_MAX)
                return dc_run_why(step, -ENOSPC, "its project's index holds %d entries, Deep "
                                  "Code's most: its next save would cut the oldest and delete "
                                  "its files", DC_INDEX_ENTRIES_MAX);
        if (!ins->entry)
                return 2;
        for (size_t j = 0; ins->ordered && j < ins->n_after && at == n; j++)
                for (size_t i = 0; i < n && at == n; i++) {
                        const char *eid = json_get_string(json_object_array_get_idx(entries, i),
                                                          "id");

                        if (eid && streq(eid, ins->after[j]))
                                at = i;
                }
        for (size_t i = 0; !ins->ordered && i < n && at == n; i++)
                if (dc_restore_older(json_object_array_get_idx(entries, i), up, t, t_ok))
                        at = i;
        /* json-c 0.16 has no insert: one slot more, the tail shifted into it */
        if (json_object_array_add(entries, NULL) < 0)
                return -ENOMEM;
        for (size_t j = n; j > at; j--)
                if (json_object_array_put_idx(entries, j, json_object_get(json_object_array_get_idx(
                                                                  entries, j - 1))) < 0)
                        return -ENOMEM;
        if (json_object_array_put_idx(entries, at, json_object_get(ins->entry)) < 0)
                return -ENOMEM;
        return 1;
}

/* Step 2: the transcript back, unless it is there (a rerun: ours, checked before the marker). */
static int dc_restore_transcript(DcRestore *d, StoreStep *step) {
        _cleanup_free_ char *tmp = fs_temp_name(d->jsonl, false);
        _cleanup_close_ int fd = -EBADF;
        struct stat st, pst;
        int r;

        if (!tmp)
                return -ENOMEM;
        r = fs_exists(d->pfd, d->jsonl);
        if (r != 0)
                return r < 0 ? dc_run_why(step, r, "cannot check projects/%s/%s", d->code,
                                          d->jsonl) : 0;
        if (fs_exists(d->cfd, d->jsonl) > 0) {
                dc_run_hook(step, "link " DC_ARCHIVE_DIR "/%s/%s back to projects/%s/%s", d->code,
                            d->jsonl, d->code, d->jsonl);
                if (linkat(d->cfd, d->jsonl, d->pfd, d->jsonl, 0) < 0)
                        return dc_run_why(step, -errno, "cannot link the transcript back");
                r = fs_fsync(d->pfd);
                return r < 0 ? dc_run_why(step, r, "cannot sync the project directory") : 0;
        }
        r = fs_statat(d->cfd, d->zst, &st, NULL);
        if (r < 0)
                return dc_run_why(step, r, "its archived transcript is gone");
        if (fstat(d->pfd, &pst) < 0)
                return -errno;
        (void)unlinkat(d->pfd, tmp, 0);
        /* a file as Deep Code writes it there: its directory's mode without x (umask's) */
        fd = fs_temp_like(d->pfd, tmp, &pst, 0666, false);
        if (fd < 0)
                return dc_run_why(step, fd, "cannot create the transcript's temporary file");
        r = cold_cat(d->cfd, d->jsonl, fd);
        if (r >= 0 && futimens(fd, (struct timespec[2]){ { .tv_nsec = UTIME_OMIT },
                                                           st.st_mtim }) < 0)
                r = -errno;
        if (r >= 0)
                r = fs_fsync(fd);
        if (r < 0) {
                (void)unlinkat(d->pfd, tmp, 0);
                return dc_run_why(step, r, "cannot decompress %s: %s", d->zst,
                                  cold_damage_why(r) ?: "write failed");
        }
        dc_run_hook(step, "rename the decompressed transcript to projects/%s/%s", d->code,
                    d->jsonl);
        r = fs_rename_noreplace(d->pfd, tmp, d->pfd, d->jsonl);
        if (r < 0) {
                (void)unlinkat(d->pfd, tmp, 0);
                return dc_run_why(step, r, "cannot put the transcript back");
        }
        r = fs_fsync(d->pfd);
        return r < 0 ? dc_run_why(step, r, "cannot sync the project directory") : 0;
}

/* Step 3: <id>.images/ back to images/<id>/ (when it is in the archive). */
static int dc_restore_images(DcRestore *d, StoreStep *step) {
        _cleanup_close_ int ifd = -EBADF;
        struct stat st;
        int r;

        r = fs_exists(d->cfd, d->images);
        if (r <= 0)
                return r < 0 ? dc_run_why(step, r, "cannot check %s", d->images) : 0;
        ifd = fs_open_dir(d->pfd, "images");
        if (ifd == -ENOENT) {
                if (fstat(d->pfd, &st) < 0)
                        return -errno;
                dc_run_hook(step, "create projects/%s/images/", d->code);
                r = fs_mkdirat(d->pfd, "images", st.st_mode & 0777);
                if (r >= 0) {
                        /* its project's owner and mode (a set-group-ID inherited), past the
                         * umask (the unit's is 0077) */
                        ifd = fs_open_dir(d->pfd, "images");
                        r = ifd < 0 ? ifd : 0;
                        if (r >= 0 && geteuid() == 0 && fchown(ifd, st.st_uid, st.st_gid) < 0)
                                r = -errno;
                        if (r >= 0 && fchmod(ifd, st.st_mode & (0777 | S_ISGID)) < 0)
                                r = -errno;
                        if (r >= 0)
                                r = fs_fsync(d->pfd);
                }
                if (r < 0 && r != -EEXIST)
                        return dc_run_why(step, r, "cannot create projects/%s/images/", d->code);
                if (ifd < 0)
                        ifd = fs_open_dir(d->pfd, "images");
        }
        if (ifd < 0)
                return dc_run_why(step, ifd, "cannot open projects/%s/images/", d->code);
        dc_run_hook(step, "rename " DC_ARCHIVE_DIR "/%s/%s back to projects/%s/images/%s/",
                    d->code, d->images, d->code, d->id);
        r = fs_rename_noreplace(d->cfd, d->images, ifd, d->id);
        if (r >= 0)
                r = fs_fsync(ifd);
        if (r >= 0)
                r = fs_fsync(d->cfd);
        return r < 0 ? dc_run_why(step, r, "cannot move its images back") : 0;
}

/* Step 5: the archive files of the id (the entry and its order last: what is left of a kill is
 * no session). */
static int dc_restore_remove_archive(DcRestore *d, StoreStep *step) {
        const char *names[] = { d->jsonl, d->zst, d->hashes, d->entry, d->after };
        int r;

        dc_run_hook(step, "remove the archive files of session %s", d->id);
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                r = fs_unlink(d->cfd, names[i], 0);
                if (r < 0 && r != -ENOENT)
                        return dc_run_why(step, r, "cannot remove " DC_ARCHIVE_DIR "/%s/%s",
                                          d->code, names[i]);
        }
        r = fs_fsync(d->cfd);
        return r < 0 ? dc_run_why(step, r, "cannot sync " DC_ARCHIVE_DIR "/%s", d->code) : 0;
}

/* After step 5: its end recorded in ~/.deepcode/.qgc/session-times (session-times.h, as for
 * Qwen), whose "restored" line starts restore-grace: the next run does not archive it again
 * at once. A failure is no failure of the restore (the session is whole): logged. */
static void dc_restore_record(const struct StoreRun *run, const char *id, StoreStep *step) {
        _cleanup_(strbuf_done) StrBuf b = {};

        if (session_times_line(&b, SESSION_TIME_RESTORED, util_now_msec(), id) >= 0)
                (void)session_times_append(run->store_fd, run->dev, b.buf, b.len, step->hook,
                                           step->userdata);
}

/* After step 5: the archive's directories of code, when empty, go (no hook: nothing of a
 * session is in them). */
static void dc_restore_prune(const struct StoreRun *run, const char *code) {
        _cleanup_close_ int afd = fs_open_dir(run->store_fd, DC_ARCHIVE_DIR);

        if (afd >= 0 && unlinkat(afd, code, AT_REMOVEDIR) >= 0)
                (void)unlinkat(run->store_fd, DC_ARCHIVE_DIR, AT_REMOVEDIR);
}

/* Undo steps 3 and 2 (a refusal at 4, or an archive no longer whole): images/<id>/ back into
 * the archive, the transcript removed only while it is a copy of the archive's (the same inode,
 * or the .zst's exact content: cold_resolve()). 0 or -errno. */
static int dc_restore_undo(DcRestore *d, StoreStep *step) {
        _cleanup_close_ int ifd = fs_open_dir(d->pfd, "images");
        _cleanup_free_ char *tmp = fs_temp_name(d->jsonl, false);
        struct stat a, b;
        int r;

        if (!tmp)
                return -ENOMEM;
        (void)unlinkat(d->pfd, tmp, 0); /* a killed decompression's */

        if (ifd >= 0 && fs_exists(ifd, d->id) > 0 && fs_exists(d->cfd, d->images) == 0) {
                dc_run_hook(step, "rename projects/%s/images/%s/ back into " DC_ARCHIVE_DIR,
                            d->code, d->id);
                r = fs_rename_noreplace(ifd, d->id, d->cfd, d->images);
                if (r >= 0)
                        r = fs_fsync(d->cfd);
                if (r >= 0)
                        r = fs_fsync(ifd);
                if (r < 0)
                        return dc_run_why(step, r, "cannot move its images back into the archive");
        }
        if (fs_statat(d->pfd, d->jsonl, &b, NULL) < 0)
                return 0;
        if (fs_statat(d->cfd, d->jsonl, &a, NULL) >= 0) {
                if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
                        return 0; /* not ours */
                dc_run_hook(step, "remove the link projects/%s/%s", d->code, d->jsonl);
                r = fs_unlink(d->pfd, d->jsonl, 0);
                if (r >= 0)
                        r = fs_fsync(d->pfd);
                return r < 0 && r != -ENOENT ? dc_run_why(step, r, "cannot undo the link") : 0;
        }
        r = cold_resolve(d->pfd, d->jsonl, d->cfd, NULL, NULL);
        return r == -ESTALE || r == -ENOENT ? 0 : r < 0 ? dc_run_why(step, r, "cannot undo the "
                                                                     "decompression") : 0;
}

/* The archived entry <id>.entry.json, parsed. 0 or -errno (-EBADMSG: not an entry of id). */
static int dc_restore_entry(DcRestore *d, json_object **ret) {
        _cleanup_free_ char *text = NULL;
        const char *eid;
        size_t n = 0;
        int r;

        r = fs_read_file(d->cfd, d->entry, DC_INDEX_ENTRY_MAX, &text, &n);
        if (r >= 0)
                r = json_parse(text, n, ret);
        if (r < 0)
                return r == -ENOMEM ? r : -EBADMSG;
        eid = json_get_string(*ret, "id");
        if (!json_object_is_type(*ret, json_type_object) || !eid || !streq(eid, d->id)) {
                json_object_put(*ret);
                *ret = NULL;
                return -EBADMSG;
        }
        return 0;
}

/* <id>.after read into ins (ordered when it was); unread (absent, too big: a person wrote it,
 * unreadable): Deep Code's place, logged unless absent. 0 or -ENOMEM. */
static int dc_restore_order(DcRestore *d, DcRestoreInsert *ins) {
        int r = dc_index_after_read(d->cfd, d->after, &ins->after, &ins->n_after);

        ins->ordered = r >= 0;
        if (r == -ENOMEM)
                return r;
        if (r == -EFBIG)
                log_warning(DC_ARCHIVE_DIR "/%s/%s is over %u bytes: not read, session %s goes "
                            "back to its place by updateTime", d->code, d->after,
                            DC_INDEX_AFTER_MAX, d->id);
        else if (r < 0 && r != -ENOENT)
                log_warning_errno(r, DC_ARCHIVE_DIR "/%s/%s cannot be read: session %s goes "
                                  "back to its place by updateTime", d->code, d->after, d->id);
        return 0;
}

/* Steps 2-5 (see the top), from wherever a killed run left them. 0; a refusal of step 4
 * (-ENOSPC, -EEXIST, -EBUSY, -EAGAIN, -EBADMSG, -ESTALE) with 2-3 undone; another -errno. */
static int dc_restore_apply(struct StoreRun *run, DcRestore *d, StoreStep *step) {
        DcRestoreInsert ins = {};
        json_object *entry = NULL;
        int r, k;

        r = dc_restore_entry(d, &entry);
        if (r < 0)
                return dc_run_why(step, r, "its archived index entry cannot be read");
        ins.entry = entry;
        r = dc_restore_order(d, &ins);
        if (r >= 0)
                r = dc_restore_transcript(d, step);
        if (r >= 0)
                r = dc_restore_images(d, step);
        if (r >= 0) {
                r = dc_run_index_edit(run, d->pfd, d->code, d->id, dc_restore_index_insert, &ins,
                                      "with", step);
                if (r == 0)
                        r = dc_run_why(step, -ESTALE, "its project's index is gone");
                if (r == -ENOSPC || r == -EEXIST || r == -EBUSY || r == -EAGAIN ||
                    r == -EBADMSG || r == -ESTALE) {
                        k = dc_restore_undo(d, step);
                        r = k < 0 ? k : r;
                }
        }
        json_object_put(entry);
        dc_index_after_free(ins.after, ins.n_after);
        if (r >= 0)
                r = dc_restore_remove_archive(d, step);
        return r < 0 ? r : 0;
}

int dc_restore_session(struct StoreRun *run, const Session *s, StoreStep *step) {
        _cleanup_(dc_restore_done) DcRestore d = { .pfd = -EBADF, .cfd = -EBADF };
        _cleanup_free_ char *marker = util_strprintf(DC_RESTORE_MARKER_PREFIX "%s", s->id);
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int qfd = -EBADF, ifd = -EBADF;
        const char *code = s->project_dir;
        int r;

        if (!marker)
                return -ENOMEM;
        if (s->state != SESSION_ARCHIVED)
                return dc_run_why(step, -EEXIST, "Deep Code lists it too (conflict)");
        if (s->owner != OWNER_OK || !dc_index_id_valid(s->id, strlen(s->id)) ||
            !dc_run_name_ok(code))
                return dc_run_why(step, -EPERM, "ownership not proven");
        r = dc_restore_open(run, code, s->id, &d);
        if (r == -ENOENT && d.pfd < 0)
                return dc_run_why(step, -EPERM, "its project directory is gone");
        if (r == -ENOENT)
                return -ESTALE;
        if (r < 0)
                return dc_run_why(step, r, "cannot open its project or archive directory");
        r = fs_check_identity(d.cfd, s->cold ? d.zst : d.jsonl, &s->archived);
        if (r <= 0)
                return r < 0 ? dc_run_why(step, r, "cannot check its archived transcript")
                             : -ESTALE;
        ifd = fs_open_dir(d.pfd, "images");
        if (fs_exists(d.pfd, d.jsonl) != 0 || (ifd >= 0 && fs_exists(ifd, s->id) != 0))
                return dc_run_why(step, -EEXIST, "Deep Code has its transcript or images "
                                  "(conflict)");
        r = dc_run_live(run, code, step);
        if (r < 0)
                return r;
        r = dc_run_index_edit(run, d.pfd, code, s->id, dc_restore_index_insert,
                              &(DcRestoreInsert){}, "with", step);
        if (r == 0)
                return dc_run_why(step, -EPERM, "its project has no index");
        if (r < 0)
                return r;

        text = dc_run_marker_text("restore", code, s->id, &s->archived);
        if (!text)
                return -ENOMEM;
        qfd = dc_run_marker_write(run, marker, text, "restore", s->id, step);
        if (qfd < 0)
                return qfd;

        r = dc_restore_apply(run, &d, step);
        if (r < 0 && r != -ENOSPC && r != -EEXIST && r != -EBUSY && r != -EAGAIN &&
            r != -EBADMSG && r != -ESTALE)
                return r; /* the marker stays: the next run finishes or undoes */
        if (r >= 0)
                dc_restore_prune(run, code);
        dc_run_hook(step, "remove the pending-restore marker of session %s", s->id);
        (void)fs_unlink(qfd, marker, 0);
        if (r >= 0)
                dc_restore_record(run, s->id, step);
        return r;
}

/* Is (dfd, name) still the file f (its ctime aside: the link of step 2 changed it)? */
static int dc_restore_same(int dfd, const char *name, const FileId *f) {
        struct stat st;
        int r = fs_statat(dfd, name, &st, NULL);

        if (r < 0)
                return r == -ENOENT ? 0 : r;
        return st.st_dev == f->dev && st.st_ino == f->ino && (uint64_t)st.st_size == f->size &&
               (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec == f->mtime_ns;
}

/* DcRunIndexEditFn: is id in the index (2) or not (0)? */
static int dc_restore_index_has(json_object *entries, const char *id, void *userdata,
                                StoreStep *step) {
        (void)userdata;
        (void)step;
        for (size_t i = 0; i < json_object_array_length(entries); i++) {
                const char *eid = json_get_string(json_object_array_get_idx(entries, i), "id");

                if (eid && streq(eid, id))
                        return 2;
        }
        return 0;
}

int dc_restore_recover_one(struct StoreRun *run, int qfd, const char *marker, StoreStep *step) {
        _cleanup_(dc_restore_done) DcRestore d = { .pfd = -EBADF, .cfd = -EBADF };
        _cleanup_free_ char *text = NULL;
        json_object *entry = NULL;
        char *code, *id;
        size_t n;
        bool restored = false;
        FileId f;
        int r, whole;

        r = dc_run_marker_read(qfd, marker, DC_RESTORE_MARKER_PREFIX,
                               (const char *const[]){ "restore", NULL }, "restore", &text, &code,
                               &id, &f, &n, step);
        if (r < 0)
                return r;
        r = dc_restore_open(run, code, id, &d);
        if (r < 0 && r != -ENOENT)
                return dc_run_why(step, r, "cannot open projects/%s or its archive", code);
        if (r >= 0) {
                (void)unlinkat(d.pfd, DC_INDEX_TEMP, 0); /* a killed edit's */
                r = dc_run_index_edit(run, d.pfd, code, id, dc_restore_index_has, NULL, "with",
                                      step);
                if (r == -EBUSY || r == -EAGAIN)
                        return 0;
                if (r < 0)
                        return r;
        }
        if (r > 0) { /* listed by Deep Code, whole: only the archive's copies are left */
                r = dc_restore_remove_archive(&d, step);
                restored = r >= 0;
        } else if (r == 0 && d.cfd >= 0) {
                /* not listed: the archive is whole when its transcript is the marker's and its
                 * entry reads; then redone, else 2-3 undone */
                whole = dc_restore_same(d.cfd, fs_exists(d.cfd, d.jsonl) > 0 ? d.jsonl : d.zst,
                                        &f);
                if (whole > 0 && dc_restore_entry(&d, &entry) < 0)
                        whole = 0;
                json_object_put(entry);
                r = whole > 0 ? dc_run_live(run, code, step) : 0;
                if (r < 0)
                        return 0;
                r = whole > 0 ? dc_restore_apply(run, &d, step) : dc_restore_undo(&d, step);
                restored = whole > 0 && r >= 0;
                if (r == -EBUSY || r == -EAGAIN)
                        return 0;
                if (r == -ENOSPC || r == -EEXIST || r == -EBADMSG || r == -ESTALE)
                        r = 0; /* refused for good, undone: the session stays archived */
        } else
                r = 0; /* its project or archive is gone: nothing of it to finish */
        if (r < 0)
                return r;
        dc_restore_prune(run, code);
        dc_run_hook(step, "remove the pending-restore marker of session %s", id);
        r = fs_unlink(qfd, marker, 0);
        if (restored)
                dc_restore_record(run, id, step);
        return r < 0 && r != -ENOENT ? r : 1;
}
