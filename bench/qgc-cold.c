/* qgc-cold.c: the cold tier's compression alone, for bench/: compress (cold_ctx_compress(), with
 * its verification and fsyncs) every *.jsonl of each DIR into DIR/.qgc-cold/, or --restore
 * them, and print files, bytes in, bytes out, ratio, wall and CPU seconds (user + system, and
 * each), MB/s of input over each.
 *
 *   qgc-cold [--level N] [--dict N|none] [--batch] [--restore] DIR...   (links libqgc.a)
 *
 * --dict: the dictionary version (default: COLD_DICT_CURRENT; none: plain zstd, the format
 * before dictionaries). --batch: COLD_BATCH in batches of 256 files, as a run would batch
 * them (cold.h): every file written and verified, one syncfs(), the renames, one fsync per cold
 * directory, the originals unlinked, one fsync per directory. Without it:
 * cold_ctx_compress()'s own three fsyncs per file. --restore --batch: cold_restore_files() of
 * up to 256 files of a directory at once (one fsync group for the files, one fsync of each
 * directory); --restore alone: cold_restore_files() of one file (three fsyncs each).
 * One ColdCtx for the whole run. See bench/README.md. */
#include "autoconf.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cold.h"
#include "cold-restore.h"

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds of this process: user, system. */
static void cpu_s(double *user, double *sys) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        *user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
        *sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

#define BATCH_FILES 256 /* like the executor's batches */

typedef struct Pending {
        char name[256];
        FileId id;
        size_t dir; /* index into the batch's open directories */
} Pending;

typedef struct Batch {
        Pending files[BATCH_FILES];
        size_t n_files;
        int dfd[BATCH_FILES], cfd[BATCH_FILES]; /* directories of the batch (owned) */
        size_t n_dirs;
        int failed;
} Batch;

/* The batch (cold.h, COLD_BATCH): the data durable (one syncfs), the .zst renamed into place
 * and their names durable (one fsync per cold directory), then the originals go (one fsync per
 * directory). Closes the batch's directories but the last (still being listed). */
static void batch_flush(Batch *b, bool keep_last) {
        if (b->n_files > 0) {
                if (syncfs(b->cfd[0]) < 0)
                        b->failed++;
                for (size_t k = 0; k < b->n_files; k++)
                        if (cold_batch_commit(b->cfd[b->files[k].dir], b->files[k].name, NULL,
                                              NULL) < 0) {
                                b->files[k].name[0] = 0;
                                b->failed++;
                        }
                for (size_t d = 0; d < b->n_dirs; d++)
                        if (fsync(b->cfd[d]) < 0)
                                b->failed++;
                for (size_t k = 0; k < b->n_files; k++) {
                        Pending *p = &b->files[k];
                        if (!p->name[0])
                                continue;
                        int r = cold_remove_original(b->dfd[p->dir], p->name, b->cfd[p->dir],
                                                     &p->id, NULL, NULL);
                        if (r < 0) {
                                fprintf(stderr, "%s: %s\n", p->name, strerror(-r));
                                b->failed++;
                        }
                }
                for (size_t d = 0; d < b->n_dirs; d++)
                        if (fsync(b->dfd[d]) < 0)
                                b->failed++;
        }
        b->n_files = 0;
        for (size_t d = 0; d + (keep_last ? 1 : 0) < b->n_dirs; d++) {
                close(b->dfd[d]);
                close(b->cfd[d]);
        }
        if (keep_last && b->n_dirs > 0) {
                b->dfd[0] = b->dfd[b->n_dirs - 1];
                b->cfd[0] = b->cfd[b->n_dirs - 1];
                b->n_dirs = 1;
        } else
                b->n_dirs = 0;
}

/* --restore --batch: the names waiting, restored as one batch (cold_restore_files(): one
 * fsync group for the files, one fsync of each directory) */
static char rnames[BATCH_FILES][512];

static void restore_flush(int cfd, int dfd, size_t *n, unsigned long *files, int *failed,
                          unsigned long long *in, unsigned long long *out) {
        const char *ptrs[BATCH_FILES];
        ColdResult res[BATCH_FILES];
        int r;

        if (*n == 0)
                return;
        for (size_t i = 0; i < *n; i++)
                ptrs[i] = rnames[i];
        r = cold_restore_files(cfd, ptrs, *n, false, dfd, NULL, NULL, res);
        if (r < 0) {
                fprintf(stderr, "restore batch: %s\n", strerror(-r));
                (*failed)++;
        } else
                for (size_t i = 0; i < *n; i++) {
                        (*files)++;
                        *in += res[i].bytes_in;
                        *out += res[i].bytes_out;
                }
        *n = 0;
}

