/* usagehistory.c: the one-time write of the usage history Qwen would rebuild from transcripts
 * (usage_history_freeze(), usageidx.h): rebuildFromSessionJsonl() reproduced over G/projects/,
 * then written after the file's own bytes in one step (temporary file, fsync, rename). */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "fsutil.h"
#include "hashmap.h"
#include "macro.h"
#include "record.h"
#include "usage.h"
#include "usageidx-int.h"
#include "usageidx.h"
#include "util.h"

#define USAGE_TMP "." USAGE_FILE ".qgc-tmp"

static int usageidx_strcmp(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static void usageidx_names_free(char **names, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
}

/* The entry names of directory fd (taken over), sorted by bytes as Node's readdirSync (libuv's
 * scandir sorts with strcmp). */
static int usageidx_list(int fd, char ***ret, size_t *ret_n) {
        char **names = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        DIR *d = fdopendir(fd);

        if (!d) {
                safe_close(fd);
                return -errno;
        }
        errno = 0;
        while ((de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (n == cap) {
                        char **nn = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof(char *));
                        if (!nn)
                                goto oom;
                        names = nn;
                }
                names[n] = strdup(de->d_name);
                if (!names[n])
                        goto oom;
                n++;
                errno = 0;
        }
        if (errno != 0) {
                int r = -errno;
                closedir(d);
                usageidx_names_free(names, n);
                return r;
        }
        closedir(d);
        if (n > 1)
                qsort(names, n, sizeof(char *), usageidx_strcmp);
        *ret = names;
        *ret_n = n;
        return 0;
oom:
        closedir(d);
        usageidx_names_free(names, n);
        return -ENOMEM;
}

static bool usageidx_ends_with(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);
        return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

/* Open directory name below dfd as Qwen's readdirSync would reach it. 0 with *ret, 1 when Qwen
 * skips it (absent, not a directory), -ELOOP for a symlink (Qwen follows it, qgc never does, so
 * the rebuild could not be reproduced), other -errno. */
static int usageidx_open_dir(int dfd, const char *name, int *ret) {
        int fd = usageidx_openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
                                 0);

        if (fd >= 0) {
                *ret = fd;
                return 0;
        }
        if (errno == ENOENT || errno == ENOTDIR)
                return 1;
        return -errno;
}

/* rebuildFromSessionJsonl() over G/projects/<dir>/chats/<file>.jsonl: the lines Qwen would
 * write, appended to out. */
static int usageidx_rebuild_lines(int global_fd, StrBuf *out) {
        UsageIndex seen = {}; /* the rebuild's Set of first-record sessionIds */
        char **projects = NULL;
        size_t n_projects = 0;
        int pfd = -EBADF, r;

        r = usageidx_open_dir(global_fd, "projects", &pfd);
        if (r != 0)
                return r > 0 ? 0 : r; /* Qwen: no projects/, nothing to rebuild */
        r = fcntl(pfd, F_DUPFD_CLOEXEC, 3); /* the listing takes its fd over */
        r = r < 0 ? -errno : usageidx_list(r, &projects, &n_projects);
        if (r < 0)
                goto finish;
        for (size_t i = 0; i < n_projects && r >= 0; i++) {
                _cleanup_close_ int proj_fd = -EBADF, chats_fd = -EBADF;
                char **files = NULL;
                size_t n_files = 0;
                int cfd;

                r = usageidx_open_dir(pfd, projects[i], &proj_fd);
                if (r != 0)
                        goto next_project;
                r = usageidx_open_dir(proj_fd, "chats", &chats_fd);
                if (r != 0)
                        goto next_project;
                cfd = fcntl(chats_fd, F_DUPFD_CLOEXEC, 3);
                if (cfd < 0) {
                        r = -errno;
                        goto next_project;
                }
                r = usageidx_list(cfd, &files, &n_files);
                for (size_t j = 0; j < n_files && r >= 0; j++) {
                        _cleanup_close_ int fd = -EBADF;
                        _cleanup_free_ char *line = NULL, *key = NULL;
                        struct stat st;

                        if (!usageidx_ends_with(files[j], ".jsonl") ||
                            usageidx_ends_with(files[j], ".ledger.jsonl"))
                                continue;
                        if (fstatat(chats_fd, files[j], &st, AT_SYMLINK_NOFOLLOW) < 0) {
                                if (errno != ENOENT)
                                        r = -errno;
                                continue;
                        }
                        if (S_ISLNK(st.st_mode)) {
                                r = -ELOOP; /* Qwen's statSync follows it */
                                break;
                        }
                        if (!S_ISREG(st.st_mode))
                                continue;
                        fd = usageidx_openat(chats_fd, files[j],
                                    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0);
                        if (fd < 0) {
                                if (errno != ENOENT)
                                        r = -errno;
                                continue;
                        }
                        r = usage_summarize(fd, &line, &key);
                        if (r <= 0)
                                continue;
                        if (key && usageidx_contains(&seen, key)) {
                                r = 0;
                                continue; /* an earlier file had this sessionId */
                        }
                        if (key)
                                r = usageidx_add(&seen, key);
                        if (r >= 0 && line)
                                r = strbuf_append(out, line, strlen(line));
                }
                usageidx_names_free(files, n_files);
        next_project:
                if (r > 0)
                        r = 0; /* skipped, as Qwen does */
        }
finish:
        safe_close(pfd);
        usageidx_names_free(projects, n_projects);
        usageidx_clear(&seen);
        return r < 0 ? r : 0;
}

