/* cold-int.h: what cold.c (compressing, the contexts, the frame format) and cold-restore.c
 * (restoring) share; nobody else includes it. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "cold.h"

/* Call step (when not NULL) after a mutating step. */
void cold_step(ColdStepFn step, void *userdata, const char *what);
/* The calling thread's context, kept for its next call; level 0: any (decompression). */
int cold_default(int level, ColdCtx **ret);
/* Decompress src_fd (src_len bytes, UINT64_MAX: to its end) into out_fd (-1: nowhere), the
 * SHA-256 and size of the content into sha and *ret_size; with expect, compare instead. Never
 * more than limit bytes of content (the size the trailer records): -EFBIG once it would pass. */
int cold_decompress_fd(ColdCtx *c, int src_fd, uint64_t src_len, uint64_t limit, int out_fd,
                       const char *expect, size_t expect_len, char sha[65], uint64_t *ret_size);
/* The SHA-256 and size recorded in the trailing frame of fd. */
int cold_read_trailer(int fd, uint64_t *ret_size, char sha[65]);
/* SHA-256 and size of what fd reads from its current offset to its end. */
int cold_hash_fd(int fd, char sha[65], uint64_t *ret_size);
/* ".name.qgc-tmp" */
char *cold_tmp_name(const char *name);
