/* qwen-store.h: Qwen Code's store, the table the core reaches Qwen's files through. */
#pragma once

#include "store.h"

extern const StoreOps qwen_store;
