/* gen-tree.c: writes a synthetic Qwen Code data tree with the record shapes of a real
 * Qwen Code 0.24.4 tree (tests/data/corpus/tree), deterministic from a seed.
 *
 * Build: cc -O2 -o gen-tree gen-tree.c        Usage: gen-tree --help
 *
 * Layout: with --users 1 (default) OUT itself is the Qwen dir (what QWEN_HOME points at);
 * with --users N > 1 each user gets OUT/userNNN/.qwen. Inside each Qwen dir:
 *   projects/<sanitize(cwd)>/chats/<id>.jsonl           active transcripts
 *   projects/<sanitize(cwd)>/chats/archive/<id>.jsonl   archived ones (--archive-pct)
 *   projects/<sanitize(cwd)>/chats/<id>.runtime.json    stale TUI claims (--runtime-pct)
 *   projects/<sanitize(cwd)>/subagents/<id>/agent-*.jsonl + .meta.json (--subagent-pct)
 *   projects/<sanitize(cwd)>/session-organization.v1.json  pins (--pin-pct), entries that
 *                                                         neither pin nor group (--org-pct)
 *   tmp/<sha256(cwd)>/logs.json                           N prompt rows per session (--log-rows)
 *   file-history/<id>/<16hex>@v<N>                        edit backups (--fh-pct)
 *   usage_record.jsonl                                    one line for --usage-pct of sessions
 * Every record's sessionId equals its file name's id and its cwd sanitizes to the project dir,
 * so Qwen (and qgc) see the sessions as owned. Record timestamps and mtimes are spread over
 * [--min-age-days, --max-age-days] before --now. Every 25th project has a second cwd that maps
 * to the same directory (like /x/my-notes and /x/my.notes in the corpus), and so a second
 * tmp/<hash>/logs.json. The shared files are written as Qwen writes them (JSON.stringify(v, null,
 * 2), no trailing newline; logs.json rows in time order across the project's sessions); they
 * draw from generators of their own, so without --log-rows and --org-pct the tree is byte for
 * byte the one earlier versions wrote.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

typedef struct Params {
        unsigned users, projects, sessions;
        uint64_t seed;
        int64_t now;                    /* epoch seconds */
        double min_age_days, max_age_days;
        uint64_t max_bytes;             /* long-tail cap */
        uint64_t big_bytes;             /* one extra session of this size, 0 = none */
        double archive_pct, pin_pct, title_pct, runtime_pct, subagent_pct, fh_pct, usage_pct;
        double junk_pct;                /* 0-byte transcripts and torn last lines */
        unsigned log_rows;              /* prompt rows per session in tmp/<hash>/logs.json, 0 = none */
        double org_pct;                 /* sessions with an organisation entry that neither pins nor groups */
        const char *hostname;
        const char *manifest;
        const char *out;
} Params;

typedef struct Rng {
        uint64_t s;
} Rng;

/* splitmix64 step. */
static uint64_t rng_next(Rng *r) {
        uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));
        z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
        return z ^ (z >> 31);
}

/* Uniform double in [0, 1). */
static double rng_unit(Rng *r) {
        return (double) (rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [lo, hi]. */
static uint64_t rng_range(Rng *r, uint64_t lo, uint64_t hi) {
        return hi <= lo ? lo : lo + rng_next(r) % (hi - lo + 1);
}

/* True with probability pct percent. */
static bool rng_pct(Rng *r, double pct) {
        return rng_unit(r) * 100.0 < pct;
}

/* Independent generator for a (seed, a, b, c, d) tuple. */
static Rng rng_for(uint64_t seed, uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
        Rng r = { seed ^ UINT64_C(0x5851F42D4C957F2D) };
        r.s ^= rng_next(&r) + a * UINT64_C(0x100000001B3);
        r.s ^= rng_next(&r) + b * UINT64_C(0xC2B2AE3D27D4EB4F);
        r.s ^= rng_next(&r) + c * UINT64_C(0x165667B19E3779F9);
        r.s ^= rng_next(&r) + d * UINT64_C(0x27D4EB2F165667C5);
        return r;
}

/* A random version-4 UUID into buf[37]. */
static void rng_uuid(Rng *r, char buf[static 37]) {
        uint64_t a = rng_next(r), b = rng_next(r);
        a = (a & UINT64_C(0xFFFFFFFFFFFF0FFF)) | UINT64_C(0x0000000000004000);
        b = (b & UINT64_C(0x3FFFFFFFFFFFFFFF)) | UINT64_C(0x8000000000000000);
        snprintf(buf, 37, "%08" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%012" PRIx64,
                 a >> 32, (a >> 16) & 0xFFFF, a & 0xFFFF, b >> 48, b & UINT64_C(0xFFFFFFFFFFFF));
}

/* Random lower-case hex string of n digits. */
static void rng_hex(Rng *r, char *buf, size_t n) {
        static const char digits[] = "0123456789abcdef";
        for (size_t i = 0; i < n; i++)
                buf[i] = digits[rng_next(r) & 15];
        buf[n] = 0;
}

/* Format epoch milliseconds as Qwen's ISO 8601 (2026-11-30T03:53:29.115Z). */
static void format_iso(int64_t ms, char buf[static 64]) {
        time_t t = (time_t) (ms / 1000);
        struct tm tm;
        gmtime_r(&t, &tm);
        snprintf(buf, 64, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int) (ms % 1000));
}

/* sanitizeCwd() for ASCII input: every byte outside [A-Za-z0-9] becomes '-'. */
static void sanitize_cwd(const char *cwd, char *out, size_t n) {
        size_t i;
        for (i = 0; cwd[i] && i + 1 < n; i++) {
                char c = cwd[i];
                bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
                out[i] = ok ? c : '-';
        }
        out[i] = 0;
}

/* mkdir -p. */
static int mkdir_p(const char *path) {
        char buf[4096];
        size_t n = strlen(path);
        if (n >= sizeof buf)
                return -ENAMETOOLONG;
        memcpy(buf, path, n + 1);
        for (size_t i = 1; i <= n; i++) {
                if (buf[i] != '/' && buf[i] != 0)
                        continue;
                char c = buf[i];
                buf[i] = 0;
                if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                        return -errno;
                buf[i] = c;
        }
        return 0;
}

/* Set atime and mtime of path (no symlink following) to epoch milliseconds. */
static void set_mtime(const char *path, int64_t ms) {
        struct timespec ts[2] = {
                { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 },
                { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 },
        };
        if (utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW) < 0)
                fprintf(stderr, "gen-tree: utimensat %s: %m\n", path);
}

/* Fatal error helper. */
static void die(const char *what, const char *path) {
        fprintf(stderr, "gen-tree: %s %s: %s\n", what, path, strerror(errno));
        exit(1);
}

/* A buffered output file that counts what it wrote. */
typedef struct Out {
        int fd;
        const char *path;
        uint64_t total;         /* bytes written, including the buffer */
        size_t len;
        char buf[1 << 18];
} Out;

