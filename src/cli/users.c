/* users.c: root mode (--all-users). Find every user whose home holds a Qwen tree, check that
 * nobody else could have planted or redirected it, and run the pipeline for each user in a
 * child that dropped to that user (and proved it cannot get root back) before it opens anything
 * in the home. Children run one at a time; the parent only counts and reports, and waits for each
 * at most admin.user-timeout (the user owns the child after the drop and may stop it: it is then
 * killed and that user alone fails). The check of a home's path is users-path.c's
 * (users_path_check()). */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "deepcode-store.h"
#include "journal.h"
#include "log.h"
#include "macro.h"
#include "metrics.h"
#include "plan.h"
#include "qwen-store.h"
#include "roots.h"
#include "users.h"
#include "users-path.h"
#include "text.h"
#include "util.h"

#define USERS_REASON_MAX 2048

/* How a child ends; the parent maps these to ok/failed/skipped. */
enum {
        USERS_EXIT_OK = 0,
        USERS_EXIT_FAILED = 1,      /* some actions failed, or an error inside the pipeline */
        USERS_EXIT_SKIPPED = 2,     /* no safe tree after resolving: reason on the pipe */
        USERS_EXIT_DROP = 3,        /* could not drop privileges (or could regain them) */
        USERS_EXIT_UNKNOWN = 4,     /* a tree's runtime root is not known: failed, reason on
                                     * the pipe when no tree ran */
        USERS_EXIT_ABSENT = 5,      /* restore: not in this user's trees (not a failure) */
        USERS_EXIT_LOCKED = 75,     /* another qgc holds the tree's lock */
        USERS_EXIT_CONFIG = 78,     /* the user's own qgc.conf is invalid: nothing done */
};

typedef struct UserCand {
        char *name;
        uid_t uid;
        gid_t gid;
        char *home;   /* pw_dir: HOME in the child, where the user's qgc.conf lives */
        char **homes; /* every home to look into: pw_dir and those under cfg->user_dirs */
        size_t n_homes, alloc_homes;
} UserCand;

typedef struct UserList {
        UserCand *c;
        size_t n, alloc;
} UserList;

typedef struct UserTally {
        unsigned n_ok, n_failed, n_skipped;
        unsigned n_config; /* of n_skipped: an invalid policy file of the user's own */
        unsigned n_absent; /* restore: users whose trees do not have it */
        unsigned n_json; /* users in the JSON document so far */
} UserTally;

/* The first byte a child writes on its reason pipe when it goes on to run the pipeline (and so
 * prints its plan): the JSON document holds "plan": null for the others. */
#define USERS_RAN_MARK '\x01'

static void users_cand_done(UserCand *u) {
        free(u->name);
        free(u->home);
        for (size_t i = 0; i < u->n_homes; i++)
                free(u->homes[i]);
        free(u->homes);
}

static void users_list_done(UserList *l) {
        for (size_t i = 0; i < l->n; i++)
                users_cand_done(&l->c[i]);
        free(l->c);
}

static UserCand *users_list_find(UserList *l, uid_t uid) {
        for (size_t i = 0; i < l->n; i++)
                if (l->c[i].uid == uid)
                        return &l->c[i];
        return NULL;
}

/* Add home to u unless it is already there. */
static int users_cand_add_home(UserCand *u, const char *home) {
        for (size_t i = 0; i < u->n_homes; i++)
                if (streq(u->homes[i], home))
                        return 0;
        if (util_greedy_realloc((void **)&u->homes, &u->alloc_homes, u->n_homes + 1,
                                sizeof(char *)) < 0)
                return -ENOMEM;
        u->homes[u->n_homes] = strdup(home);
        if (!u->homes[u->n_homes])
                return -ENOMEM;
        u->n_homes++;
        return 0;
}

/* The candidate for pw (one per uid: a second passwd name for a uid only adds its home). */
static int users_list_add(UserList *l, const struct passwd *pw, const char *home) {
        UserCand *u = users_list_find(l, pw->pw_uid);

        if (!u) {
                if (util_greedy_realloc((void **)&l->c, &l->alloc, l->n + 1, sizeof(UserCand)) < 0)
                        return -ENOMEM;
                u = &l->c[l->n];
                *u = (UserCand){ .uid = pw->pw_uid, .gid = pw->pw_gid };
                u->name = strdup(pw->pw_name);
                u->home = strdup(pw->pw_dir);
                if (!u->name || !u->home) {
                        users_cand_done(u);
                        return -ENOMEM;
                }
                l->n++;
        }
        return users_cand_add_home(u, home);
}

