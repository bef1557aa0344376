/* plan-json.c: why the JSON plan has its own writer (src/plan/plan-json.c) beside json-c's. For
 * N synthetic sessions (one tree, 50 a project) it writes the plan with plan_json_render(),
 * which streams, then the same document with json-c's writer: json_object_to_json_string_ext()
 * with the plan's flags, of the tree json-c must hold first (made here by json_tokener_parse()
 * of qgc's text; only the writer is timed). Each runs in its own child process; the runner
 * prints wall seconds and peak RSS of both, json-c's over qgc's (the baseline of this run), and
 * whether json-c wrote the same bytes (after text_json_escape_controls(), as qgc does).
 *
 * Build: cc -O2 $(for d in SRC/[a-z]*; do printf -- '-I%s ' $d; done) -I BUILD -o plan-json \
 *            plan-json.c BUILD/libqgc.a -ljson-c -lconfig -lcrypto -lzstd
 * Usage: plan-json [N] (default 100000) */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plan.h"
#include "text.h"

#define FLAGS (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)

static double now_s(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long peak_kib(void) {
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        return ru.ru_maxrss;
}

static Plan *make_plan(size_t n) {
        static Tree tree = { .global_dir = "/home/u/.qwen", .runtime_dir = "/home/u/.qwen",
                             .user = "u" };
        Inventory *inv = calloc(1, sizeof(Inventory));
        Verdicts *v = calloc(1, sizeof(Verdicts));
        msec_t now = 1796083200000;
        Plan *p = NULL;

        inv->trees = &tree;
        inv->n_trees = 1;
        inv->sessions = calloc(n, sizeof(Session));
        inv->n_sessions = n;
        v->sessions = calloc(n, sizeof(Verdict));
        v->orphans = calloc(1, sizeof(Verdict));
        v->n_sessions = n;
        for (size_t i = 0; i < n; i++) {
                Session *s = &inv->sessions[i];
                char b[64];

                snprintf(s->id, sizeof s->id, "%08x-0000-4000-8000-%012x", (unsigned)i, (unsigned)i);
                snprintf(b, sizeof b, "/home/u/project-%zu", i / 50);
                s->cwd = strdup(b);
                s->project_dir = strdup(b);
                for (char *c = s->project_dir; *c; c++)
                        if (*c == '/')
                                *c = '-';
                s->owner = OWNER_OK;
                s->state = SESSION_ACTIVE;
                s->last_activity = s->last_record = s->mtime = now - (msec_t)i * 60000;
                s->first_record = s->last_activity - 3600000;
                s->bytes = s->bytes_alloc = s->transcript_bytes = 40000 + i % 9000;
                v->sessions[i] = (Verdict){ .verb = VERB_KEEP, .rule = "none" };
        }
        if (plan_build(inv, &v, now, &p) < 0)
                exit(1);
        return p;
}

typedef struct Result {
        double s;
        long kib;
} Result;

/* Run one writer in a child; its seconds and peak RSS. */
static Result child(int which, const Plan *p, const char *ours, const char *theirs) {
        Result res = {};
        int fds[2];
        pid_t pid;

        if (pipe(fds) < 0 || (pid = fork()) < 0)
                exit(1);
        if (pid > 0) {
                close(fds[1]);
                if (read(fds[0], &res, sizeof res) != sizeof res)
                        exit(1);
                waitpid(pid, NULL, 0);
                close(fds[0]);
                return res;
        }
        if (which == 0) {
                FILE *f = fopen(ours, "w");
                double t = now_s();

                plan_json_render(p, f);
                fclose(f);
                res = (Result){ now_s() - t, peak_kib() };
        } else {
                json_object *o = json_object_from_file(ours);
                double t = now_s();
                const char *s = json_object_to_json_string_ext(o, FLAGS);
                char *e = text_json_escape_controls(s);
                FILE *f = fopen(theirs, "w");

                fprintf(f, "%s\n", e);
                fclose(f);
                res = (Result){ now_s() - t, peak_kib() };
        }
        if (write(fds[1], &res, sizeof res) != sizeof res)
                _exit(1);
        _exit(0);
}

int main(int argc, char *argv[]) {
        size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000;
        char ours[] = "/tmp/plan-json-qgc.XXXXXX", theirs[] = "/tmp/plan-json-jsonc.XXXXXX";
        Plan *p = make_plan(n);
        int a = mkstemp(ours), b = mkstemp(theirs);
        char cmd[256];

        close(a);
        close(b);
        printf("%zu sessions\n", n);
        Result q = child(0, p, ours, theirs), j = child(1, p, ours, theirs);

        printf("qgc's writer     %7.3f s %8ld KiB peak\n", q.s, q.kib);
        printf("json-c's writer  %7.3f s %8ld KiB peak\n", j.s, j.kib);
        printf("json-c / qgc     %7.1f x %8.1f x\n", j.s / q.s, (double)j.kib / (double)q.kib);
        fflush(stdout);
        snprintf(cmd, sizeof cmd, "cmp -s %s %s && echo 'same bytes' || echo 'DIFFERENT bytes'",
                 ours, theirs);
        if (system(cmd) != 0)
                return 1;
        unlink(ours);
        unlink(theirs);
        return 0;
}
