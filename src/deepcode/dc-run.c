/* dc-run.c: what every run operation of Deep Code's store shares (dc-run.h): the run's open
 * store, the step's hook and reason, the liveness check, the edit of a project's index
 * (dc_run_index_edit(): re-read, compared, exchanged, fsynced), the removal of a session's
 * images and branch, the pending markers under .qgc/ and the recovery pass that lists them.
 * The operations themselves: dc-delete.c, dc-archive.c, dc-restore.c, dc-reclaim.c. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dc-index.h"
#include "dc-proc.h"
#include "dc-project.h"
#include "dc-run.h"
#include "dc-store.h"
#include "fs.h"
#include "js.h"
#include "json.h"
#include "macro.h"
#include "policy.h"
#include "rm-rf.h"
#include "util.h"

/* Markers recovered per run: a kill leaves one; more are forged, and wait for later runs */
#define DC_RUN_MARKERS_MAX 64

void dc_run_hook(StoreStep *step, const char *fmt, ...) {
        _cleanup_free_ char *what = NULL;
        va_list ap;

        if (!step->hook)
                return;
        va_start(ap, fmt);
        if (vasprintf(&what, fmt, ap) < 0)
                what = NULL;
        va_end(ap);
        step->hook(step->userdata, what ?: "?");
}

int dc_run_why(StoreStep *step, int r, const char *fmt, ...) {
        va_list ap;

        if (step->why)
                return r;
        va_start(ap, fmt);
        if (vasprintf(&step->why, fmt, ap) < 0)
                step->why = NULL;
        va_end(ap);
        return r;
}

int dc_run_open(const Inventory *inv, size_t t, struct StoreRun **ret) {
        _cleanup_free_ struct StoreRun *run = calloc(1, sizeof(*run));
        FsRoot root = FS_ROOT_NULL;
        struct stat st;
        int r;

        if (!run)
                return -ENOMEM;
        r = fs_root_open(inv->trees[t].runtime_dir, inv->trees[t].dev, &root);
        if (r < 0)
                return r;
        if (fstat(root.fd, &st) < 0) {
                r = -errno;
                fs_root_done(&root);
                return r;
        }
        *run = (struct StoreRun){ .inv = inv, .tree = t, .store_fd = TAKE_FD(root.fd),
                                  .dev = st.st_dev, .uid = st.st_uid };
        run->projects_fd = fs_open_dir(run->store_fd, "projects");
        *ret = TAKE_PTR(run);
        return 0;
}

void dc_run_close(struct StoreRun *run) {
        if (!run)
                return;
        /* .qgc/ holds only pending markers: gone with the last one */
        (void)unlinkat(run->store_fd, FS_STATE_DIR, AT_REMOVEDIR);
        macro_safe_close(run->projects_fd);
        macro_safe_close(run->store_fd);
        free(run);
}

int dc_run_live(const struct StoreRun *run, const char *code, StoreStep *step) {
        DcProcs procs;
        pid_t pid = 0;
        int r;

        r = dc_proc_scan(&procs);
        if (r < 0)
                return r;
        r = dc_proc_find(&procs, code, run->uid, &pid);
        dc_proc_done(&procs);
        if (r > 0)
                return dc_run_why(step, -EBUSY, "Deep Code pid %d works in its project", (int)pid);
        if (r < 0)
                return dc_run_why(step, -EBUSY,
                                  "a Deep Code process whose working directory cannot be read");
        return 0;
}

bool dc_run_entry_busy(json_object *o, msec_t now) {
        const char *st = json_get_string(o, "status");
        const char *up = json_get_string(o, "updateTime");
        msec_t t;

        if (!st || (!streq(st, "processing") && !streq(st, "ask_permission") &&
                    !streq(st, "waiting_for_user")))
                return false;
        return !up || js_date_parse(up, &t) < 0 || now - t < DC_STATUS_WINDOW;
}

