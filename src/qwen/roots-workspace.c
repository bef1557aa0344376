/* roots-workspace.c: runtime roots a project may have of its own (roots_workspaces(), after
 * the scan; roots.c resolves a user's trees).
 *
 * Qwen merges the workspace
 * settings <cwd>/.qwen/settings.json of a trusted workspace (folder trust is off by default)
 * between the user's and the system's, so advanced.runtimeOutputDir there gives the sessions
 * started in that project another runtime root, while file-history/, plans/ and
 * usage_record.jsonl stay in G; Qwen 0.15.6 also took QWEN_RUNTIME_DIR and QWEN_HOME from a
 * project's .env and from settings.env (0.15.10 and later never: the hardcoded project
 * exclusions). Those runtime roots are not scanned: the projects are the cwds of the scanned
 * transcripts and, for a G-level orphan candidate (file-history/<id>, plans/<id>.md of a
 * session not found), the "project" of its usage_record.jsonl line; a tree with a project
 * whose files may (or that qgc cannot read, parse, or look at without following a symlink) is
 * incomplete (ROOTS_WORKSPACE_WHY), as for a relative runtimeOutputDir. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "hashmap.h"
#include "js.h"
#include "log.h"
#include "macro.h"
#include "qwen.h"
#include "roots.h"
#include "roots-int.h"
#include "settings.h"

/* Does the value v (from a project's file, Qwen resolving it against cwd) name the runtime
 * root R exactly? Only a value qgc resolves with certainty does: no variable, no '..' after a
 * symlink, the same normalised path. */
static int roots_ws_same(const char *v, const char *cwd, const char *home, const char *r_dir,
                         bool *ret) {
        _cleanup_free_ char *resolved = NULL, *path = NULL, *joined = NULL;
        int r;

        *ret = false;
        r = settings_resolve_env(v, NULL, &resolved, NULL);
        if (r == -ENOKEY)
                return 0;
        if (r < 0)
                return r;
        if (resolved[0] == '/' || streq(resolved, "~") || strneq(resolved, "~/", 2) ||
            strneq(resolved, "~\\", 2)) {
                r = roots_resolve_path(resolved, home, &path);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return 0;
        } else {
                joined = strprintf("%s/%s", cwd, resolved);
                if (!joined)
                        return -ENOMEM;
                if (!roots_dotdot_lexical(joined))
                        return 0;
                path = roots_normalize(joined);
                if (!path)
                        return -ENOMEM;
        }
        *ret = streq(path, r_dir);
        return 0;
}

/* Why a project file qgc did not read or parse counts as "may". */
static const char *roots_ws_error(int r, bool dotenv) {
        switch (r) {
        case -ELOOP:
                return "it is a symlink, not followed";
        case -EPERM:
                return "it belongs to another user, not read as root";
        case -EBADMSG:
                return dotenv ? "not parsed with certainty" :
                                "no JSON object once its comments are stripped";
        default:
                return roots_file_error(r);
        }
}

/* The workspace settings <cwd>/.qwen/settings.json (cfd: cwd opened), as Qwen merges them over
 * the user's (settings.ts mergeSettings(): a trusted workspace's file between the user's and
 * the system's; folder trust is not looked at, as a workspace may have been trusted when
 * its sessions were written): 1 with *ret_why when they may give that project another runtime
 * root than tr's (an advanced.runtimeOutputDir, an "advanced" that is no object, or an
 * env.QWEN_RUNTIME_DIR / env.QWEN_HOME, which Qwen 0.15.6 applies, unless the value names
 * R itself), 0 when not, -ENOMEM. */
