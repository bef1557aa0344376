/* dc-git.c: the compaction of a Deep Code checkpoint repository (dc-git.h), by the git program.
 *
 * Why git and not libgit2: Deep Code itself writes the repository with the git program, so git
 * reads it as Deep Code does; git has prune, repack and fsck, which libgit2 lacks (qgc would
 * delete loose objects itself and could not check its work); and the hostile input (every object,
 * pack and ref is user-written) is parsed in a child process that cannot corrupt qgc and is killed
 * at a deadline, not in the executor's address space. Each run: /usr/bin/git, in the repository
 * (fchdir to the caller's fd, --git-dir=.), stdin fed or empty, output bounded, in its own process
 * group (SIGKILL to the group at the deadline: repack's pack-objects dies too), core dumps off,
 * and an environment of its own: PATH=/usr/bin:/bin, LC_ALL=C, no HOME, no system or global
 * config, no replace objects, no grafts, no prompt, no pager; -c core.hooksPath=/dev/null (no
 * hook: update-ref's reference-transaction), core.fsmonitor=false, gc.auto=0, one pack thread,
 * and no reflog for qgc's own refs.
 *
 * The repository is user input. A walk of the whole .git first (no git run before it) keeps it as
 * is, and says why, when it holds a symlink, a mount point, a hard link, a FIFO or device, a file
 * of another user, alternates (objects of another repository), a shallow file or a commondir,
 * when it is larger than the limit, or when its config sets anything but the core keys that
 * `git init` writes (includes, hooks, fsmonitor, extensions...). Replace refs and grafts are
 * neutralised (GIT_NO_REPLACE_OBJECTS, GIT_GRAFT_FILE=/dev/null); other refs are never changed
 * (a symbolic ref is "other") and stay roots; compaction also refuses a repository that
 * `git fsck` finds broken before it starts.
 *
 * Roots: kept sessions' branches, other refs, and each named checkpoint that no kept branch or
 * other ref reaches (/undo moved its branch back, or it was only on a removed session's branch):
 * for it a ref refs/qgc/keep/<hash>, which stays a root for any later git gc and survives a crash
 * (a pack of its own would be dropped by the next repack -a); keep-refs no longer needed go.
 * Reflogs are not roots: Deep Code never reads them, so the kept sessions' reflogs are emptied
 * (they hold what /undo left behind) and the removed sessions' go with their refs. */
#include "autoconf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dc-git.h"
#include "fs.h"
#include "hashmap.h"
#include "macro.h"
#include "util.h"

#define DC_GIT_MAX_OUTPUT (UINT64_C(256) << 20)
#define DC_GIT_MAX_ERR 4096
#define DC_GIT_MAX_ENTRIES 2000000
#define DC_GIT_MAX_DEPTH 32
#define DC_GIT_KILL_WAIT_MS 10000
#define DC_GIT_ARGS_PER_RUN 512 /* refs named per `git reflog expire` */
#define DC_GIT_BLOCK 4096

typedef enum DcGitRefKind {
        DC_GIT_REF_KEPT,    /* refs/heads/<id>, id in the index */
        DC_GIT_REF_GONE,    /* refs/heads/<id>, id a session id not in the index */
        DC_GIT_REF_KEEP,    /* refs/qgc/keep/<hash> */
        DC_GIT_REF_FOREIGN, /* anything else, never changed */
} DcGitRefKind;

typedef struct DcGitRef {
        char *name;
        char oid[41];
        bool commitish; /* a commit or a tag */
        DcGitRefKind kind;
} DcGitRef;

typedef struct DcGit {
        int fd;
        uid_t uid;
        double deadline;
        const DcGitInput *in;
        DcGitReport *rep;
        Hashmap kept;   /* the caller's id strings */
        Hashmap branches; /* <name> of every refs/heads/<name>: strings in refs */
        Hashmap named;  /* existing named commits: strings in named_commits */
        char **named_commits;
        size_t n_named_commits;
        Hashmap keep;   /* the commits that need a keep-ref: strings in named_commits */
        DcGitRef *refs;
        size_t n_refs;
        char **log_unlink; /* ids whose reflog has no ref left: unlinked by name */
        size_t n_log_unlink;
        char **log_expire; /* kept ids whose reflog is not empty */
        size_t n_log_expire;
        /* the walk */
        uint64_t alloc, loose_alloc, pack_alloc, ref_alloc, n_entries;
        size_t n_packs, n_loose_refs, n_loose;
        bool foreign_refs;
        bool repack, pack_refs; /* what compacting does besides the refs and reflogs */
} DcGit;

static const char *const dc_git_env[] = {
        "PATH=/usr/bin:/bin",    "LC_ALL=C",          "TZ=UTC",
        "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
        "GIT_NO_REPLACE_OBJECTS=1", "GIT_GRAFT_FILE=/dev/null",
        "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat",     "PAGER=cat",
        "GIT_ATTR_NOSYSTEM=1",   NULL,
};

static const char *const dc_git_prefix[] = {
        "git", "-c", "gc.auto=0", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
        "-c", "core.logAllRefUpdates=false", "-c", "pack.threads=1",
        "-c", "advice.graftFileDeprecated=false", "--git-dir=.",
};

