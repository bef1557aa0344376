/* test_users.c: users_path_check(), the safe-path walk that decides whether root mode may
 * hand a tree to its user, on real directories in a fixture. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "macro.h"
#include "users-path.h"
#include "testskip.h"

#define OTHER_UID 54321 /* a uid nobody on the test box is expected to use */

static int setup(void **state) {
        char *root = NULL;

        if (fixture_new(&root) < 0)
                return -1;
        /* the fixture root is under $TMPDIR; make its own mode safe whatever the umask */
        if (chmod(root, 0700) < 0)
                return -1;
        *state = root;
        return 0;
}

static int teardown(void **state) {
        char *root = *state;
        char *p = fixture_path(root, NULL);

        /* undo modes that would stop the removal */
        if (p) {
                (void)chmod(p, 0700);
                free(p);
        }
        fixture_free(root);
        return 0;
}

/* fixture_mkdir + chmod, asserting success. */
static char *mkdir_mode(const char *root, const char *rel, mode_t mode) {
        char *p = fixture_path(root, rel);

        assert_non_null(p);
        assert_int_equal(fixture_mkdir(root, rel), 0);
        assert_int_equal(chmod(p, mode), 0);
        return p;
}

/* The check must succeed on the fixture root itself, else the environment ($TMPDIR) is unsafe
 * and every test below would prove nothing. */
static void require_safe_base(const char *root) {
        _cleanup_free_ char *why = NULL;
        char real[PATH_MAX];
        int r;

        assert_non_null(realpath(root, real));
        r = users_path_check(real, geteuid(), NULL, &why);
        if (r < 0) {
                print_message("fixture root '%s' fails the check (%s): set TMPDIR\n", real,
                              why ? why : "?");
                fail();
        }
}

static void test_users_path_check_private_dir_is_safe(void **state) {
        const char *root = *state;
        _cleanup_free_ char *p = mkdir_mode(root, "home/u/.qwen", 0700);
        _cleanup_free_ char *canon = NULL, *why = NULL;
        char real[PATH_MAX];

        require_safe_base(root);
        assert_int_equal(users_path_check(p, geteuid(), &canon, &why), 0);
        assert_non_null(realpath(p, real));
        assert_string_equal(canon, real);
        assert_null(why);
}

static void test_users_path_check_writable_tree_root_is_unsafe(void **state) {
        static const struct {
                mode_t mode;
                const char *word;
        } cases[] = {
                { 0770, "group-writable" },
                { 0707, "world-writable" },
                { 01777, "world-writable" }, /* sticky does not excuse the tree itself */
                { 0720, "group-writable" },
        };
        const char *root = *state;

        require_safe_base(root);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char name[16];
                _cleanup_free_ char *p = NULL, *why = NULL, *canon = NULL;
                int r;

                snprintf(name, sizeof name, "t%zu", i);
                p = mkdir_mode(root, name, cases[i].mode);
                r = users_path_check(p, geteuid(), &canon, &why);

                print_message("case %zu: mode %04o -> %d (%s)\n", i, (unsigned)cases[i].mode, r,
                              why ? why : "");
                assert_int_equal(r, -EPERM);
                assert_null(canon);
                assert_non_null(why);
                assert_non_null(strstr(why, cases[i].word));
        }
}

static void test_users_path_check_writable_parent_is_unsafe(void **state) {
        const char *root = *state;
        _cleanup_free_ char *par = mkdir_mode(root, "shared", 0777);
        _cleanup_free_ char *p = mkdir_mode(root, "shared/.qwen", 0700);
        _cleanup_free_ char *why = NULL;

        require_safe_base(root);
        assert_int_equal(users_path_check(p, geteuid(), NULL, &why), -EPERM);
        assert_non_null(strstr(why, "world-writable"));
        assert_non_null(strstr(why, "/shared'"));

        assert_int_equal(chmod(par, 0775), 0);
        free(why);
        why = NULL;
        assert_int_equal(users_path_check(p, geteuid(), NULL, &why), -EPERM);
        assert_non_null(strstr(why, "group-writable"));
}

static void test_users_path_check_sticky_parent_is_safe(void **state) {
        const char *root = *state;
        free(mkdir_mode(root, "tmp", 01777));
        _cleanup_free_ char *p = mkdir_mode(root, "tmp/rt", 0700);
        _cleanup_free_ char *why = NULL;

        require_safe_base(root);
        assert_int_equal(users_path_check(p, geteuid(), NULL, &why), 0);
}

static void test_users_path_check_follows_symlinks(void **state) {
        const char *root = *state;
        _cleanup_free_ char *target = mkdir_mode(root, "data/qwen", 0700);
        free(mkdir_mode(root, "home/u", 0755));
        _cleanup_free_ char *link = fixture_path(root, "home/u/.qwen");
        _cleanup_free_ char *dotdot = fixture_path(root, "home/u/../u/./.qwen");
        _cleanup_free_ char *canon = NULL, *canon2 = NULL;
        char real[PATH_MAX];

        require_safe_base(root);
        assert_int_equal(fixture_symlink(root, "home/u/.qwen", "../../data/qwen"), 0);
        assert_int_equal(users_path_check(link, geteuid(), &canon, NULL), 0);
        assert_non_null(realpath(target, real));
        assert_string_equal(canon, real);
        assert_int_equal(users_path_check(dotdot, geteuid(), &canon2, NULL), 0);
        assert_string_equal(canon2, real);
}

