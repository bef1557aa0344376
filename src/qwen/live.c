/* live.c: is a session in use now? The probe of a tree (LiveProbe), loaded
 * once and refreshed by what changed: this host's boot id, pid namespace and name; the registry
 * records G/sessions/<pid>[-<8hex>].json, each verified as Qwen does when read: the file-name pid
 * equals "pid", "pidNs" equals our pid namespace, "procStart" (<boot id>:<start ticks>) names our
 * boot and the pid is alive with the same start ticks; a record from another boot proves the
 * process gone, whatever its pid namespace; another pid namespace of this boot, a newer schema or
 * an unreadable /proc cannot be evaluated (LIVE_UNKNOWN); the names of the writer locks
 * R/tmp/session-writer-locks/<id>.lock. Then the signals of one session from the probe and the
 * runtime claims of its chats/ (claims.h): the liveness pass after the scan (live_pass()), the
 * executor's re-check (live_check_claims()) and whether a project's shared files may be in use
 * (live_project_busy()). Runtime claims are live when their pid is alive here or their host is
 * foreign (Qwen's isRuntimeStatusActive). Writer locks are live unless provably stale: same host,
 * boot and pid namespace, and the pid dead or started at another time; a sealed lock is always
 * live. Everything is read-only, by fd, without following symlinks. */
#include "autoconf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs.h"
#include "json.h"
#include "json-input.h"
#include "live.h"
#include "log.h"
#include "macro.h"
#include "qwen.h"

typedef struct LiveRegEntry {
        char *session_id; /* NULL: no record of a session (unreadable, no "sessionId") */
        unsigned flags;   /* LIVE_REGISTRY, LIVE_UNKNOWN or 0 (provably dead) */
        char *reason;
        char *name;       /* the file in G/sessions/ */
        FileId id;        /* its identity when read; not present: read again at a refresh */
} LiveRegEntry;

struct LiveProbe {
        char *global_dir, *runtime_dir; /* for live_probe_refresh() */
        char boot_id[64];
        bool boot_known;
        uint64_t pidns;
        bool pidns_known;
        char hostname[HOST_NAME_MAX + 1];

        LiveRegEntry *reg;      /* sorted by session id, records without one last */
        size_t n_reg, alloc_reg;
        char *registry_problem; /* G/sessions exists but could not be listed */
        FileId reg_stamp;       /* G/sessions as listed (live_dir_stamp()) */
        FileId locks_stamp;

        int locks_fd;           /* R/tmp/session-writer-locks, -EBADF when absent */
        char **locks;           /* sorted names in it */
        size_t n_locks, alloc_locks;
        char *locks_problem;
};

/* Read a small text file by absolute path (for /proc); NUL-terminated into buf. */
static int live_read_small(const char *path, char *buf, size_t n) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        ssize_t k;

        if (fd < 0)
                return -errno;
        k = fs_pread_full(fd, buf, n - 1, 0);
        if (k < 0)
                return (int)k;
        buf[k] = 0;
        return (int)k;
}

int live_pid_start(int64_t pid, uint64_t *ret_ticks) {
        char path[64], buf[1024];
        const char *p;
        char state;
        unsigned long long ticks;
        int r;

        if (pid <= 0 || pid > INT_MAX)
                return -EINVAL;
        if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
                return 0;
        (void)snprintf(path, sizeof(path), "/proc/%" PRId64 "/stat", pid);
        r = live_read_small(path, buf, sizeof(buf));
        if (r == -ENOENT || r == -ESRCH)
                return 0;
        if (r < 0)
                return r;
        /* comm may contain anything, up to the LAST ')' */
        p = strrchr(buf, ')');
        if (!p || p[1] != ' ')
                return -EBADMSG;
        p += 2;
        state = *p;
        if (state == 'Z' || state == 'X')
                return 0;
        /* p is at field 3; starttime is field 22: skip 19 more fields */
        for (int i = 3; i < 22; i++) {
                p = strchr(p, ' ');
                if (!p)
                        return -EBADMSG;
                p++;
        }
        if (sscanf(p, "%llu", &ticks) != 1)
                return -EBADMSG;
        if (ret_ticks)
                *ret_ticks = ticks;
        return 1;
}

