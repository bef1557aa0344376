/* usage-ahead.c: the salvage thread (usage-ahead.h): usage lines built ahead of the executor. One
 * thread, a list of jobs in the executor's order, one mutex and two condition variables; a job
 * is PENDING, then RUNNING and DONE on the thread, or TAKEN by the executor before the thread got
 * to it (the thread then skips it). The thread stays at most USAGE_AHEAD_MAX jobs ahead of the
 * executor's last take, so that the lines waiting stay about one batch. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"
#include "log.h"
#include "macro.h"
#include "usage.h"
#include "usage-ahead.h"
#include "util.h"

#define USAGE_AHEAD_MIN_JOBS 16 /* fewer: not worth a thread */

typedef enum UsageAheadState {
        UA_PENDING,
        UA_RUNNING,
        UA_DONE,  /* built: line (may be NULL), or failed (ok false) */
        UA_TAKEN, /* the executor's: the thread skips it, or its line was handed over */
} UsageAheadState;

typedef struct UsageAheadJob {
        const Session *s;
        char *line;
        UsageAheadState state;
        bool ok;
} UsageAheadJob;

struct UsageAhead {
        const Inventory *inv;
        const int *runtime_fds;
        UsageAheadJob *jobs;
        uint32_t *job_of; /* per session of inv: its job, or UINT32_MAX (usage_ahead_would_wait()) */
        size_t n, cap;
        size_t next;   /* the thread's next job */
        size_t cursor; /* the executor's: every job before it is taken or passed */
        size_t built, taken;
        bool started, stop;
        bool parked; /* the thread waits for the executor, or is done */
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t wake; /* the thread: the executor moved on, or stop */
        pthread_cond_t done; /* the executor: a RUNNING job is DONE */
};

int usage_ahead_new(const Inventory *inv, const int *runtime_fds, UsageAhead **ret) {
        UsageAhead *ua = calloc(1, sizeof(UsageAhead));

        if (!ua)
                return -ENOMEM;
        ua->inv = inv;
        ua->runtime_fds = runtime_fds;
        pthread_mutex_init(&ua->lock, NULL);
        pthread_cond_init(&ua->wake, NULL);
        pthread_cond_init(&ua->done, NULL);
        *ret = ua;
        return 0;
}

int usage_ahead_add(UsageAhead *ua, const Session *s) {
        if (ua->started)
                return -EBUSY;
        if (ua->n == ua->cap) {
                size_t cap = ua->cap ? 2 * ua->cap : 64;
                UsageAheadJob *j = realloc(ua->jobs, cap * sizeof(UsageAheadJob));

                if (!j)
                        return -ENOMEM;
                ua->jobs = j;
                ua->cap = cap;
        }
        ua->jobs[ua->n++] = (UsageAheadJob){ .s = s };
        return 0;
}

/* The line of one transcript, from a file with the scan's identity before and after the read:
 * what qwen_steps_salvage() builds (usage_build_record() of the same bytes). */
static bool usage_ahead_build(const UsageAhead *ua, const Session *s, char **ret_line) {
        const FileId *fid = s->state == SESSION_ARCHIVED ? &s->archived : &s->active;
        _cleanup_free_ char *rel = NULL, *line = NULL;
        _cleanup_close_ int fd = -EBADF;

        if (s->tree >= ua->inv->n_trees || ua->runtime_fds[s->tree] < 0)
                return false;
        rel = util_strprintf("projects/%s/chats/%s%s.jsonl", s->project_dir,
                             s->state == SESSION_ARCHIVED ? "archive/" : "", s->id);
        if (!rel)
                return false;
        fd = fs_openat(ua->runtime_fds[s->tree], rel, O_RDONLY | O_NONBLOCK, 0);
        if (fd < 0 || fs_check_identity_fd(fd, fid) <= 0)
                return false;
        if (usage_build_record_sized(fd, fid->size, &line) < 0 ||
            fs_check_identity_fd(fd, fid) <= 0)
                return false;
        *ret_line = TAKE_PTR(line);
        return true;
}

static void *usage_ahead_thread(void *userdata) {
        UsageAhead *ua = userdata;

        pthread_mutex_lock(&ua->lock);
        for (;;) {
                UsageAheadJob *j;
                char *line = NULL;
                bool ok;

                while (!ua->stop && ua->next < ua->n && ua->next >= ua->cursor + USAGE_AHEAD_MAX) {
                        ua->parked = true;
                        pthread_cond_broadcast(&ua->done);
                        pthread_cond_wait(&ua->wake, &ua->lock);
                        ua->parked = false;
                }
                if (ua->stop || ua->next >= ua->n)
                        break;
                j = &ua->jobs[ua->next++];
                if (j->state != UA_PENDING)
                        continue;
                j->state = UA_RUNNING;
                pthread_mutex_unlock(&ua->lock);
                ok = usage_ahead_build(ua, j->s, &line);
                pthread_mutex_lock(&ua->lock);
                j->line = line;
                j->ok = ok;
                j->state = UA_DONE;
                ua->built += ok;
                pthread_cond_broadcast(&ua->done);
        }
        ua->parked = true;
        pthread_cond_broadcast(&ua->done);
        pthread_mutex_unlock(&ua->lock);
        return NULL;
}

