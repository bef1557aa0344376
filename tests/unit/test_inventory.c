/* test_inventory.c: inventory.c's records, pure: the interning of a session's shared strings
 * (project_dir, cwd, hash, owner_detail, owner_dir: one copy per distinct value, whether the
 * same value came just before or much earlier), the ownership hand-over of the add functions,
 * the stable order of inventory_sort() (its per-project fast path and the general sort agree),
 * inventory_find() by id ignoring case, per tree or in any, with and without the index (and the
 * index dropped whenever it would be stale), and the enum and flag strings. */
#include "autoconf.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "inventory.h"
#include "macro.h"

static char *dup_or_null(const char *s) {
        char *p;

        if (!s)
                return NULL;
        p = strdup(s);
        assert_non_null(p);
        return p;
}

/* Add a session with freshly allocated strings (so equal values start as distinct copies). */
static void add(Inventory *inv, size_t tree, const char *id, const char *project_dir,
                const char *cwd, const char *detail) {
        Session s = { .tree = tree };

        assert_true(strlen(id) < sizeof s.id);
        strcpy(s.id, id);
        s.project_dir = dup_or_null(project_dir);
        s.cwd = dup_or_null(cwd);
        s.hash = dup_or_null(cwd ? "0123abcd" : NULL);
        s.owner_detail = dup_or_null(detail);
        s.owner_dir = dup_or_null(detail ? project_dir : NULL);
        assert_int_equal(inventory_add_session(inv, &s), 0);
        /* the inventory took the strings */
        assert_null(s.project_dir);
        assert_null(s.cwd);
        assert_null(s.hash);
        assert_null(s.owner_detail);
        assert_null(s.owner_dir);
}

static void test_inventory_interning(void **state) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        const Session *v;

        (void)state;
        assert_int_equal(inventory_new(&inv), 0);
        add(inv, 0, "a1", "-p", "/p", NULL);
        add(inv, 0, "a2", "-p", "/p", NULL);              /* as the previous one */
        add(inv, 0, "a3", "-q", "/q", "x.runtime.json");
        add(inv, 0, "a4", "-p", "/p", "x.runtime.json");  /* as one further back */
        add(inv, 0, "a5", "-p", NULL, NULL);
        v = inv->sessions;
        assert_int_equal(inv->n_sessions, 5);

        /* equal values: one copy */
        assert_ptr_equal(v[0].project_dir, v[1].project_dir);
        assert_ptr_equal(v[0].project_dir, v[3].project_dir);
        assert_ptr_equal(v[0].project_dir, v[4].project_dir);
        assert_ptr_equal(v[0].cwd, v[1].cwd);
        assert_ptr_equal(v[0].cwd, v[3].cwd);
        assert_ptr_equal(v[0].hash, v[2].hash);
        assert_ptr_equal(v[2].owner_detail, v[3].owner_detail);
        /* one set for every field: the same text in two fields is one copy too */
        assert_ptr_equal(v[3].owner_dir, v[0].project_dir);
        /* distinct values stay distinct, NULL stays NULL */
        assert_ptr_not_equal(v[0].project_dir, v[2].project_dir);
        assert_string_equal(v[2].project_dir, "-q");
        assert_string_equal(v[2].cwd, "/q");
        assert_string_equal(v[3].cwd, "/p");
        assert_null(v[4].cwd);
        assert_null(v[4].hash);
        assert_null(v[0].owner_detail);
        assert_int_equal(inv->strings.n, 6); /* -p /p 0123abcd -q /q x.runtime.json */
        /* inventory_free() releases each copy once (ASan checks) */
}

/* Orphans and trees are taken too: the caller's record is emptied. */
static void test_inventory_take_tree_orphan(void **state) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        Tree t = { .global_dir = strdup("/g"), .runtime_dir = strdup("/r") };
        Orphan o = { .kind = ORPHAN_FILE_HISTORY, .name = strdup("a1") };
        size_t idx = 99;

        (void)state;
        assert_int_equal(inventory_new(&inv), 0);
        assert_int_equal(inventory_add_tree(inv, &t, &idx), 0);
        assert_int_equal(idx, 0);
        assert_null(t.global_dir);
        t = (Tree){ .global_dir = strdup("/g2"), .runtime_dir = strdup("/r2") };
        assert_int_equal(inventory_add_tree(inv, &t, &idx), 0);
        assert_int_equal(idx, 1);
        assert_string_equal(inv->trees[1].runtime_dir, "/r2");
        assert_int_equal(inventory_add_orphan(inv, &o), 0);
        assert_null(o.name);
        assert_int_equal(inv->n_orphans, 1);
        assert_string_equal(inv->orphans[0].name, "a1");
}

