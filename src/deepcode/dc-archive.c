/* dc-archive.c: qgc's archive of Deep Code sessions, the run side (dc-archive.h). Deep Code
 * lists only what its index names, so an archived session is one whose entry left the index,
 * its files in ~/.deepcode/.qgc-archive/<code>/ (0700, the store's owner), which Deep Code
 * never reads.
 *
 * Order of an archive, each change after its hook (StoreStep.hook):
 *   1. re-checks: the .jsonl is what the scan saw and read whole (its checkpoints), nothing of
 *      the id in the archive, no Deep Code process in the project, the entry not in progress;
 *   2. the marker .qgc/archive-<id> (code, the .jsonl's identity), durable;
 *   3. .qgc-archive/<code>/ made; <id>.after (its place: dc_archive_after(), computed with the
 *      entry's text at step 1), <id>.entry.json (the entry as the index holds it,
 *      JSON.stringify(entry, null, 2)) and <id>.checkpoints (sorted, one a line) written, in
 *      this order (an entry file means its .after is there); the .jsonl hard-linked as
 *      <id>.jsonl (the same inode: the transcript byte for byte);
 *   4. the entry removed from the index (dc_run_index_edit(): refused when it changed since
 *      step 3) -- from here Deep Code does not list it;
 *   5. images/<id>/ renamed to <id>.images/;
 *   6. projects/<code>/<id>.jsonl unlinked when it is still the archive's inode;
 *   7. the marker removed.
 * Before 4 Deep Code lists the session whole; from 4 on the archive holds it whole. Recovery
 * (dc_archive_recover_one()): the entry still in the index -> redone from 4 when the archive files
 * are whole and the transcript and entry are still what they were, else undone (what was moved
 * goes back, qgc's files of the id go: the next plan decides again); the entry gone -> 5-7
 * when the archive files are whole, else undone.
 * COMPRESS: cold_ctx_compress() of <id>.jsonl in the archive (cold.c's crash order; a .zst
 * left beside it by a killed run is resolved by cold_resolve()). DELETE of an archived session:
 * the marker (kind "delete-archived"), the archive files (the transcript first, the entry and
 * .after last), the branch and reflog as dc-delete.c's delete, the marker; its recovery finishes
 * it. An undo removes the .after with qgc's other files of the id. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cold.h"
#include "dc-archive.h"
#include "dc-index.h"
#include "dc-messages.h"
#include "dc-store.h"
#include "fs.h"
#include "hashmap.h"
#include "js.h"
#include "json.h"
#include "macro.h"
#include "policy.h"
#include "rm-rf.h"
#include "strbuf.h"
#include "util.h"


/* The archive's files of an id, the transcript first, its entry and order last (the order of a
 * delete). */
static const char *const dc_archive_files[] = { DC_ARCHIVE_ZST, ".jsonl", DC_ARCHIVE_IMAGES,
                                             DC_ARCHIVE_CHECKPOINTS, DC_ARCHIVE_ENTRY,
                                             DC_ARCHIVE_AFTER };

/* The archive directory of a project, and the owner its files get (run as root). */
typedef struct DcArchive {
        struct StoreRun *run;
        const char *code, *id;
        int pfd;        /* projects/<code>/, -errno when absent */
        int afd;        /* .qgc-archive/<code>/, -errno when absent */
        uid_t uid;
        gid_t gid;
} DcArchive;

static void dc_archive_done(DcArchive *c) {
        macro_safe_close(c->pfd);
        macro_safe_close(c->afd);
}

static int dc_archive_init(DcArchive *c, struct StoreRun *run, const char *code, const char *id) {
        _cleanup_free_ char *rel = util_strprintf(DC_ARCHIVE_DIR "/%s", code);
        struct stat st;

        *c = (DcArchive){ .run = run, .code = code, .id = id, .pfd = -EBADF, .afd = -EBADF,
                       .uid = run->uid };
        if (!rel)
                return -ENOMEM;
        if (fstat(run->store_fd, &st) < 0)
                return -errno;
        c->gid = st.st_gid;
        c->pfd = run->projects_fd < 0 ? run->projects_fd : fs_open_dir(run->projects_fd, code);
        c->afd = fs_open_path(run->store_fd, rel, run->dev);
        if (c->pfd < 0 && c->pfd != -ENOENT)
                return c->pfd;
        if (c->afd < 0 && c->afd != -ENOENT)
                return c->afd;
        return 0;
}

/* The archive's name of id with suffix (".jsonl", DC_ARCHIVE_ENTRY...). */
static char *dc_archive_name(const DcArchive *c, const char *suffix) {
        return util_strprintf("%s%s", c->id, suffix);
}

static void dc_archive_own(const DcArchive *c, int dfd, const char *name) {
        if (geteuid() == 0)
                (void)fchownat(dfd, name, c->uid, c->gid, AT_SYMLINK_NOFOLLOW);
}

typedef struct DcColdMade {
        const DcArchive *c;
        int dfd;
} DcColdMade;

