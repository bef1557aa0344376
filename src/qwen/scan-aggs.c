/* scan-aggs.c: directory totals and the orphan decision (scan-aggs.h). */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fs.h"
#include "hashmap.h"
#include "log.h"
#include "macro.h"
#include "qwen.h"
#include "scan-aggs.h"

static void scan_agg_done(ScanAgg *a) {
        free(a->name);
        a->name = NULL;
}

void scan_aggs_done(ScanAggs *a) {
        for (size_t i = 0; i < a->n; i++)
                scan_agg_done(&a->v[i]);
        free(a->v);
        free(a->bits);
        *a = (ScanAggs){};
}

static int scan_cmp_agg(const void *a, const void *b) {
        return strcmp(((const ScanAgg *)a)->name, ((const ScanAgg *)b)->name);
}

/* Build the filter of a->v's names (16 bits a name); without memory there is none. */
static void scan_aggs_filter(ScanAggs *a) {
        size_t n = 64;

        free(a->bits);
        a->bits = NULL;
        while (n < 16 * a->n)
                n *= 2;
        a->bits = calloc(n / 64, sizeof(uint64_t));
        if (!a->bits)
                return;
        a->n_bits = n;
        for (size_t i = 0; i < a->n; i++) {
                size_t b = (size_t)hashmap_fold(hashmap_hash_string(a->v[i].name)) & (n - 1);
                a->bits[b / 64] |= UINT64_C(1) << (b % 64);
        }
}

const ScanAgg *scan_aggs_find(const ScanAggs *a, const char *name) {
        ScanAgg key = { .name = (char *)name };

        if (a->n == 0)
                return NULL;
        if (a->bits) {
                size_t b = (size_t)hashmap_fold(hashmap_hash_string(name)) & (a->n_bits - 1);
                if (!(a->bits[b / 64] & (UINT64_C(1) << (b % 64))))
                        return NULL;
        }
        return bsearch(&key, a->v, a->n, sizeof(ScanAgg), scan_cmp_agg);
}

int scan_aggs_dir_sum(int dfd, dev_t dev, unsigned depth, ScanAgg *agg) {
        FsDir d;
        const char *name;
        unsigned char type;
        int r = 0, k;

        if (depth > SCAN_AGGS_DEPTH_MAX) {
                agg->incomplete = true; /* rm_rf_at() goes deeper: what it would remove is unseen */
                return 0;
        }
        fs_dir_init(&d, dfd);
        while ((k = fs_dir_next(&d, &name, &type)) > 0) {
                struct stat st;
                bool mount = false;

                if (fs_statat(dfd, name, &st, &mount) < 0)
                        continue; /* vanished */
                if (st.st_dev != dev || mount)
                        continue; /* a mount point (a bind mount too): not ours to count */
                agg->bytes += (uint64_t)st.st_size;
                agg->bytes_alloc += (uint64_t)st.st_blocks * 512;
                agg->mtime = MAX(agg->mtime, util_timespec_to_msec(&st.st_mtim));
                if (S_ISDIR(st.st_mode)) {
                        _cleanup_close_ int sub =
                                fs_open_noatime(dfd, name, O_RDONLY | O_DIRECTORY);
                        if (sub < 0) {
                                if (sub != -ENOENT) /* ENOENT: removed meanwhile */
                                        agg->incomplete = true;
                                continue;
                        }
                        r = scan_aggs_dir_sum(sub, dev, depth + 1, agg);
                        if (r == -ENOMEM)
                                return r;
                        r = 0;
                }
        }
        if (k < 0 && k != -ENOENT) /* ENOENT: removed meanwhile, nothing left to count */
                agg->incomplete = true;
        return r;
}

int scan_aggs_collect(int dfd, dev_t dev, bool only_ids, ScanAggs *aggs) {
        FsDir dir, *d = &dir; /* on the stack: a large malloc per listing costs more */
        struct { const char *d_name; } de_, *de = &de_;
        unsigned char type;
        int r = 0, k = 0;

        fs_dir_init(d, dfd);
        while ((k = fs_dir_next(d, &de->d_name, &type)) > 0) {
                _cleanup_close_ int sub = -EBADF;
                struct stat st;
                ScanAgg a = {};
                bool mount = false;

                if (only_ids && !qwen_session_id_valid(de->d_name))
                        continue;
                if (fs_statat(dfd, de->d_name, &st, &mount) < 0 || !S_ISDIR(st.st_mode) ||
                    st.st_dev != dev || mount)
                        continue;
                sub = fs_open_noatime(dfd, de->d_name, O_RDONLY | O_DIRECTORY);
                if (sub < 0)
                        continue;
                fs_fileid_from_stat(&a.dir, &st);
                a.bytes = (uint64_t)st.st_size;
                a.bytes_alloc = (uint64_t)st.st_blocks * 512;
                a.mtime = util_timespec_to_msec(&st.st_mtim);
                r = scan_aggs_dir_sum(sub, dev, 1, &a);
                if (r < 0)
                        break;
                a.name = strdup(de->d_name);
                if (!a.name || util_greedy_realloc((void **)&aggs->v, &aggs->alloc, aggs->n + 1,
                                                   sizeof(ScanAgg)) < 0) {
                        free(a.name);
                        r = -ENOMEM;
                        break;
                }
                aggs->v[aggs->n++] = a;
        }
        if (k < 0 && k != -ENOENT)
                aggs->incomplete = true;
        if (aggs->n > 1)
                qsort(aggs->v, aggs->n, sizeof(ScanAgg), scan_cmp_agg);
        if (aggs->n > 0)
                scan_aggs_filter(aggs);
        return r;
}