/* Copy [from, to) of src to the end of dst. */
static int usageidx_copy(int src, uint64_t from, uint64_t to, int dst, char *last) {
        char buf[64 * 1024];

        while (from < to) {
                size_t want = (size_t)MIN((uint64_t)sizeof(buf), to - from);
                ssize_t k = pread(src, buf, want, (off_t)from);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return -EIO;
                int r = write_all(dst, buf, (size_t)k);
                if (r < 0)
                        return r;
                *last = buf[k - 1];
                from += (uint64_t)k;
        }
        return 0;
}

/* One attempt: 1 installed, 0 nothing to write, -EAGAIN the file changed meanwhile, -errno. */
static int usageidx_freeze_once(int global_fd, const StrBuf *lines) {
        _cleanup_close_ int ofd = -EBADF, tfd = -EBADF;
        struct stat ost = {}, st;
        char last = '\n';
        int r;

        ofd = usageidx_open_read(global_fd);
        if (ofd < 0 && errno != ENOENT)
                return -errno;
        if (ofd >= 0) {
                if (fstat(ofd, &ost) < 0)
                        return -errno;
                if (!S_ISREG(ost.st_mode))
                        return -EBADFD;
        }
        /* a leftover of a crashed run has this fixed name (we hold the tree lock) */
        if (unlinkat(global_fd, USAGE_TMP, 0) < 0 && errno != ENOENT)
                return -errno;
        tfd = usageidx_openat(global_fd, USAGE_TMP, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     0600);
        if (tfd < 0)
                return -errno;
        /* the file's bytes so far stay as they are (none is a v1 record), then a fresh line */
        r = ofd >= 0 ? usageidx_copy(ofd, 0, (uint64_t)ost.st_size, tfd, &last) : 0;
        if (r >= 0 && last != '\n')
                r = write_all(tfd, "\n", 1);
        if (r >= 0)
                r = write_all(tfd, lines->buf, lines->len);
        if (r >= 0 && ofd >= 0 && fchmod(tfd, ost.st_mode & 07777) < 0)
                r = -errno;
        if (r >= 0 && fsync(tfd) < 0)
                r = -errno;
        if (r < 0)
                goto fail;

        if (ofd < 0) {
                /* no file: install ours unless a writer created one meanwhile */
                r = fs_rename_noreplace(global_fd, USAGE_TMP, global_fd, USAGE_FILE);
                if (r == -EEXIST)
                        r = -EAGAIN;
                if (r < 0)
                        goto fail;
        } else {
                /* replace it only while it is still the file we copied */
                if (fstatat(global_fd, USAGE_FILE, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        r = errno == ENOENT ? -EAGAIN : -errno;
                        goto fail;
                }
                if (st.st_dev != ost.st_dev || st.st_ino != ost.st_ino ||
                    st.st_size != ost.st_size) {
                        r = -EAGAIN;
                        goto fail;
                }
                if (renameat(global_fd, USAGE_TMP, global_fd, USAGE_FILE) < 0) {
                        r = -errno;
                        goto fail;
                }
                /* A Qwen writer that opened the old file just before the rename appends there:
                 * carry such bytes over (on a fresh line of their own). */
                if (fstat(ofd, &st) == 0 && st.st_size > ost.st_size) {
                        _cleanup_close_ int afd = usageidx_openat(global_fd, USAGE_FILE,
                                                         O_WRONLY | O_APPEND | O_CLOEXEC |
                                                                 O_NOFOLLOW | O_NONBLOCK, 0);
                        if (afd < 0)
                                return -errno;
                        r = usageidx_copy(ofd, (uint64_t)ost.st_size, (uint64_t)st.st_size, afd,
                                          &last);
                        if (r >= 0 && last != '\n')
                                r = write_all(afd, "\n", 1);
                        if (r >= 0 && fsync(afd) < 0)
                                r = -errno;
                        if (r < 0)
                                return r;
                }
        }
        if (fsync(global_fd) < 0)
                return -errno;
        return 1;
fail:
        (void)unlinkat(global_fd, USAGE_TMP, 0);
        return r;
}

int usage_history_freeze(UsageIndex *idx, int global_fd) {
        StrBuf lines = {};
        int r;

        r = usage_index_has_v1(idx, global_fd);
        if (r != 0)
                return r < 0 ? r : 0;
        if (idx->rebuild_empty)
                return 0;
        r = usageidx_rebuild_lines(global_fd, &lines);
        if (r >= 0 && lines.len == 0) {
                idx->rebuild_empty = true; /* nothing Qwen would count: nothing to keep */
                r = 0;
        } else if (r >= 0) {
                for (int attempt = 0; attempt < 3; attempt++) {
                        r = usageidx_freeze_once(global_fd, &lines);
                        if (r != -EAGAIN)
                                break;
                }
        }
        strbuf_done(&lines);
        idx->held_seen = false; /* held or not, the next lookup looks at the file again */
        return r;
}
