/* erase-race.c: qgc's edit of logs.json (erase_edit(), linked from a build dir's libqgc.a) against
 * an unpaced writer, as a measurement, not a test (issue 23 item 6): no hook paces the writer, so
 * what it shows depends on the machine's timing. A thread rewrites logs.json in a loop as Qwen's
 * Logger does (read it whole, add a row, write it back) by rename, in place (open O_TRUNC,
 * write), or alternately; the main thread adds two rows of session A (under the writer's lock:
 * two Loggers of one file lose each other's rows, which is not what this measures) and runs the
 * edit that deletes them, EDITS times. At the end every row the writer wrote is looked up in
 * logs.json and in the versions qgc kept beside it (logs.json.qgc-unmerged-*).
 *
 * Bounded: the writer stops after ROWS rows (its file grows by a row per cycle, and a rename
 * writer copies it whole each time; default 6000, 2000 by rename), sleeps PACE microseconds per
 * cycle (default 0, 200 by rename), and the edits stop after SECONDS (default 60); the edits
 * also stop once the writer has stopped. EDITS: default 200.
 *
 * Build (erase-race.sh does this): cc -O2 -I SRC/<each folder> -I BUILD -o erase-race
 *   erase-race.c BUILD/libqgc.a LIBS -lpthread
 * Usage: erase-race [-m alternate|inplace|rename] [-e EDITS] [-r ROWS] [-p PACE] [-t SECONDS]
 * Prints one line: mode, rows written, lost (of them: written in place; hidden: a later cycle of
 * the writer read a text without the row and wrote on it), only in a kept version,
 * edits run, failed (by error), edits after which rows of A were at the name again (the writer
 * wrote back what it read before the edit ended), seconds. Exit 1 when a row was lost. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "erase-edit.h"

#define A "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
#define X "cccccccc-cccc-4ccc-8ccc-cccccccccccc"

enum { ALTERNATE, IN_PLACE, RENAME };

static const char *mode_names[] = { "alternate", "inplace", "rename" };

typedef struct Writer {
        int dir_fd;
        int mode;
        unsigned rows; /* stop after this many */
        unsigned pace; /* us per cycle */
        unsigned n;    /* rows written */
        unsigned na;   /* rows of A written */
        bool *hidden;  /* [j]: a later cycle wrote on a text without row x-j */
        pthread_mutex_t m;
        atomic_bool stop, done;
} Writer;

static void die(const char *what) {
        perror(what);
        exit(2);
}

static double now_s(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The whole file name in dir_fd (NUL-terminated, *ret_n bytes), or NULL (errno) */
static char *read_all(int dir_fd, const char *name, size_t *ret_n) {
        int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC);
        size_t n = 0, cap = 4096;
        char *buf;

        if (fd < 0)
                return NULL;
        buf = malloc(cap);
        for (;;) {
                ssize_t k;

                if (!buf)
                        die("malloc");
                if (n + 1 >= cap)
                        buf = realloc(buf, cap *= 2);
                if (!buf)
                        die("realloc");
                k = read(fd, buf + n, cap - n - 1);
                if (k < 0)
                        die("read");
                if (k == 0)
                        break;
                n += (size_t)k;
        }
        close(fd);
        buf[n] = 0;
        *ret_n = n;
        return buf;
}

/* Marks in seen[0..max) the rows "x-<n>" of text. */
static void mark_rows(const char *text, bool *seen, unsigned max) {
        for (const char *p = text; (p = strstr(p, "\"x-")); p++) {
                unsigned long n = strtoul(p + 3, NULL, 10);

                if (n < max)
                        seen[n] = true;
        }
}

/* One cycle of a Logger: read logs.json, add a row of id (message "<tag>-<n>"), write it back
 * (framed as JSON.stringify(rows, null, 2)). false when the text read is not such an array (a
 * read that caught an in-place write half-way): nothing written. hidden (may be NULL; tag 'x'):
 * hidden[j] is set for each row x-j, j < n, that a text written on lacks (a version of qgc's
 * without it was at the name). */
