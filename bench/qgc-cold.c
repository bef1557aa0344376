/* qgc-cold.c: the cold tier's compression alone, for bench/: compress (cold_compress(), with its
 * verification and fsyncs) every *.jsonl of each DIR into DIR/.qgc-cold/, or --restore them, and
 * print files, bytes in, bytes out, ratio, wall and CPU seconds, MB/s of input.
 *
 *   qgc-cold [--level N] [--restore] DIR...      (links libqgc.a; see bench/README.md) */
#include "autoconf.h"

#include <dirent.h>
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

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv) {
        int level = COLD_LEVEL_DEFAULT, restore = 0, failed = 0;
        unsigned long files = 0;
        unsigned long long in = 0, out = 0;
        double t0 = now_s(), c0 = cpu_s();

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--level") == 0 && i + 1 < argc) {
                        level = atoi(argv[++i]);
                        continue;
                }
                if (strcmp(argv[i], "--restore") == 0) {
                        restore = 1;
                        continue;
                }
                int dfd = open(argv[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC), cfd;
                if (dfd < 0)
                        continue;
                (void)mkdirat(dfd, COLD_DIR, 0700);
                cfd = openat(dfd, COLD_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                DIR *d = fdopendir(dup(restore ? cfd : dfd));
                struct dirent *de;
                while (d && cfd >= 0 && (de = readdir(d))) {
                        size_t n = strlen(de->d_name);
                        ColdResult res = {};
                        int r;

                        if (de->d_type != DT_REG)
                                continue;
                        if (restore) {
                                if (n < 11 || strcmp(de->d_name + n - 10, ".jsonl.zst") != 0)
                                        continue;
                                char name[512];
                                snprintf(name, sizeof name, "%.*s", (int)(n - 4), de->d_name);
                                r = cold_decompress(cfd, name, dfd, NULL, NULL, &res);
                        } else {
                                if (n < 7 || strcmp(de->d_name + n - 6, ".jsonl") != 0)
                                        continue;
                                r = cold_compress(dfd, de->d_name, cfd, level, NULL, NULL, NULL,
                                                  &res);
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
                close(cfd);
                close(dfd);
        }
        double wall = now_s() - t0, cpu = cpu_s() - c0;
        printf("files %lu bytes_in %llu bytes_out %llu ratio %.2f wall_s %.3f cpu_s %.3f "
               "mb_per_s_wall %.1f mb_per_s_cpu %.1f failed %d\n",
               files, in, out, out ? (double)in / (double)out : 0, wall, cpu,
               wall > 0 ? (double)in / 1e6 / wall : 0, cpu > 0 ? (double)in / 1e6 / cpu : 0,
               failed);
        return failed ? 1 : 0;
}