/* The keys `git init` writes (Deep Code runs a plain `git init`); any other key keeps the
 * repository as is. */
static const char *const dc_git_config_keys[] = {
        "core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates",
        "core.ignorecase", "core.precomposeunicode", "core.symlinks",
};

static void dc_git_strv_free(char **v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

static int dc_git_strv_add(char ***v, size_t *n, const char *s) {
        char **nv = reallocarray(*v, *n + 1, sizeof(char *));

        if (!nv)
                return -ENOMEM;
        *v = nv;
        if (!(nv[*n] = strdup(s)))
                return -ENOMEM;
        (*n)++;
        return 0;
}

/* Keep the repository as is: the reason, and 0. */
_printf_(2, 3) static int dc_git_refuse(DcGit *g, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        free(g->rep->why);
        if (vasprintf(&g->rep->why, fmt, ap) < 0)
                g->rep->why = NULL;
        va_end(ap);
        return g->rep->why ? 0 : -ENOMEM;
}

static bool dc_git_is_hex(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return s[n] == '\0';
}

bool dc_git_is_session_id(const char *s) {
        if (strlen(s) != 36)
                return false;
        for (size_t i = 0; i < 36; i++) {
                bool dash = i == 8 || i == 13 || i == 18 || i == 23;
                if (dash ? s[i] != '-' : !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        }
        return true;
}

static bool dc_git_set_has(const Hashmap *h, const char *s) {
        return hashmap_get(h, hashmap_hash_string(s), hashmap_eq_string, s) != NULL;
}

static int dc_git_set_add(Hashmap *h, const char *s) {
        HashSlot *slot;

        if (hashmap_reserve(h, 1) < 0)
                return -ENOMEM;
        slot = hashmap_slot(h, hashmap_hash_string(s), hashmap_eq_string, s);
        if (!slot->entry)
                hashmap_fill(h, slot, hashmap_hash_string(s), (void *)s);
        return 0;
}

static bool dc_git_keep_needed(const DcGit *g, const DcGitRef *ref) {
        return dc_git_set_has(&g->keep, ref->name + strlen(DC_GIT_KEEP_PREFIX));
}

/* ---------------------------------------------------------------- running git */

/* The line of git's stderr that says what failed: the first "fatal:" or "error:" one, else the
 * first that is not a notice, hint or warning, else the first. */
static const char *dc_git_err_line(const char *err) {
        const char *other = NULL;

        for (const char *l = err; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != '\0')) {
                if (strneq(l, "fatal:", 6) || strneq(l, "error:", 6))
                        return l;
                if (!other && !strneq(l, "notice:", 7) && !strneq(l, "hint:", 5) && !strneq(l, "warning:", 8))
                        other = l;
        }
        return other ? other : err;
}

/* Run git with args (NULL-terminated) in the repository, in_len bytes of in on its stdin, its
 * stdout into *out (may be NULL: discarded). 0 when it exited 0; -EIO (g->rep->why: its first
 * line of stderr), -ETIME at the deadline, -E2BIG for too much output, or -errno. */
static int dc_git_run(DcGit *g, const char *const *args, const char *in, size_t in_len, StrBuf *out) {
        const char *argv[ELEMENTSOF(dc_git_prefix) + 2 * DC_GIT_ARGS_PER_RUN + 8];
        _cleanup_close_ int in_fd = -EBADF, out_fd = -EBADF, err_fd = -EBADF, pidfd = -EBADF;
        int sin[2], pout[2], perr[2], status = 0, r = 0;
        char err[DC_GIT_MAX_ERR + 1], buf[65536];
        size_t n = 0, in_off = 0, err_len = 0;
        bool exited = false;
        pid_t pid;

        for (size_t i = 0; i < ELEMENTSOF(dc_git_prefix); i++)
                argv[n++] = dc_git_prefix[i];
        for (size_t i = 0; args[i]; i++) {
                if (n + 1 >= ELEMENTSOF(argv))
                        return -E2BIG;
                argv[n++] = args[i];
        }
        argv[n] = NULL;

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sin) < 0)
                return -errno;
        if (pipe2(pout, O_CLOEXEC) < 0) {
                r = -errno;
                macro_safe_close(sin[0]), macro_safe_close(sin[1]);
                return r;
        }
        if (pipe2(perr, O_CLOEXEC) < 0) {
                r = -errno;
                macro_safe_close(sin[0]), macro_safe_close(sin[1]);
                macro_safe_close(pout[0]), macro_safe_close(pout[1]);
                return r;
        }
        pid = fork();
        if (pid == 0) {
                struct rlimit no_core = { 0, 0 };
                sigset_t none;

                (void)setpgid(0, 0);
                if (dup2(sin[1], 0) < 0 || dup2(pout[1], 1) < 0 || dup2(perr[1], 2) < 0 ||
                    fchdir(g->fd) < 0)
                        _exit(126);
                (void)close_range(3, ~0U, 0);
                sigemptyset(&none);
                (void)sigprocmask(SIG_SETMASK, &none, NULL);
                (void)signal(SIGPIPE, SIG_DFL);
                (void)setrlimit(RLIMIT_CORE, &no_core);
                execve(DC_GIT_PROGRAM, (char *const *)argv, (char *const *)dc_git_env);
                _exit(127);
        }
        r = pid < 0 ? -errno : 0;
        macro_safe_close(sin[1]), macro_safe_close(pout[1]), macro_safe_close(perr[1]);
        in_fd = sin[0], out_fd = pout[0], err_fd = perr[0];
        if (r < 0)
                return r;
        (void)setpgid(pid, pid); /* the child does too: whichever runs first */
        pidfd = pidfd_open(pid, 0);
        if (pidfd < 0) {
                r = -errno;
                (void)kill(pid, SIGKILL);
                (void)waitpid(pid, NULL, 0);
                return r;
        }
        if (in_len == 0)
                in_fd = macro_safe_close(in_fd);
        (void)fcntl(in_fd, F_SETFL, O_NONBLOCK);
        (void)fcntl(out_fd, F_SETFL, O_NONBLOCK);
        (void)fcntl(err_fd, F_SETFL, O_NONBLOCK);

        while (out_fd >= 0 || err_fd >= 0 || !exited) {
                struct pollfd p[4] = { { .fd = in_fd, .events = POLLOUT },
                                       { .fd = out_fd, .events = POLLIN },
                                       { .fd = err_fd, .events = POLLIN },
                                       { .fd = exited ? -1 : pidfd, .events = POLLIN } };
                double left = g->deadline - util_mono_sec();
                ssize_t k;

                if (left <= 0) {
                        r = -ETIME;
                        break;
                }
                if (poll(p, ELEMENTSOF(p), (int)MIN(left * 1000.0 + 1.0, (double)INT_MAX)) < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        break;
                }
                if (p[0].revents) {
                        k = send(in_fd, in + in_off, in_len - in_off, MSG_NOSIGNAL | MSG_DONTWAIT);
                        if (k > 0)
                                in_off += (size_t)k;
                        if ((k < 0 && errno != EAGAIN && errno != EINTR) || in_off == in_len)
                                /* all sent, or git stopped reading */
                                in_fd = macro_safe_close(in_fd);
                }
                if (p[1].revents) {
                        k = read(out_fd, buf, sizeof(buf));
                        if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
                                out_fd = macro_safe_close(out_fd);
                        else if (k > 0 && out) {
                                if (out->len + (size_t)k > DC_GIT_MAX_OUTPUT) {
                                        r = -E2BIG;
                                        break;
                                }
                                if (strbuf_append(out, buf, (size_t)k) < 0) {
                                        r = -ENOMEM;
                                        break;
                                }
                        }
                }
                if (p[2].revents) {
                        k = read(err_fd, buf, sizeof(buf));
                        if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
                                err_fd = macro_safe_close(err_fd);
                        else if (k > 0 && err_len < DC_GIT_MAX_ERR) {
                                size_t c = MIN((size_t)k, DC_GIT_MAX_ERR - err_len);
                                memcpy(err + err_len, buf, c);
                                err_len += c;
                        }
                }
                if (p[3].revents)
                        exited = true;
        }
        if (r < 0) {
                struct pollfd p = { .fd = pidfd, .events = POLLIN };

                (void)kill(-pid, SIGKILL);
                (void)pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
                while (poll(&p, 1, DC_GIT_KILL_WAIT_MS) < 0 && errno == EINTR)
                        ;
                if (p.revents == 0)
                        return r; /* not reaped: a zombie until qgc exits */
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return r < 0 ? r : -errno;
        if (r < 0)
                return r;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return 0;
        err[err_len] = '\0';
        free(g->rep->why);
        g->rep->why = util_strprintf(
                "git %s: %s%.*s", args[0],
                WIFEXITED(status)
                        ? (WEXITSTATUS(status) == 127 ? "cannot run " DC_GIT_PROGRAM ": " : "")
                        : "killed by a signal: ",
                (int)strcspn(dc_git_err_line(err), "\n"), dc_git_err_line(err));
        return -EIO;
}

