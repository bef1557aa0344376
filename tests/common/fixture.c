/* fixture.c: build small file trees in a mkdtemp() directory for filesystem tests. */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <json-c/json.h>

#include "fixture.h"
#include "hashmap.h"
#include "macro.h"
#include "qwen-store.h"
#include "roots.h"
#include "scan.h"
#include "usage-append.h"
#include "lock.h"
#include "util.h"

int fixture_new(char **ret_root) {
        const char *tmp = getenv("TMPDIR");
        _cleanup_free_ char *p = NULL;

        if (!tmp || !*tmp)
                tmp = "/tmp";
        p = util_strprintf("%s/qgc-test-XXXXXX", tmp);
        if (!p)
                return -ENOMEM;
        if (!mkdtemp(p))
                return -errno;
        *ret_root = TAKE_PTR(p);
        return 0;
}

char *fixture_free(char *root) {
        if (root) {
                (void)fixture_rm_rf(root);
                free(root);
        }
        return NULL;
}

int fixture_root_setup_build(void **state, const char *const *specs) {
        char *root = NULL;

        if (fixture_new(&root) < 0)
                return -1;
        if (fixture_build(root, specs) < 0) {
                fixture_free(root);
                return -1;
        }
        *state = root;
        return 0;
}

int fixture_root_setup(void **state) {
        return fixture_root_setup_build(state, NULL);
}

int fixture_root_teardown(void **state) {
        *state = fixture_free(*state);
        return 0;
}

const char *fixture_testdata(const char *rel) {
        static char buf[4096];
        const char *base = getenv("QGC_TESTDATA");
        const char *src = getenv("QGC_SRCDIR");

        if (base && *base)
                (void)snprintf(buf, sizeof(buf), "%s/%s", base, rel ? rel : "");
        else
                (void)snprintf(buf, sizeof(buf), "%s/tests/data/%s", src && *src ? src : ".",
                               rel ? rel : "");
        return buf;
}

char *fixture_path(const char *root, const char *rel) {
        if (!rel || !*rel)
                return strdup(root);
        return util_path_join(root, rel);
}

/* mkdir -p of an absolute path; the last component too when is_dir, else only its parents. */
static int fixture_mkdir_parents(const char *path, bool is_dir) {
        _cleanup_free_ char *p = strdup(path);
        size_t n;

        if (!p)
                return -ENOMEM;
        n = strlen(p);
        while (n > 1 && p[n - 1] == '/')
                p[--n] = 0;
        if (!is_dir) {
                char *slash = strrchr(p, '/');
                if (!slash || slash == p)
                        return 0;
                *slash = 0;
        }
        for (char *s = p + 1;; s++) {
                bool end = *s == 0;
                if (*s == '/' || end) {
                        *s = 0;
                        if (mkdir(p, 0755) < 0 && errno != EEXIST)
                                return -errno;
                        if (end)
                                break;
                        *s = '/';
                }
        }
        return 0;
}

int fixture_mkdir(const char *root, const char *rel) {
        _cleanup_free_ char *p = fixture_path(root, rel);

        if (!p)
                return -ENOMEM;
        return fixture_mkdir_parents(p, true);
}

/* root/rel in *ret (malloc'ed), its parent directories made. */
static int fixture_new_path(const char *root, const char *rel, char **ret) {
        _cleanup_free_ char *p = fixture_path(root, rel);
        int r;

        if (!p)
                return -ENOMEM;
        r = fixture_mkdir_parents(p, false);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}

/* Write all of buf to fd. */
static int fixture_write_all(int fd, const void *buf, size_t n) {
        const char *q = buf;

        while (n > 0) {
                ssize_t k = write(fd, q, n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                q += k;
                n -= (size_t)k;
        }
        return 0;
}

/* Open root/rel for writing with flags, creating parents. */
static int fixture_open_write(const char *root, const char *rel, int flags) {
        _cleanup_free_ char *p = NULL;
        int fd, r;

        r = fixture_new_path(root, rel, &p);
        if (r < 0)
                return r;
        fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | flags, 0644);
        if (fd < 0)
                return -errno;
        return fd;
}

int fixture_write_bytes(const char *root, const char *rel, const void *data, size_t n) {
        _cleanup_close_ int fd = fixture_open_write(root, rel, O_TRUNC);

        if (fd < 0)
                return fd;
        return fixture_write_all(fd, data, n);
}

