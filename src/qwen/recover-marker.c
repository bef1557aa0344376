/* recover-marker.c: the pending-delete marker of recover.c's design (see there): its text and
 * parse, the proof that it names only files a delete of its session removes
 * (recover_file_allowed()), its durable write (one marker, or a batch's markers in one file) and
 * its removal. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "claims.h"
#include "cold.h"
#include "erase.h"
#include "fs.h"
#include "hashmap.h"
#include "macro.h"
#include "recover-marker.h"
#include "util.h"

#define RECOVER_MARKER_MAGIC "qgc-pending-delete 1"

/* The files and names of one marker (not its next). */
static void recover_marker_done_one(RecoverMarker *m) {
        for (size_t i = 0; i < m->n_files; i++)
                free(m->files[i].rel);
        free(m->files);
        free(m->session);
        free(m->project_dir);
        *m = (RecoverMarker){};
}

void recover_marker_done(RecoverMarker *m) {
        RecoverMarker *next;

        if (!m)
                return;
        /* a batch's chain, one after the other (a file may hold RECOVER_MARKERS_MAX) */
        next = m->next;
        recover_marker_done_one(m);
        while (next) {
                RecoverMarker *x = next;

                next = x->next;
                recover_marker_done_one(x);
                free(x);
        }
}

static int recover_marker_push(RecoverMarker *m, const RecoverFile *f) {
        char *rel = strdup(f->rel);

        if (!rel || util_greedy_realloc((void **)&m->files, &m->alloc_files, m->n_files + 1,
                                        sizeof(RecoverFile)) < 0) {
                free(rel);
                return -ENOMEM;
        }
        m->files[m->n_files] = *f;
        m->files[m->n_files++].rel = rel;
        return 0;
}

int recover_marker_add(RecoverMarker *m, bool in_global, const char *rel, const struct stat *st,
                       bool is_transcript) {
        RecoverFile f = {
                .in_global = in_global,
                .is_dir = S_ISDIR(st->st_mode),
                .is_transcript = is_transcript,
                .rel = (char *)rel,
        };

        fs_fileid_from_stat(&f.id, st);
        return recover_marker_push(m, &f);
}

static char *recover_marker_format(const RecoverMarker *m) {
        StrBuf b = {};
        int r = 0;

        for (; m && r >= 0; m = m->next) {
        r = strbuf_printf(&b, "%s\nsession %s\nproject %s\n", RECOVER_MARKER_MAGIC, m->session,
                          m->project_dir);
        for (size_t i = 0; r >= 0 && i < m->n_files; i++) {
                const RecoverFile *f = &m->files[i];
                r = strbuf_printf(&b, "%c %c %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64
                                      " %" PRId64 " %s\n",
                                  f->is_transcript ? 'T' : f->is_dir ? 'd' : 'f',
                                  f->in_global ? 'G' : 'R', (uint64_t)f->id.dev,
                                  (uint64_t)f->id.ino, f->id.size, f->id.mtime_ns, f->id.ctime_ns,
                                  f->rel);
        }
        }
        if (r < 0) {
                strbuf_done(&b);
                return NULL;
        }
        return strbuf_steal(&b);
}

/* A single path component that is safe to build paths from (a file name: at most NAME_MAX
 * bytes, which also bounds the work of every path check built from it). */
static bool recover_component_ok(const char *s) {
        return s && *s && strlen(s) <= NAME_MAX && !streq(s, ".") && !streq(s, "..") &&
               !strpbrk(s, "/\n");
}

/* Is f one of the files a delete of session id in project pd removes? The whole proof that a
 * marker names nothing else. */
