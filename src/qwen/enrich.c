/* enrich.c: the enrichment pass over a project's sessions (enrich.h): scheduled tasks and
 * prompt-history rows of tmp/<hash>/ (read once per hash and thread), the organization entry,
 * the review directory and the worktree sidecars. The scan has listed the directories; this pass
 * reads what it decides from. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "enrich.h"
#include "erase.h"
#include "fs.h"
#include "json.h"
#include "json-input.h"
#include "log.h"
#include "macro.h"
#include "qwen.h"

/* <id>.worktree.json (dfd, name) whose worktreePath exists. */
static bool enrich_worktree_live(int dfd, const char *name) {
        json_object *o = NULL, *v = NULL;
        struct stat st;
        bool live = false;
        int r;

        if (dfd < 0)
                return false;
        r = json_input_read(dfd, name, JSON_INPUT_WORKTREE, &o);
        if (r == -ENOENT)
                return false;
        if (r < 0)
                /* it exists and cannot be read: a worktree may be in use (kept, not proven) */
                return true;
        if (json_object_object_get_ex(o, "worktreePath", &v) &&
            json_object_is_type(v, json_type_string) && json_object_get_string(v)[0] == '/')
                /* outside the tree: a plain stat by path is fine (it only proves existence) */
                live = stat(json_object_get_string(v), &st) == 0;
        json_object_put(o);
        return live;
}

/* The worktree sidecars of s: a compressed one, else chats/'s, else the archive's. */
static void enrich_worktree(const EnrichProject *p, Session *s, const EnrichFacts *f) {
        const int fds[2] = { p->chats_fd, p->archive_fd };

        s->live_worktree = f->worktree_cold;
        for (size_t k = 0; k < 2 && !s->live_worktree; k++) {
                char n[SESSION_ID_MAX + sizeof(".worktree.json")];
                size_t l = strnlen(f->worktree_id[k], SESSION_ID_MAX);

                if (!f->worktree[k])
                        continue;
                memcpy(n, f->worktree_id[k], l);
                memcpy(n + l, ".worktree.json", sizeof(".worktree.json"));
                s->live_worktree = enrich_worktree_live(fds[k], n);
        }
}

static int enrich_cmp_tasks(const void *a, const void *b) {
        return strcmp(((const EnrichTasks *)a)->hash, ((const EnrichTasks *)b)->hash);
}

static void enrich_tasks_free(EnrichTasks *t) {
        for (size_t k = 0; k < t->n; k++)
                free(t->ids[k]);
        free(t->ids);
        for (size_t k = 0; k < t->n_log; k++)
                free(t->log_ids[k]);
        free(t->log_ids);
}

/* The string "sessionId" of every object of the JSON array o, into a new array (*ret, *ret_n);
 * o is released. */
static int enrich_array_session_ids(json_object *o, char ***ret, size_t *ret_n) {
        size_t n = json_object_array_length(o);

        *ret = calloc(n + 1, sizeof(char *));
        if (!*ret) {
                json_object_put(o);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                json_object *row = json_object_array_get_idx(o, i), *sid = NULL;
                if (!json_object_is_type(row, json_type_object) ||
                    !json_object_object_get_ex(row, "sessionId", &sid) ||
                    !json_object_is_type(sid, json_type_string))
                        continue;
                (*ret)[*ret_n] = strdup(json_object_get_string(sid));
                if (!(*ret)[*ret_n]) {
                        json_object_put(o);
                        return -ENOMEM;
                }
                (*ret_n)++;
        }
        json_object_put(o);
        return 0;
}

/* Read the sessionId of every row of tmp/<hash>/logs.json (Qwen's prompt history) with the
 * delete's own reader and parser (erase.h), up to the size the delete edits: the plan's preview
 * of a delete, and whether its edit can be done (t->logs_state; a file it cannot edit previews
 * nothing, and the policy plans the deletes of its sessions as skips). */
static int enrich_logs_load(int hfd, EnrichTasks *t) {
        _cleanup_close_ int fd = fs_open_noatime(hfd, ERASE_LOGS_FILE, O_RDONLY);
        _cleanup_free_ char *text = NULL;
        size_t n = 0;
        int r;

        r = fd < 0 ? fd : fs_read_fd(fd, ERASE_FILE_MAX, &text, &n);
        if (r >= 0)
                r = erase_logs_session_ids(text, n, &t->log_ids, &t->n_log);
        if (r == -ENOENT || r == -ENOMEM)
                return r == -ENOMEM ? r : 0;
        if (r < 0)
                t->logs_state = r == -EFBIG     ? SHARED_TOO_BIG
                                : r == -EBADMSG ? SHARED_MALFORMED
                                                : SHARED_UNREADABLE;
        return 0;
}

