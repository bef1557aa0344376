/* dc-store.c: the scan of a Deep Code store (see dc-store.h): projects/<code>/ one by one, each
 * listed once, through the safe-filesystem layer, never following a symlink or crossing a mount
 * point. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "cold.h"
#include "dc-git.h"
#include "dc-proc.h"
#include "dc-project.h"
#include "dc-store.h"
#include "du.h"
#include "macro.h"

/* du_walk()'s callback: an entry counted into the DcBytes. */
static int dc_store_count(void *userdata, const char *rel, const struct stat *st) {
        DcBytes *b = userdata;

        (void)rel;
        b->bytes += (uint64_t)st->st_size;
        b->alloc += (uint64_t)st->st_blocks * 512;
        b->mtime = MAX(b->mtime, util_timespec_to_msec(&st->st_mtim));
        return 0;
}

/* du_walk()'s callback for file-history/: also the loose objects of .git
 * (.git/objects/<2 hex>/<38 hex>), which compaction packs. */
static int dc_store_count_git(void *userdata, const char *rel, const struct stat *st) {
        DcProject *p = userdata;
        size_t n = strlen(rel);

        if (S_ISREG(st->st_mode) && n == 13 + 2 + 1 + 38 && strneq(rel, ".git/objects/", 13) &&
            rel[15] == '/' && strspn(rel + 13, "0123456789abcdef") == 2 &&
            strspn(rel + 16, "0123456789abcdef") == 38) {
                p->git_loose++;
                p->git_loose_bytes += (uint64_t)st->st_size;
                p->git_loose_alloc += (uint64_t)st->st_blocks * 512;
        }
        return dc_store_count(&p->file_history, rel, st);
}

/* du of the directory dir/name (name NULL: dir itself) into b. */
static int dc_store_du(const char *dir, const char *name, DcBytes *b) {
        _cleanup_free_ char *path = name ? util_path_join(dir, name) : NULL;
        int r;

        if (name && !path)
                return -ENOMEM;
        r = du_walk(path ?: dir, NULL, dc_store_count, b, &b->incomplete);
        if (r < 0 && r != -ENOMEM)
                b->incomplete = true;
        return r == -ENOMEM ? r : 0;
}

void dc_store_session_done(DcSession *s) {
        free(s->id);
        free(s->summary);
        free(s->forked_from);
        free(s->why);
        free(s->arc_why);
        free(s->arc_hashes);
        dc_messages_done(&s->messages);
}

/* Does session d keep its branch and checkpoints: listed by Deep Code, a transcript of the
 * project, or in qgc's archive? */
static bool dc_store_kept(const DcSession *d) {
        return d->indexed || d->jsonl.present || d->archived;
}

DcStore *dc_store_free(DcStore *s) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n_projects; i++) {
                DcProject *p = &s->projects[i];

                for (size_t j = 0; j < p->n_sessions; j++)
                        dc_store_session_done(&p->sessions[j]);
                free(p->sessions);
                free(p->code);
                free(p->original_path);
                free(p->git_why);
        }
        free(s->projects);
        free(s);
        return NULL;
}

/* The session of id in p, added (not indexed) when absent; NULL on ENOMEM. */
static DcSession *dc_store_session(DcProject *p, const char *id, size_t n) {
        DcSession *s;

        for (size_t i = 0; i < p->n_sessions; i++)
                if (strlen(p->sessions[i].id) == n && memcmp(p->sessions[i].id, id, n) == 0)
                        return &p->sessions[i];
        if (util_greedy_realloc((void **)&p->sessions, &p->alloc_sessions, p->n_sessions + 1,
                                sizeof(DcSession)) < 0)
                return NULL;
        s = &p->sessions[p->n_sessions];
        *s = (DcSession){ .id = strndup(id, n), .status = DC_STATUS_PENDING };
        if (!s->id)
                return NULL;
        p->n_sessions++;
        return s;
}

/* The index's entries become the first sessions, taking their strings. */
static int dc_store_indexed(DcProject *p, DcIndex *idx) {
        for (size_t i = 0; i < idx->n_entries; i++) {
                DcEntry *e = &idx->entries[i];
                DcSession *s;

                if (!e->id) {
                        p->n_nameless++;
                        continue;
                }
                s = dc_store_session(p, e->id, strlen(e->id));
                if (!s)
                        return -ENOMEM;
                if (s->indexed)
                        continue; /* a second entry of the id: Deep Code finds the first */
                s->indexed = true;
                s->summary = TAKE_PTR(e->summary);
                s->forked_from = TAKE_PTR(e->forked_from);
                s->status = e->status;
                s->create_time = e->create_time;
                s->update_time = e->update_time;
        }
        return 0;
}

