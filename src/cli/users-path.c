/* users-path.c: the safe-path check of root mode (users_path_check()): a walk from / down
 * a user's tree, one component at a time, that proves nobody but root and the user could have
 * planted or redirected any part of it. users.c runs it on every home before it forks. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "users-path.h"
#include "util.h"

#define USERS_SYMLINK_MAX 40

int users_path_reason(char **ret, int r, const char *fmt, ...) {
        va_list ap;
        char *s = NULL;

        if (!ret)
                return r;
        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                s = NULL;
        va_end(ap);
        free(*ret);
        *ret = s;
        return r;
}

/* An intermediate component (directory or symlink) nobody but root or uid can change. */
static int users_check_component(const struct stat *st, uid_t uid, const char *path,
                                 char **ret_reason) {
        if (st->st_uid != 0 && st->st_uid != uid)
                return users_path_reason(ret_reason, -EPERM,
                                    "'%s' is owned by uid %u, not by root or uid %u", path,
                                    (unsigned)st->st_uid, (unsigned)uid);
        if (S_ISDIR(st->st_mode) && (st->st_mode & (S_IWGRP | S_IWOTH)) &&
            !(st->st_mode & S_ISVTX))
                return users_path_reason(ret_reason, -EPERM, "'%s' is %s-writable", path,
                                    (st->st_mode & S_IWOTH) ? "world" : "group");
        return 0;
}

/* A walk from / down a path, one component at a time, never trusting a lookup by path. */
typedef struct PathWalk {
        StrBuf canon;     /* symlink-free path of fd, "" for / */
        int fd;           /* O_PATH fd of the directory reached so far */
        char *rest;       /* the part of the path still to resolve, from off */
        size_t off;
        unsigned n_links;
        uid_t uid;
} PathWalk;

static void users_walk_done(PathWalk *w) {
        strbuf_done(&w->canon);
        w->fd = macro_safe_close(w->fd);
        free(w->rest);
        w->rest = NULL;
}

/* Go back to /, as for an absolute symlink target. */
static int users_walk_restart(PathWalk *w) {
        int nfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

        if (nfd < 0)
                return -errno;
        macro_safe_close(w->fd);
        w->fd = nfd;
        w->canon.len = 0;
        return strbuf_append(&w->canon, "", 0);
}

