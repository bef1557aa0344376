/* hygiene-stale.c: the examination of one project entry for the stale-project rule (below), shared
 * by the scan (hygiene-scan.c) and the executor's re-check before removal (hygiene-reclaim.c):
 * every file inside walked, every recorded cwd collected and judged, liveness last. Read-only.
 *
 * Stale project entries (upstream PR #9110, Storage.cleanOrphanProjectDirs):
 * projects/<dir>/ whose every recorded cwd (each line of its transcripts and subagent
 * transcripts, each runtime claim's work_dir, each worktree sidecar's worktreePath) is a
 * temporary directory that no longer exists. As upstream: a marker, projects/<dir>/
 * .qwen-orphan-since, written on first sight (its mtime is the time), and the entry goes only once
 * the marker and every file inside are older than stale-project-min-age (at least 24 h; of
 * session-organization.v1.json, the newest time its entries record, not its mtime, which qgc's own
 * edit sets: hygiene_stale_org_activity()); any
 * live sidecar, a file over 8 MiB (not read whole: incomplete evidence) or a cwd that exists
 * again keeps it, and a cwd that exists again removes the marker. Its sessions go first through
 * the normal delete (usage salvaged, shared files edited, sidecars, file-history): the entry is
 * removed only when no transcript is left in it. What qgc does not know inside keeps it. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "erase.h"
#include "fs.h"
#include "fs.h"
#include "hygiene.h"
#include "js.h"
#include "json.h"
#include "json-input.h"
#include "live.h"
#include "macro.h"
#include "qwen.h"
#include "record.h"
#include "util.h"

#define HYGIENE_STALE_READ_MAX (8U * 1024 * 1024)
#define HYGIENE_STALE_LINE_MAX (1U * 1024 * 1024)

void hygiene_stale_done(HygieneStale *h) {
        free(h->why);
        h->why = NULL;
        strbuf_done(&h->cwds);
        hashmap_done(&h->cwd_set, NULL);
        h->cwd_indexed = 0;
}

/* Note why the entry cannot go (the first reason wins). 0 or -ENOMEM. */
_printf_(2, 3) static int hygiene_stale_keep(HygieneStale *h, const char *fmt, ...) {
        va_list ap;
        int r;

        if (h->why)
                return 0;
        va_start(ap, fmt);
        r = vasprintf(&h->why, fmt, ap);
        va_end(ap);
        if (r < 0) {
                h->why = NULL;
                return -ENOMEM;
        }
        return 0;
}

static void hygiene_stale_count(HygieneStale *h, const struct stat *st, bool is_activity) {
        h->bytes += (uint64_t)st->st_size;
        h->bytes_alloc += (uint64_t)st->st_blocks * 512;
        if (is_activity && S_ISREG(st->st_mode))
                h->mtime = MAX(h->mtime, util_timespec_to_msec(&st->st_mtim));
}

/* A cwd of the set: n bytes at s, looked up in buf. */
typedef struct HygieneCwdKey {
        const char *buf, *s;
        size_t n;
} HygieneCwdKey;

static bool hygiene_cwd_eq(const void *entry, const void *key) {
        const HygieneCwdKey *k = key;
        const char *p = k->buf + ((uintptr_t)entry - 1);

        return memcmp(p, k->s, k->n) == 0 && p[k->n] == '\n';
}

/* The slot of the cwd s[0..n) in h's set (h->cwds indexed up to its end first: a caller may have
 * appended lines of its own). */
