/* deepcode-store.c: Deep Code's store (store.h): a ~/.deepcode told by what is inside it, its
 * project codes (getProjectCode, dc-project.h), its walk into the inventory (dc-store.h), and
 * its run operations: the delete (dc-run.h), the archive tier (dc-archive.h), the reclaim of
 * orphans (dc-reclaim.h), each kind of pending marker's recovery. */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dc-archive.h"
#include "dc-delete.h"
#include "dc-project.h"
#include "dc-reclaim.h"
#include "dc-restore.h"
#include "dc-run.h"
#include "dc-store.h"
#include "deepcode-store.h"
#include "du.h"
#include "fs.h"
#include "lock.h"
#include "log.h"
#include "macro.h"
#include "plan.h"
#include "policy.h"
#include "session-times.h"
#include "util.h"

/* Is (dfd, name) a regular file (is_reg) or a directory, no symlink followed? */
static bool deepcode_store_has(int dfd, const char *name, bool is_reg) {
        struct stat st;

        return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               (is_reg ? S_ISREG(st.st_mode) : S_ISDIR(st.st_mode));
}

/* A Deep Code store: the first project directory under projects/ that tells holds a
 * sessions-index.json (a regular file), not a Qwen chats/ directory. When none tells (a store
 * with no session yet), a directory named .deepcode or holding qgc's .qgc-archive/ (made only in
 * Deep Code stores) is one. Read as the scan reads (O_NOATIME when permitted: a dry run changes
 * no atime), no symlink followed. */