/* The next line of s (NUL-terminated in place), or NULL at the end. */
static char *dc_git_next_line(char **s) {
        char *l = *s, *nl;

        if (!l || !*l)
                return NULL;
        nl = strchr(l, '\n');
        if (nl) {
                *nl = '\0';
                *s = nl + 1;
        } else
                *s = NULL;
        return l;
}

/* ---------------------------------------------------------------- the walk */

static int dc_git_walk(DcGit *g, int dfd, char *path, size_t len, unsigned depth) {
        FsDir d;
        const char *name;
        unsigned char type;
        int r;

        if (depth > DC_GIT_MAX_DEPTH)
                return dc_git_refuse(g, "directories nested deeper than %d", DC_GIT_MAX_DEPTH);
        fs_dir_init(&d, dfd);
        while ((r = fs_dir_next(&d, &name, &type)) > 0) {
                size_t k = len, n = strlen(name);
                struct stat st;
                uint64_t alloc;
                bool mount;

                if (k + 1 + n >= PATH_MAX)
                        return dc_git_refuse(g, "a path longer than PATH_MAX");
                if (k > 0)
                        path[k++] = '/';
                memcpy(path + k, name, n + 1);
                r = fs_statat(dfd, name, &st, &mount);
                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return r;
                if (++g->n_entries > DC_GIT_MAX_ENTRIES)
                        return dc_git_refuse(g, "more than %d files", DC_GIT_MAX_ENTRIES);
                if (mount)
                        return dc_git_refuse(g, "'%s' is a mount point", path);
                if (S_ISLNK(st.st_mode))
                        return dc_git_refuse(g, "'%s' is a symlink", path);
                if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
                        return dc_git_refuse(g, "'%s' is not a file or directory", path);
                if (st.st_uid != g->uid)
                        return dc_git_refuse(g, "'%s' is owned by uid %u", path, (unsigned)st.st_uid);
                if (S_ISREG(st.st_mode) && st.st_nlink > 1)
                        return dc_git_refuse(g, "'%s' has %lu hard links", path, (unsigned long)st.st_nlink);
                if (streq(path, "objects/info/alternates") || streq(path, "objects/info/http-alternates"))
                        return dc_git_refuse(g, "'%s': objects of another repository", path);
                if (streq(path, "shallow") || streq(path, "commondir"))
                        return dc_git_refuse(g, "'%s': not a repository Deep Code made", path);

                alloc = (uint64_t)st.st_blocks * 512;
                g->alloc += alloc;
                if (strneq(path, "objects/", 8) && isxdigit((unsigned char)path[8]) &&
                    isxdigit((unsigned char)path[9]) && (path[10] == '\0' || path[10] == '/')) {
                        g->loose_alloc += alloc;
                        g->n_loose += S_ISREG(st.st_mode);
                } else if (strneq(path, "objects/pack/", 13)) {
                        g->pack_alloc += alloc;
                        g->n_packs += n > 5 && streq(name + n - 5, ".pack");
                } else if (strneq(path, "refs/", 5) && S_ISREG(st.st_mode)) {
                        g->ref_alloc += alloc;
                        g->n_loose_refs++;
                }
                if (S_ISDIR(st.st_mode)) {
                        _cleanup_close_ int sub = fs_open_dir(dfd, name);

                        if (sub < 0)
                                return sub;
                        r = dc_git_walk(g, sub, path, k + n, depth + 1);
                        if (r <= 0)
                                return r;
                }
                path[len] = '\0';
        }
        return r < 0 ? r : 1;
}