static int roots_ws_settings(int cfd, const char *cwd, const Tree *tr, const char *home,
                             char **ret_why) {
        _cleanup_close_ int qfd = -EBADF;
        json_object *doc = NULL, *adv = NULL, *val = NULL, *env = NULL;
        struct stat st;
        bool same = false;
        int r = 0;

        if (fstatat(cfd, ".qwen", &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno == ENOENT || errno == ENOTDIR)
                        return 0;
                r = -errno;
        } else if (S_ISLNK(st.st_mode))
                r = -ELOOP;
        else if (!S_ISDIR(st.st_mode))
                return 0; /* no .qwen/settings.json to find */
        if (r == 0) {
                qfd = openat(cfd, ".qwen", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                r = qfd < 0 ? (errno == ENOENT ? 0 : -errno) : 1;
                if (r == 0)
                        return 0;
        }
        if (r == 1)
                r = settings_read_file_at(qfd, "settings.json", tr->uid, &doc);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                *ret_why = strprintf("its workspace settings '%s/.qwen/settings.json' cannot be "
                                     "used (%s)",
                                     cwd, roots_ws_error(r, false));
                return *ret_why ? 1 : -ENOMEM;
        }
        if (!doc)
                return 0;
        if (json_object_object_get_ex(doc, "env", &env) &&
            json_object_is_type(env, json_type_object) &&
            (json_object_object_get_ex(env, "QWEN_RUNTIME_DIR", NULL) ||
             json_object_object_get_ex(env, "QWEN_HOME", NULL))) {
                json_object_put(doc);
                *ret_why = strprintf("its workspace settings '%s/.qwen/settings.json' set "
                                     "QWEN_RUNTIME_DIR or QWEN_HOME in env (Qwen 0.15.6 "
                                     "applies them)",
                                     cwd);
                return *ret_why ? 1 : -ENOMEM;
        }
        if (!json_object_object_get_ex(doc, "advanced", &adv) ||
            (json_object_is_type(adv, json_type_object) &&
             !json_object_object_get_ex(adv, "runtimeOutputDir", &val))) {
                json_object_put(doc);
                return 0;
        }
        if (!json_object_is_type(adv, json_type_object) || !js_truthy(val, true))
                /* the merged value is unset: the runtime root is G */
                same = streq(tr->global_dir, tr->runtime_dir);
        else if (json_object_is_type(val, json_type_string) &&
                 (size_t)json_object_get_string_len(val) == strlen(json_object_get_string(val))) {
                r = roots_ws_same(json_object_get_string(val), cwd, home, tr->runtime_dir, &same);
                if (r < 0) {
                        json_object_put(doc);
                        return r;
                }
        }
        json_object_put(doc);
        if (same)
                return 0;
        *ret_why = strprintf("its workspace settings '%s/.qwen/settings.json' set "
                             "advanced.runtimeOutputDir",
                             cwd);
        return *ret_why ? 1 : -ENOMEM;
}

static void roots_pair_free(char *(*v)[2]) {
        free((*v)[0]);
        free((*v)[1]);
}

/* The .env files Qwen may load for a process started in cwd (settings.ts findEnvFile(): in each
 * directory from cwd up, .qwen/.env then .env; the home directory's are the user's, which
 * roots_resolve_opts() reads). Qwen 0.15.6 takes QWEN_RUNTIME_DIR and QWEN_HOME from the first
 * it finds (0.15.10 and later never from a project's file); which one it found depends on
 * folder trust, so every one up to the home (or "/") is looked at: 1 with *ret_why when one
 * sets either (unless it names R, or G itself), or cannot be read or parsed with certainty;
 * 0 when none does; -ENOMEM. */
/* Record the directories cwd .. (not including) the first stop_len bytes of cwd as looked at
 * and clean in the set clean (the walks of other projects end there). 0 or -ENOMEM. */
static int roots_ws_remember(Hashmap *clean, const char *cwd, size_t stop_len, bool root) {
        size_t len = strlen(cwd);

        for (;;) {
                char *key;

                if (len == 0 ? !root : len <= stop_len)
                        return 0;
                key = len == 0 ? strdup("/") : strndup(cwd, len);
                if (!key || hashmap_put(clean, hash_string(key), key) < 0) {
                        free(key);
                        return -ENOMEM;
                }
                if (len == 0)
                        return 0;
                while (len > 0 && cwd[len - 1] != '/')
                        len--;
                if (len > 0)
                        len--; /* "/a/b" -> "/a"; "/a" -> "" ("/") */
        }
}

