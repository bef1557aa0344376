/* inventory.c: the records of a scan (trees, sessions, orphans), their lifetimes and lookup. */
#include "autoconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inventory.h"
#include "macro.h"
#include "strtable.h"

static void *inventory_mfree(void *p) {
        free(p);
        return NULL;
}

int inventory_new(Inventory **ret) {
        Inventory *inv = calloc(1, sizeof(Inventory));

        if (!inv)
                return -ENOMEM;
        *ret = inv;
        return 0;
}

void inventory_tree_done(Tree *t) {
        if (!t)
                return;
        free(t->global_dir);
        free(t->runtime_dir);
        free(t->user);
        t->global_dir = t->runtime_dir = t->user = NULL;
}

void inventory_session_done(Session *s) {
        if (!s)
                return;
        free(s->project_dir);
        free(s->cwd);
        free(s->hash);
        free(s->owner_detail);
        free(s->owner_dir);
        free(s->title);
        free(s->live_reason);
        s->project_dir = s->cwd = s->hash = s->owner_detail = s->owner_dir = s->title =
                s->live_reason = NULL;
}

void inventory_orphan_done(Orphan *o) {
        if (!o)
                return;
        free(o->project_dir);
        free(o->name);
        free(o->cwds);
        free(o->stale_why);
        o->project_dir = o->name = o->cwds = o->stale_why = NULL;
}

Inventory *inventory_free(Inventory *inv) {
        if (!inv)
                return NULL;
        for (size_t i = 0; i < inv->n_trees; i++)
                inventory_tree_done(&inv->trees[i]);
        for (size_t i = 0; i < inv->n_sessions; i++) {
                Session *s = &inv->sessions[i];
                /* project_dir, cwd, hash and the owner's facts belong to inv->strings */
                s->project_dir = s->cwd = s->hash = s->owner_detail = s->owner_dir = NULL;
                inventory_session_done(s);
        }
        hashmap_done(&inv->strings, free);
        for (size_t i = 0; i < inv->n_orphans; i++)
                inventory_orphan_done(&inv->orphans[i]);
        free(inv->trees);
        free(inv->sessions);
        free(inv->orphans);
        free(inv->by_id);
        free(inv);
        return NULL;
}

int inventory_add_tree(Inventory *inv, Tree *t, size_t *ret_index) {
        int r;

        /* Session.tree is 32 bits */
        r = inv->n_trees >= UINT32_MAX
                    ? -E2BIG
                    : util_greedy_realloc((void **)&inv->trees, &inv->alloc_trees, inv->n_trees + 1,
                                          sizeof(Tree));
        if (r < 0) {
                inventory_tree_done(t);
                return r;
        }
        inv->trees[inv->n_trees] = *t;
        *t = (Tree){};
        if (ret_index)
                *ret_index = inv->n_trees;
        inv->n_trees++;
        return 0;
}

/* Replace the owned string *p by the set's copy of it (adding it when new). Needs room. prev: the
 * same field of the previous session (a shared copy or NULL), the usual match. */
static void inventory_intern(Inventory *inv, char **p, char *prev) {
        HashSlot *slot;
        uint64_t h;

        if (!*p)
                return;
        if (prev && streq(prev, *p)) {
                free(*p);
                *p = prev;
                return;
        }
        h = hashmap_hash_string(*p);
        slot = hashmap_slot(&inv->strings, h, hashmap_eq_string, *p);
        if (slot->entry) {
                if (slot->entry != *p)
                        free(*p);
        } else
                hashmap_fill(&inv->strings, slot, h, *p);
        *p = slot->entry;
}