/* Walk the whole .git: g->alloc and the refusals. 1, 0 refused, -errno. */
static int dc_git_measure(DcGit *g) {
        _cleanup_close_ int fd = fs_openat(g->fd, ".", O_RDONLY | O_DIRECTORY, 0);
        char path[PATH_MAX] = "";
        struct stat st;
        int r;

        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_uid != g->uid)
                return dc_git_refuse(g, "the repository is owned by uid %u", (unsigned)st.st_uid);
        g->alloc = (uint64_t)st.st_blocks * 512;
        g->loose_alloc = g->pack_alloc = g->ref_alloc = g->n_entries = 0;
        g->n_packs = g->n_loose_refs = g->n_loose = 0;
        r = dc_git_walk(g, fd, path, 0, 0);
        if (r > 0 && g->alloc > g->in->max_bytes)
                return dc_git_refuse(g, "%" PRIu64 " bytes, over the limit of %" PRIu64, g->alloc,
                                     g->in->max_bytes);
        return r;
}

/* ---------------------------------------------------------------- reading */

static int dc_git_check_config(DcGit *g) {
        _cleanup_(strbuf_done) StrBuf out = {};
        char *s, *l;
        int r;

        r = dc_git_run(g, (const char *const[]){ "config", "--local", "--no-includes", "--list", NULL },
                       NULL, 0, &out);
        if (r < 0)
                return r;
        s = out.buf;
        while ((l = dc_git_next_line(&s))) {
                size_t k = strcspn(l, "=");
                bool ok = false;

                for (size_t i = 0; i < ELEMENTSOF(dc_git_config_keys) && !ok; i++)
                        ok = strlen(dc_git_config_keys[i]) == k && strneq(l, dc_git_config_keys[i], k);
                if (ok && strneq(l, "core.repositoryformatversion=", k + 1))
                        ok = streq(l + k + 1, "0");
                if (!ok)
                        return dc_git_refuse(g, "its config sets '%.*s', which git init does not", (int)MIN(k, 80), l);
        }
        return 1;
}

