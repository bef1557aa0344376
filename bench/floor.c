/* floor.c: the baseline walk for the benchmark. For every ROOT/projects/<dir>/chats/<file>.jsonl and
 * ROOT/projects/<dir>/chats/archive/<file>.jsonl: fstatat() it (no symlink following), openat() it and
 * read its first 4 KiB. Prints "files N bytes B read R". This is the least any correct scan must do:
 * qgc also needs each session's size/mtime and its first record.
 *
 * With --title it reads instead the windows Qwen Code's title rule reads (the last 64 KiB, and
 * the first 64 KiB when the tail has no "customTitle"), found with glibc memmem(): the least I/O
 * any scan that decides "titled by a person" exactly as Qwen does must do.
 *
 * Build: cc -O2 -o floor floor.c     Usage: floor [--title] ROOT...   (ROOT = a Qwen dir, ~/.qwen)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct Totals {
        uint64_t files, bytes, read;
} Totals;

static int title_windows; /* --title */

/* --title: the bytes Qwen's title rule reads (readSessionTitleInfoFromFile): the last 64 KiB
 * (the whole file when smaller), searched for "customTitle"; when the tail has none and the
 * file is larger, the first 64 KiB too. No parsing: the least work that rule needs. */
static void read_title_windows(int fd, uint64_t size, Totals *t) {
        static char win[65536];
        uint64_t start = size > sizeof win ? size - sizeof win : 0;
        ssize_t k = pread(fd, win, (size_t) (size - start), (off_t) start);

        if (k <= 0)
                return;
        t->read += (uint64_t) k;
        if (memmem(win, (size_t) k, "\"customTitle\"", 13) || start == 0)
                return;
        k = pread(fd, win, sizeof win, 0);
        if (k > 0)
                t->read += (uint64_t) k;
}

/* True if name ends in ".jsonl". */
static int is_jsonl(const char *name) {
        size_t n = strlen(name);
        return n > 6 && strcmp(name + n - 6, ".jsonl") == 0;
}

/* Stat and read the head of every *.jsonl in the directory dfd (consumed), and in its archive/. */
static void walk_chats(int dfd, int is_archive, Totals *t) {
        DIR *d = fdopendir(dfd);
        if (!d) {
                close(dfd);
                return;
        }
        char buf[4096];
        struct dirent *de;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                if (de->d_type == DT_DIR || (de->d_type == DT_UNKNOWN && strcmp(de->d_name, "archive") == 0)) {
                        if (is_archive || strcmp(de->d_name, "archive") != 0)
                                continue;
                        int afd = openat(dirfd(d), "archive", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (afd >= 0)
                                walk_chats(afd, 1, t);
                        continue;
                }
                if (!is_jsonl(de->d_name))
                        continue;
                struct stat st;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                        continue;
                int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
                if (fd < 0)
                        continue;
                if (title_windows)
                        read_title_windows(fd, (uint64_t) st.st_size, t);
                else {
                        ssize_t k = read(fd, buf, sizeof buf);
                        if (k > 0)
                                t->read += (uint64_t) k;
                }
                close(fd);
                t->files++;
                t->bytes += (uint64_t) st.st_size;
        }
        closedir(d);
}

/* Walk ROOT/projects/x/chats for every x. */
static int walk_root(const char *root, Totals *t) {
        char path[4096];
        snprintf(path, sizeof path, "%s/projects", root);
        DIR *d = opendir(path);
        if (!d) {
                fprintf(stderr, "floor: %s: %s\n", path, strerror(errno));
                return -1;
        }
        struct dirent *de;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                int pfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (pfd < 0)
                        continue;
                int cfd = openat(pfd, "chats", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                close(pfd);
                if (cfd >= 0)
                        walk_chats(cfd, 0, t);
        }
        closedir(d);
        return 0;
}

int main(int argc, char *argv[]) {
        Totals t = {};
        int r = 0;
        int first = 1;

        if (argc > 1 && strcmp(argv[1], "--title") == 0) {
                title_windows = 1;
                first = 2;
        }
        if (argc <= first) {
                fprintf(stderr, "Usage: floor [--title] ROOT...\n");
                return 2;
        }
        for (int i = first; i < argc; i++)
                if (walk_root(argv[i], &t) < 0)
                        r = 1;
        printf("files %" PRIu64 " bytes %" PRIu64 " read %" PRIu64 "\n", t.files, t.bytes, t.read);
        return r;
}
