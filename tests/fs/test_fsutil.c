/* test_fsutil.c: the safe-filesystem layer on real directories, each test in both modes:
 * openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_XDEV) and the fallback walk
 * (fs_test_force_walk()). A symlink component, "..", an absolute path and a mount crossing (a
 * bind mount of the same filesystem, whose st_dev is the parent's) are refused; the removal
 * keeps every mount point. Mount tests run in a forked child with its own mount namespace and
 * are skipped (before any cleanup allocation) where there is none. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "force-walk.h"
#include "fs.h"
#include "rm-rf.h"
#include "macro.h"
#include "testdata.h"
#include "testskip.h"

/* is (dfd, name) a mount point, as fs_statat() says? 1 yes, 0 no, -errno */
static int test_is_mount_point_at(int dfd, const char *name) {
        bool m = false;
        int r = fs_statat(dfd, name, NULL, &m);

        return r < 0 ? r : m;
}

static const bool modes[] = { false, true }; /* force the walk? */

static const char *mode_name(bool walk) {
        return walk ? "walk" : "openat2";
}

/* fixture_root_teardown(), and back to openat2 for the next test. */
static int teardown(void **state) {
        fs_test_force_walk(false);
        return fixture_root_teardown(state);
}

/* Can this process make a private mount namespace (root only: bind mounts need it)? Tried in a
 * child, so the test process itself stays where it is. */
static bool can_mount_namespace(void) {
        int status = 0;
        pid_t pid;

        if (geteuid() != 0)
                return false;
        pid = fork();
        if (pid < 0)
                return false;
        if (pid == 0)
                _exit(unshare(CLONE_NEWNS) < 0 ||
                                      mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ?
                              77 :
                              0);
        return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* In a forked child: a private mount namespace, then src bind-mounted on dst. 0 or -errno. */
static int child_bind(const char *src, const char *dst) {
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return -errno;
        return mount(src, dst, NULL, MS_BIND, NULL) < 0 ? -errno : 0;
}

static void test_fs_openat_refuses_symlink_component(void **state) {
        const char *root = *state;
        _cleanup_free_ char *outside = fixture_path(root, "outside");
        _cleanup_close_ int dfd = -EBADF;

        assert_int_equal(fixture_write(root, "outside/x/f", "outside\n"), 0);
        assert_int_equal(fixture_mkdir(root, "in/d"), 0);
        assert_int_equal(fixture_write(root, "in/d/f", "inside\n"), 0);
        assert_int_equal(fixture_symlink(root, "in/link", outside), 0);
        assert_int_equal(fixture_symlink(root, "in/flink", "d/f"), 0);
        dfd = test_open_dir(root, NULL);
        for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
                fs_test_force_walk(modes[i]);
                print_message("mode %s\n", mode_name(modes[i]));
                /* a symlink on the way, to a directory or to a file */
                assert_int_equal(fs_openat(dfd, "in/link/x", O_RDONLY | O_DIRECTORY, 0), -ELOOP);
                assert_int_equal(fs_openat(dfd, "in/link/x/f", O_RDONLY, 0), -ELOOP);
                assert_int_equal(fs_open_path(dfd, "in/link/x", 0), -ELOOP);
                /* a final symlink is never opened (openat's errno for it) */
                assert_int_equal(fs_openat(dfd, "in/flink", O_RDONLY, 0), -ELOOP);
                int r = fs_openat(dfd, "in/link", O_RDONLY | O_DIRECTORY, 0);
                assert_true(r == -ENOTDIR || r == -ELOOP);
                /* the plain path works */
                int fd = fs_openat(dfd, "in/d/f", O_RDONLY, 0);
                assert_true(fd >= 0);
                close(fd);
                fd = fs_openat(dfd, "./in//d/", O_RDONLY | O_DIRECTORY, 0);
                assert_true(fd >= 0);
                close(fd);
        }
}