static int hygiene_cwd_slot(HygieneStale *h, const char *s, size_t n, HashSlot **ret) {
        while (h->cwd_indexed < h->cwds.len) {
                const char *p = h->cwds.buf + h->cwd_indexed;
                const char *e = memchr(p, '\n', h->cwds.len - h->cwd_indexed);
                size_t l = e ? (size_t)(e - p) : h->cwds.len - h->cwd_indexed;
                HygieneCwdKey k = { h->cwds.buf, p, l };
                uint64_t hash = hashmap_hash_bytes(p, l);
                HashSlot *slot;

                if (hashmap_reserve(&h->cwd_set, 1) < 0)
                        return -ENOMEM;
                slot = hashmap_slot(&h->cwd_set, hash, hygiene_cwd_eq, &k);
                if (!slot->entry)
                        hashmap_fill(&h->cwd_set, slot, hash, (void *)(uintptr_t)(h->cwd_indexed + 1));
                h->cwd_indexed += l + 1;
        }
        if (hashmap_reserve(&h->cwd_set, 1) < 0)
                return -ENOMEM;
        HygieneCwdKey k = { h->cwds.buf, s, n };
        *ret = hashmap_slot(&h->cwd_set, hashmap_hash_bytes(s, n), hygiene_cwd_eq, &k);
        return 0;
}

/* A recorded cwd (once each: a hash set over h->cwds, so that many cwds cost linear time). */
static int hygiene_stale_cwd(HygieneStale *h, const char *cwd) {
        size_t n = strlen(cwd), at;
        HashSlot *slot;
        int r;

        if (n == 0 || memchr(cwd, '\n', n))
                return hygiene_stale_keep(h, "a recorded cwd qgc cannot judge");
        r = hygiene_cwd_slot(h, cwd, n, &slot);
        if (r < 0)
                return r;
        if (slot->entry)
                return 0;
        at = h->cwds.len;
        if (strbuf_printf(&h->cwds, "%s\n", cwd) < 0)
                return -ENOMEM;
        hashmap_fill(&h->cwd_set, slot, hashmap_hash_bytes(cwd, n), (void *)(uintptr_t)(at + 1));
        h->cwd_indexed = h->cwds.len;
        return 0;
}

static int hygiene_stale_obj(json_object *obj, void *userdata) {
        json_object *cwd = NULL;

        if (json_object_object_get_ex(obj, "cwd", &cwd) && json_object_is_type(cwd, json_type_string))
                return hygiene_stale_cwd(userdata, json_object_get_string(cwd));
        return 0;
}

static int hygiene_stale_line(const char *line, size_t len, uint64_t offset, bool truncated,
                              void *userdata) {
        HygieneStale *h = userdata;
        int r;

        if (truncated)
                return hygiene_stale_keep(h, "a record too long to read whole");
        r = record_parse_line(line, len, hygiene_stale_obj, h);
        return r < 0 ? r : 0;
}

/* Every cwd of every line of a transcript (dfd, name) of st. */
static int hygiene_stale_lines(HygieneStale *h, int dfd, const char *name, const struct stat *st) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        if ((uint64_t)st->st_size > HYGIENE_STALE_READ_MAX)
                return hygiene_stale_keep(h, "a transcript over 8M, not read whole: %s", name);
        fd = fs_open_noatime(dfd, name, O_RDONLY);
        if (fd < 0)
                return fd == -ENOMEM ? fd : hygiene_stale_keep(h, "an unreadable transcript: %s", name);
        r = record_for_each_line_at(fd, HYGIENE_STALE_LINE_MAX, hygiene_stale_line, h);
        if (r == -ENOMEM)
                return r;
        return r < 0 ? hygiene_stale_keep(h, "an unreadable transcript: %s", name) : 0;
}

/* name is <id><suffix> with a valid session id: the id in id (SESSION_ID_MAX + 1). */
static bool hygiene_stale_id(const char *name, const char *suffix, char *id) {
        size_t n = strlen(name), sl = strlen(suffix);

        if (n <= sl || n - sl > SESSION_ID_MAX || !util_endswith(name, suffix))
                return false;
        memcpy(id, name, n - sl);
        id[n - sl] = '\0';
        return qwen_session_id_valid(id);
}

/* stat (dfd, name) for the walk: 1 a regular file or directory on dev, 0 (noted) otherwise. */
static int hygiene_stale_stat(HygieneStale *h, int dfd, const char *name, struct stat *st) {
        bool mount = false;
        int r = fs_statat(dfd, name, st, &mount);

        if (r == -ENOENT)
                return 0; /* vanished (Qwen's own cleanup) */
        if (r < 0)
                return hygiene_stale_keep(h, "an entry cannot be examined: %s", name) ?: 0;
        if (st->st_dev != h->dev || mount)
                return hygiene_stale_keep(h, "a mount point inside: %s", name) ?: 0;
        if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode))
                return hygiene_stale_keep(h, "an entry qgc does not know: %s", name) ?: 0;
        return 1;
}

