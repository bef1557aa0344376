/* usage-int.h: what the usage salvage's two halves share: the replay's state and event handlers
 * (usage.c) and the record builder that streams the transcript into them (usagerecord.c). */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hashmap.h"
#include "js.h"
#include "record.h"
#include "util.h"

#define USAGE_MARK "ui_telemetry"
#define usage_puts(b, lit) strbuf_append((b), (lit), strlen(lit))

typedef struct ModelStats {
        double requests;
        JsVal latency, prompt, candidates, total, cached, thoughts;
} ModelStats;

typedef struct ToolStats {
        double count, success, fail;
        JsVal duration;
} ToolStats;

/* Insertion-ordered string map; index: k + 1 of each name (hashmap.h). */
typedef struct NameMap {
        char **names;
        size_t *lens;
        void **values;
        size_t n, cap;
        Hashmap index;
} NameMap;

typedef struct Salvage {
        json_object *first; /* the first record, referenced */
        bool has_events;
        bool threw; /* Qwen's replay would throw a TypeError: it writes nothing */
        NameMap models, tools;
        double total_calls, total_success, total_fail;
        JsVal lines_added, lines_removed;
        StrBuf key;          /* scratch for property keys */
        uint64_t end;        /* where the last line streamed ends */
        bool last_truncated; /* the last line was too long to read */
} Salvage;

/* The fields of a uiEvent the replay reads; nothing else can change the record. */
enum {
        USAGE_EV_NAME,
        USAGE_EV_MODEL,
        USAGE_EV_DURATION,
        USAGE_EV_INPUT,
        USAGE_EV_OUTPUT,
        USAGE_EV_TOTAL,
        USAGE_EV_CACHED,
        USAGE_EV_THOUGHTS,
        USAGE_EV_TTFT,
        USAGE_EV_PROMPT_ID,
        USAGE_EV_FUNCTION,
        USAGE_EV_SUCCESS,
        USAGE_EV_DECISION,
        USAGE_EV_METADATA,
        _USAGE_EV_MAX,
};

extern const char *const usage_event_keys[_USAGE_EV_MAX];
/* The members of metadata the replay reads. */
#define USAGE_META_MAX 2
extern const char *const usage_meta_keys[USAGE_META_MAX];

/* A uiEvent: the parsed object (tolerant path), or the texts of the members it reads (fast
 * path: the line was validated, spans indexed like usage_event_keys and usage_meta_keys). */
typedef struct UsageEvent {
        json_object *obj;
        const JsonSpan *spans;
        const JsonSpan *meta;
} UsageEvent;

void usage_salvage_done(Salvage *s);
/* obj[key] and whether it is an own property (obj an object). */
json_object *usage_get(json_object *obj, const char *key, bool *ret_present);
/* Is v the string want (exactly, NUL bytes included)? */
bool usage_string_is_value(json_object *v, const char *want);
/* UiTelemetryService.addEvent() for an api_response or api_error event, and a tool_call. */
int usage_api_event(Salvage *s, const UsageEvent *ev, bool is_error);
int usage_tool_event(Salvage *s, const UsageEvent *ev);
/* A record in file order (record_object_cb): the first is kept, system/ui_telemetry replayed. */
int usage_record_cb(json_object *obj, void *userdata);