static void assert_sorted(const Inventory *inv, const char *const *want, size_t n) {
        assert_int_equal(inv->n_sessions, n);
        for (size_t i = 0; i < n; i++)
                if (!streq(inv->sessions[i].id, want[i]))
                        fail_msg("position %zu: %s, want %s", i, inv->sessions[i].id, want[i]);
}

/* (tree, project_dir, cwd, id); NULL cwd first. Sessions added in per-project blocks (the
 * scan's order, the fast path) and in any order (qsort) end in the same order. */
static void test_inventory_sort(void **state) {
        static const char *const want[] = { "b", "c", "a", "d", "e", "f" };
        _cleanup_(inventory_freep) Inventory *blocks = NULL, *mixed = NULL;

        (void)state;
        assert_int_equal(inventory_new(&blocks), 0);
        add(blocks, 0, "a", "-p", "/p", NULL);
        add(blocks, 0, "c", "-p", "/a", NULL);
        add(blocks, 0, "b", "-p", NULL, NULL);
        add(blocks, 0, "d", "-q", "/q", NULL);
        add(blocks, 1, "f", "-a", "/a", NULL);
        add(blocks, 1, "e", "-a", "/a", NULL);
        inventory_sort(blocks);
        assert_sorted(blocks, (const char *const[]){ "b", "c", "a", "d", "e", "f" }, 6);

        assert_int_equal(inventory_new(&mixed), 0);
        add(mixed, 1, "f", "-a", "/a", NULL);
        add(mixed, 0, "d", "-q", "/q", NULL);
        add(mixed, 0, "a", "-p", "/p", NULL);
        add(mixed, 1, "e", "-a", "/a", NULL);
        add(mixed, 0, "b", "-p", NULL, NULL);
        add(mixed, 0, "c", "-p", "/a", NULL);
        inventory_sort(mixed);
        assert_sorted(mixed, want, ELEMENTSOF(want));
        /* the strings moved with their sessions */
        assert_string_equal(mixed->sessions[3].project_dir, "-q");
        assert_int_equal(mixed->sessions[4].tree, 1);
}

/* inventory_find(): per tree or any (SIZE_MAX), id case ignored; the same answers from the
 * linear search and from the index; ids that share their first 8 bytes, or are shorter. */
static void test_inventory_find(void **state) {
        static const char *const ids[] = {
                "aaaaaaaa-0000-4000-8000-000000000002", "aaaaaaaa-0000-4000-8000-000000000001",
                "AAAAAAAA-0000-4000-8000-000000000003", "ab", "abc", "b",
        };
        _cleanup_(inventory_freep) Inventory *inv = NULL;

        (void)state;
        assert_int_equal(inventory_new(&inv), 0);
        for (size_t i = 0; i < ELEMENTSOF(ids); i++)
                add(inv, 0, ids[i], "-p", "/p", NULL);
        add(inv, 1, "zz", "-p", "/p", NULL);
        add(inv, 2, "aaaaaaaa-0000-4000-8000-000000000001", "-p", "/p", NULL);

        for (int indexed = 0; indexed < 2; indexed++) {
                if (indexed) {
                        assert_int_equal(inventory_index(inv), 0);
                        assert_non_null(inv->by_id);
                }
                for (size_t i = 0; i < ELEMENTSOF(ids); i++) {
                        char up[64];
                        const Session *s = inventory_find(inv, 0, ids[i]);

                        assert_non_null(s);
                        assert_string_equal(s->id, ids[i]);
                        snprintf(up, sizeof up, "%s", ids[i]);
                        for (char *p = up; *p; p++)
                                if (*p >= 'a' && *p <= 'z')
                                        *p = (char)(*p - 'a' + 'A');
                        assert_ptr_equal(inventory_find(inv, 0, up), s);
                        assert_ptr_equal(inventory_find(inv, SIZE_MAX, up), s);
                }
                assert_null(inventory_find(inv, 0, "a"));
                assert_null(inventory_find(inv, 0, "abcd"));
                assert_null(inventory_find(inv, 0, "aaaaaaaa-0000-4000-8000-000000000004"));
                assert_null(inventory_find(inv, 0, "zz"));
                assert_null(inventory_find(inv, 3, "zz"));
                assert_string_equal(inventory_find(inv, 1, "ZZ")->id, "zz");
                assert_int_equal(inventory_find(inv, SIZE_MAX, "zz")->tree, 1);
                /* in two trees: per tree, each; in any, the first tree's */
                assert_int_equal(inventory_find(inv, 2, "AAAAAAAA-0000-4000-8000-000000000001")->tree, 2);
                assert_int_equal(inventory_find(inv, SIZE_MAX, "aaaaaaaa-0000-4000-8000-000000000001")->tree, 0);
                assert_null(inventory_find(inv, 1, "aaaaaaaa-0000-4000-8000-000000000001"));
                assert_null(inventory_find(NULL, 0, "b"));
                assert_null(inventory_find(inv, 0, NULL));
        }
}

