/* test_roots.c: roots.c, where a user's trees are (Qwen's Storage and
 * resolvePath): G = $QWEN_HOME or <home>/.qwen, R = $QWEN_RUNTIME_DIR, else an absolute (or
 * ~-based) advanced.runtimeOutputDir of G/settings.json, else G; "~", "~/" and "~\" expanded
 * against home (the rest split on both separators), relative values against the cwd, every
 * path normalised as node's path.resolve; --root's directory serving as both. What test_scan
 * already covers (the default, the plain expansions, a relative QWEN_HOME, the setting's basic
 * forms) is not repeated here. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "inventory.h"
#include "macro.h"
#include "roots.h"

static int setup(void **state) {
        char *root = NULL;

        if (fixture_new(&root) < 0)
                return -1;
        *state = root;
        return 0;
}

static int teardown(void **state) {
        fixture_free(*state);
        return 0;
}

/* path.resolve's normalisation: "//", ".", ".." (never above "/"), a trailing '/'; "~/.." is
 * home's parent (path.join), "~" followed by anything but a separator is a relative name. */
static void test_roots_normalize_and_tilde(void **state) {
        static const struct {
                const char *home, *qwen_home, *g;
        } cases[] = {
                { "/home/u", "/a/./b/../../..", "/" },
                { "/home/u", "//a//b//", "/a/b" },
                { "/home/u", "/a/../../b", "/b" },
                { "/home/u", "/a/b/..", "/a" },
                { "/home/u", "/a/.../b", "/a/.../b" },
                { "/home/u", "/a/..b/.c", "/a/..b/.c" },
                { "/home/u", "~/..", "/home" },
                { "/home/u", "~//a\\\\b/", "/home/u/a/b" },
                { "/home/u", "~\\", "/home/u" },
                { "/home/u/", "~", "/home/u" },
                { "/home/u", "/home/u/.qwen", "/home/u/.qwen" },
        };
        (void)state;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(inventory_tree_done) Tree t = {};

                assert_int_equal(fixture_roots_resolve(cases[i].home, cases[i].qwen_home, NULL, &t), 0);
                if (!streq(t.global_dir, cases[i].g))
                        fail_msg("QWEN_HOME=%s: %s, want %s", cases[i].qwen_home, t.global_dir,
                                 cases[i].g);
                /* no settings there: R is G */
                assert_string_equal(t.runtime_dir, cases[i].g);
                assert_ptr_not_equal(t.runtime_dir, t.global_dir);
        }
}

/* "~x" is no home expansion: a relative name, against the cwd (Qwen's and --root's alike). */
static void test_roots_tilde_name_is_relative(void **state) {
        _cleanup_(inventory_tree_done) Tree t = {}, u = {};
        _cleanup_free_ char *cwd = getcwd(NULL, 0), *want = NULL;

        (void)state;
        assert_non_null(cwd);
        want = util_strprintf("%s/~x", streq(cwd, "/") ? "" : cwd);
        assert_int_equal(fixture_roots_resolve("/home/u", "~x", "~x", &t), 0);
        assert_string_equal(t.global_dir, want);
        assert_string_equal(t.runtime_dir, want);
        assert_int_equal(roots_from_dir("~x/", &u), 0);
        assert_string_equal(u.global_dir, want);
}

/* Without a usable home (none, or not absolute), nothing that needs it resolves: -EINVAL; the
 * values that do not need it still do. The caller's user and uid are left alone. */
static void test_roots_without_home(void **state) {
        (void)state;
        {
                Tree t = {};
                assert_int_equal(fixture_roots_resolve(NULL, NULL, NULL, &t), -EINVAL);
                assert_int_equal(fixture_roots_resolve("relative/home", NULL, NULL, &t), -EINVAL);
                assert_int_equal(fixture_roots_resolve("", NULL, NULL, &t), -EINVAL);
                assert_int_equal(fixture_roots_resolve(NULL, "~/q", NULL, &t), -EINVAL);
                assert_int_equal(fixture_roots_resolve(NULL, "/g", "~", &t), -EINVAL);
                assert_null(t.global_dir);
                assert_null(t.runtime_dir);
        }
        {
                _cleanup_(inventory_tree_done) Tree t = { .uid = 1234 };
                assert_int_equal(fixture_roots_resolve(NULL, "/g", "/r/", &t), 0);
                assert_string_equal(t.global_dir, "/g");
                assert_string_equal(t.runtime_dir, "/r");
                assert_int_equal(t.uid, 1234);
                assert_null(t.user);
        }
}

/* settings.json is G's: with QWEN_HOME set it is read there, not in <home>/.qwen; the
 * environment's QWEN_RUNTIME_DIR wins over it. */