/* A text read whole from (dfd, name), with the file's stat. 0, or -errno. */
static int dc_run_read(int dfd, const char *name, size_t max, char **ret, size_t *ret_n,
                       struct stat *ret_st) {
        _cleanup_close_ int fd = fs_open_noatime(dfd, name, O_RDONLY);

        if (fd < 0)
                return fd;
        if (ret_st && fstat(fd, ret_st) < 0)
                return -errno;
        return fs_read_fd(fd, max, ret, ret_n);
}

static int dc_run_write_temp(int pfd, const char *text, size_t n, const struct stat *st,
                             struct stat *ret_st) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        (void)unlinkat(pfd, DC_INDEX_TEMP, 0);
        fd = fs_temp_like(pfd, DC_INDEX_TEMP, st, 07777, false);
        if (fd < 0)
                return fd;
        r = util_write_all(fd, text, n);
        if (r < 0)
                return r;
        if (fstat(fd, ret_st) < 0)
                return -errno;
        return fs_fsync(fd);
}

/* How many times a version of the index Deep Code wrote during the replace goes back to the
 * name at most (dc_run_index_put()): each time one comes back that is not the version put
 * there, Deep Code wrote that one meanwhile, and it goes back in turn. */
#define DC_RUN_SWAP_ROUNDS 8

/* Deep Code's version of the index, at the temp name (the file xst), that cannot go back to the
 * name (what: why): kept beside the index as sessions-index.json.qgc-unmerged-<inode>, which
 * nothing of qgc's removes (the next edit would reuse the temp name). r, with step->why. */
static int dc_run_index_keep(int pfd, const struct stat *xst, int r, const char *what,
                             StoreStep *step) {
        _cleanup_free_ char *kept =
                util_strprintf(DC_INDEX_FILE ".qgc-unmerged-%ju", (uintmax_t)xst->st_ino);
        int k = kept ? fs_rename_noreplace(pfd, DC_INDEX_TEMP, pfd, kept) : -ENOMEM;

        if (k >= 0)
                k = fs_fsync(pfd);
        if (k < 0)
                return dc_run_why(step, r, "%s: its version is at " DC_INDEX_TEMP, what);
        return dc_run_why(step, r, "%s: its version is kept as %s", what, kept);
}

/* Put the temp file (qgc's new text out[0..n_out), the file ost) in place of the index, which
 * held text[0..n) (the file st) at the edit's read, by exchange (fs_exchange_open()): Deep Code
 * writes the index in place (writeFileSync()) with no lock, at any moment, so the version
 * replaced is compared with the one read, and when it is another (Deep Code's, written since),
 * it goes back to the name at once; what that brings back must be qgc's version as it was put,
 * else Deep Code wrote into it meanwhile, and that goes back in turn (DC_RUN_SWAP_ROUNDS). Where
 * the filesystem cannot exchange, a plain rename (the edit's re-read is the check, as it was).
 * 1 in place (the directory fsynced, the text replaced removed), 0 Deep Code's version is at the
 * name (the edit is redone from it; the temp file removed), or -errno (-EAGAIN: Deep Code kept
 * writing: its last version, which the rounds could not put back, is kept beside the index as
 * sessions-index.json.qgc-unmerged-<inode>, which nothing of qgc's removes). */