static void dc_archive_made(void *userdata, const char *name) {
        const DcColdMade *m = userdata;

        dc_archive_own(m->c, m->dfd, name);
}

/* (dfd, name) made if absent (after its hook, owned, dfd fsynced), opened. The fd or -errno. */
static int dc_archive_mkdir(const DcArchive *c, int dfd, const char *name, const char *shown,
                         StoreStep *step) {
        int fd = fs_open_dir(dfd, name);
        DcColdMade m = { c, dfd };

        if (fd != -ENOENT)
                return fd;
        dc_run_hook(step, "create %s/", shown);
        return fs_mkdir_open(dfd, name, 0700, 0, dc_archive_made, &m);
}

/* .qgc-archive/<code>/ removed when empty, then .qgc-archive/ (nothing else there). */
static void dc_archive_rmdir(DcArchive *c) {
        _cleanup_close_ int top = fs_open_dir(c->run->store_fd, DC_ARCHIVE_DIR);

        if (top < 0)
                return;
        if (unlinkat(top, c->code, AT_REMOVEDIR) == 0) {
                c->afd = macro_safe_close(c->afd);
                (void)fs_fsync(top);
        }
        if (unlinkat(c->run->store_fd, DC_ARCHIVE_DIR, AT_REMOVEDIR) == 0)
                (void)fs_fsync(c->run->store_fd);
}

/* Do two identities name the same content of the same file (ctime aside: a link changes it)? */
static bool dc_archive_same(const FileId *a, const FileId *b) {
        return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
               a->mtime_ns == b->mtime_ns;
}

static int dc_archive_stat(int dfd, const char *name, FileId *ret) {
        struct stat st;
        int r = fs_statat(dfd, name, &st, NULL);

        *ret = (FileId){};
        if (r < 0)
                return r;
        if (!S_ISREG(st.st_mode))
                return -ESTALE;
        fs_fileid_from_stat(ret, &st);
        return 0;
}

/* DcRunIndexEditFn: the one entry of id; without remove its text is kept (take->text) and, with
 * order, its <id>.after (take->after), with remove it goes when its text is still take->want. */
typedef struct DcColdTake {
        bool remove, order;
        int afd;           /* with order: .qgc-archive/<code>/, or -errno */
        const char *want;
        char *text;
        char *after;
} DcColdTake;

static char *dc_archive_after(json_object *entries, int afd, const char *id);

static int dc_archive_index_take(json_object *entries, const char *id, void *userdata,
                              StoreStep *step) {
        DcColdTake *t = userdata;
        size_t found = 0, at = 0;
        json_object *e = NULL;
        StrBuf b = {};
        int r;

        for (size_t i = 0; i < json_object_array_length(entries); i++) {
                json_object *o = json_object_array_get_idx(entries, i);
                const char *eid = json_get_string(o, "id");

                if (!eid || !streq(eid, id))
                        continue;
                if (dc_run_entry_busy(o, util_now_msec()))
                        return dc_run_why(step, -EBUSY, "its index status is a prompt in progress");
                found++;
                at = i;
                e = o;
        }
        if (found == 0)
                return 0;
        if (found > 1)
                return dc_run_why(step, -EBADMSG, "its index holds %zu entries of its id", found);
        if (js_stringify_indent(&b, e, 2) < 0) {
                strbuf_done(&b);
                return -ENOMEM;
        }
        if (!t->remove) {
                free(t->text);
                t->text = strbuf_steal(&b);
                if (!t->text)
                        return -ENOMEM;
                if (!t->order)
                        return 2;
                free(t->after);
                t->after = dc_archive_after(entries, t->afd, id);
                return t->after ? 2 : -ENOMEM;
        }
        r = b.buf && streq(b.buf, t->want);
        strbuf_done(&b);
        if (!r)
                return dc_run_why(step, -ESTALE, "its index entry changed since it was archived");
        json_object_array_del_idx(entries, at, 1);
        return 1;
}

/* A session in the project's order (dc_archive_after()): a linked list over an array, the index's
 * entries first, then the archived sessions, each linked in when placed. */
typedef struct DcColdNode {
        const char *id;
        char **after; /* an archived one's <id>.after (known: read) */
        size_t n_after, prev, next;
        bool known, placed;
} DcColdNode;

