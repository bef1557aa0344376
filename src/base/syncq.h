/* syncq.h: fsync() calls issued from a few threads that live as long as the queue, so that a caller
 * can start the fsync of a directory as soon as it is done with it and go on with the next one,
 * then wait for all of them. */
#pragma once

#include <stddef.h>

#define SYNCQ_THREADS 8U

typedef struct SyncQ SyncQ;

int syncq_new(SyncQ **ret);
/* fsync(fd) on one of the queue's threads (started as needed, up to SYNCQ_THREADS; none can be
 * started: here, now). *ret is 0 or -errno once syncq_wait() returns; fd stays open until then. */
void syncq_push(SyncQ *q, int fd, int *ret);
/* The fsync whose result goes to ret is done (*ret is 0 or -errno): the others may still run.
 * Until then *ret reads SYNCQ_PENDING. */
#define SYNCQ_PENDING 1
void syncq_wait_one(SyncQ *q, const int *ret);
/* Every fsync pushed so far is done. */
void syncq_wait(SyncQ *q);
/* Wait, stop and join the threads. */
SyncQ *syncq_free(SyncQ *q);
