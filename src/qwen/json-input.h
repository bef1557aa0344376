/* json-input.h: the one table of the JSON files of a Qwen tree that qgc reads for evidence, the
 * dialect each is read in (that of the Qwen code that reads it), and the reader of such a file
 * through fs.h's safe open (json-input.c). */
#pragma once

#include <stddef.h>

#include "json.h"

typedef enum JsonDialect {
        /* ECMAScript JSON.parse of the file read as UTF-8 (Node's fs.readFile(f, 'utf8')):
         * json_parse(). No NaN, comments, single quotes, raw controls, BOM or bytes after
         * the value (json-c's tokener, which qgc used before, accepts all of them). Every input
         * of the table is read so: Qwen reads each with JSON.parse. The one other dialect qgc
         * reads is the settings files' (comments stripped, then JSON.parse): settings.c. */
        JSON_DIALECT_PARSE,
        _JSON_DIALECT_MAX,
} JsonDialect;

/* Every JSON file of a Qwen tree that qgc reads for evidence (the transcripts and usage file are
 * JSONL, read by record.c and usage.c with JSON_DIALECT_PARSE's grammar). */
typedef enum JsonInput {
        JSON_INPUT_REGISTRY,     /* G/sessions/<pid>[-<8hex>].json */
        JSON_INPUT_CLAIM,        /* chats/<id>[.<pid>].runtime.json */
        JSON_INPUT_WRITER_LOCK,  /* R/tmp/session-writer-locks/<id>.lock */
        JSON_INPUT_TASKS,        /* R/tmp/<hash>/scheduled_tasks.json */
        JSON_INPUT_TASKS_LOCK,   /* R/tmp/<hash>/scheduled_tasks.lock */
        JSON_INPUT_ORGANIZATION, /* projects/<p>/session-organization.v1.json */
        JSON_INPUT_LOGS,         /* R/tmp/<hash>/logs.json */
        JSON_INPUT_WORKTREE,     /* chats/<id>.worktree.json */
        _JSON_INPUT_MAX,
} JsonInput;

typedef struct JsonInputInfo {
        const char *file;    /* the file, for messages and docs */
        JsonDialect dialect; /* how Qwen reads it */
        size_t max;          /* larger files are not read (-EFBIG) */
        const char *qwen;    /* Qwen's reader, and what it does on a parse error */
        const char *qgc;     /* what qgc does when the file does not parse */
} JsonInputInfo;

/* The table row of an input (never NULL for a valid input). */
const JsonInputInfo *json_input_info(JsonInput input);

/* json_read_file() with the dialect and size limit of input's table row. */
int json_input_read(int dfd, const char *name, JsonInput input, struct json_object **ret);
