/* actions-erase-list.c: the directories a batch's deletes look into, listed once per step.
 *
 * Most deleted sessions have none of the files a delete looks for besides the transcript (the
 * sidecars in chats/ and chats/archive/, file-history/<id>/, subagents/<id>/, debug/<id>.txt,
 * plans/<id>.md, the review directory; the files Qwen shares): a lookup per name finds nothing,
 * about 20 system calls per session. Instead each directory a step of the batch looks into is
 * listed once for that step (the marker and the shared-file edits, actions_batch_mark() and
 * actions_batch_erase(); the rest of the delete, actions_batch_finish()): a name the listing
 * does not hold is not looked up; a name it holds is looked at (and checked) directly, as before.
 * The listings are dropped after each step (actions_lists_drop()), so the rest of a delete never
 * relies on a listing taken before its transcript went.
 *
 * A listing is a snapshot: a file created in the directory after it was taken is missed by this
 * step, exactly as a file created just after a direct lookup would be. Only a live Qwen process
 * of the session (or, for the files Qwen shares, of its project) creates one, and the batch has
 * just checked that none is live. What is missed is never removed: a missed name is a file kept,
 * never one removed by mistake (file-history/<id>/ and subagents/<id>/ are then orphans a later
 * scan finds and reclaims, debug/<id>.txt and plans/<id>.md hygiene's when its keys are on; a
 * sidecar or review directory stays, as one written just after a direct lookup would; a shared
 * file's rows stay, as rows written just after the edit would). A directory that cannot be
 * listed, or is large for the
 * batch (more entries by its size than ACTIONS_LIST_PER_SESSION per session of the batch: a
 * tree's file-history/ of thousands of sessions costs more to list for every batch than the
 * batch's lookups in it), is looked into by name, as before. */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsutil.h"
#include "macro.h"
#include "util.h"

#include "actions-int.h"

#define ACTIONS_LIST_PER_SESSION 4U
#define ACTIONS_LIST_MIN 64U
#define ACTIONS_LIST_DIRENT 64 /* bytes of st_size per entry of a 36-character name (ext4) */

typedef struct ActionsList {
        int fd;       /* the directory (the batch's fd: open for the whole step) */
        char **names; /* sorted */
        size_t n;
        bool listed;  /* false: look up by name */
} ActionsList;

typedef struct ActionsLists {
        ActionsList *l;
        size_t n;
} ActionsLists;

static int actions_list_cmp(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static void actions_list_done(ActionsList *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->names[i]);
        free(l->names);
        *l = (ActionsList){ .fd = -EBADF };
}

void actions_lists_drop(ActionsContext *c) {
        ActionsLists *ls = c->lists;

        if (!ls)
                return;
        for (size_t i = 0; i < ls->n; i++)
                actions_list_done(&ls->l[i]);
        free(ls->l);
        free(ls);
        c->lists = NULL;
}

/* List dfd into l, up to max entries (l->listed false when it cannot be listed whole). */
static void actions_list(ActionsList *l, int dfd, size_t max) {
        _cleanup_free_ FsDir *dir = malloc(sizeof(FsDir));
        _cleanup_close_ int fd = dir ? fs_open_dir(dfd, ".") : -ENOMEM; /* its own offset */
        size_t cap = 0;
        const char *name;
        unsigned char type;
        struct stat st;
        int k;

        *l = (ActionsList){ .fd = dfd };
        if (fd < 0 || fstat(fd, &st) < 0 || st.st_size / ACTIONS_LIST_DIRENT > (off_t)max)
                return;
        fs_dir_init(dir, fd);
        while ((k = fs_dir_next(dir, &name, &type)) > 0) {
                if (l->n == max)
                        break;
                if (l->n == cap) {
                        char **n = reallocarray(l->names, cap ? 2 * cap : 64, sizeof(char *));
                        if (!n)
                                break;
                        l->names = n;
                        cap = cap ? 2 * cap : 64;
                }
                if (!(l->names[l->n] = strdup(name)))
                        break;
                l->n++;
        }
        if (k != 0) { /* an error, out of memory or too many: by name */
                actions_list_done(l);
                l->fd = dfd;
                return;
        }
        if (l->n > 1)
                qsort(l->names, l->n, sizeof(char *), actions_list_cmp);
        l->listed = true;
}

/* May (dfd, name) exist? 0 when this step's listing of dfd (taken on first use) does not hold
 * name, 1 otherwise (listed, or dfd could not be listed): the caller looks it up by name. dfd
 * must stay open for the whole step (the batch's fds; never one closed on return). */
int actions_listed(ActionsContext *c, int dfd, const char *name) {
        ActionsLists *ls = c->lists;
        ActionsList *l = NULL;

        if (dfd < 0)
                return 1;
        if (!ls) {
                ls = c->lists = calloc(1, sizeof(ActionsLists));
                if (!ls)
                        return 1;
        }
        for (size_t i = 0; i < ls->n && !l; i++)
                if (ls->l[i].fd == dfd)
                        l = &ls->l[i];
        if (!l) {
                ActionsList *n = reallocarray(ls->l, ls->n + 1, sizeof(ActionsList));
                if (!n)
                        return 1;
                ls->l = n;
                l = &ls->l[ls->n++];
                actions_list(l, dfd,
                             ACTIONS_LIST_MIN +
                                     ACTIONS_LIST_PER_SESSION * (c->batch ? c->batch->n : 1));
        }
        if (!l->listed)
                return 1;
        if (l->n == 0)
                return 0; /* an empty directory */
        return bsearch(&name, l->names, l->n, sizeof(char *), actions_list_cmp) ? 1 : 0;
}