int fixture_write(const char *root, const char *rel, const char *content) {
        return fixture_write_bytes(root, rel, content, strlen(content));
}

int fixture_append(const char *root, const char *rel, const char *content) {
        _cleanup_close_ int fd = fixture_open_write(root, rel, O_APPEND);

        if (fd < 0)
                return fd;
        return fixture_write_all(fd, content, strlen(content));
}

int fixture_write_size(const char *root, const char *rel, uint64_t n) {
        _cleanup_close_ int fd = fixture_open_write(root, rel, O_TRUNC);
        char buf[8192];
        int r;

        if (fd < 0)
                return fd;
        memset(buf, 'x', sizeof(buf));
        while (n > 0) {
                size_t k = n > sizeof(buf) ? sizeof(buf) : (size_t)n;
                r = fixture_write_all(fd, buf, k);
                if (r < 0)
                        return r;
                n -= k;
        }
        return 0;
}

/* Read all of fd into a malloc'ed NUL-terminated buffer. */
static int fixture_read_fd(int fd, char **ret, size_t *ret_len) {
        StrBuf b = {};
        char buf[8192];

        for (;;) {
                ssize_t k = read(fd, buf, sizeof(buf));
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        strbuf_done(&b);
                        return -errno;
                }
                if (k == 0)
                        break;
                if (strbuf_append(&b, buf, (size_t)k) < 0) {
                        strbuf_done(&b);
                        return -ENOMEM;
                }
        }
        if (ret_len)
                *ret_len = b.len;
        *ret = strbuf_steal(&b);
        return *ret ? 0 : -ENOMEM;
}

int fixture_read(const char *root, const char *rel, char **ret, size_t *ret_len) {
        _cleanup_free_ char *p = fixture_path(root, rel);
        _cleanup_close_ int fd = -EBADF;

        if (!p)
                return -ENOMEM;
        fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        return fixture_read_fd(fd, ret, ret_len);
}

int fixture_symlink(const char *root, const char *rel, const char *target) {
        _cleanup_free_ char *p = NULL;
        int r = fixture_new_path(root, rel, &p);

        if (r < 0)
                return r;
        return symlink(target, p) < 0 ? -errno : 0;
}

int fixture_mkfifo(const char *root, const char *rel) {
        _cleanup_free_ char *p = NULL;
        int r = fixture_new_path(root, rel, &p);

        if (r < 0)
                return r;
        return mkfifo(p, 0644) < 0 ? -errno : 0;
}

int fixture_set_times(const char *root, const char *rel, time_t atime, time_t mtime) {
        _cleanup_free_ char *p = fixture_path(root, rel);
        struct timespec ts[2] = {
                { .tv_sec = atime, .tv_nsec = atime < 0 ? UTIME_OMIT : 0 },
                { .tv_sec = mtime, .tv_nsec = mtime < 0 ? UTIME_OMIT : 0 },
        };

        if (!p)
                return -ENOMEM;
        if (atime < 0)
                ts[0].tv_sec = 0;
        if (mtime < 0)
                ts[1].tv_sec = 0;
        return utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

int fixture_set_mtime(const char *root, const char *rel, time_t t) {
        return fixture_set_times(root, rel, t, t);
}

int fixture_age(const char *root, const char *rel, int64_t age_sec) {
        time_t t = time(NULL) - (time_t)age_sec;
        return fixture_set_times(root, rel, t, t);
}

bool fixture_exists(const char *root, const char *rel) {
        _cleanup_free_ char *p = fixture_path(root, rel);
        struct stat st;

        return p && lstat(p, &st) == 0;
}

static uint64_t fixture_du_sum;

static int fixture_du_add(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        fixture_du_sum += (uint64_t)st->st_blocks * 512;
        return 0;
}

uint64_t fixture_du(const char *root, const char *rel) {
        _cleanup_free_ char *p = fixture_path(root, rel);

        fixture_du_sum = 0;
        if (!p)
                return UINT64_MAX;
        if (!fixture_exists(root, rel))
                return 0;
        return nftw(p, fixture_du_add, 16, FTW_PHYS | FTW_MOUNT) < 0 ? UINT64_MAX : fixture_du_sum;
}

/* "100", "4K", "2M" -> bytes */
static int fixture_parse_size(const char *s, uint64_t *ret) {
        char *end = NULL;
        unsigned long long v;

        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0 || end == s)
                return -EINVAL;
        if (*end == 'K')
                v *= 1024, end++;
        else if (*end == 'M')
                v *= 1024 * 1024, end++;
        else if (*end == 'B')
                end++;
        if (*end)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* "40d", "3h", "90s", "2w", "5min" -> seconds */
static int fixture_parse_age(const char *s, int64_t *ret) {
        char *end = NULL;
        long long v;

        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno != 0 || end == s)
                return -EINVAL;
        if (streq(end, "s"))
                *ret = v;
        else if (streq(end, "min"))
                *ret = v * 60;
        else if (streq(end, "h"))
                *ret = v * 3600;
        else if (streq(end, "d"))
                *ret = v * 86400;
        else if (streq(end, "w"))
                *ret = v * 7 * 86400;
        else
                return -EINVAL;
        return 0;
}

