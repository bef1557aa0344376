/* dc-delete.c: the delete of a Deep Code session and its recovery (dc-delete.h), with the kit
 * of dc-run.c.
 *
 * Order of a delete, each change after its hook (StoreStep.hook), so that a kill anywhere
 * leaves nothing half-visible to Deep Code (it lists only what the index names) and the next
 * run's recovery (dc_run_recover()) converges to what an unkilled run leaves:
 *   1. the marker .qgc/delete-<id> (code, the .jsonl's identity), durable;
 *   2. the index without the session's entries: a temp file, fsync, the index re-read and
 *      compared with the text the edit was made from (Deep Code rewrites it whole, with no lock:
 *      if it did meanwhile, the edit is redone from its text), exchanged with the temp file and
 *      what it replaced compared again (a write of Deep Code's in between goes back to the
 *      name, and the edit is redone from it: dc-run.c), fsync of the directory;
 *      only while no Deep Code process works in the project, only when the index parses and is
 *      exactly JSON.stringify(index, null, 2) of what it holds (the text Deep Code itself
 *      writes: saveSessionsIndex() of session.ts), so that the edit is what Deep Code's own
 *      deleteSession() writes;
 *   3. <id>.jsonl (when it is still what the scan saw), images/<id>/, then the loose
 *      refs/heads/<id> and logs/refs/heads/<id> of file-history/.git (a branch in packed-refs,
 *      which only a compaction writes, is left to the compaction: it removes the refs of
 *      sessions no longer in the index);
 *   4. the marker.
 * Before 2 the session is whole; from 2 on Deep Code cannot list it, and what is left of it is
 * what its own delete leaves. dc_delete_recover_one() redoes 2-4 for each marker (from 2 when the entry
 * is still there and the .jsonl is still the marker's; else only what is left), and drops a
 * marker whose session changed since (nothing is lost). */
#include "autoconf.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dc-delete.h"
#include "dc-index.h"
#include "dc-run.h"
#include "fs.h"
#include "json.h"
#include "macro.h"
#include "policy.h"
#include "util.h"

/* DcRunIndexEditFn of a delete: the entries of id removed (with remove), none of them a prompt in
 * progress. */
typedef struct DcDeleteRemove {
        bool remove;
} DcDeleteRemove;

static int dc_delete_index_remove(json_object *entries, const char *id, void *userdata,
                                  StoreStep *step) {
        const DcDeleteRemove *rm = userdata;
        size_t found = 0;

        for (size_t i = json_object_array_length(entries); i-- > 0;) {
                json_object *o = json_object_array_get_idx(entries, i);
                const char *eid = json_get_string(o, "id");

                if (!eid || !streq(eid, id))
                        continue;
                if (dc_run_entry_busy(o, util_now_msec()))
                        return dc_run_why(step, -EBUSY, "its index status is a prompt in progress");
                found++;
                if (rm->remove)
                        json_object_array_del_idx(entries, i, 1);
        }
        return found > 0 ? (rm->remove ? 1 : 2) : 0;
}

/* Steps 2 and 3 of a delete (see the top). jsonl: the .jsonl's identity when the delete
 * started (not present: it must still be absent). 0, or -errno with step->why. */
static int dc_delete_apply(const struct StoreRun *run, int pfd, const char *code, const char *id,
                           const FileId *jsonl, StoreStep *step) {
        _cleanup_free_ char *name = util_strprintf("%s.jsonl", id);
        _cleanup_free_ char *shown = util_strprintf("projects/%s/%s.jsonl", code, id);
        _cleanup_close_ int images_fd = -EBADF;
        uint64_t freed = 0;
        int r;

        if (!name || !shown)
                return -ENOMEM;
        r = dc_run_index_edit(run, pfd, code, id, dc_delete_index_remove, &(DcDeleteRemove){ true },
                              "without", step);
        if (r < 0)
                return r;
        r = jsonl->present ? fs_check_identity(pfd, name, jsonl) : 0;
        if (r < 0)
                return dc_run_why(step, r, "cannot check %s", shown);
        if (r > 0) {
                dc_run_hook(step, "remove %s", shown);
                r = fs_unlink(pfd, name, 0);
                if (r < 0 && r != -ENOENT)
                        return dc_run_why(step, r, "cannot remove %s", shown);
                r = fs_fsync(pfd);
                if (r < 0)
                        return dc_run_why(step, r, "cannot sync the project directory");
                freed += jsonl->blocks;
        } /* else changed since (or gone): it stays, a file Deep Code's list does not name */
        images_fd = fs_open_dir(pfd, "images");
        if (images_fd >= 0 && fs_exists(images_fd, id) > 0) {
                uint64_t b = 0;

                dc_run_hook(step, "remove projects/%s/images/%s/", code, id);
                r = dc_run_rm_images(images_fd, id, run->dev, &b);
                freed += b;
                if (r >= 0)
                        r = fs_fsync(images_fd);
                if (r < 0)
                        return dc_run_why(step, r, "cannot remove projects/%s/images/%s/", code,
                                          id);
        }
        step->bytes += freed;
        return dc_run_rm_branch(pfd, id, step);
}