/* A session of this entry? */
static const Session *hygiene_stale_session(const HygieneStale *h, const char *id) {
        const Session *s = inventory_find(h->inv, h->tree, id);
        return s && s->project_dir && streq(s->project_dir, h->dir) ? s : NULL;
}

/* Is chats/<name> a file of a session of this entry (its transcript or a sidecar), counted in
 * the session's bytes? */
static bool hygiene_stale_owned(const HygieneStale *h, const char *name) {
        static const char *const suffixes[] = { ".jsonl", ".worktree.json", ".pr.json",
                                                ".ledger.jsonl" };
        char id[SESSION_ID_MAX + 1];

        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++)
                if (hygiene_stale_id(name, suffixes[i], id))
                        return hygiene_stale_session(h, id) != NULL;
        return false;
}

/* chats/ (cfd). */
static int hygiene_stale_chats(HygieneStale *h, int cfd) {
        FsDir d;
        const char *name;
        unsigned char type;
        int k, r;

        fs_dir_init(&d, cfd);
        while ((k = fs_dir_next(&d, &name, &type)) > 0) {
                char id[SESSION_ID_MAX + 1];
                struct stat st;

                r = hygiene_stale_stat(h, cfd, name, &st);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                hygiene_stale_count(h, &st, true);
                if (S_ISREG(st.st_mode) && hygiene_stale_owned(h, name)) {
                        /* a session's file: its bytes are the session's (no double count) */
                        h->bytes -= (uint64_t)st.st_size;
                        h->bytes_alloc -= (uint64_t)st.st_blocks * 512;
                }
                if (S_ISDIR(st.st_mode) && streq(name, "archive")) {
                        _cleanup_close_ int afd = fs_open_noatime(cfd, name, O_RDONLY | O_DIRECTORY);
                        FsDir a;
                        const char *an;
                        unsigned char at;

                        if (afd < 0) {
                                r = hygiene_stale_keep(h, "chats/archive/ cannot be listed");
                                if (r < 0)
                                        return r;
                                continue;
                        }
                        fs_dir_init(&a, afd);
                        if (fs_dir_next(&a, &an, &at) != 0) {
                                r = hygiene_stale_keep(h, "archived sessions stay (archiving is "
                                                          "retention)");
                                if (r < 0)
                                        return r;
                        }
                        continue;
                }
                if (S_ISREG(st.st_mode) && hygiene_stale_id(name, ".jsonl", id)) {
                        h->transcripts = true;
                        r = hygiene_stale_session(h, id)
                                    ? hygiene_stale_lines(h, cfd, name, &st)
                                    : hygiene_stale_keep(h, "a transcript the scan did not see: "
                                                            "chats/%s", name);
                } else if (S_ISREG(st.st_mode) && hygiene_stale_id(name, ".worktree.json", id)) {
                        json_object *o = NULL, *p = NULL;

                        if (json_input_read(cfd, name, JSON_INPUT_WORKTREE, &o) < 0 ||
                            !json_object_is_type(o, json_type_object))
                                r = hygiene_stale_keep(h, "an unreadable worktree sidecar: %s",
                                                       name);
                        else if (json_object_object_get_ex(o, "worktreePath", &p) &&
                                 json_object_is_type(p, json_type_string))
                                r = hygiene_stale_cwd(h, json_object_get_string(p));
                        else
                                r = 0;
                        json_object_put(o);
                } else if (S_ISREG(st.st_mode) && (hygiene_stale_id(name, ".pr.json", id) ||
                                                   hygiene_stale_id(name, ".ledger.jsonl", id)))
                        r = 0;
                else if (S_ISREG(st.st_mode) && claims_is_claim_name(name)) {
                        _cleanup_(claims_done) ClaimSet set = {};

                        r = claims_add(&set, cfd, name);
                        if (r >= 0 && set.n == 1 && !set.claims[0].malformed &&
                            set.claims[0].work_dir)
                                r = hygiene_stale_cwd(h, set.claims[0].work_dir);
                        else if (r >= 0)
                                r = hygiene_stale_keep(h, "a runtime claim qgc cannot read: %s",
                                                       name);
                } else
                        r = hygiene_stale_keep(h, "an entry qgc does not know: chats/%s", name);
                if (r < 0)
                        return r;
        }
        if (k < 0)
                return k == -ENOMEM ? k : hygiene_stale_keep(h, "chats/ cannot be listed");
        return 0;
}

