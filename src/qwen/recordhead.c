/* recordhead.c: the first record of a transcript, read as Qwen's readFirstMaintainableRecord()
 * reads it (64 KiB reads, tolerant lines, the first JSON object wins, a 1 MiB bound in UTF-16
 * units), with a quick first look at the first 4 KiB. */
#include "autoconf.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "js.h"
#include "macro.h"
#include "record-int.h"
#include "utf8.h"

#define RECORD_HEAD_CHUNK (64 * 1024) /* readFirstMaintainableRecord reads 64 KiB at a time */

void head_info_done(HeadInfo *h) {
        if (!h)
                return;
        free(h->session_id);
        free(h->cwd);
        *h = (HeadInfo){};
}

static char *record_get_string(json_object *obj, const char *key) {
        json_object *v;

        if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return strndup(json_object_get_string(v), (size_t)json_object_get_string_len(v));
}

static bool record_has_string(json_object *obj, const char *key) {
        json_object *v;

        return json_object_object_get_ex(obj, key, &v) && json_object_is_type(v, json_type_string);
}

static int record_take_first(json_object *obj, void *userdata) {
        json_object **first = userdata;

        if (!*first)
                *first = json_object_get(obj);
        return 0;
}

/* Whether the pending line would count as "starts with {" or blank after trimStart(). */
static bool record_head_prefix_is_record(const char *s, size_t n) {
        const char *p = s;
        size_t len = n, k;

        while ((k = js_space_at((const unsigned char *)p, len)) > 0) {
                p += k;
                len -= k;
        }
        return len == 0 || *p == '{';
}

static int record_head_fill(json_object *first, HeadInfo *ret) {
        HeadInfo h = {};

        if (record_has_string(first, "sessionId")) {
                h.session_id = record_get_string(first, "sessionId");
                if (!h.session_id)
                        return -ENOMEM;
        }
        if (record_has_string(first, "cwd")) {
                h.cwd = record_get_string(first, "cwd");
                if (!h.cwd) {
                        head_info_done(&h);
                        return -ENOMEM;
                }
        }
        h.timestamp = record_timestamp(first);
        *ret = h;
        return 0;
}

/* Parse complete lines in buf[0..*len) and keep the partial rest; stops at the first object. */
static int record_head_lines(char *buf, size_t *len, json_object **first) {
        size_t pos = 0;
        char *nl;
        int r;

        while (!*first && (nl = memchr(buf + pos, '\n', *len - pos))) {
                r = record_parse_line(buf + pos, (size_t)(nl - (buf + pos)), record_take_first,
                                      first);
                if (r < 0)
                        return r;
                pos = (size_t)(nl - buf) + 1;
        }
        memmove(buf, buf + pos, *len - pos);
        *len -= pos;
        return 0;
}

/* One head line without building it: when the trimmed line is one valid JSON object (what
 * JSON.parse accepts), fill *ret from its members and return 1; 0 when the line needs the
 * tolerant parser; -ENOMEM. */
static int record_head_line_quick(const char *line, size_t len, HeadInfo *ret) {
        static const char *const keys[] = { "sessionId", "cwd", "timestamp" };
        JsonSpan spans[ELEMENTSOF(keys)];
        HeadInfo h = {};
        int r;

        js_trim(&line, &len);
        if (len == 0 || *line != '{')
                return 0;
        if (json_members(line, len, /* validate= */ true, keys, ELEMENTSOF(keys), spans) < 0)
                return 0;
        if ((r = record_span_string(&spans[0], &h.session_id)) < 0 ||
            (r = record_span_string(&spans[1], &h.cwd)) < 0 ||
            (r = record_span_timestamp(&spans[2], &h.timestamp)) < 0) {
                head_info_done(&h);
                return r;
        }
        *ret = h;
        return 1;
}

/* The common case of record_read_head(): the first record is on a complete line of buf[0..k),
 * the file's first k bytes. Lines are taken in order exactly as the full reader takes them.
 * Returns 1 when decided (*ret filled), 0 when the full reader must decide, or -ENOMEM. */
static int record_head_in_buf(const char *buf, size_t k, HeadInfo *ret) {
        const char *p = buf, *end = buf + k, *nl;
        json_object *first = NULL;
        int r;

        while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
                r = record_head_line_quick(p, (size_t)(nl - p), ret);
                if (r != 0)
                        return r;
                r = record_parse_line(p, (size_t)(nl - p), record_take_first, &first);
                if (r < 0)
                        return r;
                if (first) {
                        r = record_head_fill(first, ret);
                        json_object_put(first);
                        return r < 0 ? r : 1;
                }
                p = nl + 1;
        }
        return 0;
}