static int dc_run_index_put(int pfd, const char *text, size_t n, const struct stat *st,
                            const char *out, size_t n_out, const struct stat *ost,
                            StoreStep *step) {
        _cleanup_free_ char *held = NULL, *buf = malloc(FS_CMP_CHUNK);
        _cleanup_close_ int fd = -EBADF;
        struct stat xst = {}, exp_st = *ost;
        const char *exp = out;
        size_t n_exp = n_out;
        bool at_tmp;
        int r;

        if (!buf)
                return -ENOMEM;
        fd = fs_exchange_open(pfd, DC_INDEX_TEMP, DC_INDEX_FILE, true, &at_tmp, &xst);
        if (fd < 0 && !at_tmp) {
                (void)unlinkat(pfd, DC_INDEX_TEMP, 0);
                return fd == -ENOENT ? 0 /* gone meanwhile: read again */
                                     : dc_run_why(step, fd, "cannot replace " DC_INDEX_FILE);
        }
        r = fd < 0 ? fd : at_tmp ? fs_version_is(fd, &xst, st, text, n, buf) : 1;
        if (r > 0) {
                r = fs_fsync(pfd);
                if (r >= 0 && at_tmp)
                        (void)unlinkat(pfd, DC_INDEX_TEMP, 0); /* the text replaced */
                return r < 0 ? dc_run_why(step, r, "cannot sync the project directory") : 1;
        }
        /* Deep Code's version (or one that cannot be read) is at the temp name: back to the name */
        for (unsigned round = 0; round < DC_RUN_SWAP_ROUNDS; round++) {
                _cleanup_close_ int y = -EBADF;
                _cleanup_free_ char *next = NULL;
                struct stat yst;
                size_t n_next = 0;
                bool back;

                /* its text: what the next exchange must bring back, if one is needed */
                if (fd < 0 || fs_read_fd(fd, DC_INDEX_MAX, &next, &n_next) < 0)
                        next = NULL;
                y = fs_exchange_open(pfd, DC_INDEX_TEMP, DC_INDEX_FILE, false, &back, &yst);
                if (y < 0 && !back)
                        return dc_run_index_keep(pfd, &xst, y, "cannot put Deep Code's "
                                                 DC_INDEX_FILE " back", step);
                r = y < 0 ? y : fs_version_is(y, &yst, &exp_st, exp, n_exp, buf);
                if (r != 0) {
                        int q = fs_fsync(pfd);

                        if (r > 0 && q >= 0)
                                (void)unlinkat(pfd, DC_INDEX_TEMP, 0); /* qgc's version */
                        if (r < 0 || q < 0) /* its version is back at the name */
                                return dc_run_why(step, r < 0 ? r : q,
                                                  "Deep Code's " DC_INDEX_FILE " is back, but "
                                                  "%s", r < 0 ? "what it replaced cannot be read"
                                                              : "the directory cannot be synced");
                        return 0;
                }
                /* Deep Code wrote into the version at the name: its newest, now at the temp
                 * name, goes back to the name; the one at the name must come back as it is */
                free(held);
                held = TAKE_PTR(next);
                exp = held ?: "";
                n_exp = held ? n_next : 0;
                exp_st = xst;
                macro_safe_close(fd);
                fd = TAKE_FD(y);
                xst = yst;
        }
        return dc_run_index_keep(pfd, &xst, -EAGAIN, "Deep Code rewrote " DC_INDEX_FILE
                                 " during its replace again and again", step);
}

