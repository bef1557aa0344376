/* test_dc_reclaim.c: the reclaim of a Deep Code store's orphans (src/deepcode/dc-reclaim.c) and
 * the scan that finds them (dc-store.c), at their limits: a crash at every hook of every kind
 * followed by a normal rerun converges to what an unkilled run leaves; the compaction keeps
 * `git fsck` clean and every named checkpoint resolvable (SKIP without /usr/bin/git). */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dc-git.h"
#include "dc-reclaim.h"
#include "dc-store.h"
#include "fixture.h"
#include "inventory.h"
#include "macro.h"
#include "testdata.h"

#define NOW ((msec_t)1800000000000)
#define P "s/.deepcode/projects/-nonexistent-qgc-dcr-proj/"
#define ID_A "aaaaaaaa-0000-4000-8000-000000000001"
#define ID_D "dddddddd-0000-4000-8000-000000000004"
#define ID_E "eeeeeeee-0000-4000-8000-000000000005"

static bool have_git(void) {
        return access(DC_GIT_PROGRAM, X_OK) == 0;
}

_printf_(2, 3) static void sh(const char *root, const char *fmt, ...) {
        _cleanup_free_ char *cmd = NULL, *inner = NULL;
        va_list ap;

        va_start(ap, fmt);
        assert_true(vasprintf(&inner, fmt, ap) >= 0);
        va_end(ap);
        cmd = util_strprintf("cd '%s' && { %s; } >/dev/null 2>&1", root, inner);
        assert_non_null(cmd);
        assert_int_equal(system(cmd), 0);
}

static void rm_file(const char *root, const char *rel) {
        _cleanup_free_ char *path = fixture_path(root, rel);

        assert_non_null(path);
        assert_int_equal(unlink(path), 0);
}

/* git in the project's file-history with a fixed identity and clock. */
#define GIT "GIT_CONFIG_NOSYSTEM=1 HOME=/nonexistent GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t " \
            "GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' " \
            "GIT_COMMITTER_DATE='2026-01-01T00:00:00Z' " DC_GIT_PROGRAM " -C " P "file-history"

static char hash_a[41];

/* The store: project -nonexistent-qgc-dcr-proj with session A indexed (its transcript names a
 * checkpoint on its branch), D a transcript the index does not name (with images/D/), images/E/
 * of no session, and (with git) a branch of a session deleted by Deep Code. */
static void plant(const char *root, bool git) {
        _cleanup_free_ char *a = NULL;

        if (git) {
                sh(root, "mkdir -p " P "file-history && " GIT " init -q && " GIT
                         " checkout -q -b " ID_A " && echo one > " P "file-history/f && " GIT
                         " add f && " GIT " commit -q -m a && " GIT " checkout -q -b ffffffff-0000-4000-8000-000000000006"
                         " && echo two > " P "file-history/f && " GIT " commit -q -am gone");
                _cleanup_free_ char *head = NULL;
                size_t n;
                assert_int_equal(fixture_read(root, P "file-history/.git/refs/heads/" ID_A, &head, &n), 0);
                assert_true(n >= 40);
                memcpy(hash_a, head, 40);
                hash_a[40] = 0;
        } else
                strcpy(hash_a, "0123456789abcdef0123456789abcdef01234567");
        assert_int_equal(fixture_write(root, P "sessions-index.json",
                "{\n  \"version\": 1,\n  \"entries\": [\n    {\"id\": \"" ID_A "\", \"status\": \"completed\"}\n"
                "  ],\n  \"originalPath\": \"/nonexistent/qgc-dcr/proj\"\n}"), 0);
        a = util_strprintf("{\"sessionId\":\"" ID_A
                           "\",\"role\":\"user\",\"checkpointHash\":\"%s\"}\n",
                           hash_a);
        assert_int_equal(fixture_write(root, P ID_A ".jsonl", a), 0);
        assert_int_equal(fixture_write(root, P ID_D ".jsonl",
                                       "{\"sessionId\":\"" ID_D "\",\"role\":\"user\"}\n"), 0);
        assert_int_equal(fixture_write_size(root, P "images/" ID_D "/1.png", 5000), 0);
        assert_int_equal(fixture_write_size(root, P "images/" ID_D "/2.png", 7000), 0);
        assert_int_equal(fixture_write_size(root, P "images/" ID_E "/3.png", 300), 0);
        assert_int_equal(fixture_write(root, "s/.deepcode/logs/error.log", "x\n"), 0);
}