/* This host's boot id, pid namespace and hostname. */
static void live_probe_host(LiveProbe *p) {
        struct stat st;
        size_t n;

        if (live_read_small("/proc/sys/kernel/random/boot_id", p->boot_id, sizeof(p->boot_id)) >
            0) {
                n = strcspn(p->boot_id, "\n");
                p->boot_id[n] = 0;
                p->boot_known = n > 0;
        }
        if (stat("/proc/self/ns/pid", &st) == 0) {
                p->pidns = (uint64_t)st.st_ino;
                p->pidns_known = true;
        }
        if (gethostname(p->hostname, sizeof(p->hostname) - 1) < 0)
                p->hostname[0] = 0;
        p->hostname[sizeof(p->hostname) - 1] = 0;
}

/* "<pid>.json" or "<pid>-<8 lower hex>.json": the pid, or -1. */
static int64_t live_registry_name_pid(const char *name) {
        int64_t pid = 0;
        const char *c = name;

        if (!isdigit((unsigned char)*c))
                return -1;
        for (; isdigit((unsigned char)*c); c++) {
                pid = pid * 10 + (*c - '0');
                if (pid > INT_MAX)
                        return -1;
        }
        if (*c == '-') {
                c++;
                for (int i = 0; i < 8; i++, c++)
                        if (!isdigit((unsigned char)*c) && !(*c >= 'a' && *c <= 'f'))
                                return -1;
        }
        return streq(c, ".json") ? pid : -1;
}

/* Decide one registry record: flags and reason. */
static int live_registry_eval(const LiveProbe *p, int64_t name_pid, json_object *o,
                              unsigned *ret_flags, char **ret_reason) {
        const char *proc_start = json_get_string(o, "procStart");
        int64_t schema = 1, pid = 0, pidns = 0;
        unsigned long long ticks;
        uint64_t now_ticks;
        const char *colon;
        int r;

#define LIVE_VERDICT(f, ...) \
        do { \
                *ret_flags = (f); \
                *ret_reason = util_strprintf(__VA_ARGS__); \
                return *ret_reason ? 0 : -ENOMEM; \
        } while (0)

        if (json_get_int(o, "schemaVersion", &schema) && schema > 1)
                LIVE_VERDICT(LIVE_UNKNOWN, "registry record %" PRId64 ".json has schema %" PRId64,
                             name_pid, schema);
        if (!json_get_int(o, "pid", &pid) || pid != name_pid)
                LIVE_VERDICT(LIVE_UNKNOWN, "registry record %" PRId64 ".json: pid does not match",
                             name_pid);
        if (!p->boot_known || !p->pidns_known)
                LIVE_VERDICT(LIVE_UNKNOWN, "registry pid %" PRId64 ": /proc unreadable", pid);
        colon = proc_start ? strrchr(proc_start, ':') : NULL;
        if (!colon || sscanf(colon + 1, "%llu", &ticks) != 1)
                LIVE_VERDICT(LIVE_UNKNOWN, "registry pid %" PRId64 ": procStart unreadable", pid);
        /* the boot first: a process of an earlier boot is gone, whatever its pid namespace (a
         * container's namespace has another inode after a reboot, so it never matches again) */
        if ((size_t)(colon - proc_start) != strlen(p->boot_id) ||
            !strneq(proc_start, p->boot_id, strlen(p->boot_id)))
                LIVE_VERDICT(0, "registry pid %" PRId64 " is from another boot", pid);
        if (!json_get_int(o, "pidNs", &pidns) || (uint64_t)pidns != p->pidns)
                LIVE_VERDICT(LIVE_UNKNOWN, "registry pid %" PRId64 " in another pid namespace",
                             pid);
        r = live_pid_start(pid, &now_ticks);
        if (r < 0)
                LIVE_VERDICT(LIVE_UNKNOWN, "registry pid %" PRId64 ": cannot check the process",
                             pid);
        if (r == 0)
                LIVE_VERDICT(0, "registry pid %" PRId64 " is dead", pid);
        if (now_ticks != ticks)
                LIVE_VERDICT(0, "registry pid %" PRId64 " was reused", pid);
        LIVE_VERDICT(LIVE_REGISTRY, "registry pid %" PRId64 " alive", pid);
#undef LIVE_VERDICT
}

/* Registry order: by session id ignoring case, records without one last. */
static int live_reg_cmp_id(const LiveRegEntry *e, const char *id) {
        if (!e->session_id)
                return 1;
        return util_ascii_strcasecmp(e->session_id, id);
}