static bool hygiene_is_agent_file(const char *n) {
        return strneq(n, "agent-", 6) &&
               (util_endswith(n, ".jsonl") || util_endswith(n, ".meta.json") ||
                util_endswith(n, ".jsonl.stream"));
}

/* subagents/ (sfd): <id>/agent-<x>.jsonl, .meta.json, .jsonl.stream. */
static int hygiene_stale_subagents(HygieneStale *h, int sfd) {
        FsDir d;
        const char *name;
        unsigned char type;
        int k, r;

        fs_dir_init(&d, sfd);
        while ((k = fs_dir_next(&d, &name, &type)) > 0) {
                _cleanup_close_ int ifd = -EBADF;
                struct stat st;
                FsDir e;
                const char *en;
                unsigned char et;
                bool owned;
                int m;

                r = hygiene_stale_stat(h, sfd, name, &st);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                owned = S_ISDIR(st.st_mode) && hygiene_stale_session(h, name) != NULL;
                if (!owned) /* else the session's bytes (no double count) */
                        hygiene_stale_count(h, &st, true);
                if (!S_ISDIR(st.st_mode) || !qwen_session_id_valid(name)) {
                        r = hygiene_stale_keep(h, "an entry qgc does not know: subagents/%s", name);
                        if (r < 0)
                                return r;
                        continue;
                }
                ifd = fs_open_noatime(sfd, name, O_RDONLY | O_DIRECTORY);
                if (ifd < 0) {
                        r = hygiene_stale_keep(h, "subagents/%s cannot be listed", name);
                        if (r < 0)
                                return r;
                        continue;
                }
                fs_dir_init(&e, ifd);
                while ((m = fs_dir_next(&e, &en, &et)) > 0) {
                        struct stat est;

                        r = hygiene_stale_stat(h, ifd, en, &est);
                        if (r < 0)
                                return r;
                        if (r == 0)
                                continue;
                        hygiene_stale_count(h, &est, true);
                        if (owned) { /* the session's bytes (no double count) */
                                h->bytes -= (uint64_t)est.st_size;
                                h->bytes_alloc -= (uint64_t)est.st_blocks * 512;
                        }
                        if (!S_ISREG(est.st_mode) || !hygiene_is_agent_file(en))
                                r = hygiene_stale_keep(h, "an entry qgc does not know: "
                                                          "subagents/%s/%s", name, en);
                        else if (util_endswith(en, ".jsonl"))
                                r = hygiene_stale_lines(h, ifd, en, &est);
                        if (r < 0)
                                return r;
                }
                if (m < 0 && (r = hygiene_stale_keep(h, "subagents/%s cannot be listed", name)) < 0)
                        return r;
        }
        if (k < 0)
                return k == -ENOMEM ? k : hygiene_stale_keep(h, "subagents/ cannot be listed");
        return 0;
}

/* The review directory name of a session of this entry? */
static int hygiene_stale_review_name(const HygieneStale *h, const char *name) {
        for (size_t i = h->first; i < h->end; i++) {
                _cleanup_free_ char *n = erase_review_dir_name(h->inv->sessions[i].id);
                if (!n)
                        return -ENOMEM;
                if (streq(n, name))
                        return 1;
        }
        return 0;
}

