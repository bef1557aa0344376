/* claims.c: the runtime claims of a chats/ directory: which names are
 * claims, reading them (JSON.parse, json.h's table), and finding the claims of one session id in
 * a sorted set. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "claims.h"
#include "fs.h"
#include "json.h"
#include "json-input.h"
#include "macro.h"
#include "util.h"

bool claims_is_claim_of(const char *name, const char *id) {
        size_t l = strlen(id);
        const char *p;

        if (util_ascii_strncasecmp(name, id, l) != 0 || name[l] != '.')
                return false;
        p = name + l + 1;
        if (streq(p, "runtime.json"))
                return true;
        if (*p < '0' || *p > '9')
                return false;
        while (*p >= '0' && *p <= '9')
                p++;
        return streq(p, ".runtime.json");
}

bool claims_is_claim_name(const char *name) {
        size_t n = strlen(name), k = strlen(".runtime.json");
        return n > k && streq(name + n - k, ".runtime.json");
}

int claims_add(ClaimSet *set, int chats_fd, const char *name) {
        json_object *o = NULL;
        RuntimeClaim c = {};
        struct stat st;
        const char *s;
        int r;

        c.file = strdup(name);
        if (!c.file)
                return -ENOMEM;
        if (fstatat(chats_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
                fs_fileid_from_stat(&c.id, &st);
        r = json_input_read(chats_fd, name, JSON_INPUT_CLAIM, &o);
        if (r == -ENOMEM) {
                free(c.file);
                return r;
        }
        if (r < 0 || !json_object_is_type(o, json_type_object))
                c.malformed = true;
        else {
                if ((s = json_get_string(o, "session_id")))
                        c.session_id = strdup(s);
                if ((s = json_get_string(o, "work_dir")))
                        c.work_dir = strdup(s);
                if ((s = json_get_string(o, "hostname")))
                        c.hostname = strdup(s);
                (void)json_get_int(o, "pid", &c.pid);
                if (!c.session_id)
                        c.malformed = true;
        }
        json_object_put(o);
        r = util_greedy_realloc((void **)&set->claims, &set->alloc, set->n + 1,
                                sizeof(RuntimeClaim));
        if (r < 0) {
                free(c.file);
                free(c.session_id);
                free(c.work_dir);
                free(c.hostname);
                return r;
        }
        set->claims[set->n++] = c;
        return 0;
}

int claims_load(ClaimSet *set, int chats_fd) {
        _cleanup_close_ int fd2 = fs_open_dir(chats_fd, "."); /* its own offset */
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        const char *name;
        unsigned char type;
        int r = 0, k;

        if (fd2 < 0)
                return fd2;
        if (!d)
                return -ENOMEM;
        fs_dir_init(d, fd2);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                if (!claims_is_claim_name(name))
                        continue;
                r = claims_add(set, chats_fd, name);
                if (r < 0)
                        break;
        }
        return r < 0 ? r : k;
}

void claims_done(ClaimSet *set) {
        for (size_t i = 0; i < set->n; i++) {
                free(set->claims[i].file);
                free(set->claims[i].session_id);
                free(set->claims[i].work_dir);
                free(set->claims[i].hostname);
        }
        free(set->claims);
        *set = (ClaimSet){};
}

bool claims_match(const RuntimeClaim *c, const char *id) {
        size_t n = strlen(id);

        if (c->session_id)
                return util_ascii_strcasecmp(c->session_id, id) == 0;
        /* malformed: tie it to a session by its name, <id>.runtime.json or <id>.<pid>... */
        return util_ascii_strncasecmp(c->file, id, n) == 0 && c->file[n] == '.';
}

/* The id a claim names, as a (pointer, length) key: session_id, or the file name up to its
 * first '.' when malformed. */
static const char *claims_key(const RuntimeClaim *c, size_t *ret_len) {
        if (c->session_id) {
                *ret_len = strlen(c->session_id);
                return c->session_id;
        }
        *ret_len = strcspn(c->file, ".");
        return c->file;
}

/* Case-insensitive compare of a key (a, an) with the NUL-terminated b. */
static int claims_key_cmp(const char *a, size_t an, const char *b) {
        return util_ascii_strcasecmp_n(a, an, b, strlen(b));
}

static int claims_cmp(const void *pa, const void *pb) {
        size_t an, bn;
        const char *ak = claims_key(pa, &an), *bk = claims_key(pb, &bn);

        return util_ascii_strcasecmp_n(ak, an, bk, bn);
}

void claims_sort(ClaimSet *set) {
        if (set->n > 1)
                qsort(set->claims, set->n, sizeof(RuntimeClaim), claims_cmp);
        set->sorted = true;
}

void claims_range(const ClaimSet *set, const char *id, size_t *ret_first, size_t *ret_end) {
        size_t lo = 0, hi, end;

        if (!set || !set->sorted) {
                *ret_first = 0;
                *ret_end = set ? set->n : 0;
                return;
        }
        hi = set->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2, kn;
                const char *k = claims_key(&set->claims[mid], &kn);
                if (claims_key_cmp(k, kn, id) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (end = lo; end < set->n; end++) {
                size_t kn;
                const char *k = claims_key(&set->claims[end], &kn);
                if (claims_key_cmp(k, kn, id) != 0)
                        break;
        }
        *ret_first = lo;
        *ret_end = end;
}