int usage_ahead_start(UsageAhead *ua) {
        cpu_set_t set;
        int r;

        if (ua->started)
                return 0;
        if (ua->n < USAGE_AHEAD_MIN_JOBS || ua->n >= UINT32_MAX) {
                log_debug("salvage thread: off (%zu usage lines to build, it starts from %u)",
                          ua->n, USAGE_AHEAD_MIN_JOBS);
                return 0;
        }
        if (sched_getaffinity(0, sizeof(set), &set) < 0 || CPU_COUNT(&set) < 2) {
                log_debug("salvage thread: off (one CPU)");
                return 0;
        }
        ua->job_of = malloc(MAX(ua->inv->n_sessions, (size_t)1) * sizeof(uint32_t));
        if (!ua->job_of)
                return 0;
        for (size_t k = 0; k < ua->inv->n_sessions; k++)
                ua->job_of[k] = UINT32_MAX;
        for (size_t i = 0; i < ua->n; i++) {
                size_t k = (size_t)(ua->jobs[i].s - ua->inv->sessions);

                if (k < ua->inv->n_sessions)
                        ua->job_of[k] = (uint32_t)i;
        }
        r = pthread_create(&ua->thread, NULL, usage_ahead_thread, ua);
        if (r != 0)
                return 0; /* the executor builds every line itself */
        ua->started = true;
        return 1;
}

int usage_ahead_take(UsageAhead *ua, const Session *s, char **ret_line) {
        size_t i;
        int r = 0;

        if (!ua || !ua->started)
                return 0;
        pthread_mutex_lock(&ua->lock);
        /* the executor's order: s is at the cursor or after it (jobs it passed were refused or
         * had their line elsewhere) */
        for (i = ua->cursor; i < ua->n && ua->jobs[i].s != s; i++)
                ;
        if (i < ua->n) {
                UsageAheadJob *j = &ua->jobs[i];

                /* jobs passed: their lines go now, and the thread may run further ahead */
                for (size_t k = ua->cursor; k < i; k++) {
                        free(ua->jobs[k].line);
                        ua->jobs[k].line = NULL;
                        if (ua->jobs[k].state == UA_PENDING)
                                ua->jobs[k].state = UA_TAKEN;
                }
                ua->cursor = i + 1;
                while (j->state == UA_RUNNING)
                        pthread_cond_wait(&ua->done, &ua->lock);
                if (j->state == UA_DONE && j->ok) {
                        *ret_line = TAKE_PTR(j->line);
                        ua->taken++;
                        r = 1;
                }
                j->state = UA_TAKEN;
                /* the thread may go on: it is not parked until it waits again */
                if (ua->next < ua->n && ua->next < ua->cursor + USAGE_AHEAD_MAX)
                        ua->parked = false;
                pthread_cond_signal(&ua->wake);
        }
        pthread_mutex_unlock(&ua->lock);
        return r;
}

bool usage_ahead_would_wait(UsageAhead *ua, const Session *s) {
        size_t k;
        bool r;

        if (!ua || !ua->started)
                return false;
        k = (size_t)(s - ua->inv->sessions);
        if (s < ua->inv->sessions || k >= ua->inv->n_sessions || ua->job_of[k] == UINT32_MAX)
                return false;
        pthread_mutex_lock(&ua->lock);
        r = ua->job_of[k] >= ua->cursor && (ua->jobs[ua->job_of[k]].state == UA_PENDING ||
                                            ua->jobs[ua->job_of[k]].state == UA_RUNNING);
        pthread_mutex_unlock(&ua->lock);
        return r;
}

void usage_ahead_counts(const UsageAhead *ua, size_t *ret_built, size_t *ret_taken) {
        *ret_built = ua ? ua->built : 0;
        *ret_taken = ua ? ua->taken : 0;
}

UsageAhead *usage_ahead_free(UsageAhead *ua) {
        if (!ua)
                return NULL;
        if (ua->started) {
                pthread_mutex_lock(&ua->lock);
                ua->stop = true;
                pthread_cond_signal(&ua->wake);
                pthread_mutex_unlock(&ua->lock);
                (void)pthread_join(ua->thread, NULL);
        }
        for (size_t i = 0; i < ua->n; i++)
                free(ua->jobs[i].line);
        free(ua->jobs);
        free(ua->job_of);
        pthread_cond_destroy(&ua->done);
        pthread_cond_destroy(&ua->wake);
        pthread_mutex_destroy(&ua->lock);
        free(ua);
        return NULL;
}