/* workflows/ (wfd): only generated/review/<a session's review dir>/ (erase.h). */
static int hygiene_stale_workflows(HygieneStale *h, int wfd) {
        static const char *const path[] = { "generated", "review" };
        _cleanup_close_ int gfd = -EBADF, rvfd = -EBADF;
        int *fds[2] = { &gfd, &rvfd };
        int dfd = wfd;
        FsDir d;
        const char *name;
        unsigned char type;
        int k, r;

        for (size_t lvl = 0; lvl <= ELEMENTSOF(path); lvl++) {
                fs_dir_init(&d, dfd);
                while ((k = fs_dir_next(&d, &name, &type)) > 0) {
                        struct stat st;

                        r = hygiene_stale_stat(h, dfd, name, &st);
                        if (r < 0)
                                return r;
                        if (r == 0)
                                continue;
                        hygiene_stale_count(h, &st, true);
                        if (lvl < ELEMENTSOF(path) && S_ISDIR(st.st_mode) && streq(name, path[lvl]))
                                continue;
                        r = lvl == ELEMENTSOF(path) && S_ISDIR(st.st_mode)
                                    ? hygiene_stale_review_name(h, name)
                                    : 0;
                        if (r < 0)
                                return r;
                        if (r > 0) {
                                _cleanup_close_ int rfd = fs_open_noatime(dfd, name,
                                                                      O_RDONLY | O_DIRECTORY);
                                HygieneSum sum = {};

                                if (rfd >= 0)
                                        hygiene_sum(rfd, h->dev, 1, &sum);
                                h->bytes += sum.bytes;
                                h->bytes_alloc += sum.bytes_alloc;
                                h->mtime = MAX(h->mtime, sum.mtime);
                                if (rfd >= 0 && !sum.incomplete)
                                        continue;
                        }
                        r = hygiene_stale_keep(h, "an entry qgc does not know: workflows/.../%s",
                                               name);
                        if (r < 0)
                                return r;
                }
                if (k < 0)
                        return k == -ENOMEM ? k
                                            : hygiene_stale_keep(h, "workflows/ cannot be listed");
                if (lvl == ELEMENTSOF(path))
                        break;
                *fds[lvl] = hygiene_open_dir(dfd, path[lvl], h->dev, NULL);
                if (*fds[lvl] < 0)
                        break; /* nothing below */
                dfd = *fds[lvl];
        }
        return 0;
}

/* The cwds a marker of ours recorded: its lines that are absolute paths (a marker of another
 * writer's format adds none). */
static int hygiene_stale_marker_cwds(HygieneStale *h, int pfd) {
        _cleanup_free_ char *text = NULL;
        size_t n = 0;
        char *p, *e;
        int r;

        r = fs_read_file(pfd, HYGIENE_STALE_MARKER, HYGIENE_STALE_MARKER_MAX, &text, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || memchr(text, '\0', n))
                return hygiene_stale_keep(h, "its marker cannot be read");
        for (p = text; p < text + n; p = e + 1) {
                e = memchr(p, '\n', (size_t)(text + n - p));
                if (!e)
                        break; /* not a whole line */
                *e = '\0';
                if (p[0] == '/' && (r = hygiene_stale_cwd(h, p)) < 0)
                        return r;
        }
        return 0;
}

/* The newest time one organization object (a session's entry or a group) records. */
static msec_t hygiene_stale_org_times(json_object *o) {
        static const char *const keys[] = { "updatedAt", "createdAt", "pinnedAt" };
        msec_t newest = 0;

        for (size_t k = 0; json_object_is_type(o, json_type_object) && k < ELEMENTSOF(keys); k++) {
                const char *v = json_get_string(o, keys[k]);
                msec_t t;

                if (v && js_date_parse(v, &t) >= 0)
                        newest = MAX(newest, t);
        }
        return newest;
}

/* The activity session-organization.v1.json (of st, in pfd) records: the newest updatedAt,
 * createdAt or pinnedAt of its sessions' entries and groups, which Qwen sets when a person
 * organizes a session. Its mtime is not the activity: qgc's own edit (a delete taking its
 * session's entry out) sets it too, and a stale removal killed after that edit would then be
 * kept as recently written. A file that cannot be read counts with its mtime. */