static void test_fs_openat_refuses_dotdot_and_absolute(void **state) {
        const char *root = *state;
        _cleanup_close_ int dfd = -EBADF;

        assert_int_equal(fixture_write(root, "outside/f", "outside\n"), 0);
        assert_int_equal(fixture_mkdir(root, "in/d"), 0);
        dfd = test_open_dir(root, NULL);
        _cleanup_close_ int in = fs_open_dir(dfd, "in");
        assert_true(in >= 0);
        for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
                fs_test_force_walk(modes[i]);
                print_message("mode %s\n", mode_name(modes[i]));
                assert_int_equal(fs_openat(in, "../outside/f", O_RDONLY, 0), -EPERM);
                assert_int_equal(fs_openat(in, "d/../../outside", O_RDONLY | O_DIRECTORY, 0),
                                 -EPERM);
                assert_int_equal(fs_openat(in, "d/..", O_RDONLY | O_DIRECTORY, 0), -EPERM);
                assert_int_equal(fs_openat(in, "..", O_RDONLY | O_DIRECTORY, 0), -EPERM);
                assert_int_equal(fs_openat(in, "/etc/passwd", O_RDONLY, 0), -EPERM);
                assert_int_equal(fs_openat(in, "", O_RDONLY, 0), -EPERM);
                assert_int_equal(fs_open_path(in, "d/..", 0), -EPERM);
                /* a name that only starts with dots is a name */
                assert_int_equal(fixture_write(root, "in/..x", "ok\n"), 0);
                int fd = fs_openat(in, "..x", O_RDONLY, 0);
                assert_true(fd >= 0);
                close(fd);
                /* creating below the dirfd works, and never through a symlink */
                fd = fs_openat(in, "d/new", O_WRONLY | O_CREAT | O_EXCL, 0600);
                assert_true(fd >= 0);
                close(fd);
                assert_int_equal(unlinkat(in, "d/new", 0), 0);
        }
}

/* A bind mount of the same filesystem (st_dev equal) is a mount crossing for fs_openat(),
 * fs_open_path() and fs_statat(), in both modes. */
static void test_fs_openat_refuses_same_fs_bind_mount(void **state) {
        if (!can_mount_namespace())
                /* before any cleanup allocation: a skip jumps past them */
                test_skip("needs a mount namespace");
        const char *root = *state;
        _cleanup_free_ char *src = fixture_path(root, "outside/src");
        _cleanup_free_ char *dst = fixture_path(root, "in/d/mnt");
        int status = 0;
        pid_t pid;

        assert_int_equal(fixture_write(root, "outside/src/secret", "not the tree's\n"), 0);
        assert_int_equal(fixture_mkdir(root, "in/d/mnt"), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int dfd, fd;
                struct stat a, b;
                bool m = false;

                if (child_bind(src, dst) < 0)
                        _exit(77);
                dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dfd < 0 || stat(src, &a) < 0 || stat(root, &b) < 0 || a.st_dev != b.st_dev)
                        _exit(2); /* the point: the same st_dev */
                for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
                        fs_test_force_walk(modes[i]);
                        if (fs_openat(dfd, "in/d/mnt", O_RDONLY | O_DIRECTORY, 0) != -EXDEV)
                                _exit(10 + (int)i);
                        if (fs_openat(dfd, "in/d/mnt/secret", O_RDONLY, 0) != -EXDEV)
                                _exit(20 + (int)i);
                        if (fs_open_path(dfd, "in/d/mnt", 0) != -EXDEV)
                                _exit(30 + (int)i);
                        fd = fs_open_path(dfd, "in/d", 0);
                        if (fd < 0 || fs_open_dir(fd, "mnt") != -EXDEV)
                                _exit(40 + (int)i);
                        if (fs_statat(fd, "mnt", NULL, &m) < 0 || !m ||
                            test_is_mount_point_at(fd, "mnt") != 1 ||
                            test_is_mount_point_at(dfd, "in") != 0)
                                _exit(50 + (int)i);
                        close(fd);
                }
                _exit(0);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) != 0)
                fail_msg("child failed at check %d (tens: which check, units: 0 openat2, 1 walk)",
                         WEXITSTATUS(status));
}

/* rm_rf_at() never enters a same-filesystem bind mount: the mount point and every directory
 * above it stay, everything else goes, the result says so (-EBUSY), in both modes. */
