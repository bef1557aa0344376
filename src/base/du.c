/* du.c: the walk du does (du.h). */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "du.h"
#include "fs.h"
#include "hashmap.h"
#include "macro.h"

#define DU_DEPTH_MAX 64
#define DU_PATH_MAX 8192

/* A hard-linked inode seen (nlink > 1; file-history forks link their backups): counted once, as
 * du does. */
typedef struct DuInode {
        dev_t dev;
        ino_t ino;
} DuInode;

typedef struct DuWalk {
        DuFn fn;
        void *userdata;
        Hashmap inodes; /* of DuInode */
        dev_t dev;
        dev_t skip_dev; /* the other root, when it lies inside this one: measured on its own */
        ino_t skip_ino;
        bool incomplete;
        char path[DU_PATH_MAX];
} DuWalk;

static bool du_inode_eq(const void *entry, const void *key) {
        const DuInode *a = entry, *b = key;

        return a->dev == b->dev && a->ino == b->ino;
}

/* Seen before? (else remembered; without memory, counted again: a larger total, never a crash) */
static bool du_inode_seen(DuWalk *w, const struct stat *st) {
        DuInode key = { .dev = st->st_dev, .ino = st->st_ino }, *e;
        uint64_t h = hashmap_hash_bytes(&key, sizeof(key));
        HashSlot *slot;

        if (hashmap_reserve(&w->inodes, 1) < 0)
                return false;
        slot = hashmap_slot(&w->inodes, h, du_inode_eq, &key);
        if (slot->entry)
                return true;
        e = malloc(sizeof(DuInode));
        if (!e)
                return false;
        *e = key;
        hashmap_fill(&w->inodes, slot, h, e);
        return false;
}

static int du_count(DuWalk *w, const struct stat *st) {
        if (st->st_nlink > 1 && !S_ISDIR(st->st_mode) && du_inode_seen(w, st))
                return 0;
        return w->fn(w->userdata, w->path, st);
}

/* Walk directory dfd, whose path relative to the root is w->path[0..len). */
static int du_walk_dir(DuWalk *w, int dfd, size_t len, unsigned depth) {
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        const char *name;
        unsigned char type;
        int k, r;

        if (!d)
                return -ENOMEM;
        if (depth > DU_DEPTH_MAX) {
                w->incomplete = true;
                return 0;
        }
        fs_dir_init(d, dfd);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                size_t nl = strlen(name), l2 = len + (len > 0) + nl;
                _cleanup_close_ int sub = -EBADF;
                struct stat st;
                bool mount = false;

                if (l2 + 1 > sizeof(w->path)) {
                        w->incomplete = true;
                        continue;
                }
                if (len > 0)
                        w->path[len] = '/';
                memcpy(w->path + len + (len > 0), name, nl + 1);
                if (fs_statat(dfd, name, &st, &mount) < 0)
                        continue; /* vanished */
                if (st.st_dev != w->dev || mount) {
                        w->incomplete = true; /* du would count what is mounted there */
                        continue;
                }
                if (S_ISDIR(st.st_mode) && st.st_dev == w->skip_dev && st.st_ino == w->skip_ino)
                        continue;
                r = du_count(w, &st);
                if (r < 0)
                        return r;
                if (!S_ISDIR(st.st_mode))
                        continue;
                sub = fs_open_noatime(dfd, name, O_RDONLY | O_DIRECTORY);
                if (sub < 0) {
                        w->incomplete = true;
                        continue;
                }
                r = du_walk_dir(w, sub, l2, depth + 1);
                if (r < 0)
                        return r;
        }
        if (k < 0) {
                if (k == -ENOMEM)
                        return k;
                w->incomplete = true;
        }
        return 0;
}

int du_walk(const char *path, const struct stat *skip, DuFn fn, void *userdata,
            bool *ret_incomplete) {
        _cleanup_close_ int rfd = fs_open_root(path, 0), fd = -EBADF;
        DuWalk *w;
        struct stat st;
        int r;

        if (rfd < 0)
                return rfd;
        /* listed with O_NOATIME where permitted, as the scan lists: status changes no atime */
        fd = fs_open_noatime(rfd, ".", O_RDONLY | O_DIRECTORY);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        w = calloc(1, sizeof(DuWalk));
        if (!w)
                return -ENOMEM;
        *w = (DuWalk){ .fn = fn, .userdata = userdata, .dev = st.st_dev };
        if (skip) {
                w->skip_dev = skip->st_dev;
                w->skip_ino = skip->st_ino;
        }
        r = du_count(w, &st);
        if (r >= 0)
                r = du_walk_dir(w, fd, 0, 0);
        if (w->incomplete)
                *ret_incomplete = true;
        hashmap_done(&w->inodes, free);
        free(w);
        return r;
}