/* Write the buffer out. */
static void out_flush(Out *o) {
        size_t done = 0;
        while (done < o->len) {
                ssize_t k = write(o->fd, o->buf + done, o->len - done);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        die("write error on", o->path);
                }
                done += (size_t) k;
        }
        o->len = 0;
}

/* Append n bytes. */
static void out_write(Out *o, const char *p, size_t n) {
        while (n > 0) {
                size_t k = sizeof o->buf - o->len;
                if (k > n)
                        k = n;
                memcpy(o->buf + o->len, p, k);
                o->len += k;
                o->total += k;
                p += k;
                n -= k;
                if (o->len == sizeof o->buf)
                        out_flush(o);
        }
}

/* Append a string. */
static void out_puts(Out *o, const char *s) {
        out_write(o, s, strlen(s));
}

/* Append formatted text. */
__attribute__((format(printf, 2, 3)))
static void out_printf(Out *o, const char *fmt, ...) {
        char tmp[8192];
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
        va_end(ap);
        if (k < 0 || (size_t) k >= sizeof tmp) {
                fprintf(stderr, "gen-tree: record too long\n");
                exit(1);
        }
        out_write(o, tmp, (size_t) k);
}

/* Create a file for writing (heap-allocated Out). */
static Out *open_out(const char *path) {
        Out *o = malloc(sizeof *o);
        if (!o)
                die("out of memory", path);
        o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (o->fd < 0)
                die("cannot create", path);
        o->path = path;
        o->total = 0;
        o->len = 0;
        return o;
}

/* Flush and close, dying on errors. */
static void close_out(Out *o, const char *path) {
        out_flush(o);
        if (close(o->fd) < 0)
                die("close failed on", path);
        free(o);
}

/* Plain text (no quote, no backslash) that tool outputs and prompts are cut from. */
static const char TEXT[] =
        "def handler(event): return {status: 200, body: json.dumps(event)} "
        "import os, sys, json, logging; logger = logging.getLogger(__name__) "
        "export function login(user) { return user === admin; } "
        "total 48 drwxr-xr-x 5 dev dev 4096 Nov 30 03:52 src -rw-r--r-- 1 dev dev 812 README.md "
        "ERROR: connection refused while fetching https://example.invalid/api/v1/items?page=2 "
        "Refactor the session cache so it evicts entries older than the configured TTL, then "
        "add unit tests covering the boundary, an empty cache and a cache full of expired rows. "
        "The quick brown fox jumps over the lazy dog while the build runs its 1432 tests in 12.4s "
        "for (let i = 0; i < items.length; i++) { if (items[i].done) continue; queue.push(items[i]); } "
        "SELECT id, name, created_at FROM users WHERE active = 1 ORDER BY created_at DESC LIMIT 50; "
        "warning: unused variable tmp [-Wunused-variable] at src/util.c:212:13 in function parse_size "
        "commit 9f1c2e7 Merge branch feature/login into main; 3 files changed, 41 insertions(+) ";

static const char *const TOOLS[] = { "read_file", "run_shell_command", "write_file", "edit", "grep_search" };
#define N_TOOLS 5
static const char *const MODELS[] = { "qwen3-coder-plus", "qwen3-coder-flash", "qwen3.5-plus" };
#define N_MODELS 3

/* Write n bytes of JSON-safe text with "\n" escapes every 40-120 characters. */
static void put_text(Out *f, Rng *r, uint64_t n) {
        const size_t tl = sizeof TEXT - 1;
        while (n > 0) {
                size_t len = rng_range(r, 40, 120), off = rng_range(r, 0, tl - 121);
                if (len > n)
                        len = n;
                out_write(f, TEXT + off, len);
                n -= len;
                if (n >= 2) {
                        out_puts(f, "\\n");
                        n -= 2;
                }
        }
}

typedef struct ToolStats {
        unsigned count, success, fail;
        uint64_t duration;
} ToolStats;

/* What Qwen would salvage from the transcript (the usage_record.jsonl line). */
typedef struct Usage {
        unsigned requests[N_MODELS];
        uint64_t in[N_MODELS], out[N_MODELS], cached[N_MODELS], total[N_MODELS], latency[N_MODELS];
        ToolStats tools[N_TOOLS];
        unsigned lines_added, lines_removed;
        unsigned order[N_TOOLS], n_order;       /* tools in order of first use (Qwen's key order) */
} Usage;

/* One session being written. */
typedef struct Session {
        Out *f;
        Rng *r;
        const char *id, *cwd, *branch;
        char parent[37];
        int64_t ms;                     /* clock for record timestamps */
        int64_t first_ms;               /* timestamp of the first record */
        uint64_t bytes;                 /* bytes written so far (approximate) */
        uint64_t since_title;
        unsigned call;                  /* tool call counter */
        Usage u;
} Session;

/* Common header of a record; leaves the object open. Advances the chain. */
static void rec_begin(Session *s, const char *type, const char *provenance, int64_t step_ms) {
        char uuid[37], ts[64];
        s->ms += step_ms;
        if (!s->parent[0])
                s->first_ms = s->ms;
        rng_uuid(s->r, uuid);
        format_iso(s->ms, ts);
        out_printf(s->f, "{\"uuid\":\"%s\",\"parentUuid\":", uuid);
        if (s->parent[0])
                out_printf(s->f, "\"%s\"", s->parent);
        else
                out_puts(s->f, "null");
        out_printf(s->f, ",\"sessionId\":\"%s\",\"timestamp\":\"%s\",\"type\":\"%s\"", s->id, ts, type);
        if (provenance)
                out_printf(s->f, ",\"provenance\":\"%s\"", provenance);
        out_printf(s->f, ",\"cwd\":\"%s\",\"version\":\"0.24.4\"", s->cwd);
        if (s->branch)
                out_printf(s->f, ",\"gitBranch\":\"%s\"", s->branch);
        memcpy(s->parent, uuid, 37);
}

/* Close a record and account its size. */
static void rec_end(Session *s) {
        out_puts(s->f, "}\n");
        uint64_t now = s->f->total;
        s->since_title += now - s->bytes;
        s->bytes = now;
}

static void rec_user(Session *s, uint64_t prompt_len) {
        rec_begin(s, "user", "real_user", rng_range(s->r, 5000, 600000));
        out_puts(s->f, ",\"message\":{\"role\":\"user\",\"parts\":[{\"text\":\"");
        put_text(s->f, s->r, prompt_len);
        out_puts(s->f, "\"}]}");
        rec_end(s);
}

static void rec_attribution(Session *s, unsigned prompts) {
        rec_begin(s, "system", "system", rng_range(s->r, 10, 60));
        out_printf(s->f, ",\"subtype\":\"attribution_snapshot\",\"systemPayload\":{\"snapshot\":{\"type\":"
                "\"attribution-snapshot\",\"version\":1,\"surface\":\"cli\",\"fileStates\":{},"
                "\"promptCount\":%u,\"promptCountAtLastCommit\":0}}", prompts);
        rec_end(s);
}

