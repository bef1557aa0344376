/* test_faults.c: the executor under injected failures (ld --wrap of write, fsync, renameat,
 * renameat2, unlinkat), a crash after every mutating step followed by a normal rerun, a writer
 * appending during the run, the directory fsync audit of every executor run (a name the executor
 * adds is fsynced in its directory before its next unlink), and the journal's fields through a
 * wrapped sd_journal_sendv(). */
#include "autoconf.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "../fs/apply_helpers.h"
#include "actions-int.h"
#include "qwen-commit.h"
#include "cold.h"
#include "fs.h"
#include "rm-rf.h"
#include "journal.h"
#include "lock.h"
#include "hygiene.h"
#include "config.h"
#include "live.h"
#include "reason.h"
#include "restore.h"
#include "qwen.h"
#include "qwen-store.h"
#include "syncq.h"
#include "usage.h"
#include "usage-ahead.h"
#include "usage-index.h"
#include "testskip.h"
#include "force-walk.h"
#include "config-load.c" /* its static functions are tested here */

/* Apply a configuration text as config_load_file() applies a file's, name labelling messages */
static int config_load_string(Config *c, const char *text, const char *name, ConfigErrors *errs) {
        return config_load_apply(c, name ? name : "<string>", text, strlen(text), NULL,
                                 c->n_files == 0, errs);
}
#include "journal.c" /* its static functions are tested here */
#include "usage-index.c" /* its static functions are tested here */

/* Format e as the one-line key=value form used for stderr and files (without '\n'): a
 * malloc'ed string or NULL (ENOMEM, an invalid event or field name). run_id may be NULL. */
static char *journal_format_line(const JournalEntry *e, const char *run_id) {
        char *line = NULL;

        return journal_format_line_full(e, run_id, &line) < 0 ? NULL : line;
}

/* ---------------------------------------------------------------- the seams */

/* What to break, set by each test (reset in setup). */
typedef struct Faults {
        int write_err;      /* write() to usage_record.jsonl fails with this errno */
        size_t write_short; /* ... or writes only this many bytes (a full disk), and then */
        int write_short_err; /* ... returns this errno instead of the count, when set */
        char append_after_short[PATH_MAX]; /* a Qwen writer appends a line here right then */
        int fsync_err;      /* fsync() of usage_record.jsonl */
        int rename_err;     /* renameat/renameat2 whose old name equals rename_match */
        char rename_match[128];
        int unlink_err;     /* unlinkat whose name equals unlink_match */
        char unlink_match[128];
        char append_on_usage_fsync[PATH_MAX]; /* a writer appends to this path then */
        char append_on_rename[PATH_MAX];      /* ... or when rename_trigger is renamed */
        char rename_trigger[128];
        bool no_rename_noreplace; /* renameat2(RENAME_NOREPLACE) fails EINVAL (old NFS, FUSE) */
        char appear_before_install[PATH_MAX]; /* a writer creates this path just before the
                                                 final renameat()/linkat() installs it */
        char mount_on_open[128];       /* openat(O_DIRECTORY) of this name first mounts a tmpfs */
        char mount_path[PATH_MAX];     /* ... here (in a private mount namespace) */
        bool fake_journal_socket;
        int getdents_err;          /* getdents64() of a directory whose path ends in ... */
        char getdents_match[128];  /* ... this fails with getdents_err */
        StrBuf sent; /* sd_journal_sendv() fields, one per line, entries separated by "--\n" */
        unsigned n_sent;
        unsigned n_fsync; /* fsync() calls, of any file */
        unsigned n_dir_fsync; /* ... of directories */
        unsigned n_rename; /* renameat() and renameat2() calls */
        char drop_dir_fsync[128]; /* fsync() of a directory whose path ends in this is skipped
                                   * (returns 0, syncs nothing): the audit must notice */
        bool drop_usage_fsync; /* ... the same for usage_record.jsonl (the usage audit) */
        bool drop_usage_append_fsync; /* ... only for an append's (writable) fd */
        bool hold_usage_fsync; /* an fsync of usage_record.jsonl on another thread than the
                                * executor's waits until the executor waits for an fsync */
        unsigned n_rename_at_usage_sync; /* n_rename when the last held usage fsync went on */
        unsigned n_usage_fsync; /* fsync() calls of usage_record.jsonl */
        unsigned n_journal_write; /* write() calls to the action log (journal.log) */
        bool slow_clock; /* each reading of the executor's clock is later than any batch window */
        uint64_t clock_skew_ns; /* ... by this much in all */
        bool untimed; /* the executor's clock stands still: a batch closes on its size alone */
        unsigned batch_cap; /* a batch is full at this many sessions (0: the executor's own) */
        unsigned crash_after; /* _exit(99) right after the run's nth mutating step (0: off) */
        unsigned n_steps; /* the run's mutating steps so far */
        unsigned crash_after_unlink; /* _exit(99) right after the run's nth unlinkat (0: off): a
                                      * kill inside a step (rm_rf_at()'s walk) */
        unsigned n_unlinks; /* the run's unlinkat() calls so far */
        char meet_on_rename[128]; /* renaming this name meets the concurrent writer (meet_writer) */
        int meet_go, meet_done;   /* pipes to and from the writer: one byte lets it on, one says
                                   * it wrote */
        char file_fault_match[128]; /* write() and fsync() of a file whose path contains this: */
        int file_write_err;  /* ... the first write writes half its bytes, the next fails so */
        int file_fsync_err;  /* ... fsync() fails so */
        bool file_wrote_half;
        const unsigned *meet_written; /* the writer's count of records written (shared memory) */
        unsigned meet_before, meet_after; /* ... read just before and just after the rename */
} Faults;

static Faults faults;

/* The directory fsync audit. Every entry the code under test adds to a directory (a file it
 * creates, a link, a rename's new name, a mkdir) must be made durable by an fsync of that
 * directory before the next destructive step (an unlinkat of anything else): a crash in between
 * could otherwise keep the destruction and lose the addition it relied on. (A rename's old name
 * is not audited: a crash that keeps it leaves a second name, which recover.c completes.) The
 * wrappers below record such directories by (dev, ino), fsync() of a directory clears them,
 * unlinkat() checks; teardown() fails a test that broke the rule. Removing the entry one just
 * added (undoing a temporary file) is no destructive step, nor is an unlinkat that removes
 * nothing. Only the executor is audited (the fixtures make trees without fsyncs), and only opens
 * through the wrapped openat() are seen: a test that wants every create runs with
 * fs_test_force_walk(true) (openat2 is a raw syscall). A crashed child's findings die with it. */
#define AUDIT_MAX 256
typedef struct AuditEntry {
        dev_t dev;
        ino_t ino;
        char name[NAME_MAX + 1]; /* the entry added */
        char dir[PATH_MAX];      /* the directory, for the message */
        const char *how;
} AuditEntry;
static pthread_mutex_t audit_lock = PTHREAD_MUTEX_INITIALIZER; /* fs_fsync_many()'s threads */
static struct {
        bool armed; /* inside the executor (actions_run()) */
        AuditEntry e[AUDIT_MAX];
        size_t n;
        unsigned n_checked;    /* destructive steps checked */
        char violation[2 * PATH_MAX + 256]; /* the first one */
} audit;

static void audit_fd_path(int fd, char *buf, size_t n) {
        char p[64];
        ssize_t k;

        if (fd == AT_FDCWD) {
                snprintf(buf, n, ".");
                return;
        }
        snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
        k = readlink(p, buf, n - 1);
        buf[k < 0 ? 0 : k] = 0;
}

/* The directory of (dfd, name) and the last component of name: 0, or -1 when it is gone. */
static int audit_dir_of(int dfd, const char *name, struct stat *ret_st, char *dir, size_t n,
                        const char **ret_base) {
        const char *slash = strrchr(name, '/');
        char part[PATH_MAX];

        audit_fd_path(dfd, dir, n);
        if (!slash) {
                *ret_base = name;
                return dfd == AT_FDCWD ? stat(".", ret_st) : fstat(dfd, ret_st);
        }
        snprintf(part, sizeof part, "%.*s", (int)(slash - name), name);
        *ret_base = slash + 1;
        if ((size_t)snprintf(dir + strlen(dir), n - strlen(dir), "/%s", part) >= n)
                return -1;
        return fstatat(dfd, slash == name ? "/" : part, ret_st, 0);
}

static void audit_added(int dfd, const char *name, const char *how) {
        AuditEntry e = { .how = how };
        const char *base;
        struct stat st;

        if (!audit.armed || audit_dir_of(dfd, name, &st, e.dir, sizeof e.dir, &base) < 0)
                return;
        e.dev = st.st_dev;
        e.ino = st.st_ino;
        snprintf(e.name, sizeof e.name, "%s", base);
        pthread_mutex_lock(&audit_lock);
        if (audit.n < AUDIT_MAX)
                audit.e[audit.n++] = e;
        pthread_mutex_unlock(&audit_lock);
}

static void audit_synced(int fd) {
        struct stat st;
        size_t k = 0;

        if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))
                return;
        pthread_mutex_lock(&audit_lock);
        for (size_t i = 0; i < audit.n; i++)
                if (audit.e[i].dev != st.st_dev || audit.e[i].ino != st.st_ino)
                        audit.e[k++] = audit.e[i];
        audit.n = k;
        pthread_mutex_unlock(&audit_lock);
}

static void audit_destroys(int dfd, const char *name) {
        char dir[PATH_MAX];
        const char *base;
        struct stat st;
        size_t k = 0;

        if (!audit.armed || audit_dir_of(dfd, name, &st, dir, sizeof dir, &base) < 0)
                return;
        pthread_mutex_lock(&audit_lock);
        /* removing an entry one added and has not made durable undoes it: no destruction */
        for (size_t i = 0; i < audit.n; i++)
                if (audit.e[i].dev != st.st_dev || audit.e[i].ino != st.st_ino ||
                    !streq(audit.e[i].name, base))
                        audit.e[k++] = audit.e[i];
        if (k != audit.n)
                audit.n = k;
        else {
                audit.n_checked++;
                if (audit.n > 0 && !audit.violation[0])
                        snprintf(audit.violation, sizeof audit.violation,
                                 "unlinkat of %.1000s/%.255s while %.1000s/%.255s (%s) was not "
                                 "fsynced in its directory",
                                 dir, base, audit.e[0].dir, audit.e[0].name, audit.e[0].how);
        }
        pthread_mutex_unlock(&audit_lock);
}

/* The usage audit: the sessionIds of the lines an executor run wrote to usage_record.jsonl that
 * no fsync of that file made durable yet; renaming or unlinking such a session's transcript
 * (<id>.jsonl) in that run is a violation: a crash could keep the move and lose the line. (A
 * later run trusts a line that is in the file: after a failed fsync,
 * test_faults_usage_fsync_eio_keeps_session's rerun does.) */
#define USAGE_DIRTY_MAX 64
static struct {
        struct {
                dev_t dev;
                ino_t ino;
                char id[64];
                unsigned seq; /* written before an fsync that began at a later seq */
        } e[USAGE_DIRTY_MAX];
        size_t n;
        unsigned seq;
} usage_dirty;

static void usage_audit_written(int fd, const char *buf, size_t n) {
        static const char key[] = "\"sessionId\":\"";
        const char *p = buf, *end = buf + n;
        struct stat st;

        if (!audit.armed || fstat(fd, &st) < 0)
                return;
        pthread_mutex_lock(&audit_lock);
        while ((p = memmem(p, (size_t)(end - p), key, sizeof key - 1))) {
                const char *q;

                p += sizeof key - 1;
                q = memchr(p, '"', (size_t)(end - p));
                if (!q)
                        break;
                if (usage_dirty.n < USAGE_DIRTY_MAX && (size_t)(q - p) < 64) {
                        usage_dirty.e[usage_dirty.n].dev = st.st_dev;
                        usage_dirty.e[usage_dirty.n].ino = st.st_ino;
                        snprintf(usage_dirty.e[usage_dirty.n].id, 64, "%.*s", (int)(q - p), p);
                        usage_dirty.e[usage_dirty.n].seq = usage_dirty.seq++;
                        usage_dirty.n++;
                } else if (!audit.violation[0])
                        /* an id it cannot hold would go unaudited: fail rather than pass */
                        snprintf(audit.violation, sizeof audit.violation,
                                 "usage audit: more than %d lines not yet fsynced, or an id "
                                 "of 64 bytes or more",
                                 USAGE_DIRTY_MAX);
                p = q;
        }
        pthread_mutex_unlock(&audit_lock);
}

/* Where the usage audit stands as an fsync begins: what that fsync can make durable. */
static unsigned usage_audit_seq(void) {
        unsigned seq;

        pthread_mutex_lock(&audit_lock);
        seq = usage_dirty.seq;
        pthread_mutex_unlock(&audit_lock);
        return seq;
}

/* An fsync of fd that began at seq returned 0: the lines written before it are durable (not
 * those written while it ran). */
static void usage_audit_synced(int fd, unsigned seq) {
        struct stat st;
        size_t k = 0;

        if (fstat(fd, &st) < 0)
                return;
        pthread_mutex_lock(&audit_lock);
        for (size_t i = 0; i < usage_dirty.n; i++)
                if (usage_dirty.e[i].dev != st.st_dev || usage_dirty.e[i].ino != st.st_ino ||
                    usage_dirty.e[i].seq >= seq)
                        usage_dirty.e[k++] = usage_dirty.e[i];
        usage_dirty.n = k;
        pthread_mutex_unlock(&audit_lock);
}

/* A line already in the file when the run starts may be Qwen's, which Qwen does not fsync: it
 * counts as not yet fsynced until the run fsyncs the file, like a line the run writes. */
static void usage_audit_preexisting(const char *global_dir) {
        _cleanup_free_ char *path = util_strprintf("%s/usage_record.jsonl", global_dir);
        _cleanup_free_ char *buf = NULL;
        _cleanup_close_ int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -EBADF;
        struct stat st;

        if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0)
                return;
        buf = malloc((size_t)st.st_size);
        assert_non_null(buf);
        assert_int_equal(read(fd, buf, (size_t)st.st_size), st.st_size);
        usage_audit_written(fd, buf, (size_t)st.st_size);
}

/* name (a base name) is going to be renamed or unlinked */
static void usage_audit_transcript_goes(const char *name, const char *how) {
        size_t l = strlen(name);

        if (!audit.armed || l < 7 || !streq(name + l - 6, ".jsonl"))
                return;
        pthread_mutex_lock(&audit_lock);
        for (size_t i = 0; i < usage_dirty.n; i++)
                if (strlen(usage_dirty.e[i].id) == l - 6 && strneq(usage_dirty.e[i].id, name, l - 6) &&
                    !audit.violation[0])
                        snprintf(audit.violation, sizeof audit.violation,
                                 "%s of transcript %.255s while its usage line was not fsynced",
                                 how, name);
        pthread_mutex_unlock(&audit_lock);
}

/* hold_usage_fsync: the executor's waits (syncq.h) count up wait_gen; usage_append_begin()
 * notes it; a held usage fsync goes on once wait_gen moved past that. */
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cond = PTHREAD_COND_INITIALIZER;
static unsigned hold_wait_gen, hold_begin_gen;

static void hold_waited(void) {
        pthread_mutex_lock(&hold_lock);
        hold_wait_gen++;
        pthread_cond_broadcast(&hold_cond);
        pthread_mutex_unlock(&hold_lock);
}

/* The wait for the fsync of lines the run did not write (a read-only fd on usage_record.jsonl,
 * qwen-commit.c) is not one for the append's: it releases nothing. */
static const int *hold_usync_ret;

static bool fd_is_usage(int fd);
void __real_syncq_push(SyncQ *q, int fd, int *ret);
void __wrap_syncq_push(SyncQ *q, int fd, int *ret);
void __wrap_syncq_push(SyncQ *q, int fd, int *ret) {
        int fl = fcntl(fd, F_GETFL);

        if (fl >= 0 && (fl & O_ACCMODE) == O_RDONLY && fd_is_usage(fd))
                hold_usync_ret = ret;
        __real_syncq_push(q, fd, ret);
}

void __real_syncq_wait_one(SyncQ *q, const int *ret);
void __wrap_syncq_wait_one(SyncQ *q, const int *ret);
void __wrap_syncq_wait_one(SyncQ *q, const int *ret) {
        if (ret != hold_usync_ret)
                hold_waited();
        __real_syncq_wait_one(q, ret);
}
void __real_syncq_wait(SyncQ *q);
void __wrap_syncq_wait(SyncQ *q);
void __wrap_syncq_wait(SyncQ *q) {
        hold_waited();
        __real_syncq_wait(q);
}
int __real_usage_append_begin(int global_fd, const char *lines, size_t len, UsageAppend *ret);
int __wrap_usage_append_begin(int global_fd, const char *lines, size_t len, UsageAppend *ret);
int __wrap_usage_append_begin(int global_fd, const char *lines, size_t len, UsageAppend *ret) {
        pthread_mutex_lock(&hold_lock);
        hold_begin_gen = hold_wait_gen;
        pthread_mutex_unlock(&hold_lock);
        return __real_usage_append_begin(global_fd, lines, len, ret);
}

static void hold_usage_fsync(int fd) {
        int fl = fcntl(fd, F_GETFL);

        if (!faults.hold_usage_fsync || gettid() == getpid())
                return; /* on the executor's own thread nothing can overlap it */
        if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY)
                return; /* the fsync of lines the run did not write: not an append's */
        pthread_mutex_lock(&hold_lock);
        while (hold_wait_gen == hold_begin_gen)
                pthread_cond_wait(&hold_cond, &hold_lock);
        faults.n_rename_at_usage_sync = faults.n_rename;
        pthread_mutex_unlock(&hold_lock);
}

ssize_t __real_write(int fd, const void *buf, size_t n);
int __real_fsync(int fd);
int __real_renameat(int a, const char *b, int c, const char *d);
int __real_renameat2(int a, const char *b, int c, const char *d, unsigned flags);
int __real_unlinkat(int dfd, const char *name, int flags);
int __real_stat(const char *path, struct stat *st);
int __real_linkat(int a, const char *b, int c, const char *d, int flags);
int __real_openat(int dfd, const char *name, int flags, ...);

ssize_t __real_getdents64(int fd, void *buf, size_t n);
ssize_t __wrap_getdents64(int fd, void *buf, size_t n);
ssize_t __wrap_write(int fd, const void *buf, size_t n);
int __wrap_fsync(int fd);
int __wrap_renameat(int a, const char *b, int c, const char *d);
int __wrap_renameat2(int a, const char *b, int c, const char *d, unsigned flags);
int __wrap_unlinkat(int dfd, const char *name, int flags);
int __wrap_stat(const char *path, struct stat *st);
int __wrap_linkat(int a, const char *b, int c, const char *d, int flags);
int __wrap_openat(int dfd, const char *name, int flags, ...);
int __wrap_sd_journal_sendv(const struct iovec *iov, int n);

/* Does fd's path contain match (not empty)? */
static bool fd_matches(int fd, const char *match) {
        char link[64], target[PATH_MAX] = {};
        ssize_t k;

        if (!match[0])
                return false;
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        k = readlink(link, target, sizeof target - 1);
        return k > 0 && strstr(target, match) != NULL;
}

static bool fd_is_usage(int fd) {
        char link[64], target[PATH_MAX] = {};
        ssize_t k;

        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        k = readlink(link, target, sizeof target - 1);
        return k > 0 && strstr(target, "usage_record.jsonl") != NULL;
}

/* The group commit's clock as qwen-session.c reads it (the commit's own readings in
 * qwen-commit.c are not wrapped): with slow_clock each reading is QWEN_BATCH_MSEC_MAX and 1 ms later than the
 * last, as if preparing each session took longer than any batch window (a loaded machine),
 * without a sleep. */
uint64_t __real_qwen_commit_now_ns(void);
uint64_t __wrap_qwen_commit_now_ns(void);
uint64_t __wrap_qwen_commit_now_ns(void) {
        if (faults.untimed)
                return 1;
        if (faults.slow_clock)
                faults.clock_skew_ns += (QWEN_BATCH_MSEC_MAX + 1) * 1000000ULL;
        return __real_qwen_commit_now_ns() + faults.clock_skew_ns;
}