int inventory_add_session(Inventory *inv, Session *s) {
        int r;

        r = util_greedy_realloc((void **)&inv->sessions, &inv->alloc_sessions, inv->n_sessions + 1,
                                sizeof(Session));
        if (r >= 0)
                r = hashmap_reserve(&inv->strings, 5);
        if (r < 0) {
                inventory_session_done(s);
                return r;
        }
        const Session *prev = inv->n_sessions > 0 ? &inv->sessions[inv->n_sessions - 1] : NULL;
        inventory_intern(inv, &s->project_dir, prev ? prev->project_dir : NULL);
        inventory_intern(inv, &s->cwd, prev ? prev->cwd : NULL);
        inventory_intern(inv, &s->hash, prev ? prev->hash : NULL);
        inventory_intern(inv, &s->owner_detail, prev ? prev->owner_detail : NULL);
        inventory_intern(inv, &s->owner_dir, prev ? prev->owner_dir : NULL);
        inv->sessions[inv->n_sessions++] = *s;
        *s = (Session){};
        /* the index no longer covers every session */
        inv->by_id = inventory_mfree(inv->by_id);
        inv->n_by_id = 0;
        return 0;
}

int inventory_add_orphan(Inventory *inv, Orphan *o) {
        int r;

        r = util_greedy_realloc((void **)&inv->orphans, &inv->alloc_orphans, inv->n_orphans + 1,
                                sizeof(Orphan));
        if (r < 0) {
                inventory_orphan_done(o);
                return r;
        }
        inv->orphans[inv->n_orphans++] = *o;
        *o = (Orphan){};
        return 0;
}

/* NULL sorts before any string */
static int inventory_strcmp_null(const char *a, const char *b) {
        if (a == b) /* shared copies, or both NULL */
                return 0;
        if (!a || !b)
                return (a != NULL) - (b != NULL);
        return strcmp(a, b);
}

static int inventory_cmp_session(const void *pa, const void *pb) {
        const Session *a = pa, *b = pb;
        int c;

        if (a->tree != b->tree)
                return a->tree < b->tree ? -1 : 1;
        c = inventory_strcmp_null(a->project_dir, b->project_dir);
        if (c != 0)
                return c;
        c = inventory_strcmp_null(a->cwd, b->cwd);
        if (c != 0)
                return c;
        return strcmp(a->id, b->id);
}

/* The index is built by sorting (tree, id, index) keys, so no comparator needs the array. */
typedef struct IndexKey {
        size_t tree;
        uint64_t prefix; /* the first 8 bytes of the id, ASCII-lowered, big-endian: same order */
        const char *id;
        size_t index;
} IndexKey;

/* The first 8 bytes of s (NUL-padded) lowered, as a number that sorts like the bytes. */
static uint64_t inventory_id_prefix(const char *s) {
        uint64_t v = 0;
        size_t i = 0;

        for (; i < 8 && s[i]; i++) {
                unsigned char x = (unsigned char)s[i];
                if (x >= 'A' && x <= 'Z')
                        x = (unsigned char)(x - 'A' + 'a');
                v = (v << 8) | x;
        }
        return v << (8 * (8 - i));
}

static int inventory_cmp_key(const void *pa, const void *pb) {
        const IndexKey *a = pa, *b = pb;
        int c;

        if (a->tree != b->tree)
                return a->tree < b->tree ? -1 : 1;
        if (a->prefix != b->prefix)
                return a->prefix < b->prefix ? -1 : 1;
        c = util_ascii_strcasecmp(a->id, b->id);
        if (c != 0)
                return c;
        return a->index < b->index ? -1 : a->index > b->index;
}

int inventory_index(Inventory *inv) {
        _cleanup_free_ IndexKey *keys = NULL;
        size_t *by_id;

        inv->by_id = inventory_mfree(inv->by_id);
        inv->n_by_id = 0;
        if (inv->n_sessions == 0)
                return 0;
        keys = calloc(inv->n_sessions, sizeof(IndexKey));
        by_id = calloc(inv->n_sessions, sizeof(size_t));
        if (!keys || !by_id) {
                free(by_id);
                return -ENOMEM;
        }
        for (size_t i = 0; i < inv->n_sessions; i++)
                keys[i] = (IndexKey){ .tree = inv->sessions[i].tree,
                                      .prefix = inventory_id_prefix(inv->sessions[i].id),
                                      .id = inv->sessions[i].id,
                                      .index = i };
        qsort(keys, inv->n_sessions, sizeof(IndexKey), inventory_cmp_key);
        for (size_t i = 0; i < inv->n_sessions; i++)
                by_id[i] = keys[i].index;
        inv->by_id = by_id;
        inv->n_by_id = inv->n_sessions;
        return 0;
}

