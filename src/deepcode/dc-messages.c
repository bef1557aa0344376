/* dc-messages.c: the linear reader of a session's <id>.jsonl (see dc-messages.h). Lines are
 * split as Deep Code splits them (/\r?\n/, blank lines skipped) and read with JSON.parse's
 * grammar (json_members(), validating). */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dc-messages.h"
#include "js.h"
#include "json.h"
#include "macro.h"
#include "util.h"

#define DC_CHUNK (64u << 10)

void dc_messages_done(DcMessages *m) {
        free(m->why);
        free(m->prompt);
        free(m->checkpoints);
        *m = (DcMessages){};
}

/* Is the JSON string text span (quotes included) the string s? */
static bool dc_messages_string_is(JsonSpan v, const char *s) {
        json_object *o = NULL;
        bool eq;

        if (!v.s || v.n < 2 || v.s[0] != '"')
                return false;
        if (!memchr(v.s, '\\', v.n))
                return v.n - 2 == strlen(s) && memcmp(v.s + 1, s, v.n - 2) == 0;
        if (json_parse(v.s, v.n, &o) < 0)
                return false;
        eq = (size_t)json_object_get_string_len(o) == strlen(s) && streq(json_object_get_string(o), s);
        json_object_put(o);
        return eq;
}

static int dc_messages_checkpoint(DcMessages *m, JsonSpan v, size_t *alloc) {
        char h[DC_HASH_LEN + 1];

        /* isCommitHash(): /^[0-9a-f]{40}$/i (never escaped: a hex digit needs none) */
        if (!v.s || v.n != DC_HASH_LEN + 2 || v.s[0] != '"')
                return 0;
        for (size_t i = 0; i < DC_HASH_LEN; i++) {
                char c = v.s[i + 1];

                if (c >= 'A' && c <= 'F')
                        c += 'a' - 'A';
                if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
                        return 0;
                h[i] = c;
        }
        h[DC_HASH_LEN] = 0;
        for (size_t i = 0; i < m->n_checkpoints; i++)
                if (streq(m->checkpoints[i], h))
                        return 0;
        if (util_greedy_realloc((void **)&m->checkpoints, alloc, m->n_checkpoints + 1,
                                sizeof(*m->checkpoints)) < 0)
                return -ENOMEM;
        memcpy(m->checkpoints[m->n_checkpoints++], h, sizeof(h));
        return 0;
}

/* The JSON string text span v as a new string in *ret (NULL when v is not a string). 0 or
 * -ENOMEM. */
static int dc_messages_string(JsonSpan v, char **ret) {
        json_object *o = NULL;
        int r;

        *ret = NULL;
        if (!v.s || v.s[0] != '"')
                return 0;
        r = json_parse(v.s, v.n, &o);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        *ret = strdup(json_object_get_string(o));
        json_object_put(o);
        return *ret ? 0 : -ENOMEM;
}

/* One line (without its '\n'): its checkpoint kept, the first failure of the proof in m->why.
 * 0 or -ENOMEM. */
static int dc_messages_line(DcMessages *m, const char *id, const char *s, size_t n, size_t lineno,
                            size_t *alloc) {
        static const char *const keys[] = { "sessionId", "checkpointHash", "role", "content", "meta" };
        static const char *const meta_keys[] = { "userPrompt" }, *const prompt_keys[] = { "text" };
        JsonSpan v[ELEMENTSOF(keys)] = {}, mv[1] = {}, pv[1] = {};
        const JsonCapture prompt = { prompt_keys, 1, pv, NULL };
        const JsonCapture *const meta_children[] = { &prompt };
        const JsonCapture meta = { meta_keys, 1, mv, meta_children };
        const JsonCapture *const children[] = { NULL, NULL, NULL, NULL, &meta };
        const JsonCapture cap = { keys, ELEMENTSOF(keys), v, children };
        const char *t = s;
        size_t tn;
        int r;

        if (n > 0 && s[n - 1] == '\r')
                n--;
        tn = n;
        js_trim(&t, &tn);
        if (tn == 0)
                return 0;
        if (json_capture(s, n, true, &cap) < 0) {
                if (!m->why && !(m->why = util_strprintf("line %zu is not a JSON object", lineno)))
                        return -ENOMEM;
                return 0; /* Deep Code skips it too */
        }
        m->n_messages++;
        if (!m->why && !dc_messages_string_is(v[0], id) &&
            !(m->why = util_strprintf("line %zu: its sessionId is not %s", lineno, id)))
                return -ENOMEM;
        if (!m->has_prompt && dc_messages_string_is(v[2], "user")) {
                m->has_prompt = true;
                r = dc_messages_string(pv[0].s ? pv[0] : v[3], &m->prompt);
                if (r < 0)
                        return r;
        }
        return dc_messages_checkpoint(m, v[1], alloc);
}

/* Stop reading: why (a new string, NULL on ENOMEM), unless a failure is recorded already. */
static int dc_messages_stop(DcMessages *m, char *why) {
        if (m->why) {
                free(why);
                return 0;
        }
        m->why = why;
        return why ? 0 : -ENOMEM;
}

int dc_messages_read(int dfd, const char *id, DcMessages *ret) {
        _cleanup_free_ char *name = util_strjoin(id, ".jsonl", NULL), *buf = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t len = 0, cap = DC_CHUNK, lineno = 0, alloc = 0;
        off_t off = 0;
        struct stat st;
        int r;

        *ret = (DcMessages){};
        if (!name)
                return -ENOMEM;
        fd = fs_open_noatime(dfd, name, O_RDONLY);
        if (fd == -ENOENT || fd == -ENOMEM)
                return fd;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return dc_messages_stop(ret, strdup("the file cannot be read"));
        fs_fileid_from_stat(&ret->file, &st);
        buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                size_t done = 0, from;
                ssize_t k;
                char *nl;

                if (len == cap) {
                        char *b;

                        if (cap >= DC_LINE_MAX)
                                return dc_messages_stop(
                                        ret, util_strprintf("line %zu is %u bytes or longer",
                                                            lineno + 1, DC_LINE_MAX));
                        b = realloc(buf, cap * 2);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                        cap *= 2;
                }
                k = fs_pread_full(fd, buf + len, MIN(cap - len, (size_t)DC_CHUNK), off);
                if (k < 0)
                        return dc_messages_stop(
                                ret, util_strprintf("read error at byte %lld", (long long)off));
                off += k;
                from = len; /* buf[0..len) holds no '\n': each byte is searched once */
                len += (size_t)k;
                while ((nl = memchr(buf + from, '\n', len - from))) {
                        r = dc_messages_line(ret, id, buf + done, (size_t)(nl - buf) - done, ++lineno,
                                             &alloc);
                        if (r < 0)
                                return r;
                        from = done = (size_t)(nl - buf) + 1;
                }
                if (k == 0) { /* the end: a last line without '\n' */
                        ret->tail_incomplete = len > done;
                        r = dc_messages_line(ret, id, buf + done, len - done, ++lineno, &alloc);
                        if (r < 0)
                                return r;
                        break;
                }
                if (done > 0) {
                        memmove(buf, buf + done, len - done);
                        len -= done;
                }
        }
        ret->complete = true;
        ret->proven = !ret->why;
        return 0;
}
