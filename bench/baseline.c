/* baseline.c: the least work a real qgc run must do, for the benchmark's real-run rows.
 *
 *   baseline delete TREE   read every byte of every regular file below TREE/projects/<dir>/chats,
 *                          TREE/projects/<dir>/subagents and TREE/file-history, then unlink it
 *                          (directories below those emptied and removed): `cat` + `rm`
 *   baseline archive TREE  for every TREE/projects/<dir>/chats/<id>.jsonl: read every byte, then
 *                          rename it into chats/archive/ (created when missing)
 *
 * No fsync, no checks: a floor, not a safe tool. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char buf[1 << 20];
static const char *top;
static unsigned long n_files;

static int read_all(int dfd, const char *name) {
        int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        ssize_t k;

        if (fd < 0)
                return -1;
        while ((k = read(fd, buf, sizeof buf)) > 0)
                ;
        close(fd);
        return k < 0 ? -1 : 0;
}

static int del_cb(const char *path, const struct stat *st, int type, struct FTW *f) {
        (void)st;
        if (type == FTW_F) {
                if (read_all(AT_FDCWD, path) == 0 && unlink(path) == 0)
                        n_files++;
        } else if (type == FTW_DP && f->level > 0)
                (void)rmdir(path);
        return 0;
}

static int for_projects(const char *tree, const char *sub, int (*fn)(const char *)) {
        char p[4096];
        DIR *d;
        struct dirent *de;

        snprintf(p, sizeof p, "%s/projects", tree);
        d = opendir(p);
        if (!d)
                return -1;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                snprintf(p, sizeof p, "%s/projects/%s/%s", tree, de->d_name, sub);
                fn(p);
        }
        closedir(d);
        return 0;
}

static int del_dir(const char *p) {
        top = p;
        return nftw(p, del_cb, 64, FTW_DEPTH | FTW_PHYS);
}

static int arch_dir(const char *p) {
        int dfd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC), afd;
        DIR *d;
        struct dirent *de;

        if (dfd < 0)
                return -1;
        (void)mkdirat(dfd, "archive", 0700);
        afd = openat(dfd, "archive", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        d = fdopendir(dfd);
        while (d && afd >= 0 && (de = readdir(d))) {
                size_t n = strlen(de->d_name);
                if (de->d_type != DT_REG || n < 7 || strcmp(de->d_name + n - 6, ".jsonl") != 0)
                        continue;
                if (read_all(dfd, de->d_name) == 0 &&
                    renameat(dfd, de->d_name, afd, de->d_name) == 0)
                        n_files++;
        }
        if (d)
                closedir(d);
        if (afd >= 0)
                close(afd);
        return 0;
}

int main(int argc, char **argv) {
        char p[4096];

        if (argc != 3)
                return fprintf(stderr, "usage: baseline delete|archive TREE\n"), 2;
        if (strcmp(argv[1], "delete") == 0) {
                for_projects(argv[2], "chats", del_dir);
                for_projects(argv[2], "subagents", del_dir);
                snprintf(p, sizeof p, "%s/file-history", argv[2]);
                del_dir(p);
        } else if (strcmp(argv[1], "archive") == 0)
                for_projects(argv[2], "chats", arch_dir);
        else
                return 2;
        printf("%lu\n", n_files);
        return 0;
}