static int dc_archive_cmp_ptr(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool dc_archive_node_eq(const void *entry, const void *key) {
        return streq(((const DcColdNode *)entry)->id, key);
}

/* Add id as node k unless the order holds it already (room reserved): 1 added, 0 not. */
static int dc_archive_node_add(Hashmap *h, DcColdNode *nodes, size_t k, const char *id) {
        uint64_t hash = hashmap_hash_string(id);
        HashSlot *slot = hashmap_slot(h, hash, dc_archive_node_eq, id);

        if (slot->entry)
                return 0;
        nodes[k] = (DcColdNode){ .id = id };
        hashmap_fill(h, slot, hash, &nodes[k]);
        return 1;
}

/* Link node k before node at (the end node: last; its next is the head, its prev the tail). */
static void dc_archive_node_link(DcColdNode *nodes, size_t k, size_t at) {
        size_t prev = nodes[at].prev;

        nodes[k].prev = prev;
        nodes[k].next = at;
        nodes[prev].next = k;
        nodes[at].prev = k;
        nodes[k].placed = true;
}

/* The names of the archive directory afd's entries (<x>.entry.json: x, an id archived), other
 * than id's. 0 or -ENOMEM (an unlistable directory: none). */
static int dc_archive_archived(int afd, const char *id, char ***ret, size_t *ret_n) {
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        _cleanup_close_ int fd = afd < 0 ? -EBADF : openat(afd, ".", O_RDONLY | O_DIRECTORY |
                                                                            O_CLOEXEC);
        const char *name;
        unsigned char type;
        size_t n = 0, len;
        char **ids = NULL;

        *ret = NULL;
        *ret_n = 0;
        if (!d)
                return -ENOMEM;
        if (fd < 0)
                return 0;
        fs_dir_init(d, fd);
        while (fs_dir_next(d, &name, &type) > 0) {
                char **a;

                len = strlen(name);
                if (fs_is_temp_name(name) || len <= strlen(DC_ARCHIVE_ENTRY) ||
                    !streq(name + len - strlen(DC_ARCHIVE_ENTRY), DC_ARCHIVE_ENTRY) ||
                    (strneq(name, id, len - strlen(DC_ARCHIVE_ENTRY)) &&
                     strlen(id) == len - strlen(DC_ARCHIVE_ENTRY)))
                        continue;
                a = reallocarray(ids, n + 1, sizeof(char *));
                if (!a || !(a[n] = strndup(name, len - strlen(DC_ARCHIVE_ENTRY)))) {
                        dc_index_after_free(a ?: ids, n);
                        return -ENOMEM;
                }
                ids = a;
                n++;
        }
        if (n > 0)
                qsort(ids, n, sizeof(char *), dc_archive_cmp_ptr);
        *ret = ids;
        *ret_n = n;
        return 0;
}

/* <id>.after's text (dc-store.h): the ids after id in the project's order, one a line, at most
 * DC_INDEX_AFTER_MAX bytes (past that the farthest are left out: some 1700 archived sessions).
 * The project's order: the index (entries, id's among them), with the sessions archived before
 * (in afd) each at its place: before the first id its own <id>.after names that is placed, else
 * last; one by one in the order of their ids (when each <id>.after is what this wrote, any order
 * gives the same list); those without a readable <id>.after (older qgc's) left out. NULL: no
 * memory. */
static char *dc_archive_after(json_object *entries, int afd, const char *id) {
        _cleanup_(hashmap_donep) Hashmap h = {};
        _cleanup_free_ DcColdNode *nodes = NULL;
        _cleanup_(strbuf_done) StrBuf b = {};
        char **archived = NULL, *ret = NULL;
        size_t n_idx = json_object_array_length(entries), n_arc = 0, n = 0, self = SIZE_MAX;
        int r;

        if (dc_archive_archived(afd, id, &archived, &n_arc) < 0)
                return NULL;
        nodes = calloc(n_idx + n_arc + 1, sizeof(DcColdNode));
        if (!nodes || hashmap_reserve(&h, n_idx + n_arc) < 0)
                goto out;
        for (size_t i = 0; i < n_idx; i++) {
                const char *eid = json_get_string(json_object_array_get_idx(entries, i), "id");

                if (!eid)
                        continue;
                n += (size_t)dc_archive_node_add(&h, nodes, n, eid);
        }
        nodes[n_idx + n_arc] = (DcColdNode){ .prev = n_idx + n_arc, .next = n_idx + n_arc };
        for (size_t i = 0; i < n; i++) {
                dc_archive_node_link(nodes, i, n_idx + n_arc);
                if (streq(nodes[i].id, id))
                        self = i;
        }
        for (size_t i = 0; i < n_arc; i++) {
                _cleanup_free_ char *name = util_strprintf("%s" DC_ARCHIVE_AFTER, archived[i]);
                DcColdNode *y = &nodes[n];

                if (!name)
                        goto out;
                if (dc_archive_node_add(&h, nodes, n, archived[i]) == 0)
                        continue; /* indexed too: Deep Code's is placed */
                n++;
                r = dc_index_after_read(afd, name, &y->after, &y->n_after);
                if (r == -ENOMEM)
                        goto out;
                y->known = r >= 0;
        }
        for (size_t k = 0; k < n; k++) {
                DcColdNode *y = &nodes[k];
                size_t at = n_idx + n_arc;

                if (y->placed || !y->known)
                        continue;
                for (size_t j = 0; j < y->n_after && at == n_idx + n_arc; j++) {
                        DcColdNode *z = hashmap_get(&h, hashmap_hash_string(y->after[j]),
                                                    dc_archive_node_eq, y->after[j]);

                        if (z && z->placed)
                                at = (size_t)(z - nodes);
                }
                dc_archive_node_link(nodes, k, at);
        }
        if (strbuf_printf(&b, "%s", "") < 0)
                goto out;
        for (size_t k = self == SIZE_MAX ? n_idx + n_arc : nodes[self].next; k != n_idx + n_arc;
             k = nodes[k].next) {
                if (b.len + strlen(nodes[k].id) + 1 > DC_INDEX_AFTER_MAX)
                        break;
                if (strbuf_printf(&b, "%s\n", nodes[k].id) < 0)
                        goto out;
        }
        ret = strbuf_steal(&b);
out:
        for (size_t k = 0; nodes && k < n; k++)
                dc_index_after_free(nodes[k].after, nodes[k].n_after);
        dc_index_after_free(archived, n_arc);
        return ret;
}

/* Is the id in its project's index? 1 yes (take->text its entry), 0 no (or no project), or
 * -errno with step->why (-EBUSY: in use, the index is not Deep Code's...). */
static int dc_archive_indexed(DcArchive *c, DcColdTake *take, StoreStep *step) {
        if (c->pfd < 0)
                return 0;
        return dc_run_index_edit(c->run, c->pfd, c->code, c->id, dc_archive_index_take, take,
                                 "without", step);
}

static int dc_archive_cmp(const void *a, const void *b) {
        return strcmp(a, b);
}

/* The checkpoints of m, sorted, one a line. */
static char *dc_archive_checkpoints(DcMessages *m) {
        StrBuf b = {};

        if (m->n_checkpoints > 0) /* qsort() of NULL is undefined, even of 0 elements */
                qsort(m->checkpoints, m->n_checkpoints, sizeof(*m->checkpoints), dc_archive_cmp);
        if (strbuf_printf(&b, "%s", "") < 0)
                return NULL;
        for (size_t i = 0; i < m->n_checkpoints; i++)
                if (strbuf_printf(&b, "%s\n", m->checkpoints[i]) < 0) {
                        strbuf_done(&b);
                        return NULL;
                }
        return strbuf_steal(&b);
}

/* Write text as (afd, suffix's name) after its hook: temp file, fsync, rename, fsync. */
static int dc_archive_write(const DcArchive *c, const char *suffix, const char *text,
                            StoreStep *step) {
        _cleanup_free_ char *name = dc_archive_name(c, suffix);
        int r;

        if (!name)
                return -ENOMEM;
        dc_run_hook(step, "write " DC_ARCHIVE_DIR "/%s/%s", c->code, name);
        r = fs_write_atomic(c->afd, name, text, strlen(text), 0600);
        if (r < 0)
                return dc_run_why(step, r, "cannot write " DC_ARCHIVE_DIR "/%s/%s", c->code, name);
        dc_archive_own(c, c->afd, name);
        return 0;
}

/* Remove (afd, id + suffix) after its hook (a directory recursively); its bytes to step. */
static int dc_archive_rm(DcArchive *c, const char *suffix, StoreStep *step) {
        _cleanup_free_ char *name = dc_archive_name(c, suffix);
        uint64_t bytes = 0;
        struct stat st;
        int r;

        if (!name)
                return -ENOMEM;
        r = fs_statat(c->afd, name, &st, NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return dc_run_why(step, r, "cannot check " DC_ARCHIVE_DIR "/%s/%s", c->code, name);
        dc_run_hook(step, "remove " DC_ARCHIVE_DIR "/%s/%s", c->code, name);
        if (S_ISDIR(st.st_mode))
                r = rm_rf_at(c->afd, name, c->run->dev, &bytes);
        else {
                r = fs_unlink(c->afd, name, 0);
                bytes = (uint64_t)st.st_blocks * 512;
        }
        if (r < 0 && r != -ENOENT)
                return dc_run_why(step, r, "cannot remove " DC_ARCHIVE_DIR "/%s/%s", c->code,
                                  name);
        step->bytes += bytes;
        return 0;
}

/* Steps 5 and 6 of an archive (see the top): what is left in Deep Code's project goes. */
static int dc_archive_finish(DcArchive *c, StoreStep *step) {
        _cleanup_free_ char *name = dc_archive_name(c, ".jsonl");
        _cleanup_free_ char *images = dc_archive_name(c, DC_ARCHIVE_IMAGES);
        _cleanup_close_ int ifd = -EBADF;
        FileId orig, arch;
        struct stat st;
        int r;

        if (!name || !images)
                return -ENOMEM;
        if (c->pfd < 0)
                return 0;
        ifd = fs_open_dir(c->pfd, "images");
        if (ifd >= 0 && fs_statat(ifd, c->id, &st, NULL) >= 0 && S_ISDIR(st.st_mode) &&
            fs_exists(c->afd, images) == 0) {
                dc_run_hook(step, "move projects/%s/images/%s/ to " DC_ARCHIVE_DIR "/%s/%s/",
                            c->code, c->id, c->code, images);
                r = fs_rename_noreplace(ifd, c->id, c->afd, images);
                if (r >= 0)
                        r = fs_fsync(c->afd);
                if (r >= 0)
                        r = fs_fsync(ifd);
                if (r < 0)
                        return dc_run_why(step, r, "cannot move projects/%s/images/%s/", c->code,
                                          c->id);
        }
        /* the original goes only as a second name of the archive's transcript */
        if (dc_archive_stat(c->pfd, name, &orig) < 0 || dc_archive_stat(c->afd, name, &arch) < 0 ||
            orig.dev != arch.dev || orig.ino != arch.ino)
                return 0;
        dc_run_hook(step, "remove projects/%s/%s", c->code, name);
        r = fs_unlink(c->pfd, name, 0);
        if (r >= 0)
                r = fs_fsync(c->pfd);
        return r < 0 && r != -ENOENT ? dc_run_why(step, r, "cannot remove projects/%s/%s",
                                                  c->code, name)
                                     : 0;
}

/* Undo an archive: what was moved goes back, then qgc's files of the id in the archive (its
 * transcript only as a second name of the project's). */
static int dc_archive_undo(DcArchive *c, StoreStep *step) {
        static const char *const qgc_own[] = { DC_ARCHIVE_CHECKPOINTS, DC_ARCHIVE_ENTRY,
                                               DC_ARCHIVE_AFTER };
        _cleanup_free_ char *name = dc_archive_name(c, ".jsonl");
        _cleanup_free_ char *images = dc_archive_name(c, DC_ARCHIVE_IMAGES);
        _cleanup_close_ int ifd = -EBADF;
        FileId orig, arch;
        int r;

        if (!name || !images)
                return -ENOMEM;
        if (c->afd < 0)
                return 0;
        if (c->pfd >= 0 && fs_exists(c->afd, name) > 0 && fs_exists(c->pfd, name) == 0) {
                dc_run_hook(step, "link projects/%s/%s back", c->code, name);
                if (linkat(c->afd, name, c->pfd, name, 0) < 0 || fs_fsync(c->pfd) < 0)
                        return dc_run_why(step, -errno, "cannot link projects/%s/%s back",
                                          c->code, name);
        }
        if (fs_exists(c->afd, images) > 0) {
                ifd = c->pfd < 0 ? c->pfd : fs_open_dir(c->pfd, "images");
                if (ifd < 0 || fs_exists(ifd, c->id) != 0)
                        return dc_run_why(step, -EEXIST, "cannot move " DC_ARCHIVE_DIR "/%s/%s/ "
                                          "back to projects/%s/images/", c->code, images, c->code);
                dc_run_hook(step, "move " DC_ARCHIVE_DIR "/%s/%s/ back", c->code, images);
                r = fs_rename_noreplace(c->afd, images, ifd, c->id);
                if (r >= 0)
                        r = fs_fsync(ifd);
                if (r < 0)
                        return dc_run_why(step, r, "cannot move " DC_ARCHIVE_DIR "/%s/%s/ back",
                                          c->code, images);
        }
        if (fs_exists(c->afd, name) > 0) {
                if (c->pfd < 0 || dc_archive_stat(c->pfd, name, &orig) < 0 ||
                    dc_archive_stat(c->afd, name, &arch) < 0 || orig.dev != arch.dev ||
                    orig.ino != arch.ino)
                        return dc_run_why(step, -EEXIST, DC_ARCHIVE_DIR "/%s/%s is no second "
                                          "name of its project's: kept", c->code, name);
                r = dc_archive_rm(c, ".jsonl", step);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < ELEMENTSOF(qgc_own); i++) {
                const char *sfx = qgc_own[i];
                _cleanup_free_ char *n = dc_archive_name(c, sfx);
                _cleanup_free_ char *tmp = n ? fs_temp_name(n, false) : NULL;

                if (!tmp)
                        return -ENOMEM;
                (void)unlinkat(c->afd, tmp, 0);
                r = dc_archive_rm(c, sfx, step);
                if (r < 0)
                        return r;
        }
        r = fs_fsync(c->afd);
        if (r < 0)
                return dc_run_why(step, r, "cannot sync " DC_ARCHIVE_DIR "/%s", c->code);
        dc_archive_rmdir(c);
        return 0;
}

/* Are the archive files of an archive whole (steps 3 done)? */
static bool dc_archive_whole(const DcArchive *c) {
        _cleanup_free_ char *e = dc_archive_name(c, DC_ARCHIVE_ENTRY);
        _cleanup_free_ char *k = dc_archive_name(c, DC_ARCHIVE_CHECKPOINTS);
        _cleanup_free_ char *j = dc_archive_name(c, ".jsonl");
        _cleanup_free_ char *z = dc_archive_name(c, DC_ARCHIVE_ZST);

        return c->afd >= 0 && e && k && j && z && fs_exists(c->afd, e) > 0 &&
               fs_exists(c->afd, k) > 0 && (fs_exists(c->afd, j) > 0 || fs_exists(c->afd, z) > 0);
}

/* An archive killed before its index edit (the entry still indexed): redone from step 4 when
 * its files are whole, the transcript still what the marker says (f) with the archive's as its
 * second name and the entry still the archived one; else undone. */
static int dc_archive_redo(DcArchive *c, const FileId *f, StoreStep *step) {
        _cleanup_free_ char *name = dc_archive_name(c, ".jsonl");
        _cleanup_free_ char *ename = dc_archive_name(c, DC_ARCHIVE_ENTRY);
        _cleanup_free_ char *entry = NULL;
        DcColdTake take = { .remove = true };
        FileId orig, arch;
        size_t n;
        int r;

        if (!name || !ename)
                return -ENOMEM;
        if (!dc_archive_whole(c) || dc_archive_stat(c->pfd, name, &orig) < 0 ||
            dc_archive_stat(c->afd, name, &arch) < 0 || orig.dev != arch.dev ||
            orig.ino != arch.ino || !dc_archive_same(&orig, f) ||
            fs_read_file(c->afd, ename, DC_INDEX_MAX, &entry, &n) < 0)
                return dc_archive_undo(c, step);
        take.want = entry;
        r = dc_run_live(c->run, c->code, step);
        if (r >= 0)
                r = dc_archive_indexed(c, &take, step);
        if (r == 0 || r == -ESTALE)
                return dc_archive_undo(c, step); /* changed since: the next plan decides again */
        if (r < 0)
                return r;
        return dc_archive_finish(c, step);
}

static int dc_archive_unmark(int qfd, const char *marker, const char *what, const char *id,
                          StoreStep *step) {
        int r;

        dc_run_hook(step, "remove the pending-%s marker of session %s", what, id);
        r = fs_unlink(qfd, marker, 0);
        return r < 0 && r != -ENOENT ? r : 0;
}

/* Steps 3 to 6 of an archive of s (see the top); on a failure before 4, undone. */
static int dc_archive_move(DcArchive *c, const Session *s, const char *entry, const char *after,
                        const char *ckpt, bool *ret_undone, StoreStep *step) {
        _cleanup_free_ char *name = dc_archive_name(c, ".jsonl");
        _cleanup_free_ char *rel = util_strprintf(DC_ARCHIVE_DIR "/%s", c->code);
        _cleanup_close_ int top = -EBADF;
        FileId linked;
        int r;

        if (!name || !rel)
                return -ENOMEM;
        top = dc_archive_mkdir(c, c->run->store_fd, DC_ARCHIVE_DIR, DC_ARCHIVE_DIR, step);
        if (top < 0)
                return dc_run_why(step, top, "cannot create ~/.deepcode/" DC_ARCHIVE_DIR);
        if (c->afd < 0)
                c->afd = dc_archive_mkdir(c, top, c->code, rel, step);
        if (c->afd < 0)
                return dc_run_why(step, c->afd, "cannot create " DC_ARCHIVE_DIR "/%s", c->code);
        r = dc_archive_write(c, DC_ARCHIVE_AFTER, after, step);
        if (r >= 0)
                r = dc_archive_write(c, DC_ARCHIVE_ENTRY, entry, step);
        if (r >= 0)
                r = dc_archive_write(c, DC_ARCHIVE_CHECKPOINTS, ckpt, step);
        if (r >= 0) {
                dc_run_hook(step, "link projects/%s/%s as " DC_ARCHIVE_DIR "/%s/%s", c->code,
                            name, c->code, name);
                if (linkat(c->pfd, name, c->afd, name, 0) < 0)
                        r = dc_run_why(step, -errno, "cannot link projects/%s/%s into "
                                       DC_ARCHIVE_DIR, c->code, name);
        }
        if (r >= 0)
                r = fs_fsync(c->afd);
        if (r >= 0 && (dc_archive_stat(c->afd, name, &linked) < 0 ||
                       !dc_archive_same(&linked, &s->active)))
                r = -ESTALE; /* replaced or written since the check */
        if (r >= 0) {
                DcColdTake take = { .remove = true, .want = entry };

                r = dc_archive_indexed(c, &take, step);
                if (r == 0)
                        r = -ESTALE; /* Deep Code deleted it (or capped it away) since */
        }
        if (r < 0) {
                /* nothing Deep Code lists was changed: the session stays whole there */
                *ret_undone = dc_archive_undo(c, step) >= 0;
                return r;
        }
        return dc_archive_finish(c, step);
}

static int dc_archive_archive(struct StoreRun *run, const Session *s, StoreStep *step) {
        _cleanup_(dc_archive_done) DcArchive c = { .pfd = -EBADF, .afd = -EBADF };
        _cleanup_free_ char *marker = util_strprintf(DC_ARCHIVE_MARKER_PREFIX "%s", s->id);
        _cleanup_free_ char *ckpt = NULL, *name = NULL;
        _cleanup_close_ int qfd = -EBADF;
        DcColdTake take = { .order = true };
        DcMessages m = {};
        bool undone = false;
        int r;

        if (!marker)
                return -ENOMEM;
        r = dc_archive_init(&c, run, s->project_dir, s->id);
        if (r < 0)
                return dc_run_why(step, r, "cannot open its project or archive");
        if (c.pfd < 0 || !s->active.present)
                return -ESTALE;
        /* nothing of the id in the archive: never replaced */
        for (size_t i = 0; i < ELEMENTSOF(dc_archive_files); i++) {
                _cleanup_free_ char *n = dc_archive_name(&c, dc_archive_files[i]);

                if (!n)
                        return -ENOMEM;
                if (c.afd >= 0 && fs_exists(c.afd, n) != 0)
                        return dc_run_why(step, -EEXIST, "an archive of the same id exists");
        }
        /* the transcript as the scan saw it, read whole: the checkpoints it names */
        r = dc_messages_read(c.pfd, s->id, &m);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && m.complete && m.proven && dc_archive_same(&m.file, &s->active) &&
            m.file.ctime_ns == s->active.ctime_ns)
                ckpt = dc_archive_checkpoints(&m);
        else
                r = -ESTALE;
        dc_messages_done(&m);
        if (r < 0)
                return r;
        if (!ckpt)
                return -ENOMEM;
        r = dc_run_live(run, c.code, step);
        if (r < 0)
                return r;
        take.afd = c.afd;
        r = dc_archive_indexed(&c, &take, step);
        if (r == 0)
                r = -ESTALE;
        if (r >= 0)
                name = dc_run_marker_text("archive", c.code, s->id, &s->active);
        if (r >= 0 && !name)
                r = -ENOMEM;
        if (r >= 0)
                qfd = dc_run_marker_write(run, marker, name, "archive", s->id, step);
        if (r >= 0 && qfd < 0)
                r = qfd;
        if (r >= 0)
                r = dc_archive_move(&c, s, take.text, take.after, ckpt, &undone, step);
        free(take.text);
        free(take.after);
        if (r < 0 && qfd < 0)
                return r;
        if (r < 0 && !undone)
                return r; /* the marker stays: the next run finishes or undoes */
        if (r >= 0)
                step->bytes = s->bytes; /* what went to the archive */
        (void)dc_archive_unmark(qfd, marker, "archive", s->id, step);
        return r;
}

/* The archive files of the id (the transcript first, the entry last), then its branch. */
static int dc_archive_remove(DcArchive *c, bool branch, StoreStep *step) {
        int r = 0;

        if (c->afd >= 0) {
                for (size_t i = 0; i < ELEMENTSOF(dc_archive_files); i++) {
                        r = dc_archive_rm(c, dc_archive_files[i], step);
                        if (r < 0)
                                return r;
                }
                r = fs_fsync(c->afd);
                if (r < 0)
                        return dc_run_why(step, r, "cannot sync " DC_ARCHIVE_DIR "/%s", c->code);
                dc_archive_rmdir(c);
        }
        return c->pfd >= 0 && branch ? dc_run_rm_branch(c->pfd, c->id, step) : 0;
}

/* Is the id Deep Code's again (indexed, or a transcript in the project)? 1 yes, 0 no, -errno. */
static int dc_archive_reused(DcArchive *c, StoreStep *step) {
        _cleanup_free_ char *name = dc_archive_name(c, ".jsonl");
        DcColdTake take = {};
        int r;

        if (!name)
                return -ENOMEM;
        r = dc_archive_indexed(c, &take, step);
        free(take.text);
        if (r != 0)
                return r;
        return c->pfd >= 0 ? fs_exists(c->pfd, name) : 0;
}

static int dc_archive_delete(struct StoreRun *run, const Session *s, StoreStep *step) {
        _cleanup_(dc_archive_done) DcArchive c = { .pfd = -EBADF, .afd = -EBADF };
        _cleanup_free_ char *marker = util_strprintf(DC_ARCHIVE_MARKER_PREFIX "%s", s->id);
        _cleanup_free_ char *text = NULL, *name = NULL;
        _cleanup_close_ int qfd = -EBADF;
        int r;

        if (!marker)
                return -ENOMEM;
        r = dc_archive_init(&c, run, s->project_dir, s->id);
        if (r < 0)
                return dc_run_why(step, r, "cannot open its project or archive");
        name = dc_archive_name(&c, s->cold ? DC_ARCHIVE_ZST : ".jsonl");
        if (!name)
                return -ENOMEM;
        r = c.afd < 0 ? 0 : fs_check_identity(c.afd, name, &s->archived);
        if (r < 0)
                return dc_run_why(step, r, "cannot check its archived transcript");
        if (r == 0)
                return -ESTALE;
        r = dc_archive_reused(&c, step);
        if (r > 0)
                return dc_run_why(step, -EEXIST, "Deep Code's project holds a session of its id");
        if (r < 0)
                return r;
        text = dc_run_marker_text("delete-archived", c.code, s->id, &s->archived);
        if (!text)
                return -ENOMEM;
        qfd = dc_run_marker_write(run, marker, text, "delete", s->id, step);
        if (qfd < 0)
                return qfd;
        r = dc_archive_remove(&c, true, step);
        if (r < 0)
                return r; /* the marker stays: the next run finishes */
        return dc_archive_unmark(qfd, marker, "delete", s->id, step);
}

static int dc_archive_compress(struct StoreRun *run, const Session *s, const Verdict *v,
                            StoreStep *step) {
        _cleanup_(dc_archive_done) DcArchive c = { .pfd = -EBADF, .afd = -EBADF };
        _cleanup_free_ char *name = NULL, *z = NULL;
        ColdCtx *ctx = NULL;
        int r;

        r = dc_archive_init(&c, run, s->project_dir, s->id);
        if (r < 0)
                return dc_run_why(step, r, "cannot open its archive");
        name = dc_archive_name(&c, ".jsonl");
        z = dc_archive_name(&c, DC_ARCHIVE_ZST);
        if (!name || !z)
                return -ENOMEM;
        if (c.afd < 0 || s->cold)
                return -ESTALE;
        r = cold_default(v->compress_level > 0 ? v->compress_level : COLD_LEVEL_DEFAULT, &ctx);
        if (r < 0)
                return dc_run_why(step, r, "cannot make a compression context");
        dc_run_hook(step, "compress " DC_ARCHIVE_DIR "/%s/%s", c.code, name);
        r = cold_ctx_compress(ctx, c.afd, name, c.afd, &s->archived, 0, step->hook,
                              step->userdata, NULL);
        if (r == -EEXIST) {
                /* a run cut short after the .zst got its name: the original goes when it has
                 * exactly the recorded content */
                r = cold_resolve(c.afd, name, c.afd, step->hook, step->userdata);
                if (r == -ENOENT)
                        r = 0;
                if (r == -ESTALE)
                        return dc_run_why(step, -EEXIST, "a compressed copy with other content "
                                          "exists (conflict)");
        }
        if (r < 0)
                return dc_run_why(step, r, r == -ESTALE    ? "changed since scan"
                                           : r == -EBADMSG ? "the compressed file did not verify"
                                                           : "cannot compress");
        dc_archive_own(&c, c.afd, z);
        return 0;
}

int dc_archive_session(struct StoreRun *run, const Session *s, const Verdict *v, StoreStep *step) {
        if (s->owner != OWNER_OK || !dc_index_id_valid(s->id, strlen(s->id)) ||
            !dc_run_name_ok(s->project_dir))
                return dc_run_why(step, -EPERM, "ownership not proven");
        if (v->verb == VERB_ARCHIVE && s->state == SESSION_ACTIVE)
                return dc_archive_archive(run, s, step);
        if (v->verb == VERB_COMPRESS && s->state == SESSION_ARCHIVED)
                return dc_archive_compress(run, s, v, step);
        if (v->verb == VERB_DELETE && s->state == SESSION_ARCHIVED)
                return dc_archive_delete(run, s, step);
        return dc_run_why(step, -EOPNOTSUPP, "not an action of Deep Code's archive");
}

int dc_archive_recover_one(struct StoreRun *run, int qfd, const char *marker, StoreStep *step) {
        _cleanup_(dc_archive_done) DcArchive c = { .pfd = -EBADF, .afd = -EBADF };
        _cleanup_free_ char *text = NULL;
        DcColdTake take = {};
        bool archive;
        char *code, *id;
        size_t kind;
        FileId f;
        int r;

        r = dc_run_marker_read(qfd, marker, DC_ARCHIVE_MARKER_PREFIX,
                               (const char *const[]){ "archive", "delete-archived", NULL },
                               "archive", &text, &code, &id, &f, &kind, step);
        if (r < 0)
                return r;
        archive = kind == 0;
        r = dc_archive_init(&c, run, code, id);
        if (r < 0)
                return dc_run_why(step, r, "cannot open projects/%s or its archive", code);
        if (c.pfd >= 0)
                (void)unlinkat(c.pfd, DC_INDEX_TEMP, 0); /* a killed edit's */
        /* archive: is the entry in the index? delete: is the id Deep Code's again (then the
         * branch is too)? */
        if (archive) {
                r = dc_archive_indexed(&c, &take, step);
                free(take.text);
        } else
                r = dc_archive_reused(&c, step);
        if (r == -EBUSY || r == -EAGAIN)
                return 0;
        if (r < 0)
                return r;
        if (!archive)
                r = dc_archive_remove(&c, r == 0, step);
        else if (r > 0)
                r = dc_archive_redo(&c, &f, step);
        else if (!dc_archive_whole(&c))
                r = dc_archive_undo(&c, step);
        else
                r = dc_archive_finish(&c, step);
        if (r == -EBUSY || r == -EAGAIN)
                return 0;
        if (r < 0)
                return r;
        r = dc_archive_unmark(qfd, marker, archive ? "archive" : "delete", id, step);
        return r < 0 ? r : 1;
}
