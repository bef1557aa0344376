/* archive.c: move a session between chats/ and chats/archive/ the way Qwen's
 * SessionService.archiveSessions()/unarchiveSessions() do, by rename, with its sidecar rules.
 *
 * Order and crash states (each step is atomic; a rerun of the same move completes it):
 *   1. pre-flight checks, nothing changed;
 *   2. <id>.worktree.json renamed (never replaces);
 *   3. <id>.pr.json renamed, or merged into the target (temp + rename) then the source unlinked;
 *   4. <id>.ledger.jsonl renamed, or merged likewise (a rerun sees the merged content and only
 *      unlinks the source, so lines are never appended twice); a merged source is unlinked only
 *      if it is still what was read (else -ESTALE: a writer appended, nothing is lost);
 *   5. the transcript renamed (never replaces), after a last identity check;
 *   6. both directories fsynced (archive_move_nosync(): by the caller, once for a batch).
 * Until step 5 the session is where it was, with some sidecars already at the target: Qwen's
 * delete removes sidecars in both places, and the next run moves the rest. When a step fails
 * (or the transcript changed meanwhile), the plainly renamed sidecars are renamed back. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "archive.h"
#include "fs.h"
#include "js.h"
#include "json.h"
#include "macro.h"
#include "util.h"

static void json_putp(json_object **o) {
        if (*o)
                json_object_put(*o);
}

/* Append the PR entries of document s (n bytes, read as Qwen's JSON.parse reads it) to arr (new
 * references). */
static int archive_pr_collect(const char *s, size_t n, json_object *arr) {
        _cleanup_(json_putp) json_object *doc = NULL;
        json_object *prs, *num;
        int r;

        r = json_parse(s, n, &doc);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || !json_object_is_type(doc, json_type_object))
                return -EBADMSG;
        if (json_object_object_get_ex(doc, "prs", &prs)) {
                if (!json_object_is_type(prs, json_type_array))
                        return -EBADMSG;
                for (size_t i = 0; i < json_object_array_length(prs); i++) {
                        json_object *e = json_object_array_get_idx(prs, i);
                        if (!json_object_is_type(e, json_type_object) ||
                            !json_object_object_get_ex(e, "number", &num) ||
                            !json_object_is_type(num, json_type_int))
                                return -EBADMSG;
                        if (json_object_array_add(arr, json_object_get(e)) < 0)
                                return -ENOMEM;
                }
                return 0;
        }
        /* the earlier single-binding shape */
        if (!json_object_object_get_ex(doc, "number", &num) || !json_object_is_type(num, json_type_int))
                return -EBADMSG;
        return json_object_array_add(arr, json_object_get(doc)) < 0 ? -ENOMEM : 0;
}

static const char *archive_pr_created(json_object *e) {
        json_object *c;

        if (json_object_object_get_ex(e, "createdAt", &c) && json_object_is_type(c, json_type_string))
                return json_object_get_string(c);
        return "";
}

static int archive_pr_cmp(const void *a, const void *b) {
        json_object *const *x = a, *const *y = b;
        return strcmp(archive_pr_created(*x), archive_pr_created(*y));
}

/* Merge two .pr.json documents ({"prs": [...]} or a single {number, url, createdAt}) by PR
 * number, the fresher createdAt winning (incoming on ties), ordered by createdAt, capped.
 * Returns the new document as JSON.stringify(doc, null, 2) writes it, with a '\n' (malloc'ed),
 * or -EBADMSG. */