static void test_fs_rm_rf_at_keeps_same_fs_bind_mount(void **state) {
        if (!can_mount_namespace())
                test_skip("needs a mount namespace"); /* before any cleanup allocation */
        const char *root = *state;
        _cleanup_free_ char *src = fixture_path(root, "outside/src");
        _cleanup_free_ char *dst = fixture_path(root, "victim/a/sub");
        int status = 0;
        pid_t pid;

        assert_int_equal(fixture_write(root, "outside/src/secret", "not the tree's\n"), 0);
        assert_int_equal(fixture_write(root, "outside/src/deeper/more", "neither\n"), 0);
        for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
                assert_int_equal(fixture_write(root, "victim/a/own", "12345"), 0);
                assert_int_equal(fixture_write(root, "victim/b/own", "123"), 0);
                assert_int_equal(fixture_mkdir(root, "victim/a/sub"), 0);
                pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                        /* what goes: own's in a/, b/ with its own, not a mount's files */
                        uint64_t bytes = 0, want = fixture_du(root, "victim/a/own") +
                                                   fixture_du(root, "victim/b");
                        int dfd, r;

                        if (child_bind(src, dst) < 0)
                                _exit(77);
                        fs_test_force_walk(modes[i]);
                        dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        if (dfd < 0)
                                _exit(2);
                        r = rm_rf_at(dfd, "victim", 0, &bytes);
                        if (r != -EBUSY)
                                _exit(3);
                        if (bytes != want)
                                _exit(4);
                        if (!fixture_exists(src, "secret") || !fixture_exists(src, "deeper/more"))
                                _exit(5);
                        if (fixture_exists(root, "victim/a/own") || fixture_exists(root, "victim/b"))
                                _exit(6);
                        if (test_is_mount_point_at(dfd, "victim/a/sub") != 1)
                                _exit(7);
                        /* and a mount point as the directory itself is kept whole */
                        if (rm_rf_at(dfd, "victim/a/sub", 0, NULL) != -EBUSY ||
                            !fixture_exists(src, "secret"))
                                _exit(8);
                        _exit(0);
                }
                assert_int_equal(waitpid(pid, &status, 0), pid);
                assert_true(WIFEXITED(status));
                if (WEXITSTATUS(status) != 0)
                        fail_msg("mode %s: child failed at check %d", mode_name(modes[i]),
                                 WEXITSTATUS(status));
                /* outside the child's namespace: the mount is gone, the tree's own is removed */
                assert_true(fixture_exists(root, "outside/src/secret"));
                assert_true(fixture_exists(root, "victim/a/sub"));
        }
}

/* The removal is iterative: a tree deeper than any recursion we would allow goes whole (up to
 * the depth limit), and past it the error is reported with nothing outside touched. */
static void test_fs_rm_rf_at_deep_tree(void **state) {
        const char *root = *state;
        _cleanup_close_ int dfd = -EBADF;
        char rel[4096] = "deep";
        uint64_t bytes = 0, want;

        for (int i = 0; i < 100; i++)
                strcat(rel, "/d");
        assert_int_equal(fixture_write(root, rel, "x"), 0);
        assert_int_equal(fixture_write(root, "deep/top", "yy"), 0);
        dfd = test_open_dir(root, NULL);
        for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
                fs_test_force_walk(modes[i]);
                assert_int_equal(fixture_write(root, rel, "x"), 0);
                assert_int_equal(fixture_write(root, "deep/top", "yy"), 0);
                want = fixture_du(root, "deep");
                assert_int_equal(rm_rf_at(dfd, "deep", 0, &bytes), 0);
                assert_int_equal(bytes, want);
                assert_false(fixture_exists(root, "deep"));
        }
}

/* fs_fsync_many(): every fd gets its own result, in place, from however many threads; a
 * negative fd is skipped with 0, a closed one reports -EBADF. */
static void test_fs_fsync_many_results_in_place(void **state) {
        const char *root = *state;
        int fds[20], ret[20];

        for (size_t i = 0; i < ELEMENTSOF(fds); i++) {
                ret[i] = 1;
                if (i % 5 == 3)
                        fds[i] = -EBADF;
                else if (i % 5 == 4)
                        fds[i] = 1000 + (int)i; /* not open */
                else {
                        fds[i] = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        assert_true(fds[i] >= 0);
                }
        }
        fs_fsync_many(fds, ELEMENTSOF(fds), ret);
        for (size_t i = 0; i < ELEMENTSOF(fds); i++) {
                assert_int_equal(ret[i], i % 5 == 4 ? -EBADF : 0);
                if (fds[i] >= 0 && fds[i] < 1000)
                        close(fds[i]);
        }
        fs_fsync_many(fds, 0, ret);
}

