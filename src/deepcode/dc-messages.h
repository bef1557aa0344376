/* dc-messages.h: one session's <id>.jsonl read linearly, bounded: the proof that every message
 * is the session's (sessionId == the file's name) and the checkpoints its messages name. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "fs.h"

/* Deep Code reads the whole file (readFileSync) and one JSON.parse per line; qgc holds one
 * line at a time, shorter than this (a tool result of a large file is one line). A longer line
 * ends the read: not complete, not proven. */
#define DC_LINE_MAX (16u << 20)
#define DC_HASH_LEN 40

typedef struct DcMessages {
        FileId file;        /* the .jsonl as read (fstat of the open fd) */
        bool tail_incomplete; /* the last line has no '\n' (possibly being written) */
        bool complete;      /* read to its end: the checkpoints are every one its messages name */
        bool proven;        /* complete, and every non-blank line is a JSON object whose
                             * sessionId is the id */
        char *why;          /* !proven: the first failure, with its line number */
        size_t n_messages;
        bool has_prompt;    /* a message of role "user" was read */
        char *prompt;       /* the first one's meta.userPrompt.text (else its content): what
                             * createSession() made the summary of */
        /* the distinct checkpointHash values (40 hex digits, lower case) of its messages, in
         * the order first met: /undo restores them, so each is a root any pruning must keep */
        char (*checkpoints)[DC_HASH_LEN + 1];
        size_t n_checkpoints;
} DcMessages;

/* Read (dfd, "<id>.jsonl") into *ret. 0 (ret->proven says whether the proof holds; a file
 * that cannot be read to its end is neither complete nor proven), -ENOENT when it does not
 * exist, -ENOMEM. A line that is not JSON is skipped as Deep Code skips it, but fails the
 * proof. */
int dc_messages_read(int dfd, const char *id, DcMessages *ret);
void dc_messages_done(DcMessages *m);