static void rec_fh_snapshot(Session *s, unsigned turn, const char *backup, unsigned version) {
        char ts[64];
        rec_begin(s, "system", "system", rng_range(s->r, 10, 60));
        format_iso(s->ms - 3, ts);
        out_printf(s->f, ",\"subtype\":\"file_history_snapshot\",\"systemPayload\":{\"snapshots\":[{\"promptId\":"
                "\"%s########%u\",\"timestamp\":\"%s\",\"trackedFileBackups\":{", s->id, turn, ts);
        if (backup) {
                format_iso(s->ms, ts);
                out_printf(s->f, "\"notes.txt\":{\"backupFileName\":\"%s\",\"version\":%u,\"backupTime\":\"%s\"}",
                        backup, version, ts);
        }
        out_puts(s->f, "}}]}");
        rec_end(s);
}

static void rec_api_response(Session *s, unsigned model, unsigned turn, uint64_t out_tokens) {
        char ts[64];
        uint64_t dur = rng_range(s->r, 300, 9000);
        uint64_t in = 3000 + s->bytes / 4, cached = in / 3;
        rec_begin(s, "system", "system", dur);
        format_iso(s->ms - 3, ts);
        out_printf(s->f, ",\"subtype\":\"ui_telemetry\",\"systemPayload\":{\"uiEvent\":{\"event.name\":"
                "\"qwen-code.api_response\",\"event.timestamp\":\"%s\",\"response_id\":\"chatcmpl-%" PRIx64 "\","
                "\"model\":\"%s\",\"status_code\":200,\"duration_ms\":%" PRIu64 ",\"input_token_count\":%" PRIu64 ","
                "\"output_token_count\":%" PRIu64 ",\"cached_content_token_count\":%" PRIu64 ","
                "\"thoughts_token_count\":0,\"total_token_count\":%" PRIu64 ",\"prompt_id\":\"%s########%u\","
                "\"auth_type\":\"openai\",\"ttft_ms\":%" PRIu64 "}}",
                ts, rng_next(s->r) & 0xFFFFFFFFFF, MODELS[model], dur, in, out_tokens, cached, in + out_tokens,
                s->id, turn, dur - dur / 8);
        rec_end(s);
        s->u.requests[model]++;
        s->u.in[model] += in;
        s->u.out[model] += out_tokens;
        s->u.cached[model] += cached;
        s->u.total[model] += in + out_tokens;
        s->u.latency[model] += dur;
}

static void rec_assistant_call(Session *s, unsigned model, unsigned tool, uint64_t out_tokens) {
        rec_begin(s, "assistant", "assistant_output", rng_range(s->r, 2, 20));
        out_printf(s->f, ",\"model\":\"%s\",\"message\":{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"id\":"
                "\"call_%u\",\"name\":\"%s\",\"args\":{\"file_path\":\"%s/src/file%u.txt\"}}}]},"
                "\"usageMetadata\":{\"promptTokenCount\":%" PRIu64 ",\"candidatesTokenCount\":%" PRIu64 ","
                "\"thoughtsTokenCount\":0,\"totalTokenCount\":%" PRIu64 ",\"cachedContentTokenCount\":%" PRIu64 "}",
                MODELS[model], s->call, TOOLS[tool], s->cwd, s->call % 17, 3000 + s->bytes / 4, out_tokens,
                3000 + s->bytes / 4 + out_tokens, (3000 + s->bytes / 4) / 3);
        rec_end(s);
}

static void rec_tool_call(Session *s, unsigned turn, unsigned tool, bool ok, uint64_t content_len) {
        char ts[64];
        uint64_t dur = rng_range(s->r, 20, 4000);
        rec_begin(s, "system", "system", dur);
        format_iso(s->ms - 2, ts);
        out_printf(s->f, ",\"subtype\":\"ui_telemetry\",\"systemPayload\":{\"uiEvent\":{\"event.name\":"
                "\"qwen-code.tool_call\",\"event.timestamp\":\"%s\",\"call_id\":\"call_%u\",\"function_name\":"
                "\"%s\",\"function_args\":{\"file_path\":\"%s/src/file%u.txt\"},\"duration_ms\":%" PRIu64 ","
                "\"status\":\"%s\",\"execution_status\":\"%s\",\"success\":%s,\"decision\":\"auto_accept\",",
                ts, s->call, TOOLS[tool], s->cwd, s->call % 17, dur, ok ? "success" : "error",
                ok ? "success" : "error", ok ? "true" : "false");
        if (!ok)
                out_puts(s->f, "\"error\":\"File has not been read in this session.\",\"error_type\":"
                      "\"edit_requires_prior_read\",");
        out_printf(s->f, "\"prompt_id\":\"%s########%u\",\"response_id\":\"chatcmpl-%" PRIx64 "\","
                "\"tool_type\":\"native\",\"content_length\":%" PRIu64,
                s->id, turn, rng_next(s->r) & 0xFFFFFFFFFF, content_len);
        if (ok && (tool == 2 || tool == 3)) {
                unsigned add = (unsigned) rng_range(s->r, 1, 40), del = tool == 3 ? (unsigned) rng_range(s->r, 0, 20) : 0;
                out_printf(s->f, ",\"metadata\":{\"model_added_lines\":%u,\"model_removed_lines\":%u,"
                        "\"model_added_chars\":%u,\"model_removed_chars\":%u,\"user_added_lines\":0,"
                        "\"user_removed_lines\":0,\"user_added_chars\":0,\"user_removed_chars\":0}",
                        add, del, add * 31, del * 29);
                s->u.lines_added += add;
                s->u.lines_removed += del;
        }
        out_puts(s->f, "}}");
        rec_end(s);
        if (s->u.tools[tool].count++ == 0)
                s->u.order[s->u.n_order++] = tool;
        if (ok)
                s->u.tools[tool].success++;
        else
                s->u.tools[tool].fail++;
        s->u.tools[tool].duration += dur;
}

static void rec_tool_result(Session *s, unsigned tool, bool ok, uint64_t out_len) {
        rec_begin(s, "tool_result", "tool_result", rng_range(s->r, 1, 10));
        out_printf(s->f, ",\"message\":{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"id\":\"call_%u\","
                "\"name\":\"%s\",\"response\":{", s->call, TOOLS[tool]);
        if (ok) {
                out_puts(s->f, "\"output\":\"");
                put_text(s->f, s->r, out_len);
                out_printf(s->f, "\"}}}]},\"toolCallResult\":{\"callId\":\"call_%u\",\"status\":\"success\","
                        "\"resultDisplay\":\"\",\"executionStatus\":\"success\"}", s->call);
        } else
                out_printf(s->f, "\"error\":\"File has not been read in this session.\"}}}]},\"toolCallResult\":"
                        "{\"callId\":\"call_%u\",\"status\":\"error\",\"resultDisplay\":\"File has not been read "
                        "in this session.\",\"error\":{},\"errorType\":\"edit_requires_prior_read\","
                        "\"executionStatus\":\"error\"}", s->call);
        rec_end(s);
}