/* Every passwd entry with an absolute home. */
static int users_enumerate_passwd(UserList *l) {
        struct passwd *pw;
        int r = 0;

        setpwent();
        while ((errno = 0, pw = getpwent())) {
                if (!pw->pw_name || !pw->pw_dir || pw->pw_dir[0] != '/')
                        continue;
                r = users_list_add(l, pw, pw->pw_dir);
                if (r < 0)
                        break;
        }
        endpwent();
        return r;
}

/* Each directory entry of an admin-listed users-dir is a home of the user owning it. */
static int users_enumerate_dir(UserList *l, const char *dir) {
        _cleanup_close_ int dfd = -EBADF;
        DIR *d;
        struct dirent *de;
        int r = 0;

        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return log_warning_errno(-errno, "user-dirs: cannot open '%s', skipping", dir);
        d = fdopendir(dfd);
        if (!d)
                return -errno;
        dfd = -EBADF; /* owned by d now */
        while ((de = readdir(d))) {
                _cleanup_free_ char *home = NULL;
                struct passwd *pw;
                struct stat st;

                if (de->d_name[0] == '.')
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISDIR(st.st_mode))
                        continue;
                if (st.st_uid == 0) {
                        log_debug("user-dirs: '%s/%s' is owned by root, skipping", dir, de->d_name);
                        continue;
                }
                pw = getpwuid(st.st_uid);
                if (!pw || !pw->pw_name || !pw->pw_dir) {
                        log_debug("user-dirs: '%s/%s' belongs to no known user, skipping", dir,
                                  de->d_name);
                        continue;
                }
                home = util_path_join(dir, de->d_name);
                if (!home) {
                        r = -ENOMEM;
                        break;
                }
                r = users_list_add(l, pw, home);
                if (r < 0)
                        break;
        }
        closedir(d);
        return r;
}

/* 1 when this process holds no capability (effective or permitted), 0 when it holds some. */
static int users_caps_empty(void) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};
        uint32_t any = 0;

        if (syscall(SYS_capget, &h, d) < 0)
                return -errno;
        for (size_t i = 0; i < ELEMENTSOF(d); i++)
                any |= d[i].effective | d[i].permitted;
        return any == 0;
}

/* Drop to u for good: groups, gids, uids; then prove root cannot be regained. */
static int users_drop(const UserCand *u, char **ret_reason) {
        uid_t ru, eu, su;
        gid_t rg, eg, sg;

        if (initgroups(u->name, u->gid) < 0)
                return users_path_reason(ret_reason, -errno, "initgroups(%s): %m", u->name);
        if (setresgid(u->gid, u->gid, u->gid) < 0)
                return users_path_reason(ret_reason, -errno, "setresgid(%u): %m", (unsigned)u->gid);
        if (setresuid(u->uid, u->uid, u->uid) < 0)
                return users_path_reason(ret_reason, -errno, "setresuid(%u): %m", (unsigned)u->uid);
        if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
                return users_path_reason(ret_reason, -errno, "getresuid: %m");
        if (ru != u->uid || eu != u->uid || su != u->uid || rg != u->gid || eg != u->gid ||
            sg != u->gid)
                return users_path_reason(ret_reason, -EPERM, "ids are %u/%u/%u:%u/%u/%u after the drop",
                                    (unsigned)ru, (unsigned)eu, (unsigned)su, (unsigned)rg,
                                    (unsigned)eg, (unsigned)sg);
        if (u->uid == 0)
                return 0; /* root's own trees: nothing to drop */
        if (users_caps_empty() != 1)
                return users_path_reason(ret_reason, -EPERM, "capabilities survived the drop to %s",
                                    u->name);
        if (setuid(0) == 0 || seteuid(0) == 0)
                return users_path_reason(ret_reason, -EPERM, "could regain root after dropping to %s",
                                    u->name);
        if (u->gid != 0 && (setgid(0) == 0 || setegid(0) == 0))
                return users_path_reason(ret_reason, -EPERM, "could regain gid 0 after dropping to %s",
                                    u->name);
        return 0;
}