/* Read tmp/<hash>/scheduled_tasks.json (a JSON array of tasks, optional "sessionId"). */
static int enrich_tasks_load(int tmp_fd, const char *hash, EnrichTasks *t) {
        _cleanup_close_ int hfd = -EBADF;
        json_object *o = NULL;
        int r;

        if (tmp_fd < 0)
                return 0;
        hfd = fs_open_noatime(tmp_fd, hash, O_RDONLY | O_DIRECTORY);
        if (hfd < 0)
                return 0;
        r = enrich_logs_load(hfd, t);
        if (r < 0)
                return r;
        r = json_input_read(hfd, "scheduled_tasks.json", JSON_INPUT_TASKS, &o);
        if (r == -ENOENT)
                return 0;
        if (r == -ENOMEM)
                return r;
        if (r < 0 || !json_object_is_type(o, json_type_array)) {
                /* Qwen refuses such a file too; we cannot tell which session it binds */
                log_debug("tmp/%s/scheduled_tasks.json unreadable: every session of it is bound",
                          hash);
                json_object_put(o);
                t->malformed = true;
                return 0;
        }
        return enrich_array_session_ids(o, &t->ids, &t->n);
}

/* Tasks bound to session s (by its hash), reading each tmp/<hash>/ once. */
static int enrich_tasks(const EnrichProject *p, EnrichCache *c, Session *s) {
        EnrichTasks key = {}, *t;
        size_t lo = 0, hi = c->n_tasks;
        int r;

        if (!s->hash || strlen(s->hash) != PROJECT_HASH_LEN)
                return 0;
        memcpy(key.hash, s->hash, sizeof(key.hash));
        t = c->n_tasks > 0 ? bsearch(&key, c->tasks, c->n_tasks, sizeof(EnrichTasks),
                                     enrich_cmp_tasks) :
                             NULL;
        if (!t) {
                r = enrich_tasks_load(p->tmp_fd, s->hash, &key);
                if (r < 0) {
                        enrich_tasks_free(&key);
                        return r;
                }
                r = util_greedy_realloc((void **)&c->tasks, &c->alloc_tasks, c->n_tasks + 1,
                                        sizeof(EnrichTasks));
                if (r < 0) {
                        enrich_tasks_free(&key);
                        return r;
                }
                while (lo < hi) {
                        size_t mid = lo + (hi - lo) / 2;
                        if (strcmp(c->tasks[mid].hash, key.hash) < 0)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                memmove(c->tasks + lo + 1, c->tasks + lo, (c->n_tasks - lo) * sizeof(EnrichTasks));
                c->tasks[lo] = key;
                c->n_tasks++;
                t = &c->tasks[lo];
        }
        for (size_t i = 0; i < t->n_log; i++)
                s->n_log_rows += streq(t->log_ids[i], s->id); /* Qwen compares exactly */
        s->logs_state = t->logs_state;
        if (t->malformed) {
                s->n_tasks = MAX(s->n_tasks, 1u);
                return 0;
        }
        for (size_t i = 0; i < t->n; i++)
                if (qwen_session_id_equal(t->ids[i], s->id))
                        s->n_tasks++;
        return 0;
}

/* Pinned / grouped from session-organization.v1.json's sessions.<id>. */
static void enrich_org(const EnrichProject *p, Session *s) {
        json_object *e = NULL, *v = NULL;

        if (p->review_fd >= 0) {
                _cleanup_free_ char *n = erase_review_dir_name(s->id);
                struct stat st;
                s->review_dir = n && fstatat(p->review_fd, n, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                                S_ISDIR(st.st_mode);
        }
        s->org_unreadable = p->org_unreadable;
        s->org_entry = p->org && json_object_object_get_ex(p->org, s->id, &e);
        if (!p->org || !json_object_object_get_ex(p->org, s->id, &e) ||
            !json_object_is_type(e, json_type_object))
                return;
        s->pinned = json_object_object_get_ex(e, "pinnedAt", &v) && v &&
                    !json_object_is_type(v, json_type_null);
        s->grouped = (json_object_object_get_ex(e, "groupId", &v) && v &&
                      !json_object_is_type(v, json_type_null)) ||
                     (json_object_object_get_ex(e, "color", &v) && v &&
                      !json_object_is_type(v, json_type_null));
}

int enrich_pass(const EnrichProject *p, Session *sessions, const EnrichFacts *facts, size_t n,
                EnrichCache *cache) {
        int r;

        for (size_t i = 0; i < n; i++) {
                enrich_worktree(p, &sessions[i], &facts[i]);
                enrich_org(p, &sessions[i]);
                r = enrich_tasks(p, cache, &sessions[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

void enrich_cache_done(EnrichCache *c) {
        for (size_t i = 0; i < c->n_tasks; i++)
                enrich_tasks_free(&c->tasks[i]);
        free(c->tasks);
        *c = (EnrichCache){};
}