static int roots_ws_dotenv(const char *cwd, const Tree *tr, const char *home, Hashmap *clean,
                           char **ret_why) {
        static const char *const keys[] = { "QWEN_RUNTIME_DIR", "QWEN_HOME", NULL };
        _cleanup_free_ char *dir = strdup(streq(cwd, "/") ? "" : cwd);
        int r = 0;

        if (!dir)
                return -ENOMEM;
        for (;;) { /* dir "" stands for "/" */
                _cleanup_close_ int dfd = -EBADF, qfd = -EBADF;
                char *slash;

                if (home && streq(dir, home))
                        return clean ? roots_ws_remember(clean, cwd, strlen(dir), false) : 0;
                if (clean && hashmap_get(clean, hash_string(*dir ? dir : "/"), hashmap_eq_string,
                                         *dir ? dir : "/"))
                        return roots_ws_remember(clean, cwd, *dir ? strlen(dir) : 0, false);
                dfd = open(*dir ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (dfd < 0 && errno != ENOENT && errno != ENOTDIR) {
                        *ret_why = strprintf("'%s' cannot be searched for the .env files Qwen "
                                             "loads (%s)",
                                             *dir ? dir : "/", errno_to_string(errno));
                        return *ret_why ? 1 : -ENOMEM;
                }
                for (int f = 0; dfd >= 0 && f < 2; f++) {
                        _cleanup_(roots_pair_free) char *v[2] = {};
                        const char *name = f == 0 ? ".env" : ".qwen/.env";
                        int at = dfd;

                        if (f == 1) {
                                struct stat st;
                                if (fstatat(dfd, ".qwen", &st, AT_SYMLINK_NOFOLLOW) < 0)
                                        r = errno == ENOENT || errno == ENOTDIR ? 1 : -errno;
                                else if (S_ISLNK(st.st_mode))
                                        r = -ELOOP; /* Qwen follows it, qgc does not */
                                else if (!S_ISDIR(st.st_mode))
                                        r = 1;
                                else {
                                        qfd = openat(dfd, ".qwen", O_PATH | O_DIRECTORY |
                                                                     O_NOFOLLOW | O_CLOEXEC);
                                        r = qfd >= 0 ? 0 : errno == ENOENT ? 1 : -errno;
                                }
                                if (r == 1) {
                                        r = 0;
                                        continue; /* no .qwen/.env there */
                                }
                                at = qfd;
                                name = ".env";
                        }
                        if (r == 0)
                                r = settings_read_dotenv_at(at, name, tr->uid, keys, v);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0) {
                                *ret_why = strprintf("the .env file '%s/%s' Qwen may load cannot "
                                                     "be used (%s)",
                                                     *dir ? dir : "",
                                                     f == 0 ? ".env" : ".qwen/.env",
                                                     roots_ws_error(r, true));
                                return *ret_why ? 1 : -ENOMEM;
                        }
                        for (size_t k = 0; k < 2; k++) {
                                bool same = false;
                                if (!v[k])
                                        continue;
                                r = roots_ws_same(v[k], cwd, home,
                                                  k == 0 ? tr->runtime_dir : tr->global_dir,
                                                  &same);
                                if (r < 0)
                                        return r;
                                if (same)
                                        continue;
                                *ret_why = strprintf("the .env file '%s/%s' sets %s (Qwen "
                                                     "0.15.6 applies it)",
                                                     *dir ? dir : "",
                                                     f == 0 ? ".env" : ".qwen/.env", keys[k]);
                                return *ret_why ? 1 : -ENOMEM;
                        }
                        r = 0;
                }
                if (!*dir)
                        return clean ? roots_ws_remember(clean, cwd, 0, true) : 0;
                slash = strrchr(dir, '/');
                if (!slash)
                        return 0;
                *slash = 0; /* "/a" -> "" stands for "/" */
        }
}