int scan_aggs_pend(ScanPendings *to, size_t tree, OrphanKind kind, const char *project_dir,
                   ScanAggs *aggs) {
        for (size_t i = 0; i < aggs->n; i++) {
                ScanPending p = { .kind = kind, .tree = tree };

                if (project_dir) {
                        p.project_dir = strdup(project_dir);
                        if (!p.project_dir)
                                return -ENOMEM;
                }
                if (util_greedy_realloc((void **)&to->v, &to->alloc, to->n + 1,
                                        sizeof(ScanPending)) < 0) {
                        free(p.project_dir);
                        return -ENOMEM;
                }
                p.agg = aggs->v[i];
                aggs->v[i] = (ScanAgg){};
                to->v[to->n++] = p;
        }
        scan_aggs_done(aggs);
        return 0;
}

void scan_aggs_pendings_done(ScanPendings *p) {
        for (size_t i = 0; i < p->n; i++) {
                free(p->v[i].project_dir);
                scan_agg_done(&p->v[i].agg);
        }
        free(p->v);
        *p = (ScanPendings){};
}

typedef struct ScanIdKey {
        const ScanPendings *pend;
        const char *id;
} ScanIdKey;

/* entry: a pending directory's index + 1 */
static bool scan_pending_eq(const void *entry, const void *key) {
        const ScanIdKey *k = key;

        return qwen_session_id_equal(k->pend->v[(uintptr_t)entry - 1].agg.name, k->id);
}

/* The set is of the pending directories' ids (a few thousand), each session's id looked up in
 * it: a table that stays in the cache, not one of every session (100k). */
int scan_aggs_orphans(Inventory *inv, const StoreOps *store, ScanPendings *pend) {
        _cleanup_(hashmap_donep) Hashmap set = {};
        _cleanup_free_ size_t *rep = NULL; /* a pending directory's first one of its id */
        _cleanup_free_ bool *found = NULL; /* a transcript has the id of rep */
        int r;

        if (pend->n == 0)
                return 0;
        /* a session id may be missing: a directory would look like an orphan of it */
        for (size_t t = 0; t < inv->n_trees; t++)
                if (inv->trees[t].incomplete && inv->trees[t].store == store) {
                        if (inv->trees[t].incomplete_why)
                                log_notice("orphans are not decided in this run: '%s': %s",
                                           inv->trees[t].global_dir,
                                           inv->trees[t].incomplete_why);
                        else
                                log_notice("orphans are not decided in this run: '%s' was not "
                                           "fully listed", inv->trees[t].runtime_dir);
                        return 0;
                }
        rep = calloc(pend->n, sizeof(size_t));
        found = calloc(pend->n, sizeof(bool));
        if (!rep || !found)
                return -ENOMEM;
        /* the pending ids, ignoring ASCII case */
        r = hashmap_reserve(&set, pend->n);
        for (size_t i = 0; r >= 0 && i < pend->n; i++) {
                ScanIdKey key = { pend, pend->v[i].agg.name };
                uint64_t h = hashmap_hash_string_ascii_lower(pend->v[i].agg.name);
                HashSlot *slot = hashmap_slot(&set, h, scan_pending_eq, &key);

                if (!slot->entry)
                        hashmap_fill(&set, slot, h, (void *)(uintptr_t)(i + 1));
                rep[i] = (uintptr_t)slot->entry - 1;
        }
        if (r < 0)
                return r;
        /* every session of every tree */
        for (size_t i = 0; i < inv->n_sessions; i++) {
                ScanIdKey key = { pend, inv->sessions[i].id };
                void *e = hashmap_get(&set, hashmap_hash_string_ascii_lower(inv->sessions[i].id),
                                      scan_pending_eq, &key);

                if (e)
                        found[(uintptr_t)e - 1] = true;
        }
        for (size_t i = 0; r >= 0 && i < pend->n; i++) {
                ScanPending *p = &pend->v[i];
                Orphan o;

                if (found[rep[i]])
                        continue;
                if (p->agg.incomplete) {
                        /* what could not be listed in full is never an orphan: its sizes and
                         * mtime are not known, and a removal would take what was never seen */
                        log_notice("%s%s%s/%s: no transcript, but not listed in full (deeper "
                                   "than %u levels or a directory that cannot be opened): kept",
                                   p->project_dir ? "projects/" : "",
                                   p->project_dir ?: "",
                                   p->kind == ORPHAN_SUBAGENTS ? "/subagents" : "file-history",
                                   p->agg.name, SCAN_AGGS_DEPTH_MAX);
                        continue;
                }
                o = (Orphan){
                        .kind = p->kind,
                        .tree = p->tree,
                        .project_dir = TAKE_PTR(p->project_dir),
                        .name = TAKE_PTR(p->agg.name),
                        .dir = p->agg.dir,
                        .bytes = p->agg.bytes,
                        .bytes_alloc = p->agg.bytes_alloc,
                        .mtime = p->agg.mtime,
                };
                r = inventory_add_orphan(inv, &o);
        }
        return r < 0 ? r : 0;
}
