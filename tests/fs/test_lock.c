/* test_lock.c: lock.c's one-qgc-per-tree lock on a real tree: G/.qgc.lock created 0600, held by
 * the returned fd (flock, LOCK_EX|LOCK_NB: a second taker gets -EWOULDBLOCK at once, in this
 * process or another), released on close, never followed when it is a symlink, refused when it
 * is not a regular file, and no tree is -ENOENT (nothing to do). */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "lock.h"
#include "macro.h"

/* Each test's own root with an empty g/ (the tree G) in it. */
static int setup(void **state) {
        return fixture_root_setup_build(state, (const char *const[]){ "g/", NULL });
}

/* Try lock_tree() in a child process: its return value, mapped to an exit status. */
static int lock_in_child(const char *g) {
        pid_t pid = fork();
        int status;

        assert_true(pid >= 0);
        if (pid == 0) {
                int fd = lock_tree(g);
                _exit(fd >= 0 ? 0 : fd == -EWOULDBLOCK ? 1 : 2);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        return WEXITSTATUS(status);
}

static void test_lock_exclusive(void **state) {
        const char *root = *state;
        _cleanup_free_ char *g = fixture_path(root, "g");
        _cleanup_free_ char *lock = fixture_path(root, "g/.qgc.lock");
        _cleanup_close_ int fd = -EBADF, fd2 = -EBADF;
        struct stat st;
        mode_t old = umask(0);

        fd = lock_tree(g);
        umask(old);
        assert_true(fd >= 0);
        assert_int_equal(lstat(lock, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0600);
        assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);

        /* a second taker in this process (its own open file) and in another one */
        assert_int_equal(lock_tree(g), -EWOULDBLOCK);
        assert_int_equal(lock_in_child(g), 1);
        /* another program's flock on the file conflicts the same way */
        fd2 = open(lock, O_RDONLY | O_CLOEXEC);
        assert_true(fd2 >= 0);
        assert_int_equal(flock(fd2, LOCK_EX | LOCK_NB), -1);
        assert_int_equal(errno, EWOULDBLOCK);

        /* closing the fd releases it; the file stays */
        fd = macro_safe_close(fd);
        assert_int_equal(lock_in_child(g), 0);
        fd = lock_tree(g);
        assert_true(fd >= 0);
        assert_int_equal(lstat(lock, &st), 0);
        fd = macro_safe_close(fd);

        /* held elsewhere: lock_tree() does not wait */
        assert_int_equal(flock(fd2, LOCK_EX | LOCK_NB), 0);
        assert_int_equal(lock_tree(g), -EWOULDBLOCK);
        assert_int_equal(flock(fd2, LOCK_UN), 0);
}

/* No tree: -ENOENT, and nothing is created. */
static void test_lock_no_tree(void **state) {
        const char *root = *state;
        _cleanup_free_ char *g = fixture_path(root, "missing");

        assert_int_equal(lock_tree(g), -ENOENT);
        assert_false(fixture_exists(root, "missing"));
}

/* .qgc.lock is never followed: a symlink to a file outside is refused and its target neither
 * created nor locked; a directory or a FIFO in its place is refused without blocking. */
static void test_lock_not_followed(void **state) {
        const char *root = *state;
        _cleanup_free_ char *g = fixture_path(root, "g");
        _cleanup_free_ char *victim = fixture_path(root, "outside/victim");
        _cleanup_free_ char *before = NULL, *after = NULL;
        int r;

        assert_int_equal(fixture_mkdir(root, "outside"), 0);
        assert_int_equal(fixture_symlink(root, "g/.qgc.lock", victim), 0);
        r = lock_tree(g);
        assert_true(r < 0);
        assert_false(fixture_exists(root, "outside/victim"));

        assert_int_equal(fixture_write(root, "outside/victim", "keep"), 0);
        assert_int_equal(fixture_snapshot(root, "outside", &before), 0);
        r = lock_tree(g);
        assert_true(r < 0);
        assert_int_equal(fixture_snapshot(root, "outside", &after), 0);
        assert_string_equal(before, after);

        assert_int_equal(unlink(victim), 0);
        {
                _cleanup_free_ char *l = fixture_path(root, "g/.qgc.lock");
                assert_int_equal(unlink(l), 0);
                assert_int_equal(fixture_mkfifo(root, "g/.qgc.lock"), 0);
                assert_int_equal(lock_tree(g), -EBADFD);
                assert_int_equal(unlink(l), 0);
                assert_int_equal(fixture_mkdir(root, "g/.qgc.lock"), 0);
                assert_true(lock_tree(g) < 0);
        }
}

/* The tree itself may be reached through our own symlink (a configured root): the lock is
 * taken in the directory it points to. */
static void test_lock_root_symlink(void **state) {
        const char *root = *state;
        _cleanup_free_ char *g = fixture_path(root, "g");
        _cleanup_free_ char *link = fixture_path(root, "glink");
        _cleanup_close_ int fd = -EBADF;

        assert_int_equal(fixture_symlink(root, "glink", g), 0);
        fd = lock_tree(link);
        assert_true(fd >= 0);
        assert_true(fixture_exists(root, "g/.qgc.lock"));
        assert_int_equal(lock_tree(g), -EWOULDBLOCK);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_lock_exclusive, setup, fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_lock_no_tree, setup, fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_lock_not_followed, setup, fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_lock_root_symlink, setup, fixture_root_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