/* Is a block already in inventory_cmp_session() order? */
static bool inventory_block_sorted(const Session *v, size_t n) {
        for (size_t i = 1; i < n; i++)
                if (inventory_cmp_session(&v[i - 1], &v[i]) > 0)
                        return false;
        return true;
}

/* Are the sessions in blocks of one (tree, project_dir) each, the blocks in ascending order (as
 * the scan adds them)? Then sorting each block sorts the whole. */
static bool inventory_blocks_ordered(const Inventory *inv) {
        for (size_t i = 1; i < inv->n_sessions; i++) {
                const Session *a = &inv->sessions[i - 1], *b = &inv->sessions[i];
                int c = a->tree != b->tree ? (a->tree < b->tree ? -1 : 1)
                                           : inventory_strcmp_null(a->project_dir, b->project_dir);
                if (c > 0)
                        return false;
        }
        return true;
}

void inventory_sort(Inventory *inv) {
        if (inv->n_sessions > 1 && inventory_blocks_ordered(inv)) {
                for (size_t k = 0, e; k < inv->n_sessions; k = e) {
                        const Session *first = &inv->sessions[k];
                        for (e = k + 1; e < inv->n_sessions && inv->sessions[e].tree == first->tree &&
                                        inventory_strcmp_null(inv->sessions[e].project_dir,
                                                              first->project_dir) == 0;
                             e++)
                                ;
                        /* a project's sessions arrive in id order: most blocks need no sort */
                        if (e - k > 1 && !inventory_block_sorted(inv->sessions + k, e - k))
                                qsort(inv->sessions + k, e - k, sizeof(Session),
                                      inventory_cmp_session);
                }
        } else if (inv->n_sessions > 1)
                qsort(inv->sessions, inv->n_sessions, sizeof(Session), inventory_cmp_session);
        /* the order changed: an index would point at the wrong sessions */
        inv->by_id = inventory_mfree(inv->by_id);
        inv->n_by_id = 0;
}

/* Binary search of the index for (tree, id): the first match, or NULL. */
static const Session *inventory_find_indexed(const Inventory *inv, size_t tree, const char *id) {
        size_t lo = 0, hi = inv->n_by_id;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const Session *s = &inv->sessions[inv->by_id[mid]];
                int c = s->tree != tree ? (s->tree < tree ? -1 : 1)
                                        : util_ascii_strcasecmp(s->id, id);
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo < inv->n_by_id) {
                const Session *s = &inv->sessions[inv->by_id[lo]];
                if (s->tree == tree && util_ascii_strcasecmp(s->id, id) == 0)
                        return s;
        }
        return NULL;
}

const Session *inventory_find(const Inventory *inv, size_t tree, const char *id) {
        if (!inv || !id)
                return NULL;
        if (inv->by_id && inv->n_by_id == inv->n_sessions) {
                if (tree != SIZE_MAX)
                        return inventory_find_indexed(inv, tree, id);
                /* the index is ordered by tree first: its last entry has the highest tree */
                size_t max_tree = inv->n_by_id > 0 ? inv->sessions[inv->by_id[inv->n_by_id - 1]].tree : 0;
                for (size_t t = 0; inv->n_by_id > 0 && t <= max_tree; t++) {
                        const Session *s = inventory_find_indexed(inv, t, id);
                        if (s)
                                return s;
                }
                return NULL;
        }
        for (size_t i = 0; i < inv->n_sessions; i++) {
                const Session *s = &inv->sessions[i];
                if ((tree == SIZE_MAX || s->tree == tree) && util_ascii_strcasecmp(s->id, id) == 0)
                        return s;
        }
        return NULL;
}

