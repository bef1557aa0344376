/* usage-append.h: qgc's appends to G/usage_record.jsonl (usage-append.c). */
#pragma once

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define USAGE_FILE "usage_record.jsonl"
/* The file opened for reading: never through a symlink, never blocking (a FIFO). */
#define USAGE_READ_FLAGS (O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)

/* An append of len bytes of complete, non-empty lines (a batch of salvaged records, the
 * executor's group commit) in two halves, so that its fsync can run on another thread while the
 * caller goes on with work that does not depend on the lines (qwen-commit.c).
 * usage_append_begin() writes them with one write() on an O_APPEND fd (creating the file 0600 if
 * needed; when the file does not end in '\n', a writer died mid-append, the write starts with
 * one): 0, every byte written; -errno, nothing of ours is left (a short write, a full disk, is
 * undone in place and gives -ENOSPC). The caller fsyncs fd and passes the result to
 * usage_append_end(), which reads every byte back and closes: 0 only when the lines are durably
 * in the file, each starting a line. Nothing that needs the lines may happen before
 * usage_append_end() returned 0; lines must stay valid until then. */
typedef struct UsageAppend {
        int fd, rfd, global_fd;
        dev_t dev;
        ino_t ino;    /* the file appended to */
        bool created; /* the file was created: its directory is fsynced too */
        off_t pos;    /* the end of our bytes */
        const char *line;
        size_t len;
} UsageAppend;
int usage_append_begin(int global_fd, const char *lines, size_t len, UsageAppend *ret);
int usage_append_end(UsageAppend *a, int fsync_r);