int main(int argc, char **argv) {
        int level = COLD_LEVEL_DEFAULT, restore = 0, batch = 0, failed = 0, r;
        unsigned dict = COLD_DICT_CURRENT;
        unsigned long files = 0;
        unsigned long long in = 0, out = 0;
        double t0, u0, s0, u1, s1;
        ColdCtx *ctx = NULL;
        Batch *b = calloc(1, sizeof(Batch));
        int first = 1;

        if (!b)
                return 2;

        for (; first < argc && strncmp(argv[first], "--", 2) == 0; first++) {
                if (strcmp(argv[first], "--level") == 0 && first + 1 < argc)
                        level = atoi(argv[++first]);
                else if (strcmp(argv[first], "--dict") == 0 && first + 1 < argc) {
                        first++;
                        dict = strcmp(argv[first], "none") == 0 ? COLD_DICT_NONE
                                                                : (unsigned)atoi(argv[first]);
                } else if (strcmp(argv[first], "--batch") == 0)
                        batch = 1;
                else if (strcmp(argv[first], "--restore") == 0)
                        restore = 1;
                else {
                        fprintf(stderr, "qgc-cold: unknown option %s\n", argv[first]);
                        return 2;
                }
        }
        r = cold_ctx_new(level, dict, &ctx);
        if (r < 0) {
                fprintf(stderr, "qgc-cold: %s\n", strerror(-r));
                return 2;
        }
        t0 = now_s();
        cpu_s(&u0, &s0);
        for (int i = first; i < argc; i++) {
                int dfd = open(argv[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC), cfd;
                if (dfd < 0)
                        continue;
                (void)mkdirat(dfd, COLD_DIR, 0700);
                cfd = openat(dfd, COLD_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (cfd < 0) {
                        close(dfd);
                        continue;
                }
                if (batch && !restore) {
                        b->dfd[b->n_dirs] = dfd;
                        b->cfd[b->n_dirs++] = cfd;
                }
                size_t rn = 0; /* --restore --batch: names waiting for cold_restore_files() */
                DIR *d = fdopendir(dup(restore ? cfd : dfd));
                struct dirent *de;
                while (d && (de = readdir(d))) {
                        size_t n = strlen(de->d_name);
                        ColdResult res = {};

                        if (de->d_type != DT_REG)
                                continue;
                        if (restore) {
                                if (n < 11 || strcmp(de->d_name + n - 10, ".jsonl.zst") != 0)
                                        continue;
                                char name[512];
                                snprintf(name, sizeof name, "%.*s", (int)(n - 4), de->d_name);
                                if (batch) {
                                        snprintf(rnames[rn], sizeof rnames[rn], "%s", name);
                                        if (++rn == BATCH_FILES)
                                                restore_flush(cfd, dfd, &rn, &files, &failed,
                                                              &in, &out);
                                        continue;
                                }
                                {
                                        const char *one = name;
                                        r = cold_restore_files(cfd, &one, 1, false, dfd, NULL,
                                                               NULL, &res);
                                }
                        } else {
                                if (n < 7 || n >= sizeof b->files[0].name ||
                                    strcmp(de->d_name + n - 6, ".jsonl") != 0)
                                        continue;
                                r = cold_ctx_compress(ctx, dfd, de->d_name, cfd, NULL,
                                                      batch ? COLD_BATCH : 0, NULL, NULL, &res);
                                if (r >= 0 && batch) {
                                        Pending *p = &b->files[b->n_files++];
                                        memcpy(p->name, de->d_name, n + 1);
                                        p->id = res.original;
                                        p->dir = b->n_dirs - 1;
                                        if (b->n_files == BATCH_FILES)
                                                batch_flush(b, true);
                                }
                        }
                        if (r < 0) {
                                fprintf(stderr, "%s/%s: %s\n", argv[i], de->d_name, strerror(-r));
                                failed++;
                                continue;
                        }
                        files++;
                        in += res.bytes_in;
                        out += res.bytes_out;
                }
                if (d)
                        closedir(d);
                if (restore && batch)
                        restore_flush(cfd, dfd, &rn, &files, &failed, &in, &out);
                if (!batch || restore) {
                        close(cfd);
                        close(dfd);
                } else if (b->n_dirs == BATCH_FILES)
                        batch_flush(b, false); /* every directory holds an open pair */
        }
        batch_flush(b, false);
        failed += b->failed;
        double wall = now_s() - t0;
        cpu_s(&u1, &s1);
        double user = u1 - u0, sys = s1 - s0, cpu = user + sys;
        printf("files %lu bytes_in %llu bytes_out %llu ratio %.3f wall_s %.3f cpu_s %.3f "
               "user_s %.3f sys_s %.3f mb_per_s_wall %.1f mb_per_s_cpu %.1f "
               "mb_per_s_user %.1f failed %d\n",
               files, in, out, out ? (double)in / (double)out : 0, wall, cpu, user, sys,
               wall > 0 ? (double)in / 1e6 / wall : 0, cpu > 0 ? (double)in / 1e6 / cpu : 0,
               user > 0 ? (double)in / 1e6 / user : 0, failed);
        cold_ctx_free(ctx);
        free(b);
        return failed ? 1 : 0;
}