static int roots_ws_check(const Tree *tr, const char *cwd_raw, const char *home,
                          Hashmap *clean, char **ret_why) {
        _cleanup_close_ int cfd = -EBADF;
        _cleanup_free_ char *h = NULL, *cwd = NULL;
        struct stat st, hst;
        int r;

        *ret_why = NULL;
        if (!cwd_raw || cwd_raw[0] != '/')
                return 0;
        cwd = roots_normalize(cwd_raw);
        if (!cwd)
                return -ENOMEM;
        if (home && home[0] == '/') {
                h = roots_normalize(home);
                if (!h)
                        return -ENOMEM;
        }
        cfd = open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (cfd < 0) {
                if (errno == ENOENT || errno == ENOTDIR)
                        return 0; /* gone: no Qwen starts there, and what it read is gone */
                *ret_why = strprintf("its directory '%s' cannot be looked at (%s)", cwd,
                                     errno_to_string(errno));
                return *ret_why ? 1 : -ENOMEM;
        }
        /* Qwen loads no workspace settings in the home directory, and there only the home's
         * .env files, which are the user's */
        if (h && fstat(cfd, &st) >= 0 && stat(h, &hst) >= 0 && st.st_dev == hst.st_dev &&
            st.st_ino == hst.st_ino)
                return 0;
        r = roots_ws_settings(cfd, cwd, tr, h, ret_why);
        if (r != 0)
                return r;
        return roots_ws_dotenv(cwd, tr, h, clean, ret_why);
}

int roots_workspace_check(const Tree *tr, const char *cwd, const char *home, char **ret_why) {
        return roots_ws_check(tr, cwd, home, NULL, ret_why);
}

static void roots_clean_done(Hashmap *h) {
        hashmap_done(h, free);
}

static int roots_ws_idcmp(const void *a, const void *b) {
        return ascii_strcasecmp(*(char *const *)a, *(char *const *)b);
}

static char *mfree_str(char *s) {
        free(s);
        return NULL;
}

/* The session ids of G's entries that are kept per session and that no scanned transcript has:
 * G/file-history/<id>/ and G/plans/<id>.md (the G-level orphans qgc may reclaim). *ret: a
 * sorted array (n: *ret_n). 0, -ENOMEM; a directory that cannot be listed gives nothing (the
 * scan then decides nothing of it either). */
static int roots_ws_candidates(const Inventory *inv, int gfd, char ***ret, size_t *ret_n) {
        static const char *const dirs[] = { "file-history", "plans" };
        char **v = NULL;
        size_t n = 0, alloc = 0;

        for (size_t d = 0; d < ELEMENTSOF(dirs); d++) {
                /* listed without moving its atime, as the scan lists it */
                _cleanup_close_ int dfd = fs_open_noatime(gfd, dirs[d], O_RDONLY | O_DIRECTORY |
                                                                            O_CLOEXEC);
                _cleanup_free_ FsDir *dir = NULL;
                const char *name;
                unsigned char type;
                int k;

                if (dfd < 0)
                        continue;
                dir = malloc(sizeof(FsDir));
                if (!dir)
                        goto oom;
                fs_dir_init(dir, dfd);
                while ((k = fs_dir_next(dir, &name, &type)) > 0) {
                        char id[SESSION_ID_MAX + 1];
                        size_t len = strlen(name);

                        if (d == 1) { /* plans/<id>.md */
                                if (len < 4 || !streq(name + len - 3, ".md"))
                                        continue;
                                len -= 3;
                        }
                        if (len > SESSION_ID_MAX)
                                continue;
                        memcpy(id, name, len);
                        id[len] = 0;
                        if (!qwen_session_id_valid(id))
                                continue;
                        if (n == alloc) {
                                char **nv = reallocarray(v, alloc ? alloc * 2 : 16, sizeof(char *));
                                if (!nv)
                                        goto oom;
                                v = nv;
                                alloc = alloc ? alloc * 2 : 16;
                        }
                        v[n] = strdup(id);
                        if (!v[n])
                                goto oom;
                        n++;
                }
                if (k == -ENOMEM)
                        goto oom;
        }
        if (n > 0) {
                /* drop the ids of scanned sessions: a look-up of each session in the few
                 * candidates, as scan_orphans() does, not an index of every session */
                _cleanup_free_ bool *found = calloc(n, sizeof(bool));
                size_t m = 0;

                if (!found)
                        goto oom;
                qsort(v, n, sizeof(char *), roots_ws_idcmp);
                for (size_t i = 1; i < n; i++) /* an id in both directories: once */
                        found[i] = roots_ws_idcmp(&v[i - 1], &v[i]) == 0;
                for (size_t i = 0; i < inv->n_sessions; i++) {
                        const char *key = inv->sessions[i].id;
                        char **hit = bsearch(&key, v, n, sizeof(char *), roots_ws_idcmp);
                        if (!hit)
                                continue;
                        /* every copy of that id */
                        size_t j = (size_t)(hit - v), lo = j;
                        while (lo > 0 && roots_ws_idcmp(&v[lo - 1], hit) == 0)
                                lo--;
                        for (; j < n && roots_ws_idcmp(&v[j], hit) == 0; j++)
                                found[j] = true;
                        for (; lo < (size_t)(hit - v); lo++)
                                found[lo] = true;
                }
                for (size_t i = 0; i < n; i++) {
                        if (found[i]) {
                                free(v[i]);
                                continue;
                        }
                        v[m++] = v[i]; /* stays sorted */
                }
                n = m;
        }
        *ret = v;
        *ret_n = n;
        return 0;
oom:
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
        return -ENOMEM;
}