static int dc_git_read_refs(DcGit *g) {
        _cleanup_(strbuf_done) StrBuf out = {};
        char *s, *l;
        int r;

        r = dc_git_run(g, (const char *const[]){ "for-each-ref",
                                                 "--format=%(objectname) %(objecttype) %(refname) %(symref)", NULL },
                       NULL, 0, &out);
        if (r < 0)
                return r;
        s = out.buf;
        while ((l = dc_git_next_line(&s))) {
                char *type = strchr(l, ' '), *name, *sym;
                DcGitRef *ref, *nv;

                if (!type || type - l != 40 || !(name = strchr(type + 1, ' ')) || !(sym = strchr(name + 1, ' ')))
                        return dc_git_refuse(g, "git for-each-ref wrote an unexpected line");
                *type++ = *name++ = *sym++ = '\0';
                nv = reallocarray(g->refs, g->n_refs + 1, sizeof(DcGitRef));
                if (!nv)
                        return -ENOMEM;
                g->refs = nv;
                ref = &g->refs[g->n_refs];
                *ref = (DcGitRef){ .name = strdup(name), .commitish = streq(type, "commit") || streq(type, "tag") };
                if (!ref->name)
                        return -ENOMEM;
                g->n_refs++;
                memcpy(ref->oid, l, 41);
                if (*sym)
                        ref->kind = DC_GIT_REF_FOREIGN;
                else if (strneq(name, "refs/heads/", 11) && dc_git_is_session_id(name + 11))
                        ref->kind = dc_git_set_has(&g->kept, name + 11) ? DC_GIT_REF_KEPT : DC_GIT_REF_GONE;
                else if (strneq(name, DC_GIT_KEEP_PREFIX, strlen(DC_GIT_KEEP_PREFIX)) &&
                         dc_git_is_hex(name + strlen(DC_GIT_KEEP_PREFIX), 40))
                        ref->kind = DC_GIT_REF_KEEP;
                else
                        ref->kind = DC_GIT_REF_FOREIGN;
                g->foreign_refs |= ref->kind == DC_GIT_REF_FOREIGN;
                if (strneq(ref->name, "refs/heads/", 11) && dc_git_set_add(&g->branches, ref->name + 11) < 0)
                        return -ENOMEM;
        }
        return 1;
}

/* The named checkpoints that exist as commits: g->named_commits (lowercase, once each). */
static int dc_git_read_named(DcGit *g) {
        _cleanup_(strbuf_done) StrBuf in = {}, out = {};
        _cleanup_(hashmap_donep) Hashmap asked = {};
        char **v = NULL, *s, *l;
        size_t n = 0;
        int r = 0;

        for (size_t i = 0; i < g->in->n_named && r >= 0; i++) {
                char h[41];

                if (!g->in->named[i] || strlen(g->in->named[i]) != 40)
                        continue;
                for (size_t j = 0; j < 41; j++)
                        h[j] = g->in->named[i][j] >= 'A' && g->in->named[i][j] <= 'F'
                                       ? (char)(g->in->named[i][j] - 'A' + 'a') : g->in->named[i][j];
                if (!dc_git_is_hex(h, 40) || dc_git_set_has(&asked, h))
                        continue;
                r = dc_git_strv_add(&v, &n, h);
                if (r >= 0)
                        r = dc_git_set_add(&asked, v[n - 1]);
                if (r >= 0)
                        r = strbuf_printf(&in, "%s\n", h);
        }
        if (r >= 0 && in.len > 0)
                r = dc_git_run(g, (const char *const[]){ "cat-file", "--batch-check=%(objectname) %(objecttype)", NULL },
                               in.buf, in.len, &out);
        dc_git_strv_free(v, n);
        if (r < 0)
                return r;
        s = out.buf;
        while ((l = dc_git_next_line(&s))) {
                if (strlen(l) < 41 || l[40] != ' ' || !streq(l + 41, "commit")) {
                        g->rep->n_named_missing++; /* "<hash> missing", or not a commit */
                        continue;
                }
                l[40] = '\0';
                r = dc_git_strv_add(&g->named_commits, &g->n_named_commits, l);
                if (r < 0)
                        return r;
                r = dc_git_set_add(&g->named, g->named_commits[g->n_named_commits - 1]);
                if (r < 0)
                        return r;
        }
        return 1;
}

/* Append "^<oid>\n" of every root that stays besides the keep-refs. */
static int dc_git_not_roots(DcGit *g, StrBuf *in, const char *prefix) {
        for (size_t i = 0; i < g->n_refs; i++)
                if ((g->refs[i].kind == DC_GIT_REF_KEPT || g->refs[i].kind == DC_GIT_REF_FOREIGN) &&
                    (g->refs[i].commitish || !*prefix) &&
                    strbuf_printf(in, "%s%s\n", prefix, g->refs[i].oid) < 0)
                        return -ENOMEM;
        return 0;
}

/* g->keep: the named commits that no kept branch or other ref reaches. */
static int dc_git_find_stranded(DcGit *g) {
        _cleanup_(strbuf_done) StrBuf in = {}, out = {};
        char *s, *l;
        int r;

        if (g->n_named_commits == 0)
                return 1;
        for (size_t i = 0; i < g->n_named_commits; i++)
                if (strbuf_printf(&in, "%s\n", g->named_commits[i]) < 0)
                        return -ENOMEM;
        if (dc_git_not_roots(g, &in, "^") < 0)
                return -ENOMEM;
        r = dc_git_run(g, (const char *const[]){ "rev-list", "--stdin", NULL }, in.buf, in.len, &out);
        if (r < 0)
                return r;
        s = out.buf;
        while ((l = dc_git_next_line(&s))) {
                const char *c = hashmap_get(&g->named, hashmap_hash_string(l), hashmap_eq_string, l);

                if (c && dc_git_set_add(&g->keep, c) < 0)
                        return -ENOMEM;
        }
        return 1;
}