static void hygiene_stale_org_activity(HygieneStale *h, int pfd, const struct stat *st) {
        json_object *o = NULL, *v = NULL;
        msec_t newest = 0;

        if (json_input_read(pfd, "session-organization.v1.json", JSON_INPUT_ORGANIZATION, &o) < 0 ||
            !json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                h->mtime = MAX(h->mtime, util_timespec_to_msec(&st->st_mtim));
                return;
        }
        if (json_object_object_get_ex(o, "sessions", &v) && json_object_is_type(v, json_type_object)) {
                json_object_object_foreach(v, key, e) {
                        (void)key;
                        newest = MAX(newest, hygiene_stale_org_times(e));
                }
        }
        if (json_object_object_get_ex(o, "groups", &v) && json_object_is_type(v, json_type_array))
                for (size_t i = 0; i < json_object_array_length(v); i++)
                        newest = MAX(newest, hygiene_stale_org_times(json_object_array_get_idx(v, i)));
        json_object_put(o);
        h->mtime = MAX(h->mtime, newest);
}

/* Every entry of projects/<dir>/ (pfd). */
int hygiene_stale_walk(HygieneStale *h, int pfd) {
        FsDir d;
        const char *name;
        unsigned char type;
        int k, r;

        fs_dir_init(&d, pfd);
        while ((k = fs_dir_next(&d, &name, &type)) > 0) {
                _cleanup_close_ int sub = -EBADF;
                struct stat st;

                r = hygiene_stale_stat(h, pfd, name, &st);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                if (streq(name, HYGIENE_STALE_MARKER) && S_ISREG(st.st_mode)) {
                        fs_fileid_from_stat(&h->marker, &st);
                        hygiene_stale_count(h, &st, false);
                        r = hygiene_stale_marker_cwds(h, pfd);
                        if (r < 0)
                                return r;
                        continue;
                }
                /* qgc's own temporary file (".<name>.qgc-tmp": the file an edit of
                 * session-organization.v1.json put aside, left by a killed run) is no activity:
                 * the recovery steps in front of this run's plan remove it */
                if (S_ISREG(st.st_mode) && fs_is_temp_name(name))
                        continue;
                hygiene_stale_count(h, &st, !streq(name, "session-organization.v1.json"));
                if (streq(name, "session-organization.v1.json") && S_ISREG(st.st_mode)) {
                        if (!h->skip_org)
                                hygiene_stale_org_activity(h, pfd, &st);
                        continue;
                }
                if (S_ISDIR(st.st_mode) && (streq(name, "chats") || streq(name, "subagents") ||
                                            streq(name, "workflows"))) {
                        sub = fs_open_noatime(pfd, name, O_RDONLY | O_DIRECTORY);
                        if (sub < 0)
                                r = hygiene_stale_keep(h, "%s/ cannot be listed", name);
                        else if (streq(name, "chats"))
                                r = hygiene_stale_chats(h, sub);
                        else if (streq(name, "subagents"))
                                r = hygiene_stale_subagents(h, sub);
                        else
                                r = hygiene_stale_workflows(h, sub);
                } else
                        r = hygiene_stale_keep(h, "an entry qgc does not know: %s", name);
                if (r < 0)
                        return r;
        }
        if (k < 0)
                return k == -ENOMEM ? k : hygiene_stale_keep(h, "cannot be listed");
        return 0;
}