/* The environment of the user's run: HOME and names; none of root's Qwen/XDG settings. */
static int users_set_env(const UserCand *u) {
        static const char *const drop[] = {
                "QWEN_HOME", "QWEN_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR",
                "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME",
        };
        for (size_t i = 0; i < ELEMENTSOF(drop); i++)
                if (unsetenv(drop[i]) < 0)
                        return -errno;
        if (setenv("HOME", u->home, 1) < 0 || setenv("USER", u->name, 1) < 0 ||
            setenv("LOGNAME", u->name, 1) < 0)
                return -errno;
        return 0;
}

/* The stores whose trees are found in a home, in the order of their trees (admin.stores). */
static const StoreOps *const users_stores[] = { &qwen_store, &deepcode_store };

static bool users_store_wanted(const StoreOps *store, int stores) {
        return stores == CONFIG_STORES_ALL ||
               (store == &qwen_store) == (stores == CONFIG_STORES_QWEN);
}

/* In the child: resolve and re-check the trees of every home; add the safe ones to inv. Returns
 * the number of trees; when none is safe, *ret_reason says why. *ret_unknown: a tree's runtime
 * root was not known (ROOTS_UNDETERMINED): the run fails, as qgc(8) says. */
static int users_child_trees(const UserCand *u, int stores, Inventory *inv, char **ret_reason,
                             bool *ret_unknown) {
        /* why_all: every tree not taken, said when the user has none; why_warn: those of them
         * that exist (a user of one agent only has no tree of the other: not worth a warning
         * on every run) */
        _cleanup_(strbuf_done) StrBuf why_all = {}, why_warn = {};
        int r;

        for (size_t n = 0; n < u->n_homes * ELEMENTSOF(users_stores); n++) {
                const StoreOps *store = users_stores[n % ELEMENTSOF(users_stores)];
                size_t i = n / ELEMENTSOF(users_stores);
                _cleanup_free_ char *g = NULL, *rt = NULL, *why = NULL;
                Tree t = {};
                bool dup = false;

                if (!users_store_wanted(store, stores))
                        continue;
                r = store->tree_for_home(u->homes[i], &t, &why);
                if (r == -ENOENT && store != &qwen_store)
                        continue; /* no ~/.deepcode: nothing to say */
                if (r == ROOTS_UNDETERMINED)
                        *ret_unknown = true;
                if (r >= 0)
                        r = users_path_check(t.global_dir, u->uid, &g, &why);
                else if (r != ROOTS_UNDETERMINED || !why)
                        users_path_reason(&why, r, "cannot resolve the %s of '%s'",
                                          store == &qwen_store ? "Qwen dirs" : "Deep Code directory",
                                          u->homes[i]);
                if (r >= 0 && t.runtime_dir && !streq(t.runtime_dir, t.global_dir))
                        r = users_path_check(t.runtime_dir, u->uid, &rt, &why);
                if (r < 0) {
                        inventory_tree_done(&t);
                        if (strbuf_printf(&why_all, "%s%s", why_all.len > 0 ? "; " : "",
                                          why ? why : "unsafe tree") < 0 ||
                            (r != -ENOENT &&
                             strbuf_printf(&why_warn, "%s%s", why_warn.len > 0 ? "; " : "",
                                           why ? why : "unsafe tree") < 0))
                                return -ENOMEM;
                        continue;
                }
                for (size_t j = 0; j < inv->n_trees; j++)
                        if (streq(inv->trees[j].global_dir, g))
                                dup = true;
                if (dup) {
                        inventory_tree_done(&t);
                        continue;
                }
                /* another G with the same R: one runtime root cannot serve two trees */
                for (size_t j = 0; j < inv->n_trees && !dup; j++)
                        if (streq(inv->trees[j].runtime_dir, rt ?: g)) {
                                dup = true;
                                if (strbuf_printf(&why_warn,
                                                  "%s'%s' has the runtime directory of '%s'",
                                                  why_warn.len > 0 ? "; " : "", g,
                                                  inv->trees[j].global_dir) < 0)
                                        return -ENOMEM;
                        }
                if (dup) {
                        inventory_tree_done(&t);
                        continue;
                }
                free(t.global_dir);
                free(t.runtime_dir);
                t.global_dir = TAKE_PTR(g);
                t.runtime_dir = rt ? TAKE_PTR(rt) : strdup(t.global_dir);
                free(t.user);
                t.user = strdup(u->name);
                t.uid = u->uid;
                if (!t.runtime_dir || !t.user) {
                        inventory_tree_done(&t);
                        return -ENOMEM;
                }
                r = inventory_add_tree(inv, &t, NULL);
                if (r < 0)
                        return r;
        }
        if (inv->n_trees > 0 && why_warn.len > 0)
                log_warning("%s, skipping that tree", why_warn.buf); /* "qgc: alice: " */
        else if (inv->n_trees == 0 && why_all.len > 0)
                users_path_reason(ret_reason, 0, "%s", why_all.buf);
        return (int)inv->n_trees;
}

