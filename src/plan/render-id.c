/* render-id.c: the short session ids of the text plan: per tree, the fewest leading characters
 * (at least RENDER_ID_MIN) that tell its sessions apart, from one sort of every id. */
#include "autoconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "render-int.h"

#define RENDER_ID_MIN 8  /* short ids: the first 8 characters, more when needed */
#define RENDER_ID_MAX 36 /* a whole session id */

/* A session id (or an orphan's name) and its tree, for the short id widths: prefix is the id's
 * first 8 bytes (NUL-padded) as a big-endian number, which orders like them, so that most
 * comparisons need no strcmp(); item: a session's index, or n_sessions + an orphan's. 16
 * bytes: every id of the plan is sorted, with qsort()'s copy beside. */
typedef struct RenderId {
        uint64_t prefix;
        uint32_t tree;
        uint32_t item;
} RenderId;

static const char *render_id_name(const Inventory *inv, uint32_t item) {
        return item < inv->n_sessions ? inv->sessions[item].id
                                      : inv->orphans[item - inv->n_sessions].name;
}

static RenderId render_id_make(size_t tree, const char *id, size_t item) {
        uint64_t v = 0;
        size_t i = 0;

        for (; i < 8 && id[i]; i++)
                v = (v << 8) | (unsigned char)id[i];
        return (RenderId){ .prefix = i == 0 ? 0 : v << (8 * (8 - i)),
                           .tree = (uint32_t)tree,
                           .item = (uint32_t)item };
}

static int render_id_cmp(const void *x, const void *y, void *userdata) {
        const RenderId *a = x, *b = y;

        if (a->tree != b->tree)
                return a->tree < b->tree ? -1 : 1;
        if (a->prefix != b->prefix)
                return a->prefix < b->prefix ? -1 : 1;
        return strcmp(render_id_name(userdata, a->item), render_id_name(userdata, b->item));
}

/* Per tree, the fewest leading characters of the ids (at least RENDER_ID_MIN) that tell every
 * session of the tree apart (and the orphans named by a session id). ret[t]; malloc'ed. */
int render_id_widths(const Inventory *inv, size_t **ret) {
        _cleanup_free_ RenderId *ids = NULL;
        _cleanup_free_ size_t *w = calloc(inv->n_trees + 1, sizeof(size_t));
        size_t n = 0;

        if (!w)
                return -ENOMEM;
        for (size_t t = 0; t <= inv->n_trees; t++)
                w[t] = RENDER_ID_MIN;
        /* Session.tree is 32 bits (inventory_add_tree()); so are the items of a plan_sort()ed
         * plan: else the ids are not shortened */
        if (inv->n_sessions + inv->n_orphans >= UINT32_MAX || inv->n_trees >= UINT32_MAX) {
                for (size_t t = 0; t <= inv->n_trees; t++)
                        w[t] = RENDER_ID_MAX;
                *ret = TAKE_PTR(w);
                return 0;
        }
        ids = calloc(inv->n_sessions + inv->n_orphans + 1, sizeof(RenderId));
        if (!ids)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_sessions; i++)
                ids[n++] = render_id_make(inv->sessions[i].tree, inv->sessions[i].id, i);
        for (size_t i = 0; i < inv->n_orphans; i++)
                if (inv->orphans[i].kind != ORPHAN_EMPTY_PROJECT && inv->orphans[i].name)
                        ids[n++] = render_id_make(inv->orphans[i].tree, inv->orphans[i].name,
                                                  inv->n_sessions + i);
        qsort_r(ids, n, sizeof(RenderId), render_id_cmp, (void *)inv);
        for (size_t k = 1; k < n; k++) {
                const char *a = render_id_name(inv, ids[k - 1].item),
                           *b = render_id_name(inv, ids[k].item);
                size_t c = 0;

                if (ids[k - 1].tree != ids[k].tree || streq(a, b))
                        continue; /* an active and an archived copy are one session */
                while (a[c] && a[c] == b[c])
                        c++;
                if (ids[k].tree < inv->n_trees)
                        w[ids[k].tree] = MAX(w[ids[k].tree], MIN(c + 1, (size_t)RENDER_ID_MAX));
        }
        *ret = TAKE_PTR(w);
        return 0;
}
