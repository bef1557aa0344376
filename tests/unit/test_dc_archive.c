/* test_dc_archive.c: the scan of qgc's archive of Deep Code sessions (dc-store.h's layout,
 * ~/.deepcode/.qgc-archive/<code>/, made by hand): archived sessions (plain, compressed, both),
 * their entry's fields, bytes and archived_at, the conflicts with what Deep Code lists, an
 * archive not whole or of a project that is gone (not proven), a symlink never followed, the
 * checkpoint repository's compaction keeping archived ids and their checkpoints, the stale
 * project rule held back, and status counting the archive as its own kind (total = du). */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cold.h"
#include "dc-store.h"
#include "deepcode-store.h"
#include "fixture.h"
#include "inventory.h"
#include "macro.h"
#include "store.h"
#include "util.h"

#define NOW ((msec_t)1800000000 * 1000)
#define ID1 "aaaaaaaa-0000-4000-8000-000000000001"
#define ID3 "aaaaaaaa-0000-4000-8000-000000000003"
#define ID4 "aaaaaaaa-0000-4000-8000-000000000004"
#define ID5 "aaaaaaaa-0000-4000-8000-000000000005"
#define ID6 "aaaaaaaa-0000-4000-8000-000000000006"
#define ID7 "aaaaaaaa-0000-4000-8000-000000000007"
#define ID8 "aaaaaaaa-0000-4000-8000-000000000008"
#define H1 "1111111111111111111111111111111111111111"
#define H2 "2222222222222222222222222222222222222222"
#define H3 "3333333333333333333333333333333333333333"
#define P "s/.deepcode/projects/-srv-x/"
#define A "s/.deepcode/.qgc-archive/-srv-x/"

static const char *entry(const char *id) {
        static char buf[512];

        snprintf(buf, sizeof buf, "{\n  \"id\": \"%s\",\n  \"summary\": \"archived %s\",\n"
                 "  \"createTime\": \"2026-01-01T00:00:00.000Z\",\n"
                 "  \"updateTime\": \"2026-01-02T00:00:00.000Z\",\n  \"status\": \"completed\"\n}",
                 id, id);
        return buf;
}

static void archived(const char *root, const char *dir, const char *id, const char *hashes,
                     bool plain, bool zst) {
        _cleanup_free_ char *e = util_strprintf("%s%s.entry.json", dir, id);
        _cleanup_free_ char *h = util_strprintf("%s%s.checkpoints", dir, id);
        _cleanup_free_ char *j = util_strprintf("%s%s.jsonl", dir, id);
        _cleanup_free_ char *line = util_strprintf("{\"sessionId\":\"%s\",\"role\":\"user\"}\n", id);

        assert_int_equal(fixture_write(root, e, entry(id)), 0);
        assert_int_equal(fixture_write(root, h, hashes), 0);
        assert_int_equal(fixture_write(root, j, line), 0);
        if (zst) {
                _cleanup_free_ char *d = fixture_path(root, dir);
                _cleanup_free_ char *name = util_strprintf("%s.jsonl", id);
                _cleanup_close_ int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                _cleanup_(cold_ctx_freep) ColdCtx *c = NULL;
                ColdResult res;

                assert_int_equal(cold_ctx_new(COLD_LEVEL_DEFAULT, COLD_DICT_CURRENT, &c), 0);
                /* COLD_BATCH: the .zst under its temporary name, then renamed; the original
                 * stays unless plain is false */
                assert_int_equal(cold_ctx_compress(c, fd, name, fd, NULL, COLD_BATCH, NULL, NULL,
                                                   &res), 0);
                assert_int_equal(cold_batch_commit(fd, name, NULL, NULL), 0);
                if (!plain)
                        assert_int_equal(unlinkat(fd, name, 0), 0);
        }
        assert_int_equal(fixture_set_mtime(root, e, 1790000000), 0);
}

static const DcSession *find(const DcProject *p, const char *id) {
        for (size_t i = 0; i < p->n_sessions; i++)
                if (streq(p->sessions[i].id, id))
                        return &p->sessions[i];
        fail_msg("no session %s", id);
        return NULL;
}

static const DcProject *project(const DcStore *s, const char *code) {
        for (size_t i = 0; i < s->n_projects; i++)
                if (streq(s->projects[i].code, code))
                        return &s->projects[i];
        fail_msg("no project %s", code);
        return NULL;
}

static const Session *record(const Inventory *inv, const char *id) {
        const Session *s = inventory_find(inv, 0, id);

        assert_non_null(s);
        return s;
}

