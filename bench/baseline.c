/* baseline.c: the least work a real qgc run must do, for the benchmark's real-run rows.
 *
 *   baseline delete TREE   read every byte of every regular file below TREE/projects/<dir>/chats,
 *                          TREE/projects/<dir>/subagents and TREE/file-history, then unlink it
 *                          (directories below those emptied and removed): `cat` + `rm`
 *   baseline archive TREE  for every TREE/projects/<dir>/chats/<id>.jsonl: read every byte, then
 *                          rename it into chats/archive/ (created when missing)
 *   baseline delete-shared TREE
 *                          delete, then each shared file Qwen keeps per project,
 *                          TREE/tmp/<hash>/logs.json and TREE/projects/<dir>/session-organization.v1.json:
 *                          read it whole, drop the rows / entries of the transcripts the delete
 *                          removed, write it back once (temp file + rename); a file with nothing
 *                          to drop is not written. The edit is by lines, no JSON parser: it relies
 *                          on the layout Qwen writes (JSON.stringify(v, null, 2): an element per
 *                          indented block, no raw newline inside strings) and rebuilds the
 *                          container's framing the same way, so its output is what qgc writes
 *
 * No fsync, no checks: a floor, not a safe tool. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char buf[1 << 20];
static const char *top;
static unsigned long n_files;
static bool record_ids;         /* delete-shared: remember the ids of the deleted transcripts */
static char (*ids)[37];
static size_t n_ids, n_rows, n_entries, n_edits;

static int read_all(int dfd, const char *name) {
        int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        ssize_t k;

        if (fd < 0)
                return -1;
        while ((k = read(fd, buf, sizeof buf)) > 0)
                ;
        close(fd);
        return k < 0 ? -1 : 0;
}

/* delete-shared: the id of a deleted chats/<id>.jsonl or chats/archive/<id>.jsonl. */
static void remember(const char *path) {
        const char *b = strrchr(path, '/') + 1;
        size_t n = strlen(b);

        if (!record_ids || n != 36 + 6 || strcmp(b + 36, ".jsonl") != 0 || !strstr(path, "/chats/"))
                return;
        if ((n_ids & (n_ids - 1)) == 0) {
                ids = realloc(ids, (n_ids ? 2 * n_ids : 64) * sizeof *ids);
                if (!ids)
                        exit(3);
        }
        memcpy(ids[n_ids], b, 36);
        ids[n_ids++][36] = 0;
}

static int id_cmp(const void *a, const void *b) {
        return memcmp(a, b, 36);
}

static bool deleted(const char *id) {
        return bsearch(id, ids, n_ids, sizeof *ids, id_cmp) != NULL;
}

/* The elements of the container that opens at text[open]: each a block of lines that starts with
 * ind spaces and a non-space and ends at the line of ind spaces and '}' (',' after it dropped);
 * the container closes at the next line that starts with ind - 2 spaces. The id of an element is
 * the first 36 characters after key (logs.json: "\"sessionId\": \"" inside it; organisation: the
 * block's own key). Returns the new text (NULL: nothing dropped). */
static char *drop_elements(const char *text, size_t n, size_t open, unsigned ind, const char *key,
                           size_t *ret_n, size_t *ret_dropped) {
        char *out = malloc(n + 1);
        size_t o = 0, at, dropped = 0;
        bool first = true;

        if (!out)
                exit(3);
        memcpy(out, text, open + 1);
        o = open + 1;
        at = open + 1;
        for (;;) {
                const char *nl = memchr(text + at, '\n', n - at), *ls, *end, *k;
                size_t sp = 0;

                if (!nl)
                        break;
                ls = nl + 1;
                while (ls + sp < text + n && ls[sp] == ' ')
                        sp++;
                if (sp != ind)
                        break;          /* the container's closing line */
                /* the block: up to the line "<ind spaces>}" */
                end = ls;
                for (;;) {
                        const char *e = memchr(end, '\n', text + n - end);
                        size_t s2 = 0;
                        if (!e)
                                return free(out), NULL;
                        end = e + 1;
                        while (end + s2 < text + n && end[s2] == ' ')
                                s2++;
                        if (s2 == ind && end[s2] == '}') {
                                end += s2 + 1;
                                break;
                        }
                }
                k = memmem(ls, end - ls, key, strlen(key));
                if (k && k + strlen(key) + 36 <= end && deleted(k + strlen(key)))
                        dropped++;
                else {
                        out[o++] = first ? '\n' : ',';
                        if (!first)
                                out[o++] = '\n';
                        memcpy(out + o, nl + 1, end - (nl + 1));
                        o += end - (nl + 1);
                        first = false;
                }
                at = (size_t) (end - text) + (end < text + n && *end == ',');
        }
        if (!dropped)
                return free(out), NULL;
        if (!first) {
                out[o++] = '\n';
                memset(out + o, ' ', ind - 2);
                o += ind - 2;
        }
        /* the rest from the closing bracket on */
        {
                size_t c = at;
                while (c < n && (text[c] == '\n' || text[c] == ' '))
                        c++;
                memcpy(out + o, text + c, n - c);
                o += n - c;
        }
        *ret_n = o;
        *ret_dropped = dropped;
        return out;
}