/* getdents64() fails for the directory named by getdents_match (a path suffix). */
ssize_t __wrap_getdents64(int fd, void *buf, size_t n) {
        if (faults.getdents_err) {
                char link[64], target[PATH_MAX] = {};
                size_t lt, lm = strlen(faults.getdents_match);
                ssize_t k;

                snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
                k = readlink(link, target, sizeof target - 1);
                lt = k > 0 ? (size_t)k : 0;
                if (lt >= lm && strcmp(target + lt - lm, faults.getdents_match) == 0) {
                        errno = faults.getdents_err;
                        return -1;
                }
        }
        return __real_getdents64(fd, buf, n);
}

/* A Qwen writer: open by path, append one record, close. */
static void writer_append(const char *path) {
        static const char rec[] = "{\"type\":\"user\",\"message\":\"written during the run\"}\n";
        int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (fd >= 0) {
                (void)__real_write(fd, rec, sizeof rec - 1);
                close(fd);
        }
}

ssize_t __wrap_write(int fd, const void *buf, size_t n) {
        if (faults.write_err && fd_is_usage(fd)) {
                errno = faults.write_err;
                return -1;
        }
        if (faults.write_short && faults.write_short < n && fd_is_usage(fd)) {
                ssize_t k = __real_write(fd, buf, faults.write_short);
                if (faults.append_after_short[0]) {
                        /* Qwen's writeLineSync: open by path, O_APPEND, one line, no lock */
                        static const char rec[] = "{\"version\":1,\"sessionId\":\"qwen-raced\"}\n";
                        int w = open(faults.append_after_short, O_WRONLY | O_APPEND | O_CLOEXEC);
                        if (w >= 0) {
                                (void)__real_write(w, rec, sizeof rec - 1);
                                close(w);
                        }
                        faults.append_after_short[0] = 0;
                }
                if (k >= 0 && faults.write_short_err) {
                        errno = faults.write_short_err;
                        return -1;
                }
                return k;
        }
        if (faults.file_write_err && fd_matches(fd, faults.file_fault_match)) {
                if (!faults.file_wrote_half && n >= 2) {
                        faults.file_wrote_half = true;
                        return __real_write(fd, buf, n / 2);
                }
                errno = faults.file_write_err;
                return -1;
        }
        if (audit.armed) {
                char link[64], target[PATH_MAX] = {};
                ssize_t l;

                snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
                l = readlink(link, target, sizeof target - 1);
                if (l > 12 && streq(target + l - 12, "/journal.log"))
                        faults.n_journal_write++;
        }
        ssize_t k = __real_write(fd, buf, n);
        if (k > 0 && audit.armed && fd_is_usage(fd))
                usage_audit_written(fd, buf, (size_t)k);
        return k;
}

int __wrap_fsync(int fd) {
        __atomic_fetch_add(&faults.n_fsync, 1, __ATOMIC_RELAXED); /* fs_fsync_many() threads */
        if (faults.file_fsync_err && fd_matches(fd, faults.file_fault_match)) {
                errno = faults.file_fsync_err;
                return -1;
        }
        {
                struct stat dst;
                if (fstat(fd, &dst) == 0 && S_ISDIR(dst.st_mode))
                        __atomic_fetch_add(&faults.n_dir_fsync, 1, __ATOMIC_RELAXED);
        }
        if (faults.drop_dir_fsync[0]) {
                char path[PATH_MAX];
                size_t n, m = strlen(faults.drop_dir_fsync);
                struct stat st;

                audit_fd_path(fd, path, sizeof path);
                n = strlen(path);
                if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && n >= m &&
                    streq(path + n - m, faults.drop_dir_fsync))
                        return 0; /* "forgotten": nothing synced, nothing cleared */
        }
        audit_synced(fd);
        if (fd_is_usage(fd)) {
                unsigned seq = usage_audit_seq();

                hold_usage_fsync(fd);
                __atomic_fetch_add(&faults.n_usage_fsync, 1, __ATOMIC_RELAXED);
                if (faults.fsync_err) {
                        errno = faults.fsync_err;
                        return -1;
                }
                if (faults.append_on_usage_fsync[0]) {
                        writer_append(faults.append_on_usage_fsync);
                        faults.append_on_usage_fsync[0] = 0;
                }
                if (faults.drop_usage_fsync || (faults.drop_usage_append_fsync &&
                                                (fcntl(fd, F_GETFL) & O_ACCMODE) != O_RDONLY))
                        return 0; /* "forgotten": the usage audit must notice */
                if (__real_fsync(fd) < 0)
                        return -1;
                usage_audit_synced(fd, seq);
                return 0;
        }
        return __real_fsync(fd);
}

/* The racing writer of appear_before_install: creates the file (by path, as Qwen's TUI does). */
static void writer_appears(void) {
        static const char rec[] = "{\"type\":\"user\",\"message\":\"appeared\"}\n";
        int fd;

        if (!faults.appear_before_install[0])
                return;
        fd = open(faults.appear_before_install, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0) {
                (void)__real_write(fd, rec, sizeof rec - 1);
                close(fd);
        }
        faults.appear_before_install[0] = 0;
}

/* The concurrent writer meets the rename of faults.meet_on_rename (once): before the rename it
 * is let on and the rename waits until it wrote a record (it goes on writing, unsynchronized,
 * while the rename happens); after the rename its last record is let on and awaited. So records
 * are written during the run both before and after the rename, whatever the scheduler does. */
static void meet_writer(const char *old, bool renamed) {
        char c = 0;

        if (!faults.meet_on_rename[0] || !streq(old, faults.meet_on_rename))
                return;
        if (renamed)
                faults.meet_after = __atomic_load_n(faults.meet_written, __ATOMIC_SEQ_CST);
        assert_int_equal(__real_write(faults.meet_go, &c, 1), 1);
        assert_int_equal(read(faults.meet_done, &c, 1), 1);
        if (!renamed)
                faults.meet_before = __atomic_load_n(faults.meet_written, __ATOMIC_SEQ_CST);
        else
                faults.meet_on_rename[0] = 0;
}

static bool rename_fails(const char *old) {
        if (faults.append_on_rename[0] && streq(old, faults.rename_trigger)) {
                writer_append(faults.append_on_rename);
                faults.append_on_rename[0] = 0;
        }
        return faults.rename_err && streq(old, faults.rename_match);
}

/* A rename out of chats/archive/ is a restore, which relies on no usage line; every other
 * rename of a transcript is audited. */
static void usage_audit_transcript_renamed(int from_fd, const char *name) {
        char dir[PATH_MAX];
        size_t l;

        audit_fd_path(from_fd, dir, sizeof dir);
        l = strlen(dir);
        if (l >= 14 && streq(dir + l - 14, "/chats/archive"))
                return;
        usage_audit_transcript_goes(name, "rename");
}

int __wrap_renameat(int a, const char *b, int c, const char *d) {
        usage_audit_transcript_renamed(a, b);
        faults.n_rename++;
        if (rename_fails(b)) {
                errno = faults.rename_err;
                return -1;
        }
        writer_appears();
        meet_writer(b, false);
        if (__real_renameat(a, b, c, d) < 0)
                return -1;
        meet_writer(b, true);
        audit_added(c, d, "renamed to");
        return 0;
}

int __wrap_renameat2(int a, const char *b, int c, const char *d, unsigned flags) {
        usage_audit_transcript_renamed(a, b);
        faults.n_rename++;
        if (rename_fails(b)) {
                errno = faults.rename_err;
                return -1;
        }
        if (faults.no_rename_noreplace && (flags & RENAME_NOREPLACE)) {
                errno = EINVAL;
                return -1;
        }
        meet_writer(b, false);
        if (__real_renameat2(a, b, c, d, flags) < 0)
                return -1;
        meet_writer(b, true);
        audit_added(c, d, "renamed to");
        return 0;
}

int __wrap_linkat(int a, const char *b, int c, const char *d, int flags) {
        writer_appears();
        if (__real_linkat(a, b, c, d, flags) < 0)
                return -1;
        audit_added(c, d, "linked");
        return 0;
}

int __real_mkdirat(int dfd, const char *name, mode_t mode);
int __wrap_mkdirat(int dfd, const char *name, mode_t mode);
int __wrap_mkdirat(int dfd, const char *name, mode_t mode) {
        if (__real_mkdirat(dfd, name, mode) < 0)
                return -1;
        audit_added(dfd, name, "made");
        return 0;
}

int __wrap_openat(int dfd, const char *name, int flags, ...) {
        mode_t mode = 0;

        if (flags & (O_CREAT | O_TMPFILE)) {
                va_list ap;
                va_start(ap, flags);
                mode = va_arg(ap, mode_t);
                va_end(ap);
        }
        if (faults.mount_on_open[0] && (flags & O_DIRECTORY) && streq(name, faults.mount_on_open)) {
                /* someone mounts a filesystem there between the walker's fstatat and its open */
                faults.mount_on_open[0] = 0;
                if (mount("tmpfs", faults.mount_path, "tmpfs", 0, "mode=0755") < 0)
                        _exit(77);
                if (fixture_write(faults.mount_path, "shared.txt", "not ours") < 0)
                        _exit(2);
        }
        if (flags & O_CREAT) {
                struct stat st;
                bool existed = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
                int fd = __real_openat(dfd, name, flags, mode);

                if (fd >= 0 && !existed)
                        audit_added(dfd, name, "created");
                return fd;
        }
        return __real_openat(dfd, name, flags, mode);
}

int __wrap_unlinkat(int dfd, const char *name, int flags) {
        if (faults.unlink_err && streq(name, faults.unlink_match)) {
                errno = faults.unlink_err;
                return -1;
        }
        usage_audit_transcript_goes(name, "unlink");
        if (__real_unlinkat(dfd, name, flags) < 0)
                return -1;
        audit_destroys(dfd, name);
        if (faults.crash_after_unlink > 0 && ++faults.n_unlinks >= faults.crash_after_unlink)
                _exit(99);
        return 0;
}

/* Liveness probes an executor run makes (one per tree: the re-check before each batch refreshes
 * it, it does not make another). live_project_busy() reads the tree's registry afresh by design
 * (live.h): its own probe is not counted (a wrap sees it only when live_project_busy() and
 * live_probe_new() are in different objects). */
static unsigned n_executor_probes;
static bool in_project_busy;
int __real_live_probe_new(const Tree *t, LiveProbe **ret);
int __wrap_live_probe_new(const Tree *t, LiveProbe **ret);
int __wrap_live_probe_new(const Tree *t, LiveProbe **ret) {
        if (audit.armed && !in_project_busy)
                n_executor_probes++;
        return __real_live_probe_new(t, ret);
}
int __real_live_project_busy(const Tree *t, int chats_fd,
                             bool (*elsewhere)(const char *id, void *userdata), void *userdata,
                             char **ret_reason);
int __wrap_live_project_busy(const Tree *t, int chats_fd,
                             bool (*elsewhere)(const char *id, void *userdata), void *userdata,
                             char **ret_reason);
int __wrap_live_project_busy(const Tree *t, int chats_fd,
                             bool (*elsewhere)(const char *id, void *userdata), void *userdata,
                             char **ret_reason) {
        int r;

        in_project_busy = true;
        r = __real_live_project_busy(t, chats_fd, elsewhere, userdata, ret_reason);
        in_project_busy = false;
        return r;
}

/* The QGC_TEST_* variables the library asked getenv() for (ld --wrap=getenv sees qgc's own calls,
 * not libc's): a test reaches the executor by ld --wrap, never the environment. */
static char test_getenv_names[512];
char *__real_getenv(const char *name);
char *__wrap_getenv(const char *name);
char *__wrap_getenv(const char *name) {
        size_t l = strlen(test_getenv_names);

        if (name && strncmp(name, "QGC_TEST_", 9) == 0)
                snprintf(test_getenv_names + l, sizeof test_getenv_names - l, "%s ", name);
        return __real_getenv(name);
}

/* The group commit's cap of a batch, as qwen-session.c reads it: faults.batch_cap when set. */
bool __real_qwen_commit_full(const QwenBatch *b);
bool __wrap_qwen_commit_full(const QwenBatch *b);
bool __wrap_qwen_commit_full(const QwenBatch *b) {
        if (faults.batch_cap > 0)
                return b->n >= faults.batch_cap;
        return __real_qwen_commit_full(b);
}

/* Every mutating step of the executor (actions.c counts them): with crash_after, the process
 * dies right after the nth, as a kill would leave it. */
void __real_actions_report_step(void *userdata, const char *what);
void __wrap_actions_report_step(void *userdata, const char *what);
void __wrap_actions_report_step(void *userdata, const char *what) {
        __real_actions_report_step(userdata, what);
        if (faults.crash_after > 0 && ++faults.n_steps >= faults.crash_after)
                _exit(99);
}

/* The executor as the tests reach it (run-plan.h): actions_run(), its tree locks taken. */
int __real_actions_run(const Plan *p, const ActionsRunOptions *o, ActionStats *ret_stats);
int __wrap_actions_run(const Plan *p, const ActionsRunOptions *o, ActionStats *ret_stats);
int __wrap_actions_run(const Plan *p, const ActionsRunOptions *o, ActionStats *ret_stats) {
        int r;

        audit.armed = true;
        faults.n_steps = 0;
        if (!p->is_restore)
                faults.n_unlinks = 0;
        usage_dirty.n = 0; /* each run answers for the lines it writes ... */
        for (size_t i = 0; !p->is_restore && i < p->inv->n_trees; i++) /* ... and for those it
                                                                          * relies on (a restore
                                                                          * relies on none) */
                usage_audit_preexisting(p->inv->trees[i].global_dir);
        r = __real_actions_run(p, o, ret_stats);
        audit.armed = false;
        return r;
}

int __wrap_stat(const char *path, struct stat *st) {
        if (faults.fake_journal_socket && streq(path, "/run/systemd/journal/socket")) {
                memset(st, 0, sizeof *st);
                st->st_mode = S_IFSOCK | 0666;
                return 0;
        }
        return __real_stat(path, st);
}

int __wrap_sd_journal_sendv(const struct iovec *iov, int n) {
        for (int i = 0; i < n; i++) {
                assert_int_equal(strbuf_append(&faults.sent, iov[i].iov_base, iov[i].iov_len), 0);
                assert_int_equal(strbuf_append(&faults.sent, "\n", 1), 0);
        }
        assert_int_equal(strbuf_append(&faults.sent, "--\n", 3), 0);
        faults.n_sent++;
        return 0;
}

/* ---------------------------------------------------------------- fixtures */

typedef struct T {
        char *root;
        char *qwen;
} T;

/* A fresh copy of the corpus in t->root/qwen, its SIGKILLed session actionable. */
static int fixture_tree(T *t) {
        if (fixture_copy_tree(fixture_testdata("corpus/tree"), t->root, "qwen") < 0)
                return -1;
        /* the SIGKILLed session has no usage line: make it actionable (not live) */
        _cleanup_free_ char *c = fixture_path(t->qwen, P_NOTES "/" S_KILLED ".runtime.json");
        _cleanup_free_ char *r = fixture_path(t->qwen, "sessions/8887.json");
        if (!c || !r || unlink(c) < 0 || unlink(r) < 0)
                return -1;
        audit.n = 0; /* what the fixture made is not the code under test's */
        return 0;
}

static int setup(void **state) {
        T *t = calloc(1, sizeof(T));
        _cleanup_free_ char *log = NULL;

        strbuf_done(&faults.sent);
        faults = (Faults){};
        audit.n = 0;
        audit.n_checked = 0;
        audit.violation[0] = 0;
        usage_dirty.n = 0;
        if (!t || fixture_new(&t->root) < 0)
                return -1;
        t->qwen = fixture_path(t->root, "qwen");
        log = fixture_path(t->root, "journal.log");
        if (!t->qwen || !log || fixture_tree(t) < 0 ||
            journal_open(JOURNAL_TARGET_FILE, log, "fedcba9876543210fedcba9876543210") < 0)
                return -1;
        *state = t;
        return 0;
}

static int teardown(void **state) {
        T *t = *state;
        bool broken = audit.violation[0] != 0;

        if (broken)
                print_error("fsync audit: %s\n", audit.violation);
        journal_close();
        strbuf_done(&faults.sent);
        faults = (Faults){};
        free(t->qwen);
        fixture_free(t->root);
        free(t);
        return broken ? -1 : 0;
}

/* ---------------------------------------------------------------- salvage failures */

/* A line Qwen's reader returns: the exact reader finds the session's record. */
static int usage_readable(T *t, const char *id) {
        _cleanup_close_ int g = open(t->qwen, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(g >= 0);
        return usage_index_has_session(g, id);
}

static void check_salvage_failure_keeps_session(T *t, Verb verb, int err) {
        ApplyPick picks[] = { { S_KILLED, verb }, {} };
        ActionStats st = {};
        _cleanup_free_ char *log = NULL, *want = util_strprintf("ERRNO=%d", err);

        assert_int_equal(apply_execute(t->qwen, picks, &st), 1);
        assert_int_equal(st.n_failed, 1);
        assert_int_equal(st.n_deleted + st.n_archived, 0);
        assert_true(fixture_exists(t->qwen, P_NOTES "/" S_KILLED ".jsonl"));
        assert_false(fixture_exists(t->qwen, P_NOTES "/archive/" S_KILLED ".jsonl"));
        assert_true(fixture_exists(t->qwen, "file-history/" S_KILLED));
        log = test_read_rel(t->root, "journal.log");
        assert_non_null(strstr(log, "QGC_ACTION=failed"));
        assert_non_null(strstr(log, want));
        /* no readable line is left behind: the next run must not trust a line that never
         * became durable (a failed fsync leaves it in the page cache) */
        faults.write_err = faults.fsync_err = 0;
        assert_int_equal(usage_readable(t, S_KILLED), 0);

        /* the fault gone, the next run completes with exactly one line */
        faults.write_err = faults.fsync_err = 0;
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_deleted + st.n_archived, 1);
        assert_int_equal(apply_usage_lines(t->qwen, S_KILLED), 1);
}

static void test_faults_usage_write_enospc_keeps_session(void **state) {
        faults.write_err = ENOSPC;
        check_salvage_failure_keeps_session(*state, VERB_DELETE, ENOSPC);
}

static void test_faults_usage_write_eio_keeps_archive_candidate(void **state) {
        faults.write_err = EIO;
        check_salvage_failure_keeps_session(*state, VERB_ARCHIVE, EIO);
}

static void test_faults_usage_fsync_eio_keeps_session(void **state) {
        faults.fsync_err = EIO;
        check_salvage_failure_keeps_session(*state, VERB_DELETE, EIO);
}

/* TREE/usage_record.jsonl in a static buffer (for unlinkat). */
static const char *strprintf_tmp_usage(const char *tree) {
        static char buf[PATH_MAX];
        snprintf(buf, sizeof buf, "%s/usage_record.jsonl", tree);
        return buf;
}

/* A full disk: write() places the first bytes of the line only (then returns the short count,
 * or an error). The fragment must not stay as a partial line (the next append, qgc's or Qwen's,
 * would be glued to it and lost): the session is kept, the bytes are blanked in place, and the
 * next run writes one readable line. */
static void check_short_write(T *t, int err) {
        ApplyPick picks[] = { { S_KILLED, VERB_DELETE }, {} };
        ActionStats st = {};
        _cleanup_free_ char *before = test_read_rel(t->qwen, "usage_record.jsonl");
        _cleanup_free_ char *log = NULL, *after = NULL, *want = util_strprintf("ERRNO=%d", ENOSPC);
        size_t nb = strlen(before);

        faults.write_short = 100;
        faults.write_short_err = err;
        assert_int_equal(apply_execute(t->qwen, picks, &st), 1);
        assert_int_equal(st.n_failed, 1);
        assert_int_equal(st.n_deleted, 0);
        assert_true(fixture_exists(t->qwen, P_NOTES "/" S_KILLED ".jsonl"));
        log = test_read_rel(t->root, "journal.log");
        assert_non_null(strstr(log, "cannot salvage the usage record; session kept"));
        assert_non_null(strstr(log, want));
        after = test_read_rel(t->qwen, "usage_record.jsonl");
        assert_int_equal(strlen(after), nb + 100);
        assert_memory_equal(after, before, nb);
        for (size_t i = nb; i < nb + 99; i++)
                assert_int_equal(after[i], ' ');
        assert_int_equal(after[nb + 99], '\n');
        assert_int_equal(usage_readable(t, S_KILLED), 0);

        /* space again: one readable line */
        faults.write_short = 0;
        faults.write_short_err = 0;
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_deleted, 1);
        assert_int_equal(apply_usage_lines(t->qwen, S_KILLED), 1);
        assert_int_equal(usage_readable(t, S_KILLED), 1);
}