int dc_run_index_edit(const struct StoreRun *run, int pfd, const char *code, const char *id,
                      DcRunIndexEditFn edit, void *userdata, const char *what, StoreStep *step) {
        for (unsigned try = 0; try < DC_RUN_INDEX_TRIES; try++) {
                _cleanup_free_ char *text = NULL, *again = NULL, *pcode = NULL, *out = NULL;
                json_object *root = NULL, *entries = NULL;
                StrBuf b = {};
                struct stat st, ost;
                size_t n = 0, n_again = 0;
                const char *orig;
                int r;

                r = dc_run_read(pfd, DC_INDEX_FILE, DC_INDEX_MAX, &text, &n, &st);
                if (r == -ENOENT)
                        return 0;
                if (r < 0)
                        return dc_run_why(step, r == -ENOMEM ? r : -EBADMSG,
                                          "cannot read " DC_INDEX_FILE);
                r = json_parse(text, n, &root);
                if (r == -ENOMEM)
                        return r;
                if (r >= 0 && js_stringify_indent(&b, root, 2) < 0)
                        r = -ENOMEM;
                if (r >= 0 && (b.len != n || memcmp(b.buf, text, n) != 0))
                        r = -EBADMSG;
                strbuf_done(&b);
                orig = r < 0 ? NULL : json_get_string(root, "originalPath");
                if (r >= 0 && (!json_object_object_get_ex(root, "entries", &entries) ||
                               !json_object_is_type(entries, json_type_array) || !orig))
                        r = -EBADMSG;
                if (r < 0) {
                        json_object_put(root);
                        return r == -ENOMEM ? r : dc_run_why(step, -EBADMSG,
                                DC_INDEX_FILE " is not what Deep Code writes "
                                "(JSON.stringify(index, null, 2)): never rewritten");
                }
                r = dc_project_code(orig, &pcode);
                if (r == -ENOMEM || (r >= 0 && !streq(pcode, code))) {
                        json_object_put(root);
                        return r == -ENOMEM ? r : dc_run_why(step, -ESTALE,
                                "its index's originalPath no longer names the project directory");
                }
                r = edit(entries, id, userdata, step);
                if (r != 1) {
                        json_object_put(root);
                        return r == 2 ? 1 : r;
                }
                r = js_stringify_indent(&b, root, 2);
                json_object_put(root);
                if (r < 0) {
                        strbuf_done(&b);
                        return -ENOMEM;
                }
                out = strbuf_steal(&b);
                if (!out)
                        return -ENOMEM;
                /* Deep Code has no lock: its processes are the only other writers */
                r = dc_run_live(run, code, step);
                if (r < 0)
                        return r;
                r = dc_run_write_temp(pfd, out, strlen(out), &st, &ost);
                if (r < 0) {
                        (void)unlinkat(pfd, DC_INDEX_TEMP, 0);
                        return dc_run_why(step, r, "cannot write " DC_INDEX_FILE "'s new text");
                }
                dc_run_hook(step, "replace projects/%s/" DC_INDEX_FILE " by its text %s session %s",
                            code, what, id);
                r = dc_run_read(pfd, DC_INDEX_FILE, DC_INDEX_MAX, &again, &n_again, NULL);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 || n_again != n || memcmp(again, text, n) != 0) {
                        (void)unlinkat(pfd, DC_INDEX_TEMP, 0);
                        continue; /* rewritten meanwhile: redone from its new text */
                }
                r = dc_run_index_put(pfd, text, n, &st, out, strlen(out), &ost, step);
                if (r == 0)
                        continue; /* rewritten meanwhile: given back, redone from its text */
                return r;
        }
        return dc_run_why(step, -EAGAIN, "Deep Code rewrote " DC_INDEX_FILE " during each of "
                          "%u edits", DC_RUN_INDEX_TRIES);
}

/* Remove name below (dfd, dir) after its hook, and sync the directory; its blocks are added to
 * step->bytes. 0 (also when absent, and when dir is a symlink or name a directory: planted, never
 * followed, left as Deep Code's own delete leaves a branch). */
static int dc_run_unlink(int dfd, const char *dir, const char *name, const char *shown,
                         StoreStep *step) {
        _cleanup_close_ int fd = fs_open_path(dfd, dir, 0);
        struct stat st;
        int r;

        if (fd == -ENOENT || fd == -ENOTDIR || fd == -ELOOP)
                return 0;
        if (fd < 0)
                return dc_run_why(step, fd, "cannot open %s", dir);
        r = fs_statat(fd, name, &st, NULL);
        if (r == -ENOENT || (r >= 0 && S_ISDIR(st.st_mode)))
                return 0;
        if (r < 0)
                return r;
        dc_run_hook(step, "remove %s", shown);
        r = fs_unlink(fd, name, 0);
        if (r < 0 && r != -ENOENT)
                return dc_run_why(step, r, "cannot remove %s", shown);
        if (r >= 0)
                step->bytes += (uint64_t)st.st_blocks * 512;
        r = fs_fsync(fd);
        return r < 0 ? dc_run_why(step, r, "cannot sync the directory of %s", shown) : 0;
}

