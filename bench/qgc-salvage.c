/* qgc-salvage.c: qgc's usage salvage alone, for the benchmark's salvage rows. For each FILE it
 * runs usage_build_record() (src/usagerecord.c, linked from a build dir's libqgc.a) and prints the
 * usage_record.jsonl line qgc would append, or "null". Writes nothing else.
 *
 * Build (run.sh does this): cc -O2 -I SRC -o qgc-salvage qgc-salvage.c BUILD/libqgc.a LIBS
 * Usage: qgc-salvage FILE... */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "usage.h"

int main(int argc, char *argv[]) {
        int ret = 0;
        if (argc < 2) {
                fprintf(stderr, "Usage: qgc-salvage FILE...\n");
                return 2;
        }
        for (int i = 1; i < argc; i++) {
                char *line = NULL;
                int fd = open(argv[i], O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0) {
                        fprintf(stderr, "qgc-salvage: %s: %s\n", argv[i], strerror(errno));
                        ret = 1;
                        continue;
                }
                int r = usage_build_record(fd, &line);
                close(fd);
                if (r < 0) {
                        fprintf(stderr, "qgc-salvage: %s: %s\n", argv[i], strerror(-r));
                        ret = 1;
                        continue;
                }
                fputs(line ? line : "null\n", stdout);
                free(line);
        }
        return ret;
}