static int deepcode_store_detect(int dir_fd, const char *dir) {
        _cleanup_close_ int pfd = fs_open_noatime(dir_fd, "projects",
                                                  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_free_ FsDir *d = NULL;
        size_t n = strlen(dir), b;
        const char *name;
        unsigned char type;
        int r = 0;

        if (pfd < 0 && pfd != -ENOENT && pfd != -ENOTDIR && pfd != -ELOOP)
                return pfd;
        d = pfd < 0 ? NULL : malloc(sizeof(FsDir));
        if (pfd >= 0 && !d)
                return -ENOMEM;
        if (d)
                fs_dir_init(d, pfd);
        while (d && (r = fs_dir_next(d, &name, &type)) > 0) {
                _cleanup_close_ int fd = -EBADF;

                if (type != DT_DIR && type != DT_UNKNOWN)
                        continue;
                fd = fs_open_noatime(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        continue;
                if (deepcode_store_has(fd, DC_INDEX_FILE, true))
                        return 1;
                if (deepcode_store_has(fd, "chats", false))
                        return 0;
        }
        if (r < 0)
                return r;
        while (n > 1 && dir[n - 1] == '/') /* "~/.deepcode/" */
                n--;
        for (b = n; b > 0 && dir[b - 1] != '/'; b--)
                ;
        return (n - b == strlen(".deepcode") && memcmp(dir + b, ".deepcode", n - b) == 0) ||
               deepcode_store_has(dir_fd, DC_ARCHIVE_DIR, false);
}

static int deepcode_store_tree(char *dir, Tree *ret) {
        *ret = (Tree){ .global_dir = dir, .runtime_dir = strdup(dir), .store = &deepcode_store };
        if (!ret->runtime_dir) {
                inventory_tree_done(ret);
                return -ENOMEM;
        }
        return 0;
}

/* --root DIR: DIR, made absolute, is the store. */
static int deepcode_store_tree_from_dir(const char *dir, Tree *ret) {
        _cleanup_free_ char *cwd = NULL;
        char *abs;

        if (!dir || !*dir)
                return -EINVAL;
        if (dir[0] != '/') {
                cwd = getcwd(NULL, 0);
                if (!cwd)
                        return -errno;
        }
        abs = cwd ? util_path_join(cwd, dir) : strdup(dir);
        if (!abs)
                return -ENOMEM;
        return deepcode_store_tree(abs, ret);
}

/* home/.deepcode, as Deep Code finds it (os.homedir()); -ENOENT when there is none. */
static int deepcode_store_tree_for_home(const char *home, Tree *ret, char **ret_why) {
        char *dir = util_path_join(home, ".deepcode");
        struct stat st;

        (void)ret_why;
        if (!dir)
                return -ENOMEM;
        if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
                free(dir);
                return -ENOENT;
        }
        return deepcode_store_tree(dir, ret);
}

static char *deepcode_store_project_dir(const char *cwd) {
        char *code = NULL;

        return dc_project_code(cwd, &code) < 0 ? NULL : code;
}

typedef struct DeepcodeStoreTimes {
        Inventory *inv;
        size_t tree;
} DeepcodeStoreTimes;

/* A line of ~/.deepcode/.qgc/session-times (session-times.h: dc-restore.c writes the ends of
 * qgc's restores there) into the session of the tree it names, by Deep Code's id rule. */
static void deepcode_store_times_one(SessionTimeEvent ev, msec_t at, const char *id,
                                     void *userdata) {
        DeepcodeStoreTimes *c = userdata;

        if (dc_index_id_valid(id, strlen(id)))
                inventory_session_time(c->inv, c->tree, ev, at, id);
}

/* Each Deep Code tree of inv read (dc_store_scan()) and turned into records and orphans; a
 * store that cannot be read leaves its tree incomplete. */
static int deepcode_store_scan(Inventory *inv, const ScanOptions *o) {
        int r = 0;

        for (size_t i = 0; i < inv->n_trees; i++) {
                DcStore *s = NULL;
                int k;

                if (inv->trees[i].store != o->store)
                        continue;
                k = dc_store_scan(inv->trees[i].global_dir, o->now, &s);
                if (k == -ENOMEM)
                        return k;
                if (k < 0) {
                        inv->trees[i].incomplete = true;
                        if (r == 0)
                                r = k;
                        continue;
                }
                k = dc_store_inventory(s, inv, i, o->now);
                if (k >= 0)
                        k = dc_store_orphans(s, inv, i);
                dc_store_free(s);
                if (k < 0)
                        return k;
                /* qgc restore's ends: restore-grace (dc-restore.h) */
                session_times_load(inv->trees[i].global_dir, SESSION_ID_MAX,
                                   deepcode_store_times_one,
                                   &(DeepcodeStoreTimes){ .inv = inv, .tree = i });
        }
        return r;
}

/* qgc status: where every byte of a ~/.deepcode goes (Deep Code 0.2.1's layout: ~/.deepcode/
 * projects/<code>/{<id>.jsonl,sessions-index.json,images/<id>/,file-history/.git}, logs/,
 * settings.json, machine-id). */
typedef enum DcKind {
        DC_KIND_TRANSCRIPTS,  /* projects/<code>/<id>.jsonl */
        DC_KIND_IMAGES,       /* projects/<code>/images/ */
        DC_KIND_INDEX,        /* projects/<code>/sessions-index.json */
        DC_KIND_FILE_HISTORY, /* projects/<code>/file-history/: the checkpoint git repository */
        DC_KIND_LOGS,         /* logs/ (error.log grows forever) */
        DC_KIND_STATE,        /* settings.json, machine-id */
        DC_KIND_QGC,          /* qgc's lock and temporary files */
        DC_KIND_OTHER,        /* anything else (never touched) */
        DC_KIND_DIRS,         /* the directories themselves */
        DC_KIND_ARCHIVED,     /* DC_ARCHIVE_DIR/ (dc-store.h): qgc's archive; last, and shown
                               * only when it holds a file */
        _DC_KIND_MAX,
} DcKind;

_Static_assert(_DC_KIND_MAX <= STORE_SIZE_KINDS, "DcKind fits StoreSize");

static const char *const deepcode_store_kind_names[_DC_KIND_MAX] = {
        [DC_KIND_TRANSCRIPTS] = "transcripts",   [DC_KIND_IMAGES] = "images",
        [DC_KIND_INDEX] = DC_INDEX_FILE, [DC_KIND_FILE_HISTORY] = "file-history (git)",
        [DC_KIND_LOGS] = "logs",                 [DC_KIND_STATE] = "settings, machine-id",
        [DC_KIND_QGC] = "qgc (lock, temp files)", [DC_KIND_OTHER] = "other",
        [DC_KIND_DIRS] = "directories",           [DC_KIND_ARCHIVED] = "archived sessions",
};

static const char *const deepcode_store_kind_keys[_DC_KIND_MAX] = {
        [DC_KIND_TRANSCRIPTS] = "transcripts",   [DC_KIND_IMAGES] = "images",
        [DC_KIND_INDEX] = "index",               [DC_KIND_FILE_HISTORY] = "file-history",
        [DC_KIND_LOGS] = "logs",                 [DC_KIND_STATE] = "state",
        [DC_KIND_QGC] = "qgc",                   [DC_KIND_OTHER] = "other",
        [DC_KIND_DIRS] = "directories",          [DC_KIND_ARCHIVED] = "archived",
};

/* The kind of file rel (relative to the store), by its path's components. */
static DcKind deepcode_store_classify(const char *rel) {
        const char *base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
        const char *code, *name, *rest;
        size_t n;

        if (streq(rel, LOCK_FILE) || fs_is_temp_name(base) ||
            strneq(rel, FS_STATE_DIR "/", strlen(FS_STATE_DIR "/")))
                return DC_KIND_QGC;
        if (strneq(rel, DC_ARCHIVE_DIR "/", strlen(DC_ARCHIVE_DIR "/")))
                return DC_KIND_ARCHIVED;
        if (strneq(rel, "logs/", 5))
                return DC_KIND_LOGS;
        if (streq(rel, "settings.json") || streq(rel, "machine-id"))
                return DC_KIND_STATE;
        if (!strneq(rel, "projects/", 9))
                return DC_KIND_OTHER;
        code = rel + 9;
        name = strchr(code, '/');
        if (!name || name == code)
                return DC_KIND_OTHER;
        name++;
        rest = strchr(name, '/');
        n = rest ? (size_t)(rest - name) : strlen(name);
        if (!rest && streq(name, DC_INDEX_FILE))
                return DC_KIND_INDEX;
        if (!rest && n > 6 && streq(name + n - 6, ".jsonl"))
                return DC_KIND_TRANSCRIPTS;
        if (rest && n == 6 && strneq(name, "images", 6))
                return DC_KIND_IMAGES;
        if (rest && n == 12 && strneq(name, "file-history", 12))
                return DC_KIND_FILE_HISTORY;
        return DC_KIND_OTHER;
}

/* deepcode_store_measure()'s walk: the sizes, and where it is among the tree's projects. */
typedef struct DcMeasure {
        StoreSize *size;
        const Inventory *inv;
        size_t tree;
        const char *stale; /* the code of the stale project the walk is in, or NULL */
} DcMeasure;

/* Is projects/<code>/ of tree t a stale project entry whose originalPath is gone (the scan's
 * orphan; one whose path is back only waits for its marker to go)? Its code (the orphan's), or
 * NULL. */
static const char *deepcode_store_stale(const Inventory *inv, size_t t, const char *code) {
        for (size_t i = 0; i < inv->n_orphans; i++) {
                const Orphan *o = &inv->orphans[i];

                if (o->kind == ORPHAN_STALE_PROJECT && o->tree == t && !o->cwd_back &&
                    streq(o->name, code))
                        return o->name;
        }
        return NULL;
}

/* du_walk()'s callback: entry rel counted under its kind, and in its stale project's bytes. */
static int deepcode_store_count(void *userdata, const char *rel, const struct stat *st) {
        DcMeasure *m = userdata;
        StoreSize *s = m->size;
        DcKind k = S_ISDIR(st->st_mode) ? DC_KIND_DIRS : deepcode_store_classify(rel);
        const char *code;
        size_t n;

        s->files[k]++;
        s->bytes[k] += (uint64_t)st->st_size;
        s->alloc[k] += (uint64_t)st->st_blocks * 512;
        s->total_bytes += (uint64_t)st->st_size;
        s->total_alloc += (uint64_t)st->st_blocks * 512;
        if (k == DC_KIND_OTHER && s->n_unknown < STORE_SIZE_UNKNOWN_SHOWN) {
                s->unknown[s->n_unknown] = strdup(rel);
                if (!s->unknown[s->n_unknown])
                        return -ENOMEM;
                s->n_unknown++;
        }
        if (!strneq(rel, "projects/", 9))
                return 0;
        /* a directory comes before what it holds: projects/<code> sets the project */
        code = rel + 9;
        if (!strchr(code, '/') && S_ISDIR(st->st_mode)) {
                s->n_projects++;
                m->stale = deepcode_store_stale(m->inv, m->tree, code);
                s->n_stale += !!m->stale;
        }
        n = m->stale ? strlen(m->stale) : 0;
        if (m->stale && strneq(code, m->stale, n) && (code[n] == '/' || code[n] == '\0'))
                s->stale_bytes += (uint64_t)st->st_blocks * 512;
        return 0;
}

/* Why p's checkpoint objects cannot be classified, or NULL: which sessions are kept, and which
 * checkpoints they name, must be known in full. */
static const char *deepcode_store_git_unknown(const DcProject *p) {
        if (p->index_state != DC_INDEX_OK)
                return "the index cannot be read: which sessions are kept is unknown";
        for (size_t i = 0; i < p->n_sessions; i++)
                if (p->sessions[i].jsonl.present && !p->sessions[i].messages.complete)
                        return "a transcript could not be read to its end";
        return NULL;
}

/* Each project's file-history/.git objects, counted (dc_gitobj_count()) into s->git_objects
 * and a part of ret. Status alone pays for it: the scan reads no object. 0 or -ENOMEM. */
static int deepcode_store_measure_git(const char *dir, DcStore *s, StoreSize *ret) {
        _cleanup_close_ int fd = fs_open_root(dir, 0);

        if (fd < 0)
                return fd == -ENOMEM ? fd : 0;
        ret->parts = calloc(s->n_projects + 1, sizeof(StoreSizePart));
        if (!ret->parts)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_projects; i++) {
                DcProject *p = &s->projects[i];
                StoreSizePart *part = &ret->parts[ret->n_parts];
                _cleanup_free_ char *rel = util_strprintf("projects/%s/file-history/.git", p->code);
                _cleanup_free_ const char **kept = NULL, **named = NULL;
                _cleanup_close_ int gfd = -EBADF;
                DcGitInput in = {};
                int r;

                if (!rel)
                        return -ENOMEM;
                if (!p->has_file_history)
                        continue;
                gfd = fs_open_noatime(fd, rel, O_RDONLY | O_DIRECTORY);
                if (gfd == -ENOENT)
                        continue;
                p->git_objects.why = deepcode_store_git_unknown(p);
                if (!p->git_objects.why && gfd < 0)
                        p->git_objects.why = "file-history/.git cannot be opened";
                if (!p->git_objects.why) {
                        r = dc_store_git_input(p, &kept, &in.n_kept, &named, &in.n_named);
                        in.kept_ids = kept;
                        in.named = named;
                        if (r >= 0)
                                r = dc_gitobj_count(gfd, &in, &p->git_objects);
                        if (r < 0)
                                return r;
                }
                *part = (StoreSizePart){ .name = strdup(p->code), .known = p->git_objects.known,
                                         .why = p->git_objects.why };
                if (!part->name)
                        return -ENOMEM;
                ret->n_parts++;
                memcpy(part->objects, p->git_objects.objects, sizeof(part->objects));
                memcpy(part->alloc, p->git_objects.alloc, sizeof(part->alloc));
        }
        return 0;
}