/* In the child: the system policy merged with the user's own file (admin caps win; the file is
 * read only when the admin allows user files; with no system file it layers on the built-in
 * default as in a user's own run). Problems and clamping warnings go to stderr. */
static int users_child_config(const Config *sys, const UserCand *u, Config *ret,
                              char **ret_reason) {
        _cleanup_(config_errors_done) ConfigErrors errs = {};
        _cleanup_free_ char *path = NULL;
        int r;

        path = util_path_join(u->home, ".config/qgc/qgc.conf");
        if (!path)
                return -ENOMEM;
        r = config_merge_user(ret, sys, path, &errs);
        /* the user's own file, echoed on root's terminal, cleaned and named ("qgc: alice: ")
         * by the log. Clamping warnings (r >= 0) are not printed under --quiet: cron would mail
         * them on every run */
        for (size_t i = 0; (r < 0 || log_get_max_level() >= LOG_LEVEL_NOTICE) && i < errs.n; i++)
                log_internal(r < 0 ? LOG_LEVEL_ERR : LOG_LEVEL_WARNING, 0, "%s", errs.msgs[i]);
        if (r < 0 && errs.n > 0)
                users_path_reason(ret_reason, r, "invalid policy file: %s%s", errs.msgs[0],
                             errs.n > 1 ? " (and more, above)" : "");
        return r;
}

/* The child: drop, resolve, check, merge, run. Never returns. */
_Noreturn static void users_child(const UserCand *u, const Config *sys, users_run_cb cb,
                                  void *userdata, int pipe_fd) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        _cleanup_free_ char *reason = NULL;
        Config cfg = {};
        bool unknown = false;
        int r, code;

        if (chdir("/") < 0 || users_drop(u, &reason) < 0) {
                code = USERS_EXIT_DROP;
                goto finish;
        }
        /* From here on, everything runs with the user's rights only, and every line printed
         * names the user */
        log_set_user(u->name);
        if (users_set_env(u) < 0 || inventory_new(&inv) < 0) {
                users_path_reason(&reason, -ENOMEM, "cannot set up the environment");
                code = USERS_EXIT_FAILED;
                goto finish;
        }
        r = users_child_trees(u, sys->stores, inv, &reason, &unknown);
        if (r <= 0) {
                code = r < 0     ? USERS_EXIT_FAILED
                       : unknown ? USERS_EXIT_UNKNOWN
                                 : USERS_EXIT_SKIPPED;
                if (!reason)
                        users_path_reason(&reason, r, "no tree of the stores collected");
                goto finish;
        }
        r = users_child_config(sys, u, &cfg, &reason);
        if (r < 0) {
                if (!reason)
                        users_path_reason(&reason, r, "invalid policy file, nothing done");
                code = USERS_EXIT_CONFIG;
                goto finish;
        }
        (void)!write(pipe_fd, (char[]){ USERS_RAN_MARK }, 1);
        pipe_fd = macro_safe_close(pipe_fd);
        free(reason);
        reason = NULL;

        r = cb(inv, &cfg, userdata);
        config_done(&cfg);
        code = r == 0              ? USERS_EXIT_OK
               : r == -EWOULDBLOCK ? USERS_EXIT_LOCKED
               : r == -ENOENT      ? USERS_EXIT_ABSENT
                                   : USERS_EXIT_FAILED;
        if (code == USERS_EXIT_OK && unknown)
                code = USERS_EXIT_UNKNOWN; /* the other trees ran; that one did not */

