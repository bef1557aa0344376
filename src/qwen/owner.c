/* owner.c: the ownership pass over a project's sessions, as Qwen's delete path decides it: the
 * scan only reads the transcripts' first records; this pass decides, session by session in the
 * scan's order, with the claims and the cwd cache of the project.
 *
 * The first record's string sessionId must equal the file's id ignoring case and its cwd must be
 * a string; then the session belongs to the project directory when sanitizeCwd(cwd) is the
 * directory's name, or by Qwen's worktree rule (the part of cwd before the last
 * "/.qwen/worktrees/" sanitizes to it), or when a runtime claim in chats/ names the session and
 * its work_dir sanitizes to it (a /cd-migrated session). A readable head that fails all three is
 * foreign; anything else is unverified. Never decides from the directory name alone.
 *
 * It records the decision as facts: the OwnerStatus, the OwnerCause that decided it and the
 * cause's facts (owner_detail, owner_dir); the owner reason is rendered from them at the edge
 * (reason_owner(), reason.c). Nothing decides from that text. */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "owner.h"
#include "qwen.h"

/* Replace *pa and *pb with copies of a and b (NULL stays NULL): both, or neither and -ENOMEM. */
static int owner_replace2(char **pa, const char *a, char **pb, const char *b) {
        char *x = NULL, *y = NULL;

        if ((a && !(x = strdup(a))) || (b && !(y = strdup(b)))) {
                free(x);
                return -ENOMEM;
        }
        free(*pa);
        free(*pb);
        *pa = x;
        *pb = y;
        return 0;
}

/* Record the decision: the status, its cause and the cause's facts (copied; NULL: none). */
static int owner_set(Session *s, OwnerStatus st, OwnerCause cause, const char *detail,
                     const char *dir) {
        int r;

        r = owner_replace2(&s->owner_detail, detail, &s->owner_dir, dir);
        if (r < 0)
                return r;
        s->owner = st;
        s->owner_cause = cause;
        return 0;
}

/* The transcript could not be read at all (why: the reader's words, taken): unverified. */
static void owner_set_unreadable(Session *s, char *why) {
        free(s->owner_detail);
        free(s->owner_dir);
        s->owner = OWNER_UNVERIFIED;
        s->owner_cause = OWNER_CAUSE_UNREADABLE;
        s->owner_detail = why;
        s->owner_dir = NULL;
}

/* Does sanitizeCwd(path) equal project_dir? 1, 0, or -ENOMEM. */
static int owner_sanitizes_to(const char *path, const char *project_dir) {
        _cleanup_free_ char *san = qwen_sanitize_cwd(path);

        if (!san)
                return -ENOMEM;
        return streq(san, project_dir);
}

void owner_cache_done(OwnerCache *c) {
        free(c->cwd);
        free(c->project_dir);
        *c = (OwnerCache){};
}

/* Point the cache at (cwd, project_dir): its hash computed, the sanitize test not yet. */
static int owner_cache_fill(OwnerCache *c, const char *cwd, const char *project_dir) {
        char *a, *b;
        int r;

        if (c->cwd && streq(c->cwd, cwd) && streq(c->project_dir, project_dir))
                return 0;
        owner_cache_done(c);
        r = qwen_project_hash(cwd, c->hash);
        if (r < 0)
                return r;
        a = strdup(cwd);
        b = strdup(project_dir);
        if (!a || !b) {
                free(a);
                free(b);
                return -ENOMEM;
        }
        c->cwd = a;
        c->project_dir = b;
        c->sanitizes = -1;
        return 0;
}

/* Decide s from its head (NULL when it could not be read; why then says why). */
static int owner_check(Session *s, const HeadInfo *head, const char *why, const char *project_dir,
                       const ClaimSet *claims, OwnerCache *cache) {
        _cleanup_(owner_cache_done) OwnerCache local = {};
        _cleanup_free_ char *root = NULL, *san = NULL;
        size_t first, end;
        int r;

        s->owner = OWNER_UNVERIFIED;
        if (!head)
                return owner_set(s, OWNER_UNVERIFIED, OWNER_CAUSE_UNREADABLE, why, NULL);
        if (!cache)
                cache = &local;

        /* cwd and hash whenever the first record has a cwd, even when the id check fails */
        if (head->cwd) {
                r = owner_cache_fill(cache, head->cwd, project_dir);
                if (r < 0)
                        return r;
                r = owner_replace2(&s->cwd, head->cwd, &s->hash, cache->hash);
                if (r < 0)
                        return r;
        }
        if (!head->session_id)
                return owner_set(s, OWNER_UNVERIFIED, OWNER_CAUSE_NO_SESSION_ID, NULL, NULL);
        if (!qwen_session_id_equal(head->session_id, s->id)) {
                char sid[65]; /* the reason quotes up to 64 bytes of it */

                snprintf(sid, sizeof sid, "%.64s", head->session_id);
                return owner_set(s, OWNER_UNVERIFIED, OWNER_CAUSE_ID_MISMATCH, sid, NULL);
        }
        if (!head->cwd)
                return owner_set(s, OWNER_UNVERIFIED, OWNER_CAUSE_NO_CWD, NULL, NULL);

        if (cache->sanitizes < 0) {
                r = owner_sanitizes_to(head->cwd, project_dir);
                if (r < 0)
                        return r;
                cache->sanitizes = r;
        }
        if (cache->sanitizes > 0)
                return owner_set(s, OWNER_OK, OWNER_CAUSE_CWD, NULL, NULL);

        errno = 0;
        root = qwen_worktree_root(head->cwd);
        if (!root && errno == ENOMEM)
                return -ENOMEM;
        if (root) {
                r = owner_sanitizes_to(root, project_dir);
                if (r < 0)
                        return r;
                if (r > 0)
                        return owner_set(s, OWNER_WORKTREE, OWNER_CAUSE_WORKTREE, NULL, root);
        }

        claims_range(claims, s->id, &first, &end);
        for (size_t i = first; i < end; i++) {
                const RuntimeClaim *c = &claims->claims[i];
                if (c->malformed || !c->session_id || !c->work_dir ||
                    !qwen_session_id_equal(c->session_id, s->id))
                        continue;
                r = owner_sanitizes_to(c->work_dir, project_dir);
                if (r < 0)
                        return r;
                if (r > 0)
                        return owner_set(s, OWNER_CLAIM, OWNER_CAUSE_CLAIM, c->file,
                                         c->work_dir);
        }

        san = qwen_sanitize_cwd(head->cwd);
        if (!san)
                return -ENOMEM;
        return owner_set(s, OWNER_FOREIGN, OWNER_CAUSE_FOREIGN, NULL, san);
}

void owner_facts_done(OwnerFacts *f) {
        free(f->problem);
        record_head_info_done(&f->head);
        *f = (OwnerFacts){};
}

int owner_pass(Session *sessions, OwnerFacts *facts, size_t n, const char *project_dir,
               const ClaimSet *claims, OwnerCache *cache) {
        int r;

        for (size_t i = 0; i < n; i++) {
                Session *s = &sessions[i];
                OwnerFacts *f = &facts[i];

                if (f->problem) {
                        owner_set_unreadable(s, TAKE_PTR(f->problem));
                        continue;
                }
                r = owner_check(s, f->head_ok ? &f->head : NULL, f->head_why, project_dir, claims,
                                cache);
                if (r < 0)
                        return r;
        }
        return 0;
}
