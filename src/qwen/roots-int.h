/* roots-int.h: what roots.c shares with roots-workspace.c, and nobody else uses. */
#pragma once

#include <stdbool.h>

/* Lexically normalise an absolute path as node's path.resolve does: a new string or NULL. */
char *roots_normalize(const char *abs);
/* Does the absolute path have a ".." component? */
bool roots_dotdot_lexical(const char *abs);
/* Resolve a settings value (absolute, or '~' with home) into *ret: 0, or -errno. */
int roots_resolve_path(const char *value, const char *home, char **ret);
/* The words for a settings file qgc could not read (r < 0). */
const char *roots_file_error(int r);