/* The objects no root reaches (kept branches, other refs, keep-refs to be): their count and
 * objectsize:disk. */
static int dc_git_count_unreachable(DcGit *g, uint64_t *ret_reachable_bytes, size_t *ret_n_reachable) {
        _cleanup_(strbuf_done) StrBuf in = {}, out = {}, all = {};
        _cleanup_(hashmap_donep) Hashmap reach = {};
        const char *c;
        char *s, *l;
        int r;

        *ret_reachable_bytes = 0;
        *ret_n_reachable = 0;
        g->rep->unreachable_objects = g->rep->unreachable_bytes = 0;
        if (dc_git_not_roots(g, &in, "") < 0)
                return -ENOMEM;
        HASHMAP_FOREACH(c, &g->keep)
                if (strbuf_printf(&in, "%s\n", c) < 0)
                        return -ENOMEM;
        if (in.len > 0) {
                r = dc_git_run(g, (const char *const[]){ "rev-list", "--objects", "--stdin", NULL }, in.buf,
                               in.len, &out);
                if (r < 0)
                        return r;
        }
        s = out.buf;
        while ((l = dc_git_next_line(&s)))
                if (strlen(l) >= 40) {
                        l[40] = '\0';
                        if (dc_git_set_add(&reach, l) < 0)
                                return -ENOMEM;
                }
        r = dc_git_run(g, (const char *const[]){ "cat-file", "--batch-all-objects",
                                                 "--batch-check=%(objectname) %(objectsize:disk)", NULL },
                       NULL, 0, &all);
        if (r < 0)
                return r;
        s = all.buf;
        while ((l = dc_git_next_line(&s))) {
                uint64_t size;

                if (strlen(l) < 42 || l[40] != ' ')
                        continue;
                l[40] = '\0';
                size = strtoull(l + 41, NULL, 10);
                if (dc_git_set_has(&reach, l)) {
                        *ret_reachable_bytes += size;
                        (*ret_n_reachable)++;
                }
                else {
                        g->rep->unreachable_objects++;
                        g->rep->unreachable_bytes += size;
                }
        }
        return 1;
}

static uint64_t dc_git_blocks(uint64_t bytes) {
        return (bytes + DC_GIT_BLOCK - 1) / DC_GIT_BLOCK * DC_GIT_BLOCK;
}

static uint64_t dc_git_file_alloc(int dfd, const char *name) {
        struct stat st;

        return fs_statat(dfd, name, &st, NULL) == 0 ? (uint64_t)st.st_blocks * 512 : 0;
}

/* Everything compacting needs to know, read only; with fsck, a repository `git fsck` finds broken
 * is refused. 1, 0 refused, -errno. */