static int live_cmp_reg(const void *a, const void *b) {
        const LiveRegEntry *x = a, *y = b;

        if (!y->session_id)
                return x->session_id ? -1 : 0;
        return live_reg_cmp_id(x, y->session_id);
}

static int live_cmp_reg_ptr_name(const void *a, const void *b) {
        return strcmp((*(LiveRegEntry *const *)a)->name, (*(LiveRegEntry *const *)b)->name);
}

static void live_reg_entry_done(LiveRegEntry *e) {
        free(e->session_id);
        free(e->reason);
        free(e->name);
        *e = (LiveRegEntry){};
}

/* The identity of the directory open at fd, stamped before listing it: while it still has it,
 * its listing is still true. A directory changed within the last second gets no stamp (present
 * false: list again): a change in the same tick of the filesystem's clock would not show. */
static void live_dir_stamp(int fd, FileId *ret) {
        struct timespec now;
        struct stat st;

        *ret = (FileId){};
        if (fstat(fd, &st) < 0 || clock_gettime(CLOCK_REALTIME, &now) < 0)
                return;
        /* adding, removing or renaming an entry sets mtime (and ctime) to the current time */
        fs_fileid_from_stat(ret, &st);
        if (ret->mtime_ns > util_timespec_to_nsec(&now) - NSEC_PER_SEC)
                *ret = (FileId){};
}

static bool live_dir_unchanged(int fd, const FileId *stamp) {
        return fs_check_identity_fd(fd, stamp) > 0;
}

/* Read and decide one registry record (sfd, name) into e. */
static int live_registry_read(LiveProbe *p, int sfd, const char *name, int64_t pid,
                              LiveRegEntry *e) {
        json_object *o = NULL;
        const char *sid;
        struct stat st;
        int r;

        e->name = strdup(name);
        if (!e->name)
                return -ENOMEM;
        if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                fs_fileid_from_stat(&e->id, &st);
        r = json_input_read(sfd, name, JSON_INPUT_REGISTRY, &o);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                log_debug("registry '%s': unreadable, ignored", name);
        sid = r < 0 ? NULL : json_get_string(o, "sessionId");
        if (sid) {
                e->session_id = strdup(sid);
                r = e->session_id ? live_registry_eval(p, pid, o, &e->flags, &e->reason) : -ENOMEM;
        } else
                r = 0;
        json_object_put(o);
        /* replaced while it was read: what was read is not known to be that identity's */
        if (fs_check_identity(sfd, name, &e->id) <= 0)
                e->id.present = false;
        return r;
}

/* (Re)load G/sessions/ into p->reg, sorted by session id ignoring case. A record whose file has
 * the identity it had when it was read last is not read again, and a directory unchanged since
 * its last listing is not listed again (live_probe_refresh()). */