/* images/: each images/<id>/ measured and given to its session. */
static int dc_store_images(DcProject *p, int pfd, dev_t dev, const char *ppath) {
        _cleanup_close_ int fd = fs_open_noatime(pfd, "images", O_RDONLY | O_DIRECTORY);
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        _cleanup_free_ char *ipath = util_path_join(ppath, "images");
        const char *name;
        unsigned char type;
        struct stat ist;
        int k;

        if (!d || !ipath)
                return -ENOMEM;
        if (fd < 0) {
                p->incomplete = true;
                return fd == -ENOMEM ? fd : 0;
        }
        if (fstat(fd, &ist) >= 0)
                fs_fileid_from_stat(&p->images, &ist);
        p->images_empty = true;
        fs_dir_init(d, fd);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                DcSession *s;
                struct stat st;
                bool mount = false;
                int r;

                p->images_empty = false;
                if (fs_statat(fd, name, &st, &mount) < 0 || !S_ISDIR(st.st_mode) ||
                    st.st_dev != dev || mount)
                        continue; /* counted in the project's total only */
                s = dc_store_session(p, name, strlen(name));
                if (!s)
                        return -ENOMEM;
                s->has_images = true;
                fs_fileid_from_stat(&s->images_dir, &st);
                r = dc_store_du(ipath, name, &s->images);
                if (r < 0)
                        return r;
        }
        if (k == -ENOMEM)
                return k;
        if (k < 0)
                p->incomplete = true;
        return 0;
}

/* The project directory's entries: <id>.jsonl files, images/, file-history/. */
static int dc_store_list(DcProject *p, int pfd, dev_t dev, const char *ppath) {
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        const char *name;
        unsigned char type;
        int k, r;

        if (!d)
                return -ENOMEM;
        fs_dir_init(d, pfd);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                size_t n = strlen(name);
                struct stat st;
                bool mount = false;
                DcSession *s;

                if (fs_statat(pfd, name, &st, &mount) < 0 || st.st_dev != dev || mount)
                        continue;
                if (S_ISDIR(st.st_mode) && streq(name, "images"))
                        r = dc_store_images(p, pfd, dev, ppath);
                else if (S_ISDIR(st.st_mode) && streq(name, "file-history")) {
                        p->has_file_history = true;
                        _cleanup_free_ char *fh = util_path_join(ppath, name);

                        r = fh ? du_walk(fh, NULL, dc_store_count_git, p,
                                         &p->file_history.incomplete) : -ENOMEM;
                        if (r < 0 && r != -ENOMEM) {
                                p->file_history.incomplete = true;
                                r = 0;
                        }
                } else if (S_ISREG(st.st_mode) && n > 6 && streq(name + n - 6, ".jsonl")) {
                        s = dc_store_session(p, name, n - 6);
                        if (!s)
                                return -ENOMEM;
                        fs_fileid_from_stat(&s->jsonl, &st);
                        r = 0;
                } else if (S_ISREG(st.st_mode) && streq(name, DC_STALE_MARKER)) {
                        fs_fileid_from_stat(&p->marker, &st);
                        r = 0;
                } else {
                        p->unknown = p->unknown || !streq(name, DC_INDEX_FILE);
                        r = 0;
                }
                if (r < 0)
                        return r;
        }
        if (k == -ENOMEM)
                return k;
        if (k < 0)
                p->incomplete = true;
        return 0;
}

/* The name's id when it ends in suffix (and has one), else NULL; *ret_n its length. */
static const char *dc_store_suffixed(const char *name, const char *suffix, size_t *ret_n) {
        size_t n = strlen(name), k = strlen(suffix);

        if (n <= k || !streq(name + n - k, suffix))
                return NULL;
        *ret_n = n - k;
        return name;
}

/* <id>.checkpoints (in cfd) into d->arc_hashes: lines of 40 lower-case hex digits. 0, -EBADMSG
 * (not that), -ENOMEM, -errno. */
static int dc_store_arc_hashes(DcSession *d, int cfd, const char *name) {
        _cleanup_close_ int fd = fs_open_noatime(cfd, name, O_RDONLY);
        _cleanup_free_ char *text = NULL;
        size_t n = 0, k = 0;
        int r;

        r = fd < 0 ? fd : fs_read_fd(fd, DC_ARCHIVE_CHECKPOINTS_MAX, &text, &n);
        if (r < 0)
                return r;
        if (n % (DC_HASH_LEN + 1) != 0)
                return -EBADMSG;
        d->arc_hashes = calloc(n / (DC_HASH_LEN + 1) + 1, sizeof(*d->arc_hashes));
        if (!d->arc_hashes)
                return -ENOMEM;
        for (const char *l = text; l < text + n; l += DC_HASH_LEN + 1, k++) {
                if (strspn(l, "0123456789abcdef") != DC_HASH_LEN || l[DC_HASH_LEN] != '\n')
                        return -EBADMSG;
                memcpy(d->arc_hashes[k], l, DC_HASH_LEN);
        }
        d->n_arc_hashes = k;
        return 0;
}

/* The archive files of session d (in cfd, the archive's <code>/): its entry (the index's fields
 * when the index does not name it), checkpoints and the .zst's record, or d->arc_why. */