int dc_run_rm_images(int images_fd, const char *id, dev_t dev, uint64_t *ret_bytes) {
        struct stat st;
        int r;

        *ret_bytes = 0;
        r = fs_statat(images_fd, id, &st, NULL);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        if (S_ISDIR(st.st_mode))
                return rm_rf_at(images_fd, id, dev, ret_bytes);
        /* a symlink or file planted there: the name goes, never what a link points to (as
         * Deep Code's own fs.rmSync(…, { recursive: true, force: true }) does) */
        r = fs_unlink(images_fd, id, 0);
        if (r >= 0)
                *ret_bytes = (uint64_t)st.st_blocks * 512;
        return r == -ENOENT ? 0 : r;
}

int dc_run_rm_branch(int pfd, const char *id, StoreStep *step) {
        _cleanup_free_ char *ref = util_strprintf("refs/heads/%s", id);
        int r;

        if (!ref)
                return -ENOMEM;
        r = dc_run_unlink(pfd, "file-history/.git/refs/heads", id, ref, step);
        if (r >= 0)
                r = dc_run_unlink(pfd, "file-history/.git/logs/refs/heads", id, "its reflog",
                                  step);
        return r;
}

char *dc_run_marker_text(const char *kind, const char *code, const char *id, const FileId *f) {
        return util_strprintf("qgc deepcode %s 1\ncode %s\nid %s\njsonl %d %" PRIu64 " %" PRIu64
                              " %" PRIu64 " %" PRIu64 " %" PRId64 " %" PRId64 "\n",
                              kind, code, id, f->present, (uint64_t)f->dev, (uint64_t)f->ino,
                              f->size, (uint64_t)f->blocks, f->mtime_ns, f->ctime_ns);
}

/* text, a marker's, parsed in place (-EBADMSG: not of kind, or not qgc's). */
static int dc_run_marker_parse(char *text, const char *kind, char **ret_code, char **ret_id,
                               FileId *ret) {
        _cleanup_free_ char *head = util_strprintf("qgc deepcode %s 1\ncode ", kind);
        char *code, *id, *jl, *e;
        uint64_t dev, ino, size, blocks;
        int present;

        if (!head)
                return -ENOMEM;
        if (!strneq(text, head, strlen(head)))
                return -EBADMSG;
        code = text + strlen(head);
        id = strstr(code, "\nid ");
        if (!id)
                return -EBADMSG;
        *id = 0;
        id += 4;
        jl = strstr(id, "\njsonl ");
        if (!jl)
                return -EBADMSG;
        *jl = 0;
        jl += 7;
        e = strchr(jl, '\n');
        if (!e || e[1] != 0)
                return -EBADMSG;
        *ret = (FileId){};
        if (sscanf(jl, "%d %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNd64 " %" SCNd64,
                   &present, &dev, &ino, &size, &blocks, &ret->mtime_ns, &ret->ctime_ns) != 7)
                return -EBADMSG;
        ret->present = present != 0;
        ret->dev = (dev_t)dev;
        ret->ino = (ino_t)ino;
        ret->size = size;
        ret->blocks = blocks;
        *ret_code = code;
        *ret_id = id;
        return 0;
}

