/* fixture.h: build small file trees in a mkdtemp() directory for filesystem tests.
 *
 * Every function takes the fixture root (from fixture_new()) and a path RELATIVE to it; parent
 * directories are created as needed. All return 0 (or a count) on success, -errno on failure, so
 * tests write `assert_int_equal(fixture_write(root, "a/b.jsonl", "{}\n"), 0);`.
 *
 * Typical use:
 *
 *     static int setup(void **state) {
 *             char *root = NULL;
 *             if (fixture_new(&root) < 0)
 *                     return -1;
 *             *state = root;
 *             return fixture_copy_tree(fixture_testdata("corpus/tree"), root, "qwen");
 *     }
 *     static int teardown(void **state) {
 *             fixture_free(*state);   // removes the whole tree, then frees the path
 *             return 0;
 *     }
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "cold.h"
#include "inventory.h"

/* Create a fresh directory $TMPDIR/qgc-test-XXXXXX (TMPDIR defaults to /tmp). *ret_root is a
 * malloc'ed absolute path. */
int fixture_new(char **ret_root);
/* Remove the tree (fixture_rm_rf) and free root. Accepts NULL. Returns NULL. */
char *fixture_free(char *root);

/* cmocka setup and teardown of the tests that work in a fixture root of their own: *state is the
 * root (a char *, as fixture_new() makes it), which the teardown removes with everything in it
 * (fixture_free()). A test program whose setup or teardown does more calls them from its own. */
int fixture_root_setup(void **state);
int fixture_root_teardown(void **state);
/* fixture_root_setup() with fixture_build()'s specs made in the root, e.g. a chats/ directory:
 *     return fixture_root_setup_build(state, (const char *const[]){ "chats/", NULL }); */
int fixture_root_setup_build(void **state, const char *const *specs);

/* Absolute path of a test-data entry: $QGC_TESTDATA/rel (QGC_TESTDATA is set by `make check`;
 * else $QGC_SRCDIR/tests/data, else ./tests/data). Returns a pointer to a static buffer that the
 * next call overwrites: copy it if you need two. */
const char *fixture_testdata(const char *rel);

/* root + "/" + rel, malloc'ed (NULL on ENOMEM). rel may be NULL or "" for root itself. */
char *fixture_path(const char *root, const char *rel);

/* mkdir -p root/rel (mode 0755). */
int fixture_mkdir(const char *root, const char *rel);
/* Create or truncate root/rel with the NUL-terminated content (mode 0644). */
int fixture_write(const char *root, const char *rel, const char *content);
/* Same with explicit bytes (may contain NULs or invalid UTF-8). */
int fixture_write_bytes(const char *root, const char *rel, const void *data, size_t n);
/* Append content to root/rel (created if missing). */
int fixture_append(const char *root, const char *rel, const char *content);
/* Create root/rel filled with n bytes of 'x' (a sparse-free file of exactly that size). */
int fixture_write_size(const char *root, const char *rel, uint64_t n);
/* Read the whole of root/rel into a malloc'ed, NUL-terminated buffer (*ret_len may be NULL). */
int fixture_read(const char *root, const char *rel, char **ret, size_t *ret_len);

/* Symlink root/rel -> target (target verbatim, may be absolute or dangling). */
int fixture_symlink(const char *root, const char *rel, const char *target);
/* FIFO at root/rel (mode 0644). */
int fixture_mkfifo(const char *root, const char *rel);

/* Set mtime (and atime to the same value) of root/rel, seconds since the epoch; does not follow
 * a final symlink. */
int fixture_set_mtime(const char *root, const char *rel, time_t t);
/* Set atime and mtime separately (seconds; a negative value leaves that time unchanged). */
int fixture_set_times(const char *root, const char *rel, time_t atime, time_t mtime);
/* Set mtime to now - age_sec (atime too). */
int fixture_age(const char *root, const char *rel, int64_t age_sec);

/* Does root/rel exist (lstat)? */
bool fixture_exists(const char *root, const char *rel);

/* What du -sB1 says of root/rel (st_blocks * 512 of it and of everything below, no symlink
 * followed, no mount entered; hard links each time); 0 when absent, UINT64_MAX on an error. */
uint64_t fixture_du(const char *root, const char *rel);

/* Build entries from specs, one per string, terminated by NULL. Each spec is
 *     "path [SIZE] [AGE]"
 * where a path ending in '/' is a directory, SIZE is bytes with an optional K/M suffix ("100",
 * "4K"; default 0) and AGE a duration before now ("40d", "3h", "90s", "2w"; default: leave).
 * Example: { "projects/-p/chats/", "s1/a.jsonl 100 40d", NULL }. */