static int dc_store_arc_read(DcSession *d, int cfd) {
        _cleanup_free_ char *entry = util_strprintf("%s" DC_ARCHIVE_ENTRY, d->id);
        _cleanup_free_ char *hashes = util_strprintf("%s" DC_ARCHIVE_CHECKPOINTS, d->id);
        _cleanup_free_ char *zst = util_strprintf("%s" DC_ARCHIVE_ZST, d->id);
        _cleanup_close_ int zfd = -EBADF;
        const char *why = NULL;
        char sha[65];
        DcEntry e;
        int r;

        if (!entry || !hashes || !zst)
                return -ENOMEM;
        r = d->arc_entry.present ? dc_index_entry_read(cfd, entry, &e) : -ENOENT;
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && !streq(e.id, d->id))
                why = "its archived index entry names another id";
        else if (r < 0)
                why = "its archived index entry (" DC_ARCHIVE_ENTRY ") is missing or not an entry";
        if (r >= 0 && !d->indexed) {
                d->summary = TAKE_PTR(e.summary);
                d->forked_from = TAKE_PTR(e.forked_from);
                d->status = e.status;
                d->create_time = e.create_time;
                d->update_time = e.update_time;
        }
        if (r >= 0)
                dc_index_entry_done(&e);
        r = d->arc_checkpoints.present ? dc_store_arc_hashes(d, cfd, hashes) : -ENOENT;
        if (r == -ENOMEM)
                return r;
        if (r < 0 && !why)
                why = "its archived checkpoints (" DC_ARCHIVE_CHECKPOINTS ") are missing or unreadable";
        /* a plain transcript read as Deep Code's are (the proof, its first prompt): unless Deep
         * Code has one too (a conflict: that one is read) */
        if (d->arc_jsonl.present && !d->jsonl.present) {
                r = dc_messages_read(cfd, d->id, &d->messages);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && !why)
                        why = "its archived transcript cannot be read";
                else if (r >= 0 && !d->messages.proven && !why)
                        why = d->messages.why;
        }
        if (d->arc_zst.present) {
                zfd = fs_open_noatime(cfd, zst, O_RDONLY);
                r = zfd < 0 ? zfd : cold_read_trailer(zfd, &d->arc_zst_orig, sha);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && !why)
                        why = "its compressed transcript has no valid record of its original";
        }
        if (why && !(d->arc_why = strdup(why)))
                return -ENOMEM;
        return 0;
}

int dc_store_archived(DcProject *p, int archive_fd, dev_t dev, const char *apath) {
        _cleanup_close_ int cfd = archive_fd < 0 ? -EBADF
                                                 : fs_open_noatime(archive_fd, p->code,
                                                                   O_RDONLY | O_DIRECTORY);
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        _cleanup_free_ char *cpath = apath ? util_path_join(apath, p->code) : NULL;
        const char *name;
        unsigned char type;
        struct stat st;
        int k, r;

        if (!d || (apath && !cpath))
                return -ENOMEM;
        if (cfd == -ENOENT || cfd == -EBADF)
                return 0;
        if (cfd < 0 || fstat(cfd, &st) < 0 || st.st_dev != dev) {
                p->incomplete = true;
                return cfd == -ENOMEM ? cfd : 0;
        }
        fs_dir_init(d, cfd);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                const char *id;
                size_t n = 0;
                bool mount = false;
                DcSession *s;
                FileId *f;

                if (fs_is_temp_name(name) || fs_statat(cfd, name, &st, &mount) < 0 ||
                    st.st_dev != dev || mount)
                        continue; /* counted in the store's total only */
                if (S_ISDIR(st.st_mode))
                        id = dc_store_suffixed(name, DC_ARCHIVE_IMAGES, &n);
                else if (!S_ISREG(st.st_mode))
                        id = NULL;
                else if ((id = dc_store_suffixed(name, ".jsonl" COLD_SUFFIX, &n)) ||
                         (id = dc_store_suffixed(name, ".jsonl", &n)) ||
                         (id = dc_store_suffixed(name, DC_ARCHIVE_ENTRY, &n)))
                        ;
                else
                        id = dc_store_suffixed(name, DC_ARCHIVE_CHECKPOINTS, &n);
                if (!id)
                        continue;
                s = dc_store_session(p, id, n);
                if (!s)
                        return -ENOMEM;
                f = S_ISDIR(st.st_mode)                 ? &s->arc_images_dir
                    : strstr(name + n, COLD_SUFFIX)     ? &s->arc_zst
                    : streq(name + n, ".jsonl")         ? &s->arc_jsonl
                    : streq(name + n, DC_ARCHIVE_ENTRY) ? &s->arc_entry
                                                        : &s->arc_checkpoints;
                fs_fileid_from_stat(f, &st);
                if (f == &s->arc_images_dir && cpath) {
                        r = dc_store_du(cpath, name, &s->arc_images);
                        if (r < 0)
                                return r;
                }
        }
        if (k == -ENOMEM)
                return k;
        if (k < 0)
                p->incomplete = true;
        for (size_t i = 0; i < p->n_sessions; i++) {
                DcSession *s = &p->sessions[i];

                s->archived = s->arc_jsonl.present || s->arc_zst.present;
                if (s->archived && (r = dc_store_arc_read(s, cfd)) < 0)
                        return r;
                if (s->archived)
                        p->n_archived++;
        }
        return 0;
}