static int live_probe_load_registry(LiveProbe *p) {
        _cleanup_close_ int gfd = -EBADF, sfd = -EBADF;
        _cleanup_free_ FsDir *d = NULL;
        _cleanup_free_ LiveRegEntry **by_name = NULL;
        LiveRegEntry *old = p->reg, *reg = NULL;
        size_t n_old = p->n_reg, n = 0, alloc = 0;
        FileId stamp;
        const char *name;
        unsigned char type;
        int r = 0, k;

        gfd = open(p->global_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (gfd < 0 && errno != ENOENT)
                return -errno;
        sfd = gfd < 0 ? -ENOENT : fs_open_noatime(gfd, "sessions", O_RDONLY | O_DIRECTORY);
        if (sfd < 0 && sfd != -ENOENT)
                return sfd;
        if (sfd >= 0 && live_dir_unchanged(sfd, &p->reg_stamp))
                return 0;
        p->reg = NULL;
        p->n_reg = p->alloc_reg = 0;
        p->reg_stamp = (FileId){};
        if (sfd >= 0) {
                live_dir_stamp(sfd, &stamp);
                d = malloc(sizeof(FsDir));
                by_name = calloc(n_old ? n_old : 1, sizeof(LiveRegEntry *));
                if (!d || !by_name) {
                        r = -ENOMEM;
                        goto finish;
                }
                for (size_t i = 0; i < n_old; i++)
                        by_name[i] = &old[i];
                if (n_old > 1)
                        qsort(by_name, n_old, sizeof(LiveRegEntry *), live_cmp_reg_ptr_name);
                fs_dir_init(d, sfd);
                while ((k = fs_dir_next(d, &name, &type)) > 0) {
                        int64_t pid = live_registry_name_pid(name);
                        LiveRegEntry key = { .name = (char *)name }, *kp = &key, **hit;
                        LiveRegEntry e = {};

                        if (pid < 0)
                                continue;
                        hit = n_old ? bsearch(&kp, by_name, n_old, sizeof(LiveRegEntry *),
                                              live_cmp_reg_ptr_name)
                                    : NULL;
                        if (hit && fs_check_identity(sfd, name, &(*hit)->id) > 0) {
                                /* unchanged: its verdict stands (the old entry keeps its
                                 * name, which the bisection still needs) */
                                e = **hit;
                                e.name = strdup(name);
                                if (!e.name) {
                                        r = -ENOMEM;
                                        break;
                                }
                                (*hit)->session_id = (*hit)->reason = NULL;
                        } else {
                                r = live_registry_read(p, sfd, name, pid, &e);
                                if (r < 0) {
                                        live_reg_entry_done(&e);
                                        break;
                                }
                        }
                        r = util_greedy_realloc((void **)&reg, &alloc, n + 1, sizeof(LiveRegEntry));
                        if (r < 0) {
                                live_reg_entry_done(&e);
                                break;
                        }
                        reg[n++] = e;
                }
                if (k < 0 && r == 0)
                        r = k;
                if (r == 0)
                        p->reg_stamp = stamp;
        }
finish:
        for (size_t i = 0; i < n_old; i++)
                live_reg_entry_done(&old[i]);
        free(old);
        if (n > 1)
                qsort(reg, n, sizeof(LiveRegEntry), live_cmp_reg);
        p->reg = reg;
        p->n_reg = n;
        p->alloc_reg = alloc;
        return r;
}

static int live_cmp_name(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static void live_probe_locks_clear(LiveProbe *p) {
        for (size_t i = 0; i < p->n_locks; i++)
                free(p->locks[i]);
        free(p->locks);
        p->locks = NULL;
        p->n_locks = p->alloc_locks = 0;
        p->locks_fd = macro_safe_close(p->locks_fd);
        p->locks_stamp = (FileId){};
}

/* Open R/tmp/session-writer-locks and list its *.lock names, unless it is the directory listed
 * last time and unchanged since. */
static int live_probe_load_locks(LiveProbe *p) {
        _cleanup_close_ int rfd = -EBADF, tfd = -EBADF, lfd = -EBADF, lfd2 = -EBADF;
        _cleanup_free_ FsDir *d = NULL;
        FileId stamp;
        const char *name;
        unsigned char type;
        int r = 0, k;

        rfd = open(p->runtime_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (rfd < 0 && errno != ENOENT)
                return -errno;
        tfd = rfd < 0 ? -ENOENT : fs_open_noatime(rfd, "tmp", O_RDONLY | O_DIRECTORY);
        if (tfd < 0 && tfd != -ENOENT)
                return tfd;
        lfd = tfd < 0 ? -ENOENT
                      : fs_open_noatime(tfd, "session-writer-locks", O_RDONLY | O_DIRECTORY);
        if (lfd < 0 && lfd != -ENOENT)
                return lfd;
        if (lfd >= 0 && p->locks_fd >= 0 && live_dir_unchanged(lfd, &p->locks_stamp))
                return 0;
        live_probe_locks_clear(p);
        if (lfd < 0)
                return 0;
        live_dir_stamp(lfd, &stamp);
        p->locks_fd = TAKE_FD(lfd);
        d = malloc(sizeof(FsDir));
        if (!d)
                return -ENOMEM;
        lfd2 = fs_open_dir(p->locks_fd, "."); /* its own offset: locks_fd is kept */
        if (lfd2 < 0)
                return lfd2;
        fs_dir_init(d, lfd2);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                size_t n = strlen(name);
                char *s;
                if (n < 6 || !streq(name + n - 5, ".lock"))
                        continue;
                s = strdup(name);
                if (!s || util_greedy_realloc((void **)&p->locks, &p->alloc_locks, p->n_locks + 1,
                                              sizeof(char *)) < 0) {
                        free(s);
                        r = -ENOMEM;
                        break;
                }
                p->locks[p->n_locks++] = s;
        }
        if (k < 0 && r == 0)
                r = k;
        if (p->n_locks > 1)
                qsort(p->locks, p->n_locks, sizeof(char *), live_cmp_name);
        if (r == 0)
                p->locks_stamp = stamp;
        return r;
}

/* Load, or bring up to date, the registry and the writer locks' listing. */
static int live_probe_load(LiveProbe *p) {
        int r;

        free(p->registry_problem);
        free(p->locks_problem);
        p->registry_problem = p->locks_problem = NULL;
        r = live_probe_load_registry(p);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                p->registry_problem = util_strprintf("registry '%s/sessions' unreadable: %s",
                                                     p->global_dir, log_errno_to_string(-r));
                if (!p->registry_problem)
                        return -ENOMEM;
        }
        r = live_probe_load_locks(p);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                p->locks_problem = util_strprintf("writer locks in '%s/tmp' unreadable: %s",
                                                  p->runtime_dir, log_errno_to_string(-r));
                if (!p->locks_problem)
                        return -ENOMEM;
        }
        return 0;
}