int fixture_build(const char *root, const char *const *specs);

/* Recursively copy directory src to root/reldst (created), preserving modes, mtimes and atimes;
 * symlinks are copied as symlinks (not followed), FIFOs recreated, sockets/devices skipped. */
/* A copy of the test corpus (src ending in corpus/tree) gets local claims with a dead pid
 * (fixture.c: fixture_local_claims()), so that no claim is live by the host's name or pids. */
int fixture_copy_tree(const char *src, const char *root, const char *reldst);
/* rm -rf an absolute path (never follows symlinks; makes dirs writable first). ENOENT is 0. */
int fixture_rm_rf(const char *path);

/* A stable listing of the tree under root/rel: one line per entry, sorted by path:
 *     "<relpath> <type> <mode> <size> <mtime_ns> <atime_ns> <fnv64 of content or link target>"
 * with type f, d, l, p (fifo), s, c, b. Files are read with O_NOATIME, so taking a snapshot does
 * not change what it records. Symlinks' atimes are listed as 0 (readlink bumps them). Directories' atimes are listed as 0 (any readdir may bump them);
 * fixture_snapshot_full() includes them (directories are opened with O_NOATIME too). Compare two
 * snapshots with streq to prove that a run changed nothing (atimes included). *ret is malloc'ed. */
int fixture_snapshot(const char *root, const char *rel, char **ret);
int fixture_snapshot_full(const char *root, const char *rel, char **ret);
/* fixture_snapshot() without times: path, type, mode, size and content hash of every entry
 * (directories' sizes left out: they depend on their history) and without the trees' lock files
 * (LOCK_FILE, which every run creates), for comparing a rerun after a kill with an unkilled run,
 * or a tree before and after a refused run. NULL on error. */
char *fixture_snapshot_timeless(const char *root, const char *rel);

/* Enter a private mount namespace (a user namespace too when not root), with "/" made private
 * so nothing mounted leaks out. 0, or -errno. Call it in a forked child. */
int fixture_enter_mount_namespace(void);
/* Can this process mount in a private namespace (false in a plain container or chroot)? Forks a
 * probe. Tests call it FIRST and skip() before any _cleanup_ allocation: cmocka's skip() jumps
 * out of the test, past the cleanups. */
bool fixture_can_mount(void);

/* A copy of the corpus tree (tests/data/corpus/tree) at root/q, and its scan: the setup of the
 * tests that scan a real Qwen tree (tests/fs/test_scan.c, test_hygiene.c). */
typedef struct FixtureCorpus {
        char *root;
        char *qwen;     /* root/q: the copied tree */
        Inventory *inv; /* of the last fixture_corpus_scan(), NULL before */
} FixtureCorpus;
/* cmocka setup and teardown: *state is a new FixtureCorpus with the copy; teardown removes it. */
int fixture_corpus_setup(void **state);
int fixture_corpus_teardown(void **state);
/* Scan fx->qwen as a --root tree (now: the real clock; the hygiene kinds of hygiene_need()'s bits
 * looked for) into a new fx->inv. The result of scan_all(), or -errno. */
int fixture_corpus_scan(FixtureCorpus *fx, unsigned hygiene);

/* The tests' one-call compression: cold_ctx_compress() with the thread's context
 * (cold_default()). Compress the regular file (dir_fd, name) into (cold_fd, name.zst) at level (1-19) with the
 * dictionary COLD_DICT_CURRENT, then remove the original (and fsync dir_fd) if it still has the
 * identity it had when read (expect, when not NULL, must match too). 0; -EEXIST: a compressed copy exists (nothing done); -ESTALE: the
 * original changed (the compressed copy is removed again, the original stays); -EBADMSG: the
 * verification failed (nothing removed); other -errno. */
int cold_compress(int dir_fd, const char *name, int cold_fd, int level, const FileId *expect,
                  ColdStepFn step, void *userdata, ColdResult *ret);
/* Append exactly one complete line (ending in '\n', not empty) to G/usage_record.jsonl as the
 * executor's group commit does: usage_append_begin(), fsync, usage_append_end(). 0 or -errno
 * (-EINVAL for anything but one line). */
int fixture_usage_append(int global_fd, const char *line);

/* roots_resolve_opts() with Qwen's default system paths and no environment (root mode). */
int fixture_roots_resolve(const char *home, const char *qwen_home, const char *runtime_env,
                          Tree *ret);