static void rec_assistant_text(Session *s, unsigned model, uint64_t len) {
        rec_begin(s, "assistant", "assistant_output", rng_range(s->r, 2, 20));
        out_printf(s->f, ",\"model\":\"%s\",\"message\":{\"role\":\"model\",\"parts\":[{\"text\":\"", MODELS[model]);
        put_text(s->f, s->r, len);
        out_printf(s->f, "\"}]},\"usageMetadata\":{\"promptTokenCount\":%" PRIu64 ",\"candidatesTokenCount\":%" PRIu64
                ",\"thoughtsTokenCount\":0,\"totalTokenCount\":%" PRIu64 ",\"cachedContentTokenCount\":%" PRIu64 "}",
                3000 + s->bytes / 4, len / 4, 3000 + s->bytes / 4 + len / 4, (3000 + s->bytes / 4) / 3);
        rec_end(s);
}

static void rec_title(Session *s, const char *title, bool manual) {
        rec_begin(s, "system", NULL, rng_range(s->r, 1, 50));
        out_printf(s->f, ",\"subtype\":\"custom_title\",\"systemPayload\":{\"customTitle\":\"%s\",\"titleSource\":\"%s\"}",
                title, manual ? "manual" : "auto");
        rec_end(s);
        s->since_title = 0;
}

/* Size of a session in bytes: mostly small, some medium, a Pareto long tail. */
static uint64_t pick_size(Rng *r, uint64_t cap) {
        double u = rng_unit(r);
        uint64_t n;
        if (u < 0.85)
                n = rng_range(r, 2000, 20000);
        else if (u < 0.99)
                n = rng_range(r, 20000, 150000);
        else
                n = (uint64_t) (150000.0 / pow(1.0 - rng_unit(r), 1.0 / 1.1));
        return n > cap ? cap : n;
}

typedef struct SessionOut {
        int64_t start_ms, end_ms;
        bool killed;                    /* torn last line */
        Usage u;
} SessionOut;

/* Write one transcript of about target bytes to path. */
static void write_transcript(const char *path, Rng *r, const char *id, const char *cwd, const char *branch,
                             int64_t start_ms, uint64_t target, const char *title, bool manual,
                             const char *fh_dir, bool torn, SessionOut *ret) {
        Session s = { .r = r, .id = id, .cwd = cwd, .branch = branch, .ms = start_ms };
        unsigned model = (unsigned) rng_range(r, 0, N_MODELS - 1), fh_version = 0;
        char backup[32] = "";

        s.f = open_out(path);
        if (fh_dir) {
                char hex[17];
                rng_hex(r, hex, 16);
                snprintf(backup, sizeof backup, "%s", hex);
        }
        for (unsigned turn = 0; turn == 0 || s.bytes < target; turn++) {
                uint64_t left = target > s.bytes ? target - s.bytes : 0;
                rec_user(&s, rng_range(r, 20, 400));
                if (turn == 0)
                        rec_attribution(&s, 1);
                if (fh_dir) {
                        bool edit = turn > 0 && rng_pct(r, 50);
                        char name[64];
                        if (edit) {
                                fh_version++;
                                snprintf(name, sizeof name, "%s@v%u", backup, fh_version);
                                char p[4096];
                                snprintf(p, sizeof p, "%s/%s", fh_dir, name);
                                Out *b = open_out(p);
                                put_text(b, r, rng_range(r, 100, 3000));
                                close_out(b, p);
                                set_mtime(p, s.ms);
                        }
                        rec_fh_snapshot(&s, turn, edit ? name : NULL, fh_version);
                }
                unsigned calls = (unsigned) rng_range(r, 1, 3);
                for (unsigned c = 0; c < calls; c++) {
                        unsigned tool = (unsigned) rng_range(r, 0, N_TOOLS - 1);
                        bool ok = rng_pct(r, 93);
                        uint64_t out_len = rng_range(r, 50, 2000);
                        if (left > 40000)
                                out_len = rng_range(r, 2000, left > 400000 ? 64000 : 16000);
                        s.call++;
                        rec_api_response(&s, model, turn, rng_range(r, 5, 300));
                        rec_assistant_call(&s, model, tool, rng_range(r, 5, 300));
                        rec_tool_call(&s, turn, tool, ok, out_len);
                        rec_tool_result(&s, tool, ok, out_len);
                }
                uint64_t answer = rng_range(r, 20, 1200);
                rec_api_response(&s, model, turn, answer / 4);
                rec_assistant_text(&s, model, answer);
                if (title && (turn == 0 || s.since_title >= 32768))
                        rec_title(&s, title, manual);
        }
        if (title)
                rec_title(&s, title, manual);
        if (torn) {
                /* A record cut short by a kill: no closing brace, no newline. */
                rec_begin(&s, "user", "real_user", 3000);
                out_puts(s.f, ",\"message\":{\"role\":\"user\",\"parts\":[{\"text\":\"half a prom");
        }
        close_out(s.f, path);
        ret->start_ms = s.first_ms;
        ret->end_ms = s.ms;
        ret->killed = torn;
        ret->u = s.u;
        set_mtime(path, s.ms + 40);
}

/* Append the usage_record.jsonl line Qwen writes on exit. */
static void write_usage(Out *f, const char *id, const char *cwd, const SessionOut *o) {
        uint64_t lat = 0;
        unsigned calls = 0, ok = 0, fail = 0;
        for (unsigned m = 0; m < N_MODELS; m++)
                lat += o->u.latency[m];
        out_printf(f, "{\"version\":1,\"sessionId\":\"%s\",\"timestamp\":%" PRId64 ",\"startTime\":%" PRId64
                ",\"project\":\"%s\",\"durationMs\":%" PRId64 ",\"totalLatencyMs\":%" PRIu64 ",\"models\":{",
                id, o->end_ms + 100, o->start_ms, cwd, o->end_ms + 100 - o->start_ms, lat);
        bool first = true;
        for (unsigned m = 0; m < N_MODELS; m++) {
                if (!o->u.requests[m])
                        continue;
                out_printf(f, "%s\"%s\":{\"requests\":%u,\"inputTokens\":%" PRIu64 ",\"outputTokens\":%" PRIu64
                        ",\"cachedTokens\":%" PRIu64 ",\"thoughtsTokens\":0,\"totalTokens\":%" PRIu64
                        ",\"totalLatencyMs\":%" PRIu64 "}", first ? "" : ",", MODELS[m], o->u.requests[m],
                        o->u.in[m], o->u.out[m], o->u.cached[m], o->u.total[m], o->u.latency[m]);
                first = false;
        }
        for (unsigned t = 0; t < N_TOOLS; t++) {
                calls += o->u.tools[t].count;
                ok += o->u.tools[t].success;
                fail += o->u.tools[t].fail;
        }
        out_printf(f, "},\"tools\":{\"totalCalls\":%u,\"totalSuccess\":%u,\"totalFail\":%u,\"byName\":{", calls, ok, fail);
        first = true;
        for (unsigned i = 0; i < o->u.n_order; i++) {
                unsigned t = o->u.order[i];
                out_printf(f, "%s\"%s\":{\"count\":%u,\"success\":%u,\"fail\":%u,\"totalDurationMs\":%" PRIu64 "}",
                        first ? "" : ",", TOOLS[t], o->u.tools[t].count, o->u.tools[t].success,
                        o->u.tools[t].fail, o->u.tools[t].duration);
                first = false;
        }
        out_printf(f, "}},\"files\":{\"linesAdded\":%u,\"linesRemoved\":%u},\"skills\":{\"totalCalls\":0,"
                "\"totalSuccess\":0,\"totalFail\":0,\"byName\":{}}}\n", o->u.lines_added, o->u.lines_removed);
}