static bool logger_cycle(int dir_fd, bool in_place, const char *id, char tag, unsigned n,
                         bool *hidden) {
        size_t len, m;
        char *text = read_all(dir_fd, "logs.json", &len), *out, row[256];
        int fd;

        if (!text)
                die("read logs.json");
        snprintf(row, sizeof(row),
                 "{\n    \"sessionId\": \"%s\",\n    \"messageId\": %u,\n    \"message\": "
                 "\"%c-%u\"\n  }", id, n, tag, n);
        out = malloc(len + strlen(row) + 16);
        if (!out)
                die("malloc");
        if (strcmp(text, "[]") == 0)
                m = (size_t)sprintf(out, "[\n  %s\n]", row);
        else if (len >= 2 && strcmp(text + len - 2, "\n]") == 0)
                m = (size_t)sprintf(out, "%.*s,\n  %s\n]", (int)(len - 2), text, row);
        else {
                free(text);
                free(out);
                return false;
        }
        if (hidden) {
                bool *has = calloc(n + 1, sizeof(bool));

                if (!has)
                        die("calloc");
                mark_rows(text, has, n);
                for (unsigned j = 0; j < n; j++)
                        hidden[j] |= !has[j];
                free(has);
        }
        fd = openat(dir_fd, in_place ? "logs.json" : "logs.json.w.tmp",
                    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || write(fd, out, m) != (ssize_t)m || close(fd) < 0)
                die("write");
        if (!in_place && renameat(dir_fd, "logs.json.w.tmp", dir_fd, "logs.json") < 0)
                die("rename");
        free(text);
        free(out);
        return true;
}

static void *writer_main(void *userdata) {
        Writer *w = userdata;

        while (!atomic_load(&w->stop) && w->n < w->rows) {
                bool in_place = w->mode == IN_PLACE || (w->mode == ALTERNATE && w->n % 2 == 1);

                pthread_mutex_lock(&w->m);
                if (logger_cycle(w->dir_fd, in_place, X, 'x', w->n, w->hidden))
                        w->n++;
                pthread_mutex_unlock(&w->m);
                if (w->pace)
                        usleep(w->pace);
        }
        atomic_store(&w->done, true);
        return NULL;
}