/* The proof and liveness of session s of project p. */
static int dc_store_session_check(DcProject *p, DcSession *s, int pfd, msec_t now) {
        bool busy = s->status == DC_STATUS_PROCESSING || s->status == DC_STATUS_ASK_PERMISSION ||
                    s->status == DC_STATUS_WAITING_FOR_USER;
        const char *why = NULL;
        int r;

        s->live = p->live;
        s->live_pid = p->live_pid;
        if (!dc_index_id_valid(s->id, strlen(s->id)))
                why = "its id cannot be a file name";
        else if (s->jsonl.present) {
                r = dc_messages_read(pfd, s->id, &s->messages);
                if (r == -ENOMEM)
                        return r;
                s->jsonl = s->messages.file; /* not present when gone since it was listed */
                if (s->jsonl.present && !s->messages.proven)
                        why = s->messages.why;
                s->last_write = s->jsonl.present ? util_nsec_to_msec(s->jsonl.mtime_ns) : 0;
        }
        if (!why && s->archived && s->arc_why)
                why = s->arc_why;
        if (!why && p->absent)
                why = "its project directory is gone";
        if (!why && !p->code_proven)
                why = p->index_state == DC_INDEX_OK ?
                      "the index's originalPath does not map to the project's directory name" :
                      "the project's index cannot be read as Deep Code writes it";
        s->proven = !why;
        if (why && !(s->why = strdup(why)))
                return -ENOMEM;
        s->last_write = MAX(s->last_write, s->images.mtime);
        if (s->archived) /* a link and the .zst keep the transcript's mtime */
                s->last_write = MAX(s->last_write,
                                    util_nsec_to_msec((s->arc_jsonl.present ? s->arc_jsonl
                                                                         : s->arc_zst).mtime_ns));
        if (busy && (s->update_time == 0 || now - s->update_time < DC_STATUS_WINDOW))
                s->live |= DC_LIVE_STATUS;
        /* a rename to a prefix of the first prompt reads as not renamed; a compressed session
         * was not renamed: Deep Code cannot rename what it does not list, and qgc compresses no
         * session its protections keep (titled by a person) */
        s->summary_manual = s->summary && !streq(s->summary, "[Image Prompt]") &&
                            !(s->messages.prompt &&
                              strneq(s->messages.prompt, s->summary, strlen(s->summary))) &&
                            !(s->archived && !s->jsonl.present && !s->arc_jsonl.present);
        return 0;
}

/* Scan projects/<name> (stat st) into a new project of s. */
static int dc_store_project(DcStore *s, const DcProcs *procs, int projects_fd,
                            const char *projects_path, int archive_fd, const char *archive_path,
                            const char *name, const struct stat *st, msec_t now) {
        _cleanup_close_ int pfd = fs_open_noatime(projects_fd, name, O_RDONLY | O_DIRECTORY);
        _cleanup_free_ char *code = NULL, *ppath = NULL;
        DcIndex idx = {};
        struct stat rst, ist;
        DcProject *p;
        int r;

        if (util_greedy_realloc((void **)&s->projects, &s->alloc_projects, s->n_projects + 1,
                                sizeof(DcProject)) < 0)
                return -ENOMEM;
        p = &s->projects[s->n_projects];
        *p = (DcProject){ .code = strdup(name), .root = DC_ROOT_UNKNOWN };
        if (!p->code)
                return -ENOMEM;
        fs_fileid_from_stat(&p->dir, st);
        s->n_projects++;
        if (pfd < 0) {
                p->incomplete = true;
                p->index_state = DC_INDEX_UNREADABLE;
                return pfd == -ENOMEM ? pfd : 0;
        }
        ppath = util_path_join(projects_path, name);
        if (!ppath)
                return -ENOMEM;
        r = dc_store_du(ppath, NULL, &p->total);
        if (r < 0)
                return r;
        /* its identity before the read: a rewrite after it shows as a change */
        if (fs_statat(pfd, DC_INDEX_FILE, &ist, NULL) >= 0)
                fs_fileid_from_stat(&p->index, &ist);
        r = dc_index_read(pfd, &idx);
        if (r < 0)
                return r;
        p->index_state = idx.state;
        p->n_entries = idx.n_entries;
        p->original_path = TAKE_PTR(idx.original_path);
        r = dc_store_indexed(p, &idx);
        dc_index_done(&idx);
        if (r < 0)
                return r;
        if (p->original_path) {
                r = dc_project_code(p->original_path, &code);
                if (r == -ENOMEM)
                        return r;
                p->code_proven = r >= 0 && streq(code, name);
                if (stat(p->original_path, &rst) == 0)
                        p->root = S_ISDIR(rst.st_mode) ? DC_ROOT_EXISTS : DC_ROOT_GONE;
                else if (errno == ENOENT || errno == ENOTDIR)
                        p->root = DC_ROOT_GONE;
        }
        r = dc_proc_find(procs, name, s->uid, &p->live_pid);
        p->live = r > 0 ? DC_LIVE_PROCESS : r < 0 ? DC_LIVE_UNKNOWN : 0;
        r = dc_store_list(p, pfd, st->st_dev, ppath);
        if (r >= 0)
                r = dc_store_archived(p, archive_fd, st->st_dev, archive_path);
        for (size_t i = 0; r >= 0 && i < p->n_sessions; i++)
                r = dc_store_session_check(p, &p->sessions[i], pfd, now);
        return r;
}

/* Why the checkpoint repository of p may not be compacted now, or NULL: its index must parse and
 * prove the code, no Deep Code process may work in it, no session be in a prompt, and every
 * transcript be read to its end (its checkpoints known). */