static void test_faults_usage_short_write_undone_keeps_session(void **state) {
        check_short_write(*state, 0);
}

static void test_faults_usage_short_write_error_undone_keeps_session(void **state) {
        check_short_write(*state, ENOSPC);
}

/* Qwen appends its own line (unlocked) between qgc's short write and its undo: truncating the
 * file back would cut Qwen's line off, leaving the fragment would glue it. Blanking our bytes in
 * place keeps Qwen's line whole and on a line of its own. */
static void test_faults_usage_short_write_undo_keeps_racing_qwen_line(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_KILLED, VERB_DELETE }, {} };
        ActionStats st = {};
        _cleanup_free_ char *p = fixture_path(t->qwen, "usage_record.jsonl");

        faults.write_short = 100;
        snprintf(faults.append_after_short, sizeof faults.append_after_short, "%s", p);
        assert_int_equal(apply_execute(t->qwen, picks, &st), 1);
        assert_int_equal(st.n_failed, 1);
        assert_true(fixture_exists(t->qwen, P_NOTES "/" S_KILLED ".jsonl"));
        assert_int_equal(usage_readable(t, "qwen-raced"), 1);
        assert_int_equal(usage_readable(t, S_KILLED), 0);

        faults.write_short = 0;
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(usage_readable(t, S_KILLED), 1);
        assert_int_equal(usage_readable(t, "qwen-raced"), 1);
        assert_int_equal(apply_usage_lines(t->qwen, S_KILLED), 1);
}

/* Qwen died mid-append: the file ends in a partial line. The salvaged line starts a fresh line,
 * so Qwen's reader (and qgc's) return it. */
static void test_faults_usage_append_after_partial_line_readable(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_KILLED, VERB_DELETE }, {} };
        ActionStats st = {};
        _cleanup_free_ char *p = fixture_path(t->qwen, "usage_record.jsonl");
        _cleanup_free_ char *golden = apply_golden_record(S_KILLED), *after = NULL;
        _cleanup_free_ char *want = golden ? util_strprintf("\n%s", golden) : NULL;
        static const char frag[] = "{\"version\":1,\"sessionId\":\"cut-short\",\"timestamp\":17";
        FILE *f = fopen(p, "a");

        assert_non_null(f);
        assert_non_null(want);
        fputs(frag, f);
        assert_int_equal(fclose(f), 0);

        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_deleted, 1);
        assert_int_equal(usage_readable(t, S_KILLED), 1);
        after = test_read_rel(t->qwen, "usage_record.jsonl");
        assert_true(strlen(after) > strlen(want));
        assert_string_equal(after + strlen(after) - strlen(want), want);
        assert_non_null(strstr(after, frag));
}

/* ---------------------------------------------------------------- rename and unlink failures */

static void test_faults_rename_eio_then_rerun_completes(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_TEXT, VERB_ARCHIVE }, {} };
        ActionStats st = {};
        _cleanup_free_ char *lg = NULL;

        assert_int_equal(fixture_write(t->qwen, P_API "/" S_TEXT ".worktree.json", "{}\n"), 0);
        assert_int_equal(fixture_write(t->qwen, P_API "/" S_TEXT ".ledger.jsonl", "new\n"), 0);
        assert_int_equal(fixture_write(t->qwen, P_API "/archive/" S_TEXT ".ledger.jsonl", "old\n"), 0);
        snprintf(faults.rename_match, sizeof faults.rename_match, "%s.jsonl", S_TEXT);
        faults.rename_err = EIO;

        assert_int_equal(apply_execute(t->qwen, picks, &st), 1);
        assert_int_equal(st.n_failed, 1);
        assert_true(fixture_exists(t->qwen, P_API "/" S_TEXT ".jsonl"));
        assert_false(fixture_exists(t->qwen, P_API "/archive/" S_TEXT ".jsonl"));
        /* the renamed sidecar went back beside the transcript; the merged ledger stays merged */
        assert_true(fixture_exists(t->qwen, P_API "/" S_TEXT ".worktree.json"));
        assert_false(fixture_exists(t->qwen, P_API "/archive/" S_TEXT ".worktree.json"));
        assert_false(fixture_exists(t->qwen, P_API "/" S_TEXT ".ledger.jsonl"));

        faults.rename_err = 0;
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_archived, 1);
        assert_false(fixture_exists(t->qwen, P_API "/" S_TEXT ".jsonl"));
        assert_false(fixture_exists(t->qwen, P_API "/" S_TEXT ".worktree.json"));
        assert_false(fixture_exists(t->qwen, P_API "/" S_TEXT ".ledger.jsonl"));
        assert_true(fixture_exists(t->qwen, P_API "/archive/" S_TEXT ".worktree.json"));
        lg = test_read_rel(t->qwen, P_API "/archive/" S_TEXT ".ledger.jsonl");
        assert_string_equal(lg, "old\nnew\n");
}

static void test_faults_sidecar_rename_eio_leaves_transcript(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_TEXT, VERB_ARCHIVE }, {} };
        ActionStats st = {};

        assert_int_equal(fixture_write(t->qwen, P_API "/" S_TEXT ".worktree.json", "{}\n"), 0);
        snprintf(faults.rename_match, sizeof faults.rename_match, "%s.worktree.json", S_TEXT);
        faults.rename_err = EIO;
        assert_int_equal(apply_execute(t->qwen, picks, &st), 1);
        assert_true(fixture_exists(t->qwen, P_API "/" S_TEXT ".jsonl"));
        assert_true(fixture_exists(t->qwen, P_API "/" S_TEXT ".worktree.json"));
        assert_false(fixture_exists(t->qwen, P_API "/archive/" S_TEXT ".jsonl"));
}

static void test_faults_unlink_eio_keeps_transcript_and_one_usage_line(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_KILLED, VERB_DELETE }, {} };
        ActionStats st = {};

        snprintf(faults.unlink_match, sizeof faults.unlink_match, "%s.jsonl", S_KILLED);
        faults.unlink_err = EIO;
        assert_int_equal(apply_execute(t->qwen, picks, &st), 1);
        assert_int_equal(st.n_failed, 1);
        assert_true(fixture_exists(t->qwen, P_NOTES "/" S_KILLED ".jsonl"));
        assert_int_equal(apply_usage_lines(t->qwen, S_KILLED), 1); /* salvaged first */

        faults.unlink_err = 0;
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_deleted, 1);
        assert_false(fixture_exists(t->qwen, P_NOTES "/" S_KILLED ".jsonl"));
        assert_int_equal(apply_usage_lines(t->qwen, S_KILLED), 1);
}

static void test_faults_secondary_unlink_eio_reported(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_DEBUG, VERB_DELETE }, {} };
        ActionStats st = {};

        snprintf(faults.unlink_match, sizeof faults.unlink_match, "%s.txt", S_DEBUG);
        faults.unlink_err = EIO;
        assert_int_equal(apply_execute(t->qwen, picks, &st), 1);
        assert_int_equal(st.n_failed, 1);
        assert_false(fixture_exists(t->qwen, P_WEB "/" S_DEBUG ".jsonl"));
        assert_true(fixture_exists(t->qwen, "debug/" S_DEBUG ".txt"));
}

/* Without RENAME_NOREPLACE (a filesystem that lacks it) a move must still never replace a file
 * that appears at the target meanwhile, e.g. a transcript Qwen's TUI recreates by path while
 * `qgc restore` moves the archived one back. */
static void test_fs_rename_noreplace_fallback_never_replaces(void **state) {
        T *t = *state;
        _cleanup_close_ int dfd = open(t->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ char *target = fixture_path(t->root, "b.jsonl");
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL;
        struct stat st1, st2;

        assert_true(dfd >= 0);
        faults.no_rename_noreplace = true;
        assert_int_equal(fixture_write(t->root, "a.jsonl", "moving\n"), 0);
        snprintf(faults.appear_before_install, sizeof faults.appear_before_install, "%s", target);
        assert_int_equal(fs_rename_noreplace(dfd, "a.jsonl", dfd, "b.jsonl"), -EEXIST);
        b = test_read_rel(t->root, "b.jsonl");
        assert_non_null(strstr(b, "appeared"));
        a = test_read_rel(t->root, "a.jsonl");
        assert_string_equal(a, "moving\n");

        /* no race: the move happens, the old name goes */
        assert_int_equal(fs_rename_noreplace(dfd, "a.jsonl", dfd, "c.jsonl"), 0);
        assert_false(fixture_exists(t->root, "a.jsonl"));
        c = test_read_rel(t->root, "c.jsonl");
        assert_string_equal(c, "moving\n");

        /* a move interrupted between link and unlink (two names, one inode) completes */
        assert_int_equal(linkat(dfd, "c.jsonl", dfd, "d.jsonl", 0), 0);
        assert_int_equal(fs_rename_noreplace(dfd, "c.jsonl", dfd, "d.jsonl"), 0);
        assert_false(fixture_exists(t->root, "c.jsonl"));
        assert_int_equal(fstatat(dfd, "d.jsonl", &st1, 0), 0);
        assert_int_equal(st1.st_nlink, 1);
        /* ... but a different file at the target is never replaced */
        assert_int_equal(fixture_write(t->root, "e.jsonl", "other\n"), 0);
        assert_int_equal(fs_rename_noreplace(dfd, "d.jsonl", dfd, "e.jsonl"), -EEXIST);
        assert_int_equal(fstatat(dfd, "d.jsonl", &st2, 0), 0);
        assert_int_equal(st2.st_ino, st1.st_ino);

        /* the same on a filesystem with RENAME_NOREPLACE (EEXIST from renameat2 itself) */
        faults.no_rename_noreplace = false;
        assert_int_equal(linkat(dfd, "d.jsonl", dfd, "f.jsonl", 0), 0);
        assert_int_equal(fs_rename_noreplace(dfd, "d.jsonl", dfd, "f.jsonl"), 0);
        assert_false(fixture_exists(t->root, "d.jsonl"));
        assert_int_equal(fs_rename_noreplace(dfd, "f.jsonl", dfd, "e.jsonl"), -EEXIST);
        assert_true(fixture_exists(t->root, "f.jsonl"));
        _cleanup_free_ char *e = test_read_rel(t->root, "e.jsonl");
        assert_string_equal(e, "other\n");
}

/* Without RENAME_NOREPLACE, a kill between link and unlink leaves a sidecar under both names;
 * the next archive run completes the move instead of refusing it as a collision forever. */
static void test_faults_interrupted_link_move_completes(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_TEXT, VERB_ARCHIVE }, {} };
        _cleanup_free_ char *w = fixture_path(t->qwen, P_API "/" S_TEXT ".worktree.json");
        _cleanup_free_ char *aw = fixture_path(t->qwen, P_API "/archive/" S_TEXT ".worktree.json");
        ActionStats st = {};

        faults.no_rename_noreplace = true;
        assert_int_equal(fixture_write(t->qwen, P_API "/" S_TEXT ".worktree.json", "{\"slug\":1}\n"), 0);
        assert_int_equal(fixture_mkdir(t->qwen, P_API "/archive"), 0);
        assert_int_equal(link(w, aw), 0);
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_archived, 1);
        assert_false(fixture_exists(t->qwen, P_API "/" S_TEXT ".jsonl"));
        assert_false(fixture_exists(t->qwen, P_API "/" S_TEXT ".worktree.json"));
        assert_true(fixture_exists(t->qwen, P_API "/archive/" S_TEXT ".jsonl"));
        assert_true(fixture_exists(t->qwen, P_API "/archive/" S_TEXT ".worktree.json"));
}

/* rm_rf_at() checks st_dev with fstatat before it opens a subdirectory; a filesystem mounted
 * there in between must not be emptied: the opened directory is checked again. In a child with
 * its own mount namespace; skipped where there is none. */