int dc_delete_session(struct StoreRun *run, const Session *s, const Verdict *v, StoreStep *step) {
        _cleanup_close_ int pfd = -EBADF, qfd = -EBADF;
        _cleanup_free_ char *name = util_strprintf("%s.jsonl", s->id);
        _cleanup_free_ char *marker = util_strprintf(DC_DELETE_MARKER_PREFIX "%s", s->id);
        _cleanup_free_ char *text = NULL;
        const char *code = s->project_dir;
        int r;

        if (!name || !marker)
                return -ENOMEM;
        if (v->verb != VERB_DELETE)
                return dc_run_why(step, -EOPNOTSUPP, "Deep Code has no archive");
        if (s->owner != OWNER_OK || !dc_index_id_valid(s->id, strlen(s->id)) ||
            !dc_run_name_ok(code))
                return dc_run_why(step, -EPERM, "ownership not proven");
        if (run->projects_fd < 0)
                return dc_run_why(step, run->projects_fd, "cannot open projects/");
        pfd = fs_open_dir(run->projects_fd, code);
        if (pfd == -ENOENT)
                return -ESTALE;
        if (pfd < 0)
                return dc_run_why(step, pfd, "cannot open projects/%s", code);
        /* identity, then liveness and the index as they are now */
        r = s->active.present ? fs_check_identity(pfd, name, &s->active)
                              : fs_exists(pfd, name) == 0;
        if (r < 0)
                return dc_run_why(step, r, "cannot check its transcript");
        if (r == 0)
                return -ESTALE;
        r = dc_run_live(run, code, step);
        if (r < 0)
                return r;
        r = dc_run_index_edit(run, pfd, code, s->id, dc_delete_index_remove,
                              &(DcDeleteRemove){ false }, "without", step);
        if (r == 0)
                return -ESTALE; /* Deep Code deleted it (or capped it away) since the scan */
        if (r < 0)
                return r;

        text = dc_run_marker_text("delete", code, s->id, &s->active);
        if (!text)
                return -ENOMEM;
        qfd = dc_run_marker_write(run, marker, text, "delete", s->id, step);
        if (qfd < 0)
                return qfd;

        r = dc_delete_apply(run, pfd, code, s->id, &s->active, step);
        if (r < 0 && r != -EBUSY && r != -EAGAIN && r != -EBADMSG && r != -ESTALE)
                return r; /* the marker stays: the next run finishes */
        if (r < 0) {
                /* nothing was changed but the marker: the session stays whole */
                (void)fs_unlink(qfd, marker, 0);
                return r;
        }
        dc_run_hook(step, "remove the pending-delete marker of session %s", s->id);
        (void)fs_unlink(qfd, marker, 0);
        return 0;
}

int dc_delete_recover_one(struct StoreRun *run, int qfd, const char *marker, StoreStep *step) {
        _cleanup_free_ char *text = NULL, *name = NULL;
        _cleanup_close_ int pfd = -EBADF;
        char *code, *id;
        size_t kind;
        FileId f;
        int r;

        r = dc_run_marker_read(qfd, marker, DC_DELETE_MARKER_PREFIX,
                               (const char *const[]){ "delete", NULL }, "delete", &text, &code,
                               &id, &f, &kind, step);
        if (r < 0)
                return r;
        name = util_strprintf("%s.jsonl", id);
        if (!name)
                return -ENOMEM;
        pfd = run->projects_fd < 0 ? run->projects_fd : fs_open_dir(run->projects_fd, code);
        if (pfd < 0 && pfd != -ENOENT)
                return dc_run_why(step, pfd, "cannot open projects/%s", code);
        if (pfd >= 0) {
                (void)unlinkat(pfd, DC_INDEX_TEMP, 0); /* a killed edit's */
                r = dc_run_index_edit(run, pfd, code, id, dc_delete_index_remove,
                                      &(DcDeleteRemove){ false }, "without", step);
                if (r > 0 && (f.present ? fs_check_identity(pfd, name, &f)
                                        : fs_exists(pfd, name) == 0) <= 0) {
                        /* resumed (or replaced) since the killed run: not deleted */
                        dc_run_hook(step, "remove the pending-delete marker of session %s", id);
                        r = fs_unlink(qfd, marker, 0);
                        return r < 0 && r != -ENOENT ? r : 1;
                }
                r = r < 0 ? r : dc_run_live(run, code, step);
                if (r >= 0)
                        r = dc_delete_apply(run, pfd, code, id, &f, step);
                if (r == -EBUSY || r == -EAGAIN)
                        return 0;
                if (r < 0)
                        return r;
        }
        dc_run_hook(step, "remove the pending-delete marker of session %s", id);
        r = fs_unlink(qfd, marker, 0);
        return r < 0 && r != -ENOENT ? r : 1;
}