static const char *dc_store_git_blocked(const DcProject *p) {
        if (p->index_state != DC_INDEX_OK || !p->code_proven)
                return "its index cannot be read, or does not prove the project's directory";
        if (p->live & (DC_LIVE_PROCESS | DC_LIVE_UNKNOWN))
                return "a Deep Code process may work in the project";
        if (p->incomplete || p->file_history.incomplete)
                return "the project could not be listed in full";
        for (size_t i = 0; i < p->n_sessions; i++) {
                const DcSession *d = &p->sessions[i];

                if (d->live & DC_LIVE_STATUS)
                        return "a session of the project is in a prompt";
                if (d->jsonl.present && !d->messages.complete)
                        return "a transcript could not be read to its end: its checkpoints are unknown";
                if (d->archived && !d->arc_hashes)
                        return "an archived session's checkpoints are unknown";
        }
        return NULL;
}

/* Does projects/<code>/file-history/.git/refs/heads/ (open at hfd) hold a session's branch
 * (dc_git_is_session_id()) of no session of p: what Deep Code's delete and cap leave? */
static int dc_store_stale_refs(const DcProject *p, int hfd) {
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        const char *name;
        unsigned char type;
        int k;

        if (!d)
                return -ENOMEM;
        fs_dir_init(d, hfd);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                bool kept = !dc_git_is_session_id(name);

                for (size_t i = 0; i < p->n_sessions && !kept; i++)
                        kept = dc_store_kept(&p->sessions[i]) && streq(p->sessions[i].id, name);
                if (!kept)
                        return 1;
        }
        return k;
}

/* The compaction of each project's file-history/.git that may be compacted, into p->git_*:
 * planned when a session's branch of no session is left or an object is loose. From the scan
 * alone: git reads without O_NOATIME, and a plan changes no atime (dc_git_plan() runs in the
 * run, dc-reclaim.c). 0 or -ENOMEM. */
static int dc_store_plan_git(DcStore *s, int fd) {
        for (size_t i = 0; i < s->n_projects; i++) {
                DcProject *p = &s->projects[i];
                _cleanup_free_ char *rel = NULL;
                _cleanup_close_ int gfd = -EBADF, hfd = -EBADF;
                const char *why = dc_store_git_blocked(p);
                struct stat st;
                int r = 0;

                if (!p->has_file_history)
                        continue;
                rel = util_strprintf("projects/%s/file-history/.git", p->code);
                if (!rel)
                        return -ENOMEM;
                gfd = why ? -EBADF : fs_open_noatime(fd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
                if (!why && (gfd < 0 || fstat(gfd, &st) < 0 || st.st_dev != s->dev))
                        why = "file-history/.git cannot be opened";
                if (!why) {
                        fs_fileid_from_stat(&p->git, &st);
                        hfd = fs_open_noatime(gfd, "refs/heads", O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
                        r = hfd >= 0 ? dc_store_stale_refs(p, hfd) : 0;
                        if (r == -ENOMEM)
                                return r;
                        p->git_planned = r > 0 || p->git_loose > 0;
                        /* packing frees at least the loose objects' slack; the run's
                         * dc_git_plan() knows the rest (pruned objects) */
                        p->git_estimate = p->git_loose_alloc - MIN(p->git_loose_alloc,
                                                                   p->git_loose_bytes);
                        why = p->git_planned ? NULL : "nothing to compact";
                }
                if (why && !(p->git_why = strdup(why)))
                        return -ENOMEM;
        }
        return 0;
}

/* The codes of qgc's archive (open at afd) with no project directory: each an absent project of
 * s, its archived sessions unproven (nothing is restored into, nor decided for, a project that
 * is gone). */
static int dc_store_arc_absent(DcStore *s, int afd, const char *apath, msec_t now) {
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        const char *name;
        unsigned char type;
        int k, r;

        if (!d)
                return -ENOMEM;
        fs_dir_init(d, afd);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                bool mount = false, found = false;
                struct stat st;
                DcProject *p;

                for (size_t i = 0; i < s->n_projects && !found; i++)
                        found = streq(s->projects[i].code, name);
                if (found || fs_statat(afd, name, &st, &mount) < 0 || !S_ISDIR(st.st_mode) ||
                    st.st_dev != s->dev || mount)
                        continue;
                if (util_greedy_realloc((void **)&s->projects, &s->alloc_projects,
                                        s->n_projects + 1, sizeof(DcProject)) < 0)
                        return -ENOMEM;
                p = &s->projects[s->n_projects];
                *p = (DcProject){ .code = strdup(name), .root = DC_ROOT_UNKNOWN, .absent = true,
                                  .index_state = DC_INDEX_ABSENT };
                if (!p->code)
                        return -ENOMEM;
                s->n_projects++;
                r = dc_store_archived(p, afd, s->dev, apath);
                for (size_t i = 0; r >= 0 && i < p->n_sessions; i++)
                        r = dc_store_session_check(p, &p->sessions[i], -EBADF, now);
                if (r < 0)
                        return r;
        }
        if (k == -ENOMEM)
                return k;
        s->incomplete = s->incomplete || k < 0;
        return 0;
}

int dc_store_scan(const char *path, msec_t now, DcStore **ret) {
        _cleanup_close_ int fd = fs_open_root(path, 0), pfd = -EBADF, lfd = -EBADF, afd = -EBADF;
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        _cleanup_free_ char *projects_path = util_path_join(path, "projects");
        _cleanup_free_ char *archive_path = util_path_join(path, DC_ARCHIVE_DIR);
        DcProcs procs = {};
        const char *name;
        unsigned char type;
        struct statvfs vfs;
        struct stat st;
        DcStore *s;
        int k, r;

        if (!d || !projects_path || !archive_path)
                return -ENOMEM;
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        s = calloc(1, sizeof(DcStore));
        if (!s)
                return -ENOMEM;
        s->uid = st.st_uid;
        s->dev = st.st_dev;
        if (fstatvfs(fd, &vfs) == 0) {
                s->fs_size = (uint64_t)vfs.f_blocks * vfs.f_frsize;
                s->fs_avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
                s->fs_known = true;
        }
        r = dc_store_du(path, NULL, &s->total);
        if (r >= 0)
                r = dc_proc_scan(&procs);
        if (r < 0)
                goto fail;
        lfd = fs_open_dir(fd, "logs");
        if (lfd >= 0 && fs_statat(lfd, "error.log", &st, NULL) >= 0)
                fs_fileid_from_stat(&s->error_log, &st);
        afd = fs_open_noatime(fd, DC_ARCHIVE_DIR, O_RDONLY | O_DIRECTORY);
        if (afd >= 0 && (fstat(afd, &st) < 0 || st.st_dev != s->dev)) {
                macro_safe_close(afd);
                afd = -EXDEV;
        }
        s->incomplete = afd < 0 && afd != -ENOENT;
        pfd = fs_open_noatime(fd, "projects", O_RDONLY | O_DIRECTORY);
        if (pfd < 0) {
                s->incomplete = s->incomplete || pfd != -ENOENT;
                goto done;
        }
        fs_dir_init(d, pfd);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                bool mount = false;

                if (fs_statat(pfd, name, &st, &mount) < 0 || !S_ISDIR(st.st_mode) ||
                    st.st_dev != s->dev || mount)
                        continue; /* counted in the store's total only */
                r = dc_store_project(s, &procs, pfd, projects_path, afd, archive_path, name, &st,
                                     now);
                if (r < 0)
                        goto fail;
        }
        if (k == -ENOMEM) {
                r = k;
                goto fail;
        }
        s->incomplete = s->incomplete || k < 0;
done:
        r = afd >= 0 ? dc_store_arc_absent(s, afd, archive_path, now) : 0;
        if (r >= 0)
                r = dc_store_plan_git(s, fd);
        if (r < 0)
                goto fail;
        dc_proc_done(&procs);
        *ret = s;
        return 0;
fail:
        dc_proc_done(&procs);
        dc_store_free(s);
        return r;
}