int dc_run_marker_read(int qfd, const char *marker, const char *prefix,
                       const char *const *kinds, const char *what, char **ret_text,
                       char **ret_code, char **ret_id, FileId *ret_f, size_t *ret_kind,
                       StoreStep *step) {
        _cleanup_free_ char *text = NULL;
        size_t n, k = 0;
        int r;

        r = fs_read_file(qfd, marker, DC_RUN_MARKER_MAX, &text, &n);
        if (r < 0)
                return dc_run_why(step, r, "cannot read ~/.deepcode/" FS_STATE_DIR "/%s", marker);
        for (r = -EBADMSG; r == -EBADMSG && kinds[k]; k++)
                r = dc_run_marker_parse(text, kinds[k], ret_code, ret_id, ret_f);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || !dc_run_name_ok(*ret_code) || !*ret_id ||
            !dc_index_id_valid(*ret_id, strlen(*ret_id)) || !streq(marker + strlen(prefix), *ret_id))
                return dc_run_why(step, -EBADMSG, "~/.deepcode/" FS_STATE_DIR "/%s is not "
                                  "qgc's pending-%s marker: kept", marker, what);
        *ret_kind = k - 1;
        *ret_text = TAKE_PTR(text);
        return 0;
}

int dc_run_marker_write(struct StoreRun *run, const char *marker, const char *text,
                        const char *what, const char *id, StoreStep *step) {
        _cleanup_close_ int qfd = -EBADF;
        int r;

        qfd = fs_mkdir_open(run->store_fd, FS_STATE_DIR, 0700, 0, NULL, NULL);
        if (qfd < 0)
                return dc_run_why(step, qfd, "cannot create ~/.deepcode/" FS_STATE_DIR);
        if (fs_exists(qfd, marker) != 0)
                return dc_run_why(step, -EEXIST, "a pending %s of the same id is recorded", what);
        dc_run_hook(step, "write the pending-%s marker of session %s", what, id);
        r = fs_write_atomic(qfd, marker, text, strlen(text), 0600);
        if (r < 0)
                return dc_run_why(step, r, "cannot write the pending-%s marker", what);
        return TAKE_FD(qfd);
}

bool dc_run_name_ok(const char *s) {
        return s && *s && *s != '.' && !strpbrk(s, "/\n") && strlen(s) < 200;
}

static const DcRunRecovery *dc_run_recovery_of(const DcRunRecovery *kinds, const char *name) {
        for (; kinds->prefix; kinds++)
                if (strneq(name, kinds->prefix, strlen(kinds->prefix)))
                        return kinds;
        return NULL;
}

int dc_run_recover(struct StoreRun *run, const DcRunRecovery *kinds, StoreStep *step) {
        _cleanup_close_ int qfd = fs_open_dir(run->store_fd, FS_STATE_DIR);
        _cleanup_free_ FsDir *d = NULL;
        char **names = NULL;
        size_t n = 0, alloc = 0;
        const char *name;
        unsigned char type;
        int k, r = 0;

        if (qfd == -ENOENT)
                return 0;
        if (qfd < 0)
                return dc_run_why(step, qfd, "cannot open ~/.deepcode/" FS_STATE_DIR);
        d = malloc(sizeof(FsDir));
        if (!d)
                return -ENOMEM;
        fs_dir_init(d, qfd);
        while (n < DC_RUN_MARKERS_MAX && (k = fs_dir_next(d, &name, &type)) > 0) {
                if (fs_is_temp_name(name)) {
                        (void)unlinkat(qfd, name, 0); /* a killed marker write's */
                        continue;
                }
                if (!dc_run_recovery_of(kinds, name))
                        continue;
                if (util_greedy_realloc((void **)&names, &alloc, n + 1, sizeof(char *)) < 0 ||
                    !(names[n] = strdup(name))) {
                        k = -ENOMEM;
                        break;
                }
                n++;
        }
        if (k < 0)
                r = dc_run_why(step, k, "cannot list ~/.deepcode/" FS_STATE_DIR);
        /* a marker that fails (a forged one: kept and reported) stops no other marker */
        for (size_t i = 0; r != -ENOMEM && i < n; i++) {
                const DcRunRecovery *kind = dc_run_recovery_of(kinds, names[i]);
                int q = kind ? kind->recover(run, qfd, names[i], step) : 0;

                if (q > 0)
                        step->n_recovered++;
                else if (q < 0 && r >= 0)
                        r = q;
                else if (q == -ENOMEM)
                        r = q;
        }
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        return r;
}
