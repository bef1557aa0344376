/* strtable.h: enum <-> string lookup from one table per enum (systemd's
 * DEFINE_STRING_TABLE_LOOKUP is the model).
 *
 * The table is `static const char *const NAME_table[_X_MAX] = { [X_A] = "a", ... };`; then
 *   DEFINE_STRING_TABLE_LOOKUP_TO_STRING(NAME, Type)   defines  const char *NAME_to_string(Type)
 *   DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(NAME, Type) defines  Type NAME_from_string(const char *)
 *   DEFINE_STRING_TABLE_LOOKUP(NAME, Type)              both.
 * to_string gives NULL for a value outside the table (or a hole in it); from_string gives -EINVAL
 * (every enum's _X_INVALID) for NULL or a string not in the table. The _FUNC forms name the
 * function and the table apart (a second table over the same enum). */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "macro.h"

/* The index of s in table (n entries, NULL holes skipped), or -EINVAL. */
static inline ssize_t strtable_lookup(const char *const *table, size_t n, const char *s) {
        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (table[i] && strcmp(table[i], s) == 0)
                        return (ssize_t)i;
        return -EINVAL;
}

#define DEFINE_STRING_TABLE_TO_STRING_FUNC(func, table, type)                                      \
        const char *func(type i) {                                                                 \
                if ((int64_t)i < 0 || (size_t)i >= ELEMENTSOF(table))                              \
                        return NULL;                                                               \
                return table[i];                                                                   \
        }

#define DEFINE_STRING_TABLE_FROM_STRING_FUNC(func, table, type)                                    \
        type func(const char *s) {                                                                 \
                return (type)strtable_lookup(table, ELEMENTSOF(table), s);                     \
        }

#define DEFINE_STRING_TABLE_LOOKUP_TO_STRING(name, type)                                           \
        DEFINE_STRING_TABLE_TO_STRING_FUNC(name##_to_string, name##_table, type)
#define DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(name, type)                                         \
        DEFINE_STRING_TABLE_FROM_STRING_FUNC(name##_from_string, name##_table, type)
#define DEFINE_STRING_TABLE_LOOKUP(name, type)                                                     \
        DEFINE_STRING_TABLE_LOOKUP_TO_STRING(name, type)                                           \
        DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(name, type)