_Static_assert(_DC_GITOBJ_CLASS_MAX == STORE_SIZE_WAYS, "DcGitobjClass fits StoreSizePart");

/* The bytes of tree t by DcKind: what du says of the ~/.deepcode, hard links once; its stale
 * project entries, with every byte du counts in them; and file-history's objects by project and
 * by what reaches them. */
static int deepcode_store_measure(const Inventory *inv, size_t t, StoreSize *ret) {
        const char *dir = inv->trees[t].runtime_dir;
        DcMeasure m = { .size = ret, .inv = inv, .tree = t };
        DcStore *s = NULL;
        int r;

        *ret = (StoreSize){ .n_kinds = _DC_KIND_MAX, .unknown_kind = DC_KIND_OTHER,
                            .split_title = "file-history (git) objects by project",
                            .split_key = "file_history_by_project", .part_key = "project_dir",
                            .way_names = { "live", "orphan-ref-only", "unreachable" },
                            .way_keys = { "live", "orphan_ref_only", "unreachable" },
                            .stale_what = "projects/<code>/ whose originalPath no longer exists, "
                                          "every byte in it (candidates; the plan of "
                                          "stale-project-min-age checks its guards)" };
        for (DcKind k = 0; k < _DC_KIND_MAX; k++) {
                ret->kind_names[k] = deepcode_store_kind_names[k];
                ret->kind_keys[k] = deepcode_store_kind_keys[k];
        }
        r = du_walk(dir, NULL, deepcode_store_count, &m, &ret->incomplete);
        if (ret->files[DC_KIND_ARCHIVED] == 0)
                ret->n_kinds--; /* a store qgc never archived in reads as Deep Code's alone */
        if (r < 0)
                return r;
        r = dc_store_scan(dir, util_now_msec(), &s);
        if (r == -ENOMEM)
                return r;
        if (r >= 0)
                r = deepcode_store_measure_git(dir, s, ret);
        dc_store_free(s);
        return r == -ENOMEM ? r : 0;
}