static void test_roots_settings_of_g(void **state) {
        const char *root = *state;
        _cleanup_free_ char *home = fixture_path(root, "home");
        _cleanup_free_ char *g = fixture_path(root, "g");

        assert_int_equal(fixture_write(root, "home/.qwen/settings.json",
                                       "{\"advanced\":{\"runtimeOutputDir\":\"/from-home\"}}"), 0);
        assert_int_equal(fixture_write(root, "g/settings.json",
                                       "{\"advanced\":{\"runtimeOutputDir\":\"/from-g/x/../rt/\"}}"), 0);
        {
                _cleanup_(inventory_tree_done) Tree t = {};
                assert_int_equal(fixture_roots_resolve(home, g, NULL, &t), 0);
                assert_string_equal(t.global_dir, g);
                assert_string_equal(t.runtime_dir, "/from-g/rt");
        }
        {
                _cleanup_(inventory_tree_done) Tree t = {};
                assert_int_equal(fixture_roots_resolve(home, NULL, NULL, &t), 0);
                assert_string_equal(t.runtime_dir, "/from-home");
        }
        {
                _cleanup_(inventory_tree_done) Tree t = {};
                assert_int_equal(fixture_roots_resolve(home, g, "/env-rt", &t), 0);
                assert_string_equal(t.runtime_dir, "/env-rt");
        }
        {
                /* Qwen strips comments from settings files before JSON.parse */
                _cleanup_(inventory_tree_done) Tree t = {};
                assert_int_equal(fixture_write(root, "g/settings.json",
                                               "// user settings\n{ /* run */ \"advanced\": "
                                               "{\"runtimeOutputDir\": \"/commented\"} // here\n}\n"), 0);
                assert_int_equal(fixture_roots_resolve(home, g, NULL, &t), 0);
                assert_string_equal(t.runtime_dir, "/commented");
                assert_int_equal(fixture_write(root, "g/settings.json",
                                               "{\"advanced\":{\"runtimeOutputDir\":\"/from-g/x/../rt/\"}}"), 0);
        }
        {
                /* an empty QWEN_RUNTIME_DIR is unset (JS truthiness): the setting again */
                _cleanup_(inventory_tree_done) Tree t = {};
                assert_int_equal(fixture_roots_resolve(home, g, "", &t), 0);
                assert_string_equal(t.runtime_dir, "/from-g/rt");
        }
}

/* A settings.json that stat() finds but that is no regular file of sane size is not read (a
 * FIFO without blocking) and leaves R unknown, as a "~" setting without a home does. */
static void test_roots_settings_ignored(void **state) {
        const char *root = *state;
        _cleanup_free_ char *g = fixture_path(root, "g");
        _cleanup_free_ char *big = NULL;
        const char *json = "{\"advanced\":{\"runtimeOutputDir\":\"/rt\"}}";
        size_t n = 4 * 1024 * 1024 + 1, jl = strlen(json);

        assert_int_equal(fixture_mkdir(root, "g/settings.json"), 0);
        {
                _cleanup_(inventory_tree_done) Tree t = {};
                assert_int_equal(fixture_roots_resolve("/h", g, NULL, &t), ROOTS_UNDETERMINED);
        }
        {
                _cleanup_free_ char *p = fixture_path(root, "g/settings.json");
                assert_int_equal(rmdir(p), 0);
        }
        assert_int_equal(fixture_mkfifo(root, "g/settings.json"), 0);
        {
                _cleanup_(inventory_tree_done) Tree t = {};
                assert_int_equal(fixture_roots_resolve("/h", g, NULL, &t), ROOTS_UNDETERMINED);
        }
        {
                _cleanup_free_ char *p = fixture_path(root, "g/settings.json");
                assert_int_equal(unlink(p), 0);
        }
        /* the same setting, padded with spaces past 4 MiB */
        big = malloc(n + 1);
        assert_non_null(big);
        memcpy(big, json, jl);
        memset(big + jl, ' ', n - jl);
        big[n] = 0;
        assert_int_equal(fixture_write(root, "g/settings.json", big), 0);
        {
                _cleanup_(inventory_tree_done) Tree t = {};
                assert_int_equal(fixture_roots_resolve("/h", g, NULL, &t), ROOTS_UNDETERMINED);
        }
        big[n - 1] = 0; /* exactly 4 MiB: read */
        assert_int_equal(fixture_write(root, "g/settings.json", big), 0);
        {
                _cleanup_(inventory_tree_done) Tree t = {};
                assert_int_equal(fixture_roots_resolve("/h", g, NULL, &t), 0);
                assert_string_equal(t.runtime_dir, "/rt");
        }
        assert_int_equal(fixture_write(root, "g/settings.json",
                                       "{\"advanced\":{\"runtimeOutputDir\":\"~/rt\"}}"), 0);
        {
                _cleanup_(inventory_tree_done) Tree t = {};
                /* "~" with no home: not known, never G */
                assert_int_equal(fixture_roots_resolve(NULL, g, NULL, &t), ROOTS_UNDETERMINED);
        }
}

/* --root DIR: G = R = DIR normalised, no ~ expansion; an empty DIR is refused. */
static void test_roots_from_dir(void **state) {
        static const struct {
                const char *dir, *want;
        } cases[] = {
                { "/", "/" },
                { "/a/b/", "/a/b" },
                { "//a/./b/../c", "/a/c" },
                { "/..", "/" },
        };
        Tree bad = {};
        (void)state;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(inventory_tree_done) Tree t = {};

                assert_int_equal(roots_from_dir(cases[i].dir, &t), 0);
                assert_string_equal(t.global_dir, cases[i].want);
                assert_string_equal(t.runtime_dir, cases[i].want);
                assert_ptr_not_equal(t.runtime_dir, t.global_dir);
        }
        assert_int_equal(roots_from_dir("", &bad), -EINVAL);
        assert_int_equal(roots_from_dir(NULL, &bad), -EINVAL);
        assert_null(bad.global_dir);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_roots_normalize_and_tilde),
                cmocka_unit_test(test_roots_tilde_name_is_relative),
                cmocka_unit_test(test_roots_without_home),
                cmocka_unit_test_setup_teardown(test_roots_settings_of_g, setup, teardown),
                cmocka_unit_test_setup_teardown(test_roots_settings_ignored, setup, teardown),
                cmocka_unit_test(test_roots_from_dir),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