/* One "path [SIZE] [AGE]" spec. */
static int fixture_build_one(const char *root, const char *spec) {
        _cleanup_free_ char *copy = strdup(spec);
        char *save = NULL, *path, *tok;
        uint64_t size = 0;
        int64_t age = -1;
        bool is_dir;
        int r;

        if (!copy)
                return -ENOMEM;
        path = strtok_r(copy, " \t", &save);
        if (!path)
                return -EINVAL;
        while ((tok = strtok_r(NULL, " \t", &save))) {
                char last = tok[strlen(tok) - 1];
                if (last >= '0' && last <= '9')
                        r = fixture_parse_size(tok, &size);
                else if (last == 'K' || last == 'M' || last == 'B')
                        r = fixture_parse_size(tok, &size);
                else
                        r = fixture_parse_age(tok, &age);
                if (r < 0)
                        return r;
        }
        is_dir = path[strlen(path) - 1] == '/';
        r = is_dir ? fixture_mkdir(root, path) : fixture_write_size(root, path, size);
        if (r < 0)
                return r;
        if (age >= 0)
                return fixture_age(root, path, age);
        return 0;
}

int fixture_build(const char *root, const char *const *specs) {
        int r;

        for (size_t i = 0; specs && specs[i]; i++) {
                r = fixture_build_one(root, specs[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* open for reading without touching atime when permitted */
static int fixture_open_noatime(int dfd, const char *name, int flags) {
        int fd = openat(dfd, name, flags | O_NOATIME | O_CLOEXEC | O_NOFOLLOW);

        if (fd < 0 && errno == EPERM)
                fd = openat(dfd, name, flags | O_CLOEXEC | O_NOFOLLOW);
        return fd < 0 ? -errno : fd;
}

/* Copy the regular file (sfd, name) to (dfd, name). */
static int fixture_copy_file(int sfd, int dfd, const char *name, mode_t mode) {
        _cleanup_close_ int in = fixture_open_noatime(sfd, name, O_RDONLY);
        _cleanup_close_ int out = -EBADF;
        char buf[65536];
        int r;

        if (in < 0)
                return in;
        out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
        if (out < 0)
                return -errno;
        for (;;) {
                ssize_t k = read(in, buf, sizeof(buf));
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                r = fixture_write_all(out, buf, (size_t)k);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A listing of directory dfd (which stays open), or NULL with errno. */
static DIR *fixture_opendir_fd(int dfd) {
        int fd = dup(dfd);
        DIR *d;

        if (fd < 0)
                return NULL;
        d = fdopendir(fd);
        if (!d) {
                int e = errno;
                close(fd);
                errno = e;
        }
        return d;
}

/* The next entry of d but "." and "..", or NULL at the end. */
static struct dirent *fixture_readdir(DIR *d) {
        struct dirent *de;

        while ((de = readdir(d)) && (streq(de->d_name, ".") || streq(de->d_name, "..")))
                ;
        return de;
}

/* Copy the contents of directory sfd into directory dfd. */
static int fixture_copy_dir_fd(int sfd, int dfd) {
        DIR *d = fixture_opendir_fd(sfd);
        struct dirent *de;
        int r = 0;

        if (!d)
                return -errno;
        while ((de = fixture_readdir(d))) {
                struct stat st;
                struct timespec ts[2];

                if (fstatat(sfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        r = -errno;
                        break;
                }
                if (S_ISDIR(st.st_mode)) {
                        _cleanup_close_ int s2 = -EBADF, d2 = -EBADF;
                        if (mkdirat(dfd, de->d_name, 0700) < 0) {
                                r = -errno;
                                break;
                        }
                        s2 = fixture_open_noatime(sfd, de->d_name, O_RDONLY | O_DIRECTORY);
                        d2 = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        if (s2 < 0 || d2 < 0) {
                                r = s2 < 0 ? s2 : -errno;
                                break;
                        }
                        r = fixture_copy_dir_fd(s2, d2);
                        if (r < 0)
                                break;
                } else if (S_ISREG(st.st_mode)) {
                        r = fixture_copy_file(sfd, dfd, de->d_name, st.st_mode & 07777);
                        if (r < 0)
                                break;
                } else if (S_ISLNK(st.st_mode)) {
                        char target[PATH_MAX];
                        ssize_t k = readlinkat(sfd, de->d_name, target, sizeof(target) - 1);
                        if (k < 0) {
                                r = -errno;
                                break;
                        }
                        target[k] = 0;
                        if (symlinkat(target, dfd, de->d_name) < 0) {
                                r = -errno;
                                break;
                        }
                } else if (S_ISFIFO(st.st_mode)) {
                        if (mkfifoat(dfd, de->d_name, st.st_mode & 07777) < 0) {
                                r = -errno;
                                break;
                        }
                } else
                        continue;
                if (!S_ISLNK(st.st_mode) && fchmodat(dfd, de->d_name, st.st_mode & 07777, 0) < 0) {
                        r = -errno;
                        break;
                }
                ts[0] = st.st_atim;
                ts[1] = st.st_mtim;
                if (utimensat(dfd, de->d_name, ts, AT_SYMLINK_NOFOLLOW) < 0) {
                        r = -errno;
                        break;
                }
        }
        closedir(d);
        return r;
}

/* Does s end with suffix? */
static bool fixture_endswith(const char *s, const char *suffix) {
        size_t n = strlen(s), m = strlen(suffix);

        return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The corpus was written on a host named "vm" by processes long dead. A claim from another
 * host, or whose pid happens to be alive here, counts as live (Qwen's rule): make every claim
 * of the copy local and point it at a pid that just exited, as tests/integration/lib.sh's
 * make_tree does (the same 512-byte file, so that sizes do not depend on the host; the file
 * keeps its times). */
static int fixture_local_claims(const char *tree) {
        _cleanup_free_ char *projects = fixture_path(tree, "projects");
        struct utsname u;
        DIR *pd;
        struct dirent *pe;
        pid_t dead;
        int r = 0;

        if (!projects || uname(&u) < 0)
                return -ENOMEM;
        dead = fork();
        if (dead < 0)
                return -errno;
        if (dead == 0)
                _exit(0);
        (void)waitpid(dead, NULL, 0);
        pd = opendir(projects);
        if (!pd)
                return errno == ENOENT ? 0 : -errno;
        while (r >= 0 && (pe = fixture_readdir(pd))) {
                _cleanup_free_ char *chats = util_strprintf("%s/%s/chats", projects, pe->d_name);
                DIR *cd = chats ? opendir(chats) : NULL;
                struct dirent *ce;

                while (cd && r >= 0 && (ce = fixture_readdir(cd))) {
                        _cleanup_free_ char *f = NULL;
                        json_object *o;
                        const char *text;
                        struct stat st;
                        FILE *out;
                        size_t len;

                        if (!fixture_endswith(ce->d_name, ".runtime.json"))
                                continue;
                        f = util_strprintf("%s/%s", chats, ce->d_name);
                        if (!f || stat(f, &st) < 0 || !(o = json_object_from_file(f)))
                                continue;
                        json_object_object_add(o, "hostname", json_object_new_string(u.nodename));
                        json_object_object_add(o, "pid", json_object_new_int(dead));
                        text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
                                                                         JSON_C_TO_STRING_SPACED);
                        len = strlen(text);
                        out = fopen(f, "we");
                        if (!out || fprintf(out, "%s%*s\n", text, (int)(len < 511 ? 511 - len : 0),
                                            "") < 0)
                                r = -EIO;
                        if (out && fclose(out) != 0)
                                r = -EIO;
                        json_object_put(o);
                        if (r >= 0) {
                                struct timespec ts[2] = { st.st_atim, st.st_mtim };
                                (void)utimensat(AT_FDCWD, f, ts, 0);
                        }
                }
                if (cd)
                        closedir(cd);
        }
        closedir(pd);
        return r;
}

int fixture_copy_tree(const char *src, const char *root, const char *reldst) {
        _cleanup_free_ char *dst = fixture_path(root, reldst);
        _cleanup_close_ int sfd = -EBADF, dfd = -EBADF;
        struct stat st;
        int r;

        if (!dst)
                return -ENOMEM;
        r = fixture_mkdir_parents(dst, true);
        if (r < 0)
                return r;
        sfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (sfd < 0)
                return -errno;
        dfd = open(dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (dfd < 0)
                return -errno;
        r = fixture_copy_dir_fd(sfd, dfd);
        if (r < 0)
                return r;
        if (fixture_endswith(src, "corpus/tree")) {
                r = fixture_local_claims(dst);
                if (r < 0)
                        return r;
        }
        if (fstat(sfd, &st) == 0) {
                struct timespec ts[2] = { st.st_atim, st.st_mtim };
                (void)futimens(dfd, ts);
        }
        return 0;
}

/* Remove everything inside directory dfd. */
static int fixture_rm_children(int dfd) {
        DIR *d = fixture_opendir_fd(dfd);
        struct dirent *de;
        int r = 0;

        if (!d)
                return -errno;
        while ((de = fixture_readdir(d))) {
                struct stat st;

                if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (S_ISDIR(st.st_mode)) {
                        _cleanup_close_ int sub = -EBADF;
                        (void)fchmodat(dfd, de->d_name, 0700, 0);
                        sub = openat(dfd, de->d_name,
                                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (sub >= 0)
                                (void)fixture_rm_children(sub);
                        if (unlinkat(dfd, de->d_name, AT_REMOVEDIR) < 0 && r == 0)
                                r = -errno;
                } else if (unlinkat(dfd, de->d_name, 0) < 0 && r == 0)
                        r = -errno;
        }
        closedir(d);
        return r;
}

int fixture_rm_rf(const char *path) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISDIR(st.st_mode))
                return unlink(path) < 0 ? -errno : 0;
        (void)chmod(path, 0700);
        fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = fixture_rm_children(fd);
        if (rmdir(path) < 0 && r == 0)
                r = -errno;
        return r;
}

typedef struct SnapLines {
        char **v;
        size_t n, alloc;
} SnapLines;

static char fixture_type_char(mode_t m) {
        return S_ISREG(m) ? 'f' : S_ISDIR(m) ? 'd' : S_ISLNK(m) ? 'l' : S_ISFIFO(m) ? 'p' :
               S_ISSOCK(m) ? 's' : S_ISCHR(m) ? 'c' : 'b';
}

static int fixture_snapshot_dir(int dfd, const char *prefix, bool dir_atime, SnapLines *out);

/* Add one entry (and recurse into directories). */
/* FNV-1a continued over n more bytes (the library's hash_bytes_more() is static) */
static uint64_t fixture_hash_more(uint64_t h, const void *p, size_t n) {
        const unsigned char *s = p;

        for (size_t i = 0; i < n; i++)
                h = (h ^ s[i]) * HASH_FNV1A_PRIME;
        return h;
}

static int fixture_snapshot_entry(int dfd, const char *name, const char *rel, bool dir_atime,
                                  SnapLines *out) {
        struct stat st;
        uint64_t h = HASH_FNV1A_OFFSET;
        int64_t atime_ns;
        char *line;
        int r;

        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        atime_ns = (int64_t)st.st_atim.tv_sec * 1000000000 + st.st_atim.tv_nsec;
        if (S_ISREG(st.st_mode)) {
                _cleanup_close_ int fd = fixture_open_noatime(dfd, name, O_RDONLY);
                char buf[65536];
                ssize_t k;
                if (fd < 0)
                        return fd;
                while ((k = read(fd, buf, sizeof(buf))) > 0)
                        h = fixture_hash_more(h, buf, (size_t)k);
                if (k < 0)
                        return -errno;
        } else if (S_ISLNK(st.st_mode)) {
                char target[PATH_MAX];
                ssize_t k = readlinkat(dfd, name, target, sizeof(target));
                if (k < 0)
                        return -errno;
                h = fixture_hash_more(h, target, (size_t)k);
                atime_ns = 0; /* readlink itself bumps it */
        } else if (S_ISDIR(st.st_mode) && !dir_atime)
                atime_ns = 0;
        line = util_strprintf("%s %c %04o %" PRIu64 " %" PRId64 " %" PRId64 " %016" PRIx64, rel,
                              fixture_type_char(st.st_mode), (unsigned)(st.st_mode & 07777),
                              S_ISDIR(st.st_mode) ? 0 : (uint64_t)st.st_size,
                              (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
                              atime_ns, h);
        if (!line)
                return -ENOMEM;
        r = util_greedy_realloc((void **)&out->v, &out->alloc, out->n + 1, sizeof(char *));
        if (r < 0) {
                free(line);
                return r;
        }
        out->v[out->n++] = line;
        if (S_ISDIR(st.st_mode)) {
                _cleanup_close_ int sub = fixture_open_noatime(dfd, name, O_RDONLY | O_DIRECTORY);
                if (sub < 0)
                        return sub;
                return fixture_snapshot_dir(sub, rel, dir_atime, out);
        }
        return 0;
}

static int fixture_snapshot_dir(int dfd, const char *prefix, bool dir_atime, SnapLines *out) {
        DIR *d = fixture_opendir_fd(dfd);
        struct dirent *de;
        int r = 0;

        if (!d)
                return -errno;
        while ((de = fixture_readdir(d))) {
                _cleanup_free_ char *rel = NULL;

                rel = *prefix ? util_path_join(prefix, de->d_name) : strdup(de->d_name);
                if (!rel) {
                        r = -ENOMEM;
                        break;
                }
                r = fixture_snapshot_entry(dfd, de->d_name, rel, dir_atime, out);
                if (r < 0)
                        break;
        }
        closedir(d);
        return r;
}

static int fixture_cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static int fixture_snapshot_impl(const char *root, const char *rel, bool dir_atime, char **ret) {
        _cleanup_free_ char *p = fixture_path(root, rel);
        _cleanup_close_ int fd = -EBADF;
        SnapLines lines = {};
        StrBuf b = {};
        int r;

        if (!p)
                return -ENOMEM;
        fd = fixture_open_noatime(AT_FDCWD, p, O_RDONLY | O_DIRECTORY);
        if (fd < 0)
                return fd;
        r = fixture_snapshot_dir(fd, "", dir_atime, &lines);
        if (r >= 0) {
                qsort(lines.v, lines.n, sizeof(char *), fixture_cmp_str);
                for (size_t i = 0; i < lines.n && r >= 0; i++)
                        r = strbuf_printf(&b, "%s\n", lines.v[i]);
        }
        for (size_t i = 0; i < lines.n; i++)
                free(lines.v[i]);
        free(lines.v);
        if (r < 0) {
                strbuf_done(&b);
                return r;
        }
        if (b.len == 0)
                r = strbuf_append(&b, "", 0);
        *ret = strbuf_steal(&b);
        return *ret ? 0 : -ENOMEM;
}

int fixture_snapshot(const char *root, const char *rel, char **ret) {
        return fixture_snapshot_impl(root, rel, false, ret);
}

int fixture_snapshot_full(const char *root, const char *rel, char **ret) {
        return fixture_snapshot_impl(root, rel, true, ret);
}

/* Write s to an existing file (a /proc map), in one write. */
static int write_proc(const char *path, const char *s) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        ssize_t k;

        if (fd < 0)
                return -errno;
        k = write(fd, s, strlen(s));
        close(fd);
        return k == (ssize_t)strlen(s) ? 0 : -EIO;
}

/* Enter a private mount namespace (a user namespace too when not root). 0, or -errno. */
int fixture_enter_mount_namespace(void) {
        uid_t uid = geteuid();
        gid_t gid = getegid();

        if (uid == 0) {
                if (unshare(CLONE_NEWNS) < 0)
                        return -errno;
        } else {
                char map[64];
                if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
                        return -errno;
                if (write_proc("/proc/self/setgroups", "deny") < 0)
                        return -EPERM;
                snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
                if (write_proc("/proc/self/uid_map", map) < 0)
                        return -EPERM;
                snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
                if (write_proc("/proc/self/gid_map", map) < 0)
                        return -EPERM;
        }
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return -errno;
        return 0;
}

/* Probe in a child: a private mount namespace and a tmpfs mounted in it. */
bool fixture_can_mount(void) {
        char dir[] = "/tmp/qgc-mnt-probe-XXXXXX";
        int status = 0;
        pid_t pid;

        if (!mkdtemp(dir))
                return false;
        pid = fork();
        if (pid == 0)
                _exit(fixture_enter_mount_namespace() < 0 ||
                              mount("tmpfs", dir, "tmpfs", 0, "mode=0755") < 0 ? 1 : 0);
        if (pid > 0 && waitpid(pid, &status, 0) != pid)
                status = 1;
        (void)rmdir(dir);
        return pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int fixture_corpus_setup(void **state) {
        FixtureCorpus *fx = calloc(1, sizeof(FixtureCorpus));

        if (!fx || fixture_new(&fx->root) < 0)
                return -1;
        if (fixture_copy_tree(fixture_testdata("corpus/tree"), fx->root, "q") < 0)
                return -1;
        fx->qwen = fixture_path(fx->root, "q");
        *state = fx;
        return fx->qwen ? 0 : -1;
}

int fixture_corpus_teardown(void **state) {
        FixtureCorpus *fx = *state;

        inventory_free(fx->inv);
        free(fx->qwen);
        fixture_free(fx->root);
        free(fx);
        return 0;
}

int fixture_corpus_scan(FixtureCorpus *fx, unsigned hygiene) {
        ScanOptions o = { .now = util_now_msec(), .hygiene = hygiene };
        Tree t = {};
        int r;

        fx->inv = inventory_free(fx->inv);
        r = inventory_new(&fx->inv);
        if (r < 0)
                return r;
        r = qwen_store.tree_from_dir(fx->qwen, &t);
        if (r < 0)
                return r;
        r = inventory_add_tree(fx->inv, &t, NULL);
        if (r < 0)
                return r;
        return scan_all(fx->inv, &o);
}

int cold_compress(int dir_fd, const char *name, int cold_fd, int level, const FileId *expect,
                  ColdStepFn step, void *userdata, ColdResult *ret) {
        ColdCtx *c = NULL;
        int r;

        if (level < 1)
                return -EINVAL;
        r = cold_default(level, &c);
        if (r < 0)
                return r;
        return cold_ctx_compress(c, dir_fd, name, cold_fd, expect, 0, step, userdata, ret);
}

int fixture_usage_append(int global_fd, const char *line) {
        UsageAppend a;
        const char *nl;
        size_t len;
        int r;

        if (!line)
                return -EINVAL;
        len = strlen(line);
        nl = memchr(line, '\n', len);
        if (len < 2 || !nl || nl != line + len - 1)
                return -EINVAL; /* exactly one complete line */
        r = usage_append_begin(global_fd, line, len, &a);
        if (r < 0)
                return r;
        return usage_append_end(&a, fsync(a.fd) < 0 ? -errno : 0);
}

int fixture_roots_resolve(const char *home, const char *qwen_home, const char *runtime_env,
                          Tree *ret) {
        RootsOptions o = {
                .home = home,
                .qwen_home = qwen_home,
                .runtime_env = runtime_env,
        };

        return roots_resolve_opts(&o, ret, NULL);
}

char *fixture_snapshot_timeless(const char *root, const char *rel) {
        _cleanup_free_ char *s = NULL;
        StrBuf b = {};

        if (fixture_snapshot(root, rel, &s) < 0)
                return NULL;
        for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
                char *f[6]; /* type mode size mtime atime hash */
                char *end = line + strlen(line);

                for (int i = 5; i >= 0; i--) { /* the last six fields; the path may hold spaces */
                        while (end > line && end[-1] != ' ')
                                end--;
                        f[i] = end;
                        if (end > line)
                                *--end = 0;
                }
                if (streq(line, LOCK_FILE) || util_endswith(line, "/" LOCK_FILE))
                        continue; /* the tree's lock: every run takes it, whatever it does */
                if (strbuf_printf(&b, "%s %s %s %s %s\n", line, f[0], f[1],
                                  streq(f[0], "d") ? "-" : f[2], f[5]) < 0) {
                        strbuf_done(&b);
                        return NULL;
                }
        }
        return strbuf_steal(&b);
}