/* Deep Code keeps a transcript beside its project's index: projects/<code>/<id>.jsonl; qgc's
 * archive of it is .qgc-archive/<code>/<id>.jsonl (compressed: .zst), dc-archive.h. */
static char *deepcode_store_session_path(const Session *s, bool archived) {
        if (archived)
                return util_strprintf(DC_ARCHIVE_DIR "/%s/%s%s", s->project_dir, s->id,
                                      s->cold ? DC_ARCHIVE_ZST : ".jsonl");
        return util_strprintf("projects/%s/%s.jsonl", s->project_dir, s->id);
}

/* An orphan's path in a ~/.deepcode: project_dir is a project's code (its files below
 * projects/<code>/), "projects" (the project directory itself), or NULL (below the store). */
static char *deepcode_store_orphan_path(const Orphan *o) {
        if (!o->project_dir)
                return strdup(o->name);
        if (streq(o->project_dir, "projects"))
                return util_strprintf("projects/%s", o->name);
        return util_strprintf("projects/%s/%s", o->project_dir, o->name);
}

/* An orphan reclaimed in the tree the run opened (dc-reclaim.h). */
static int deepcode_store_run_orphan(struct StoreRun *run, const Orphan *o,
                                     const struct Verdict *v, StoreStep *step) {
        (void)v; /* the orphan's facts say which: a stale mark written or removed (dc-reclaim.c) */
        return dc_reclaim_orphan(run->store_fd, run->inv, o, step);
}

