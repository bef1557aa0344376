/* qwen-scan.h: the walk of Qwen's trees into the Inventory (qwen_store's scan, store.h). */
#pragma once

#include "store.h"

/* StoreOps.scan (store.h) of Qwen's trees (inv->trees[i].store == o->store): each project's
 * chats/, chats/archive/ and cold tier, then orphans, hygiene items and session times. */
int qwen_scan(Inventory *inv, const ScanOptions *o);