/* The index never answers for an order or a set of sessions it was not built from. */
static void test_inventory_index_dropped(void **state) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        const Session *s;

        (void)state;
        assert_int_equal(inventory_new(&inv), 0);
        add(inv, 0, "c", "-q", "/q", NULL);
        add(inv, 0, "a", "-p", "/p", NULL);
        assert_int_equal(inventory_index(inv), 0);
        add(inv, 0, "b", "-p", "/p", NULL);
        assert_null(inv->by_id);
        s = inventory_find(inv, 0, "B");
        assert_non_null(s);
        assert_string_equal(s->id, "b");

        assert_int_equal(inventory_index(inv), 0);
        inventory_sort(inv);
        assert_null(inv->by_id);
        for (const char *id = "abc"; *id; id++) {
                char one[2] = { *id, 0 };
                s = inventory_find(inv, 0, one);
                assert_non_null(s);
                assert_string_equal(s->id, one);
        }
        assert_int_equal(inventory_index(inv), 0);
        for (const char *id = "abc"; *id; id++) {
                char one[2] = { *id, 0 };
                s = inventory_find(inv, 0, one);
                assert_non_null(s);
                assert_string_equal(s->id, one);
        }
}

static void test_inventory_strings(void **state) {
        char buf[64];

        (void)state;
        assert_string_equal(inventory_session_state_to_string(SESSION_ACTIVE), "active");
        assert_string_equal(inventory_session_state_to_string(SESSION_ARCHIVED), "archived");
        assert_string_equal(inventory_session_state_to_string(SESSION_CONFLICT), "conflict");
        assert_string_equal(inventory_owner_status_to_string(OWNER_OK), "ok");
        assert_string_equal(inventory_owner_status_to_string(OWNER_WORKTREE), "worktree");
        assert_string_equal(inventory_owner_status_to_string(OWNER_CLAIM), "claim");
        assert_string_equal(inventory_owner_status_to_string(OWNER_FOREIGN), "foreign");
        assert_string_equal(inventory_owner_status_to_string(OWNER_UNVERIFIED), "unverified");
        assert_null(inventory_owner_status_to_string(_OWNER_STATUS_MAX));
        assert_string_equal(inventory_orphan_kind_to_string(ORPHAN_FILE_HISTORY), "file-history");
        assert_string_equal(inventory_orphan_kind_to_string(ORPHAN_EMPTY_PROJECT), "empty-project");
        assert_string_equal(inventory_orphan_kind_to_string(ORPHAN_TMP_PROJECT), "stale-tmp");
        assert_string_equal(inventory_orphan_kind_to_string(ORPHAN_STALE_PROJECT), "stale-project");
        for (int k = 0; k < _ORPHAN_KIND_MAX; k++)
                assert_non_null(inventory_orphan_kind_to_string((OrphanKind)k));

        assert_string_equal(inventory_live_flags_to_string(buf, sizeof buf, 0), "");
        assert_string_equal(inventory_live_flags_to_string(buf, sizeof buf, LIVE_REGISTRY), "registry");
        assert_string_equal(inventory_live_flags_to_string(buf, sizeof buf, LIVE_CLAIM | LIVE_LOCK), "claim,lock");
        assert_string_equal(inventory_live_flags_to_string(buf, sizeof buf,
                                                 LIVE_REGISTRY | LIVE_CLAIM | LIVE_LOCK | LIVE_RECENT | LIVE_UNKNOWN),
                            "registry,claim,lock,recent,unknown");
        /* a name that does not fit is dropped whole, never cut */
        assert_string_equal(inventory_live_flags_to_string(buf, 12, LIVE_REGISTRY | LIVE_CLAIM), "registry");
        assert_string_equal(inventory_live_flags_to_string(buf, 8, LIVE_REGISTRY), "");
        assert_string_equal(inventory_live_flags_to_string(buf, 9, LIVE_REGISTRY), "registry");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_inventory_interning),
                cmocka_unit_test(test_inventory_take_tree_orphan),
                cmocka_unit_test(test_inventory_sort),
                cmocka_unit_test(test_inventory_find),
                cmocka_unit_test(test_inventory_index_dropped),
                cmocka_unit_test(test_inventory_strings),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