static void test_fs_rm_rf_at_mount_appearing_is_not_emptied(void **state) {
        T *t = *state;

        if (geteuid() != 0 || !fixture_can_mount())
                /* before any allocation: a skip does not run _cleanup_ */
                test_skip("needs root and a mount namespace");
        _cleanup_free_ char *mnt = fixture_path(t->root, "victim/a/sub");
        int status = 0;
        pid_t pid;

        assert_int_equal(fixture_write(t->root, "victim/a/sub/x@v1", "backup"), 0);
        assert_int_equal(fixture_write(t->root, "victim/a/y@v1", "backup"), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int dfd;
                /* (an fd opened before unshare() would walk the old namespace's mounts) */
                if ((geteuid() == 0 ? unshare(CLONE_NEWNS) : -1) < 0 ||
                    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                        _exit(77);
                dfd = open(t->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dfd < 0)
                        _exit(2);
                /* the walk without openat2 (whose syscall the openat wrapper cannot see) */
                fs_test_force_walk(true);
                snprintf(faults.mount_on_open, sizeof faults.mount_on_open, "sub");
                snprintf(faults.mount_path, sizeof faults.mount_path, "%s", mnt);
                int r = rm_rf_at(dfd, "victim", 0, NULL);
                if (faults.mount_on_open[0])
                        _exit(4); /* the hook never ran */
                if (!fixture_exists(mnt, "shared.txt"))
                        _exit(1);
                _exit(r < 0 ? 0 : 3); /* and the failure to remove everything is reported */
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) == 77)
                test_skip("the child could not mount a tmpfs in its mount namespace");
        if (WEXITSTATUS(status) == 1)
                fail_msg("rm_rf_at() emptied a filesystem mounted during the walk");
        assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---------------------------------------------------------------- crash after every step */

static const ApplyPick crash_picks[] = {
        { S_TEXT, VERB_ARCHIVE }, { S_KILLED, VERB_DELETE }, { S_FORK, VERB_ARCHIVE },
        { S_DEBUG, VERB_DELETE }, {},
};

#define S_OTHER "0f0f0f0f-0000-4000-8000-000000000001" /* rows of a session qgc keeps */
#define CRASH_LOGS "tmp/11d49a2f32962e314f5cb4f3f570f88518b63142c539da679cdac945f5e20491/logs.json"
#define CRASH_ROW(id)                                                                              \
        "{\n    \"sessionId\": \"" id "\",\n    \"messageId\": 0,\n    \"type\": \"user\",\n"   \
        "    \"message\": \"m\",\n    \"timestamp\": \"2026-11-30T03:53:45.606Z\"\n  }"
#define CRASH_ORG "projects/-srv-demo-my-notes/session-organization.v1.json"
#define CRASH_ORG_HEAD "{\n  \"schemaVersion\": 1,\n  \"groups\": [],\n  \"sessions\": {\n    "
#define CRASH_ORG_ENTRY(id) "\"" id "\": {\n      \"groupId\": null,\n      \"updatedAt\": \"x\"\n    }"
#define CRASH_REVIEW                                                                               \
        "projects/-srv-demo-my-notes/workflows/generated/review/" S_KILLED "-1ce98656"

static void crash_plant(const char *qwen) {
        assert_int_equal(fixture_write(qwen, P_API "/" S_TEXT ".worktree.json", "{}\n"), 0);
        assert_int_equal(fixture_write(qwen, P_API "/" S_TEXT ".pr.json",
                                       "{\"prs\":[{\"number\":2,\"createdAt\":\"b\"}]}\n"),
                         0);
        assert_int_equal(fixture_write(qwen, P_API "/archive/" S_TEXT ".pr.json",
                                       "{\"prs\":[{\"number\":1,\"createdAt\":\"a\"}]}\n"),
                         0);
        assert_int_equal(fixture_write(qwen, P_API "/" S_TEXT ".ledger.jsonl", "new\n"), 0);
        assert_int_equal(fixture_write(qwen, P_API "/archive/" S_TEXT ".ledger.jsonl", "old"), 0);
        assert_int_equal(fixture_write(qwen, P_WEB "/" S_DEBUG ".pr.json", "{\"prs\":[]}\n"), 0);
        assert_int_equal(fixture_write(qwen, P_WEB "/" S_DEBUG ".ledger.jsonl", "l\n"), 0);
        assert_int_equal(fixture_write(qwen, "plans/" S_DEBUG ".md", "plan\n"), 0);
        assert_int_equal(fixture_write(qwen, P_NOTES "/" S_KILLED ".pr.json", "{\"prs\":[]}\n"), 0);
        /* what a complete delete removes from the files Qwen shares (erase.h) */
        assert_int_equal(fixture_write(qwen, CRASH_LOGS, "[\n  " CRASH_ROW(S_KILLED) ",\n  "
                                       CRASH_ROW(S_OTHER) "\n]"), 0);
        assert_int_equal(fixture_write(qwen, CRASH_ORG, CRASH_ORG_HEAD CRASH_ORG_ENTRY(S_KILLED)
                                       ",\n    " CRASH_ORG_ENTRY(S_FH) "\n  }\n}"), 0);
        assert_int_equal(fixture_write(qwen, CRASH_REVIEW "/s.js", "x"), 0);
}

/* Is a temporary file of qgc (".*.qgc-tmp") anywhere below dir? Its path in *ret_path. */
static bool crash_find_temp(const char *dir, char **ret_path) {
        DIR *d = opendir(dir);
        struct dirent *de;
        bool found = false;

        if (!d)
                return false;
        while (!found && (de = readdir(d))) {
                _cleanup_free_ char *p = NULL;
                size_t n = strlen(de->d_name);

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                p = util_strprintf("%s/%s", dir, de->d_name);
                assert_non_null(p);
                if (n > 9 && de->d_name[0] == '.' && streq(de->d_name + n - 8, ".qgc-tmp")) {
                        *ret_path = TAKE_PTR(p);
                        found = true;
                } else if (de->d_type == DT_DIR)
                        found = crash_find_temp(p, ret_path);
        }
        closedir(d);
        return found;
}

/* Nothing of a deleted session, no temporary file and no pending marker is left. */
static void crash_check_leftovers(const char *qwen, unsigned n) {
        static const char *const gone[] = {
                P_NOTES "/" S_KILLED ".jsonl",       P_NOTES "/" S_KILLED ".pr.json",
                "file-history/" S_KILLED,            P_WEB "/" S_DEBUG ".jsonl",
                P_WEB "/" S_DEBUG ".pr.json",        P_WEB "/" S_DEBUG ".ledger.jsonl",
                "plans/" S_DEBUG ".md",              "debug/" S_DEBUG ".txt",
        };
        _cleanup_free_ char *pending = fixture_path(qwen, ".qgc/pending");
        _cleanup_free_ char *tmp = NULL;
        DIR *d;
        struct dirent *de;

        for (size_t i = 0; i < ELEMENTSOF(gone); i++)
                if (fixture_exists(qwen, gone[i]))
                        fail_msg("step %u: '%s' of a deleted session left behind", n, gone[i]);
        if (crash_find_temp(qwen, &tmp))
                fail_msg("step %u: temporary file '%s' left behind", n, tmp);
        d = opendir(pending);
        while (d && (de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        fail_msg("step %u: pending marker '%s' left behind", n, de->d_name);
        if (d)
                closedir(d);
}

/* The invariants after a crash and a normal rerun. */
static void crash_check(const char *qwen, unsigned n) {
        static const char *const had_line[] = { S_TEXT, S_FORK, S_DEBUG, S_API, S_WEB };
        _cleanup_free_ char *lg = NULL, *pr = NULL;
        int k = apply_usage_lines(qwen, S_KILLED);

        /* the killed session: still there, or exactly one usage line */
        if (fixture_exists(qwen, P_NOTES "/" S_KILLED ".jsonl")) {
                if (k > 1)
                        fail_msg("step %u: %d usage lines for %s", n, k, S_KILLED);
        } else if (k != 1)
                fail_msg("step %u: %s gone with %d usage lines", n, S_KILLED, k);
        /* the shared files: no row or entry of the deleted session, every other one intact */
        _cleanup_free_ char *logs = test_read_rel(qwen, CRASH_LOGS), *org = test_read_rel(qwen, CRASH_ORG);
        if (!streq(logs, "[\n  " CRASH_ROW(S_OTHER) "\n]"))
                fail_msg("step %u: logs.json is '%s'", n, logs);
        if (!streq(org, CRASH_ORG_HEAD CRASH_ORG_ENTRY(S_FH) "\n  }\n}"))
                fail_msg("step %u: session-organization.v1.json is '%s'", n, org);
        if (fixture_exists(qwen, CRASH_REVIEW))
                fail_msg("step %u: review scripts of %s left behind", n, S_KILLED);
        for (size_t i = 0; i < ELEMENTSOF(had_line); i++)
                if (apply_usage_lines(qwen, had_line[i]) != (streq(had_line[i], S_API) ? 2 : streq(had_line[i], S_WEB) ? 3 : 1))
                        fail_msg("step %u: usage lines of %s changed", n, had_line[i]);

        /* the archived session: transcript and all its sidecars in archive/, merged once */
        if (fixture_exists(qwen, P_API "/" S_TEXT ".jsonl") ||
            !fixture_exists(qwen, P_API "/archive/" S_TEXT ".jsonl"))
                fail_msg("step %u: %s not archived after the rerun", n, S_TEXT);
        if (fixture_exists(qwen, P_API "/" S_TEXT ".worktree.json") ||
            fixture_exists(qwen, P_API "/" S_TEXT ".pr.json") ||
            fixture_exists(qwen, P_API "/" S_TEXT ".ledger.jsonl"))
                fail_msg("step %u: half-moved sidecars of %s", n, S_TEXT);
        assert_true(fixture_exists(qwen, P_API "/archive/" S_TEXT ".worktree.json"));
        lg = test_read_rel(qwen, P_API "/archive/" S_TEXT ".ledger.jsonl");
        if (!streq(lg, "old\nnew\n"))
                fail_msg("step %u: ledger is '%s'", n, lg);
        pr = test_read_rel(qwen, P_API "/archive/" S_TEXT ".pr.json");
        assert_non_null(strstr(pr, "\"number\": 1"));
        assert_non_null(strstr(pr, "\"number\": 2"));
        if (fixture_exists(qwen, P_API "/" S_FORK ".jsonl") ||
            !fixture_exists(qwen, P_API "/archive/" S_FORK ".jsonl"))
                fail_msg("step %u: %s not archived after the rerun", n, S_FORK);
        crash_check_leftovers(qwen, n);
}

/* At the moment of the crash: a deleted session's transcript never went before its usage line. */
static void crash_check_salvaged_first(const char *qwen, unsigned n) {
        if (!fixture_exists(qwen, P_NOTES "/" S_KILLED ".jsonl") &&
            apply_usage_lines(qwen, S_KILLED) != 1)
                fail_msg("step %u: the transcript of %s went before its usage line", n, S_KILLED);
}

/* One kill-after-every-step test: for N = 1, 2, ... a fresh copy of the tree (plant() adds to
 * it) is run with picks in a child killed after step N; what the kill left is checked (no
 * transcript before its usage line; with the usage audit armed, no move before a durable line:
 * exit status 98), the run is repeated and check() looks at the result. Until a run completes
 * without reaching step N; at least min_steps steps. batch: sessions per group commit
 * (faults.batch_cap; NULL: the default). hold_usage_fsync: the usage fsync is held
 * until the executor waits for it, so that every kill point of its overlap is reached. */
typedef struct CrashRun {
        const char *prefix;
        const char *batch;
        void (*plant)(const char *qwen);
        const ApplyPick *picks;
        void (*check)(const char *qwen, unsigned n);
        bool hold_usage_fsync;
        unsigned min_steps;
} CrashRun;

static void crash_run_every_step(T *t, const CrashRun *c) {
        unsigned n;

        for (n = 1; n < 200; n++) {
                _cleanup_free_ char *dir = util_strprintf("%s%s-%u", c->prefix, c->batch ?: "", n);
                _cleanup_free_ char *qwen = fixture_path(t->root, dir);
                ActionStats st = {};
                int status = 0;
                pid_t pid;

                assert_int_equal(fixture_copy_tree(t->qwen, t->root, dir), 0);
                c->plant(qwen);
                pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                        faults.hold_usage_fsync = c->hold_usage_fsync;
                        faults.crash_after = n;
                        if (c->batch)
                                faults.batch_cap = (unsigned)atoi(c->batch);
                        /* the usage audit's findings die with the child: say so in the status */
                        int r = apply_execute(qwen, c->picks, &st);
                        _exit(audit.violation[0] ? 98 : r == 0 ? 0 : 1);
                }
                assert_int_equal(waitpid(pid, &status, 0), pid);
                assert_true(WIFEXITED(status));
                if (WEXITSTATUS(status) == 98)
                        fail_msg("step %u: a transcript moved before its usage line was durable",
                                 n);
                if (WEXITSTATUS(status) != 99) {
                        /* ran to the end without reaching step n: every step was covered */
                        assert_int_equal(WEXITSTATUS(status), 0);
                        break;
                }
                crash_check_salvaged_first(qwen, n);
                assert_true(apply_execute(qwen, c->picks, &st) >= 0);
                assert_int_equal(st.n_failed, 0);
                c->check(qwen, n);
                assert_int_equal(fixture_rm_rf(qwen), 0);
        }
        assert_true(n > c->min_steps); /* the plan has many steps; all were crashed after */
        assert_true(n < 200);
}

/* Crash after every step N of crash_picks, check what the crash left, rerun, check. batch:
 * sessions per group commit (NULL: the default, every picked session in one batch). */
static void crash_every_step(T *t, const char *batch) {
        crash_run_every_step(t, &(const CrashRun){ .prefix = "run", .batch = batch,
                                                   .plant = crash_plant, .picks = crash_picks,
                                                   .check = crash_check, .min_steps = 10 });
}

static void test_faults_crash_after_every_step_then_rerun(void **state) {
        crash_every_step(*state, NULL);
}

/* The same with batches of one and of two sessions: a crash between two group commits, and
 * inside the second. */
static void test_faults_crash_after_every_step_batches_then_rerun(void **state) {
        crash_every_step(*state, "1");
        crash_every_step(*state, "2");
        crash_every_step(*state, "3");
}

/* Two deletes of one project whose entries share session-organization.v1.json: the batch edits
 * the file once for both (erase_sessions_shared()). A crash after every step, then a rerun: both
 * deletes complete, the file holds exactly the entry of the session kept, nothing is left. */
static const ApplyPick crash_shared_picks[] = { { S_KILLED, VERB_DELETE }, { S_FH, VERB_DELETE },
                                                {} };
#define CRASH_ORG_ENTRY_OTHER CRASH_ORG_ENTRY(S_OTHER)

static void crash_shared_plant(const char *qwen) {
        assert_int_equal(fixture_write(qwen, CRASH_LOGS, "[\n  " CRASH_ROW(S_KILLED) ",\n  "
                                       CRASH_ROW(S_OTHER) "\n]"), 0);
        assert_int_equal(fixture_write(qwen, CRASH_ORG, CRASH_ORG_HEAD CRASH_ORG_ENTRY(S_KILLED)
                                       ",\n    " CRASH_ORG_ENTRY_OTHER ",\n    "
                                       CRASH_ORG_ENTRY(S_FH) "\n  }\n}"), 0);
}

static void crash_shared_check(const char *qwen, unsigned n) {
        _cleanup_free_ char *logs = test_read_rel(qwen, CRASH_LOGS);
        _cleanup_free_ char *org = test_read_rel(qwen, CRASH_ORG);
        _cleanup_free_ char *pending = fixture_path(qwen, ".qgc/pending");
        _cleanup_free_ char *tmp = NULL;
        DIR *d;
        struct dirent *de;

        if (fixture_exists(qwen, P_NOTES "/" S_KILLED ".jsonl") ||
            fixture_exists(qwen, P_NOTES "/" S_FH ".jsonl") ||
            fixture_exists(qwen, "file-history/" S_KILLED) ||
            fixture_exists(qwen, "file-history/" S_FH))
                fail_msg("step %u: a deleted session left behind", n);
        if (apply_usage_lines(qwen, S_KILLED) != 1)
                fail_msg("step %u: %s gone with %d usage lines", n, S_KILLED,
                         apply_usage_lines(qwen, S_KILLED));
        if (!streq(logs, "[\n  " CRASH_ROW(S_OTHER) "\n]"))
                fail_msg("step %u: logs.json is '%s'", n, logs);
        if (!streq(org, CRASH_ORG_HEAD CRASH_ORG_ENTRY_OTHER "\n  }\n}"))
                fail_msg("step %u: session-organization.v1.json is '%s'", n, org);
        if (crash_find_temp(qwen, &tmp))
                fail_msg("step %u: temporary file '%s' left behind", n, tmp);
        d = opendir(pending);
        while (d && (de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        fail_msg("step %u: pending marker '%s' left behind", n, de->d_name);
        if (d)
                closedir(d);
}

static void test_faults_crash_shared_file_batch_then_rerun(void **state) {
        crash_run_every_step(*state, &(const CrashRun){ .prefix = "shared",
                                                        .plant = crash_shared_plant,
                                                        .picks = crash_shared_picks,
                                                        .check = crash_shared_check,
                                                        .min_steps = 5 });
}

/* Group commit: the fsyncs of a run do not grow with its sessions. The four sessions of
 * crash_picks (two deletes, two archives, in three projects) take one fsync of
 * usage_record.jsonl, two for the batch's marker file, one per touched directory (four), one
 * for the marker's removal, and two per sidecar merge (temp file and directory: the .pr.json
 * and .ledger.jsonl of S_TEXT): 12. Before group commit it was 17. The batch closes on its
 * size alone (faults.untimed): under load its time window closed early once and
 * split it in two (21 fsyncs, a failure that was no bug). The slow clock makes every run as
 * loaded as that one, so the count is exact. */
static void test_faults_group_commit_fsyncs_per_batch(void **state) {
        T *t = *state;
        ActionStats st = {};

        crash_plant(t->qwen);
        faults.untimed = true;
        faults.slow_clock = true; /* as loaded as a machine gets: no window would hold */
        faults.n_fsync = 0;
        assert_int_equal(apply_execute(t->qwen, crash_picks, &st), 0);
        assert_int_equal(st.n_deleted + st.n_archived, 4);
        /* plus two per shared file a delete edits (erase.h: temp file and directory), the
         * first run's two directories (.qgc/, .qgc/pending/: their names durable before a
         * marker goes in), and two for the record of the batch's archive times (session-times.h:
         * the file, and .qgc/ as the file is created) */
        if (faults.n_fsync != 12 + 2 + 2 + 2 * st.n_erased_files)
                fail_msg("%u fsync calls for one batch of 4 sessions in 3 projects (%u shared "
                         "files edited; want %u)",
                         faults.n_fsync, st.n_erased_files, 12 + 2 + 2 + 2 * st.n_erased_files);
}

/* The fsyncs of crash_picks' four sessions (crash_plant() first), and the sessions done. */
static unsigned group_commit_fsyncs(T *t, ActionStats *st) {
        crash_plant(t->qwen);
        faults.n_fsync = 0;
        *st = (ActionStats){};
        assert_int_equal(apply_execute(t->qwen, crash_picks, st), 0);
        assert_int_equal(st->n_deleted + st->n_archived, 4);
        return faults.n_fsync;
}

/* What split test_faults_group_commit_fsyncs_per_batch's batch under load, without the load:
 * each reading of the executor's clock is later than any batch window. The window then closes
 * the batch after every session, which takes the fsyncs of batches of one
 * (faults.batch_cap = 1); with faults.untimed the four sessions are
 * one batch again, with its fsyncs, fewer. */
static void test_faults_batch_window_closes_on_a_slow_clock(void **state) {
        T *t = *state;
        ActionStats st;
        unsigned slow, ones, untimed;

        faults.slow_clock = true;
        slow = group_commit_fsyncs(t, &st);

        faults.slow_clock = false;
        assert_int_equal(fixture_rm_rf(t->qwen), 0);
        assert_int_equal(fixture_tree(t), 0);
        faults.batch_cap = 1;
        ones = group_commit_fsyncs(t, &st);
        faults.batch_cap = 0;

        faults.slow_clock = true;
        faults.untimed = true;
        assert_int_equal(fixture_rm_rf(t->qwen), 0);
        assert_int_equal(fixture_tree(t), 0);
        untimed = group_commit_fsyncs(t, &st);
        if (slow != ones || untimed != 12 + 2 + 2 + 2 * st.n_erased_files)
                fail_msg("fsyncs: %u with a slow clock, %u in batches of one, %u with a slow clock "
                         "and no window (want %u, %u, %u)",
                         slow, ones, untimed, ones, ones, 12 + 2 + 2 + 2 * st.n_erased_files);
        assert_true(untimed < slow);
}

/* Archiving a session without sidecars is one rename: the executor lists each chats/ once per
 * batch instead of trying to rename three sidecars that are not there (issue 14); a session
 * with sidecars still takes them along. */
static void test_faults_archive_without_sidecars_one_rename(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_FORK, VERB_ARCHIVE }, { S_WEB, VERB_ARCHIVE }, {} };
        ApplyPick with[] = { { S_TEXT, VERB_ARCHIVE }, {} };
        ActionStats st = {};

        faults.n_rename = 0;
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_archived, 2);
        assert_true(fixture_exists(t->qwen, P_API "/archive/" S_FORK ".jsonl"));
        assert_true(fixture_exists(t->qwen, P_WEB "/archive/" S_WEB ".jsonl"));
        if (faults.n_rename != 2)
                fail_msg("%u renames to archive 2 sessions without sidecars", faults.n_rename);

        assert_int_equal(fixture_write(t->qwen, P_API "/" S_TEXT ".worktree.json", "{}\n"), 0);
        st = (ActionStats){};
        assert_int_equal(apply_execute(t->qwen, with, &st), 0);
        assert_int_equal(st.n_archived, 1);
        assert_true(fixture_exists(t->qwen, P_API "/archive/" S_TEXT ".jsonl"));
        assert_true(fixture_exists(t->qwen, P_API "/archive/" S_TEXT ".worktree.json"));
        assert_false(fixture_exists(t->qwen, P_API "/" S_TEXT ".worktree.json"));
}

/* ---------------------------------------------------------------- the usage fsync overlaps moves */

/* An archive run: S_KILLED has no usage line (salvaged first), the others have one; S_TEXT has
 * sidecars (crash_plant()). */
static const ApplyPick overlap_picks[] = {
        { S_TEXT, VERB_ARCHIVE }, { S_KILLED, VERB_ARCHIVE }, { S_FORK, VERB_ARCHIVE },
        { S_WEB, VERB_ARCHIVE },  { S_NOTES, VERB_ARCHIVE },  {},
};

/* In a batch of archives the usage fsync runs while the sessions that need no line of the batch
 * move (qwen-commit.c): with that fsync held until the executor waits for it, the moves of
 * S_TEXT (and its sidecars), S_FORK, S_WEB and S_NOTES happen before it, and S_KILLED's after
 * (the usage audit: no transcript moves while its line is not fsynced). Before the overlap the
 * fsync was the executor's own, before any move. */
static void test_faults_archive_usage_fsync_overlaps_moves(void **state) {
        T *t = *state;
        ActionStats st = {};

        crash_plant(t->qwen);
        faults.untimed = true; /* one batch, however loaded the machine */
        faults.slow_clock = true;
        faults.hold_usage_fsync = true;
        faults.n_rename = 0;
        assert_int_equal(apply_execute(t->qwen, overlap_picks, &st), 0);
        assert_int_equal(st.n_archived, 5);
        assert_int_equal(st.n_salvaged, 1);
        assert_int_equal(apply_usage_lines(t->qwen, S_KILLED), 1);
        assert_true(fixture_exists(t->qwen, P_NOTES "/archive/" S_KILLED ".jsonl"));
        if (faults.n_rename_at_usage_sync < 4)
                fail_msg("%u renames before the usage fsync went on (of %u): no overlap",
                         faults.n_rename_at_usage_sync, faults.n_rename);
        assert_true(faults.n_rename_at_usage_sync < faults.n_rename);
}

/* The action log entries of a batch go with one write() for the salvages and one for the
 * outcomes (journal_hold()), after what they report; every entry is there. With the run's start
 * and summary: 4 writes (before: one per entry, 8). */
static void test_faults_batch_journal_one_write(void **state) {
        T *t = *state;
        ActionStats st = {};
        _cleanup_free_ char *log = NULL;
        unsigned n = 0;

        faults.untimed = true; /* one batch, however loaded the machine */
        faults.slow_clock = true;
        faults.n_journal_write = 0;
        assert_int_equal(apply_execute(t->qwen, overlap_picks, &st), 0);
        assert_int_equal(st.n_archived, 5);
        if (faults.n_journal_write != 4)
                fail_msg("%u writes to the action log for one batch", faults.n_journal_write);
        log = test_read_rel(t->root, "journal.log");
        for (const char *p = log; (p = strstr(p, "QGC_ACTION=archived")); p++)
                n++;
        assert_int_equal(n, 5);
        assert_non_null(strstr(log, "QGC_ACTION=salvaged QGC_SESSION=" S_KILLED));
        /* the salvage's entry before the outcomes */
        assert_true(strstr(log, "QGC_ACTION=salvaged") < strstr(log, "QGC_ACTION=archived"));
}

/* A batch of archives closes at QWEN_BATCH_MAX_ARCHIVES sessions, any other at
 * QWEN_BATCH_MAX unless the last batch's shared-file edits took QWEN_BATCH_EDIT_MSEC or
 * more, and the tests' cap holds for all. */
static void test_faults_batch_of_archives_is_larger(void **state) {
        _cleanup_free_ QwenBatch *b = calloc(1, sizeof(QwenBatch));

        (void)state;
        assert_non_null(b);
        b->n = QWEN_BATCH_MAX;
        assert_false(qwen_commit_full(b));
        b->n = QWEN_BATCH_MAX_ARCHIVES;
        assert_true(qwen_commit_full(b));
        b->n = QWEN_BATCH_MAX;
        b->n_not_archive = 1;
        assert_true(qwen_commit_full(b));
        /* deletes after a batch whose logs.json rewrite was long: fewer, larger batches */
        b->edit_ns = QWEN_BATCH_EDIT_MSEC * 1000000ULL - 1;
        assert_true(qwen_commit_full(b));
        b->edit_ns = QWEN_BATCH_EDIT_MSEC * 1000000ULL;
        assert_false(qwen_commit_full(b));
        b->n = QWEN_BATCH_MAX_ARCHIVES;
        assert_true(qwen_commit_full(b));
        b->n_not_archive = 0;
        faults.batch_cap = 2;
        b->n = 2;
        assert_true(qwen_commit_full(b));
        b->n_not_archive = 1;
        assert_true(qwen_commit_full(b));
        faults.batch_cap = 0;
        assert_true(QWEN_BATCH_MAX_ARCHIVES > QWEN_BATCH_MAX);
        assert_true(USAGE_AHEAD_MAX >= QWEN_BATCH_MAX_ARCHIVES);
}

/* The usage audit notices a transcript that moves before its line is durable. */
static void test_faults_usage_audit_catches_a_missing_fsync(void **state) {
        T *t = *state;
        ActionStats st = {};

        ApplyPick picks[] = { { S_KILLED, VERB_ARCHIVE }, {} };

        /* alone: no other session relies on a line in the file, so no other fsync of it runs */
        faults.drop_usage_append_fsync = true;
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_non_null(strstr(audit.violation, "rename of transcript " S_KILLED ".jsonl while"));
        audit.violation[0] = 0; /* expected: the test passes */
}

/* ... and one that relies on a line already in the file, which no fsync of this run made
 * durable. */
static void test_faults_usage_audit_catches_a_preexisting_line(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_FORK, VERB_ARCHIVE }, {} };
        ActionStats st = {};

        faults.drop_usage_fsync = true;
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_non_null(strstr(audit.violation, "rename of transcript " S_FORK ".jsonl while"));
        audit.violation[0] = 0; /* expected: the test passes */
}

/* A session that needs no new usage line (its line is in the file: Qwen appended it, without an
 * fsync) goes only after an fsync of usage_record.jsonl in this run (the usage audit counts a
 * line in the file at the start of the run as not fsynced): in a batch of archives that writes
 * no line, in one that writes one (whose fsync overlaps the moves), and for deletes; one fsync
 * of the file per run when the batches write nothing. */