/* The JSON string value of "key" in the line [p, e): 1 with *ret (unescaped), 0 when the line
 * has none that qgc reads with certainty, -ENOMEM. */
static int roots_ws_line_string(const char *p, const char *e, const char *key, char **ret) {
        _cleanup_free_ char *pat = strprintf("\"%s\":\"", key);
        const char *v, *q;
        size_t plen;

        *ret = NULL;
        if (!pat)
                return -ENOMEM;
        plen = strlen(pat);
        v = memmem(p, (size_t)(e - p), pat, plen);
        if (!v)
                return 0;
        v += plen;
        for (q = v; q < e && *q != '"'; q++)
                if (*q == '\\' || (unsigned char)*q < 0x20)
                        return 0; /* an escape: not read here */
        if (q == e)
                return 0;
        *ret = strndup(v, (size_t)(q - v));
        return *ret ? 1 : -ENOMEM;
}

/* The cwds ("project") that G/usage_record.jsonl records for the sessions of ids (sorted,
 * n), each once, appended to *cwds (*n_cwds). Read in 1 MiB windows, a line longer than that
 * skipped; a file that cannot be read gives nothing. 0 or -ENOMEM. */
static int roots_ws_usage_cwds(int gfd, char **ids, size_t n, char ***cwds, size_t *n_cwds) {
        enum { WIN = 1024 * 1024 };
        _cleanup_close_ int fd = fs_open_noatime(gfd, "usage_record.jsonl",
                                                 O_RDONLY | O_CLOEXEC); /* a dry run changes
                                                                         * nothing */
        _cleanup_free_ char *buf = NULL;
        size_t have = 0, alloc = *n_cwds;
        off_t off = 0;
        bool skipping = false;
        struct stat st;

        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return 0;
        buf = malloc(WIN);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t k = pread(fd, buf + have, WIN - have, off);
                const char *p = buf, *end;

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                off += k;
                end = buf + have + k;
                for (;;) {
                        const char *nl = memchr(p, '\n', (size_t)(end - p));
                        _cleanup_free_ char *id = NULL, *cwd = NULL;
                        char *key;
                        int r;

                        if (!nl)
                                break;
                        if (skipping) {
                                skipping = false;
                                p = nl + 1;
                                continue;
                        }
                        r = roots_ws_line_string(p, nl, "sessionId", &id);
                        if (r > 0) {
                                key = id;
                                if (bsearch(&key, ids, n, sizeof(char *), roots_ws_idcmp))
                                        r = roots_ws_line_string(p, nl, "project", &cwd);
                                else
                                        r = 0;
                        }
                        if (r < 0)
                                return r;
                        p = nl + 1;
                        if (!cwd || cwd[0] != '/')
                                continue;
                        for (size_t i = 0; cwd && i < *n_cwds; i++)
                                if (streq((*cwds)[i], cwd))
                                        cwd = mfree_str(cwd);
                        if (!cwd)
                                continue;
                        if (*n_cwds == alloc) {
                                char **nv = reallocarray(*cwds, alloc ? alloc * 2 : 8,
                                                         sizeof(char *));
                                if (!nv)
                                        return -ENOMEM;
                                *cwds = nv;
                                alloc = alloc ? alloc * 2 : 8;
                        }
                        (*cwds)[(*n_cwds)++] = TAKE_PTR(cwd);
                }
                have = (size_t)(end - p);
                if (have == WIN) { /* one line longer than the window: skipped */
                        have = 0;
                        skipping = true;
                } else
                        memmove(buf, p, have);
        }
        return 0;
}

