/* deepcode-store.h: Deep Code's store, the table the core reaches a ~/.deepcode through. */
#pragma once

#include "store.h"

extern const StoreOps deepcode_store;
