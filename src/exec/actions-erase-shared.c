/* actions-erase-shared.c: a batch's deletes out of the files Qwen shares (erase.h): their rows
 * and entries removed with one edit of each file for the whole batch, and each session's count
 * journalled. */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "erase.h"
#include "journal.h"
#include "log.h"
#include "macro.h"
#include "util.h"

#include "actions-int.h"

/* Journal one edit of a shared file (counts, never content). */
static void actions_report_erased(ActionsContext *c, const Session *s, const char *dir,
                                  const char *file, unsigned n, const char *what) {
        const Tree *tr = &c->inv->trees[s->tree];
        _cleanup_free_ char *path = strprintf("%s/%s/%s", tr->runtime_dir, dir, file);
        _cleanup_free_ char *msg = strprintf("removed %u %s of session %s from '%s'", n, what,
                                             s->id, path ? path : file);
        const JournalField fields[] = { JOURNAL_FIELD_U64("QGC_ERASED", n) };
        JournalEntry e = {
                .event = JOURNAL_ERASED,
                .message = msg,
                .session = s->id,
                .project = actions_report_project(s),
                .path = path,
                .user = tr->user,
                .fields = fields,
                .n_fields = ELEMENTSOF(fields),
        };

        if (n == 0)
                return;
        if (journal_log(&e) < 0)
                log_warning("cannot write the action log entry for session %s", s->id);
        c->stats->n_erased += n;
        c->stats->n_erased_files++;
}

/* 2b of the group commit: the rows and entries of the batch's deletes (their markers written)
 * out of the files Qwen shares (erase.h), each file read and edited once for all of them
 * (erase_sessions_shared()). A delete whose edit cannot be done now is skipped with the reason
 * (nothing of it goes; a later run retries the whole delete). */
void actions_erase_batch(ActionsContext *c, ActionsBatch *b, const ActionsTree *t) {
        _cleanup_free_ EraseItem *items = calloc(b->n ? b->n : 1, sizeof(EraseItem));
        _cleanup_free_ size_t *idx = calloc(b->n ? b->n : 1, sizeof(size_t));
        _cleanup_free_ int *owned = calloc(2 * b->n + 1, sizeof(int));
        size_t n = 0, n_owned = 0;
        int r = 0;

        for (size_t i = 0; items && idx && owned && r >= 0 && i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];
                const Session *s = it->s;
                _cleanup_free_ char *tmp = NULL, *pdir = NULL;
                dev_t dev = c->inv->trees[s->tree].dev;
                bool owned_t = false, owned_p = false;
                int tfd, pfd;

                if (it->done || it->v->verb != VERB_DELETE || !it->marked)
                        continue;
                tmp = strprintf("tmp/%s", s->hash ? s->hash : "");
                pdir = strprintf("projects/%s", s->project_dir);
                if (!tmp || !pdir) {
                        r = -ENOMEM;
                        break;
                }
                /* the batch's directories (its deletes are mostly of a few projects): the same
                 * directory, the same fd, so that its file is edited once */
                tfd = s->hash ? actions_batch_path(c, t->runtime_fd, tmp, dev, &owned_t) : -ENOENT;
                if (owned_t && tfd >= 0)
                        owned[n_owned++] = tfd;
                pfd = actions_batch_path(c, t->runtime_fd, pdir, dev, &owned_p);
                if (owned_p && pfd >= 0)
                        owned[n_owned++] = pfd;
                /* neither file in this step's listing of its directory: nothing of the session in
                 * them (what erase_sessions_shared() finds first, without opening them) */
                if ((tfd == -ENOENT || (tfd >= 0 && !owned_t &&
                                        actions_listed(c, tfd, ERASE_LOGS_FILE) == 0)) &&
                    (pfd == -ENOENT || (pfd >= 0 && !owned_p &&
                                        actions_listed(c, pfd, ERASE_ORG_FILE) == 0)))
                        continue;
                items[n] = (EraseItem){
                        .s = s,
                        .chats_fd = b->dirs[it->dir].chats_fd,
                        .tmp_fd = tfd,
                        .pdir_fd = pfd,
                };
                idx[n++] = i;
        }
        if (!items || !idx || !owned)
                r = -ENOMEM;
        /* r < 0: no file was written (erase_sessions_shared() fails only before its first edit);
         * after it, what each file lost is in its sessions' counts, journalled below also for a
         * session that failed */
        if (r >= 0 && n > 0)
                r = erase_sessions_shared(c->inv, &c->erase_index, items, n, actions_report_step, c);
        for (size_t i = 0; r < 0 && i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];

                if (!it->done && it->v->verb == VERB_DELETE && it->marked)
                        actions_report_item(c, it, ACTIONS_FAILED,
                                             "cannot edit the files Qwen shares", -r);
        }
        for (size_t j = 0; r >= 0 && j < n; j++) {
                ActionsBatchItem *it = &b->items[idx[j]];
                const Session *s = it->s;
                _cleanup_free_ char *tmp = strprintf("tmp/%s", s->hash ? s->hash : "");
                _cleanup_free_ char *pdir = strprintf("projects/%s", s->project_dir);

                actions_report_erased(c, s, tmp ? tmp : "tmp", ERASE_LOGS_FILE,
                                      items[j].done.log_rows, "prompt history row(s)");
                actions_report_erased(c, s, pdir ? pdir : "projects", ERASE_ORG_FILE,
                                      items[j].done.org_entries, "organization entry(ies)");
                /* a writer outran the edit's merges: what it wrote last is beside the file */
                if (items[j].kept)
                        log_warning("a version of a file Qwen shares, written while qgc edited "
                                    "it, was not merged: kept as '%s/%s/%s' (without the deleted "
                                    "sessions' rows)",
                                    c->inv->trees[s->tree].runtime_dir,
                                    strneq(items[j].kept, ERASE_LOGS_FILE, strlen(ERASE_LOGS_FILE)) ? (tmp ?: "tmp")
                                                                               : (pdir ?: "projects"),
                                    items[j].kept);
                if (items[j].r == -EAGAIN && items[j].why)
                        actions_report_item(c, it, ACTIONS_SKIPPED_NOT_NOW, items[j].why, 0);
                else if (items[j].r < 0)
                        actions_report_item(c, it, ACTIONS_FAILED,
                                             items[j].why ?: "cannot edit the files Qwen shares",
                                             -items[j].r);
        }
        for (size_t j = 0; items && j < n; j++) {
                free(items[j].why);
                free(items[j].kept);
        }
        for (size_t j = 0; j < n_owned; j++)
                safe_close(owned[j]);
}
