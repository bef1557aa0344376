/* cold-step.c: the executor's compress step (cold-step.h): which files of a session go into the
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

#include "cold-step.h"
#include "fs.h"
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

int cold_step_begin(ColdCtx *ctx, int archive_fd, int cold_fd, const char *id,
                    const FileId *transcript, ColdStepFn step, void *userdata, ColdStep *st,
                    const char **ret_why) {
        static const char *const exts[COLD_STEP_FILES] = { "worktree.json", "pr.json",
                                                           "ledger.jsonl", "jsonl" };

        for (size_t i = 0; i < COLD_STEP_FILES; i++) {
                bool is_transcript = i + 1 == COLD_STEP_FILES, resolve = false;
                _cleanup_free_ char *n = util_strprintf("%s.%s", id, exts[i]);
                _cleanup_free_ char *z = n ? util_strprintf("%s" COLD_SUFFIX, n) : NULL;
                ColdResult res = {};
                struct stat sb;
                int r;

                if (!z) {
                        *ret_why = "out of memory";
                        return -ENOMEM;
                }
                if (!is_transcript && (fstatat(archive_fd, n, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
                                       !S_ISREG(sb.st_mode)))
                        continue; /* no such sidecar (or it went after it was compressed) */
                r = cold_ctx_compress(ctx, archive_fd, n, cold_fd,
                                      is_transcript ? transcript : NULL, COLD_BATCH, step,
                                      userdata, &res);
                if (r == -EEXIST) {
                        /* a run cut short after this .zst got its name: the original goes at
                         * the end if it has exactly the recorded content (cold_resolve()) */
                        uint64_t size = 0;
                        char sha[65];

                        r = is_transcript ? fs_check_identity(archive_fd, n, transcript) : 1;
                        if (r == 0)
                                r = -ESTALE;
                        if (r > 0)
                                r = cold_info(cold_fd, n, &size, sha);
                        if (r >= 0 && fstatat(cold_fd, z, &sb, AT_SYMLINK_NOFOLLOW) < 0)
                                r = -errno;
                        if (r >= 0)
                                res = (ColdResult){ .bytes_in = size,
                                                    .bytes_out = (uint64_t)sb.st_size };
                        resolve = true;
                }
                if (r < 0) {
                        *ret_why = r == -ESTALE    ? "changed since scan"
                                   : r == -EBADMSG ? "the compressed file did not verify"
                                                   : "cannot compress";
                        return r;
                }
                st->names[st->n] = TAKE_PTR(n);
                st->orig[st->n] = res.original;
                st->resolve[st->n++] = resolve;
                st->bytes_in += res.bytes_in;
                st->bytes_out += res.bytes_out;
        }
        return 0;
}

int cold_step_commit(int cold_fd, ColdStep *st, ColdStepFn step, void *userdata,
                     const char **ret_why) {
        for (size_t i = 0; i < st->n; i++) {
                int r;

                if (st->resolve[i])
                        continue;
                r = cold_batch_commit(cold_fd, st->names[i], step, userdata);
                if (r < 0) {
                        *ret_why = r == -EEXIST ? "a compressed copy appeared (conflict)"
                                                : "cannot name the compressed file";
                        return r;
                }
        }
        return 0;
}

int cold_step_end(int archive_fd, int cold_fd, ColdStep *st, ColdStepFn step, void *userdata,
                  const char **ret_why) {
        for (size_t i = 0; i < st->n; i++) {
                int r = st->resolve[i]
                                ? cold_resolve(archive_fd, st->names[i], cold_fd, step, userdata)
                                : cold_remove_original(archive_fd, st->names[i], cold_fd,
                                                       &st->orig[i], step, userdata);
                if (r == -ENOENT && st->resolve[i])
                        r = 0; /* the original went meanwhile: the .zst is the file */
                if (r < 0) {
                        *ret_why = r == -ESTALE && st->resolve[i]
                                           ? "a compressed copy with other content exists "
                                             "(conflict)"
                                   : r == -ESTALE ? "changed since scan"
                                                  : "compressed, but cannot remove the original";
                        return r == -ESTALE && st->resolve[i] ? -EEXIST : r;
                }
        }
        return 0;
}

int cold_step_memfd(int cold_fd, const char *id) {
        _cleanup_free_ char *n = util_strprintf("%s.jsonl", id);
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