int live_probe_new(const Tree *t, LiveProbe **ret) {
        LiveProbe *p = calloc(1, sizeof(LiveProbe));
        int r;

        if (!p)
                return -ENOMEM;
        p->locks_fd = -EBADF;
        p->global_dir = strdup(t->global_dir);
        p->runtime_dir = strdup(t->runtime_dir);
        if (!p->global_dir || !p->runtime_dir)
                return live_probe_free(p), -ENOMEM;
        live_probe_host(p);
        r = live_probe_load(p);
        if (r < 0)
                return live_probe_free(p), r;
        *ret = p;
        return 0;
}

int live_probe_refresh(LiveProbe *p) {
        return live_probe_load(p);
}

LiveProbe *live_probe_free(LiveProbe *p) {
        if (!p)
                return NULL;
        for (size_t i = 0; i < p->n_reg; i++)
                live_reg_entry_done(&p->reg[i]);
        free(p->reg);
        live_probe_locks_clear(p);
        free(p->registry_problem);
        free(p->locks_problem);
        free(p->global_dir);
        free(p->runtime_dir);
        free(p);
        return NULL;
}

/* Add flag and a reason to s. */
static int live_add(Session *s, unsigned flag, const char *reason) {
        char *n;

        s->live |= flag;
        if (!reason)
                return 0;
        n = s->live_reason ? util_strprintf("%s; %s", s->live_reason, reason) : strdup(reason);
        if (!n)
                return -ENOMEM;
        free(s->live_reason);
        s->live_reason = n;
        return 0;
}

/* Evaluate one claim naming s. */
static int live_check_claim(const LiveProbe *p, Session *s, const RuntimeClaim *c) {
        _cleanup_free_ char *why = NULL;
        int r;

        if (c->malformed) {
                why = util_strprintf("runtime claim '%s' unreadable", c->file);
                return why ? live_add(s, LIVE_UNKNOWN, why) : -ENOMEM;
        }
        if (c->pid <= 0)
                return 0; /* Qwen: not active */
        if (!c->hostname || !streq(c->hostname, p->hostname)) {
                why = util_strprintf("runtime claim pid %" PRId64 " on host '%s'", c->pid,
                                     c->hostname ? c->hostname : "(none)");
                return why ? live_add(s, LIVE_CLAIM, why) : -ENOMEM;
        }
        r = live_pid_start(c->pid, NULL);
        if (r == 0)
                return 0;
        why = util_strprintf("runtime claim pid %" PRId64 " alive", c->pid);
        return why ? live_add(s, LIVE_CLAIM, why) : -ENOMEM;
}