/* The scan's orphans of the store below root (compaction planned). */
static Inventory *scan(const char *root) {
        _cleanup_free_ char *path = fixture_path(root, "s/.deepcode");
        Tree t = { .global_dir = strdup(path), .runtime_dir = strdup(path) };
        Inventory *inv = NULL;
        DcStore *s = NULL;
        size_t ti;

        assert_int_equal(inventory_new(&inv), 0);
        assert_int_equal(inventory_add_tree(inv, &t, &ti), 0);
        assert_int_equal(dc_store_scan(path, NOW, &s), 0);
        assert_int_equal(dc_store_inventory(s, inv, ti, NOW), 0);
        assert_int_equal(dc_store_orphans(s, inv, ti), 0);
        dc_store_free(s);
        return inv;
}

static const Orphan *find(const Inventory *inv, OrphanKind k, const char *name) {
        for (size_t i = 0; i < inv->n_orphans; i++)
                if (inv->orphans[i].kind == k && (!name || streq(inv->orphans[i].name, name)))
                        return &inv->orphans[i];
        return NULL;
}

typedef struct Hooks {
        unsigned n, kill_at;
} Hooks;

static void hook(void *userdata, const char *what) {
        Hooks *h = userdata;

        (void)what;
        if (h->kill_at > 0 && ++h->n >= h->kill_at)
                _exit(99);
        if (h->kill_at == 0)
                h->n++;
}

/* The store below a test's root: s/.deepcode, the corpus's home/.deepcode. */
static const char *store_rel = "s/.deepcode";

static int reclaim(const char *root, const Inventory *inv, const Orphan *o, unsigned kill_at,
                   unsigned *ret_hooks, uint64_t *ret_bytes) {
        _cleanup_free_ char *path = fixture_path(root, store_rel);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        Hooks h = { .kill_at = kill_at };
        StoreStep step = { .hook = hook, .userdata = &h };
        int r;

        assert_true(fd >= 0);
        r = dc_reclaim_orphan(fd, inv, o, &step);
        if (step.why)
                printf("# %s: %d, %s\n", inventory_orphan_kind_to_string(o->kind), r, step.why);
        free(step.why);
        if (ret_hooks)
                *ret_hooks = h.n;
        if (ret_bytes)
                *ret_bytes = step.bytes;
        return r;
}

/* Every path below the store with its type and size (git's objects left out: their packing
 * differs by run), sorted. */
static char *state(const char *root) {
        _cleanup_free_ char *cmd =
                util_strprintf("cd '%s/s/.deepcode' && find . -path '*/.git/objects' "
                               "-prune -o -printf '%%y %%s %%p\\n' | grep -v "
                               "'/.git/' | sort",
                               root);
        char buf[8192];
        FILE *f = popen(cmd, "r");
        size_t n;

        assert_non_null(f);
        n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = 0;
        pclose(f);
        return strdup(buf);
}

/* For kill_at = 1, 2, ...: a fresh store, a child reclaiming orphan (kind, name) killed at that
 * hook, then a normal rerun: the store is what an unkilled run leaves. */
static void crash_loop(OrphanKind kind, const char *name, bool git, void (*prep)(const char *root)) {
        _cleanup_free_ char *want = NULL;
        unsigned hooks = 0;

        for (unsigned kill_at = 0;; kill_at++) {
                _cleanup_free_ char *root = NULL, *got = NULL;
                Inventory *inv;
                const Orphan *o;
                int status;
                pid_t pid;

                assert_int_equal(fixture_new(&root), 0);
                plant(root, git);
                if (prep)
                        prep(root);
                inv = scan(root);
                o = find(inv, kind, name);
                if (!o)
                        fail();
                if (kill_at == 0) {
                        assert_int_equal(reclaim(root, inv, o, 0, &hooks, NULL), 0);
                        want = state(root);
                } else {
                        pid = fork();
                        assert_true(pid >= 0);
                        if (pid == 0)
                                _exit(reclaim(root, inv, o, kill_at, NULL, NULL) == 0 ? 0 : 1);
                        assert_int_equal(waitpid(pid, &status, 0), pid);
                        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 99);
                        /* the rerun finishes, or finds nothing left to do */
                        (void)reclaim(root, inv, o, 0, NULL, NULL);
                        got = state(root);
                        assert_string_equal(got, want);
                }
                inventory_free(inv);
                root = fixture_free(root);
                if (kill_at >= hooks)
                        break;
        }
        assert_true(hooks >= 1);
}