static int archive_merge_pr(const char *base, size_t base_len, const char *incoming,
                            size_t incoming_len, char **ret) {
        _cleanup_(json_putp) json_object *all = json_object_new_array();
        _cleanup_(json_putp) json_object *out = json_object_new_object();
        _cleanup_free_ json_object **keep = NULL;
        size_t n, n_keep = 0;
        json_object *list;
        int r;

        if (!all || !out)
                return -ENOMEM;
        r = archive_pr_collect(base, base_len, all);
        if (r < 0)
                return r;
        r = archive_pr_collect(incoming, incoming_len, all);
        if (r < 0)
                return r;

        /* by number, the fresher createdAt wins; a later (incoming) entry wins ties */
        n = json_object_array_length(all);
        keep = calloc(n ? n : 1, sizeof(json_object *));
        if (!keep)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(all, i), *num;
                size_t j;

                json_object_object_get_ex(e, "number", &num);
                for (j = 0; j < n_keep; j++) {
                        json_object *kn;
                        json_object_object_get_ex(keep[j], "number", &kn);
                        if (json_object_get_int64(kn) == json_object_get_int64(num))
                                break;
                }
                if (j == n_keep)
                        keep[n_keep++] = e;
                else if (strcmp(archive_pr_created(e), archive_pr_created(keep[j])) >= 0)
                        keep[j] = e;
        }
        /* stable order by createdAt: insertion sort keeps equal keys in first-seen order */
        for (size_t i = 1; i < n_keep; i++)
                for (size_t j = i; j > 0 && archive_pr_cmp(&keep[j - 1], &keep[j]) > 0; j--) {
                        json_object *t = keep[j];
                        keep[j] = keep[j - 1];
                        keep[j - 1] = t;
                }

        list = json_object_new_array();
        if (!list)
                return -ENOMEM;
        json_object_object_add(out, "prs", list);
        for (size_t i = n_keep > ARCHIVE_PR_LIST_LIMIT ? n_keep - ARCHIVE_PR_LIST_LIMIT : 0; i < n_keep;
             i++)
                if (json_object_array_add(list, json_object_get(keep[i])) < 0)
                        return -ENOMEM;

        _cleanup_(strbuf_done) StrBuf b = {};
        if (js_stringify_indent(&b, out, 2) < 0 || strbuf_append(&b, "\n", 1) < 0)
                return -ENOMEM;
        *ret = strbuf_steal(&b);
        return 0;
}

/* Append s (n bytes) to b, adding a sealing '\n' when it lacks one. */
static int archive_append_sealed(StrBuf *b, const char *s, size_t n) {
        int r;

        if (n == 0)
                return 0;
        r = strbuf_append(b, s, n);
        if (r >= 0 && s[n - 1] != '\n')
                r = strbuf_append(b, "\n", 1);
        return r;
}

/* The ledger merge. Archiving appends: sealed(dst) + sealed(src); restoring puts the older
 * archived lines first: sealed(src) + sealed(dst) ("sealed": ends in '\n'). Returns 1 and
 * sets *ret when a write is needed, 0 when dst already holds src where the merge puts it (an
 * interrupted earlier merge: never append twice), -ENOMEM. */
static int archive_merge_ledger(const char *dst, size_t dst_len, const char *src, size_t src_len,
                                bool append, char **ret, size_t *ret_len) {
        StrBuf sealed = {}, b = {};
        int r;

        r = archive_append_sealed(&sealed, src, src_len);
        if (r < 0)
                return r;
        if (sealed.len == 0 ||
            (sealed.len <= dst_len &&
             memcmp(append ? dst + dst_len - sealed.len : dst, sealed.buf, sealed.len) == 0)) {
                strbuf_done(&sealed);
                return 0; /* nothing to add, or merged before an interruption */
        }
        if (append) {
                r = archive_append_sealed(&b, dst, dst_len);
                if (r >= 0)
                        r = strbuf_append(&b, sealed.buf, sealed.len);
        } else {
                r = strbuf_append(&b, sealed.buf, sealed.len);
                if (r >= 0)
                        r = archive_append_sealed(&b, dst, dst_len);
        }
        strbuf_done(&sealed);
        if (r < 0) {
                strbuf_done(&b);
                return r;
        }
        *ret_len = b.len;
        *ret = strbuf_steal(&b);
        return 1;
}

static void archive_step(ArchiveStepFn step, void *userdata, const char *what) {
        if (step)
                step(userdata, what);
}