static void test_faults_usage_preexisting_line_fsynced_first(void **state) {
        T *t = *state;
        ApplyPick archives[] = { { S_FORK, VERB_ARCHIVE }, { S_WEB, VERB_ARCHIVE }, {} };
        ApplyPick deletes[] = { { S_TEXT, VERB_DELETE }, {} };
        ActionStats st = {};

        faults.n_usage_fsync = 0;
        assert_int_equal(apply_execute(t->qwen, archives, &st), 0);
        assert_int_equal(st.n_archived, 2);
        assert_int_equal(st.n_salvaged, 0);
        assert_int_equal(faults.n_usage_fsync, 1);
        assert_true(audit.violation[0] == 0);

        faults.batch_cap = 1; /* two batches, one fsync */
        assert_int_equal(fixture_rm_rf(t->qwen), 0);
        assert_int_equal(fixture_copy_tree(fixture_testdata("corpus/tree"), t->root, "qwen"), 0);
        faults.n_usage_fsync = 0;
        st = (ActionStats){};
        assert_int_equal(apply_execute(t->qwen, archives, &st), 0);
        assert_int_equal(st.n_archived, 2);
        assert_int_equal(faults.n_usage_fsync, 1);
        faults.batch_cap = 0;

        st = (ActionStats){};
        assert_int_equal(apply_execute(t->qwen, deletes, &st), 0);
        assert_int_equal(st.n_deleted, 1);
        assert_false(fixture_exists(t->qwen, P_API "/" S_TEXT ".jsonl"));
        assert_true(audit.violation[0] == 0);
}

/* The fsync of usage_record.jsonl fails: every session that relies on a line in the file is
 * kept, with the reason. */
static void test_faults_usage_preexisting_fsync_eio_keeps_sessions(void **state) {
        T *t = *state;
        ApplyPick archives[] = { { S_FORK, VERB_ARCHIVE }, { S_WEB, VERB_ARCHIVE }, {} };
        ActionStats st = {};

        _cleanup_free_ char *log = NULL;

        faults.fsync_err = EIO;
        assert_int_equal(apply_execute(t->qwen, archives, &st), 1);
        assert_int_equal(st.n_archived, 0);
        assert_int_equal(st.n_failed, 2);
        log = test_read_rel(t->root, "journal.log");
        assert_non_null(strstr(log, "cannot make the usage record durable; session kept"));
        assert_true(fixture_exists(t->qwen, P_API "/" S_FORK ".jsonl"));
        assert_true(fixture_exists(t->qwen, P_WEB "/" S_WEB ".jsonl"));
        faults.fsync_err = 0;
        st = (ActionStats){};
        assert_int_equal(apply_execute(t->qwen, archives, &st), 0);
        assert_int_equal(st.n_archived, 2);
}

/* Killed after every step of an archive run whose usage fsync overlaps the moves (held until the
 * executor waits for it, so that every kill point of the overlap is reached), then run again:
 * the salvaged session never went before its line, each session has its one line, everything
 * is archived, S_TEXT's sidecars merged once, no temporary file is left. batch: as in
 * crash_every_step(). */
static void crash_overlap_check(const char *qwen, unsigned n) {
        _cleanup_free_ char *lg = NULL, *tmp = NULL;

        for (size_t i = 0; overlap_picks[i].id; i++) {
                const char *id = overlap_picks[i].id;
                _cleanup_free_ char *a =
                        util_strprintf("%s/%s.jsonl",
                                       streq(id, S_WEB)                            ? P_WEB
                                       : streq(id, S_KILLED) || streq(id, S_NOTES) ? P_NOTES
                                                                                   : P_API,
                                       id);
                _cleanup_free_ char *b =
                        util_strprintf("%.*s/archive/%s.jsonl", (int)(strrchr(a, '/') - a), a, id);
                if (fixture_exists(qwen, a) || !fixture_exists(qwen, b))
                        fail_msg("step %u: %s not archived after the rerun", n, id);
                if (apply_usage_lines(qwen, id) != (streq(id, S_WEB) ? 3 : 1))
                        fail_msg("step %u: %d usage lines of %s", n,
                                 apply_usage_lines(qwen, id), id);
        }
        lg = test_read_rel(qwen, P_API "/archive/" S_TEXT ".ledger.jsonl");
        if (!streq(lg, "old\nnew\n"))
                fail_msg("step %u: ledger is '%s'", n, lg);
        if (crash_find_temp(qwen, &tmp))
                fail_msg("step %u: temporary file '%s' left behind", n, tmp);
}

static void crash_every_step_overlap(T *t, const char *batch) {
        crash_run_every_step(t, &(const CrashRun){ .prefix = "ov", .batch = batch,
                                                   .plant = crash_plant, .picks = overlap_picks,
                                                   .check = crash_overlap_check,
                                                   .hold_usage_fsync = true, .min_steps = 5 });
}

static void test_faults_crash_after_every_step_overlap_then_rerun(void **state) {
        crash_every_step_overlap(*state, NULL);
        crash_every_step_overlap(*state, "1");
        crash_every_step_overlap(*state, "2");
        crash_every_step_overlap(*state, "3");
}

/* The directory fsync audit on a whole batch (moves, sidecars, markers, deletes, shared-file
 * edits), with every open through the wrapped openat() (the walk, not openat2): every name the
 * executor adds is fsynced in its directory before its next unlink. */
static void test_faults_fsync_audit_whole_batch(void **state) {
        T *t = *state;
        ActionStats st = {};

        crash_plant(t->qwen);
        fs_test_force_walk(true);
        assert_int_equal(apply_execute(t->qwen, crash_picks, &st), 0);
        fs_test_force_walk(false);
        assert_int_equal(st.n_deleted + st.n_archived, 4);
        assert_true(audit.n_checked > 4); /* the transcripts' unlinks and more were checked */
        if (audit.violation[0])
                fail_msg("%s", audit.violation);
}

/* ... and the audit can fail: with the fsync of chats/archive/ "forgotten" (the one that makes
 * the moves durable before the batch's unlinks), the first unlink after a move is caught. */
static void test_faults_fsync_audit_catches_a_missing_fsync(void **state) {
        T *t = *state;
        ActionStats st = {};

        crash_plant(t->qwen);
        snprintf(faults.drop_dir_fsync, sizeof faults.drop_dir_fsync, "/chats/archive");
        assert_int_equal(apply_execute(t->qwen, crash_picks, &st), 0);
        assert_non_null(strstr(audit.violation, "/chats/archive/"));
        assert_non_null(strstr(audit.violation, "(renamed to) was not fsynced"));
        audit.violation[0] = 0; /* expected: the test passes */
}

/* The executor loads the registry once per tree and refreshes it before each batch's re-check:
 * four batches of one session make one probe, not five. */
static void test_faults_executor_probe_once_per_tree(void **state) {
        T *t = *state;
        ActionStats st = {};

        crash_plant(t->qwen);
        n_executor_probes = 0;
        faults.batch_cap = 1;
        assert_int_equal(apply_execute(t->qwen, crash_picks, &st), 0);
        faults.batch_cap = 0;
        assert_int_equal(st.n_deleted + st.n_archived, 4);
        assert_int_equal(n_executor_probes, 1);
}

/* No test seam is read from the environment: with every QGC_TEST_ variable qgc ever read set
 * (the batch cap, the walk without openat2, the crash), a scan and a real run read none of them
 * and run whole. */
static void test_faults_no_test_environment(void **state) {
        T *t = *state;
        ActionStats st = {};

        crash_plant(t->qwen);
        setenv("QGC_TEST_BATCH_SESSIONS", "1", 1);
        setenv("QGC_TEST_NO_OPENAT2", "1", 1);
        setenv("QGC_TEST_CRASH_AFTER_STEP", "1", 1);
        test_getenv_names[0] = 0;
        assert_int_equal(apply_execute(t->qwen, crash_picks, &st), 0);
        unsetenv("QGC_TEST_BATCH_SESSIONS");
        unsetenv("QGC_TEST_NO_OPENAT2");
        unsetenv("QGC_TEST_CRASH_AFTER_STEP");
        if (test_getenv_names[0])
                fail_msg("the library read %s", test_getenv_names);
        assert_int_equal(st.n_deleted + st.n_archived, 4);
        assert_int_equal(st.n_failed, 0);
}

/* Two files of one session (ids differing in case: Qwen dedupes usage on the first record's
 * sessionId) in one batch: the second shares the first's usage line. When that line cannot be
 * written both stay; once it can, both go with exactly one line. */
static void test_faults_batch_shared_usage_line_failure_keeps_both(void **state) {
        T *t = *state;
        static const char *upper = "6DCFB8C0-951C-475B-9CA1-0D8837BEAD38";
        _cleanup_free_ char *src = test_read_rel(t->qwen, P_NOTES "/" S_KILLED ".jsonl");
        _cleanup_free_ char *rel = util_strprintf(P_NOTES "/%s.jsonl", upper);
        ApplyPick picks[] = { { S_KILLED, VERB_DELETE }, { upper, VERB_DELETE }, {} };
        ActionStats st = {};

        assert_int_equal(fixture_write(t->qwen, rel, src), 0);
        faults.write_err = ENOSPC;
        assert_int_equal(apply_execute(t->qwen, picks, &st), 1);
        assert_int_equal(st.n_deleted, 0);
        assert_true(fixture_exists(t->qwen, P_NOTES "/" S_KILLED ".jsonl"));
        assert_true(fixture_exists(t->qwen, rel));
        assert_int_equal(apply_usage_lines(t->qwen, S_KILLED), 0);

        faults.write_err = 0;
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_deleted, 2);
        assert_false(fixture_exists(t->qwen, P_NOTES "/" S_KILLED ".jsonl"));
        assert_false(fixture_exists(t->qwen, rel));
        assert_int_equal(apply_usage_lines(t->qwen, S_KILLED), 1);
}

/* ---------------------------------------------------------------- the cold tier */

