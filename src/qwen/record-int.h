/* record-int.h: what the transcript readers (record.c, recordhead.c, recordtail.c) share, and
 * nobody else uses. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record.h"

#define RECORD_HEAD_QUICK 4096 /* first look: a first record rarely needs more */

/* pread() at off, retried on EINTR: bytes read, or -errno. */
ssize_t record_pread(int fd, void *buf, size_t n, uint64_t off);
/* Read up to n bytes at off (fewer only at the end of the file) into buf; *ret the count.
 * 0 or -errno. */
int record_pread_full(int fd, char *buf, size_t n, uint64_t off, size_t *ret);
/* The first record from the file's first k bytes already in buf (k <= RECORD_HEAD_QUICK is
 * enough for most), else record_read_head()'s full read. */
int record_read_head_from(int fd, char *buf, size_t k, HeadInfo *ret, const char **ret_why);
/* A string member's value (a span of json_capture()) as JSON.parse would give it: 1 with
 * *ret set, 0 when not a string, or -ENOMEM. */
int record_span_string(const JsonSpan *sp, char **ret);
/* record_timestamp() of a "timestamp" member span: 0 with *ret (0 when unparseable) or -ENOMEM. */
int record_span_timestamp(const JsonSpan *sp, msec_t *ret);
