/* live-probe.c: the liveness probe of a tree (live.h's LiveProbe), loaded once and refreshed by
 * what changed: this host's boot id, pid namespace and name; the registry records
 * G/sessions/<pid>[-<8hex>].json, each verified as Qwen does when read (qwen-layout.md §6): the
 * file-name pid equals "pid", "pidNs" equals our pid namespace, "procStart" (<boot id>:<start
 * ticks>) names our boot and the pid is alive with the same start ticks; a record from another
 * boot proves the process gone (not live), whatever its pid namespace; another pid namespace of
 * this boot, a newer schema or an unreadable /proc cannot be evaluated (LIVE_UNKNOWN). And the names of the writer locks
 * R/tmp/session-writer-locks/<id>.lock (read when a session has one: live.c). Read-only, by fd,
 * without following symlinks. */
#include "autoconf.h"

#include <ctype.h>
#include <dirent.h>
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

#include "fsutil.h"
#include "json.h"
#include "json-input.h"
#include "live.h"
#include "live-int.h"
#include "log.h"
#include "macro.h"
#include "qwen.h"

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

#define LIVE_VERDICT(f, ...)                                                                       \
        do {                                                                                       \
                *ret_flags = (f);                                                                  \
                *ret_reason = strprintf(__VA_ARGS__);                                              \
                return *ret_reason ? 0 : -ENOMEM;                                                  \
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
int live_reg_cmp_id(const LiveRegEntry *e, const char *id) {
        if (!e->session_id)
                return 1;
        return ascii_strcasecmp(e->session_id, id);
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

static int64_t live_ns(const struct timespec *t) {
        return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/* Stamp the directory open at fd before listing it. A directory changed within the last second
 * gets no valid stamp: a change in the same tick of the filesystem's clock would not show. */
static void live_dir_stamp(int fd, LiveDirStamp *ret) {
        struct timespec now;
        struct stat st;

        *ret = (LiveDirStamp){};
        if (fstat(fd, &st) < 0 || clock_gettime(CLOCK_REALTIME, &now) < 0)
                return;
        /* adding, removing or renaming an entry sets mtime (and ctime) to the current time */
        if (live_ns(&st.st_mtim) > live_ns(&now) - 1000000000)
                return;
        *ret = (LiveDirStamp){ .valid = true, .dev = st.st_dev, .ino = st.st_ino,
                               .mtime_ns = live_ns(&st.st_mtim),
                               .ctime_ns = live_ns(&st.st_ctim) };
}

static bool live_dir_unchanged(int fd, const LiveDirStamp *stamp) {
        struct stat st;

        return stamp->valid && fstat(fd, &st) == 0 && st.st_dev == stamp->dev &&
               st.st_ino == stamp->ino && live_ns(&st.st_mtim) == stamp->mtime_ns &&
               live_ns(&st.st_ctim) == stamp->ctime_ns;
}

static bool live_fileid_same(const FileId *a, const FileId *b) {
        return a->present && b->present && a->dev == b->dev && a->ino == b->ino &&
               a->size == b->size && a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

static int live_fileid_at(int dfd, const char *name, FileId *ret) {
        struct stat st;

        *ret = (FileId){};
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        fs_fileid_from_stat(ret, &st);
        return 0;
}

/* Read and decide one registry record (sfd, name) into e. */
static int live_registry_read(LiveProbe *p, int sfd, const char *name, int64_t pid,
                              LiveRegEntry *e) {
        json_object *o = NULL;
        const char *sid;
        FileId after;
        int r;

        e->name = strdup(name);
        if (!e->name)
                return -ENOMEM;
        (void)live_fileid_at(sfd, name, &e->id);
        p->reg_reads++;
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
        if (live_fileid_at(sfd, name, &after) < 0 || !live_fileid_same(&e->id, &after))
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
        LiveDirStamp stamp;
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
        p->reg_stamp = (LiveDirStamp){};
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
                        FileId now;

                        if (pid < 0)
                                continue;
                        hit = n_old ? bsearch(&kp, by_name, n_old, sizeof(LiveRegEntry *),
                                              live_cmp_reg_ptr_name)
                                    : NULL;
                        if (hit && live_fileid_at(sfd, name, &now) == 0 &&
                            live_fileid_same(&(*hit)->id, &now)) {
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
                        r = greedy_realloc((void **)&reg, &alloc, n + 1, sizeof(LiveRegEntry));
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

int live_cmp_name(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static void live_probe_locks_clear(LiveProbe *p) {
        for (size_t i = 0; i < p->n_locks; i++)
                free(p->locks[i]);
        free(p->locks);
        p->locks = NULL;
        p->n_locks = p->alloc_locks = 0;
        p->locks_fd = safe_close(p->locks_fd);
        p->locks_stamp = (LiveDirStamp){};
}

/* Open R/tmp/session-writer-locks and list its *.lock names, unless it is the directory listed
 * last time and unchanged since. */
static int live_probe_load_locks(LiveProbe *p) {
        _cleanup_close_ int rfd = -EBADF, tfd = -EBADF, lfd = -EBADF, lfd2 = -EBADF;
        _cleanup_free_ FsDir *d = NULL;
        LiveDirStamp stamp;
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
                if (!s || greedy_realloc((void **)&p->locks, &p->alloc_locks, p->n_locks + 1,
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
                p->registry_problem = strprintf("registry '%s/sessions' unreadable: %s",
                                                p->global_dir, errno_to_string(-r));
                if (!p->registry_problem)
                        return -ENOMEM;
        }
        r = live_probe_load_locks(p);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                p->locks_problem = strprintf("writer locks in '%s/tmp' unreadable: %s",
                                             p->runtime_dir, errno_to_string(-r));
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

unsigned live_probe_reads(const LiveProbe *p) {
        return p->reg_reads;
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