/* Each recorded cwd: a temporary directory that does not exist. */
int hygiene_stale_judge_cwds(HygieneStale *h) {
        _cleanup_free_ char *copy = NULL;
        char *p, *e;

        if (!h->cwds.buf || !h->cwds.buf[0])
                return hygiene_stale_keep(h, "no recorded cwd");
        copy = strdup(h->cwds.buf);
        if (!copy)
                return -ENOMEM;
        for (p = copy; *p; p = e + 1) {
                struct stat st;

                e = strchr(p, '\n');
                *e = '\0';
                if (!hygiene_temp_path(p)) {
                        h->cwd_back = true;
                        return hygiene_stale_keep(h, "a recorded cwd is no temporary directory: %s", p);
                }
                /* outside the tree: a plain lstat proves only absence */
                if (lstat(p, &st) == 0) {
                        h->cwd_back = true;
                        return hygiene_stale_keep(h, "a recorded cwd exists: %s", p);
                }
                if (errno != ENOENT)
                        return hygiene_stale_keep(h, "cannot tell whether %s exists", p);
        }
        return 0;
}

/* live_project_busy()'s filter: a session of this tree found only in other projects. */
bool hygiene_stale_elsewhere(const char *id, void *userdata) {
        const HygieneStale *h = userdata;
        const Session *s = inventory_find(h->inv, h->tree, id);

        return s && !(s->project_dir && streq(s->project_dir, h->dir));
}

/* Examine projects/<dir>/ (pfd, open; the sessions [first, end) of inv are its): every fact
 * the rule needs, liveness last (the costliest). */
int hygiene_stale_examine(HygieneStale *h, int pfd) {
        _cleanup_free_ char *busy = NULL;
        _cleanup_close_ int cfd = -EBADF;
        int r;

        for (size_t i = h->first; i < h->end; i++) {
                const Session *s = &h->inv->sessions[i];
                if (s->owner != OWNER_OK || !s->cwd)
                        r = hygiene_stale_keep(h, "a session of unproven cwd (%.8s)", s->id);
                else
                        r = hygiene_stale_cwd(h, s->cwd);
                if (r >= 0 && s->state != SESSION_ACTIVE)
                        r = hygiene_stale_keep(h, "archived sessions stay (archiving is retention)");
                if (r < 0)
                        return r;
        }
        r = hygiene_stale_walk(h, pfd);
        if (r >= 0)
                r = hygiene_stale_judge_cwds(h);
        if (r < 0 || h->why)
                return r;
        cfd = fs_open_noatime(pfd, "chats", O_RDONLY | O_DIRECTORY);
        r = live_project_busy(&h->inv->trees[h->tree], cfd, hygiene_stale_elsewhere, h, &busy);
        if (r < 0)
                return r == -ENOMEM ? r
                                    : hygiene_stale_keep(h, "cannot tell whether a Qwen process "
                                                            "of the project is live");
        if (r > 0)
                return hygiene_stale_keep(h, "a Qwen process of the project may be live (%s)", busy);
        return 0;
}

static bool hygiene_streq_ptr(const char *a, const char *b) {
        return a == b || (a && b && streq(a, b));
}

int hygiene_stale_projects(const Inventory *inv, size_t t, size_t *ret_stale, size_t *ret_projects,
                           uint64_t *ret_bytes) {
        size_t stale = 0, projects = 0;
        uint64_t bytes = 0;

        /* the inventory is sorted by (tree, project_dir, ...): a project's sessions are a run */
        for (size_t i = 0, j; i < inv->n_sessions; i = j) {
                const Session *s = &inv->sessions[i];
                bool ok = true;
                uint64_t b = 0;

                for (j = i; j < inv->n_sessions && inv->sessions[j].tree == s->tree &&
                            hygiene_streq_ptr(inv->sessions[j].project_dir, s->project_dir);
                     j++) {
                        const Session *x = &inv->sessions[j];
                        struct stat st;

                        b += x->bytes;
                        if (!ok)
                                continue;
                        ok = x->owner == OWNER_OK && x->state != SESSION_CONFLICT && x->live == 0 &&
                             x->cwd && hygiene_temp_path(x->cwd) &&
                             /* outside the tree: a plain lstat proves only absence */
                             lstat(x->cwd, &st) < 0 && errno == ENOENT;
                }
                if (s->tree != t)
                        continue;
                projects++;
                if (ok) {
                        stale++;
                        bytes += b;
                }
        }
        *ret_stale = stale;
        *ret_projects = projects;
        *ret_bytes = bytes;
        return 0;
}