static void test_dc_reclaim_unindexed(void **state) {
        (void)state;
        crash_loop(ORPHAN_DC_UNINDEXED, ID_D, false, NULL);
}

static void test_dc_reclaim_images(void **state) {
        (void)state;
        crash_loop(ORPHAN_DC_IMAGES, "images/" ID_E, false, NULL);
}

/* What each kind re-checks: an index that names the transcript now, a changed transcript, an
 * images/ no longer empty; error.log is reported only. */
static void test_dc_reclaim_rechecks(void **state) {
        const char *root = *state;
        Inventory *inv;
        uint64_t bytes;

        plant(root, false);
        assert_int_equal(fixture_mkdir(root, P "images/" ID_A), 0);
        inv = scan(root);
        assert_non_null(find(inv, ORPHAN_DC_UNINDEXED, ID_D));
        assert_null(find(inv, ORPHAN_DC_ERROR_LOG, NULL));
        assert_int_equal(fixture_append(root, P ID_D ".jsonl",
                                        "{\"sessionId\":\"" ID_D "\"}\n"), 0);
        assert_int_equal(reclaim(root, inv, find(inv, ORPHAN_DC_UNINDEXED, ID_D), 0, NULL, NULL),
                         -ESTALE);
        assert_true(fixture_exists(root, P "images/" ID_D "/1.png"));
        inventory_free(inv);

        inv = scan(root);
        assert_int_equal(fixture_write(root, P "sessions-index.json",
                "{\"version\":1,\"entries\":[{\"id\":\"" ID_D "\"}],"
                "\"originalPath\":\"/nonexistent/qgc-dcr/proj\"}"), 0);
        assert_int_equal(reclaim(root, inv, find(inv, ORPHAN_DC_UNINDEXED, ID_D), 0, NULL, NULL),
                         -ESTALE);
        assert_true(fixture_exists(root, P ID_D ".jsonl"));
        inventory_free(inv);

        /* an empty images/ goes; one that is filled since the scan stays */
        sh(root, "rm -rf " P "images/* && rm -f " P ID_D ".jsonl");
        inv = scan(root);
        assert_non_null(find(inv, ORPHAN_DC_IMAGES, "images"));
        assert_int_equal(fixture_write(root, P "images/x", "y"), 0);
        assert_int_equal(reclaim(root, inv, find(inv, ORPHAN_DC_IMAGES, "images"), 0, NULL, NULL),
                         -ESTALE);
        rm_file(root, P "images/x");
        assert_int_equal(reclaim(root, inv, find(inv, ORPHAN_DC_IMAGES, "images"), 0, NULL, &bytes),
                         0);
        assert_false(fixture_exists(root, P "images"));
        inventory_free(inv);
}

/* The limits: logs/error.log at DC_ERROR_LOG_REPORT is not reported, one byte past it is (and
 * never changed); an id of SESSION_ID_MAX is an orphan, one longer is not. */