/* readFirstMaintainableRecord(): read 64 KiB at a time; lines are trimmed and parsed tolerantly
 * until one yields an object; a pending line without newline longer than 1 Mi UTF-16 units
 * stops the read. */
static int record_read_head_full(int fd, HeadInfo *ret, const char **ret_why) {
        _cleanup_free_ char *buf = NULL;
        json_object *first = NULL;
        const size_t max_cap = 4 * RECORD_HEAD_MAX + RECORD_HEAD_CHUNK;
        size_t len = 0, cap = 2 * RECORD_HEAD_CHUNK;
        uint64_t off = 0;
        bool saw_content = false;
        const char *why = NULL;
        int r;

        buf = malloc(cap);
        if (!buf)
                return -ENOMEM;

        for (;;) {
                ssize_t k;
                size_t held;

                if (cap - len < RECORD_HEAD_CHUNK) {
                        /* a long pending line: grow towards the most 1 Mi UTF-16 units can take */
                        size_t ncap = MIN(cap * 2, max_cap);
                        char *nb;

                        if (ncap - len < RECORD_HEAD_CHUNK) {
                                why = "first line longer than 1 MiB";
                                r = -E2BIG;
                                goto finish;
                        }
                        nb = realloc(buf, ncap);
                        if (!nb) {
                                r = -ENOMEM;
                                goto finish;
                        }
                        buf = nb;
                        cap = ncap;
                }
                k = record_pread(fd, buf + len, RECORD_HEAD_CHUNK, off);

                if (k < 0) {
                        why = "cannot read the first record";
                        r = (int)k;
                        goto finish;
                }
                if (k == 0) {
                        /* EOF: the last line without newline counts too. */
                        if (len > 0) {
                                r = record_parse_line(buf, len, record_take_first, &first);
                                if (r < 0)
                                        goto finish;
                        }
                        break;
                }
                off += (uint64_t)k;
                for (ssize_t i = 0; i < k && !saw_content; i++)
                        if (!strchr(" \t\r\n", buf[len + (size_t)i]))
                                saw_content = true;
                len += (size_t)k;

                /* units <= bytes, so only a pending line over 1 MiB of bytes needs counting */
                if (len > RECORD_HEAD_MAX && !memchr(buf, '\n', len) &&
                    utf8_utf16_units(buf, len, &held) > RECORD_HEAD_MAX) {
                        if (record_head_prefix_is_record(buf, len)) {
                                why = "first line longer than 1 MiB";
                                r = -E2BIG;
                        } else {
                                why = "no JSON object in the first line";
                                r = -EBADMSG;
                        }
                        goto finish;
                }
                r = record_head_lines(buf, &len, &first);
                if (r < 0)
                        goto finish;
                if (first)
                        break;
        }

        if (!first) {
                if (off == 0 || !saw_content) {
                        why = "empty transcript";
                        r = -ENODATA;
                } else {
                        why = "no JSON object in the first line";
                        r = -EBADMSG;
                }
                goto finish;
        }
        r = record_head_fill(first, ret);
        if (r < 0)
                why = "out of memory";
finish:
        json_object_put(first);
        if (r < 0 && ret_why)
                *ret_why = why ? why : "cannot parse the first record";
        return r < 0 ? r : 0;
}

/* record_head_in_buf() on the first RECORD_HEAD_QUICK bytes, else the full reader. */
int record_read_head_from(int fd, char *buf, size_t k, HeadInfo *ret, const char **ret_why) {
        int r = record_head_in_buf(buf, k, ret);

        if (r == 0)
                return record_read_head_full(fd, ret, ret_why);
        if (r < 0 && ret_why)
                *ret_why = "out of memory";
        return r < 0 ? r : 0;
}

int record_read_head(int fd, HeadInfo *ret, const char **ret_why) {
        char buf[RECORD_HEAD_QUICK];
        ssize_t k;

        assert(ret);
        k = record_pread(fd, buf, sizeof(buf), 0);
        return record_read_head_from(fd, buf, k > 0 ? (size_t)k : 0, ret, ret_why);
}
