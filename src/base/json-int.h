/* json-int.h: what the two halves of JSON.parse's grammar share: json.c (it builds) and
 * json-scan.c (it captures or validates without building). Inline: the scanner's loops use them. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 1000 /* json-c frees recursively; deeper input is refused */

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

/* The end of the JSON number at p: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, or NULL when
 * none starts there. *ret_integral: it has neither a fraction nor an exponent. */
static inline const char *json_number_end(const char *p, const char *end, bool *ret_integral) {
        bool integral = true;

        if (p < end && *p == '-')
                p++;
        if (p >= end || !json_is_digit(*p))
                return NULL;
        if (*p == '0')
                p++;
        else
                while (p < end && json_is_digit(*p))
                        p++;
        if (p < end && *p == '.') {
                integral = false;
                p++;
                if (p >= end || !json_is_digit(*p))
                        return NULL;
                while (p < end && json_is_digit(*p))
                        p++;
        }
        if (p < end && (*p == 'e' || *p == 'E')) {
                integral = false;
                p++;
                if (p < end && (*p == '+' || *p == '-'))
                        p++;
                if (p >= end || !json_is_digit(*p))
                        return NULL;
                while (p < end && json_is_digit(*p))
                        p++;
        }
        *ret_integral = integral;
        return p;
}