void inventory_session_time(Inventory *inv, size_t tree, SessionTimeEvent ev, msec_t at,
                            const char *id) {
        const Session *found = inventory_find(inv, tree, id);
        Session *s;

        if (!found)
                return;
        s = &inv->sessions[found - inv->sessions];
        switch (ev) {
        case SESSION_TIME_ARCHIVED:
                s->archived_at = at;
                s->restored_at = 0;
                s->restore_pending = false;
                break;
        case SESSION_TIME_RESTORE:
        case SESSION_TIME_RESTORE_TO_ARCHIVE:
                s->restored_at = at;
                s->restore_pending = true;
                s->restore_to_archive = ev == SESSION_TIME_RESTORE_TO_ARCHIVE;
                s->archived_at = 0;
                break;
        case SESSION_TIME_RESTORED:
                if (s->restored_at == 0)
                        s->restored_at = at;
                s->restore_pending = false;
                break;
        default:
                break;
        }
}

static const char *const inventory_session_state_table[_SESSION_STATE_MAX] = {
        [SESSION_ACTIVE] = "active",
        [SESSION_ARCHIVED] = "archived",
        [SESSION_CONFLICT] = "conflict",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(inventory_session_state, SessionState);

static const char *const inventory_owner_status_table[_OWNER_STATUS_MAX] = {
        [OWNER_OK] = "ok",
        [OWNER_WORKTREE] = "worktree",
        [OWNER_CLAIM] = "claim",
        [OWNER_FOREIGN] = "foreign",
        [OWNER_UNVERIFIED] = "unverified",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(inventory_owner_status, OwnerStatus);

static const char *const inventory_orphan_kind_table[_ORPHAN_KIND_MAX] = {
        [ORPHAN_FILE_HISTORY] = "file-history",
        [ORPHAN_SUBAGENTS] = "subagents",
        [ORPHAN_EMPTY_PROJECT] = "empty-project",
        [ORPHAN_TOOL_RESULT] = "tool-result",
        [ORPHAN_TMP_PROJECT] = "stale-tmp",
        [ORPHAN_DEBUG_LOG] = "debug-log",
        [ORPHAN_PLAN] = "plan",
        [ORPHAN_LEGACY] = "legacy",
        [ORPHAN_STALE_PROJECT] = "stale-project",
        [ORPHAN_DC_UNINDEXED] = "deepcode-unindexed",
        [ORPHAN_DC_IMAGES] = "deepcode-images",
        [ORPHAN_DC_ERROR_LOG] = "deepcode-error-log",
        [ORPHAN_DC_CHECKPOINTS] = "deepcode-checkpoints",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(inventory_orphan_kind, OrphanKind);

static const char *const live_flag_names[] = {
        "registry", "claim", "lock", "recent", "unknown",
};

void inventory_cold_totals(const Inventory *inv, size_t *ret_n, uint64_t *ret_bytes,
                           uint64_t *ret_orig) {
        uint64_t bytes = 0, orig = 0;
        size_t n = 0;

        for (size_t i = 0; i < inv->n_sessions; i++)
                if (inventory_session_is_cold(&inv->sessions[i])) {
                        n++;
                        bytes += inv->sessions[i].cold_bytes;
                        orig += inv->sessions[i].cold_orig;
                }
        *ret_n = n;
        *ret_bytes = bytes;
        *ret_orig = orig;
}

char *inventory_live_flags_to_string(char *buf, size_t n, unsigned flags) {
        size_t len = 0;

        if (n == 0)
                return buf;
        buf[0] = 0;
        for (size_t i = 0; i < ELEMENTSOF(live_flag_names); i++) {
                if (!(flags & (1u << i)))
                        continue;
                int k = snprintf(buf + len, n - len, "%s%s", len > 0 ? "," : "",
                                 live_flag_names[i]);
                if (k < 0 || (size_t)k >= n - len) {
                        buf[len] = 0; /* drop the truncated name */
                        break;
                }
                len += (size_t)k;
        }
        return buf;
}

bool inventory_hygiene_kind(OrphanKind k) {
        return k >= ORPHAN_TOOL_RESULT && k <= ORPHAN_STALE_PROJECT;
}

bool inventory_stale_member(const Orphan *o, const Session *s) {
        return s->tree == o->tree && s->project_dir && o->name && streq(s->project_dir, o->name);
}
