/* dc-index.c: reading a project's sessions-index.json (see dc-index.h). */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "dc-index.h"
#include "fs.h"
#include "js.h"
#include "json.h"
#include "macro.h"
#include "strtable.h"

/* SessionStatus, as the index spells it */
static const char *const dc_status_table[_DC_STATUS_MAX] = {
        [DC_STATUS_PENDING] = "pending",
        [DC_STATUS_PROCESSING] = "processing",
        [DC_STATUS_WAITING_FOR_USER] = "waiting_for_user",
        [DC_STATUS_ASK_PERMISSION] = "ask_permission",
        [DC_STATUS_COMPLETED] = "completed",
        [DC_STATUS_FAILED] = "failed",
        [DC_STATUS_INTERRUPTED] = "interrupted",
        [DC_STATUS_PERMISSION_DENIED] = "permission_denied",
};
DEFINE_STRING_TABLE_TO_STRING_FUNC(dc_index_status_to_string, dc_status_table, DcStatus);

void dc_index_entry_done(DcEntry *e) {
        free(e->id);
        free(e->summary);
        free(e->forked_from);
        *e = (DcEntry){};
}

void dc_index_done(DcIndex *idx) {
        for (size_t i = 0; i < idx->n_entries; i++)
                dc_index_entry_done(&idx->entries[i]);
        free(idx->entries);
        free(idx->original_path);
        *idx = (DcIndex){};
}

/* A string member as a new string (*ret NULL when absent, not a string, or holding a NUL, which
 * no C string and no path of Deep Code's can). 0 or -ENOMEM. */
static int dc_index_string(json_object *o, const char *key, char **ret) {
        const char *s = json_get_string(o, key);
        json_object *v = NULL;

        *ret = NULL;
        if (!s || !json_object_object_get_ex(o, key, &v) ||
            strlen(s) != (size_t)json_object_get_string_len(v))
                return 0;
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

static msec_t dc_index_time(json_object *o, const char *key) {
        const char *s = json_get_string(o, key);
        msec_t t;

        return s && js_date_parse(s, &t) >= 0 ? t : 0;
}

/* normalizeSessionEntry() of what qgc needs. */
static int dc_index_entry(json_object *o, DcEntry *e) {
        json_object *fork = NULL;
        DcStatus st;
        int r;

        st = (DcStatus)strtable_lookup(dc_status_table, _DC_STATUS_MAX,
                                       json_get_string(o, "status"));
        e->status = st < 0 ? DC_STATUS_PENDING : st;
        e->create_time = dc_index_time(o, "createTime");
        e->update_time = dc_index_time(o, "updateTime");
        r = dc_index_string(o, "id", &e->id);
        if (r >= 0)
                r = dc_index_string(o, "summary", &e->summary);
        if (r >= 0 && json_object_object_get_ex(o, "forkedFrom", &fork) &&
            json_object_is_type(fork, json_type_object) && json_get_string(fork, "messageId"))
                r = dc_index_string(fork, "sessionId", &e->forked_from);
        return r;
}

int dc_index_read(int dfd, DcIndex *ret) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        json_object *root = NULL, *entries = NULL;
        const char *orig;
        size_t n = 0;
        int r;

        *ret = (DcIndex){};
        /* as the scan reads every file: no atime change where the owner may avoid it */
        fd = fs_open_noatime(dfd, DC_INDEX_FILE, O_RDONLY);
        r = fd < 0 ? fd : fs_read_fd(fd, DC_INDEX_MAX, &text, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                ret->state = r == -ENOENT ? DC_INDEX_ABSENT :
                             r == -EFBIG  ? DC_INDEX_TOO_BIG : DC_INDEX_UNREADABLE;
                return 0;
        }
        r = json_parse(text, n, &root);
        if (r == -ENOMEM)
                return r;
        ret->state = DC_INDEX_MALFORMED;
        orig = r < 0 ? NULL : json_get_string(root, "originalPath");
        if (!orig || !*orig || !json_object_object_get_ex(root, "entries", &entries) ||
            !json_object_is_type(entries, json_type_array))
                goto out;
        r = dc_index_string(root, "originalPath", &ret->original_path);
        if (r < 0 || !ret->original_path)
                goto out;
        n = json_object_array_length(entries);
        ret->entries = calloc(n ?: 1, sizeof(DcEntry));
        if (!ret->entries) {
                r = -ENOMEM;
                goto out;
        }
        for (; ret->n_entries < n; ret->n_entries++) {
                json_object *o = json_object_array_get_idx(entries, ret->n_entries);
                DcEntry *e = &ret->entries[ret->n_entries];

                e->status = DC_STATUS_PENDING;
                if (!json_object_is_type(o, json_type_object))
                        continue; /* Deep Code makes it an entry of a random id */
                r = dc_index_entry(o, e);
                if (r < 0) {
                        ret->n_entries++;
                        goto out;
                }
        }
        ret->state = DC_INDEX_OK;
        r = 0;
out:
        json_object_put(root);
        if (r == -ENOMEM)
                dc_index_done(ret);
        return r == -ENOMEM ? r : 0;
}

int dc_index_entry_read(int dfd, const char *name, DcEntry *ret) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        json_object *o = NULL;
        size_t n = 0;
        int r;

        *ret = (DcEntry){ .status = DC_STATUS_PENDING };
        fd = fs_open_noatime(dfd, name, O_RDONLY); /* as the scan reads: no atime changed */
        r = fd < 0 ? fd : fs_read_fd(fd, DC_INDEX_ENTRY_MAX, &text, &n);
        if (r < 0)
                return r;
        r = json_parse(text, n, &o);
        if (r == -ENOMEM)
                return r;
        r = r < 0 || !json_object_is_type(o, json_type_object) ? -EBADMSG : dc_index_entry(o, ret);
        json_object_put(o);
        if (r >= 0 && !ret->id)
                r = -EBADMSG;
        if (r < 0)
                dc_index_entry_done(ret);
        return r;
}

void dc_index_after_free(char **ids, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(ids[i]);
        free(ids);
}

bool dc_index_id_valid(const char *s, size_t n) {
        if (!s || n == 0 || n > DC_INDEX_ID_MAX || s[0] == '.')
                return false;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f || s[i] == '/')
                        return false;
        return true;
}

int dc_index_after_read(int dfd, const char *name, char ***ret, size_t *ret_n) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        char **ids = NULL;
        size_t n = 0, k = 0;
        int r;

        *ret = NULL;
        *ret_n = 0;
        fd = fs_open_noatime(dfd, name, O_RDONLY);
        r = fd < 0 ? fd : fs_read_fd(fd, DC_INDEX_AFTER_MAX, &text, &n);
        if (r < 0)
                return r;
        for (const char *p = text, *end = text + n; p < end;) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

                if (dc_index_id_valid(p, len)) {
                        char **a = reallocarray(ids, k + 1, sizeof(char *));

                        if (!a || !(a[k] = strndup(p, len))) {
                                dc_index_after_free(a ?: ids, k);
                                return -ENOMEM;
                        }
                        ids = a;
                        k++;
                }
                p += len + 1;
        }
        *ret = ids;
        *ret_n = k;
        return 0;
}
