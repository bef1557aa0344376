/* roots.h: where a user's Qwen trees are, resolved as Qwen Code does (storage.ts). */
#pragma once

#include <sys/types.h>

#include "inventory.h"

/* Resolve G and R for a user:
 *   G = $QWEN_HOME (with ~ expansion against home; relative values resolved against cwd)
 *       else <home>/.qwen
 *   R = $QWEN_RUNTIME_DIR (same expansion), else an absolute advanced.runtimeOutputDir from
 *       G/settings.json, else G.
 * qwen_home / runtime_env are the environment values (NULL when unset). Fills *ret (strings
 * owned by ret; user/uid left for the caller). */
int roots_resolve(const char *home, const char *qwen_home, const char *runtime_env, Tree *ret);

/* --root DIR: DIR serves as both G and R. */
int roots_from_dir(const char *dir, Tree *ret);