/* The stale runtime claim the TUI leaves after /quit. */
static void write_runtime(const char *path, Rng *r, const char *id, const char *cwd, const char *host,
                          int64_t start_ms) {
        Out *f = open_out(path);
        out_printf(f, "{\n  \"schema_version\": 1,\n  \"pid\": %u,\n  \"session_id\": \"%s\",\n  \"work_dir\": \"%s\",\n"
                "  \"hostname\": \"%s\",\n  \"started_at\": %" PRId64 ".%03d,\n  \"qwen_version\": \"0.24.4\"\n}",
                (unsigned) rng_range(r, 2000, 30000), id, cwd, host, start_ms / 1000, (int) (start_ms % 1000));
        close_out(f, path);
        set_mtime(path, start_ms + 500);
}

/* A finished background subagent: its sidechain transcript and meta file. */
static void write_subagent(const char *projdir, Rng *r, const char *id, const char *cwd, int64_t ms) {
        char dir[4096], p[4096], agent[64], uuid[37], prev[37], ts[64];
        unsigned call = (unsigned) rng_range(r, 1, 99);
        snprintf(dir, sizeof dir, "%s/subagents/%s", projdir, id);
        if (mkdir_p(dir) < 0)
                die("cannot create", dir);
        snprintf(agent, sizeof agent, "general-purpose-call_%u", call);
        snprintf(p, sizeof p, "%s/agent-%s.jsonl", dir, agent);
        Out *f = open_out(p);
        prev[0] = 0;
        for (unsigned i = 0; i < 4; i++) {
                rng_uuid(r, uuid);
                format_iso(ms + i * 700, ts);
                out_printf(f, "{\"uuid\":\"%s\",\"parentUuid\":%s%s%s,\"sessionId\":\"%s\",\"timestamp\":\"%s\","
                        "\"type\":\"%s\",\"cwd\":\"%s\",\"version\":\"0.24.4\",\"agentId\":\"%s\",\"agentName\":"
                        "\"general-purpose\",\"isSidechain\":true,\"message\":{\"role\":\"%s\",\"parts\":[{\"text\":\"",
                        uuid, prev[0] ? "\"" : "", prev[0] ? prev : "null", prev[0] ? "\"" : "", id, ts,
                        i % 2 ? "assistant" : "user", cwd, agent, i % 2 ? "model" : "user");
                put_text(f, r, rng_range(r, 60, 600));
                out_puts(f, "\"}]}}\n");
                memcpy(prev, uuid, 37);
        }
        close_out(f, p);
        set_mtime(p, ms + 3000);
        snprintf(p, sizeof p, "%s/agent-%s.meta.json", dir, agent);
        f = open_out(p);
        format_iso(ms, ts);
        out_printf(f, "{\n  \"agentId\": \"%s\",\n  \"agentType\": \"general-purpose\",\n  \"description\": "
                "\"Survey the repository\",\n  \"parentSessionId\": \"%s\",\n  \"toolUseId\": \"call_%u\",\n"
                "  \"parentAgentId\": null,\n  \"createdAt\": \"%s\",\n  \"status\": \"completed\",\n"
                "  \"isBackgrounded\": true,\n", agent, id, call, ts);
        format_iso(ms + 3000, ts);
        out_printf(f, "  \"lastUpdatedAt\": \"%s\",\n  \"resolvedApprovalMode\": \"yolo\",\n  \"subagentName\": "
                "\"general-purpose\",\n  \"resumeCount\": 0,\n  \"depth\": 0,\n  \"model\": \"qwen3-coder-plus\"\n}",
                ts);
        close_out(f, p);
        set_mtime(p, ms + 3000);
        set_mtime(dir, ms + 3000);
}

/* SHA-256 (FIPS 180-4) of a short string as 64 lower-case hex digits: Qwen's getProjectHash(),
 * the name of R/tmp/<hash>/ that holds a cwd's logs.json. */
static void sha256_hex(const char *s, char out[static 65]) {
        static const uint32_t K[64] = {
                0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
                0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
                0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
                0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
                0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
                0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
                0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
                0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
        };
        uint32_t h[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                          0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
        size_t n = strlen(s), total = (n + 9 + 63) / 64 * 64;
        uint8_t *m = calloc(total, 1);
        if (!m)
                die("out of memory", "");
        memcpy(m, s, n);
        m[n] = 0x80;
        for (int i = 0; i < 8; i++)
                m[total - 1 - i] = (uint8_t) (((uint64_t) n * 8) >> (8 * i));
#define ROR(x, k) (((x) >> (k)) | ((x) << (32 - (k))))
        for (size_t off = 0; off < total; off += 64) {
                uint32_t w[64], a[8];
                for (int i = 0; i < 16; i++)
                        w[i] = (uint32_t) m[off + 4 * i] << 24 | (uint32_t) m[off + 4 * i + 1] << 16 |
                               (uint32_t) m[off + 4 * i + 2] << 8 | m[off + 4 * i + 3];
                for (int i = 16; i < 64; i++)
                        w[i] = w[i - 16] + (ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3)) + w[i - 7] +
                               (ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10));
                memcpy(a, h, sizeof a);
                for (int i = 0; i < 64; i++) {
                        uint32_t t1 = a[7] + (ROR(a[4], 6) ^ ROR(a[4], 11) ^ ROR(a[4], 25)) +
                                      ((a[4] & a[5]) ^ (~a[4] & a[6])) + K[i] + w[i];
                        uint32_t t2 = (ROR(a[0], 2) ^ ROR(a[0], 13) ^ ROR(a[0], 22)) +
                                      ((a[0] & a[1]) ^ (a[0] & a[2]) ^ (a[1] & a[2]));
                        memmove(a + 1, a, 7 * sizeof a[0]);
                        a[4] += t1;
                        a[0] = t1 + t2;
                }
                for (int i = 0; i < 8; i++)
                        h[i] += a[i];
        }
#undef ROR
        free(m);
        for (int i = 0; i < 8; i++)
                snprintf(out + 8 * i, 9, "%08" PRIx32, h[i]);
}

/* One prompt row of a project's logs.json (--log-rows): Qwen's Logger.logMessage() entry
 * {sessionId, messageId, type, message, timestamp}. Its text is drawn when the file is written,
 * from a generator of its own (seed, user, project, session, 1000 + messageId). */
typedef struct LogRow {
        int64_t ms;
        unsigned si, msg, cwd;  /* session index, messageId, which of the project's cwds */
        char id[37];
} LogRow;

