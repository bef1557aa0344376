/* dc-git-run.c: t-0710's driver of dc-git.c (the compaction of a Deep Code checkpoint repository).
 *
 *   dc-git-run plan|compact GITDIR KEPT NAMED [MAX_BYTES [TIMEOUT_MS]]
 *                          KEPT and NAMED: files of one session id, one checkpoint hash a line;
 *                          prints the report as key=value lines; exit 0 (also when kept as is)
 *   dc-git-run                                  a self-test in TAP: a fresh `git init` compacts
 *                                               (SKIP without /usr/bin/git)
 */
#include "autoconf.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dc-git.h"

static char **read_lines(const char *path, size_t *ret_n) {
        FILE *f = fopen(path, "re");
        char **v = NULL, *line = NULL;
        size_t cap = 0, n = 0;
        ssize_t k;

        if (!f) {
                perror(path);
                exit(2);
        }
        while ((k = getline(&line, &cap, f)) >= 0) {
                if (k > 0 && line[k - 1] == '\n')
                        line[--k] = '\0';
                if (k == 0)
                        continue;
                v = realloc(v, (n + 1) * sizeof(char *));
                if (!v || !(v[n++] = strdup(line)))
                        exit(2);
        }
        free(line);
        fclose(f);
        *ret_n = n;
        return v;
}

static int self_test(void) {
        char dir[] = "/tmp/dc-git-run.XXXXXX", cmd[256];
        DcGitReport rep;
        int fd, r;

        printf("1..1\n");
        if (access(DC_GIT_PROGRAM, X_OK) < 0) {
                printf("ok 1 # SKIP no " DC_GIT_PROGRAM "\n");
                return 0;
        }
        if (!mkdtemp(dir))
                return 1;
        snprintf(cmd, sizeof(cmd), DC_GIT_PROGRAM " init -q %s", dir);
        if (system(cmd) != 0)
                return 1;
        snprintf(cmd, sizeof(cmd), "%s/.git", dir);
        fd = open(cmd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = dc_git_compact(fd, &(DcGitInput){}, &rep);
        printf("%s 1 - a fresh repository compacts (%d%s%s)\n", r == 1 ? "ok" : "not ok", r,
               rep.why ? ": " : "", rep.why ? rep.why : "");
        dc_git_report_done(&rep);
        close(fd);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        (void)system(cmd);
        return r == 1 ? 0 : 1;
}

int main(int argc, char **argv) {
        char **kept, **named;
        size_t n_kept, n_named;
        DcGitReport rep;
        int fd, r;

        if (argc == 1)
                return self_test();
        if (argc < 5 || argc > 7 || (strcmp(argv[1], "plan") != 0 && strcmp(argv[1], "compact") != 0)) {
                fprintf(stderr, "usage: dc-git-run plan|compact GITDIR KEPT NAMED [MAX_BYTES [TIMEOUT_MS]]\n");
                return 2;
        }
        kept = read_lines(argv[3], &n_kept);
        named = read_lines(argv[4], &n_named);
        fd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                perror(argv[2]);
                return 2;
        }
        DcGitInput in = { .kept_ids = (const char *const *)kept, .n_kept = n_kept,
                          .named = (const char *const *)named, .n_named = n_named,
                          .max_bytes = argc >= 6 ? strtoull(argv[5], NULL, 10) : 0,
                          .timeout = argc == 7 ? strtoll(argv[6], NULL, 10) : 0 };
        r = strcmp(argv[1], "plan") == 0 ? dc_git_plan(fd, &in, &rep) : dc_git_compact(fd, &in, &rep);
        printf("result=%d\nwhy=%s\n", r, rep.why ? rep.why : "");
        printf("bytes_before=%llu\nbytes_after=%llu\nbytes_estimate=%llu\n", (unsigned long long)rep.bytes_before,
               (unsigned long long)rep.bytes_after, (unsigned long long)rep.bytes_estimate);
        printf("refs_removed=%zu\n", rep.n_refs_removed);
        for (size_t i = 0; i < rep.n_refs_removed; i++)
                printf("ref=%s\n", rep.refs_removed[i]);
        printf("reflogs_removed=%zu\nreflogs_expired=%zu\n", rep.n_reflogs_removed, rep.n_reflogs_expired);
        printf("keep_refs=%zu\nkeep_refs_added=%zu\nkeep_refs_removed=%zu\nnamed_missing=%zu\n", rep.n_keep_refs,
               rep.n_keep_refs_added, rep.n_keep_refs_removed, rep.n_named_missing);
        printf("loose_objects=%llu\nunreachable_objects=%llu\nunreachable_bytes=%llu\nchanged=%d\n",
               (unsigned long long)rep.loose_objects, (unsigned long long)rep.unreachable_objects,
               (unsigned long long)rep.unreachable_bytes, rep.changed);
        dc_git_report_done(&rep);
        close(fd);
        for (size_t i = 0; i < n_kept; i++)
                free(kept[i]);
        for (size_t i = 0; i < n_named; i++)
                free(named[i]);
        free(kept);
        free(named);
        return 0;
}
