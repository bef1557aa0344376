/* json-dialect.h: the names of json-input.h's dialects, for the tests' messages and checks
 * (qgc itself prints no dialect name). */
#pragma once

#include "json-input.h"

static inline const char *json_input_dialect_to_string(JsonDialect d) {
        static const char *const names[_JSON_DIALECT_MAX] = {
                [JSON_DIALECT_PARSE] = "JSON.parse",
        };
        return d >= 0 && d < _JSON_DIALECT_MAX ? names[d] : NULL;
}