static int log_row_cmp(const void *a, const void *b) {
        const LogRow *x = a, *y = b;
        if (x->ms != y->ms)
                return x->ms < y->ms ? -1 : 1;
        if (x->si != y->si)
                return x->si < y->si ? -1 : 1;
        return x->msg < y->msg ? -1 : x->msg > y->msg;
}

/* R/tmp/<sha256(cwd)>/logs.json for the rows of cwd k, as Qwen writes it: JSON.stringify(rows,
 * null, 2), no trailing newline, rows in the order they were appended (time order across the
 * project's sessions). Returns the newest row's time (0: no row). */
static int64_t write_logs(const Params *P, unsigned user, unsigned pj, const char *root, const char *cwd,
                          unsigned k, LogRow *rows, size_t n_rows) {
        char hash[65], dir[4096], path[4096], ts[64];
        int64_t last = 0;
        size_t n = 0;
        Out *f;

        for (size_t i = 0; i < n_rows; i++)
                n += rows[i].cwd == k;
        if (n == 0)
                return 0;
        sha256_hex(cwd, hash);
        snprintf(dir, sizeof dir, "%s/tmp/%s", root, hash);
        if (mkdir_p(dir) < 0)
                die("cannot create", dir);
        snprintf(path, sizeof path, "%s/logs.json", dir);
        f = open_out(path);
        out_puts(f, "[");
        n = 0;
        for (size_t i = 0; i < n_rows; i++) {
                const LogRow *w = &rows[i];
                if (w->cwd != k)
                        continue;
                Rng r = rng_for(P->seed, user, pj, w->si, 1000 + (uint64_t) w->msg);
                /* most prompts are a sentence or two; some carry a pasted log or diff */
                uint64_t len = rng_pct(&r, 90) ? rng_range(&r, 20, 400) : rng_range(&r, 400, 6000);
                format_iso(w->ms, ts);
                out_printf(f, "%s\n  {\n    \"sessionId\": \"%s\",\n    \"messageId\": %u,\n    \"type\": \"user\",\n"
                           "    \"message\": \"", n++ ? "," : "", w->id, w->msg);
                put_text(f, &r, len);
                out_printf(f, "\",\n    \"timestamp\": \"%s\"\n  }", ts);
                last = w->ms;
        }
        out_puts(f, "\n]");
        close_out(f, path);
        set_mtime(path, last);
        set_mtime(dir, last);
        return last;
}

typedef struct Pin {
        char id[37];
        int64_t ms;
        bool pinned;            /* else an entry that neither pins nor groups (--org-pct) */
} Pin;

