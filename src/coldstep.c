/* coldstep.c: the executor's compress step (coldstep.h): which files of a session go into the
 * cold tier, in which order, and how a rerun after a crash finishes a compression. The format
 * and the checks of one file are cold.c's. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coldstep.h"
#include "fsutil.h"
#include "macro.h"
#include "sha256.h"
#include "util.h"

void cold_step_done(ColdStep *st) {
        for (size_t i = 0; i < st->n; i++)
                free(st->names[i]);
        *st = (ColdStep){};
}

int cold_step_open_dir(int archive_fd, bool *ret_created, ColdStepFn step, void *userdata) {
        int r;

        *ret_created = false;
        r = fs_mkdirat(archive_fd, COLD_DIR, 0700);
        if (r >= 0) {
                *ret_created = true;
                if (step)
                        step(userdata, COLD_DIR "/");
        } else if (r != -EEXIST)
                return r;
        return fs_open_dir(archive_fd, COLD_DIR);
}

static bool cold_step_id_equal(const FileId *a, const FileId *b) {
        return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
               a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

/* Has (dir_fd, name) exactly the content recorded in (cold_fd, name.zst)? 1, 0, -errno; its
 * identity into *ret_id. */
static int cold_step_same(int dir_fd, const char *name, int cold_fd, FileId *ret_id) {
        _cleanup_close_ int fd = fs_openat(dir_fd, name, O_RDONLY | O_NONBLOCK, 0);
        char want[65], got[65], buf[64 * 1024];
        uint64_t want_size = 0, size = 0;
        struct stat st;
        Sha256 *h;
        ssize_t k;
        int r;

        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return 0;
        fs_fileid_from_stat(ret_id, &st);
        r = cold_info(cold_fd, name, &want_size, want);
        if (r == -EBADMSG)
                return 0;
        if (r < 0)
                return r;
        if (want_size != (uint64_t)st.st_size)
                return 0;
        h = sha256_new();
        if (!h)
                return -ENOMEM;
        while ((k = read(fd, buf, sizeof buf)) > 0) {
                size += (uint64_t)k;
                r = sha256_update(h, buf, (size_t)k);
                if (r < 0) {
                        sha256_free(h);
                        return r;
                }
        }
        if (k < 0) {
                r = -errno;
                sha256_free(h);
                return r;
        }
        r = sha256_final(h, got);
        if (r < 0)
                return r;
        return size == want_size && streq(got, want);
}

int cold_step_begin(int archive_fd, int cold_fd, const char *id, const FileId *transcript,
                    int level, ColdStepFn step, void *userdata, ColdStep *st,
                    const char **ret_why) {
        static const char *const exts[COLD_STEP_FILES] = { "worktree.json", "pr.json",
                                                           "ledger.jsonl", "jsonl" };

        for (size_t i = 0; i < COLD_STEP_FILES; i++) {
                bool is_transcript = i + 1 == COLD_STEP_FILES;
                _cleanup_free_ char *n = strprintf("%s.%s", id, exts[i]);
                _cleanup_free_ char *z = n ? strprintf("%s" COLD_SUFFIX, n) : NULL;
                ColdResult res = {};
                FileId orig = {};
                struct stat sb;
                int r;

                if (!z) {
                        *ret_why = "out of memory";
                        return -ENOMEM;
                }
                if (!is_transcript && (fstatat(archive_fd, n, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
                                       !S_ISREG(sb.st_mode))) {
                        /* no such sidecar; or its original went after it was compressed by a
                         * run that was cut short (the .zst stays, nothing to do) */
                        continue;
                }
                r = cold_compress_begin(archive_fd, n, cold_fd, level,
                                        is_transcript ? transcript : NULL, step, userdata, &res,
                                        &orig);
                if (r == -EEXIST) {
                        /* a run cut short after this .zst was in place: the same content? */
                        r = cold_step_same(archive_fd, n, cold_fd, &orig);
                        if (r == 0) {
                                *ret_why = "a compressed copy with other content exists "
                                           "(conflict)";
                                return -EEXIST;
                        }
                        if (r > 0 && is_transcript && !cold_step_id_equal(&orig, transcript))
                                r = -ESTALE;
                        if (r > 0) {
                                (void)fstatat(cold_fd, z, &sb, AT_SYMLINK_NOFOLLOW);
                                res = (ColdResult){ .bytes_in = orig.size,
                                                    .bytes_out = (uint64_t)sb.st_size };
                        }
                }
                if (r < 0) {
                        *ret_why = r == -ESTALE    ? "changed since scan"
                                   : r == -EBADMSG ? "the compressed file did not verify"
                                                   : "cannot compress";
                        return r;
                }
                st->names[st->n] = TAKE_PTR(n);
                st->orig[st->n++] = orig;
                st->bytes_in += res.bytes_in;
                st->bytes_out += res.bytes_out;
        }
        return 0;
}

int cold_step_end(int archive_fd, int cold_fd, ColdStep *st, ColdStepFn step, void *userdata,
                  const char **ret_why) {
        for (size_t i = 0; i < st->n; i++) {
                int r = cold_compress_end(archive_fd, st->names[i], cold_fd, &st->orig[i], step,
                                          userdata);
                if (r < 0) {
                        *ret_why = r == -ESTALE ? "changed since scan"
                                                : "compressed, but cannot remove the original";
                        return r;
                }
        }
        return 0;
}

int cold_step_memfd(int cold_fd, const char *id) {
        _cleanup_free_ char *n = strprintf("%s.jsonl", id);
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (!n)
                return -ENOMEM;
        fd = memfd_create("qgc-cold", MFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = cold_cat(cold_fd, n, fd);
        if (r < 0)
                return r;
        return TAKE_FD(fd);
}