static bool recover_file_allowed(const char *id, const char *pd, const RecoverFile *f) {
        static const char *const exts[] = { "worktree.json", "pr.json", "ledger.jsonl" };
        _cleanup_free_ char *chats = util_strprintf("projects/%s/chats/", pd);
        char buf[1024];
        size_t lc;

        if (!chats)
                return false;
        lc = strlen(chats);
        if (f->is_transcript) {
                if (f->in_global || f->is_dir)
                        return false;
                snprintf(buf, sizeof buf, "%s%s.jsonl", chats, id);
                if (streq(f->rel, buf))
                        return true;
                snprintf(buf, sizeof buf, "%sarchive/%s.jsonl", chats, id);
                if (streq(f->rel, buf))
                        return true;
                /* a compressed session's (cold.h) */
                snprintf(buf, sizeof buf, "%sarchive/" COLD_DIR "/%s.jsonl" COLD_SUFFIX, chats,
                         id);
                return streq(f->rel, buf);
        }
        if (f->is_dir) {
                snprintf(buf, sizeof buf, "%s/%s", f->in_global ? "file-history" : "", id);
                if (f->in_global)
                        return streq(f->rel, buf);
                snprintf(buf, sizeof buf, "projects/%s/subagents/%s", pd, id);
                if (streq(f->rel, buf))
                        return true;
                _cleanup_free_ char *rname = erase_review_dir_name(id);
                snprintf(buf, sizeof buf, "projects/%s/" ERASE_REVIEW_DIR "/%s", pd,
                         rname ? rname : "");
                return rname && streq(f->rel, buf);
        }
        if (f->in_global) {
                snprintf(buf, sizeof buf, "plans/%s.md", id);
                return streq(f->rel, buf);
        }
        snprintf(buf, sizeof buf, "debug/%s.txt", id);
        if (streq(f->rel, buf))
                return true;
        for (size_t i = 0; i < ELEMENTSOF(exts); i++) {
                snprintf(buf, sizeof buf, "%s%s.%s", chats, id, exts[i]);
                if (streq(f->rel, buf))
                        return true;
                snprintf(buf, sizeof buf, "%sarchive/%s.%s", chats, id, exts[i]);
                if (streq(f->rel, buf))
                        return true;
                snprintf(buf, sizeof buf, "%sarchive/" COLD_DIR "/%s.%s" COLD_SUFFIX, chats, id,
                         exts[i]);
                if (streq(f->rel, buf))
                        return true;
        }
        return strncmp(f->rel, chats, lc) == 0 && !strchr(f->rel + lc, '/') &&
               claims_is_claim_of(f->rel + lc, id);
}

/* Parse one file line of a marker into f (f->rel points into line). */
static int recover_parse_file(char *line, RecoverFile *f) {
        char kind, root;
        uint64_t dev, ino, size;
        int64_t mtime, ctime;
        int n = -1;

        if (sscanf(line, "%c %c %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNd64 " %" SCNd64 " %n",
                   &kind, &root, &dev, &ino, &size, &mtime, &ctime, &n) != 7 ||
            n <= 0 || !strchr("Tfd", kind) || !strchr("GR", root))
                return -EBADMSG;
        *f = (RecoverFile){
                .in_global = root == 'G',
                .is_dir = kind == 'd',
                .is_transcript = kind == 'T',
                .rel = line + n,
                .id = { .present = true, .dev = (dev_t)dev, .ino = (ino_t)ino, .size = size,
                        .mtime_ns = mtime, .ctime_ns = ctime },
        };
        if (!*f->rel || f->rel[0] == '/' || strstr(f->rel, ".."))
                return -EBADMSG;
        return 0;
}

/* "<key><value>": a copy of value in *ret. */
static int recover_parse_value(const char *line, const char *key, char **ret) {
        size_t l = strlen(key);

        if (strncmp(line, key, l) != 0)
                return -EBADMSG;
        *ret = strdup(line + l);
        return *ret ? 0 : -ENOMEM;
}

/* One line of a marker: the magic, "session ", "project ", then file lines (n counts the lines of
 * this marker). */
static int recover_parse_line(RecoverMarker *m, unsigned n, char *line) {
        RecoverFile f;
        int r;

        if (n == 0)
                return streq(line, RECOVER_MARKER_MAGIC) ? 0 : -EBADMSG;
        if (n == 1)
                return recover_parse_value(line, "session ", &m->session);
        if (n == 2)
                return recover_parse_value(line, "project ", &m->project_dir);
        r = recover_parse_file(line, &f);
        if (r < 0)
                return r;
        if (!recover_component_ok(m->session) || !recover_component_ok(m->project_dir) ||
            !recover_file_allowed(m->session, m->project_dir, &f))
                return -EBADMSG;
        return recover_marker_push(m, &f);
}

/* Does the marker name a session and a project that are each one file name? */
static bool recover_marker_names_ok(const RecoverMarker *m) {
        return recover_component_ok(m->session) && recover_component_ok(m->project_dir);
}