static int dc_git_inspect(DcGit *g, bool fsck) {
        _cleanup_close_ int logs = -EBADF;
        uint64_t reachable = 0, freed, added;
        size_t n_after = 0, n_other = 0, n_reachable = 0;
        int r;

        r = dc_git_measure(g);
        if (r <= 0)
                return r;
        g->rep->bytes_before = g->rep->bytes_after = g->alloc;
        g->rep->loose_objects = g->n_loose;
        r = dc_git_check_config(g);
        if (r <= 0)
                return r;
        if (fsck) {
                _cleanup_(strbuf_done) StrBuf out = {};

                r = dc_git_run(g, (const char *const[]){ "fsck", "--no-dangling", "--no-progress", NULL }, NULL, 0, &out);
                if (r == -EIO) { /* what fsck found is on its stdout */
                        _cleanup_free_ char *why = TAKE_PTR(g->rep->why);
                        return dc_git_refuse(g, "git fsck fails before compaction (%.*s)",
                                             out.len > 0 ? (int)MIN(strcspn(out.buf, "\n"), 200) : 200,
                                             out.len > 0 ? out.buf : why);
                }
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < g->in->n_kept; i++)
                if (g->in->kept_ids[i] && dc_git_set_add(&g->kept, g->in->kept_ids[i]) < 0)
                        return -ENOMEM;
        r = dc_git_read_refs(g);
        if (r <= 0)
                return r;
        r = dc_git_read_named(g);
        if (r <= 0)
                return r;
        r = dc_git_find_stranded(g);
        if (r <= 0)
                return r;
        r = dc_git_count_unreachable(g, &reachable, &n_reachable);
        if (r <= 0)
                return r;

        /* the estimate: what goes, minus the pack and packed-refs that come */
        logs = fs_open_path(g->fd, "logs/refs/heads", 0);
        freed = 0;
        for (size_t i = 0; i < g->n_refs; i++) {
                DcGitRef *ref = &g->refs[i];

                if (ref->kind == DC_GIT_REF_GONE) {
                        r = dc_git_strv_add(&g->rep->refs_removed, &g->rep->n_refs_removed, ref->name);
                        if (r < 0)
                                return r;
                        if (logs >= 0 && fs_exists(logs, ref->name + 11) > 0) {
                                g->rep->n_reflogs_removed++;
                                freed += dc_git_file_alloc(logs, ref->name + 11);
                        }
                } else if (ref->kind == DC_GIT_REF_KEEP && !dc_git_keep_needed(g, ref))
                        g->rep->n_keep_refs_removed++;
                else if (ref->kind == DC_GIT_REF_KEEP)
                        n_after++;
                else {
                        n_after++;
                        n_other++;
                }
        }
        g->rep->n_keep_refs = g->keep.n;
        g->rep->n_keep_refs_added = g->keep.n - (n_after - n_other);
        n_after += g->rep->n_keep_refs_added;

        /* reflogs of ids not in the index left without a ref; kept ones with entries */
        if (logs >= 0) {
                _cleanup_close_ int l2 = fs_open_dir(logs, ".");
                const char *name;
                unsigned char type;
                FsDir d;

                if (l2 < 0)
                        return l2;
                fs_dir_init(&d, l2);
                while ((r = fs_dir_next(&d, &name, &type)) > 0) {
                        bool has_ref = dc_git_set_has(&g->branches, name);
                        struct stat st;

                        if (!dc_git_is_session_id(name) || fs_statat(logs, name, &st, NULL) < 0 ||
                            !S_ISREG(st.st_mode))
                                continue;
                        if (dc_git_set_has(&g->kept, name)) {
                                if (st.st_size > 0 && has_ref) {
                                        r = dc_git_strv_add(&g->log_expire, &g->n_log_expire, name);
                                        if (r < 0)
                                                return r;
                                        freed += (uint64_t)st.st_blocks * 512;
                                }
                        } else if (!has_ref) {
                                r = dc_git_strv_add(&g->log_unlink, &g->n_log_unlink, name);
                                if (r < 0)
                                        return r;
                                freed += (uint64_t)st.st_blocks * 512;
                        }
                }
                if (r < 0)
                        return r;
        }
        g->rep->n_reflogs_removed += g->n_log_unlink;
        g->rep->n_reflogs_expired = g->n_log_expire;

        g->repack = g->rep->n_refs_removed > 0 || g->rep->n_keep_refs_added > 0 ||
                    g->rep->n_keep_refs_removed > 0 || g->n_log_unlink > 0 || g->n_log_expire > 0 || g->n_loose > 0 ||
                    g->n_packs > 1 || g->rep->unreachable_objects > 0;
        /* pack-refs rewrites every ref's storage: not where there are refs not Deep Code's */
        g->pack_refs = !g->foreign_refs && (g->repack || g->n_loose_refs > 0);
        added = 0;
        if (g->repack) { /* a pack (12-byte header, 20-byte trailer) and its v2 index */
                freed += g->loose_alloc + g->pack_alloc;
                if (reachable > 0)
                        added += dc_git_blocks(reachable + 32) + dc_git_blocks(1072 + 28 * (uint64_t)n_reachable);
        }
        if (g->pack_refs) { /* one packed-refs file */
                freed += g->ref_alloc;
                added += dc_git_blocks(n_after * 100 + 64);
        }
        g->rep->bytes_estimate = freed > added ? freed - added : 0;
        return 1;
}

/* ---------------------------------------------------------------- writing */

static int dc_git_write_refs(DcGit *g) {
        _cleanup_(strbuf_done) StrBuf in = {};
        const char *c;

        for (size_t i = 0; i < g->n_refs; i++) {
                DcGitRef *ref = &g->refs[i];

                if ((ref->kind == DC_GIT_REF_GONE || (ref->kind == DC_GIT_REF_KEEP && !dc_git_keep_needed(g, ref))) &&
                    strbuf_printf(&in, "delete %s %s\n", ref->name, ref->oid) < 0)
                        return -ENOMEM;
        }
        HASHMAP_FOREACH(c, &g->keep) {
                bool have = false;

                for (size_t i = 0; i < g->n_refs && !have; i++)
                        have = g->refs[i].kind == DC_GIT_REF_KEEP &&
                               streq(g->refs[i].name + strlen(DC_GIT_KEEP_PREFIX), c);
                if (!have && strbuf_printf(&in, "create " DC_GIT_KEEP_PREFIX "%s %s\n", c, c) < 0)
                        return -ENOMEM;
        }
        if (in.len == 0)
                return 0;
        g->rep->changed = true;
        return dc_git_run(g, (const char *const[]){ "update-ref", "--no-deref", "--stdin", NULL }, in.buf,
                          in.len, NULL);
}