static long long mtime_ns_rel(const char *root, const char *rel) {
        _cleanup_free_ char *p = fixture_path(root, rel);
        struct stat st;

        assert_int_equal(stat(p, &st), 0);
        return (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}

/* Compress the archived session S_ARCH (transcript and a .pr.json) into its cold tier. */
static void cold_plant(const char *qwen) {
        _cleanup_free_ char *a = fixture_path(qwen, P_SCRATCH "/archive");
        _cleanup_free_ char *cold = fixture_path(qwen, P_SCRATCH "/archive/" COLD_DIR);
        int afd, cfd;

        assert_int_equal(mkdir(cold, 0700), 0);
        afd = open(a, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cfd = open(cold, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(afd >= 0 && cfd >= 0);
        assert_int_equal(cold_compress(afd, S_ARCH ".pr.json", cfd, 3, NULL, NULL, NULL, NULL), 0);
        assert_int_equal(cold_compress(afd, S_ARCH ".jsonl", cfd, 3, NULL, NULL, NULL, NULL), 0);
        close(afd);
        close(cfd);
}

/* qgc restore of a compressed session, killed after every step and run again: the transcript
 * and its sidecar come back byte for byte with their mtimes, no .zst and no temporary file is
 * left. */
static void test_faults_cold_restore_crash_after_every_step_then_rerun(void **state) {
        T *t = *state;
        _cleanup_free_ char *body = NULL, *pr = NULL;
        long long mt, mt_pr;
        unsigned n;

        assert_int_equal(fixture_write(t->qwen, P_SCRATCH "/archive/" S_ARCH ".pr.json",
                                       "{\"prs\":[]}\n"),
                         0);
        body = test_read_rel(t->qwen, P_SCRATCH "/archive/" S_ARCH ".jsonl");
        pr = test_read_rel(t->qwen, P_SCRATCH "/archive/" S_ARCH ".pr.json");
        mt = mtime_ns_rel(t->qwen, P_SCRATCH "/archive/" S_ARCH ".jsonl");
        mt_pr = mtime_ns_rel(t->qwen, P_SCRATCH "/archive/" S_ARCH ".pr.json");
        cold_plant(t->qwen);
        assert_false(fixture_exists(t->qwen, P_SCRATCH "/archive/" S_ARCH ".jsonl"));

        for (n = 1; n < 50; n++) {
                _cleanup_free_ char *dir = util_strprintf("cold%u", n);
                _cleanup_free_ char *qwen = fixture_path(t->root, dir);
                _cleanup_free_ char *got = NULL, *got_pr = NULL, *tmp = NULL;
                int status = 0;
                pid_t pid;

                assert_int_equal(fixture_copy_tree(t->qwen, t->root, dir), 0);
                pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                        Inventory *inv = NULL;
                        faults.crash_after = n;
                        if (apply_scan(qwen, &inv) < 0)
                                _exit(2);
                        _exit(test_restore(inv, S_ARCH, /* to_archive= */ true, NULL) == 0 ? 0 : 1);
                }
                assert_int_equal(waitpid(pid, &status, 0), pid);
                assert_true(WIFEXITED(status));
                if (WEXITSTATUS(status) != 99) {
                        assert_int_equal(WEXITSTATUS(status), 0);
                        assert_int_equal(fixture_rm_rf(qwen), 0);
                        break;
                }
                _cleanup_(inventory_freep) Inventory *inv = NULL;
                assert_int_equal(apply_scan(qwen, &inv), 0);
                /* the rerun: a restore again when the transcript is still compressed; else
                 * (killed after the transcript's own step) the session is archived already */
                if (fixture_exists(qwen, P_SCRATCH "/archive/" COLD_DIR "/" S_ARCH ".jsonl.zst"))
                        assert_int_equal(test_restore(inv, S_ARCH, /* to_archive= */ true, NULL), 0);
                got = test_read_rel(qwen, P_SCRATCH "/archive/" S_ARCH ".jsonl");
                got_pr = test_read_rel(qwen, P_SCRATCH "/archive/" S_ARCH ".pr.json");
                if (!streq(got, body) || !streq(got_pr, pr))
                        fail_msg("step %u: restored content differs", n);
                if (mtime_ns_rel(qwen, P_SCRATCH "/archive/" S_ARCH ".jsonl") != mt ||
                    mtime_ns_rel(qwen, P_SCRATCH "/archive/" S_ARCH ".pr.json") != mt_pr)
                        fail_msg("step %u: restored mtime differs", n);
                if (fixture_exists(qwen, P_SCRATCH "/archive/" COLD_DIR "/" S_ARCH ".pr.json.zst"))
                        fail_msg("step %u: a compressed sidecar left behind", n);
                if (crash_find_temp(qwen, &tmp))
                        fail_msg("step %u: temporary file '%s' left behind", n, tmp);
                assert_int_equal(fixture_rm_rf(qwen), 0);
        }
        assert_true(n > 3);
        assert_true(n < 50);
}

/* qgc restore of a compressed session with two sidecars is one batch (cold_restore_files()):
 * one fsync of chats/archive/ and one of the cold tier, not two per file; the files come back
 * byte for byte with their mtimes. */
static void test_faults_cold_restore_is_one_batch(void **state) {
        T *t = *state;
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        _cleanup_free_ char *body = NULL, *pr = NULL, *wt = NULL;
        _cleanup_free_ char *a = fixture_path(t->qwen, P_SCRATCH "/archive");
        _cleanup_free_ char *cold = fixture_path(t->qwen, P_SCRATCH "/archive/" COLD_DIR);
        long long mt;
        int afd, cfd;

        assert_int_equal(fixture_write(t->qwen, P_SCRATCH "/archive/" S_ARCH ".pr.json",
                                       "{\"prs\":[]}\n"),
                         0);
        assert_int_equal(fixture_write(t->qwen, P_SCRATCH "/archive/" S_ARCH ".worktree.json",
                                       "{\"worktrees\":[]}\n"),
                         0);
        body = test_read_rel(t->qwen, P_SCRATCH "/archive/" S_ARCH ".jsonl");
        pr = test_read_rel(t->qwen, P_SCRATCH "/archive/" S_ARCH ".pr.json");
        wt = test_read_rel(t->qwen, P_SCRATCH "/archive/" S_ARCH ".worktree.json");
        mt = mtime_ns_rel(t->qwen, P_SCRATCH "/archive/" S_ARCH ".jsonl");
        cold_plant(t->qwen);
        afd = open(a, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cfd = open(cold, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(afd >= 0 && cfd >= 0);
        assert_int_equal(cold_compress(afd, S_ARCH ".worktree.json", cfd, 3, NULL, NULL, NULL,
                                       NULL),
                         0);
        close(afd);
        close(cfd);

        assert_int_equal(apply_scan(t->qwen, &inv), 0);
        faults.n_fsync = faults.n_dir_fsync = 0;
        assert_int_equal(test_restore(inv, S_ARCH, /* to_archive= */ true, NULL), 0);
        /* plus the restore's start and end in the tree's record (session-times.h: a file fsync
         * each, and the directory fsyncs of .qgc/ and of the new file's name) */
        if (faults.n_dir_fsync > 2 + 2 || faults.n_fsync > 2 + 3 + 4)
                fail_msg("restoring 3 files took %u fsyncs, %u of directories (want at most 9 "
                         "and 4)",
                         faults.n_fsync, faults.n_dir_fsync);
        _cleanup_free_ char *got = test_read_rel(t->qwen, P_SCRATCH "/archive/" S_ARCH ".jsonl");
        _cleanup_free_ char *got_pr = test_read_rel(t->qwen,
                                                    P_SCRATCH "/archive/" S_ARCH ".pr.json");
        _cleanup_free_ char *got_wt = test_read_rel(t->qwen,
                                                    P_SCRATCH "/archive/" S_ARCH ".worktree.json");
        assert_string_equal(got, body);
        assert_string_equal(got_pr, pr);
        assert_string_equal(got_wt, wt);
        assert_true(mtime_ns_rel(t->qwen, P_SCRATCH "/archive/" S_ARCH ".jsonl") == mt);
        assert_false(fixture_exists(t->qwen, P_SCRATCH "/archive/" COLD_DIR "/" S_ARCH
                                             ".worktree.json.zst"));
        assert_false(fixture_exists(t->qwen, P_SCRATCH "/archive/" COLD_DIR "/" S_ARCH
                                             ".jsonl.zst"));
}

/* The tree under qwen as a comparable listing: each entry's path, type, size and content hash,
 * and a file's mtime (fixture_snapshot()); what differs between two runs of the same plan is left
 * out: directories' mtimes, atimes, usage_record.jsonl's mtime, qgc's own state directory
 * .qgc/ (its times) and the tree's lock (LOCK_FILE: created when the run took it). */
static char *crash_tree(const char *qwen) {
        _cleanup_free_ char *snap = NULL;
        _cleanup_(strbuf_done) StrBuf out = {};

        assert_int_equal(fixture_snapshot(qwen, "", &snap), 0);
        for (char *l = snap, *e; l && *l; l = e ? e + 1 : NULL) {
                char path[4096], type[4], mode[16], size[32], mt[32], at[32], h[32];

                e = strchr(l, '\n');
                if (e)
                        *e = 0;
                if (sscanf(l, "%4095s %3s %15s %31s %31s %31s %31s", path, type, mode, size, mt, at,
                           h) != 7)
                        fail_msg("snapshot line '%s'", l);
                if ((strneq(path, ".qgc", 4) && (path[4] == 0 || path[4] == '/')) ||
                    streq(path, LOCK_FILE)) /* its mtime: when the run took the lock */
                        continue;
                /* usage_record.jsonl is appended to when the run happens */
                assert_true(strbuf_printf(&out, "%s %s %s %s %s\n", path, type, size, h,
                                          streq(type, "f") && !streq(path, "usage_record.jsonl")
                                                  ? mt
                                                  : "-") >= 0);
        }
        return out.buf ? strdup(out.buf) : strdup("");
}

/* Fail with the lines of two crash_tree() listings that differ. */
static void crash_tree_diff(const char *what, unsigned n, const char *got, const char *want) {
        _cleanup_(strbuf_done) StrBuf d = {};

        for (int side = 0; side < 2; side++) {
                const char *a = side ? want : got, *b = side ? got : want;

                for (const char *l = a, *e; l && *l; l = e ? e + 1 : NULL) {
                        _cleanup_free_ char *line = NULL;

                        e = strchr(l, '\n');
                        line = e ? strndup(l, (size_t)(e - l + 1)) : strdup(l);
                        assert_non_null(line);
                        if (!strstr(b, line) || (strstr(b, line) != b && strstr(b, line)[-1] != '\n'))
                                assert_true(strbuf_printf(&d, "%s %s", side ? "missing" : "extra",
                                                          line) >= 0);
                }
        }
        fail_msg("%s, step %u: the tree differs from an unkilled run's:\n%s", what, n,
                 d.len > 0 ? d.buf : got);
}

/* No pending marker and no temporary file is left under qwen. */
static void crash_check_no_leftovers(const char *qwen, const char *what, unsigned n) {
        _cleanup_free_ char *pending = fixture_path(qwen, ".qgc/pending");
        _cleanup_free_ char *tmp = NULL;
        DIR *d = opendir(pending);
        struct dirent *de;

        while (d && (de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        fail_msg("%s, step %u: pending marker '%s' left behind", what, n,
                                 de->d_name);
        if (d)
                closedir(d);
        if (crash_find_temp(qwen, &tmp))
                fail_msg("%s, step %u: temporary file '%s' left behind", what, n, tmp);
}

/* One `qgc restore`: id, or every archived session of project (cwd) when id is NULL; the plan
 * (restore.c) executed as main does. 0 or the executor's result. */
static int restore_run(const char *qwen, const char *id, const char *project) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        _cleanup_(plan_freep) Plan *p = NULL;
        ActionStats st = {};
        int r;

        r = apply_scan(qwen, &inv);
        if (r < 0)
                return r;
        r = restore_plan(inv, id, id ? NULL : project, false, util_now_msec(), &p);
        if (r < 0)
                return r;
        r = test_run_plan(p, &st);
        return r < 0 ? r : st.n_failed > 0 ? 1 : 0;
}

/* The scratch project with S_ARCH compressed (transcript and a .pr.json) and S_SCRATCH archived
 * as it is: a project restore brings back one session of each kind. */
static void restore_project_plant(const char *qwen) {
        _cleanup_free_ char *from = fixture_path(qwen, P_SCRATCH "/" S_SCRATCH ".jsonl");
        _cleanup_free_ char *to = fixture_path(qwen, P_SCRATCH "/archive/" S_SCRATCH ".jsonl");

        assert_int_equal(fixture_write(qwen, P_SCRATCH "/archive/" S_ARCH ".pr.json",
                                       "{\"prs\":[]}\n"),
                         0);
        assert_int_equal(rename(from, to), 0);
        cold_plant(qwen);
}

/* `qgc restore` (id NULL: `--project /srv/demo/scratch`) killed after every step N, then run
 * again (by_recovery: a normal run instead, whose recovery pass finishes the restore its record
 * says began, session-times.h): the tree is the tree of an unkilled run, with no marker and no
 * temporary file. */
/* A kill that let a restore's end be recorded (a line "restored <msec> <id>" in
 * G/.qgc/session-times: nothing is pending for the next run to finish) came after its outcome
 * was journalled: the action log written since log_off names the session. */
static void restore_check_end_journalled(const char *root, const char *qwen, size_t log_off,
                                         const char *what, unsigned n) {
        _cleanup_free_ char *rec = NULL, *log = test_read_rel(root, "journal.log");
        const char *since = log && strlen(log) >= log_off ? log + log_off : "";

        if (fixture_read(qwen, ".qgc/session-times", &rec, NULL) < 0)
                return;
        for (const char *p = rec; (p = strstr(p, "restored ")); p++) {
                const char *id = strchr(p + strlen("restored "), ' ');
                const char *end = id ? strchr(id, '\n') : NULL;
                _cleanup_free_ char *want =
                        end ? util_strprintf("QGC_SESSION=%.*s", (int)(end - id - 1), id + 1)
                            : NULL;

                assert_non_null(want);
                if (!strstr(since, want))
                        fail_msg("%s, step %u: the end of a restore is recorded (%s), but the "
                                 "action log has no entry of it",
                                 what, n, want);
        }
}

static void restore_crash_every_step_by(T *t, const char *id, const char *what, bool by_recovery) {
        _cleanup_free_ char *ref = fixture_path(t->root, what), *want = NULL, *orig = NULL;
        unsigned n;

        restore_project_plant(t->qwen);
        orig = crash_tree(t->qwen);
        assert_int_equal(fixture_copy_tree(t->qwen, t->root, what), 0);
        assert_int_equal(restore_run(ref, id, "/srv/demo/scratch"), 0);
        want = crash_tree(ref);
        for (n = 1; n < 100; n++) {
                _cleanup_free_ char *dir = util_strprintf("%s%u", what, n);
                _cleanup_free_ char *qwen = fixture_path(t->root, dir);
                _cleanup_free_ char *got = NULL;
                int status = 0;
                pid_t pid;

                _cleanup_free_ char *log0 = test_read_rel(t->root, "journal.log");
                size_t log_off = log0 ? strlen(log0) : 0;

                assert_int_equal(fixture_copy_tree(t->qwen, t->root, dir), 0);
                pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                        faults.crash_after = n;
                        _exit(restore_run(qwen, id, "/srv/demo/scratch") == 0 ? 0 : 1);
                }
                assert_int_equal(waitpid(pid, &status, 0), pid);
                assert_true(WIFEXITED(status));
                if (WEXITSTATUS(status) != 99) {
                        assert_int_equal(WEXITSTATUS(status), 0);
                        assert_int_equal(fixture_rm_rf(qwen), 0);
                        break;
                }
                restore_check_end_journalled(t->root, qwen, log_off, what, n);
                /* the rerun: the same command again, where the kill left something to do
                 * (once all is back, `qgc restore` says there is nothing archived) */
                got = crash_tree(qwen);
                if (by_recovery) {
                        ActionStats st = {};
                        _cleanup_free_ char *rec = NULL;

                        if (fixture_read(qwen, ".qgc/session-times", &rec, NULL) < 0)
                                rec = NULL;

                        if (apply_execute(qwen, (const ApplyPick[]){ {} }, &st) != 0 ||
                            st.n_failed > 0)
                                fail_msg("%s, step %u: the normal run failed", what, n);
                        /* killed before the restore's start was recorded (making .qgc/): it
                         * never began, and the tree is as it was */
                        if (!rec || !strstr(rec, "restore ")) {
                                free(got);
                                got = crash_tree(qwen);
                                if (!streq(got, orig))
                                        crash_tree_diff(what, n, got, orig);
                                assert_int_equal(fixture_rm_rf(qwen), 0);
                                continue;
                        }
                } else if (!streq(got, want) && restore_run(qwen, id, "/srv/demo/scratch") != 0)
                        fail_msg("%s, step %u: the rerun failed", what, n);
                free(got);
                got = crash_tree(qwen);
                if (!streq(got, want))
                        crash_tree_diff(what, n, got, want);
                crash_check_no_leftovers(qwen, what, n);
                assert_int_equal(fixture_rm_rf(qwen), 0);
        }
        assert_true(n > 3);
        assert_true(n < 100);
}

static void restore_crash_every_step(T *t, const char *id, const char *what) {
        restore_crash_every_step_by(t, id, what, false);
}

static void test_faults_restore_project_crash_after_every_step_then_rerun(void **state) {
        restore_crash_every_step(*state, NULL, "project");
}

/* `qgc restore S_ARCH` of the compressed session: back to chats/ in one command. */
static void test_faults_restore_cold_to_chats_crash_after_every_step_then_rerun(void **state) {
        restore_crash_every_step(*state, S_ARCH, "one");
}

/* The same two, each followed by a normal run: its recovery pass finishes what the record of
 * the restore's start promised. */
static void test_faults_restore_crash_after_every_step_then_recovery(void **state) {
        T *t = *state;

        restore_crash_every_step_by(t, S_ARCH, "rec-one", true);
        assert_int_equal(fixture_rm_rf(t->qwen), 0);
        assert_int_equal(fixture_tree(t), 0);
        restore_crash_every_step_by(t, NULL, "rec-project", true);
}

/* ---------------------------------------------------------------- stale project removal */

#define STALE_N 3

/* The stale project entry of stale_plant(): its directory under projects/ and its (vanished,
 * temporary) cwd. */
static void stale_names(char *dir, size_t nd, char *cwd, size_t nc) {
        snprintf(cwd, nc, "/tmp/qgc-faults-stale-%ld", (long)getpid());
        snprintf(dir, nd, "projects/-tmp-qgc-faults-stale-%ld", (long)getpid());
}

/* A tree with one stale project entry: STALE_N sessions of a vanished temporary cwd, each with
 * an organization entry (no pin, no group), the marker written 10 days ago with that cwd, and
 * everything inside 10 days old; stale-project-min-age 1d removes it. */
static void stale_plant(const char *qwen) {
        char dir[256], cwd[128], rel[512], hash[PROJECT_HASH_LEN + 1];
        _cleanup_(strbuf_done) StrBuf org = {}, logs = {};

        stale_names(dir, sizeof dir, cwd, sizeof cwd);
        assert_true(strbuf_printf(&logs, "[\n  " CRASH_ROW(S_OTHER)) >= 0);
        assert_true(strbuf_printf(&org, "{\n  \"schemaVersion\": 1,\n  \"groups\": [],\n"
                                        "  \"sessions\": {") >= 0);
        for (int i = 0; i < STALE_N; i++) {
                char id[SESSION_ID_MAX + 1];
                _cleanup_free_ char *body = NULL;

                snprintf(id, sizeof id, "0c0ffee0-1234-4abc-8def-0000000000%02d", i);
                body = util_strprintf(
                        "{\"uuid\":\"u1\",\"parentUuid\":null,\"sessionId\":\"%s\",\"timestamp\":"
                        "\"2026-10-01T00:00:00.000Z\",\"type\":\"user\",\"cwd\":\"%s\",\"version\":"
                        "\"0.24.4\",\"message\":{\"role\":\"user\",\"parts\":[{\"text\":\"hi\"}]}}"
                        "\n"
                        "{\"uuid\":\"u2\",\"parentUuid\":\"u1\",\"sessionId\":\"%s\",\"timestamp\":"
                        "\"2026-10-01T00:00:01.000Z\",\"type\":\"system\",\"subtype\":"
                        "\"ui_telemetry\",\"cwd\":\"%s\",\"version\":\"0.24.4\",\"systemPayload\":"
                        "{\"uiEvent\":{\"event.name\":\"qwen-code.api_response\",\"model\":"
                        "\"qwen3\",\"duration_ms\":10,\"input_token_count\":5,"
                        "\"output_token_count\":7,\"total_token_count\":12,"
                        "\"cached_content_token_count\":0,\"thoughts_token_count\":0}}}\n",
                        id, cwd, id, cwd);
                assert_non_null(body);
                snprintf(rel, sizeof rel, "%s/chats/%s.jsonl", dir, id);
                assert_int_equal(fixture_write(qwen, rel, body), 0);
                assert_int_equal(fixture_age(qwen, rel, 10 * 86400), 0);
                assert_true(strbuf_printf(&logs, ",\n  {\n    \"sessionId\": \"%s\",\n    "
                                                 "\"messageId\": 0,\n    \"type\": \"user\",\n    "
                                                 "\"message\": \"m\",\n    \"timestamp\": "
                                                 "\"2026-10-01T00:00:00.000Z\"\n  }",
                                          id) >= 0);
                assert_true(strbuf_printf(&org, "%s\n    \"%s\": {\n      \"groupId\": null,\n"
                                                "      \"updatedAt\": "
                                                "\"2026-10-01T00:00:00.000Z\"\n    }",
                                          i ? "," : "", id) >= 0);
        }
        assert_true(strbuf_printf(&org, "\n  }\n}") >= 0);
        /* Qwen's logs.json of the project: a row of each session, and one of another session */
        assert_true(strbuf_printf(&logs, "\n]") >= 0);
        assert_int_equal(qwen_project_hash(cwd, hash), 0);
        snprintf(rel, sizeof rel, "tmp/%s/logs.json", hash);
        assert_int_equal(fixture_write(qwen, rel, logs.buf), 0);
        assert_int_equal(fixture_age(qwen, rel, 10 * 86400), 0);
        snprintf(rel, sizeof rel, "%s/session-organization.v1.json", dir);
        assert_int_equal(fixture_write(qwen, rel, org.buf), 0);
        assert_int_equal(fixture_age(qwen, rel, 10 * 86400), 0);
        snprintf(rel, sizeof rel, "%s/" HYGIENE_STALE_MARKER, dir);
        assert_int_equal(fixture_write(qwen, rel, cwd), 0);
        assert_int_equal(fixture_append(qwen, rel, "\n"), 0);
        assert_int_equal(fixture_age(qwen, rel, 10 * 86400), 0);
        /* the directories too: nothing inside is newer than the marker */
        snprintf(rel, sizeof rel, "%s/chats", dir);
        assert_int_equal(fixture_age(qwen, rel, 10 * 86400), 0);
        assert_int_equal(fixture_age(qwen, dir, 10 * 86400), 0);
}

/* A normal run of the policy (stale-project-min-age 1d, nothing else) on qwen, as main does:
 * scan, policy, plan, the recovery steps in front, the executor. 0 or the executor's result;
 * *ret_stats. */
static int stale_run(const char *qwen, ActionStats *ret_stats) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        _cleanup_(policy_verdicts_freep) Verdicts *v = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL, *steps = NULL;
        _cleanup_(config_done) Config cfg = {};
        ConfigErrors errs = {};
        Tree tr = {};
        msec_t now = util_now_msec();
        ScanOptions so = { .now = now };
        PolicyOptions po = { .real_now = now };
        int r;

        assert_int_equal(config_init_default(&cfg), 0);
        assert_int_equal(config_load_string(&cfg,
                                             "defaults = { max-age = \"off\"; orphan-min-age = "
                                             "\"off\"; stale-project-min-age = \"1d\"; "
                                             "max-deletions-percent = 100; };",
                                             "test", &errs),
                         0);
        so.hygiene = hygiene_need(&cfg.defaults);
        assert_int_equal(inventory_new(&inv), 0);
        assert_int_equal(qwen_store.tree_from_dir(qwen, &tr), 0);
        assert_int_equal(inventory_add_tree(inv, &tr, NULL), 0);
        r = scan_all(inv, &so);
        if (r < 0)
                return r;
        assert_int_equal(policy_evaluate(inv, &cfg, now, &po, &v), 0);
        assert_int_equal(plan_build(inv, &v, now, &plan), 0);
        assert_int_equal(plan_new_steps(inv, now, &steps), 0);
        assert_true(recover_scan(steps) >= 0);
        assert_int_equal(plan_take_steps(plan, steps), 0);
        *ret_stats = (ActionStats){};
        return test_run_plan(plan, ret_stats);
}

/* crash_tree() of qwen, logs.json's mtime (the time of qgc's edit) left out. */
static char *stale_tree(const char *qwen) {
        char dir[256], cwd[128], hash[PROJECT_HASH_LEN + 1];
        _cleanup_free_ char *logs = NULL;

        stale_names(dir, sizeof dir, cwd, sizeof cwd);
        assert_int_equal(qwen_project_hash(cwd, hash), 0);
        logs = util_strprintf("tmp/%s/logs.json", hash);
        assert_int_equal(fixture_set_mtime(qwen, logs, 1), 0);
        return crash_tree(qwen);
}

/* The stale project entry of stale_plant() removed by runs killed after every step N (by_unlink:
 * after every unlinkat N instead, inside a step too), each then followed by a normal run: the tree
 * is the tree of an unkilled run (the entry gone, each session's usage line once, logs.json's rows
 * of the sessions gone and the other one kept), with no marker and no temporary file. */
static void stale_crash_every(T *t, const char *want, bool by_unlink) {
        char dir[256], cwd[128];
        ActionStats st = {};
        unsigned n;

        stale_names(dir, sizeof dir, cwd, sizeof cwd);
        for (n = 1; n < 200; n++) {
                _cleanup_free_ char *d = util_strprintf("stale%s%u", by_unlink ? "u" : "", n);
                _cleanup_free_ char *qwen = fixture_path(t->root, d);
                _cleanup_free_ char *got = NULL;
                int status = 0;
                pid_t pid;

                assert_int_equal(fixture_copy_tree(t->qwen, t->root, d), 0);
                pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                        ActionStats cst;
                        if (by_unlink)
                                faults.crash_after_unlink = n;
                        else
                                faults.crash_after = n;
                        _exit(stale_run(qwen, &cst) == 0 ? 0 : 1);
                }
                assert_int_equal(waitpid(pid, &status, 0), pid);
                assert_true(WIFEXITED(status));
                if (WEXITSTATUS(status) != 99) {
                        assert_int_equal(WEXITSTATUS(status), 0);
                        assert_int_equal(fixture_rm_rf(qwen), 0);
                        break;
                }
                if (stale_run(qwen, &st) != 0 || st.n_failed > 0)
                        fail_msg("stale %s, step %u: the rerun failed", d, n);
                got = stale_tree(qwen);
                if (!streq(got, want))
                        crash_tree_diff(d, n, got, want);
                crash_check_no_leftovers(qwen, d, n);
                assert_int_equal(fixture_rm_rf(qwen), 0);
        }
        assert_true(n > 5);
        assert_true(n < 200);
}

static void test_faults_stale_project_crash_after_every_step_then_rerun(void **state) {
        T *t = *state;
        _cleanup_free_ char *ref = fixture_path(t->root, "stale-ref"), *want = NULL;
        _cleanup_free_ char *logs = NULL, *got = NULL;
        char dir[256], cwd[128], hash[PROJECT_HASH_LEN + 1];
        ActionStats st = {};

        stale_names(dir, sizeof dir, cwd, sizeof cwd);
        (void)rmdir(cwd);
        stale_plant(t->qwen);
        assert_int_equal(fixture_copy_tree(t->qwen, t->root, "stale-ref"), 0);
        assert_int_equal(stale_run(ref, &st), 0);
        assert_int_equal(st.n_deleted, STALE_N);
        assert_false(fixture_exists(ref, dir));
        assert_int_equal(qwen_project_hash(cwd, hash), 0);
        logs = util_strprintf("tmp/%s/logs.json", hash);
        got = test_read_rel(ref, logs);
        assert_string_equal(got, "[\n  " CRASH_ROW(S_OTHER) "\n]");
        want = stale_tree(ref);
        stale_crash_every(t, want, /* by_unlink= */ false);
        stale_crash_every(t, want, /* by_unlink= */ true);
}

/* The marker of a stale project entry that could not be written whole (a write that stops half
 * way, a failed fsync) is not left behind: a later scan would take a partial file for the
 * durable mark with its cwds cut. The run after the fault writes it whole. */
static void stale_mark_fault(T *t, int write_err, int fsync_err) {
        char dir[256], cwd[128], rel[512];
        _cleanup_free_ char *want = NULL, *got = NULL, *tmp = NULL;
        ActionStats st = {};

        stale_names(dir, sizeof dir, cwd, sizeof cwd);
        (void)rmdir(cwd);
        stale_plant(t->qwen);
        snprintf(rel, sizeof rel, "%s/" HYGIENE_STALE_MARKER, dir);
        {
                _cleanup_free_ char *m = fixture_path(t->qwen, rel);
                assert_int_equal(unlink(m), 0);
        }
        snprintf(faults.file_fault_match, sizeof faults.file_fault_match, "%s",
                 HYGIENE_STALE_MARKER);
        faults.file_write_err = write_err;
        faults.file_fsync_err = fsync_err;
        (void)stale_run(t->qwen, &st);
        assert_int_equal(st.n_failed, 1);
        if (write_err)
                assert_true(faults.file_wrote_half);
        if (fixture_exists(t->qwen, rel)) {
                _cleanup_free_ char *left = test_read_rel(t->qwen, rel);
                fail_msg("a marker was left after a failed write: '%s'", left);
        }
        if (crash_find_temp(t->qwen, &tmp))
                fail_msg("temporary file '%s' left behind", tmp);
        faults = (Faults){};
        assert_int_equal(stale_run(t->qwen, &st), 0);
        assert_int_equal(st.n_failed, 0);
        want = util_strprintf("%s\n", cwd);
        got = test_read_rel(t->qwen, rel);
        assert_string_equal(got, want);
}

static void test_faults_stale_mark_write_fails(void **state) {
        stale_mark_fault(*state, ENOSPC, 0);
}

static void test_faults_stale_mark_fsync_fails(void **state) {
        stale_mark_fault(*state, 0, EIO);
}

/* The compressed content of (qwen, rel.zst) in the cold tier, checked (cold_cat()). */
static char *cold_read_rel(const char *qwen, const char *dir, const char *name) {
        _cleanup_free_ char *d = fixture_path(qwen, dir);
        _cleanup_close_ int dfd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int mfd = memfd_create("t", MFD_CLOEXEC);
        struct stat st;
        char *buf;

        assert_true(dfd >= 0 && mfd >= 0);
        if (cold_cat(dfd, name, mfd) < 0)
                return NULL;
        assert_int_equal(fstat(mfd, &st), 0);
        buf = calloc(1, (size_t)st.st_size + 1);
        assert_non_null(buf);
        assert_int_equal(pread(mfd, buf, (size_t)st.st_size, 0), st.st_size);
        return buf;
}

#define COLD_SCRATCH P_SCRATCH "/archive/" COLD_DIR
#define COLD_NOTES P_NOTES "/archive/" COLD_DIR

/* A run that compresses the archived S_ARCH (transcript and a .pr.json) and deletes the
 * compressed S_NOTES (transcript and a .ledger.jsonl, its usage salvaged from the decompressed
 * transcript), killed after every step and run again: S_ARCH ends compressed alone, each file
 * byte for byte with its mtime, S_NOTES gone with exactly the usage lines of an uninterrupted
 * run; a crash never leaves a transcript only in a file that does not verify; no temporary
 * file, no pending marker. */
static const ApplyPick cold_picks[] = { { S_ARCH, VERB_COMPRESS }, { S_NOTES, VERB_DELETE }, {} };

static void cold_run_plant(const char *qwen) {
        _cleanup_free_ char *a = fixture_path(qwen, P_NOTES "/archive");
        _cleanup_free_ char *cold = fixture_path(qwen, COLD_NOTES);
        _cleanup_free_ char *from = fixture_path(qwen, P_NOTES "/" S_NOTES ".jsonl");
        _cleanup_free_ char *to = fixture_path(qwen, P_NOTES "/archive/" S_NOTES ".jsonl");
        int afd, cfd;

        assert_int_equal(fixture_write(qwen, P_SCRATCH "/archive/" S_ARCH ".pr.json",
                                       "{\"prs\":[]}\n"),
                         0);
        assert_int_equal(fixture_write(qwen, P_NOTES "/archive/" S_NOTES ".ledger.jsonl", "l\n"),
                         0);
        assert_int_equal(rename(from, to), 0);
        assert_int_equal(mkdir(cold, 0700), 0);
        afd = open(a, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cfd = open(cold, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(afd >= 0 && cfd >= 0);
        assert_int_equal(cold_compress(afd, S_NOTES ".ledger.jsonl", cfd, 3, NULL, NULL, NULL,
                                       NULL),
                         0);
        assert_int_equal(cold_compress(afd, S_NOTES ".jsonl", cfd, 3, NULL, NULL, NULL, NULL), 0);
        close(afd);
        close(cfd);
}

static void test_faults_cold_compress_crash_after_every_step_then_rerun(void **state) {
        T *t = *state;
        _cleanup_free_ char *body = NULL, *pr = NULL, *ref = NULL;
        ActionStats st = {};
        long long mt;
        int lines_arch, lines_notes;
        unsigned n;

        cold_run_plant(t->qwen);
        body = test_read_rel(t->qwen, P_SCRATCH "/archive/" S_ARCH ".jsonl");
        pr = test_read_rel(t->qwen, P_SCRATCH "/archive/" S_ARCH ".pr.json");
        mt = mtime_ns_rel(t->qwen, P_SCRATCH "/archive/" S_ARCH ".jsonl");
        /* an uninterrupted run: the reference */
        ref = fixture_path(t->root, "ref");
        assert_int_equal(fixture_copy_tree(t->qwen, t->root, "ref"), 0);
        assert_int_equal(apply_execute(ref, cold_picks, &st), 0);
        assert_int_equal(st.n_compressed, 1);
        assert_int_equal(st.n_deleted, 1);
        lines_arch = apply_usage_lines(ref, S_ARCH);
        lines_notes = apply_usage_lines(ref, S_NOTES);
        assert_int_equal(lines_notes, 1); /* salvaged from the compressed transcript */
        assert_false(fixture_exists(ref, P_SCRATCH "/archive/" S_ARCH ".jsonl"));
        assert_int_equal(mtime_ns_rel(ref, COLD_SCRATCH "/" S_ARCH ".jsonl.zst"), mt);

        for (n = 1; n < 100; n++) {
                _cleanup_free_ char *dir = util_strprintf("crash%u", n);
                _cleanup_free_ char *qwen = fixture_path(t->root, dir);
                _cleanup_free_ char *got = NULL, *got_pr = NULL, *tmp = NULL;
                int status = 0;
                pid_t pid;

                assert_int_equal(fixture_copy_tree(t->qwen, t->root, dir), 0);
                pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                        faults.crash_after = n;
                        _exit(apply_execute(qwen, cold_picks, &st) == 0 ? 0 : 1);
                }
                assert_int_equal(waitpid(pid, &status, 0), pid);
                assert_true(WIFEXITED(status));
                if (WEXITSTATUS(status) != 99) {
                        assert_int_equal(WEXITSTATUS(status), 0);
                        assert_int_equal(fixture_rm_rf(qwen), 0);
                        break;
                }
                /* at the crash: the transcript is uncompressed, or its .zst verifies */
                if (!fixture_exists(qwen, P_SCRATCH "/archive/" S_ARCH ".jsonl")) {
                        got = cold_read_rel(qwen, COLD_SCRATCH, S_ARCH ".jsonl");
                        if (!got || !streq(got, body))
                                fail_msg("step %u: transcript gone before its .zst was complete",
                                         n);
                        free(got);
                        got = NULL;
                }
                if (!fixture_exists(qwen, COLD_NOTES "/" S_NOTES ".jsonl.zst") &&
                    apply_usage_lines(qwen, S_NOTES) != 1)
                        fail_msg("step %u: %s went before its usage line", n, S_NOTES);
                st = (ActionStats){};
                assert_true(apply_execute(qwen, cold_picks, &st) >= 0);
                assert_int_equal(st.n_failed, 0);

                if (fixture_exists(qwen, P_SCRATCH "/archive/" S_ARCH ".jsonl") ||
                    fixture_exists(qwen, P_SCRATCH "/archive/" S_ARCH ".pr.json"))
                        fail_msg("step %u: an original of %s left beside its .zst", n, S_ARCH);
                got = cold_read_rel(qwen, COLD_SCRATCH, S_ARCH ".jsonl");
                got_pr = cold_read_rel(qwen, COLD_SCRATCH, S_ARCH ".pr.json");
                if (!got || !got_pr || !streq(got, body) || !streq(got_pr, pr))
                        fail_msg("step %u: compressed content differs", n);
                if (mtime_ns_rel(qwen, COLD_SCRATCH "/" S_ARCH ".jsonl.zst") != mt)
                        fail_msg("step %u: compressed mtime differs", n);
                if (apply_usage_lines(qwen, S_ARCH) != lines_arch ||
                    apply_usage_lines(qwen, S_NOTES) != lines_notes)
                        fail_msg("step %u: usage lines differ from an uninterrupted run", n);
                if (fixture_exists(qwen, COLD_NOTES "/" S_NOTES ".jsonl.zst") ||
                    fixture_exists(qwen, COLD_NOTES "/" S_NOTES ".ledger.jsonl.zst"))
                        fail_msg("step %u: a file of the deleted %s left behind", n, S_NOTES);
                if (crash_find_temp(qwen, &tmp))
                        fail_msg("step %u: temporary file '%s' left behind", n, tmp);
                _cleanup_free_ char *pending = fixture_path(qwen, ".qgc/pending");
                DIR *pd = opendir(pending);
                struct dirent *de;
                while (pd && (de = readdir(pd)))
                        if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                                fail_msg("step %u: pending marker '%s' left behind", n,
                                         de->d_name);
                if (pd)
                        closedir(pd);
                assert_int_equal(fixture_rm_rf(qwen), 0);
        }
        assert_true(n > 5);
        assert_true(n < 100);
}

/* The scan lists a compressed session as archived in its compressed state, its ownership proven
 * from the decompressed first record, its age from the recorded mtime; its file-history/<id>/
 * is no orphan. A .zst that is not in qgc's format is unverified (never acted on), and its
 * file-history is no orphan either. */
static void test_faults_cold_scan_compressed_session(void **state) {
        T *t = *state;
        _cleanup_free_ char *a = fixture_path(t->qwen, P_NOTES "/archive");
        _cleanup_free_ char *cold = fixture_path(t->qwen, COLD_NOTES);
        _cleanup_free_ char *from = fixture_path(t->qwen, P_NOTES "/" S_FH ".jsonl");
        _cleanup_free_ char *to = fixture_path(t->qwen, P_NOTES "/archive/" S_FH ".jsonl");
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        long long mt = mtime_ns_rel(t->qwen, P_NOTES "/" S_FH ".jsonl");
        const Session *s;
        int afd, cfd;

        assert_int_equal(fixture_mkdir(t->qwen, P_NOTES "/archive"), 0);
        assert_int_equal(rename(from, to), 0);
        assert_int_equal(mkdir(cold, 0700), 0);
        afd = open(a, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cfd = open(cold, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(afd >= 0 && cfd >= 0);
        assert_int_equal(cold_compress(afd, S_FH ".jsonl", cfd, 3, NULL, NULL, NULL, NULL), 0);
        close(afd);
        close(cfd);
        assert_int_equal(fixture_write(t->qwen, COLD_NOTES "/" S_KILLED ".jsonl.zst", "junk"), 0);
        assert_int_equal(fixture_write(t->qwen, "file-history/" S_KILLED "/x", "x"), 0);
        assert_int_equal(apply_scan(t->qwen, &inv), 0);
        assert_non_null(s = inventory_find(inv, 0, S_FH));
        assert_int_equal(s->state, SESSION_ARCHIVED);
        assert_true(inventory_session_is_cold(s));
        assert_int_equal(s->owner, OWNER_OK);
        assert_int_equal(s->mtime, mt / 1000000);
        assert_true(s->cold_bytes > 0 && s->cold_bytes < s->cold_orig);
        /* the junk beside the active S_KILLED makes it a conflict: never touched */
        assert_non_null(s = inventory_find(inv, 0, S_KILLED));
        assert_int_equal(s->state, SESSION_CONFLICT);
        for (size_t i = 0; i < inv->n_orphans; i++)
                if (inv->orphans[i].name && (streq(inv->orphans[i].name, S_FH) ||
                                             streq(inv->orphans[i].name, S_KILLED)))
                        fail_msg("file-history of %s taken for an orphan", inv->orphans[i].name);
}

/* A tree without usage_record.jsonl (Qwen 0.12 to 0.15, or /stats never opened): the first
 * salvage writes the history Qwen would rebuild, in one step. A crash after any step, then a
 * rerun, ends with the very file an uninterrupted run writes, and no temporary file. */
static const ApplyPick nofile_picks[] = {
        { S_KILLED, VERB_DELETE }, { S_WEB, VERB_ARCHIVE }, { S_ARCH, VERB_DELETE }, {},
};

static void test_faults_crash_without_usage_file_then_rerun(void **state) {
        T *t = *state;
        _cleanup_free_ char *want = NULL;
        _cleanup_free_ char *ref = fixture_path(t->root, "ref");
        ActionStats st = {};
        unsigned n;

        assert_int_equal(fixture_copy_tree(t->qwen, t->root, "ref"), 0);
        assert_int_equal(unlinkat(AT_FDCWD, strprintf_tmp_usage(ref), 0), 0);
        assert_int_equal(apply_execute(ref, nofile_picks, &st), 0);
        want = test_read_rel(ref, "usage_record.jsonl");
        assert_int_equal(apply_usage_lines(ref, S_ARCH), 1); /* archived: not in the rebuild */
        assert_int_equal(apply_usage_lines(ref, S_KILLED), 1);
        assert_int_equal(apply_usage_lines(ref, S_WEB), 1);

        for (n = 1; n < 100; n++) {
                _cleanup_free_ char *dir = util_strprintf("nofile%u", n);
                _cleanup_free_ char *qwen = fixture_path(t->root, dir);
                _cleanup_free_ char *got = NULL;
                int status = 0;
                pid_t pid;

                assert_int_equal(fixture_copy_tree(t->qwen, t->root, dir), 0);
                assert_int_equal(unlinkat(AT_FDCWD, strprintf_tmp_usage(qwen), 0), 0);
                pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                        faults.crash_after = n;
                        _exit(apply_execute(qwen, nofile_picks, &st) == 0 ? 0 : 1);
                }
                assert_int_equal(waitpid(pid, &status, 0), pid);
                assert_true(WIFEXITED(status));
                if (WEXITSTATUS(status) != 99) {
                        assert_int_equal(WEXITSTATUS(status), 0);
                        break;
                }
                assert_true(apply_execute(qwen, nofile_picks, &st) >= 0);
                assert_int_equal(st.n_failed, 0);
                got = test_read_rel(qwen, "usage_record.jsonl");
                if (!streq(got, want))
                        fail_msg("step %u: usage_record.jsonl differs from an uninterrupted run", n);
                assert_false(fixture_exists(qwen, ".usage_record.jsonl.qgc-tmp"));
                assert_int_equal(fixture_rm_rf(qwen), 0);
        }
        assert_true(n > 3);
        assert_true(n < 100);
}

/* ---------------------------------------------------------------- a writer during the run */

static void test_faults_writer_appends_after_salvage_skip(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_KILLED, VERB_DELETE }, {} };
        ActionStats st = {};
        _cleanup_free_ char *path = fixture_path(t->qwen, P_NOTES "/" S_KILLED ".jsonl");
        _cleanup_free_ char *body = NULL;

        snprintf(faults.append_on_usage_fsync, sizeof faults.append_on_usage_fsync, "%s", path);
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_skipped, 1);
        assert_int_equal(st.n_deleted, 0);
        body = test_read_rel(t->qwen, P_NOTES "/" S_KILLED ".jsonl");
        assert_non_null(strstr(body, "written during the run"));
}

static void test_faults_writer_appends_during_archive_skip(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_TEXT, VERB_ARCHIVE }, {} };
        ActionStats st = {};
        _cleanup_free_ char *path = fixture_path(t->qwen, P_API "/" S_TEXT ".jsonl");
        _cleanup_free_ char *body = NULL;

        assert_int_equal(fixture_write(t->qwen, P_API "/" S_TEXT ".worktree.json", "{}\n"), 0);
        snprintf(faults.rename_trigger, sizeof faults.rename_trigger, "%s.worktree.json", S_TEXT);
        snprintf(faults.append_on_rename, sizeof faults.append_on_rename, "%s", path);
        assert_int_equal(apply_execute(t->qwen, picks, &st), 0);
        assert_int_equal(st.n_skipped, 1);
        assert_false(fixture_exists(t->qwen, P_API "/archive/" S_TEXT ".jsonl"));
        /* the live session keeps its worktree sidecar beside it */
        assert_true(fixture_exists(t->qwen, P_API "/" S_TEXT ".worktree.json"));
        assert_false(fixture_exists(t->qwen, P_API "/archive/" S_TEXT ".worktree.json"));
        body = test_read_rel(t->qwen, P_API "/" S_TEXT ".jsonl");
        assert_non_null(strstr(body, "written during the run"));
}