/* Drop the last component of canon (for ".."), reopening its directory. */
static int users_walk_up(PathWalk *w) {
        char *slash;
        int nfd;

        if (w->canon.len > 0) {
                slash = strrchr(w->canon.buf, '/');
                w->canon.len = slash ? (size_t)(slash - w->canon.buf) : 0;
                w->canon.buf[w->canon.len] = '\0';
        }
        nfd = open(w->canon.len > 0 ? w->canon.buf : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (nfd < 0)
                return -errno;
        macro_safe_close(w->fd);
        w->fd = nfd;
        return 0;
}

/* Component `name` is a symlink (already checked): splice its target in front of the rest. */
static int users_walk_link(PathWalk *w, const char *name, const char *cur, char **ret_reason) {
        char target[PATH_MAX];
        char *n;
        ssize_t len;

        if (++w->n_links > USERS_SYMLINK_MAX)
                return users_path_reason(ret_reason, -ELOOP, "too many symlinks at '%s'", cur);
        len = readlinkat(w->fd, name, target, sizeof(target) - 1);
        if (len < 0)
                return users_path_reason(ret_reason, -errno, "cannot read symlink '%s': %m", cur);
        target[len] = '\0';
        n = util_strprintf("%s/%s", target, w->rest + w->off);
        if (!n)
                return -ENOMEM;
        free(w->rest);
        w->rest = n;
        w->off = 0;
        return target[0] == '/' ? users_walk_restart(w) : 0;
}

/* Component `name` is a directory (already checked): step into it, making sure it is the one
 * that was checked. */
static int users_walk_into(PathWalk *w, const char *name, const struct stat *st, const char *cur,
                           char **ret_reason) {
        struct stat st2;
        int nfd;

        nfd = openat(w->fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (nfd < 0)
                return users_path_reason(ret_reason, -errno, "cannot open '%s': %m", cur);
        macro_safe_close(w->fd);
        w->fd = nfd;
        if (fstat(w->fd, &st2) < 0)
                return -errno;
        if (st2.st_dev != st->st_dev || st2.st_ino != st->st_ino)
                return users_path_reason(ret_reason, -EAGAIN, "'%s' changed while it was checked", cur);
        return strbuf_printf(&w->canon, "/%s", name);
}

/* Resolve the next component of the walk. 1 when one was taken, 0 at the end, or -errno. */
static int users_walk_step(PathWalk *w, char **ret_reason) {
        _cleanup_free_ char *name = NULL, *cur = NULL;
        struct stat st;
        size_t len;
        int r;

        while (w->rest[w->off] == '/')
                w->off++;
        if (w->rest[w->off] == '\0')
                return 0;
        len = strcspn(w->rest + w->off, "/");
        name = strndup(w->rest + w->off, len);
        if (!name)
                return -ENOMEM;
        w->off += len;
        if (streq(name, "."))
                return 1;
        if (streq(name, "..")) {
                r = users_walk_up(w);
                return r < 0 ? users_path_reason(ret_reason, r, "cannot walk up to '%s'",
                                            w->canon.len > 0 ? w->canon.buf : "/")
                             : 1;
        }
        cur = util_strprintf("%s/%s", w->canon.buf, name);
        if (!cur)
                return -ENOMEM;
        if (fstatat(w->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return users_path_reason(ret_reason, -errno, "cannot stat '%s': %m", cur);
        r = users_check_component(&st, w->uid, cur, ret_reason);
        if (r < 0)
                return r;
        if (S_ISLNK(st.st_mode))
                r = users_walk_link(w, name, cur, ret_reason);
        else if (S_ISDIR(st.st_mode))
                r = users_walk_into(w, name, &st, cur, ret_reason);
        else
                r = users_path_reason(ret_reason, -ENOTDIR, "'%s' is not a directory", cur);
        return r < 0 ? r : 1;
}

int users_path_check(const char *path, uid_t uid, char **ret_canonical, char **ret_reason) {
        _cleanup_(users_walk_done) PathWalk w = { .fd = -EBADF, .uid = uid };
        struct stat st;
        int r;

        if (!path || path[0] != '/')
                return users_path_reason(ret_reason, -EINVAL, "'%s' is not an absolute path",
                                    path ? path : "(null)");
        w.rest = strdup(path);
        if (!w.rest)
                return -ENOMEM;
        r = users_walk_restart(&w);
        if (r < 0)
                return users_path_reason(ret_reason, r, "cannot open '/'");
        if (fstat(w.fd, &st) < 0)
                return -errno;
        r = users_check_component(&st, uid, "/", ret_reason);
        if (r < 0)
                return r;
        while ((r = users_walk_step(&w, ret_reason)) > 0)
                ;
        if (r < 0)
                return r;

        /* the tree itself: the user's, and writable by nobody else */
        if (fstat(w.fd, &st) < 0)
                return -errno;
        if (w.canon.len == 0 && strbuf_append(&w.canon, "/", 1) < 0)
                return -ENOMEM;
        if (st.st_uid != uid)
                return users_path_reason(ret_reason, -EPERM, "'%s' is owned by uid %u, not by uid %u",
                                    w.canon.buf, (unsigned)st.st_uid, (unsigned)uid);
        if (st.st_mode & (S_IWGRP | S_IWOTH))
                return users_path_reason(ret_reason, -EPERM, "'%s' is %s-writable", w.canon.buf,
                                    (st.st_mode & S_IWOTH) ? "world" : "group");
        if (ret_canonical) {
                *ret_canonical = strbuf_steal(&w.canon);
                if (!*ret_canonical)
                        return -ENOMEM;
        }
        return 0;
}