int recover_marker_parse(const char *text, RecoverMarker *ret) {
        _cleanup_(recover_marker_done) RecoverMarker first = {};
        _cleanup_free_ char *copy = NULL;
        RecoverMarker *m = &first;
        size_t len = strlen(text ?: ""), markers = 1;
        unsigned n = 0;
        char *line, *eol;
        int r = 0;

        if (len > RECOVER_MARKER_MAX)
                return -EFBIG;
        copy = strdup(text ?: "");
        if (!copy)
                return -ENOMEM;
        /* one pass over the lines; a batch's file holds its markers one after the other
         * (recover_marker_write_many()), each starting with the magic line */
        for (line = copy; r >= 0 && *line; line = eol ? eol + 1 : line + strlen(line)) {
                eol = strchr(line, '\n');
                if (eol)
                        *eol = 0;
                if (!*line)
                        continue; /* empty lines were always skipped */
                if (n >= 3 && streq(line, RECOVER_MARKER_MAGIC)) {
                        /* the next marker of the batch */
                        if (!recover_marker_names_ok(m))
                                return -EBADMSG;
                        if (++markers > RECOVER_MARKERS_MAX)
                                return -E2BIG;
                        m->next = calloc(1, sizeof(RecoverMarker));
                        if (!m->next)
                                return -ENOMEM;
                        m = m->next;
                        n = 0;
                }
                r = recover_parse_line(m, n++, line);
        }
        if (r < 0)
                return r;
        if (n < 3 || !recover_marker_names_ok(m))
                return -EBADMSG;
        *ret = first;
        first = (RecoverMarker){};
        return 0;
}

/* The marker's file name: the session id and a hash of the project (one id may be in two).
 * On disk: a marker written by an earlier run has this name, so the hash never changes. */
static char *recover_marker_name(const RecoverMarker *m) {
        return util_strprintf("%s.%016" PRIx64, m->session, hashmap_hash_string(m->project_dir));
}

/* Write marker m (and the markers chained after it) durably to G/.qgc/pending/ (temp file, fsync,
 * rename, fsync), creating the directories; *ret_name is its name there. */
static int recover_marker_write(int global_fd, dev_t global_dev, const RecoverMarker *m,
                                RecoverStepFn step, void *userdata, char **ret_name) {
        _cleanup_free_ char *text = recover_marker_format(m), *name = recover_marker_name(m);
        _cleanup_close_ int state_fd = -EBADF, dir_fd = -EBADF;
        int r;

        if (!text || !name)
                return -ENOMEM;
        /* a new directory durable first: a marker in one a crash forgets would be lost with it */
        state_fd = fs_mkdir_open(global_fd, FS_STATE_DIR, 0700, global_dev, step, userdata);
        if (state_fd < 0)
                return state_fd;
        dir_fd = fs_mkdir_open(state_fd, "pending", 0700, global_dev, step, userdata);
        if (dir_fd < 0)
                return dir_fd;
        /* its hooks: the temp file durable, then the marker named */
        r = fs_write_durable(dir_fd, name, text, strlen(text), 0600, FS_DURABLE_MADE_TEMP, step,
                             userdata);
        if (r < 0)
                return r;
        *ret_name = TAKE_PTR(name);
        return 0;
}

/* The group commit of n markers: one file holding all of them, written like one marker. */
int recover_marker_write_many(int global_fd, dev_t global_dev, RecoverMarker *const *m, size_t n,
                              RecoverStepFn step, void *userdata, char **ret_name) {
        _cleanup_free_ char *name = NULL;
        int r;

        if (n == 0)
                return -EINVAL;
        for (size_t i = 0; i + 1 < n; i++)
                m[i]->next = m[i + 1];
        m[n - 1]->next = NULL;
        r = recover_marker_write(global_fd, global_dev, m[0], step, userdata, &name);
        for (size_t i = 0; i < n; i++)
                m[i]->next = NULL;
        if (r < 0)
                return r;
        *ret_name = TAKE_PTR(name);
        return 0;
}

int recover_marker_remove(int global_fd, dev_t global_dev, const char *name, RecoverStepFn step,
                          void *userdata) {
        _cleanup_close_ int dir_fd = fs_open_path(global_fd, RECOVER_PENDING_DIR, global_dev);
        int r;

        if (dir_fd == -ENOENT)
                return 0;
        if (dir_fd < 0)
                return dir_fd;
        r = fs_unlink(dir_fd, name, 0);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        recover_marker_step(step, userdata, name);
        return fs_fsync(dir_fd);
}
