/* show.c: `qgc show ID` (show.h): finds the session's transcript, in the inventory (active,
 * archived, compressed: where its store names it), else in the cold tier of any project
 * (chats/archive/.qgc-cold/<id>.jsonl.zst the scan did not list), and copies it to stdout through the safe-filesystem layer; on a
 * terminal through the one cleaner (text.h), a bounded chunk at a time. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cold.h"
#include "fs.h"
#include "macro.h"
#include "show.h"
#include "store.h"
#include "text.h"
#include "utf8.h"
#include "util.h"

static int show_copy_fd(int fd, int out_fd) {
        char buf[64 * 1024];
        off_t off = 0;

        for (;;) {
                ssize_t k = fs_pread_full(fd, buf, sizeof buf, off);
                if (k <= 0)
                        return (int)k;
                int r = util_write_all(out_fd, buf, (size_t)k);
                if (r < 0)
                        return r;
                off += k;
        }
}

/* The inventory's copy of s in tree tr, where its store keeps it (a .zst decompressed). */
static int show_copy(const Tree *tr, const Session *s, int out_fd) {
        _cleanup_free_ char *rel = tr->store && tr->store->session_path
                                           ? tr->store->session_path(s, s->state == SESSION_ARCHIVED)
                                           : NULL;
        _cleanup_close_ int dir = -EBADF, fd = -EBADF;
        FsRoot root = FS_ROOT_NULL;
        char *name;
        size_t n;
        int r;

        if (!tr->store || !tr->store->session_path)
                return -ENOENT;
        if (!rel)
                return -ENOMEM;
        name = strrchr(rel, '/'); /* a store's path has a directory: projects/<dir>/... */
        if (!name)
                return -EINVAL;
        *name++ = '\0';
        r = fs_root_open(tr->runtime_dir, tr->dev, &root);
        if (r < 0)
                return r;
        dir = fs_open_path(root.fd, rel, tr->dev);
        fs_root_done(&root);
        if (dir < 0)
                return dir;
        n = strlen(name);
        if (n > strlen(COLD_SUFFIX) && streq(name + n - strlen(COLD_SUFFIX), COLD_SUFFIX)) {
                name[n - strlen(COLD_SUFFIX)] = '\0';
                return cold_cat(dir, name, out_fd);
        }
        fd = fs_openat(dir, name, O_RDONLY | O_NONBLOCK, 0);
        if (fd < 0)
                return fd;
        return show_copy_fd(fd, out_fd);
}

/* The cold tier's copy of id in any project of tree tr: -ENOENT when none. */
static int show_cold(const Tree *tr, const char *id, int out_fd) {
        _cleanup_free_ char *name = util_strprintf("%s.jsonl", id);
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        _cleanup_close_ int pfd = -EBADF;
        FsRoot root = FS_ROOT_NULL;
        const char *p;
        unsigned char type;
        struct stat sb;
        int r;

        if (!name || !d)
                return -ENOMEM;
        r = fs_root_open(tr->runtime_dir, tr->dev, &root);
        if (r < 0)
                return r;
        /* listed with O_NOATIME where permitted, like the scan: showing changes no atime */
        pfd = fs_open_noatime(root.fd, "projects", O_RDONLY | O_DIRECTORY);
        if (pfd >= 0 && (fstat(pfd, &sb) < 0 || sb.st_dev != tr->dev)) {
                macro_safe_close(pfd);
                pfd = -EXDEV;
        }
        if (pfd < 0) {
                fs_root_done(&root);
                return pfd;
        }
        fs_dir_init(d, pfd);
        r = -ENOENT;
        while (r == -ENOENT && fs_dir_next(d, &p, &type) > 0) {
                _cleanup_free_ char *rel = util_strprintf("projects/%s/chats/archive/" COLD_DIR, p);
                _cleanup_close_ int cfd = -EBADF;

                if (!rel) {
                        r = -ENOMEM;
                        break;
                }
                cfd = fs_open_path(root.fd, rel, tr->dev);
                if (cfd < 0)
                        continue; /* no cold tier in that project */
                r = cold_cat(cfd, name, out_fd);
        }
        fs_root_done(&root);
        return r;
}

int show_session(const Inventory *inv, const char *id, int out_fd) {
        int r = -ENOENT;

        if (!id || !*id || strchr(id, '/') || streq(id, ".") || streq(id, ".."))
                return -EINVAL;
        for (size_t t = 0; t < inv->n_trees; t++) {
                const Session *s = inventory_find(inv, t, id);

                if (!s)
                        continue;
                /* a compressed one where its store names its .zst, else below */
                r = show_copy(&inv->trees[t], s, out_fd);
                if (r != -ENOENT || !inventory_session_is_cold(s))
                        return r;
        }
        r = -ENOENT;
        for (size_t t = 0; r == -ENOENT && t < inv->n_trees; t++)
                r = show_cold(&inv->trees[t], id, out_fd);
        return r;
}

/* The bytes at the end of s (n) that begin a character the chunk cuts: a lead byte whose
 * sequence does not decode from what is there yet (at most 3 bytes). */
static size_t show_cut_tail(const char *s, size_t n) {
        for (size_t back = 1; back <= 3 && back <= n; back++) {
                unsigned char c = (unsigned char)s[n - back];
                uint32_t cp;

                if (c < 0x80)
                        return 0;
                if (c >= 0xc0)
                        return utf8_decode(s + n - back, back, &cp) == 0 ? back : 0;
        }
        return 0;
}

int show_session_terminal(const Inventory *inv, const char *id, FILE *out) {
        _cleanup_fclose_ FILE *tmp = NULL;
        _cleanup_free_ char *buf = NULL;
        size_t have = 0;
        off_t off = 0;
        int r;

        tmp = tmpfile();
        if (!tmp)
                return -errno;
        r = show_session(inv, id, fileno(tmp));
        if (r < 0)
                return r;
        buf = malloc(SHOW_TERMINAL_CHUNK);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t k = fs_pread_full(fileno(tmp), buf + have, SHOW_TERMINAL_CHUNK - have, off);
                size_t n, cut;

                if (k < 0)
                        return (int)k;
                off += k;
                n = have + (size_t)k;
                /* a character the chunk cuts goes with the next one: the cleaner would take its
                 * halves for two invalid sequences (at the end, what is left is cleaned as is) */
                cut = k > 0 ? show_cut_tail(buf, n) : 0;
                r = text_fputs_terminal(buf, n - cut, out);
                if (r < 0 || k == 0)
                        return r;
                memmove(buf, buf + n - cut, cut);
                have = cut;
        }
}
