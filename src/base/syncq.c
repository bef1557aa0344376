/* syncq.c: the fsync queue (syncq.h): a list of (fd, result) under one mutex, threads started on
 * demand that take the oldest entry, and a count of what is not done yet; a result reads
 * SYNCQ_PENDING until its fsync is done. */
#include "autoconf.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "syncq.h"

typedef struct SyncQEntry {
        int fd;
        int *ret;
} SyncQEntry;

struct SyncQ {
        pthread_mutex_t lock;
        pthread_cond_t work; /* threads: an entry or stop */
        pthread_cond_t done; /* syncq_wait(): nothing left */
        SyncQEntry *q;
        size_t head, n, cap; /* entries q[head..n) wait */
        size_t busy;         /* taken, not finished */
        size_t n_threads, idle;
        bool waiting_one; /* syncq_wait_one() waits: wake it on every fsync done */
        bool stop;
        pthread_t threads[SYNCQ_THREADS];
};

int syncq_new(SyncQ **ret) {
        SyncQ *q = calloc(1, sizeof(SyncQ));

        if (!q)
                return -ENOMEM;
        pthread_mutex_init(&q->lock, NULL);
        pthread_cond_init(&q->work, NULL);
        pthread_cond_init(&q->done, NULL);
        *ret = q;
        return 0;
}

static void *syncq_thread(void *userdata) {
        SyncQ *q = userdata;

        pthread_mutex_lock(&q->lock);
        for (;;) {
                SyncQEntry e;
                int r;

                while (!q->stop && q->head == q->n) {
                        q->idle++;
                        pthread_cond_wait(&q->work, &q->lock);
                        q->idle--;
                }
                if (q->head == q->n)
                        break; /* stop, and nothing left */
                e = q->q[q->head++];
                q->busy++;
                pthread_mutex_unlock(&q->lock);
                r = fsync(e.fd) < 0 ? -errno : 0;
                pthread_mutex_lock(&q->lock);
                *e.ret = r;
                q->busy--;
                if ((q->busy == 0 && q->head == q->n) || q->waiting_one)
                        pthread_cond_broadcast(&q->done);
        }
        pthread_mutex_unlock(&q->lock);
        return NULL;
}

void syncq_push(SyncQ *q, int fd, int *ret) {
        bool here = false;

        pthread_mutex_lock(&q->lock);
        *ret = SYNCQ_PENDING;
        if (q->head == q->n)
                q->head = q->n = 0;
        if (q->n == q->cap) {
                size_t cap = q->cap ? 2 * q->cap : 64;
                SyncQEntry *nq = realloc(q->q, cap * sizeof(SyncQEntry));

                if (nq) {
                        q->q = nq;
                        q->cap = cap;
                }
        }
        if (q->n < q->cap) {
                q->q[q->n++] = (SyncQEntry){ .fd = fd, .ret = ret };
                if (q->idle == 0 && q->n_threads < SYNCQ_THREADS &&
                    pthread_create(&q->threads[q->n_threads], NULL, syncq_thread, q) == 0)
                        q->n_threads++;
                if (q->n_threads == 0) {
                        q->n--; /* no thread at all: the caller's */
                        here = true;
                } else
                        pthread_cond_signal(&q->work);
        } else
                here = true;
        pthread_mutex_unlock(&q->lock);
        if (here)
                *ret = fsync(fd) < 0 ? -errno : 0;
}

void syncq_wait_one(SyncQ *q, const int *ret) {
        pthread_mutex_lock(&q->lock);
        q->waiting_one = true;
        while (*ret == SYNCQ_PENDING)
                pthread_cond_wait(&q->done, &q->lock);
        q->waiting_one = false;
        pthread_mutex_unlock(&q->lock);
}

void syncq_wait(SyncQ *q) {
        pthread_mutex_lock(&q->lock);
        while (q->busy > 0 || q->head < q->n)
                pthread_cond_wait(&q->done, &q->lock);
        pthread_mutex_unlock(&q->lock);
}

SyncQ *syncq_free(SyncQ *q) {
        if (!q)
                return NULL;
        syncq_wait(q);
        pthread_mutex_lock(&q->lock);
        q->stop = true;
        pthread_cond_broadcast(&q->work);
        pthread_mutex_unlock(&q->lock);
        for (size_t i = 0; i < q->n_threads; i++)
                (void)pthread_join(q->threads[i], NULL);
        free(q->q);
        pthread_cond_destroy(&q->done);
        pthread_cond_destroy(&q->work);
        pthread_mutex_destroy(&q->lock);
        free(q);
        return NULL;
}