int main(int argc, char *argv[]) {
        Writer w = { .mode = ALTERNATE, .m = PTHREAD_MUTEX_INITIALIZER };
        unsigned edits = 200, seconds = 60, ran = 0, eagain = 0, ebadmsg = 0, other = 0, back = 0;
        unsigned lost = 0, lost_in_place = 0, lost_hidden = 0, only_kept = 0;
        int pace = -1, rows = -1, opt;
        char dir[] = "/var/tmp/qgc-erase-race.XXXXXX";
        const char *tmpdir = getenv("TMPDIR");
        char *base = NULL, *text;
        bool *seen, *beside;
        double t0;
        size_t n;
        pthread_t th;
        DIR *d;
        struct dirent *de;

        while ((opt = getopt(argc, argv, "m:e:r:p:t:")) != -1) {
                switch (opt) {
                case 'm':
                        for (w.mode = 0; w.mode < 3 && strcmp(optarg, mode_names[w.mode]) != 0;
                             w.mode++)
                                ;
                        if (w.mode == 3) {
                                fprintf(stderr, "erase-race: unknown mode %s\n", optarg);
                                return 2;
                        }
                        break;
                case 'e': edits = (unsigned)atoi(optarg); break;
                case 'r': rows = atoi(optarg); break;
                case 'p': pace = atoi(optarg); break;
                case 't': seconds = (unsigned)atoi(optarg); break;
                default:
                        fprintf(stderr, "Usage: erase-race [-m alternate|inplace|rename] "
                                        "[-e EDITS] [-r ROWS] [-p PACE_US] [-t SECONDS]\n");
                        return 2;
                }
        }
        /* a rename writer copies the whole file per cycle: unpaced, it only grows the file */
        w.pace = pace >= 0 ? (unsigned)pace : w.mode == RENAME ? 200 : 0;
        w.rows = rows >= 0 ? (unsigned)rows : w.mode == RENAME ? 2000 : 6000;
        w.hidden = calloc(w.rows + 1, sizeof(bool));
        if (!w.hidden)
                die("calloc");
        if (tmpdir && asprintf(&base, "%s/qgc-erase-race.XXXXXX", tmpdir) < 0)
                die("asprintf");
        if (!mkdtemp(base ? base : dir))
                die("mkdtemp");
        w.dir_fd = open(base ? base : dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (w.dir_fd < 0)
                die("open dir");
        {
                int fd = openat(w.dir_fd, "logs.json", O_WRONLY | O_CREAT | O_EXCL, 0600);

                if (fd < 0 || write(fd, "[]", 2) != 2 || close(fd) < 0)
                        die("logs.json");
        }
        t0 = now_s();
        if (pthread_create(&th, NULL, writer_main, &w) != 0)
                die("pthread_create");
        for (; ran < edits && !atomic_load(&w.done) && now_s() - t0 < seconds; ran++) {
                const char *id = A;
                const EraseIds ids = { .ids = &id, .n = 1 };
                unsigned removed;
                int r;

                pthread_mutex_lock(&w.m);
                for (int k = 0; k < 2; k++)
                        while (!logger_cycle(w.dir_fd, false, A, 'a', w.na, NULL))
                                ; /* the writer is not writing: cannot happen */
                w.na += 2;
                pthread_mutex_unlock(&w.m);
                r = erase_edit(w.dir_fd, "logs.json", erase_splice_parse_logs, &ids, NULL, NULL,
                               &removed, NULL, 0, NULL);
                if (r == -EAGAIN)
                        eagain++;
                else if (r == -EBADMSG)
                        ebadmsg++;
                else if (r < 0)
                        other++;
                pthread_mutex_lock(&w.m);
                text = read_all(w.dir_fd, "logs.json", &n);
                if (r >= 0 && text && strstr(text, A))
                        back++;
                free(text);
                pthread_mutex_unlock(&w.m);
        }
        atomic_store(&w.stop, true);
        pthread_join(th, NULL);

        seen = calloc(w.n + 1, sizeof(bool));
        beside = calloc(w.n + 1, sizeof(bool));
        if (!seen || !beside)
                die("calloc");
        text = read_all(w.dir_fd, "logs.json", &n);
        if (!text)
                die("logs.json");
        mark_rows(text, seen, w.n);
        free(text);
        d = fdopendir(dup(w.dir_fd));
        if (!d)
                die("fdopendir");
        while ((de = readdir(d))) {
                if (strncmp(de->d_name, "logs.json.qgc-unmerged-", 23) != 0)
                        continue;
                text = read_all(w.dir_fd, de->d_name, &n);
                if (text)
                        mark_rows(text, beside, w.n);
                free(text);
        }
        for (unsigned j = 0; j < w.n; j++) {
                lost += !seen[j] && !beside[j];
                /* how the writer wrote row j (a cycle that read a torn text is retried as is) */
                lost_in_place += !seen[j] && !beside[j] &&
                                 (w.mode == IN_PLACE || (w.mode == ALTERNATE && j % 2 == 1));
                lost_hidden += !seen[j] && !beside[j] && w.hidden[j];
                only_kept += !seen[j] && beside[j];
        }
        printf("mode=%s written=%u lost=%u (in place %u, hidden %u) only-kept=%u edits=%u "
               "failed=%u (EAGAIN %u, EBADMSG %u, other %u) A-back=%u pace=%uus seconds=%.1f\n",
               mode_names[w.mode], w.n, lost, lost_in_place, lost_hidden, only_kept, ran,
               eagain + ebadmsg + other, eagain,
               ebadmsg, other, back, w.pace, now_s() - t0);
        /* the scratch directory goes */
        rewinddir(d);
        while ((de = readdir(d)))
                if (de->d_name[0] != '.' || (strcmp(de->d_name, ".") != 0 &&
                                             strcmp(de->d_name, "..") != 0))
                        (void)unlinkat(w.dir_fd, de->d_name, 0);
        closedir(d);
        if (rmdir(base ? base : dir) < 0)
                perror("rmdir");
        free(seen);
        free(w.hidden);
        free(beside);
        free(base);
        return lost > 0;
}