/* Move sidecar name from src_fd to dst_fd; when the target exists, merge with merge_fn. */
static int archive_move_mergeable(int src_fd, int dst_fd, const char *name, bool is_pr,
                                  bool to_archive, ArchiveStepFn step, void *userdata,
                                  bool *ret_renamed) {
        _cleanup_free_ char *s = NULL, *d = NULL, *merged = NULL;
        size_t s_len = 0, d_len = 0, m_len = 0;
        FileId read_id;
        struct stat st;
        int r;

        r = fs_rename_noreplace(src_fd, name, dst_fd, name);
        if (r == -ENOENT)
                return 0; /* no such sidecar */
        if (r >= 0) {
                *ret_renamed = true;
                archive_step(step, userdata, name);
                return 0;
        }
        if (r != -EEXIST)
                return r;

        /* a writer may append to the source while it is merged: note what was read */
        if (fstatat(src_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        fs_fileid_from_stat(&read_id, &st);
        r = fs_read_file(src_fd, name, ARCHIVE_SIDECAR_MAX, &s, &s_len);
        if (r < 0)
                return r;
        if ((uint64_t)s_len != read_id.size)
                return -ESTALE;
        r = fs_read_file(dst_fd, name, ARCHIVE_SIDECAR_MAX, &d, &d_len);
        if (r < 0)
                return r;
        if (is_pr) {
                r = archive_merge_pr(d, d_len, s, s_len, &merged);
                if (r < 0)
                        return r;
                m_len = strlen(merged);
                r = streq(merged, d) ? 0 : 1;
        } else
                r = archive_merge_ledger(d, d_len, s, s_len, to_archive, &merged, &m_len);
        if (r < 0)
                return r;
        if (r > 0) {
                r = fs_write_atomic(dst_fd, name, merged, m_len, 0600);
                if (r < 0)
                        return r;
                archive_step(step, userdata, name);
        }
        /* only the content that was merged may go (else the next run merges the rest) */
        r = fs_check_identity(src_fd, name, &read_id);
        if (r <= 0)
                return r < 0 ? r : -ESTALE;
        r = fs_unlink(src_fd, name, 0);
        if (r < 0 && r != -ENOENT)
                return r;
        archive_step(step, userdata, name);
        return 0;
}

/* Do both directories hold name, as two different files? Two names of one inode are a move
 * interrupted between link and unlink (fs_rename_noreplace() without RENAME_NOREPLACE), which
 * the move completes. */
static bool archive_both_exist(int src_fd, int dst_fd, const char *name) {
        struct stat a, b;

        if (fstatat(src_fd, name, &a, AT_SYMLINK_NOFOLLOW) < 0 ||
            fstatat(dst_fd, name, &b, AT_SYMLINK_NOFOLLOW) < 0)
                return false;
        return a.st_dev != b.st_dev || a.st_ino != b.st_ino;
}

const char archive_why_conflict[] = "target transcript exists (conflict)";

/* Everything that would make the move fail, checked before anything changes. */
static int archive_preflight(int src_fd, int dst_fd, const char *id, const FileId *expect,
                             const char **ret_why) {
        _cleanup_free_ char *t = util_strprintf("%s.jsonl", id);
        _cleanup_free_ char *w = util_strprintf("%s.worktree.json", id);
        _cleanup_free_ char *p = util_strprintf("%s.pr.json", id);
        int r;

        if (!t || !w || !p)
                return -ENOMEM;
        if (expect) {
                r = fs_check_identity(src_fd, t, expect);
                if (r < 0)
                        return r;
                if (r == 0) {
                        *ret_why = "changed since scan";
                        return -ESTALE;
                }
        } else {
                r = fs_exists(src_fd, t);
                if (r <= 0)
                        return r < 0 ? r : -ENOENT;
        }
        r = fs_exists(dst_fd, t);
        if (r != 0) {
                *ret_why = archive_why_conflict;
                return r < 0 ? r : -EEXIST;
        }
        if (archive_both_exist(src_fd, dst_fd, w)) {
                *ret_why = "both copies of the .worktree.json sidecar exist";
                return -EEXIST;
        }
        if (fs_exists(src_fd, p) > 0 && fs_exists(dst_fd, p) > 0) {
                _cleanup_free_ char *a = NULL, *b = NULL, *m = NULL;
                size_t na, nb;
                if (fs_read_file(src_fd, p, ARCHIVE_SIDECAR_MAX, &a, &na) < 0 ||
                    fs_read_file(dst_fd, p, ARCHIVE_SIDECAR_MAX, &b, &nb) < 0 ||
                    archive_merge_pr(b, nb, a, na, &m) < 0) {
                        *ret_why = "cannot merge the .pr.json sidecars";
                        return -EBADMSG;
                }
        }
        return 0;
}

static int archive_move_full(int src_fd, int dst_fd, const char *id, const FileId *expect,
                             bool to_archive, bool sync, ArchiveStepFn step, void *userdata,
                             const char **ret_why) {
        _cleanup_free_ char *t = util_strprintf("%s.jsonl", id);
        _cleanup_free_ char *w = util_strprintf("%s.worktree.json", id);
        _cleanup_free_ char *p = util_strprintf("%s.pr.json", id);
        _cleanup_free_ char *l = util_strprintf("%s.ledger.jsonl", id);
        const char *why = NULL;
        const char *names[3] = { w, p, l };
        bool renamed[3] = {};
        int r;

        if (!t || !w || !p || !l)
                return -ENOMEM;
        if (!ret_why)
                ret_why = &why;

        r = archive_preflight(src_fd, dst_fd, id, expect, ret_why);
        if (r < 0)
                return r;

        r = fs_rename_noreplace(src_fd, w, dst_fd, w);
        if (r >= 0) {
                renamed[0] = true;
                archive_step(step, userdata, w);
        } else if (r != -ENOENT) {
                *ret_why = "cannot move the .worktree.json sidecar";
                return r;
        }
        r = archive_move_mergeable(src_fd, dst_fd, p, /* is_pr= */ true, to_archive, step, userdata,
                                   &renamed[1]);
        if (r < 0) {
                *ret_why = "cannot move the .pr.json sidecar";
                goto rollback;
        }
        r = archive_move_mergeable(src_fd, dst_fd, l, /* is_pr= */ false, to_archive, step,
                                   userdata, &renamed[2]);
        if (r < 0) {
                *ret_why = "cannot move the .ledger.jsonl sidecar";
                goto rollback;
        }

        if (expect) {
                r = fs_check_identity(src_fd, t, expect);
                if (r == 0) {
                        *ret_why = "changed since scan";
                        r = -ESTALE;
                }
                if (r < 0)
                        goto rollback;
        }
        r = fs_rename_noreplace(src_fd, t, dst_fd, t);
        if (r < 0) {
                *ret_why = r == -EEXIST ? archive_why_conflict
                                        : "cannot rename the transcript";
                goto rollback;
        }
        archive_step(step, userdata, t);
        if (!sync)
                return 0;

        r = fs_fsync(dst_fd);
        if (r >= 0)
                r = fs_fsync(src_fd);
        if (r < 0)
                *ret_why = "moved, but fsync of the directories failed";
        return r;

rollback:
        /* The transcript stays: put back the sidecars that were plainly renamed, so a session
         * left in place keeps them beside it. Merged ones stay merged (the merge is idempotent
         * and the next move finds them there). */
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (renamed[i] && fs_rename_noreplace(dst_fd, names[i], src_fd, names[i]) >= 0)
                        archive_step(step, userdata, names[i]);
        return r;
}

int archive_move(int src_fd, int dst_fd, const char *id, const FileId *expect, bool to_archive,
                 ArchiveStepFn step, void *userdata, const char **ret_why) {
        return archive_move_full(src_fd, dst_fd, id, expect, to_archive, /* sync= */ true, step,
                                 userdata, ret_why);
}

int archive_move_bare_nosync(int src_fd, int dst_fd, const char *id, const FileId *expect,
                             ArchiveStepFn step, void *userdata, const char **ret_why) {
        _cleanup_free_ char *t = util_strprintf("%s.jsonl", id);
        int r;

        if (!t)
                return -ENOMEM;
        /* steps 2-4 have nothing to move, so the pre-flight checks are step 5's own: the last
         * identity check, then a rename that never replaces (in archive_preflight()'s order) */
        r = fs_check_identity(src_fd, t, expect);
        if (r == 0) {
                *ret_why = "changed since scan";
                return -ESTALE;
        }
        if (r < 0)
                return r;
        r = fs_rename_noreplace(src_fd, t, dst_fd, t);
        if (r < 0) {
                *ret_why = r == -EEXIST ? archive_why_conflict
                                        : "cannot rename the transcript";
                return r;
        }
        archive_step(step, userdata, t);
        return 0;
}

int archive_move_nosync(int src_fd, int dst_fd, const char *id, const FileId *expect,
                        bool to_archive, ArchiveStepFn step, void *userdata,
                        const char **ret_why) {
        return archive_move_full(src_fd, dst_fd, id, expect, to_archive, /* sync= */ false, step,
                                 userdata, ret_why);
}
