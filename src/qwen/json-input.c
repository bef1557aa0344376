/* json-input.c: json_read_file() and the one table of JSON inputs (json-input.h): which dialect each
 * file of a Qwen tree is read in, chosen from the Qwen code that reads it. The rule: where Qwen
 * reads a file with JSON.parse, qgc reads it with the same grammar, so that qgc sees exactly
 * the evidence Qwen sees; what a file that does not parse means is decided by its reader, always
 * towards keeping when Qwen's own reading would be uncertain. */
#include "autoconf.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <unistd.h>

#include "fs.h"
#include "json.h"
#include "json-input.h"
#include "macro.h"

#define MIB (1024 * 1024)

static const JsonInputInfo json_inputs[_JSON_INPUT_MAX] = {
        [JSON_INPUT_REGISTRY] = {
                .file = "G/sessions/<pid>.json",
                .dialect = JSON_DIALECT_PARSE,
                .max = MIB,
                .qwen = "JSON.parse; a record that does not parse is skipped (never swept)",
                .qgc = "the record is ignored (a live process rewrites its record by rename)",
        },
        [JSON_INPUT_CLAIM] = {
                .file = "chats/<id>.runtime.json",
                .dialect = JSON_DIALECT_PARSE,
                .max = MIB,
                .qwen = "runtimeStatus.ts readRuntimeStatus(): JSON.parse, null on error; "
                        "readRuntimeStatusClaims() then reports 'incomplete' and "
                        "hasActiveRuntimeStatusClaimSync() keeps the project",
                .qgc = "malformed claim: liveness unknown, the session is kept",
        },
        [JSON_INPUT_WRITER_LOCK] = {
                .file = "R/tmp/session-writer-locks/<id>.lock",
                .dialect = JSON_DIALECT_PARSE,
                .max = MIB,
                .qwen = "session-writer-lease.ts: JSON.parse; 'malformed' after retries, never "
                        "reclaimed",
                .qgc = "the lock counts as held: the session is kept",
        },
        [JSON_INPUT_TASKS] = {
                .file = "R/tmp/<hash>/scheduled_tasks.json",
                .dialect = JSON_DIALECT_PARSE,
                .max = 16 * MIB,
                .qwen = "cronTasksFile.ts readCronTasks(): JSON.parse; throws on a parse error or "
                        "a non-array, refusing to treat the file as an empty schedule",
                .qgc = "every session of the hash is bound to a task: kept",
        },
        [JSON_INPUT_TASKS_LOCK] = {
                .file = "R/tmp/<hash>/scheduled_tasks.lock",
                .dialect = JSON_DIALECT_PARSE,
                .max = 64 * 1024,
                .qwen = "cronTasksLock.ts: JSON.parse of the holder record",
                .qgc = "the lock counts as held: the directory is no stale-tmp candidate",
        },
        [JSON_INPUT_ORGANIZATION] = {
                .file = "projects/<p>/session-organization.v1.json",
                .dialect = JSON_DIALECT_PARSE,
                .max = 16 * MIB,
                .qwen = "session-organization-service.ts readStore(): JSON.parse; any error "
                        "reads as an empty store (the next write replaces the file)",
                .qgc = "pins unknown: every session of the project counts as pinned "
                       "(keep-pinned)",
        },
        [JSON_INPUT_LOGS] = {
                .file = "R/tmp/<hash>/logs.json",
                .dialect = JSON_DIALECT_PARSE,
                .max = 16 * MIB,
                .qwen = "logger.ts _readLogFile(): JSON.parse; a SyntaxError backs the file up "
                        "and starts empty",
                .qgc = "the scan reads it with the delete's own parser (erase.h), up to the "
                       "64 MiB the delete edits, not this row's max: over it, or not parsed, "
                       "the deletes of its sessions are planned as skips (limit)",
        },
        [JSON_INPUT_WORKTREE] = {
                .file = "chats/<id>.worktree.json",
                .dialect = JSON_DIALECT_PARSE,
                .max = MIB,
                .qwen = "worktreeSessionService.ts readWorktreeSession(): JSON.parse; invalid "
                        "JSON reads as no worktree session (older versions threw)",
                .qgc = "a worktree may be in use: the session counts as having a live worktree "
                       "(keep-worktree), and the stale-project check keeps the project",
        },
};

const JsonInputInfo *json_input_info(JsonInput input) {
        assert(input >= 0 && input < _JSON_INPUT_MAX);
        return &json_inputs[input];
}

/* Read (dfd, name) with fs_open_noatime() (no-follow, non-blocking, O_NOATIME where permitted),
 * regular files only (-EBADFD), at most max bytes (-EFBIG), and parse the whole text in dialect:
 * 0 with *ret (owned by the caller), -EBADMSG when it does not parse or is JSON null, -ENOMEM,
 * or the open's -errno (-ENOENT, -ELOOP, ...). */
static int json_read_file(int dfd, const char *name, size_t max, JsonDialect dialect,
                          json_object **ret) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        json_object *o = NULL;
        size_t len = 0;
        int r;

        if (max > INT32_MAX)
                return -EINVAL;
        fd = fs_open_noatime(dfd, name, O_RDONLY); /* a dry run reads: atimes stay */
        if (fd < 0)
                return fd;
        r = fs_read_fd(fd, max, &buf, &len);
        if (r < 0)
                return r;
        switch (dialect) {
        case JSON_DIALECT_PARSE:
                r = json_parse(buf, len, &o); /* len <= max <= INT32_MAX: never -E2BIG */
                break;
        default:
                return -EINVAL;
        }
        if (r < 0)
                return r;
        if (!o) /* JSON null: no reader wants one */
                return -EBADMSG;
        *ret = o;
        return 0;
}

int json_input_read(int dfd, const char *name, JsonInput input, json_object **ret) {
        const JsonInputInfo *i = json_input_info(input);

        return json_read_file(dfd, name, i->max, i->dialect, ret);
}
