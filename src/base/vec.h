/* vec.h: 16-byte vectors for byte scans of long texts: GCC/clang vector extensions, no
 * intrinsics, so any target compiles them (SSE2 or NEON where there is one). */
#pragma once

#include <stdint.h>
#include <string.h>

typedef uint8_t Vec16 __attribute__((vector_size(16)));
typedef uint64_t Vec2x64 __attribute__((vector_size(16)));

/* 16 bytes at p (any alignment). */
static inline Vec16 vec_load16(const char *p) {
        Vec16 v;

        memcpy(&v, p, sizeof(v));
        return v;
}

/* c in every lane. */
static inline Vec16 vec_splat16(char c) {
        Vec16 v;

        for (size_t k = 0; k < sizeof(v); k++)
                v[k] = (uint8_t)c;
        return v;
}
