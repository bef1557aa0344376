/* json-read.c: the JSON reader's three uses, timed on the lines of a JSONL file (a Qwen
 * transcript: gen-tree --big, or any session file): json_members() of a head line's keys
 * (record.c), json_capture() of the usage salvage's nested keys (usage.c), both validating,
 * and json_parse() of the whole line (building json-c objects, then freed). Per use: the
 * median CPU seconds of --reps passes over all lines and MB/s. Link it against two builds'
 * libqgc.a to compare them (json.c is all it times).
 *
 * Build: cc -O2 $(for d in SRC/[a-z]*; do printf -- '-I%s ' $d; done) -I BUILD -o json-read \
 *            json-read.c BUILD/libqgc.a -ljson-c -lconfig -lcrypto -lzstd
 * Usage: json-read FILE [REPS] (default 5) */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "macro.h"

typedef struct Line {
        const char *s;
        size_t n;
} Line;

static double cpu_now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

/* One pass of use u over the lines; the number of lines it accepted. */
static size_t pass(int u, const Line *l, size_t n) {
        static const char *const head_keys[] = { "sessionId", "cwd", "timestamp" };
        static const char *const top_keys[] = { "type", "subtype", "systemPayload" };
        static const char *const payload_keys[] = { "uiEvent" };
        static const char *const ev_keys[] = { "event.name", "model", "duration_ms",
                                               "input_token_count", "output_token_count",
                                               "total_token_count", "metadata" };
        static const char *const meta_keys[] = { "model_added_lines", "model_removed_lines" };
        JsonSpan head[3], top[3], payload[1], ev[7], meta[2];
        const JsonCapture meta_cap = { meta_keys, 2, meta, NULL };
        const JsonCapture *const ev_children[7] = { [6] = &meta_cap };
        const JsonCapture ev_cap = { ev_keys, 7, ev, ev_children };
        const JsonCapture *const payload_children[] = { &ev_cap };
        const JsonCapture payload_cap = { payload_keys, 1, payload, payload_children };
        const JsonCapture *const top_children[] = { NULL, NULL, &payload_cap };
        const JsonCapture top_cap = { top_keys, 3, top, top_children };
        size_t ok = 0;

        for (size_t i = 0; i < n; i++) {
                json_object *o = NULL;

                if (u == 0)
                        ok += json_members(l[i].s, l[i].n, true, head_keys, 3, head) == 0;
                else if (u == 1)
                        ok += json_capture(l[i].s, l[i].n, true, &top_cap) == 0;
                else if (json_parse(l[i].s, l[i].n, &o) == 0) {
                        ok++;
                        json_object_put(o);
                }
        }
        return ok;
}

int main(int argc, char *argv[]) {
        static const char *const names[] = { "members", "capture", "parse" };
        int reps = argc > 2 ? atoi(argv[2]) : 5;
        size_t size = 0, cap = 0, n = 0, got;
        char *buf = NULL;
        Line *lines = NULL;
        FILE *f;

        if (argc < 2 || reps < 1 || !(f = fopen(argv[1], "rb"))) {
                fprintf(stderr, "Usage: json-read FILE [REPS]\n");
                return 2;
        }
        do {
                if (size + 65536 > cap && !(buf = realloc(buf, cap = (cap + 65536) * 2)))
                        return 1;
                got = fread(buf + size, 1, cap - size, f);
                size += got;
        } while (got > 0);
        fclose(f);
        for (size_t at = 0; at < size;) {
                char *nl = memchr(buf + at, '\n', size - at);
                size_t end = nl ? (size_t)(nl - buf) : size;

                if (!(n % 1024) && !(lines = realloc(lines, (n + 1024) * sizeof(Line))))
                        return 1;
                lines[n++] = (Line){ buf + at, end - at };
                at = end + 1;
        }
        printf("%zu lines, %.1f MB\n", n, (double)size / 1e6);
        for (int u = 0; u < 3; u++) {
                double t[reps];
                size_t ok = 0;

                for (int r = 0; r < reps; r++) {
                        double t0 = cpu_now();
                        ok = pass(u, lines, n);
                        t[r] = cpu_now() - t0;
                }
                qsort(t, (size_t)reps, sizeof(double), cmp_double);
                printf("%-8s %8.4f s cpu (median of %d)  %7.1f MB/s  %zu lines accepted\n", names[u],
                       t[reps / 2], reps, (double)size / 1e6 / t[reps / 2], ok);
        }
        free(lines);
        free(buf);
        return 0;
}