/* Generate one user's Qwen dir. Returns the number of transcripts written. */
static uint64_t gen_root(const Params *P, unsigned user, const char *root, Out *manifest, uint64_t *bytes) {
        char p[4096], usage_path[4096];
        uint64_t n = 0;
        snprintf(usage_path, sizeof usage_path, "%s/usage_record.jsonl", root);
        if (mkdir_p(root) < 0)
                die("cannot create", root);
        Out *usage = open_out(usage_path);
        static const char *const WORDS[] = { "api", "webapp", "notes", "infra", "ml", "docs", "cli", "etl" };
        static const char *const STYLES[] = { "/home/user%03u/src/%s-%04u", "/srv/work/team.%s/proj_%04u",
                                              "/home/user%03u/code/%s.%04u", "/tmp/scratch-%s-%04u" };
        Pin *pins = NULL;
        LogRow *rows = NULL;
        int64_t tmp_ms = 0;
        int64_t usage_ms = P->now * 1000 - (int64_t) (P->max_age_days * 86400000.0);
        int64_t root_ms = usage_ms;

        for (unsigned pj = 0; pj < P->projects; pj++) {
                Rng pr = rng_for(P->seed, user, pj, UINT64_MAX, 0);
                char cwd[2][512], dirname[512], projdir[4096], chats[4096], archive[4096];
                const char *word = WORDS[rng_next(&pr) % 8];
                unsigned style = (unsigned) (rng_next(&pr) % 4);
                switch (style) {
                case 0: case 2: snprintf(cwd[0], sizeof cwd[0], STYLES[style], user, word, pj); break;
                default: snprintf(cwd[0], sizeof cwd[0], STYLES[style], word, pj); break;
                }
                /* A twin cwd mapping to the same project dir: '-' <-> '.' in the last part. */
                unsigned n_cwds = pj % 25 == 24 ? 2 : 1;
                snprintf(cwd[1], sizeof cwd[1], "%s", cwd[0]);
                char *last = strrchr(cwd[1], '/');
                for (char *c = last + 1; *c; c++)
                        if (*c == '-' || *c == '.' || *c == '_')
                                *c = *c == '.' ? '-' : '.';
                sanitize_cwd(cwd[0], dirname, sizeof dirname);
                snprintf(projdir, sizeof projdir, "%s/projects/%s", root, dirname);
                snprintf(chats, sizeof chats, "%s/chats", projdir);
                snprintf(archive, sizeof archive, "%s/archive", chats);
                if (mkdir_p(chats) < 0)
                        die("cannot create", chats);
                for (unsigned k = 0; k < n_cwds; k++)
                        if (manifest)
                                out_printf(manifest, "%s\t%s\t%s\n", root, dirname, cwd[k]);
                const char *branch = rng_pct(&pr, 60) ? (rng_pct(&pr, 70) ? "main" : "feature/login") : NULL;
                bool have_archive = false, have_subagents = false;
                size_t n_pins = 0, n_rows = 0;
                int64_t proj_ms = 0;

                unsigned count = P->sessions + (user == 0 && pj == 0 && P->big_bytes ? 1 : 0);
                for (unsigned si = 0; si < count; si++) {
                        bool big = si == P->sessions;
                        Rng r = rng_for(P->seed, user, pj, si, 1);
                        char id[37], path[4096], fh_dir[4096];
                        rng_uuid(&r, id);
                        const char *scwd = cwd[n_cwds == 2 && (si & 1)];
                        double age = P->min_age_days + rng_unit(&r) * (P->max_age_days - P->min_age_days);
                        int64_t start = (P->now - (int64_t) (age * 86400.0)) * 1000 - (int64_t) rng_range(&r, 0, 3600000);
                        uint64_t target = big ? P->big_bytes : pick_size(&r, P->max_bytes);
                        bool archived = !big && rng_pct(&r, P->archive_pct);
                        bool titled = !big && rng_pct(&r, P->title_pct);
                        bool manual = rng_pct(&r, 50);
                        bool fh = !big && rng_pct(&r, P->fh_pct);
                        bool junk = !big && rng_pct(&r, P->junk_pct);
                        bool empty = junk && rng_pct(&r, 50);
                        char title[96];
                        snprintf(title, sizeof title, "%s work item %u", word, si);
                        if (archived && !have_archive) {
                                if (mkdir_p(archive) < 0)
                                        die("cannot create", archive);
                                have_archive = true;
                        }
                        snprintf(path, sizeof path, "%s/%s.jsonl", archived ? archive : chats, id);
                        if (fh) {
                                snprintf(fh_dir, sizeof fh_dir, "%s/file-history/%s", root, id);
                                if (mkdir_p(fh_dir) < 0)
                                        die("cannot create", fh_dir);
                        }
                        SessionOut o = {};
                        if (empty) {
                                Out *f = open_out(path);
                                close_out(f, path);
                                set_mtime(path, start);
                                if (start > proj_ms)
                                        proj_ms = start;
                                n++;
                                continue;
                        }
                        write_transcript(path, &r, id, scwd, branch, start, target, titled ? title : NULL, manual,
                                         fh ? fh_dir : NULL, junk, &o);
                        if (fh)
                                set_mtime(fh_dir, o.end_ms);
                        struct stat st;
                        if (stat(path, &st) == 0)
                                *bytes += (uint64_t) st.st_size;
                        n++;
                        if (!big && !junk && rng_pct(&r, P->usage_pct)) {
                                write_usage(usage, id, scwd, &o);
                                if (o.end_ms + 100 > usage_ms)
                                        usage_ms = o.end_ms + 100;
                        }
                        if (!archived && rng_pct(&r, P->runtime_pct)) {
                                snprintf(p, sizeof p, "%s/%s.runtime.json", chats, id);
                                write_runtime(p, &r, id, scwd, P->hostname, o.start_ms);
                        }
                        if (!big && rng_pct(&r, P->subagent_pct)) {
                                write_subagent(projdir, &r, id, scwd, o.start_ms + 60000);
                                have_subagents = true;
                        }
                        if (o.end_ms + 1000 > proj_ms)
                                proj_ms = o.end_ms + 1000;
                        bool pinned = !big && rng_pct(&r, P->pin_pct);
                        /* the shared files' parts draw from a generator of their own, so that
                         * without --log-rows and --org-pct every other byte stays as it was */
                        Rng sr = rng_for(P->seed, user, pj, si, 2);
                        bool org = !big && !pinned && P->org_pct > 0 && rng_pct(&sr, P->org_pct);
                        if (pinned || org) {
                                Pin *np = realloc(pins, (n_pins + 1) * sizeof *pins);
                                if (!np)
                                        die("out of memory", "");
                                pins = np;
                                memcpy(pins[n_pins].id, id, 37);
                                pins[n_pins].pinned = pinned;
                                /* an unpinned entry: pinned and unpinned again, some time later */
                                pins[n_pins++].ms = o.end_ms + 1000 +
                                                    (org ? (int64_t) rng_range(&sr, 0, 3600000) : 0);
                        }
                        if (!big && P->log_rows > 0) {
                                LogRow *nr = realloc(rows, (n_rows + P->log_rows) * sizeof *rows);
                                if (!nr)
                                        die("out of memory", "");
                                rows = nr;
                                /* one prompt at the start of each of N turns spread over the session */
                                int64_t span = o.end_ms > o.start_ms ? o.end_ms - o.start_ms : 1;
                                for (unsigned m = 0; m < P->log_rows; m++) {
                                        LogRow *w = &rows[n_rows++];
                                        w->ms = o.start_ms - 50 + span * m / P->log_rows +
                                                (int64_t) rng_range(&sr, 0, 999);
                                        w->si = si;
                                        w->msg = m;
                                        w->cwd = scwd == cwd[1] && n_cwds == 2 ? 1 : 0;
                                        memcpy(w->id, id, 37);
                                }
                        }
                }
                if (n_pins > 0) {
                        char ts[64];
                        snprintf(p, sizeof p, "%s/session-organization.v1.json", projdir);
                        Out *f = open_out(p);
                        out_puts(f, "{\n  \"schemaVersion\": 1,\n  \"groups\": [],\n  \"sessions\": {");
                        int64_t org_ms = pins[n_pins - 1].ms;
                        for (size_t i = 0; i < n_pins; i++) {
                                format_iso(pins[i].ms, ts);
                                if (pins[i].pinned)
                                        out_printf(f, "%s\n    \"%s\": {\n      \"groupId\": null,\n      \"pinnedAt\": \"%s\",\n"
                                                "      \"updatedAt\": \"%s\"\n    }", i ? "," : "", pins[i].id, ts, ts);
                                else
                                        out_printf(f, "%s\n    \"%s\": {\n      \"groupId\": null,\n"
                                                "      \"updatedAt\": \"%s\"\n    }", i ? "," : "", pins[i].id, ts);
                                if (P->org_pct > 0 && pins[i].ms > org_ms)
                                        org_ms = pins[i].ms;
                        }
                        out_puts(f, "\n  }\n}");
                        close_out(f, p);
                        set_mtime(p, org_ms);
                        if (org_ms > proj_ms)
                                proj_ms = org_ms;
                }
                if (n_rows > 0) {
                        qsort(rows, n_rows, sizeof *rows, log_row_cmp);
                        for (unsigned k = 0; k < n_cwds; k++) {
                                int64_t t = write_logs(P, user, pj, root, cwd[k], k, rows, n_rows);
                                if (t > tmp_ms)
                                        tmp_ms = t;
                        }
                }
                /* Directories get the time of their newest entry, not the generator's clock. */
                if (proj_ms == 0)
                        proj_ms = usage_ms;
                if (have_archive)
                        set_mtime(archive, proj_ms);
                if (have_subagents) {
                        snprintf(p, sizeof p, "%s/subagents", projdir);
                        set_mtime(p, proj_ms);
                }
                set_mtime(chats, proj_ms);
                set_mtime(projdir, proj_ms);
                if (proj_ms > root_ms)
                        root_ms = proj_ms;
        }
        free(pins);
        free(rows);
        if (tmp_ms > 0) {
                snprintf(p, sizeof p, "%s/tmp", root);
                set_mtime(p, tmp_ms);
                if (tmp_ms > root_ms)
                        root_ms = tmp_ms;
        }
        close_out(usage, usage_path);
        set_mtime(usage_path, usage_ms);
        snprintf(p, sizeof p, "%s/projects", root);
        set_mtime(p, root_ms);
        snprintf(p, sizeof p, "%s/file-history", root);
        if (access(p, F_OK) == 0)
                set_mtime(p, root_ms);
        set_mtime(root, root_ms > usage_ms ? root_ms : usage_ms);
        return n;
}

/* Parse 12, 12K, 3M, 1G (binary units). */
static uint64_t parse_bytes(const char *s) {
        char *end;
        double v = strtod(s, &end);
        switch (*end) {
        case 'k': case 'K': v *= 1024; break;
        case 'm': case 'M': v *= 1024 * 1024; break;
        case 'g': case 'G': v *= 1024.0 * 1024 * 1024; break;
        case 0: break;
        default:
                fprintf(stderr, "gen-tree: bad size '%s'\n", s);
                exit(2);
        }
        return (uint64_t) v;
}

