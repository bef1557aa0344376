/* json-int.h: what the two halves of JSON.parse's grammar share: json.c (it builds) and
 * json-scan.c (it captures or validates without building). Inline: the scanner's loops use them. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "util.h"

#define JSON_MAX_DEPTH 1000 /* json-c frees recursively; deeper input is refused */

/* json.c's parser state (json-scan.c's number scan borrows its p and end). */
typedef struct JsonParser {
        const char *p, *end;
        unsigned depth;
        StrBuf scratch;
} JsonParser;

/* Four hex digits at p (before end) as a number. */
static inline int json_parse_hex4(const char *p, const char *end, uint32_t *ret) {
        uint32_t v = 0;

        if (end - p < 4)
                return -EBADMSG;
        for (int i = 0; i < 4; i++) {
                char c = p[i];
                v <<= 4;
                if (c >= '0' && c <= '9')
                        v |= (uint32_t)(c - '0');
                else if (c >= 'a' && c <= 'f')
                        v |= (uint32_t)(c - 'a' + 10);
                else if (c >= 'A' && c <= 'F')
                        v |= (uint32_t)(c - 'A' + 10);
                else
                        return -EBADMSG;
        }
        *ret = v;
        return 0;
}

static inline bool json_is_digit(char c) {
        return c >= '0' && c <= '9';
}