finish:
        if (reason && pipe_fd >= 0)
                (void)!write(pipe_fd, reason, strnlen(reason, USERS_REASON_MAX));
        macro_safe_close(pipe_fd);
        inv = inventory_free(inv);
        free(reason);
        reason = NULL;
        fflush(NULL);
        _exit(code);
}

/* What the child says on its pipe (its reason), up to USERS_REASON_MAX bytes; the rest is read
 * and dropped. */
typedef struct UsersReason {
        char buf[USERS_REASON_MAX + 1];
        size_t len;
} UsersReason;

/* Read what is there; 0 at the end of the pipe (or an error), 1 while it may say more. */
static int users_reason_read(UsersReason *rs, int fd) {
        char sink[512];
        bool full = rs->len >= USERS_REASON_MAX;
        ssize_t n = full ? read(fd, sink, sizeof sink)
                         : read(fd, rs->buf + rs->len, USERS_REASON_MAX - rs->len);

        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                return 1;
        if (n <= 0)
                return 0;
        if (!full)
                rs->len += (size_t)n;
        return 1;
}

static char *users_reason_take(UsersReason *rs) {
        rs->buf[rs->len] = '\0';
        return rs->len > 0 ? strdup(rs->buf) : NULL;
}

/* How long the parent waits for a child it killed at the deadline to be gone (a process in an
 * uninterruptible sleep, on a hung NFS home, dies only when the sleep ends). */
#define USERS_KILL_WAIT_MSEC 10000

/* Wait for the child pid (its pidfd) while reading its pipe, until it exits or, with
 * timeout > 0, until the deadline: a stopped child (SIGSTOP from its user, who owns it after the
 * drop) or a stuck one is then killed with SIGKILL. The child forks nothing, so killing it ends
 * all of its work (root needs CAP_KILL for it: the child is the user's). Returns 0 with
 * *ret_status, -ETIME when the deadline passed (*ret_status set when it could be reaped:
 * *ret_reaped; *ret_kill_errno when SIGKILL could not be sent), or -errno. */