/* The delete of an indexed session is dc-delete.c's; the archive tier's verbs dc-archive.c's. */
static int deepcode_store_run_session(struct StoreRun *run, const Session *s, const Verdict *v,
                                      StoreStep *step) {
        if (v->verb == VERB_DELETE && s->state != SESSION_ARCHIVED)
                return dc_delete_session(run, s, v, step);
        return dc_archive_session(run, s, v, step);
}

static const DcRunRecovery deepcode_store_recovery[] = {
        { DC_DELETE_MARKER_PREFIX, dc_delete_recover_one },
        { DC_ARCHIVE_MARKER_PREFIX, dc_archive_recover_one },
        { DC_RESTORE_MARKER_PREFIX, dc_restore_recover_one },
        {},
};

static int deepcode_store_run_recover(struct StoreRun *run, StoreStep *step) {
        return dc_run_recover(run, deepcode_store_recovery, step);
}

static const char *deepcode_store_orphan_what(OrphanKind k) {
        switch (k) {
        case ORPHAN_DC_UNINDEXED:
                return "Deep Code transcript its index does not name";
        case ORPHAN_DC_IMAGES:
                return "Deep Code images of no session";
        case ORPHAN_DC_ERROR_LOG:
                return "Deep Code logs/error.log over 64M: reported, never trimmed";
        case ORPHAN_DC_CHECKPOINTS:
                return "Deep Code checkpoint repository, compaction frees about this";
        case ORPHAN_STALE_PROJECT:
                return "stale project entry";
        default:
                return "orphan";
        }
}
_Static_assert(DC_ERROR_LOG_REPORT == UINT64_C(64) << 20, "deepcode_store_orphan_what says 64M");

/* A RESTORE step (plan/restore.c plans it for the archived session): dc_restore_session(), or
 * refused by its plan (never begun); a failure logged. */
static int deepcode_store_restore(struct StoreRun *run, const PlanStep *st, StoreStep *step) {
        const Session *s;
        int r;

        if (st->session >= run->inv->n_sessions)
                return -EINVAL;
        s = &run->inv->sessions[st->session];
        r = st->why ? -EEXIST : dc_restore_session(run, s, step);
        if (r < 0)
                log_error("restore: cannot restore session %s in '%s': %s", s->id,
                          run->inv->trees[s->tree].runtime_dir,
                          st->why ?: step->why ?: "cannot restore it");
        else /* NULL on ENOMEM: done all the same */
                step->place = util_strprintf("%s/projects/%s",
                                             run->inv->trees[s->tree].runtime_dir, s->project_dir);
        return r;
}

const StoreOps deepcode_store = {
        .name = "deepcode",
        .conflict_what = "both in Deep Code's project and in qgc's archive",
        .restore_full = "its project's index holds 50 entries, Deep Code's most: its next save "
                        "would cut the oldest and delete its files",
        .detect = deepcode_store_detect,
        .tree_from_dir = deepcode_store_tree_from_dir,
        .tree_for_home = deepcode_store_tree_for_home,
        .project_dir = deepcode_store_project_dir,
        .scan = deepcode_store_scan,
        .measure = deepcode_store_measure,
        .session_path = deepcode_store_session_path,
        .orphan_path = deepcode_store_orphan_path,
        .orphan_what = deepcode_store_orphan_what,
        .no_archive = true,
        .session_bytes = "a session counts its transcript and images/<id>/;\n"
                         "  file-history is the project's, shared by its sessions",
        .run_open = dc_run_open,
        .run_close = dc_run_close,
        .run_recover = deepcode_store_run_recover,
        .run_session = deepcode_store_run_session,
        .run_orphan = deepcode_store_run_orphan,
        .run_restore = deepcode_store_restore,
};