static unsigned count_marks(const char *root, const char *rel) {
        _cleanup_free_ char *buf = NULL;
        unsigned n = 0;

        if (fixture_read(root, rel, &buf, NULL) < 0)
                return 0;
        for (const char *p = buf; (p = strstr(p, "\"mark\":")); p++)
                n++;
        return n;
}

/* A daemon appends to the session's ledger while qgc merges it into an archived one: the merge
 * read the old content, so unlinking the source then would lose the new line. */
static void test_faults_ledger_append_during_merge_not_lost(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_TEXT, VERB_ARCHIVE }, {} };
        _cleanup_free_ char *path = fixture_path(t->qwen, P_API "/" S_TEXT ".ledger.jsonl");
        _cleanup_free_ char *a = NULL, *b = NULL;
        ActionStats st = {};

        assert_int_equal(fixture_write(t->qwen, P_API "/" S_TEXT ".ledger.jsonl", "new\n"), 0);
        assert_int_equal(fixture_write(t->qwen, P_API "/archive/" S_TEXT ".ledger.jsonl", "old\n"), 0);
        /* the merged ledger is installed by renaming this temp file over the archived one */
        snprintf(faults.rename_trigger, sizeof faults.rename_trigger, "." S_TEXT ".ledger.jsonl.qgc-tmp");
        snprintf(faults.append_on_rename, sizeof faults.append_on_rename, "%s", path);
        assert_true(apply_execute(t->qwen, picks, &st) >= 0);
        assert_int_equal(faults.append_on_rename[0], 0); /* the writer ran */
        if (fixture_exists(t->qwen, P_API "/" S_TEXT ".ledger.jsonl"))
                a = test_read_rel(t->qwen, P_API "/" S_TEXT ".ledger.jsonl");
        b = test_read_rel(t->qwen, P_API "/archive/" S_TEXT ".ledger.jsonl");
        if (!(a && strstr(a, "written during the run")) && !strstr(b, "written during the run"))
                fail_msg("the ledger line appended during the merge was lost");
        assert_non_null(strstr(b, "old\nnew\n"));
}


/* A TUI-like writer (open by path with O_CREAT, append, close) racing a real archive run:
 * every record it wrote is afterwards in the archived transcript or in a recreated active one.
 * The overlap is arranged, not hoped for: the writer writes its first 100 records before the
 * run, then meets the rename that archives the transcript (meet_writer): once the run is at that
 * rename it writes a record, goes on unsynchronized (records 101..398 land before or after the
 * rename, as the scheduler has it) and writes its last record after the rename, while the run
 * goes on; the counts read at the rename prove it. */
#define WRITER_RECORDS 400u
#define WRITER_BEFORE_RUN 100u

static void writer_record(const char *path, unsigned i, unsigned *written) {
        char rec[96];
        int len = snprintf(rec, sizeof rec, "{\"type\":\"user\",\"mark\":%u}\n", i);
        int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

        if (fd < 0 || __real_write(fd, rec, (size_t)len) != len)
                _exit(2);
        close(fd);
        __atomic_add_fetch(written, 1, __ATOMIC_SEQ_CST);
}

static void writer_wait(int go) {
        char c;

        if (read(go, &c, 1) != 1)
                _exit(3);
}

static void writer_says(int done) {
        if (__real_write(done, "", 1) != 1)
                _exit(4);
}