static void test_dc_reclaim_limits(void **state) {
        const char *root = *state;
        char id[SESSION_ID_MAX + 2];
        _cleanup_free_ char *rel = NULL, *line = NULL;
        Inventory *inv;
        const Orphan *o;

        plant(root, false);
        assert_int_equal(fixture_write_size(root, "s/.deepcode/logs/error.log", DC_ERROR_LOG_REPORT), 0);
        memset(id, 'i', SESSION_ID_MAX);
        id[SESSION_ID_MAX] = 0;
        rel = util_strprintf(P "%s.jsonl", id);
        line = util_strprintf("{\"sessionId\":\"%s\"}\n", id);
        assert_int_equal(fixture_write(root, rel, line), 0);
        inv = scan(root);
        assert_null(find(inv, ORPHAN_DC_ERROR_LOG, NULL));
        assert_non_null(find(inv, ORPHAN_DC_UNINDEXED, id));
        inventory_free(inv);

        assert_int_equal(fixture_write_size(root, "s/.deepcode/logs/error.log", DC_ERROR_LOG_REPORT + 1), 0);
        rm_file(root, rel);
        id[SESSION_ID_MAX] = 'i';
        id[SESSION_ID_MAX + 1] = 0;
        free(rel);
        free(line);
        rel = util_strprintf(P "%s.jsonl", id);
        line = util_strprintf("{\"sessionId\":\"%s\"}\n", id);
        assert_int_equal(fixture_write(root, rel, line), 0);
        inv = scan(root);
        o = find(inv, ORPHAN_DC_ERROR_LOG, NULL);
        if (!o)
                return fail();
        assert_int_equal(o->bytes, DC_ERROR_LOG_REPORT + 1);
        assert_null(find(inv, ORPHAN_DC_UNINDEXED, id));
        assert_int_equal(reclaim(root, inv, o, 0, NULL, NULL), -EOPNOTSUPP);
        inventory_free(inv);
}

/* The compaction: planned from the scan, the gone session's branch removed, the kept one's
 * checkpoint still resolves, `git fsck` clean; killed at its hook, the rerun converges. */
static void test_dc_reclaim_compaction(void **state) {
        const char *root = *state;
        Inventory *inv;
        const Orphan *o;
        uint64_t bytes = 0;

        if (!have_git())
                skip();
        plant(root, true);
        inv = scan(root);
        o = find(inv, ORPHAN_DC_CHECKPOINTS, "file-history");
        if (!o)
                return fail();
        assert_true(o->bytes > 0);
        assert_int_equal(reclaim(root, inv, o, 0, NULL, &bytes), 0);
        assert_false(fixture_exists(root, P "file-history/.git/refs/heads/ffffffff-0000-4000-8000-000000000006"));
        sh(root, GIT " fsck --strict --no-dangling && " GIT " cat-file -e %s^{tree}", hash_a);
        sh(root, "! " GIT " show-ref --verify -q refs/heads/ffffffff-0000-4000-8000-000000000006");
        /* a second run: nothing to do */
        assert_int_equal(reclaim(root, inv, o, 0, NULL, NULL), 0);
        inventory_free(inv);
        crash_loop(ORPHAN_DC_CHECKPOINTS, "file-history", true, NULL);
}

/* The corpus the real Deep Code wrote (tests/data/deepcode/home.tar.gz): every planned
 * compaction reclaimed, then in every project `git fsck` is clean and every checkpoint a kept
 * session's message names resolves to its tree; the bytes freed are what du says of .git. */