/* Read path whole, drop the deleted sessions' elements, write it back once. */
static void edit_shared(const char *path, bool logs) {
        static char tmp[4200];
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        struct stat st;
        char *text, *out;
        const char *open_at;
        size_t n = 0, n_out, dropped;
        ssize_t k;

        if (fd < 0)
                return;
        if (fstat(fd, &st) < 0 || !(text = malloc(st.st_size + 1)))
                exit(3);
        while ((k = read(fd, text + n, st.st_size - n)) > 0)
                n += k;
        close(fd);
        text[n] = 0;
        open_at = logs ? strchr(text, '[') : strstr(text, "\n  \"sessions\": {");
        if (!open_at) {
                free(text);
                return;
        }
        if (!logs)
                open_at = strchr(open_at, '{');
        out = drop_elements(text, n, open_at - text, logs ? 2 : 4, logs ? "\"sessionId\": \"" : "\"",
                            &n_out, &dropped);
        free(text);
        if (!out)
                return;
        snprintf(tmp, sizeof tmp, "%s.baseline-tmp", path);
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, out, n_out) != (ssize_t) n_out || close(fd) < 0 || rename(tmp, path) < 0)
                exit(3);
        free(out);
        n_edits++;
        *(logs ? &n_rows : &n_entries) += dropped;
}

static int edit_logs(const char *p) {
        char f[4096];
        snprintf(f, sizeof f, "%s/logs.json", p);
        edit_shared(f, true);
        return 0;
}

static int edit_org(const char *p) {
        edit_shared(p, false);
        return 0;
}

static int del_cb(const char *path, const struct stat *st, int type, struct FTW *f) {
        (void)st;
        if (type == FTW_F) {
                if (read_all(AT_FDCWD, path) == 0 && unlink(path) == 0) {
                        n_files++;
                        remember(path);
                }
        } else if (type == FTW_DP && f->level > 0)
                (void)rmdir(path);
        return 0;
}

static int for_dirs(const char *tree, const char *top_dir, const char *sub, int (*fn)(const char *)) {
        char p[4096];
        DIR *d;
        struct dirent *de;

        snprintf(p, sizeof p, "%s/%s", tree, top_dir);
        d = opendir(p);
        if (!d)
                return -1;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                snprintf(p, sizeof p, "%s/%s/%s/%s", tree, top_dir, de->d_name, sub);
                fn(p);
        }
        closedir(d);
        return 0;
}

static int for_projects(const char *tree, const char *sub, int (*fn)(const char *)) {
        return for_dirs(tree, "projects", sub, fn);
}

static int del_dir(const char *p) {
        top = p;
        return nftw(p, del_cb, 64, FTW_DEPTH | FTW_PHYS);
}

static int arch_dir(const char *p) {
        int dfd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC), afd;
        DIR *d;
        struct dirent *de;

        if (dfd < 0)
                return -1;
        (void)mkdirat(dfd, "archive", 0700);
        afd = openat(dfd, "archive", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        d = fdopendir(dfd);
        while (d && afd >= 0 && (de = readdir(d))) {
                size_t n = strlen(de->d_name);
                if (de->d_type != DT_REG || n < 7 || strcmp(de->d_name + n - 6, ".jsonl") != 0)
                        continue;
                if (read_all(dfd, de->d_name) == 0 &&
                    renameat(dfd, de->d_name, afd, de->d_name) == 0)
                        n_files++;
        }
        if (d)
                closedir(d);
        if (afd >= 0)
                close(afd);
        return 0;
}

int main(int argc, char **argv) {
        char p[4096];

        if (argc != 3)
                return fprintf(stderr, "usage: baseline delete|delete-shared|archive TREE\n"), 2;
        record_ids = strcmp(argv[1], "delete-shared") == 0;
        if (strcmp(argv[1], "delete") == 0 || record_ids) {
                for_projects(argv[2], "chats", del_dir);
                for_projects(argv[2], "subagents", del_dir);
                snprintf(p, sizeof p, "%s/file-history", argv[2]);
                del_dir(p);
                if (record_ids) {
                        qsort(ids, n_ids, sizeof *ids, id_cmp);
                        for_dirs(argv[2], "tmp", "", edit_logs);
                        for_projects(argv[2], "session-organization.v1.json", edit_org);
                        fprintf(stderr, "baseline: %zu files edited, %zu rows and %zu entries dropped\n",
                                n_edits, n_rows, n_entries);
                }
        } else if (strcmp(argv[1], "archive") == 0)
                for_projects(argv[2], "chats", arch_dir);
        else
                return 2;
        printf("%lu\n", n_files);
        return 0;
}