static void test_faults_concurrent_writer_never_loses_records(void **state) {
        T *t = *state;
        ApplyPick picks[] = { { S_FORK, VERB_ARCHIVE }, { S_TEXT, VERB_ARCHIVE }, {} };
        _cleanup_free_ char *path = fixture_path(t->qwen, P_API "/" S_FORK ".jsonl");
        int go[2], done[2], status;
        unsigned *written, active, archived;
        ActionStats st = {};
        char c;
        pid_t pid;

        written = mmap(NULL, sizeof *written, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        assert_true(written != MAP_FAILED);
        *written = 0;
        assert_int_equal(pipe(go), 0);
        assert_int_equal(pipe(done), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                unsigned i = 0;

                close(go[1]);
                close(done[0]);
                for (; i < WRITER_BEFORE_RUN; i++)
                        writer_record(path, i, written);
                writer_says(done[1]);
                writer_wait(go[0]); /* the archive is about to rename the transcript */
                writer_record(path, i++, written);
                writer_says(done[1]);
                for (; i < WRITER_RECORDS - 1; i++) /* on while the rename happens */
                        writer_record(path, i, written);
                writer_wait(go[0]); /* the transcript was renamed */
                writer_record(path, i, written);
                writer_says(done[1]);
                _exit(0);
        }
        close(go[0]);
        close(done[1]);
        assert_int_equal(read(done[0], &c, 1), 1); /* the records before the run are written */
        faults.meet_go = go[1];
        faults.meet_done = done[0];
        faults.meet_written = written;
        snprintf(faults.meet_on_rename, sizeof faults.meet_on_rename, "%s", S_FORK ".jsonl");
        for (int i = 0; i < 5; i++)
                assert_true(apply_execute(t->qwen, picks, &st) >= 0);
        if (faults.meet_on_rename[0]) {
                kill(pid, SIGKILL);
                fail_msg("the runs never renamed %s.jsonl: the writer and the archive did not overlap",
                         S_FORK);
        }
        close(go[1]);
        close(done[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        assert_int_equal(*written, WRITER_RECORDS);
        /* the overlap: records written during the run before the rename, the last one after it */
        assert_in_range(faults.meet_before, WRITER_BEFORE_RUN + 1, WRITER_RECORDS - 1);
        assert_in_range(faults.meet_after, faults.meet_before, WRITER_RECORDS - 1);
        active = count_marks(t->qwen, P_API "/" S_FORK ".jsonl");
        archived = count_marks(t->qwen, P_API "/archive/" S_FORK ".jsonl");
        print_message("concurrent writer: %u records, %u written when the rename began, %u when it "
                      "ended; %u active, %u archived\n", *written, faults.meet_before,
                      faults.meet_after, active, archived);
        assert_int_equal(active + archived, WRITER_RECORDS);
        assert_int_equal(munmap(written, sizeof *written), 0);
        /* the other session, not written to, was archived */
        assert_true(fixture_exists(t->qwen, P_API "/archive/" S_TEXT ".jsonl"));
}

/* ---------------------------------------------------------------- journal */

static const char *sent_field(const char *key) {
        static char val[4096];
        _cleanup_free_ char *k = util_strprintf("\n%s=", key);
        const char *p;

        /* the buffer starts with the first field: look for "\nKEY=" after a leading '\n' */
        _cleanup_free_ char *all = util_strprintf("\n%s", faults.sent.buf ? faults.sent.buf : "");
        p = strstr(all, k);
        if (!p)
                return NULL;
        p += strlen(k);
        size_t n = strcspn(p, "\n");
        snprintf(val, sizeof val, "%.*s", (int)n, p);
        return val;
}

/* ---------------------------------------------------------------- listing errors */

static Inventory *scan_with_jobs(const char *qwen, unsigned jobs) {
        Inventory *inv = NULL;
        Tree t = {};
        ScanOptions so = { .now = util_now_msec(), .jobs = jobs };

        assert_int_equal(inventory_new(&inv), 0);
        assert_int_equal(qwen_store.tree_from_dir(qwen, &t), 0);
        assert_int_equal(inventory_add_tree(inv, &t, NULL), 0);
        assert_true(scan_all(inv, &so) >= 0);
        return inv;
}

static size_t count_project(const Inventory *inv, const char *project_dir) {
        size_t n = 0;
        for (size_t i = 0; i < inv->n_sessions; i++)
                n += streq(inv->sessions[i].project_dir, project_dir);
        return n;
}

/* A chats/ that cannot be listed (EIO): that project is skipped, the rest is scanned, and the
 * tree is incomplete, so no orphan is decided (a planted orphan file-history stays unjudged) and
 * the tree caps do nothing, whatever --jobs. */
static void test_faults_listing_eio_skips_project_and_orphans(void **state) {
        T *t = *state;

        assert_int_equal(fixture_write_size(t->qwen, "file-history/00000000-0000-4000-8000-00000000dead/x@v1", 10),
                         0);
        for (unsigned jobs = 1; jobs <= 4; jobs += 3) {
                _cleanup_(inventory_freep) Inventory *inv = NULL;
                _cleanup_(policy_verdicts_freep) Verdicts *v = NULL;
                Config cfg = {};
                PolicyOptions po = {};

                faults.getdents_err = EIO;
                snprintf(faults.getdents_match, sizeof faults.getdents_match, "%s",
                         "/projects/-srv-demo-webapp/chats");
                inv = scan_with_jobs(t->qwen, jobs);
                faults.getdents_err = 0;
                assert_true(inv->trees[0].incomplete);
                assert_int_equal(count_project(inv, "-srv-demo-webapp"), 0);
                assert_true(count_project(inv, "-srv-demo-api-server") > 0);
                assert_int_equal(inv->n_orphans, 0);
                /* a free-space floor no filesystem meets would delete: not on an incomplete tree */
                assert_int_equal(config_init_default(&cfg), 0);
                cfg.tree.keep_free = (SizeSpec){ .is_set = true, .is_percent = true, .percent = 100 };
                assert_int_equal(policy_evaluate(inv, &cfg, util_now_msec(), &po, &v), 0);
                for (size_t i = 0; i < v->n_sessions; i++) {
                        _cleanup_free_ char *why = reason_verdict(&v->sessions[i],
                                                                  &inv->sessions[i], &qwen_store);
                        assert_non_null(why);
                        assert_null(strstr(why, "keep-free"));
                }
                config_done(&cfg);
        }
        /* without the fault: the project is back and the orphan is found */
        _cleanup_(inventory_freep) Inventory *ok = scan_with_jobs(t->qwen, 2);
        assert_false(ok->trees[0].incomplete);
        assert_true(count_project(ok, "-srv-demo-webapp") > 0);
        assert_true(ok->n_orphans >= 1);
}

/* A project removed during the scan (ENOENT from getdents64): skipped quietly, the tree stays
 * complete. */
static void test_faults_listing_enoent_is_vanished(void **state) {
        T *t = *state;
        _cleanup_(inventory_freep) Inventory *inv = NULL;

        faults.getdents_err = ENOENT;
        snprintf(faults.getdents_match, sizeof faults.getdents_match, "%s",
                 "/projects/-srv-demo-api-server");
        inv = scan_with_jobs(t->qwen, 2);
        faults.getdents_err = 0;
        assert_false(inv->trees[0].incomplete);
        assert_int_equal(count_project(inv, "-srv-demo-api-server"), 0);
        assert_true(count_project(inv, "-srv-demo-webapp") > 0);
}

/* A subagents/<id>/ that cannot be listed may hide a recent write: that session counts as in
 * use, and the directory is no orphan candidate. */
static void test_faults_subagents_unlisted_means_in_use(void **state) {
        T *t = *state;
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        const Session *s;

        faults.getdents_err = EIO;
        snprintf(faults.getdents_match, sizeof faults.getdents_match, "%s",
                 "/subagents/dd3dc65a-7d32-4843-a56c-9eef3a13391d");
        inv = scan_with_jobs(t->qwen, 1);
        faults.getdents_err = 0;
        s = inventory_find(inv, 0, "dd3dc65a-7d32-4843-a56c-9eef3a13391d");
        assert_non_null(s);
        assert_true(s->live & LIVE_UNKNOWN);
        assert_non_null(s->live_reason);
}

static void test_journal_sendv_carries_fields(void **state) {
        JournalEntry e = {
                .event = JOURNAL_FAILED,
                .message = "failed delete of session x",
                .session = S_TEXT,
                .project = "/srv/demo/api-server",
                .path = "/q/projects/p/chats/x.jsonl",
                .rule = "max-age",
                .reason = "cannot salvage",
                .bytes = 1234,
                .has_bytes = true,
                .user = "alice",
                .error = ENOSPC,
                .fields = (const JournalField[]){ JOURNAL_FIELD_U64("QGC_EXTRA", 1),
                                                  JOURNAL_FIELD_STR("QGC_NOTE", "a b=c"),
                                                  JOURNAL_FIELD_STR("QGC_UNSET", NULL) },
                .n_fields = 3,
        };
        (void)state;
        faults.fake_journal_socket = true;
        assert_int_equal(journal_open(JOURNAL_TARGET_AUTO, NULL, "00112233445566778899aabbccddeeff"), 0);
        assert_int_equal(journal_get_target(), JOURNAL_TARGET_JOURNAL);
        assert_int_equal(journal_log(&e), 0);
        assert_int_equal(faults.n_sent, 1);
        assert_string_equal(sent_field("MESSAGE"), "failed delete of session x");
        assert_string_equal(sent_field("MESSAGE_ID"), journal_event_message_id(JOURNAL_FAILED));
        assert_string_equal(sent_field("PRIORITY"), "3");
        assert_string_equal(sent_field("QGC_ACTION"), "failed");
        assert_string_equal(sent_field("QGC_SESSION"), S_TEXT);
        assert_string_equal(sent_field("QGC_PROJECT"), "/srv/demo/api-server");
        assert_string_equal(sent_field("QGC_PATH"), "/q/projects/p/chats/x.jsonl");
        assert_string_equal(sent_field("QGC_RULE"), "max-age");
        assert_string_equal(sent_field("QGC_REASON"), "cannot salvage");
        assert_string_equal(sent_field("QGC_BYTES"), "1234");
        assert_string_equal(sent_field("QGC_USER"), "alice");
        assert_string_equal(sent_field("QGC_RUN"), "00112233445566778899aabbccddeeff");
        assert_string_equal(sent_field("ERRNO"), "28");
        assert_string_equal(sent_field("QGC_EXTRA"), "1");
        assert_string_equal(sent_field("QGC_NOTE"), "a b=c"); /* as it is: no quoting */
        assert_null(sent_field("QGC_UNSET"));
        assert_null(sent_field("CODE_FILE")); /* SD_JOURNAL_SUPPRESS_LOCATION */
        journal_close();
}

/* More fields than one entry takes, or a name journald refuses: an error, and nothing sent. */
static void test_journal_sendv_refuses_bad_fields(void **state) {
        JournalField f[40];
        JournalEntry e = { .event = JOURNAL_RUN_SUMMARY, .fields = f, .n_fields = ELEMENTSOF(f) };
        unsigned n;

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(f); i++)
                f[i] = (JournalField)JOURNAL_FIELD_U64("QGC_N", i);
        faults.fake_journal_socket = true;
        assert_int_equal(journal_open(JOURNAL_TARGET_JOURNAL, NULL, NULL), 0);
        n = faults.n_sent;
        assert_int_equal(journal_log(&e), -E2BIG);
        f[0] = (JournalField)JOURNAL_FIELD_STR("qgc_lower", "x");
        e.n_fields = 1;
        assert_int_equal(journal_log(&e), -EINVAL);
        assert_int_equal(faults.n_sent, n);
        e.n_fields = 0;
        assert_int_equal(journal_log(&e), 0);
        assert_int_equal(faults.n_sent, n + 1);
        journal_close();
}

static void test_journal_sendv_omits_unset_fields(void **state) {
        JournalEntry e = { .event = JOURNAL_ARCHIVED, .session = S_TEXT };
        (void)state;
        faults.fake_journal_socket = true;
        assert_int_equal(journal_open(JOURNAL_TARGET_JOURNAL, NULL, NULL), 0);
        assert_int_equal(journal_log(&e), 0);
        assert_string_equal(sent_field("PRIORITY"), "6");
        assert_string_equal(sent_field("MESSAGE"), "archived");
        assert_null(sent_field("ERRNO"));
        assert_null(sent_field("QGC_BYTES"));
        assert_null(sent_field("QGC_RUN"));
        assert_null(sent_field("QGC_USER"));
        journal_close();
}

static void test_journal_without_socket_falls_back(void **state) {
        (void)state;
        faults.fake_journal_socket = false;
        if (access("/run/systemd/journal/socket", F_OK) == 0) {
                /* a real journal is here: AUTO must pick it */
                assert_int_equal(journal_open(JOURNAL_TARGET_AUTO, NULL, NULL), 0);
                assert_int_equal(journal_get_target(), JOURNAL_TARGET_JOURNAL);
                journal_close();
                return;
        }
        assert_int_equal(journal_open(JOURNAL_TARGET_JOURNAL, NULL, NULL), -ENOENT);
        assert_int_equal(journal_open(JOURNAL_TARGET_AUTO, NULL, NULL), 0);
        assert_int_equal(journal_get_target(), JOURNAL_TARGET_STDERR);
        journal_close();
}

static void test_journal_format_line_quotes_and_escapes(void **state) {
        JournalEntry e = {
                .event = JOURNAL_SKIPPED,
                .message = "skipped \"x\"\nnext\\line",
                .session = "abc",
                .reason = "changed since scan",
                .path = "a=b",
                .rule = "",
        };
        _cleanup_free_ char *l = journal_format_line(&e, "r1");
        (void)state;
        assert_non_null(l);
        assert_string_equal(l, "MESSAGE=\"skipped \\\"x\\\"\\nnext\\\\line\" "
                               "MESSAGE_ID=20de1acb35f14aed9e6f19b5cbf0871e PRIORITY=6 "
                               "SYSLOG_IDENTIFIER=qgc QGC_ACTION=skipped QGC_SESSION=abc "
                               "QGC_PATH=\"a=b\" QGC_RULE=\"\" QGC_REASON=\"changed since scan\" "
                               "QGC_RUN=r1");
        assert_null(strchr(l, '\n'));
}

static void test_journal_file_target_appends_lines(void **state) {
        T *t = *state;
        _cleanup_free_ char *log = fixture_path(t->root, "other.log");
        _cleanup_free_ char *body = NULL;
        JournalEntry e = { .event = JOURNAL_DELETED, .session = "s1", .bytes = 0, .has_bytes = true };

        assert_int_equal(fixture_write(t->root, "other.log", "earlier\n"), 0);
        assert_int_equal(journal_open(JOURNAL_TARGET_FILE, log, "0123456789abcdef0123456789abcdef"), 0);
        assert_int_equal(journal_log(&e), 0);
        e.session = "s2";
        assert_int_equal(journal_log(&e), 0);
        journal_close();
        body = test_read_rel(t->root, "other.log");
        assert_non_null(strstr(body, "earlier\nMESSAGE=deleted "));
        assert_non_null(strstr(body, "QGC_SESSION=s1 QGC_BYTES=0 QGC_RUN=0123456789abcdef0123456789abcdef\n"));
        assert_non_null(strstr(body, "QGC_SESSION=s2 "));
        assert_int_equal(journal_open(JOURNAL_TARGET_FILE, NULL, NULL), -EINVAL);
}

/* qgc runs as root: a --log-file in a directory a user can write (/tmp) must not let that user
 * point root's appends at another file through a symlink, or hang the run with a FIFO. */
static void test_journal_file_target_refuses_symlink_and_fifo(void **state) {
        T *t = *state;
        _cleanup_free_ char *victim = fixture_path(t->root, "victim.conf");
        _cleanup_free_ char *link = fixture_path(t->root, "qgc.log");
        _cleanup_free_ char *fifo = fixture_path(t->root, "fifo.log");
        _cleanup_free_ char *body = NULL;

        assert_int_equal(fixture_write(t->root, "victim.conf", "root:x:0:0\n"), 0);
        assert_int_equal(fixture_symlink(t->root, "qgc.log", victim), 0);
        assert_int_equal(journal_open(JOURNAL_TARGET_FILE, link, NULL), -ELOOP);
        JournalEntry e = { .event = JOURNAL_DELETED, .session = "s1" };
        (void)journal_log(&e);
        journal_close();
        body = test_read_rel(t->root, "victim.conf");
        assert_string_equal(body, "root:x:0:0\n");

        assert_int_equal(fixture_mkfifo(t->root, "fifo.log"), 0);
        alarm(10); /* an open that blocks on the FIFO fails the test instead of hanging it */
        assert_true(journal_open(JOURNAL_TARGET_FILE, fifo, NULL) < 0); /* ENXIO or EBADFD */
        alarm(0);
        journal_close();
}

static void test_journal_ids_distinct_and_in_catalog(void **state) {
        const char *src = getenv("QGC_SRCDIR");
        _cleanup_free_ char *dir = util_strprintf("%s/systemd", src ? src : ".");
        _cleanup_free_ char *cat = NULL;
        (void)state;

        assert_int_equal(fixture_read(dir, "qgc.catalog", &cat, NULL), 0);
        for (int i = 0; i < _JOURNAL_EVENT_MAX; i++) {
                const char *id = journal_event_message_id((JournalEvent)i);
                _cleanup_free_ char *hdr = util_strprintf("\n-- %s\n", id);
                assert_non_null(id);
                assert_int_equal(strlen(id), 32);
                if (!strstr(cat, hdr))
                        fail_msg("MESSAGE_ID %s (%s) not in qgc.catalog", id,
                                 journal_event_to_string((JournalEvent)i));
                for (int j = 0; j < i; j++)
                        assert_string_not_equal(id, journal_event_message_id((JournalEvent)j));
        }
        assert_null(journal_event_message_id(_JOURNAL_EVENT_MAX));
}

static void test_journal_target_from_string_table(void **state) {
        (void)state;
        assert_int_equal(journal_target_from_string("auto"), JOURNAL_TARGET_AUTO);
        assert_int_equal(journal_target_from_string("journal"), JOURNAL_TARGET_JOURNAL);
        assert_int_equal(journal_target_from_string("stderr"), JOURNAL_TARGET_STDERR);
        assert_int_equal(journal_target_from_string("file"), JOURNAL_TARGET_FILE);
        assert_int_equal(journal_target_from_string("syslog"), _JOURNAL_TARGET_INVALID);
        assert_int_equal(journal_target_from_string(""), _JOURNAL_TARGET_INVALID);
        assert_int_equal(journal_target_from_string(NULL), _JOURNAL_TARGET_INVALID);
}

static void test_journal_new_run_id_is_random_hex(void **state) {
        char a[33], b[33];
        (void)state;
        assert_int_equal(journal_new_run_id(a), 0);
        assert_int_equal(journal_new_run_id(b), 0);
        assert_int_equal(strlen(a), 32);
        assert_int_equal(strspn(a, "0123456789abcdef"), 32);
        assert_string_not_equal(a, b);
}

int main(void) {
        if (getenv("FLT")) cmocka_set_test_filter(getenv("FLT"));
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_faults_archive_usage_fsync_overlaps_moves, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_usage_audit_catches_a_missing_fsync, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_usage_audit_catches_a_preexisting_line, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_usage_preexisting_line_fsynced_first, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_usage_preexisting_fsync_eio_keeps_sessions, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_batch_journal_one_write, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_batch_window_closes_on_a_slow_clock, setup, teardown),
                cmocka_unit_test(test_faults_batch_of_archives_is_larger),
                cmocka_unit_test_setup_teardown(test_faults_crash_after_every_step_overlap_then_rerun, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_usage_write_enospc_keeps_session, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_usage_write_eio_keeps_archive_candidate, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_usage_fsync_eio_keeps_session, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_usage_short_write_undone_keeps_session, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_usage_short_write_error_undone_keeps_session, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_usage_append_after_partial_line_readable, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_usage_short_write_undo_keeps_racing_qwen_line, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_crash_without_usage_file_then_rerun, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_rename_eio_then_rerun_completes, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_sidecar_rename_eio_leaves_transcript, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_unlink_eio_keeps_transcript_and_one_usage_line, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_secondary_unlink_eio_reported, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fs_rename_noreplace_fallback_never_replaces, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_faults_interrupted_link_move_completes, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fs_rm_rf_at_mount_appearing_is_not_emptied, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_faults_crash_after_every_step_then_rerun, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_crash_after_every_step_batches_then_rerun, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_crash_shared_file_batch_then_rerun, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_group_commit_fsyncs_per_batch, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_fsync_audit_whole_batch, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_no_test_environment, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_executor_probe_once_per_tree, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_faults_fsync_audit_catches_a_missing_fsync, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_faults_batch_shared_usage_line_failure_keeps_both, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_archive_without_sidecars_one_rename, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_cold_restore_crash_after_every_step_then_rerun, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_cold_restore_is_one_batch, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_restore_project_crash_after_every_step_then_rerun, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_restore_cold_to_chats_crash_after_every_step_then_rerun, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_restore_crash_after_every_step_then_recovery, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_stale_project_crash_after_every_step_then_rerun, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_stale_mark_write_fails, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_stale_mark_fsync_fails, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_cold_compress_crash_after_every_step_then_rerun, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_cold_scan_compressed_session, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_writer_appends_after_salvage_skip, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_writer_appends_during_archive_skip, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_ledger_append_during_merge_not_lost, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_faults_concurrent_writer_never_loses_records, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_listing_eio_skips_project_and_orphans, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_faults_listing_enoent_is_vanished, setup, teardown),
                cmocka_unit_test_setup_teardown(test_faults_subagents_unlisted_means_in_use, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_journal_sendv_carries_fields, setup, teardown),
                cmocka_unit_test_setup_teardown(test_journal_sendv_omits_unset_fields, setup, teardown),
                cmocka_unit_test_setup_teardown(test_journal_without_socket_falls_back, setup, teardown),
                cmocka_unit_test(test_journal_format_line_quotes_and_escapes),
                cmocka_unit_test(test_journal_sendv_refuses_bad_fields),
                cmocka_unit_test_setup_teardown(test_journal_file_target_appends_lines, setup, teardown),
                cmocka_unit_test_setup_teardown(test_journal_file_target_refuses_symlink_and_fifo, setup,
                                                teardown),
                cmocka_unit_test(test_journal_ids_distinct_and_in_catalog),
                cmocka_unit_test(test_journal_target_from_string_table),
                cmocka_unit_test(test_journal_new_run_id_is_random_hex),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
