/* ownership.c: the ownership pass over a project's sessions (ownership.h). The scan only reads
 * the transcripts' first records; this pass decides, session by session in the scan's order,
 * with owner.c's check of one transcript and the claims and cwd cache of the project. */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>

#include "macro.h"
#include "ownership.h"

void owner_facts_done(OwnerFacts *f) {
        free(f->problem);
        head_info_done(&f->head);
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
                r = owner_check_cached(s, f->head_ok ? &f->head : NULL, f->head_why, project_dir,
                                       claims, cache);
                if (r < 0)
                        return r;
        }
        return 0;
}