static int users_wait_child(pid_t pid, int pidfd, int pipe_fd, msec_t timeout, UsersReason *rs,
                            int *ret_status, bool *ret_reaped, int *ret_kill_errno) {
        struct pollfd p[2] = { { .fd = pipe_fd, .events = POLLIN },
                               { .fd = pidfd, .events = POLLIN } };
        double deadline = util_mono_sec() + (double)timeout / 1000.0;
        bool timed_out = false;

        *ret_reaped = false;
        *ret_kill_errno = 0;
        for (;;) {
                int wait_ms = -1;

                if (timeout > 0) {
                        double left = deadline - util_mono_sec();
                        if (left <= 0) {
                                timed_out = true;
                                break;
                        }
                        wait_ms = (int)MIN(left * 1000.0 + 1.0, (double)INT_MAX);
                }
                if (poll(p, ELEMENTSOF(p), wait_ms) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (p[0].fd >= 0 && p[0].revents != 0 && users_reason_read(rs, p[0].fd) == 0)
                        p[0].fd = -1; /* the pipe's end: the child closed it (poll skips it) */
                if (p[1].revents != 0)
                        break; /* the child has exited */
        }
        if (timed_out) {
                if (pidfd_send_signal(pidfd, SIGKILL, NULL, 0) < 0 && errno != ESRCH) {
                        *ret_kill_errno = errno; /* left as it is; the run goes on */
                        return -ETIME;
                }
                p[0].fd = -1;
                while (poll(&p[1], 1, USERS_KILL_WAIT_MSEC) < 0)
                        if (errno != EINTR)
                                return -errno;
                if (p[1].revents == 0)
                        return -ETIME; /* still there: not reaped, the run goes on */
        }
        /* it has exited: what is left in the pipe can be read without blocking */
        while (p[0].fd >= 0 && users_reason_read(rs, p[0].fd) > 0)
                ;
        while (waitpid(pid, ret_status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        *ret_reaped = true;
        return timed_out ? -ETIME : 0;
}

/* A user whose run failed as a whole, or was skipped for an invalid policy file (outcome):
 * on stderr, and in the action log (when open) at priority err with QGC_USER, so that
 * `journalctl -p err` and `journalctl QGC_USER=name` show it. */
static void users_report_failed(const UserCand *u, const char *outcome, const char *reason) {
        _cleanup_free_ char *msg = util_strprintf("%s: %s: %s", u->name, outcome, reason);

        log_error("%s: %s: %s", u->name, outcome, reason);
        (void)journal_log(&(const JournalEntry){
                .event = JOURNAL_USER_FAILED,
                .message = msg ?: reason,
                .reason = reason,
                .user = u->name,
        });
}

/* Before a child's output: its element of the JSON document up to "plan": , or its text
 * header. */
static void users_output_before(const UserCand *u, const UsersOutput *out, UserTally *tally) {
        if (out->json) {
                fputs(tally->n_json++ > 0 ? ",\n    {\n      \"user\": " : "    {\n      \"user\": ",
                      stdout);
                (void)plan_json_render_string(u->name, stdout);
                fputs(",\n      \"plan\": ", stdout);
        } else if (out->headers) {
                _cleanup_free_ char *c = text_clean(u->name, TEXT_TERMINAL);
                printf("user %s:\n", c ?: "?");
        }
}

/* After it: the end of its element (null when it printed no plan), status and reason. */
static void users_output_after(const UsersOutput *out, bool ran, const char *status,
                               const char *reason) {
        if (!out->json)
                return;
        if (!ran)
                fputs("null", stdout);
        printf(",\n      \"status\": \"%s\"", status);
        if (reason) {
                fputs(",\n      \"reason\": ", stdout);
                (void)plan_json_render_string(reason, stdout);
        }
        fputs("\n    }", stdout);
}

/* Fork a child for u, wait for it (at most sys->user_timeout), and count the outcome. */
static int users_run_one(const UserCand *u, const Config *sys, users_run_cb cb, void *userdata,
                         UserTally *tally, const UsersOutput *out) {
        _cleanup_free_ char *reason = NULL;
        _cleanup_close_ int pidfd = -EBADF;
        UsersReason rs = {};
        int pfd[2], status = 0, r;
        bool ran = false, reaped;
        int kill_errno;
        pid_t pid;

        if (pipe2(pfd, O_CLOEXEC) < 0)
                return log_error_errno(-errno, "pipe");
        users_output_before(u, out, tally);
        fflush(NULL);
        pid = fork();
        if (pid < 0) {
                r = -errno;
                macro_safe_close(pfd[0]);
                macro_safe_close(pfd[1]);
                users_output_after(out, /* ran= */ false, "failed", "fork failed");
                return log_error_errno(r, "fork");
        }
        if (pid == 0) {
                macro_safe_close(pfd[0]);
                users_child(u, sys, cb, userdata, pfd[1]);
        }
        macro_safe_close(pfd[1]);
        /* the child is ours and not yet reaped: its pid cannot name another process here */
        pidfd = pidfd_open(pid, 0);
        if (pidfd < 0) {
                r = log_error_errno(-errno, "pidfd_open");
                (void)kill(pid, SIGKILL);
                (void)waitpid(pid, NULL, 0);
                macro_safe_close(pfd[0]);
                return r;
        }
        r = users_wait_child(pid, pidfd, pfd[0], sys->user_timeout, &rs, &status, &reaped,
                             &kill_errno);
        macro_safe_close(pfd[0]);
        reason = users_reason_take(&rs);
        if (reason && reason[0] == USERS_RAN_MARK) {
                ran = true;
                free(reason);
                reason = NULL;
        }
        fflush(stdout);
        if (r == -ETIME) {
                char d[FORMAT_DURATION_MAX];
                _cleanup_free_ char *why =
                        util_strprintf("no end after admin.user-timeout (%s): %s%s",
                                       util_format_duration_exact(d, sizeof d, sys->user_timeout),
                                       kill_errno ? "could not kill it: " : "killed",
                                       kill_errno ? log_errno_to_string(kill_errno)
                                       : reaped   ? ""
                                                  : ", and still not gone");

                tally->n_failed++;
                /* "plan": null, as for a child that printed none: it had not, unless it was
                 * stopped in the middle of its plan (then the document is cut short anyway) */
                users_output_after(out, /* ran= */ false, "failed", why ?: "timed out");
                users_report_failed(u, "failed", why ?: "timed out");
                return 0;
        }
        if (r < 0)
                return log_error_errno(r, "waiting for %s's run", u->name);

        if (WIFSIGNALED(status)) {
                _cleanup_free_ char *why = util_strprintf("killed by signal %d", WTERMSIG(status));

                tally->n_failed++;
                users_output_after(out, ran, "failed", "killed by a signal");
                users_report_failed(u, "failed", why ?: "killed by a signal");
                return 0;
        }
        users_output_after(out, ran,
                           WEXITSTATUS(status) == USERS_EXIT_OK        ? "ok"
                           : WEXITSTATUS(status) == USERS_EXIT_SKIPPED ||
                                           WEXITSTATUS(status) == USERS_EXIT_LOCKED ||
                                           WEXITSTATUS(status) == USERS_EXIT_ABSENT ||
                                           WEXITSTATUS(status) == USERS_EXIT_CONFIG
                                   ? "skipped"
                                   : "failed",
                           reason);
        switch (WEXITSTATUS(status)) {
        case USERS_EXIT_OK:
                tally->n_ok++;
                log_notice("%s: ok", u->name);
                break;
        case USERS_EXIT_SKIPPED:
                tally->n_skipped++;
                log_warning("%s: skipped: %s", u->name, reason ? reason : "no safe tree");
                break;
        case USERS_EXIT_ABSENT:
                tally->n_absent++;
                log_notice("%s: not in this user's trees", u->name);
                break;
        case USERS_EXIT_LOCKED:
                tally->n_skipped++;
                log_warning("%s: skipped: another qgc is working on the tree", u->name);
                break;
        case USERS_EXIT_UNKNOWN:
                tally->n_failed++;
                users_report_failed(u, "failed",
                                    reason ?: "the runtime directory of a tree is not known");
                break;
        case USERS_EXIT_DROP: {
                _cleanup_free_ char *why =
                        util_strprintf("cannot drop privileges: %s", reason ?: "unknown");
                tally->n_failed++;
                users_report_failed(u, "failed", why ?: "cannot drop privileges");
                break;
        }
        case USERS_EXIT_CONFIG:
                /* the user's typo: that user alone is skipped, at err, counted apart; the run
                 * (and the unit) does not fail for everyone every day until the user fixes it */
                tally->n_skipped++;
                tally->n_config++;
                users_report_failed(u, "skipped", reason ?: "invalid policy file");
                break;
        case USERS_EXIT_FAILED:
                tally->n_failed++;
                log_error("%s: failed: %s", u->name, reason ? reason : "some actions failed");
                break;
        default:
                tally->n_failed++;
                log_error("%s: failed: exit status %d", u->name, WEXITSTATUS(status));
                break;
        }
        fflush(stdout);
        return 0;
}

/* Keep the homes of u that hold a tree reachable only through safe paths; say why for others.
 * Only stats here (as root): nothing in the home is opened for reading. */
static int users_filter_homes(UserCand *u, int stores, UserTally *tally) {
        size_t k = 0;
        bool skipped = false;

        for (size_t i = 0; i < u->n_homes; i++) {
                _cleanup_free_ char *g = util_path_join(u->homes[i], ".qwen"), *why = NULL;
                _cleanup_free_ char *dc = util_path_join(u->homes[i], ".deepcode");
                struct stat st;
                int r;

                if (!g || !dc)
                        return -ENOMEM;
                r = !users_store_wanted(&qwen_store, stores) ? -ENOENT :
                    stat(g, &st) < 0 ? -errno : 0;
                /* a home with a ~/.deepcode and no ~/.qwen (Deep Code collected) */
                if ((r == -ENOENT || (r == 0 && !S_ISDIR(st.st_mode))) &&
                    users_store_wanted(&deepcode_store, stores) && lstat(dc, &st) == 0 &&
                    S_ISDIR(st.st_mode)) {
                        free(g);
                        g = TAKE_PTR(dc);
                        r = 0;
                }
                if (r < 0 || !S_ISDIR(st.st_mode)) {
                        if (r == -EACCES) {
                                log_warning_errno(r, "%s: cannot look into '%s', skipping",
                                                  u->name, u->homes[i]);
                                skipped = true;
                        }
                        free(u->homes[i]);
                        continue;
                }
                r = users_path_check(g, u->uid, NULL, &why);
                if (r < 0) {
                        log_warning("%s: skipped: %s", u->name,
                                    why ? why : log_errno_to_string(-r));
                        skipped = true;
                        free(u->homes[i]);
                        continue;
                }
                u->homes[k++] = u->homes[i];
        }
        u->n_homes = k;
        if (k == 0 && skipped)
                tally->n_skipped++;
        return (int)k;
}

/* Is name one of the --user names (or are there none)? */
static bool users_wanted(const UsersOutput *out, const char *name) {
        if (out->n_only == 0)
                return true;
        for (size_t k = 0; k < out->n_only; k++)
                if (streq(out->only[k], name))
                        return true;
        return false;
}

int users_run_all(const Config *system_cfg, users_run_cb cb, void *userdata,
                  const UsersOutput *out) {
        _cleanup_(users_list_done) UserList users = {};
        UserTally tally = {};
        unsigned n_candidates = 0;
        int r;

        r = users_enumerate_passwd(&users);
        if (r < 0)
                return log_error_errno(r, "cannot enumerate users");
        for (size_t i = 0; i < system_cfg->n_user_dirs; i++) {
                r = users_enumerate_dir(&users, system_cfg->user_dirs[i]);
                if (r == -ENOMEM)
                        return log_error_errno(r, "out of memory");
        }

        if (out->json)
                fputs("{\n  \"version\": 1,\n  \"users\": [\n", stdout);
        for (size_t i = 0; i < users.n; i++) {
                if (!users_wanted(out, users.c[i].name))
                        continue;
                r = users_filter_homes(&users.c[i], system_cfg->stores, &tally);
                if (r < 0)
                        return log_error_errno(r, "out of memory");
                if (r == 0)
                        continue;
                n_candidates++;
                r = users_run_one(&users.c[i], system_cfg, cb, userdata, &tally, out);
                if (r < 0)
                        return r;
        }
        if (out->json) {
                fputs(tally.n_json > 0 ? "\n  ]\n}\n" : "  ]\n}\n", stdout);
                fflush(stdout);
        }
        /* a --user that names nobody with a home to look into is an error, not silence */
        for (size_t k = 0; k < out->n_only; k++) {
                bool found = false;
                for (size_t i = 0; i < users.n && !found; i++)
                        found = streq(users.c[i].name, out->only[k]);
                if (!found) {
                        log_error("--user '%s': no such user with a home", out->only[k]);
                        tally.n_failed++;
                }
        }

        /* restore: users without it are no failure, but if no user has it, that is one */
        if (tally.n_absent > 0 && tally.n_ok == 0 && tally.n_failed == 0) {
                log_error("restore: in no user's trees (%u looked in)", tally.n_absent);
                tally.n_failed++;
        }

        /* On stderr: stdout carries the children's plans (one JSON document each with --json).
         * Under --quiet only a run with failures is summarized. */
        if (n_candidates == 0 && tally.n_skipped == 0)
                log_notice("no user has a %s",
                           system_cfg->stores == CONFIG_STORES_QWEN       ? "Qwen tree"
                           : system_cfg->stores == CONFIG_STORES_DEEPCODE ? "Deep Code store"
                                                                          : "Qwen tree or a Deep Code store");
        else
                log_internal(tally.n_failed > 0 ? LOG_LEVEL_WARNING : LOG_LEVEL_NOTICE, 0,
                             "users: %u ok, %u failed, %u skipped%s%s", tally.n_ok,
                             tally.n_failed, tally.n_skipped,
                             tally.n_absent > 0 ? ", the others without it" : "",
                             tally.n_config > 0 ? " (an invalid policy file of their own: see "
                                                  "above)"
                                                : "");
        metrics_record_users(tally.n_ok, tally.n_failed, tally.n_skipped - tally.n_config,
                             tally.n_config);
        return tally.n_failed > 0 ? 1 : 0;
}