/* The writer lock verdict for an open lock record. NULL reason: stale. */
static int live_lock_eval(const LiveProbe *p, json_object *o, char **ret_reason) {
        const char *state = json_get_string(o, "state");
        const char *host = json_get_string(o, "hostname");
        const char *psi = json_get_string(o, "process_start_identity");
        json_object *ns = NULL;
        int64_t pid = 0;
        uint64_t now_ticks;
        unsigned long long ticks;
        const char *colon;
        size_t blen;
        int r;

        *ret_reason = NULL;
#define LIVE_LOCKED(...) \
        do { \
                *ret_reason = util_strprintf(__VA_ARGS__); \
                return *ret_reason ? 0 : -ENOMEM; \
        } while (0)

        if (!json_object_is_type(o, json_type_object))
                LIVE_LOCKED("writer lock malformed");
        if (state && streq(state, "sealed"))
                LIVE_LOCKED("writer lock sealed");
        if (state && !streq(state, "active"))
                LIVE_LOCKED("writer lock in state '%s'", state);
        if (json_object_object_get_ex(o, "state", &ns) && ns && !state)
                LIVE_LOCKED("writer lock malformed");
        if (!host || !streq(host, p->hostname))
                LIVE_LOCKED("writer lock held on host '%s'", host ? host : "(none)");
        if (!json_get_int(o, "pid", &pid) || pid <= 0)
                LIVE_LOCKED("writer lock malformed");
        if (!psi || !strneq(psi, "linux:", 6) || !p->boot_known)
                LIVE_LOCKED("writer lock pid %" PRId64 ": start identity not checkable", pid);
        psi += 6;
        colon = strrchr(psi, ':');
        blen = strlen(p->boot_id);
        if (!colon || sscanf(colon + 1, "%llu", &ticks) != 1)
                LIVE_LOCKED("writer lock malformed");
        if ((size_t)(colon - psi) != blen || !strneq(psi, p->boot_id, blen))
                LIVE_LOCKED("writer lock pid %" PRId64 " from another boot", pid);
        if (json_object_object_get_ex(o, "pid_namespace_id", &ns) && ns) {
                int64_t v = 0;
                const char *sv = json_object_is_type(ns, json_type_string) ?
                                         json_object_get_string(ns) :
                                         NULL;
                bool same;
                if (json_object_is_type(ns, json_type_int))
                        v = json_object_get_int64(ns);
                else if (sv) {
                        /* "pid:[4026531836]" or "4026531836" */
                        const char *dgt = sv + strcspn(sv, "0123456789");
                        v = strtoll(dgt, NULL, 10);
                }
                same = p->pidns_known && v > 0 && (uint64_t)v == p->pidns;
                if (!same)
                        LIVE_LOCKED("writer lock pid %" PRId64 " in another pid namespace", pid);
        }
        r = live_pid_start(pid, &now_ticks);
        if (r < 0)
                LIVE_LOCKED("writer lock pid %" PRId64 ": cannot check the process", pid);
        if (r == 0 || now_ticks != ticks)
                return 0; /* stale: Qwen would reclaim it */
        LIVE_LOCKED("writer lock held by pid %" PRId64, pid);
#undef LIVE_LOCKED
}

/* The writer lock R/tmp/session-writer-locks/<id>.lock. */
static int live_check_lock(const LiveProbe *p, Session *s) {
        _cleanup_free_ char *why = NULL;
        char name[SESSION_ID_MAX + sizeof(".lock")];
        const char *key = name;
        json_object *o = NULL;
        size_t k = strnlen(s->id, SESSION_ID_MAX);
        int r;

        memcpy(name, s->id, k);
        memcpy(name + k, ".lock", sizeof(".lock"));
        if (p->locks_problem)
                return live_add(s, LIVE_UNKNOWN, p->locks_problem);
        if (p->n_locks == 0 ||
            !bsearch(&key, p->locks, p->n_locks, sizeof(char *), live_cmp_name))
                return 0;
        r = json_input_read(p->locks_fd, name, JSON_INPUT_WRITER_LOCK, &o);
        if (r == -ENOENT)
                return 0; /* released since the listing */
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return live_add(s, LIVE_LOCK, "writer lock unreadable");
        r = live_lock_eval(p, o, &why);
        json_object_put(o);
        if (r < 0)
                return r;
        return why ? live_add(s, LIVE_LOCK, why) : 0;
}

int live_check_claims(const LiveProbe *p, Session *s, const ClaimSet *claims) {
        size_t first, end;
        int r;

        if (p->registry_problem) {
                r = live_add(s, LIVE_UNKNOWN, p->registry_problem);
                if (r < 0)
                        return r;
        }
        /* first registry entry for the id, then every entry with it */
        first = 0;
        end = p->n_reg;
        while (first < end) {
                size_t mid = first + (end - first) / 2;
                if (live_reg_cmp_id(&p->reg[mid], s->id) < 0)
                        first = mid + 1;
                else
                        end = mid;
        }
        for (size_t i = first; i < p->n_reg; i++) {
                const LiveRegEntry *e = &p->reg[i];
                if (live_reg_cmp_id(e, s->id) != 0)
                        break;
                if (e->flags == 0) {
                        log_debug("session %s: %s", s->id, e->reason);
                        continue;
                }
                r = live_add(s, e->flags, e->reason);
                if (r < 0)
                        return r;
        }
        claims_range(claims, s->id, &first, &end);
        for (size_t i = first; i < end; i++) {
                if (!claims_match(&claims->claims[i], s->id))
                        continue;
                r = live_check_claim(p, s, &claims->claims[i]);
                if (r < 0)
                        return r;
        }
        return live_check_lock(p, s);
}