static void test_dc_archive_scan(void **state) {
        const char *root = *state;
        _cleanup_free_ char *store = fixture_path(root, "s/.deepcode");
        _cleanup_free_ const char **kept = NULL, **named = NULL;
        const DcSession *d;
        const DcProject *p;
        const Session *r;
        DcStore *s = NULL;
        Inventory *inv = NULL;
        Tree t = {};
        StoreSize size = {};
        size_t n_kept, n_named;
        bool k3 = false, h3 = false;

        assert_int_equal(fixture_write(root, P "sessions-index.json",
                                       "{\n  \"version\": 1,\n  \"entries\": [\n    {\n"
                                       "      \"id\": \"" ID1 "\"\n    }\n  ],\n"
                                       "  \"originalPath\": \"/srv/x\"\n}"), 0);
        assert_int_equal(fixture_write(root, P ID1 ".jsonl", "{\"sessionId\":\"" ID1 "\"}\n"), 0);
        assert_int_equal(fixture_write(root, P "file-history/.git/refs/heads/" ID3, H1 "\n"), 0);
        archived(root, A, ID3, H1 "\n" H3 "\n", true, false); /* plain */
        assert_int_equal(fixture_write(root, A ID3 ".images/a.png", "png!"), 0);
        archived(root, A, ID4, H2 "\n", false, true);        /* compressed */
        archived(root, A, ID5, "", true, true);              /* both: a compress cut short */
        archived(root, A, ID1, "", true, false);             /* Deep Code lists it too */
        archived(root, A, ID6, "", true, false);
        assert_int_equal(fixture_write(root, A ID6 ".entry.json", "{\"id\":\"someone-else\"}"), 0);
        archived(root, A, ID7, "not a hash\n", true, false);
        archived(root, "s/.deepcode/.qgc-archive/-gone/", ID8, "", true, false);
        assert_int_equal(fixture_symlink(root, A "ffffffff-0000-4000-8000-000000000009.jsonl",
                                         "/etc/passwd"), 0);

        assert_int_equal(dc_store_scan(store, NOW, &s), 0);
        assert_false(s->incomplete);
        p = project(s, "-srv-x");
        assert_int_equal(p->n_archived, 6);
        d = find(p, ID3);
        assert_true(d->archived && d->proven && d->arc_jsonl.present && !d->arc_zst.present);
        assert_null(d->arc_why);
        assert_string_equal(d->summary, "archived " ID3);
        assert_int_equal(d->n_arc_hashes, 2);
        assert_string_equal(d->arc_hashes[1], H3);
        assert_true(d->arc_images.bytes >= 4);
        assert_false(find(p, ID6)->proven);
        assert_string_equal(find(p, ID6)->why, "its archived index entry names another id");
        assert_false(find(p, ID7)->proven);
        for (size_t i = 0; i < p->n_sessions; i++)
                assert_false(strneq(p->sessions[i].id, "ffffffff", 8)); /* never followed */
        assert_true(project(s, "-gone")->absent);
        assert_false(find(project(s, "-gone"), ID8)->proven);

        /* compaction: ID3's branch kept, its checkpoints named */
        assert_int_equal(dc_store_git_input(p, &kept, &n_kept, &named, &n_named), 0);
        for (size_t i = 0; i < n_kept; i++)
                k3 = k3 || streq(kept[i], ID3);
        for (size_t i = 0; i < n_named; i++)
                h3 = h3 || streq(named[i], H3);
        assert_true(k3 && h3);

        assert_int_equal(inventory_new(&inv), 0);
        assert_int_equal(deepcode_store.tree_from_dir(store, &t), 0);
        assert_int_equal(inventory_add_tree(inv, &t, NULL), 0);
        assert_int_equal(dc_store_inventory(s, inv, 0, NOW), 0);
        assert_int_equal(dc_store_orphans(s, inv, 0), 0);
        assert_int_equal(inventory_index(inv), 0);
        r = record(inv, ID3);
        assert_int_equal(r->state, SESSION_ARCHIVED);
        assert_int_equal(r->owner, OWNER_OK);
        assert_false(r->cold || r->cold_copy);
        assert_int_equal(r->archived_at, (msec_t)1790000000 * 1000);
        assert_string_equal(r->title, "archived " ID3);
        assert_string_equal(r->cwd, "/srv/x");
        assert_true(r->bytes >= d->arc_jsonl.size + d->arc_entry.size + d->arc_checkpoints.size + 4);
        assert_false(r->restore_full);
        r = record(inv, ID4);
        assert_true(r->state == SESSION_ARCHIVED && r->cold && !r->cold_copy);
        assert_true(r->cold_bytes > 0);
        assert_int_equal(r->cold_orig, strlen("{\"sessionId\":\"" ID4 "\",\"role\":\"user\"}\n"));
        r = record(inv, ID5);
        assert_true(r->state == SESSION_ARCHIVED && !r->cold && r->cold_copy);
        assert_int_equal(record(inv, ID1)->state, SESSION_CONFLICT);
        assert_int_equal(record(inv, ID6)->owner, OWNER_UNVERIFIED);
        assert_int_equal(record(inv, ID8)->owner, OWNER_UNVERIFIED);
        assert_string_equal(record(inv, ID8)->owner_detail, "its project directory is gone");
        /* nothing of the archive is an orphan; the vanished /srv/x stays (the archive holds
         * sessions of it) */
        for (size_t i = 0; i < inv->n_orphans; i++) {
                const Orphan *o = &inv->orphans[i];

                assert_true(o->kind != ORPHAN_DC_UNINDEXED && o->kind != ORPHAN_DC_IMAGES);
                if (o->kind == ORPHAN_STALE_PROJECT && streq(o->name, "-srv-x"))
                        assert_string_equal(o->stale_why, "qgc's archive holds sessions of it");
        }

        /* status: the archive is its own kind, every byte still counted once */
        assert_int_equal(deepcode_store.measure(inv, 0, &size), 0);
        assert_string_equal(size.kind_names[size.n_kinds - 1], "archived sessions");
        assert_true(size.files[size.n_kinds - 1] >= 6 * 3);
        assert_int_equal(size.files[size.unknown_kind], 0);
        store_size_done(&size);
        inventory_free(inv);
        dc_store_free(s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_dc_archive_scan, fixture_root_setup,
                                                fixture_root_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