static void test_users_path_check_symlink_to_writable_dir_is_unsafe(void **state) {
        const char *root = *state;
        free(mkdir_mode(root, "pub", 0777));
        _cleanup_free_ char *t = mkdir_mode(root, "pub/q", 0700);
        free(mkdir_mode(root, "home", 0755));
        _cleanup_free_ char *link = fixture_path(root, "home/.qwen");
        _cleanup_free_ char *why = NULL;

        require_safe_base(root);
        assert_int_equal(fixture_symlink(root, "home/.qwen", t), 0);
        assert_int_equal(users_path_check(link, geteuid(), NULL, &why), -EPERM);
        assert_non_null(strstr(why, "/pub'"));
}

static void test_users_path_check_errors(void **state) {
        const char *root = *state;
        free(mkdir_mode(root, "d", 0700));
        _cleanup_free_ char *file = fixture_path(root, "d/file");
        _cleanup_free_ char *missing = fixture_path(root, "d/missing/x");
        _cleanup_free_ char *loop = fixture_path(root, "d/loop");
        _cleanup_free_ char *why = NULL;

        require_safe_base(root);
        assert_int_equal(fixture_write(root, "d/file", "x"), 0);
        assert_int_equal(fixture_symlink(root, "d/loop", "loop"), 0);

        assert_int_equal(users_path_check(file, geteuid(), NULL, &why), -ENOTDIR);
        assert_non_null(strstr(why, "not a directory"));
        assert_int_equal(users_path_check(missing, geteuid(), NULL, NULL), -ENOENT);
        assert_int_equal(users_path_check(loop, geteuid(), NULL, NULL), -ELOOP);
        assert_int_equal(users_path_check("relative/.qwen", geteuid(), NULL, NULL), -EINVAL);
        assert_int_equal(users_path_check(NULL, geteuid(), NULL, NULL), -EINVAL);
}

/* Ownership rules need a second uid: root only. */
static void test_users_path_check_foreign_owner_is_unsafe(void **state) {
        const char *root = *state;

        if (geteuid() != 0)
                test_skip("needs root to chown");
        require_safe_base(root);
        {
                /* the tree itself belongs to someone else */
                _cleanup_free_ char *p = mkdir_mode(root, "a/.qwen", 0700);
                _cleanup_free_ char *why = NULL;

                assert_int_equal(chown(p, OTHER_UID, OTHER_UID), 0);
                assert_int_equal(users_path_check(p, 0, NULL, &why), -EPERM);
                assert_non_null(strstr(why, "owned by uid 54321"));
                /* ...and is fine for its owner */
                assert_int_equal(users_path_check(p, OTHER_UID, NULL, NULL), 0);
        }
        {
                /* an intermediate directory owned by a third user (not root, not the user) */
                _cleanup_free_ char *mid = mkdir_mode(root, "b", 0755);
                _cleanup_free_ char *p = mkdir_mode(root, "b/.qwen", 0700);
                _cleanup_free_ char *why = NULL;

                assert_int_equal(chown(p, 1234, 1234), 0);
                assert_int_equal(chown(mid, OTHER_UID, OTHER_UID), 0);
                assert_int_equal(users_path_check(p, 1234, NULL, &why), -EPERM);
                assert_non_null(strstr(why, "/b' is owned by uid 54321"));
                assert_int_equal(chown(mid, 1234, 1234), 0);
                assert_int_equal(users_path_check(p, 1234, NULL, NULL), 0);
        }
        {
                /* a symlink planted by a third user */
                _cleanup_free_ char *t = mkdir_mode(root, "c/t", 0700);
                _cleanup_free_ char *link = fixture_path(root, "c/.qwen");
                _cleanup_free_ char *why = NULL;

                assert_int_equal(chown(t, 1234, 1234), 0);
                assert_int_equal(fixture_symlink(root, "c/.qwen", "t"), 0);
                assert_int_equal(lchown(link, OTHER_UID, OTHER_UID), 0);
                assert_int_equal(users_path_check(link, 1234, NULL, &why), -EPERM);
                assert_non_null(strstr(why, "/c/.qwen' is owned by uid 54321"));
                assert_int_equal(lchown(link, 1234, 1234), 0);
                assert_int_equal(users_path_check(link, 1234, NULL, NULL), 0);
        }
}

int main(void) {
#define T(n) cmocka_unit_test_setup_teardown(test_users_path_check_##n, setup, teardown)
        const struct CMUnitTest tests[] = {
                T(private_dir_is_safe),
                T(writable_tree_root_is_unsafe),
                T(writable_parent_is_unsafe),
                T(sticky_parent_is_safe),
                T(follows_symlinks),
                T(symlink_to_writable_dir_is_unsafe),
                T(errors),
                T(foreign_owner_is_unsafe),
        };
#undef T
        return cmocka_run_group_tests(tests, NULL, NULL);
}