/* fs_temp_like(): like's mode & mask past the umask, never over a file there (O_EXCL). */
static void test_fs_temp_like_mode_past_umask(void **state) {
        const char *root = *state;
        _cleanup_close_ int dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat like, st;
        mode_t old = umask(077);
        int fd;

        assert_true(dfd >= 0);
        assert_int_equal(fixture_write(root, "like", "x"), 0);
        assert_int_equal(fchmodat(dfd, "like", 02751, 0), 0);
        assert_int_equal(fstatat(dfd, "like", &like, 0), 0);
        fd = fs_temp_like(dfd, "t1", &like, 07777, true);
        assert_true(fd >= 0);
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(st.st_mode & 07777, 02751);
        assert_int_equal(st.st_uid, like.st_uid);
        assert_int_equal(st.st_gid, like.st_gid);
        close(fd);
        assert_int_equal(fs_temp_like(dfd, "t1", &like, 07777, true), -EEXIST);
        fd = fs_temp_like(dfd, "t2", &like, 0666, false);
        assert_true(fd >= 0);
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0640);
        close(fd);
        umask(old);
}

/* fs_exchange_open(): the file at the name replaced, the one it replaced opened at the temp
 * name; fs_version_is() tells the version read (identity and text) from any other. */
static void test_fs_exchange_open_and_version_is(void **state) {
        const char *root = *state;
        _cleanup_close_ int dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *got = NULL;
        struct stat want, tst, st;
        size_t n = 0;
        bool at_tmp = true;

        assert_true(dfd >= 0);
        assert_int_equal(fixture_write(root, "name", "old"), 0);
        assert_int_equal(fixture_write(root, "tmp", "new"), 0);
        assert_int_equal(fstatat(dfd, "name", &want, 0), 0);
        assert_int_equal(fstatat(dfd, "tmp", &tst, 0), 0);
        fd = fs_exchange_open(dfd, "tmp", "name", false, &at_tmp, &st);
        assert_true(fd >= 0);
        assert_true(at_tmp);
        assert_int_equal(fixture_read(root, "name", &got, &n), 0);
        assert_string_equal(got, "new");
        assert_int_equal(fs_version_is(fd, &st, &want, "old", 3, NULL), 1);
        assert_int_equal(fs_version_is(fd, &st, &want, "olx", 3, NULL), 0);
        assert_int_equal(fs_version_is(fd, &st, &want, "ol", 2, NULL), 0);
        assert_int_equal(fs_version_is(fd, &st, &tst, "old", 3, NULL), 0); /* another file */
        assert_int_equal(fs_version_is(fd, &st, NULL, "old", 3, NULL), 1);
        /* nothing at the name: nothing replaced, the temp file stays */
        assert_int_equal(fs_unlink(dfd, "name", 0), 0);
        assert_int_equal(fs_exchange_open(dfd, "tmp", "name", true, &at_tmp, &st), -ENOENT);
        assert_false(at_tmp);
        assert_true(fixture_exists(root, "tmp"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_fs_openat_refuses_symlink_component,
                                                fixture_root_setup, teardown),
                cmocka_unit_test_setup_teardown(test_fs_openat_refuses_dotdot_and_absolute,
                                                fixture_root_setup, teardown),
                cmocka_unit_test_setup_teardown(test_fs_openat_refuses_same_fs_bind_mount,
                                                fixture_root_setup, teardown),
                cmocka_unit_test_setup_teardown(test_fs_rm_rf_at_keeps_same_fs_bind_mount,
                                                fixture_root_setup, teardown),
                cmocka_unit_test_setup_teardown(test_fs_rm_rf_at_deep_tree, fixture_root_setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_fs_fsync_many_results_in_place,
                                                fixture_root_setup, teardown),
                cmocka_unit_test_setup_teardown(test_fs_temp_like_mode_past_umask,
                                                fixture_root_setup, teardown),
                cmocka_unit_test_setup_teardown(test_fs_exchange_open_and_version_is,
                                                fixture_root_setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
