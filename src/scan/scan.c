/* scan.c: the read-only walk of every tree into the Inventory (scan.h), each tree by its
 * store's scan (store.h). */
#include "autoconf.h"

#include <errno.h>
#include <stdbool.h>

#include "scan.h"

int scan_all(Inventory *inv, const ScanOptions *o) {
        size_t n_stores = 0;
        int r = 0;

        for (size_t i = 0; i < inv->n_trees; i++) {
                const StoreOps *store = inv->trees[i].store;
                ScanOptions so = *o;
                bool seen = false;
                int k;

                for (size_t j = 0; j < i; j++)
                        seen = seen || inv->trees[j].store == store;
                if (seen || !store)
                        continue;
                if (!store->scan) {
                        /* nothing of it is known: nothing may be decided for its trees */
                        for (size_t j = i; j < inv->n_trees; j++)
                                if (inv->trees[j].store == store)
                                        inv->trees[j].incomplete = true;
                        continue;
                }
                so.store = store;
                n_stores++;
                k = store->scan(inv, &so);
                if (k == -ENOMEM)
                        return k;
                if (k < 0 && r == 0)
                        r = k;
        }
        /* sessions of a store added after another store's sorted them */
        if (n_stores > 1) {
                inventory_sort(inv);
                int k = inventory_index(inv);
                if (k < 0)
                        return k;
        }
        return r;
}