/* Is d a transcript the index does not name, proven its project's, of no live project: an
 * orphan (ORPHAN_DC_UNINDEXED) rather than a session? */
static bool dc_store_unindexed_orphan(const DcProject *p, const DcSession *d) {
        return !d->indexed && !d->archived && d->jsonl.present && d->proven && p->code_proven &&
               !p->live && !d->live && strlen(d->id) <= SESSION_ID_MAX;
}

static int dc_store_session_record(const DcProject *p, const DcSession *d, size_t tree, msec_t now,
                                   Session *s) {
        char ago[FORMAT_DURATION_MAX];

        *s = (Session){ .state = SESSION_ACTIVE, .tree = (uint32_t)tree, .active = d->jsonl };
        strcpy(s->id, d->id);
        s->empty = d->jsonl.present && d->jsonl.size == 0;
        s->tail_incomplete = d->messages.tail_incomplete;
        s->title_manual = d->summary_manual;
        s->transcript_bytes = d->jsonl.size;
        s->bytes = d->jsonl.size + d->images.bytes;
        s->bytes_alloc = d->jsonl.blocks + d->images.alloc;
        s->mtime = d->jsonl.present ? util_nsec_to_msec(d->jsonl.mtime_ns) : 0;
        if (d->archived) {
                /* Deep Code lists it too (a restore or an archive cut short): both left alone */
                s->state = d->indexed || d->jsonl.present || d->has_images ? SESSION_CONFLICT
                                                                           : SESSION_ARCHIVED;
                s->archived = d->arc_jsonl.present ? d->arc_jsonl : d->arc_zst;
                s->cold = !d->arc_jsonl.present;
                s->cold_copy = d->arc_jsonl.present && d->arc_zst.present;
                s->cold_bytes = d->arc_zst.size;
                s->cold_orig = d->arc_zst.present ? d->arc_zst_orig : 0;
                s->archived_at = util_nsec_to_msec(d->arc_entry.mtime_ns);
                s->restore_full = p->n_entries >= DC_INDEX_ENTRIES_MAX;
                s->bytes += d->arc_jsonl.size + d->arc_zst.size + d->arc_entry.size +
                            d->arc_checkpoints.size + d->arc_images.bytes;
                s->bytes_alloc += d->arc_jsonl.blocks + d->arc_zst.blocks + d->arc_entry.blocks +
                                  d->arc_checkpoints.blocks + d->arc_images.alloc;
                if (!d->jsonl.present) {
                        s->transcript_bytes = s->cold ? d->arc_zst_orig : d->arc_jsonl.size;
                        s->empty = s->transcript_bytes == 0;
                        s->mtime = util_nsec_to_msec(s->archived.mtime_ns);
                }
        }
        s->last_write = d->last_write;
        s->first_record = d->create_time;
        s->last_record = d->update_time;
        s->last_activity = MAX(s->mtime, s->last_record);
        s->future_clamped = s->last_activity > now;
        s->last_activity = MIN(s->last_activity, now);
        s->owner = d->proven && (d->indexed || d->archived) ? OWNER_OK : OWNER_UNVERIFIED;
        s->owner_cause = s->owner == OWNER_OK ? OWNER_CAUSE_CWD : OWNER_CAUSE_UNREADABLE;
        s->project_dir = strdup(p->code);
        if (!s->project_dir)
                return -ENOMEM;
        if (p->code_proven && !(s->cwd = strdup(p->original_path)))
                return -ENOMEM;
        if (s->owner != OWNER_OK &&
            !(s->owner_detail = strdup(d->why ?: "the index does not name it: Deep Code cannot list it")))
                return -ENOMEM;
        if (d->summary && !(s->title = strdup(d->summary)))
                return -ENOMEM;
        s->live = (d->live & DC_LIVE_PROCESS ? LIVE_REGISTRY : 0) |
                  (d->live & DC_LIVE_STATUS ? LIVE_CLAIM : 0) |
                  (d->live & DC_LIVE_UNKNOWN ? LIVE_UNKNOWN : 0);
        if (d->live & DC_LIVE_PROCESS)
                s->live_reason =
                        util_strprintf("Deep Code pid %d works in its project", (int)d->live_pid);
        else if (d->live & DC_LIVE_STATUS)
                s->live_reason = util_strprintf(
                        "its index status is %s, updated %s ago",
                        dc_index_status_to_string(d->status),
                        util_format_duration(ago, sizeof(ago), now - d->update_time));
        else if (d->live & DC_LIVE_UNKNOWN)
                s->live_reason = strdup("a Deep Code process whose working directory cannot be read");
        return s->live && !s->live_reason ? -ENOMEM : 0;
}