static void test_dc_reclaim_corpus(void **state) {
        const char *root = *state;
        _cleanup_free_ char *tarball = test_data_path("deepcode/home.tar.gz");
        _cleanup_free_ char *store = fixture_path(root, "home/.deepcode");
        Tree t = { .global_dir = strdup(store), .runtime_dir = strdup(store) };
        Inventory *inv = NULL;
        DcStore *s = NULL;
        size_t ti, n = 0;
        uint64_t freed = 0, planned = 0;

        if (!have_git())
                skip();
        sh(root, "tar xzf '%s' -C . && find home -exec touch -h -d 2026-06-01 {} +", tarball);
        assert_int_equal(inventory_new(&inv), 0);
        assert_int_equal(inventory_add_tree(inv, &t, &ti), 0);
        assert_int_equal(dc_store_scan(store, NOW, &s), 0);
        assert_int_equal(dc_store_inventory(s, inv, ti, NOW), 0);
        assert_int_equal(dc_store_orphans(s, inv, ti), 0);
        store_rel = "home/.deepcode";
        for (size_t i = 0; i < inv->n_orphans; i++) {
                const Orphan *o = &inv->orphans[i];
                _cleanup_free_ char *git = NULL;
                uint64_t bytes = 0;

                if (o->kind != ORPHAN_DC_CHECKPOINTS)
                        continue;
                git = util_strprintf("home/.deepcode/projects/%s/file-history", o->project_dir);
                assert_int_equal(reclaim(root, inv, o, 0, NULL, &bytes), 0);
                assert_true(bytes >= o->bytes_alloc); /* the plan's is a lower bound */
                sh(root, DC_GIT_PROGRAM " -C '%s' fsck --strict --no-dangling", git);
                freed += bytes;
                planned += o->bytes_alloc;
                n++;
        }
        assert_int_equal(n, 5);
        printf("# the corpus's 5 compactions freed %" PRIu64 " bytes (planned at least %" PRIu64 ")\n",
               freed, planned);
        /* every checkpoint named by a kept session still resolves */
        for (size_t i = 0; i < s->n_projects; i++) {
                const DcProject *p = &s->projects[i];

                for (size_t j = 0; j < p->n_sessions; j++)
                        for (size_t k = 0; k < p->sessions[j].messages.n_checkpoints; k++)
                                sh(root, DC_GIT_PROGRAM " -C 'home/.deepcode/projects/%s/file-history'"
                                         " cat-file -e %s^{tree}",
                                   p->code, p->sessions[j].messages.checkpoints[k]);
        }
        store_rel = "s/.deepcode";
        dc_store_free(s);
        inventory_free(inv);
}

#define CODE "-nonexistent-qgc-dcr-proj"

/* A stale project whose sessions are deleted (Deep Code's index empty) and that is marked. */
static void stale_prep(const char *root) {
        rm_file(root, P ID_A ".jsonl");
        assert_int_equal(fixture_write(root, P "sessions-index.json",
                "{\"version\":1,\"entries\":[],\"originalPath\":\"/nonexistent/qgc-dcr/proj\"}"), 0);
        assert_int_equal(fixture_write(root, P DC_STALE_MARKER, "/nonexistent/qgc-dcr/proj\n"), 0);
}

/* A project whose originalPath is gone: marked first, kept while a session of it is left, then
 * renamed away and removed (a kill at every hook converges); the marker goes when the path is
 * back; an entry Deep Code does not write keeps it. */
static void test_dc_reclaim_stale(void **state) {
        const char *root = *state;
        Inventory *inv;
        const Orphan *o;

        plant(root, false);
        inv = scan(root);
        o = find(inv, ORPHAN_STALE_PROJECT, CODE);
        if (!o)
                return fail();
        assert_null(o->stale_why);
        assert_false(o->marker.present || o->cwd_back);
        assert_int_equal(reclaim(root, inv, o, 0, NULL, NULL), 0);
        assert_true(fixture_exists(root, P DC_STALE_MARKER));
        inventory_free(inv);

        inv = scan(root);
        o = find(inv, ORPHAN_STALE_PROJECT, CODE);
        if (!o)
                return fail();
        assert_true(o->marker.present);
        assert_int_equal(reclaim(root, inv, o, 0, NULL, NULL), -EAGAIN); /* A is not deleted */
        assert_true(fixture_exists(root, P ID_A ".jsonl"));
        inventory_free(inv);

        assert_int_equal(fixture_write(root, P "notes.txt", "mine"), 0);
        inv = scan(root);
        o = find(inv, ORPHAN_STALE_PROJECT, CODE);
        if (!o)
                return fail();
        assert_string_equal(o->stale_why, "it holds what Deep Code does not write");
        inventory_free(inv);

        crash_loop(ORPHAN_STALE_PROJECT, CODE, false, stale_prep);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_dc_reclaim_unindexed),
                cmocka_unit_test(test_dc_reclaim_images),
                cmocka_unit_test_setup_teardown(test_dc_reclaim_rechecks, fixture_root_setup,
                                                fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_dc_reclaim_limits, fixture_root_setup,
                                                fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_dc_reclaim_compaction, fixture_root_setup,
                                                fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_dc_reclaim_stale, fixture_root_setup,
                                                fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_dc_reclaim_corpus, fixture_root_setup,
                                                fixture_root_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