static int dc_git_write_reflogs(DcGit *g) {
        int r;

        if (g->n_log_unlink > 0) {
                _cleanup_close_ int logs = fs_open_path(g->fd, "logs/refs/heads", 0);

                if (logs < 0)
                        return logs;
                for (size_t i = 0; i < g->n_log_unlink; i++) {
                        r = fs_unlink(logs, g->log_unlink[i], 0);
                        if (r < 0 && r != -ENOENT)
                                return r;
                }
                g->rep->changed = true;
        }
        for (size_t i = 0; i < g->n_log_expire; i += DC_GIT_ARGS_PER_RUN) {
                const char *args[DC_GIT_ARGS_PER_RUN + 5] = { "reflog", "expire", "--expire=all",
                                                              "--expire-unreachable=all" };
                _cleanup_free_ char **names = calloc(DC_GIT_ARGS_PER_RUN, sizeof(char *));
                size_t n = 4, k;

                if (!names)
                        return -ENOMEM;
                for (k = 0; k < DC_GIT_ARGS_PER_RUN && i + k < g->n_log_expire; k++) {
                        names[k] = util_strjoin("refs/heads/", g->log_expire[i + k], NULL);
                        if (!names[k])
                                break;
                        args[n++] = names[k];
                }
                args[n] = NULL;
                g->rep->changed = true;
                r = k < DC_GIT_ARGS_PER_RUN && i + k < g->n_log_expire ? -ENOMEM : dc_git_run(g, args, NULL, 0, NULL);
                for (size_t j = 0; j < k; j++)
                        free(names[j]);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* git fsck clean, and every named commit (that existed) still resolves to its tree. */
static int dc_git_verify(DcGit *g) {
        _cleanup_(strbuf_done) StrBuf in = {}, out = {};
        char *s, *l;
        int r;

        r = dc_git_run(g, (const char *const[]){ "fsck", "--no-dangling", "--no-progress", NULL }, NULL, 0, NULL);
        if (r < 0)
                return r;
        for (size_t i = 0; i < g->n_named_commits; i++)
                if (strbuf_printf(&in, "%s^{tree}\n", g->named_commits[i]) < 0)
                        return -ENOMEM;
        if (in.len == 0)
                return 0;
        r = dc_git_run(g, (const char *const[]){ "cat-file", "--batch-check=%(objecttype)", NULL }, in.buf, in.len,
                       &out);
        if (r < 0)
                return r;
        s = out.buf;
        for (size_t i = 0; i < g->n_named_commits; i++) {
                l = dc_git_next_line(&s);
                if (!l || !streq(l, "tree")) {
                        free(g->rep->why);
                        g->rep->why = util_strprintf("checkpoint %s has no tree after compaction",
                                                     g->named_commits[i]);
                        return -EIO;
                }
        }
        return 0;
}

static int dc_git_compact_inspected(DcGit *g) {
        int r;

        r = dc_git_write_refs(g);
        if (r < 0)
                return r;
        r = dc_git_write_reflogs(g);
        if (r < 0)
                return r;
        if (g->repack) {
                g->rep->changed = true;
                r = dc_git_run(g, (const char *const[]){ "prune", "--expire=now", NULL }, NULL, 0, NULL);
                if (r < 0)
                        return r;
                r = dc_git_run(g, (const char *const[]){ "repack", "-a", "-d", "-q", NULL }, NULL, 0, NULL);
                if (r < 0)
                        return r;
        }
        if (g->pack_refs) {
                g->rep->changed = true;
                r = dc_git_run(g, (const char *const[]){ "pack-refs", "--all", "--prune", NULL }, NULL, 0, NULL);
                if (r < 0)
                        return r;
        }
        r = dc_git_verify(g);
        if (r < 0)
                return r;
        g->n_entries = 0;
        r = dc_git_measure(g);
        if (r < 0)
                return r;
        g->rep->bytes_after = g->alloc;
        return 1;
}

static void dc_git_done(DcGit *g) {
        for (size_t i = 0; i < g->n_refs; i++)
                free(g->refs[i].name);
        free(g->refs);
        hashmap_done(&g->kept, NULL);
        hashmap_done(&g->branches, NULL);
        hashmap_done(&g->named, NULL);
        hashmap_done(&g->keep, NULL);
        dc_git_strv_free(g->named_commits, g->n_named_commits);
        dc_git_strv_free(g->log_unlink, g->n_log_unlink);
        dc_git_strv_free(g->log_expire, g->n_log_expire);
}

static int dc_git_start(int git_fd, const DcGitInput *in, bool fsck, DcGitReport *ret, DcGitInput *copy, DcGit *g) {
        *ret = (DcGitReport){};
        *copy = *in;
        if (copy->timeout <= 0)
                copy->timeout = DC_GIT_TIMEOUT_DEFAULT;
        if (copy->max_bytes == 0)
                copy->max_bytes = DC_GIT_MAX_BYTES_DEFAULT;
        *g = (DcGit){ .fd = git_fd,
                      .uid = geteuid(),
                      .in = copy,
                      .rep = ret,
                      .deadline = util_mono_sec() + (double)copy->timeout / 1000.0 };
        return dc_git_inspect(g, fsck);
}

int dc_git_plan(int git_fd, const DcGitInput *in, DcGitReport *ret) {
        DcGitInput copy;
        DcGit g;
        int r;

        r = dc_git_start(git_fd, in, false, ret, &copy, &g);
        dc_git_done(&g);
        return r;
}

int dc_git_compact(int git_fd, const DcGitInput *in, DcGitReport *ret) {
        DcGitInput copy;
        DcGit g;
        int r;

        r = dc_git_start(git_fd, in, true, ret, &copy, &g);
        if (r > 0)
                r = dc_git_compact_inspected(&g);
        dc_git_done(&g);
        return r;
}

void dc_git_report_done(DcGitReport *r) {
        dc_git_strv_free(r->refs_removed, r->n_refs_removed);
        free(r->why);
        *r = (DcGitReport){};
}