static void usage_help(void) {
        printf("Usage: gen-tree [OPTIONS] OUT\n"
               "Writes a synthetic Qwen Code tree (real 0.24.4 record shapes) into OUT (must not exist or be empty).\n"
               "  --users N          users (default 1: OUT is the Qwen dir; N>1: OUT/userNNN/.qwen)\n"
               "  --projects N       projects per user (default 20)\n"
               "  --sessions N       sessions per project (default 10)\n"
               "  --seed N           PRNG seed (default 1); same parameters+seed = same bytes\n"
               "  --now EPOCH        reference time in epoch seconds (default 1796083200 = 2026-12-01T00:00:00Z)\n"
               "  --min-age-days D   youngest session age (default 0)\n"
               "  --max-age-days D   oldest session age (default 400)\n"
               "  --max-bytes SIZE   cap of the long size tail (default 4M)\n"
               "  --big SIZE         one extra session of SIZE (e.g. 1G) in user 0's first project, no usage line\n"
               "  --archive-pct P    archived sessions (default 10)\n"
               "  --pin-pct P        pinned in session-organization.v1.json (default 2)\n"
               "  --title-pct P      custom_title records, half manual (default 5)\n"
               "  --runtime-pct P    stale chats/<id>.runtime.json claims (default 5)\n"
               "  --subagent-pct P   subagents/<id>/ transcripts (default 3)\n"
               "  --fh-pct P         file-history/<id>/ backups + snapshot records (default 5)\n"
               "  --usage-pct P      sessions with a usage_record.jsonl line (default 60)\n"
               "  --junk-pct P       0-byte transcripts and torn last lines (default 0)\n"
               "  --log-rows N       N prompt rows per session in tmp/<sha256(cwd)>/logs.json (default 0: no file)\n"
               "  --org-pct P        an unpinned, ungrouped entry in session-organization.v1.json (default 0)\n"
               "  --hostname NAME    hostname in runtime claims (default: this host)\n"
               "  --manifest FILE    write 'qwen-dir<TAB>project-dir<TAB>cwd' per project cwd\n"
               "Prints 'sessions N bytes B' when done.\n");
}

int main(int argc, char *argv[]) {
        static char host[256];
        Params P = {
                .users = 1, .projects = 20, .sessions = 10, .seed = 1, .now = 1796083200,
                .min_age_days = 0, .max_age_days = 400, .max_bytes = 4 << 20,
                .archive_pct = 10, .pin_pct = 2, .title_pct = 5, .runtime_pct = 5, .subagent_pct = 3,
                .fh_pct = 5, .usage_pct = 60, .junk_pct = 0,
        };
        enum { O_USERS = 0x100, O_PROJECTS, O_SESSIONS, O_SEED, O_NOW, O_MINAGE, O_MAXAGE, O_MAXB, O_BIG,
               O_ARCH, O_PIN, O_TITLE, O_RT, O_SUB, O_FH, O_USAGE, O_JUNK, O_HOST, O_MANIFEST,
               O_LOGROWS, O_ORG };
        static const struct option options[] = {
                { "users", 1, NULL, O_USERS }, { "projects", 1, NULL, O_PROJECTS },
                { "sessions", 1, NULL, O_SESSIONS }, { "seed", 1, NULL, O_SEED }, { "now", 1, NULL, O_NOW },
                { "min-age-days", 1, NULL, O_MINAGE }, { "max-age-days", 1, NULL, O_MAXAGE },
                { "max-bytes", 1, NULL, O_MAXB }, { "big", 1, NULL, O_BIG }, { "archive-pct", 1, NULL, O_ARCH },
                { "pin-pct", 1, NULL, O_PIN }, { "title-pct", 1, NULL, O_TITLE }, { "runtime-pct", 1, NULL, O_RT },
                { "subagent-pct", 1, NULL, O_SUB }, { "fh-pct", 1, NULL, O_FH }, { "usage-pct", 1, NULL, O_USAGE },
                { "junk-pct", 1, NULL, O_JUNK }, { "hostname", 1, NULL, O_HOST },
                { "manifest", 1, NULL, O_MANIFEST }, { "log-rows", 1, NULL, O_LOGROWS },
                { "org-pct", 1, NULL, O_ORG }, { "help", 0, NULL, 'h' }, {}
        };
        int c;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case O_USERS: P.users = (unsigned) strtoul(optarg, NULL, 10); break;
                case O_PROJECTS: P.projects = (unsigned) strtoul(optarg, NULL, 10); break;
                case O_SESSIONS: P.sessions = (unsigned) strtoul(optarg, NULL, 10); break;
                case O_SEED: P.seed = strtoull(optarg, NULL, 10); break;
                case O_NOW: P.now = strtoll(optarg[0] == '@' ? optarg + 1 : optarg, NULL, 10); break;
                case O_MINAGE: P.min_age_days = strtod(optarg, NULL); break;
                case O_MAXAGE: P.max_age_days = strtod(optarg, NULL); break;
                case O_MAXB: P.max_bytes = parse_bytes(optarg); break;
                case O_BIG: P.big_bytes = parse_bytes(optarg); break;
                case O_ARCH: P.archive_pct = strtod(optarg, NULL); break;
                case O_PIN: P.pin_pct = strtod(optarg, NULL); break;
                case O_TITLE: P.title_pct = strtod(optarg, NULL); break;
                case O_RT: P.runtime_pct = strtod(optarg, NULL); break;
                case O_SUB: P.subagent_pct = strtod(optarg, NULL); break;
                case O_FH: P.fh_pct = strtod(optarg, NULL); break;
                case O_USAGE: P.usage_pct = strtod(optarg, NULL); break;
                case O_JUNK: P.junk_pct = strtod(optarg, NULL); break;
                case O_HOST: P.hostname = optarg; break;
                case O_MANIFEST: P.manifest = optarg; break;
                case O_LOGROWS: P.log_rows = (unsigned) strtoul(optarg, NULL, 10); break;
                case O_ORG: P.org_pct = strtod(optarg, NULL); break;
                case 'h': usage_help(); return 0;
                default: return 2;
                }
        if (optind != argc - 1 || P.users == 0 || P.max_age_days < P.min_age_days) {
                usage_help();
                return 2;
        }
        P.out = argv[optind];
        if (!P.hostname) {
                if (gethostname(host, sizeof host - 1) < 0)
                        snprintf(host, sizeof host, "localhost");
                P.hostname = host;
        }
        if (mkdir_p(P.out) < 0)
                die("cannot create", P.out);
        static char abs_out[4096];
        if (!realpath(P.out, abs_out))
                die("cannot resolve", P.out);
        P.out = abs_out;            /* the manifest holds absolute Qwen dirs */
        Out *manifest = P.manifest ? open_out(P.manifest) : NULL;
        uint64_t n = 0, bytes = 0;
        for (unsigned u = 0; u < P.users; u++) {
                char root[4096];
                if (P.users == 1)
                        snprintf(root, sizeof root, "%s", P.out);
                else
                        snprintf(root, sizeof root, "%s/user%03u/.qwen", P.out, u);
                n += gen_root(&P, u, root, manifest, &bytes);
        }
        if (manifest)
                close_out(manifest, P.manifest);
        printf("sessions %" PRIu64 " bytes %" PRIu64 "\n", n, bytes);
        return 0;
}