int live_pass(const LiveProbe *p, Session *sessions, const LiveFacts *facts, size_t n,
              const ClaimSet *claims) {
        int r;

        for (size_t i = 0; i < n; i++) {
                Session *s = &sessions[i];

                if (p) {
                        r = live_check_claims(p, s, claims);
                        if (r < 0)
                                return r;
                } else {
                        s->live |= LIVE_UNKNOWN;
                        s->live_reason = strdup("liveness probe unavailable");
                        if (!s->live_reason)
                                return -ENOMEM;
                }
                if (facts[i].subagents_incomplete) {
                        /* a recent subagent write may be missing from last_write: count it as
                         * in use */
                        s->live |= LIVE_UNKNOWN;
                        if (!s->live_reason &&
                            !(s->live_reason = strdup("subagents/ could not be listed")))
                                return -ENOMEM;
                }
        }
        return 0;
}

/* Evaluate the signals of id (registry, claims, lock) on a scratch session: 1 live, 0 not (or a
 * session of another project: elsewhere). */
static int live_busy_id(const LiveProbe *p, const ClaimSet *claims, const char *id,
                        bool (*elsewhere)(const char *id, void *userdata), void *userdata,
                        char **ret_reason) {
        Session s = {};
        int r;

        if (elsewhere(id, userdata))
                return 0;
        snprintf(s.id, sizeof s.id, "%s", id);
        r = live_check_claims(p, &s, claims);
        if (r < 0) {
                free(s.live_reason);
                return r;
        }
        if (s.live == 0) {
                free(s.live_reason);
                return 0;
        }
        *ret_reason = s.live_reason ? util_strprintf("session %s: %s", s.id, s.live_reason)
                                    : util_strprintf("session %s in use", s.id);
        free(s.live_reason);
        return *ret_reason ? 1 : -ENOMEM;
}

int live_project_busy(const Tree *t, int chats_fd, bool (*elsewhere)(const char *id, void *userdata),
                      void *userdata, char **ret_reason) {
        _cleanup_(claims_done) ClaimSet claims = {};
        _cleanup_(live_probe_freep) LiveProbe *p = NULL;
        int r;

        r = live_probe_new(t, &p);
        if (r < 0)
                return r;
        if (p->registry_problem || p->locks_problem) {
                *ret_reason = strdup(p->registry_problem ?: p->locks_problem);
                return *ret_reason ? 1 : -ENOMEM;
        }
        if (chats_fd >= 0) {
                r = claims_load(&claims, chats_fd);
                if (r < 0) {
                        *ret_reason = strdup("runtime claims unreadable");
                        return *ret_reason ? 1 : -ENOMEM;
                }
        }
        for (size_t i = 0; i < p->n_reg; i++) {
                if (p->reg[i].flags == 0)
                        continue;
                r = live_busy_id(p, &claims, p->reg[i].session_id, elsewhere, userdata,
                                 ret_reason);
                if (r != 0)
                        return r;
        }
        for (size_t i = 0; i < claims.n; i++) {
                const RuntimeClaim *c = &claims.claims[i];
                char id[SESSION_ID_MAX + 1];
                size_t k;

                if (c->malformed || !c->session_id) {
                        *ret_reason = util_strprintf("runtime claim '%s' unreadable", c->file);
                        return *ret_reason ? 1 : -ENOMEM;
                }
                k = strcspn(c->session_id, "");
                snprintf(id, sizeof id, "%.*s", (int)MIN(k, (size_t)SESSION_ID_MAX),
                         c->session_id);
                r = live_busy_id(p, &claims, id, elsewhere, userdata, ret_reason);
                if (r != 0)
                        return r;
        }
        for (size_t i = 0; i < p->n_locks; i++) {
                char id[SESSION_ID_MAX + 1];
                size_t k = strlen(p->locks[i]) - strlen(".lock");

                if (k > SESSION_ID_MAX)
                        continue; /* not a session's lock name */
                snprintf(id, sizeof id, "%.*s", (int)k, p->locks[i]);
                r = live_busy_id(p, &claims, id, elsewhere, userdata, ret_reason);
                if (r != 0)
                        return r;
        }
        return 0;
}