int roots_workspaces(Inventory *inv, const char *home) {
        _cleanup_free_ bool *before = calloc(inv->n_trees ?: 1, sizeof(bool));
        _cleanup_(roots_clean_done) Hashmap clean = {}; /* dirs whose .env files are clean, of
                                                         * the tree prev_tree */
        const char *prev = NULL;
        size_t prev_tree = SIZE_MAX;

        if (!before)
                return -ENOMEM;
        /* a tree incomplete already decides nothing that this could stop */
        for (size_t t = 0; t < inv->n_trees; t++)
                before[t] = inv->trees[t].incomplete;
        for (size_t i = 0; i < inv->n_sessions; i++) {
                const Session *s = &inv->sessions[i];
                Tree *tr = &inv->trees[s->tree];
                _cleanup_free_ char *why = NULL;
                int r;

                /* sorted by (tree, project, cwd): a project's cwd is looked at once */
                if (before[s->tree] || !s->cwd ||
                    (s->tree == prev_tree && prev && streq(prev, s->cwd)))
                        continue;
                if (s->tree != prev_tree)
                        roots_clean_done(&clean); /* a value's meaning depends on the tree */
                prev = s->cwd;
                prev_tree = s->tree;
                r = roots_ws_check(tr, s->cwd, home, &clean, &why);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                log_notice("'%s': the sessions of '%s' may be in a runtime directory qgc does not "
                           "see: %s",
                           tr->global_dir, s->cwd, why);
                tr->incomplete = true;
                tr->incomplete_why = ROOTS_WORKSPACE_WHY;
        }
        /* sessions qgc did not find whose file-history or plan is in G: the project
         * usage_record.jsonl names for them (a session's line is written when it ends) may
         * have put them in a runtime root of its own; looked at only when there are such */
        for (size_t t = 0; t < inv->n_trees; t++) {
                Tree *tr = &inv->trees[t];
                _cleanup_close_ int gfd = -EBADF;
                char **ids = NULL, **cwds = NULL;
                size_t n_ids = 0, n_cwds = 0;
                bool seen = false;
                int r;

                for (size_t u = 0; u < t; u++)
                        seen = seen || streq(inv->trees[u].global_dir, tr->global_dir);
                if (before[t] || tr->incomplete || seen)
                        continue;
                gfd = open(tr->global_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (gfd < 0)
                        continue;
                r = roots_ws_candidates(inv, gfd, &ids, &n_ids);
                if (r >= 0 && n_ids > 0)
                        r = roots_ws_usage_cwds(gfd, ids, n_ids, &cwds, &n_cwds);
                for (size_t i = 0; r >= 0 && i < n_cwds; i++) {
                        _cleanup_free_ char *why = NULL;
                        r = roots_ws_check(tr, cwds[i], home, NULL, &why);
                        if (r <= 0)
                                continue;
                        log_notice("'%s': sessions of '%s' (named in usage_record.jsonl) may be in "
                                   "a runtime directory qgc does not see: %s",
                                   tr->global_dir, cwds[i], why);
                        r = 0;
                        for (size_t u = t; u < inv->n_trees; u++)
                                if (streq(inv->trees[u].global_dir, tr->global_dir) &&
                                    !inv->trees[u].incomplete) {
                                        inv->trees[u].incomplete = true;
                                        inv->trees[u].incomplete_why = ROOTS_WORKSPACE_WHY;
                                }
                }
                for (size_t i = 0; i < n_ids; i++)
                        free(ids[i]);
                free(ids);
                for (size_t i = 0; i < n_cwds; i++)
                        free(cwds[i]);
                free(cwds);
                if (r < 0)
                        return r;
        }
        return 0;
}