int dc_store_inventory(const DcStore *s, Inventory *inv, size_t tree, msec_t now) {
        Tree *t = &inv->trees[tree];

        t->dev = s->dev;
        t->fs_size = s->fs_size;
        t->fs_avail = s->fs_avail;
        t->fs_known = s->fs_known;
        t->incomplete = t->incomplete || s->incomplete;
        for (size_t i = 0; i < s->n_projects; i++) {
                const DcProject *p = &s->projects[i];

                t->incomplete = t->incomplete || p->incomplete || p->total.incomplete;
                for (size_t j = 0; j < p->n_sessions; j++) {
                        const DcSession *d = &p->sessions[j];
                        Session rec;
                        int r;

                        if (!dc_store_kept(d))
                                continue; /* images/<id>/ alone, or archive files alone */
                        if (dc_store_unindexed_orphan(p, d))
                                continue; /* ORPHAN_DC_UNINDEXED */
                        if (strlen(d->id) > SESSION_ID_MAX) {
                                t->incomplete = true;
                                continue;
                        }
                        r = dc_store_session_record(p, d, tree, now, &rec);
                        if (r >= 0)
                                r = inventory_add_session(inv, &rec);
                        else
                                inventory_session_done(&rec);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

int dc_store_git_input(const DcProject *p, const char ***ret_kept, size_t *ret_n_kept,
                       const char ***ret_named, size_t *ret_n_named) {
        size_t n_named = 0, n_kept = 0, k = 0;
        const char **kept, **named;

        for (size_t i = 0; i < p->n_sessions; i++)
                n_named += p->sessions[i].messages.n_checkpoints + p->sessions[i].n_arc_hashes;
        kept = calloc(p->n_sessions + 1, sizeof(char *));
        named = calloc(n_named + 1, sizeof(char *));
        if (!kept || !named) {
                free(kept);
                free(named);
                return -ENOMEM;
        }
        for (size_t i = 0; i < p->n_sessions; i++) {
                const DcSession *d = &p->sessions[i];

                /* an unindexed transcript keeps its branch until it goes itself */
                if (dc_store_kept(d))
                        kept[n_kept++] = d->id;
                for (size_t j = 0; j < d->messages.n_checkpoints; j++)
                        named[k++] = d->messages.checkpoints[j];
                for (size_t j = 0; j < d->n_arc_hashes; j++)
                        named[k++] = d->arc_hashes[j];
        }
        *ret_kept = kept;
        *ret_n_kept = n_kept;
        *ret_named = named;
        *ret_n_named = k;
        return 0;
}

static int dc_store_orphan(Inventory *inv, OrphanKind kind, size_t tree, const char *dir,
                           const char *name, const FileId *id, uint64_t bytes, uint64_t alloc,
                           msec_t mtime) {
        Orphan o = { .kind = kind, .tree = tree, .project_dir = dir ? strdup(dir) : NULL,
                     .name = strdup(name), .dir = *id, .bytes = bytes, .bytes_alloc = alloc,
                     .mtime = mtime };

        if ((dir && !o.project_dir) || !o.name) {
                inventory_orphan_done(&o);
                return -ENOMEM;
        }
        return inventory_add_orphan(inv, &o);
}

/* The orphans of project p: project_dir its code, as its sessions'. */
static int dc_store_project_orphans(const DcProject *p, Inventory *inv, size_t tree) {
        const char *dir = p->code;
        int r = 0;

        if (!p->code_proven || p->live)
                return 0;
        if (p->git_planned)
                r = dc_store_orphan(inv, ORPHAN_DC_CHECKPOINTS, tree, dir, "file-history",
                                    &p->git, p->git_estimate, p->git_estimate,
                                    p->file_history.mtime);
        if (r >= 0 && p->images.present && p->images_empty)
                r = dc_store_orphan(inv, ORPHAN_DC_IMAGES, tree, dir, "images", &p->images, 0,
                                    0, util_nsec_to_msec(p->images.mtime_ns));
        for (size_t i = 0; r >= 0 && i < p->n_sessions; i++) {
                const DcSession *d = &p->sessions[i];

                if (dc_store_unindexed_orphan(p, d))
                        r = dc_store_orphan(inv, ORPHAN_DC_UNINDEXED, tree, dir, d->id, &d->jsonl,
                                            d->jsonl.size + d->images.bytes,
                                            d->jsonl.blocks + d->images.alloc, d->last_write);
                else if (!dc_store_kept(d) && d->has_images &&
                         strlen(d->id) <= SESSION_ID_MAX) {
                        _cleanup_free_ char *name = util_path_join("images", d->id);

                        r = name ? dc_store_orphan(inv, ORPHAN_DC_IMAGES, tree, dir, name,
                                                   &d->images_dir, d->images.bytes,
                                                   d->images.alloc, d->images.mtime)
                                 : -ENOMEM;
                }
        }
        return r;
}

/* Why stale project p may not go (Qwen's guards, hygiene.h), or NULL. */
static const char *dc_store_stale_why(const DcProject *p) {
        if (p->index_state != DC_INDEX_OK || !p->code_proven)
                return "its index does not prove the project's directory";
        if (p->incomplete || p->total.incomplete)
                return "it could not be listed in full";
        if (p->unknown)
                return "it holds what Deep Code does not write";
        if (p->live)
                return "a Deep Code process may work in it";
        if (p->n_archived > 0) /* its checkpoints are what a restore brings back to */
                return "qgc's archive holds sessions of it";
        for (size_t i = 0; i < p->n_sessions; i++)
                if ((p->sessions[i].indexed || p->sessions[i].jsonl.present) &&
                    !p->sessions[i].proven)
                        return "a session is not proven the project's";
        return NULL;
}

/* The stale project entry of p, when its originalPath is gone (or its marker is left). */
static int dc_store_stale(const DcProject *p, Inventory *inv, size_t tree) {
        const char *why = dc_store_stale_why(p);
        msec_t mtime = util_nsec_to_msec(p->index.mtime_ns);
        /* what its sessions and other orphans count already (no double count) */
        uint64_t own = p->git_planned ? p->git_estimate : 0, own_alloc = own;
        Orphan o;

        if (p->root != DC_ROOT_GONE && !(p->marker.present && p->root == DC_ROOT_EXISTS))
                return 0;
        /* the newest write inside, the marker's excepted */
        for (size_t i = 0; i < p->n_sessions; i++) {
                const DcSession *d = &p->sessions[i];

                mtime = MAX(mtime, d->last_write);
                own += d->jsonl.size + d->images.bytes;
                own_alloc += d->jsonl.blocks + d->images.alloc;
        }
        mtime = MAX(mtime, p->file_history.mtime);
        o = (Orphan){ .kind = ORPHAN_STALE_PROJECT,
                      .tree = tree,
                      .project_dir = strdup("projects"),
                      .name = strdup(p->code),
                      .bytes = p->total.bytes - MIN(p->total.bytes, own),
                      .bytes_alloc = p->total.alloc - MIN(p->total.alloc, own_alloc),
                      .mtime = mtime,
                      .marker = p->marker,
                      .cwd_back = p->root == DC_ROOT_EXISTS,
                      .stale_why = why ? strdup(why) : NULL,
                      .cwds = p->original_path ? util_strjoin(p->original_path, "\n", NULL)
                                               : NULL };
        if (!o.project_dir || !o.name || (why && !o.stale_why) || (p->original_path && !o.cwds)) {
                inventory_orphan_done(&o);
                return -ENOMEM;
        }
        o.dir = p->dir;
        return inventory_add_orphan(inv, &o);
}

int dc_store_orphans(const DcStore *s, Inventory *inv, size_t tree) {
        int r = 0;

        if (s->error_log.present && s->error_log.size > DC_ERROR_LOG_REPORT)
                r = dc_store_orphan(inv, ORPHAN_DC_ERROR_LOG, tree, NULL, "logs/error.log",
                                    &s->error_log, s->error_log.size, s->error_log.blocks,
                                    util_nsec_to_msec(s->error_log.mtime_ns));
        for (size_t i = 0; r >= 0 && i < s->n_projects; i++) {
                r = dc_store_project_orphans(&s->projects[i], inv, tree);
                if (r >= 0)
                        r = dc_store_stale(&s->projects[i], inv, tree);
        }
        return r;
}
