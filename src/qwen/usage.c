/* usage.c: the usage salvage: a transcript's ui_telemetry events (api_response, api_error,
 * tool_call) replayed through Qwen Code's UiTelemetryService, and the usage_record.jsonl line
 * its summarizeTranscript() and metricsToUsageRecord() make of them (Qwen 0.24). Writing the
 * line is usage-index.c's and usage-append.c's job.
 *
 * Qwen does this in JavaScript, so the arithmetic is JavaScript's (js.c): fields are added with
 * "+=" whatever their type (a missing one gives NaN, serialized as null; a string turns the sum
 * into a string), names are property keys, and some hostile names make Qwen throw, in which
 * case it writes nothing. The transcript is streamed: only lines that can hold a ui_telemetry
 * record (the word, or a \u escape that could spell it) are parsed, and a validated line takes
 * a fast path that builds only the fields the replay reads. */
#include "autoconf.h"

#include <assert.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"
#include "hashmap.h"
#include "js.h"
#include "macro.h"
#include "record.h"
#include "usage.h"
#include "util.h"
#include "vec.h"

#define USAGE_STR_MAX (8 * 1024 * 1024)   /* budget for sums that JavaScript turned into strings */
#define USAGE_MAX_LINE (16 * 1024 * 1024) /* longer lines cannot be salvaged exactly */
#define USAGE_BACK_WINDOW (64 * 1024)

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

#define USAGE_META_MAX 2

/* A uiEvent: the parsed object (tolerant path), or the texts of the members it reads (fast
 * path: the line was validated, spans indexed like usage_event_keys and usage_meta_keys). */
typedef struct UsageEvent {
        json_object *obj;
        const JsonSpan *spans;
        const JsonSpan *meta;
} UsageEvent;


/* ------------------------------------------------------------------ named counters */

typedef struct NameKey {
        const NameMap *m;
        const char *s;
        size_t n;
} NameKey;

static bool usage_map_eq(const void *entry, const void *key) {
        const NameKey *k = key;
        size_t i = (uintptr_t)entry - 1;

        return k->m->lens[i] == k->n && memcmp(k->m->names[i], k->s, k->n) == 0;
}

static void *usage_map_get(const NameMap *m, const char *s, size_t n) {
        void *e = hashmap_get(&m->index, hashmap_hash_bytes(s, n), usage_map_eq, &(NameKey){ m, s, n });

        return e ? m->values[(uintptr_t)e - 1] : NULL;
}

/* Add name (not present yet) with value (taken over). */
static int usage_map_add(NameMap *m, const char *s, size_t n, void *value) {
        if (m->n == m->cap) {
                size_t cap = m->cap ? m->cap * 2 : 8;
                char **names = reallocarray(m->names, cap, sizeof(char *));
                if (!names)
                        return -ENOMEM;
                m->names = names;
                size_t *lens = reallocarray(m->lens, cap, sizeof(size_t));
                if (!lens)
                        return -ENOMEM;
                m->lens = lens;
                void **values = reallocarray(m->values, cap, sizeof(void *));
                if (!values)
                        return -ENOMEM;
                m->values = values;
                m->cap = cap;
        }
        m->names[m->n] = malloc(n + 1);
        if (!m->names[m->n])
                return -ENOMEM;
        memcpy(m->names[m->n], s, n);
        m->names[m->n][n] = '\0';
        m->lens[m->n] = n;
        m->values[m->n] = value;
        m->n++;
        return hashmap_put(&m->index, hashmap_hash_bytes(s, n), (void *)(uintptr_t)m->n);
}

static void usage_map_done(NameMap *m, void (*free_value)(void *)) {
        for (size_t k = 0; k < m->n; k++) {
                free(m->names[k]);
                free_value(m->values[k]);
        }
        free(m->names);
        free(m->lens);
        free(m->values);
        hashmap_done(&m->index, NULL);
        *m = (NameMap){};
}

static void usage_model_free(void *p) {
        ModelStats *s = p;

        if (!s)
                return;
        js_val_done(&s->latency);
        js_val_done(&s->prompt);
        js_val_done(&s->candidates);
        js_val_done(&s->total);
        js_val_done(&s->cached);
        js_val_done(&s->thoughts);
        free(s);
}

static void usage_tool_free(void *p) {
        ToolStats *s = p;

        if (!s)
                return;
        js_val_done(&s->duration);
        free(s);
}

/* Keys that resolve to something on Object.prototype when not an own property. */
static bool usage_is_proto_key(const char *s, size_t n) {
        static const char *const names[] = {
                "constructor",      "__defineGetter__", "__defineSetter__", "hasOwnProperty",
                "__lookupGetter__", "__lookupSetter__", "isPrototypeOf",    "propertyIsEnumerable",
                "toString",         "valueOf",          "__proto__",        "toLocaleString",
        };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0)
                        return true;
        return false;
}

/* ------------------------------------------------------------------ salvage state */

static void usage_salvage_done(Salvage *s) {
        json_object_put(s->first);
        usage_map_done(&s->models, usage_model_free);
        usage_map_done(&s->tools, usage_tool_free);
        js_val_done(&s->lines_added);
        js_val_done(&s->lines_removed);
        strbuf_done(&s->key);
}

static const char *const usage_event_keys[_USAGE_EV_MAX] = {
        [USAGE_EV_NAME] = "event.name",
        [USAGE_EV_MODEL] = "model",
        [USAGE_EV_DURATION] = "duration_ms",
        [USAGE_EV_INPUT] = "input_token_count",
        [USAGE_EV_OUTPUT] = "output_token_count",
        [USAGE_EV_TOTAL] = "total_token_count",
        [USAGE_EV_CACHED] = "cached_content_token_count",
        [USAGE_EV_THOUGHTS] = "thoughts_token_count",
        [USAGE_EV_TTFT] = "ttft_ms",
        [USAGE_EV_PROMPT_ID] = "prompt_id",
        [USAGE_EV_FUNCTION] = "function_name",
        [USAGE_EV_SUCCESS] = "success",
        [USAGE_EV_DECISION] = "decision",
        [USAGE_EV_METADATA] = "metadata",
};

/* The members of metadata the replay reads. */
static const char *const usage_meta_keys[USAGE_META_MAX] = { "model_added_lines",
                                                              "model_removed_lines" };

static json_object *usage_get(json_object *obj, const char *key, bool *ret_present) {
        json_object *v = NULL;

        *ret_present = json_object_is_type(obj, json_type_object) &&
                       json_object_object_get_ex(obj, key, &v);
        return v;
}

/* The value of a validated JSON number text exactly as json_parse() makes it (int64 for
 * short integers, else strtod), as a double. false when too long for the scratch copy. */
static bool usage_span_number(const JsonSpan *sp, double *ret) {
        char tmp[64];

        if (sp->n <= 16) {
                /* an integer (no '.', 'e' or 'E': only digits after the sign) */
                int64_t v = 0;
                size_t i = sp->s[0] == '-';

                for (; i < sp->n && sp->s[i] >= '0' && sp->s[i] <= '9'; i++)
                        v = v * 10 + (sp->s[i] - '0');
                if (i == sp->n) {
                        *ret = (double)(sp->s[0] == '-' ? -v : v);
                        return true;
                }
        }
        if (sp->n >= sizeof(tmp))
                return false;
        memcpy(tmp, sp->s, sp->n);
        tmp[sp->n] = '\0';
        *ret = strtod(tmp, NULL);
        return true;
}

static bool usage_span_is_number(const JsonSpan *sp) {
        return sp->s && (sp->s[0] == '-' || (sp->s[0] >= '0' && sp->s[0] <= '9'));
}

/* JSON value of a member: borrowed from the object, or parsed from its text into *ret_owned. */
static int usage_member_json(json_object *obj, const JsonSpan *sp, const char *key,
                             json_object **ret, bool *ret_present, json_object **ret_owned) {
        *ret_owned = NULL;
        if (!sp) {
                *ret = usage_get(obj, key, ret_present);
                return 0;
        }
        *ret = NULL;
        *ret_present = sp->s != NULL;
        if (!sp->s)
                return 0;
        if (json_parse(sp->s, sp->n, ret_owned) < 0)
                return -ENOMEM; /* a validated span parses, unless memory runs out */
        *ret = *ret_owned;
        return 0;
}

/* acc += member (obj[key], or the text sp when sp is set). */
static int usage_add_member(JsVal *acc, json_object *obj, const JsonSpan *sp, const char *key) {
        json_object *v, *owned;
        bool present;
        double d;
        int r;

        if (sp && usage_span_is_number(sp) && usage_span_number(sp, &d))
                r = js_val_add_number(acc, d);
        else {
                r = usage_member_json(obj, sp, key, &v, &present, &owned);
                if (r >= 0)
                        r = js_val_add_json(acc, v, present);
                json_object_put(owned);
        }
        if (r < 0)
                return r;
        if (acc->is_str && acc->str.len > USAGE_STR_MAX)
                return -E2BIG;
        return 0;
}

static int usage_add_field(JsVal *acc, const UsageEvent *ev, size_t k) {
        return usage_add_member(acc, ev->obj, ev->spans ? &ev->spans[k] : NULL,
                                usage_event_keys[k]);
}

/* JavaScript truthiness of field k. */
static int usage_field_truthy(const UsageEvent *ev, size_t k, bool *ret) {
        json_object *v, *owned;
        bool present;
        int r;

        if (ev->spans) {
                const JsonSpan *sp = &ev->spans[k];
                double d;

                if (!sp->s) {
                        *ret = false;
                        return 0;
                }
                switch (sp->s[0]) {
                case '"':
                        *ret = sp->n > 2; /* any escape decodes to at least one character */
                        return 0;
                case 't':
                case '{':
                case '[':
                        *ret = true;
                        return 0;
                case 'f':
                case 'n':
                        *ret = false;
                        return 0;
                default:
                        if (usage_span_number(sp, &d)) {
                                *ret = d != 0 && !isnan(d);
                                return 0;
                        }
                }
        }
        r = usage_member_json(ev->obj, ev->spans ? &ev->spans[k] : NULL, usage_event_keys[k], &v,
                              &present, &owned);
        if (r >= 0)
                *ret = js_truthy(v, present);
        json_object_put(owned);
        return r;
}

/* The JSON type of field k when present (json_type_null also for absent). */
static json_type usage_field_type(const UsageEvent *ev, size_t k, bool *ret_present) {
        json_object *v;

        if (ev->spans) {
                const JsonSpan *sp = &ev->spans[k];

                *ret_present = sp->s != NULL;
                if (!sp->s)
                        return json_type_null;
                switch (sp->s[0]) {
                case '"':
                        return json_type_string;
                case '{':
                        return json_type_object;
                case '[':
                        return json_type_array;
                case 't':
                case 'f':
                        return json_type_boolean;
                case 'n':
                        return json_type_null;
                default:
                        return json_type_double;
                }
        }
        v = usage_get(ev->obj, usage_event_keys[k], ret_present);
        return json_object_get_type(v);
}

/* ToPropertyKey(ev[field]) into s->key. */
static int usage_event_key(Salvage *s, const UsageEvent *ev, size_t k) {
        json_object *v, *owned;
        bool present;
        int r;

        s->key.len = 0;
        if (usage_puts(&s->key, "") < 0)
                return -ENOMEM;
        if (ev->spans && ev->spans[k].s && ev->spans[k].s[0] == '"') {
                const JsonSpan *sp = &ev->spans[k];
                bool plain = true;

                /* no escapes and ASCII: the text is the string */
                for (size_t i = 1; i + 1 < sp->n && plain; i++)
                        plain = sp->s[i] != '\\' && (unsigned char)sp->s[i] < 0x80;
                if (plain)
                        return strbuf_append(&s->key, sp->s + 1, sp->n - 2);
        }
        r = usage_member_json(ev->obj, ev->spans ? &ev->spans[k] : NULL, usage_event_keys[k], &v,
                              &present, &owned);
        if (r >= 0)
                r = js_tostring_append(&s->key, v, present);
        json_object_put(owned);
        return r;
}

static int usage_model(Salvage *s, const UsageEvent *ev, ModelStats **ret) {
        ModelStats *m;
        int r;

        r = usage_event_key(s, ev, USAGE_EV_MODEL);
        if (r < 0)
                return r;
        m = usage_map_get(&s->models, s->key.buf, s->key.len);
        if (m) {
                *ret = m;
                return 0;
        }
        if (usage_is_proto_key(s->key.buf, s->key.len)) {
                /* metrics.models[name] is an Object.prototype member: ".bySource" of it throws */
                s->threw = true;
                *ret = NULL;
                return 0;
        }
        m = calloc(1, sizeof(ModelStats));
        if (!m)
                return -ENOMEM;
        r = usage_map_add(&s->models, s->key.buf, s->key.len, m);
        if (r < 0) {
                usage_model_free(m);
                return r;
        }
        *ret = m;
        return 0;
}

/* #accumulateApiResponse / #accumulateApiError for the session-less replay. */
static int usage_api_event(Salvage *s, const UsageEvent *ev, bool is_error) {
        ModelStats *m;
        bool present, truthy;
        double ttft;
        int r;

        r = usage_model(s, ev, &m);
        if (r < 0 || !m)
                return r;
        m->requests++;
        r = usage_add_field(&m->latency, ev, USAGE_EV_DURATION);
        if (r < 0 || is_error)
                return r;
        if ((r = usage_add_field(&m->prompt, ev, USAGE_EV_INPUT)) < 0 ||
            (r = usage_add_field(&m->candidates, ev, USAGE_EV_OUTPUT)) < 0 ||
            (r = usage_add_field(&m->total, ev, USAGE_EV_TOTAL)) < 0 ||
            (r = usage_add_field(&m->cached, ev, USAGE_EV_CACHED)) < 0 ||
            (r = usage_add_field(&m->thoughts, ev, USAGE_EV_THOUGHTS)) < 0)
                return r;

        /* With a finite ttft_ms >= 0, isInternalPromptId(prompt_id) calls .startsWith() on any
         * truthy prompt_id: a non-string one throws. */
        if (ev->spans) {
                const JsonSpan *sp = &ev->spans[USAGE_EV_TTFT];
                if (!usage_span_is_number(sp))
                        return 0;
                if (!usage_span_number(sp, &ttft)) {
                        json_object *o = NULL;
                        if (json_parse(sp->s, sp->n, &o) < 0)
                                return -ENOMEM;
                        ttft = js_json_number(o);
                        json_object_put(o);
                }
        } else {
                json_object *v = usage_get(ev->obj, "ttft_ms", &present);
                if (!present || !js_json_is_number(v))
                        return 0;
                ttft = js_json_number(v);
        }
        if (!isfinite(ttft) || ttft < 0)
                return 0;
        r = usage_field_truthy(ev, USAGE_EV_PROMPT_ID, &truthy);
        if (r < 0)
                return r;
        if (truthy && usage_field_type(ev, USAGE_EV_PROMPT_ID, &present) != json_type_string)
                s->threw = true;
        return 0;
}

/* #accumulateToolCall. */
static int usage_tool_event(Salvage *s, const UsageEvent *ev) {
        ToolStats *t;
        bool present, success, decision, meta_truthy, phantom_key = false;
        int r;

        s->total_calls++;
        r = usage_field_truthy(ev, USAGE_EV_SUCCESS, &success);
        if (r < 0)
                return r;
        if (success)
                s->total_success++;
        else
                s->total_fail++;

        r = usage_event_key(s, ev, USAGE_EV_FUNCTION);
        if (r < 0)
                return r;
        t = usage_map_get(&s->tools, s->key.buf, s->key.len);
        if (!t && usage_is_proto_key(s->key.buf, s->key.len))
                phantom_key = true; /* counts on an Object.prototype member: not in byName */
        else if (!t) {
                t = calloc(1, sizeof(ToolStats));
                if (!t)
                        return -ENOMEM;
                r = usage_map_add(&s->tools, s->key.buf, s->key.len, t);
                if (r < 0) {
                        usage_tool_free(t);
                        return r;
                }
        }
        if (t) {
                t->count++;
                r = usage_add_field(&t->duration, ev, USAGE_EV_DURATION);
                if (r < 0)
                        return r;
                if (success)
                        t->success++;
                else
                        t->fail++;
        }

        r = usage_field_truthy(ev, USAGE_EV_DECISION, &decision);
        if (r < 0)
                return r;
        if (decision && phantom_key) {
                /* toolStats.decisions is undefined there: indexing it throws */
                s->threw = true;
                return 0;
        }

        r = usage_field_truthy(ev, USAGE_EV_METADATA, &meta_truthy);
        if (r < 0)
                return r;
        if (!meta_truthy || usage_field_type(ev, USAGE_EV_METADATA, &present) != json_type_object)
                return 0;
        if (ev->spans) {
                if (ev->meta[0].s &&
                    (r = usage_add_member(&s->lines_added, NULL, &ev->meta[0], NULL)) < 0)
                        return r;
                if (ev->meta[1].s &&
                    (r = usage_add_member(&s->lines_removed, NULL, &ev->meta[1], NULL)) < 0)
                        return r;
                return 0;
        }
        json_object *meta = usage_get(ev->obj, "metadata", &present);
        if (json_object_object_get_ex(meta, "model_added_lines", NULL) &&
            (r = usage_add_member(&s->lines_added, meta, NULL, "model_added_lines")) < 0)
                return r;
        if (json_object_object_get_ex(meta, "model_removed_lines", NULL) &&
            (r = usage_add_member(&s->lines_removed, meta, NULL, "model_removed_lines")) < 0)
                return r;
        return 0;
}

static bool usage_string_is_value(json_object *v, const char *want) {
        return json_object_is_type(v, json_type_string) && streq(json_object_get_string(v), want) &&
               (size_t)json_object_get_string_len(v) == strlen(want);
}

static bool usage_string_is(json_object *obj, const char *key, const char *want) {
        json_object *v;

        return json_object_object_get_ex(obj, key, &v) && usage_string_is_value(v, want);
}

/* UiTelemetryService.addEvent() for an event object. */
static int usage_event(Salvage *s, json_object *obj) {
        const UsageEvent ev = { .obj = obj };

        if (usage_string_is(obj, "event.name", "qwen-code.api_response"))
                return usage_api_event(s, &ev, false);
        if (usage_string_is(obj, "event.name", "qwen-code.api_error"))
                return usage_api_event(s, &ev, true);
        if (usage_string_is(obj, "event.name", "qwen-code.tool_call"))
                return usage_tool_event(s, &ev);
        return 0;
}

/* One record in file order: remember the first, replay system/ui_telemetry events. */
static int usage_record_cb(json_object *obj, void *userdata) {
        Salvage *s = userdata;
        json_object *payload, *ev;
        bool present;

        if (!s->first)
                s->first = json_object_get(obj);
        if (s->threw)
                return 0;
        if (!usage_string_is(obj, "type", "system") ||
            !usage_string_is(obj, "subtype", "ui_telemetry"))
                return 0;
        payload = usage_get(obj, "systemPayload", &present);
        if (!present || !json_object_is_type(payload, json_type_object))
                return 0;
        ev = usage_get(payload, "uiEvent", &present);
        if (!js_truthy(ev, present))
                return 0;
        s->has_events = true;
        if (!json_object_is_type(ev, json_type_object))
                return 0;
        return usage_event(s, ev);
}

/* ------------------------------------------------------------------ the stream */

/* Is the JSON text span the string want? Raw comparison, decoding only when escaped. */
static bool usage_span_is(const JsonSpan *v, const char *want) {
        json_object *o = NULL;
        bool eq;

        if (!v->s || v->n < 2 || v->s[0] != '"')
                return false;
        if (!memchr(v->s, '\\', v->n))
                return v->n == strlen(want) + 2 && memcmp(v->s + 1, want, v->n - 2) == 0;
        if (json_parse(v->s, v->n, &o) < 0)
                return false;
        eq = usage_string_is_value(o, want);
        json_object_put(o);
        return eq;
}


/* Fast path for a line that is one valid JSON object: validate it without building it, then
 * build only the uiEvent fields the replay reads. Returns 1 when handled, 0 when the line is not
 * a single valid object (the caller falls back to the tolerant parser), or -errno. */
static int usage_fast_line(Salvage *s, const char *p, size_t n) {
        static const char *const top_keys[] = { "type", "subtype", "systemPayload" };
        static const char *const payload_keys[] = { "uiEvent" };
        JsonSpan top[ELEMENTSOF(top_keys)], payload[1], ev[_USAGE_EV_MAX],
                meta[ELEMENTSOF(usage_meta_keys)];
        const JsonCapture meta_cap = { usage_meta_keys, ELEMENTSOF(usage_meta_keys), meta, NULL };
        const JsonCapture *const ev_children[_USAGE_EV_MAX] = { [USAGE_EV_METADATA] = &meta_cap };
        const JsonCapture ev_cap = { usage_event_keys, _USAGE_EV_MAX, ev, ev_children };
        const JsonCapture *const payload_children[] = { &ev_cap };
        const JsonCapture payload_cap = { payload_keys, 1, payload, payload_children };
        const JsonCapture *const top_children[] = { NULL, NULL, &payload_cap };
        const JsonCapture top_cap = { top_keys, ELEMENTSOF(top_keys), top, top_children };
        const UsageEvent event = { .spans = ev, .meta = meta };
        int r;

        js_trim(&p, &n);
        if (n == 0)
                return 1;
        /* nested spans stay unset unless their parents were objects */
        for (size_t i = 0; i < ELEMENTSOF(ev); i++)
                ev[i] = (JsonSpan){};
        for (size_t i = 0; i < ELEMENTSOF(meta); i++)
                meta[i] = (JsonSpan){};
        payload[0] = (JsonSpan){};
        if (json_capture(p, n, /* validate= */ true, &top_cap) < 0)
                return 0;
        if (s->threw || !usage_span_is(&top[0], "system") ||
            !usage_span_is(&top[1], "ui_telemetry"))
                return 1;
        if (!top[2].s || top[2].s[0] != '{' || !payload[0].s)
                return 1; /* systemPayload?.uiEvent is undefined */
        if (payload[0].s[0] != '{') {
                /* rare: a uiEvent that is not an object; let the full parser judge it */
                r = record_parse_line(p, n, usage_record_cb, s);
                return r < 0 ? r : 1;
        }
        s->has_events = true;
        if (usage_span_is(&ev[USAGE_EV_NAME], "qwen-code.api_response"))
                r = usage_api_event(s, &event, false);
        else if (usage_span_is(&ev[USAGE_EV_NAME], "qwen-code.api_error"))
                r = usage_api_event(s, &event, true);
        else if (usage_span_is(&ev[USAGE_EV_NAME], "qwen-code.tool_call"))
                r = usage_tool_event(s, &event);
        else
                r = 0;
        return r < 0 ? r : 1;
}

/* Does "ui_telemetry", or a \u escape that could spell one of its letters, start at p[i]? Each
 * of its letters (0x5f..0x79) escaped is "\u005f".."\u0079", so that is "\u00" and a 5, 6 or 7
 * (other escapes cannot make letters). */
static bool usage_mark_at(const char *p, size_t n, size_t i) {
        if (p[i] == 'u')
                return n - i >= strlen(USAGE_MARK) &&
                       memcmp(p + i, USAGE_MARK, strlen(USAGE_MARK)) == 0;
        return p[i] == '\\' && n - i > 4 && memcmp(p + i, "\\u00", 4) == 0 && p[i + 4] >= '5' &&
               p[i + 4] <= '7';
}

/* Can p[0..n) hold a ui_telemetry record? One pass for both spellings: 16 positions at a time,
 * "ui...y" or "\u.0" there before the exact check. */
static bool usage_may_hold_event(const char *p, size_t n) {
        const Vec16 u = vec_splat16('u'), i1 = vec_splat16('i'),
                         y = vec_splat16('y'), bs = vec_splat16('\\'),
                         zero = vec_splat16('0');
        size_t i = 0;

        /* a block reads up to p[i + 11 + 15] */
        for (; n >= 27 && i <= n - 27; i += 16) {
                Vec16 x0 = vec_load16(p + i), x1 = vec_load16(p + i + 1),
                           x3 = vec_load16(p + i + 3), x11 = vec_load16(p + i + 11), e;
                uint64_t lo, hi;

                e = (Vec16)(((x0 == u) & (x1 == i1) & (x11 == y)) |
                                 ((x0 == bs) & (x1 == u) & (x3 == zero)));
                memcpy(&lo, &e, 8);
                memcpy(&hi, (const char *)&e + 8, 8);
                if (!(lo | hi))
                        continue;
                for (size_t k = 0; k < 16; k++)
                        if (e[k] && usage_mark_at(p, n, i + k))
                                return true;
        }
        for (; i < n; i++)
                if ((p[i] == 'u' || p[i] == '\\') && usage_mark_at(p, n, i))
                        return true;
        return false;
}

/* One readline() line (already split at \n and \r). */
static int usage_subline(Salvage *s, const char *p, size_t n) {
        int r;

        if (s->first) {
                if (!usage_may_hold_event(p, n))
                        return 0; /* cannot hold a ui_telemetry record */
                r = usage_fast_line(s, p, n);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        r = record_parse_line(p, n, usage_record_cb, s);
        return r < 0 ? r : 0;
}

static int usage_line_cb(const char *line, size_t len, uint64_t offset, bool truncated,
                         void *userdata) {
        Salvage *s = userdata;
        const char *p = line, *end = line + len;
        int r;

        s->end = offset + len;
        s->last_truncated = truncated;
        if (truncated) {
                /* Cannot be parsed within bounded memory: fail closed when it could matter. */
                if (!s->first || memmem(line, len, USAGE_MARK, strlen(USAGE_MARK)))
                        return -E2BIG;
                return 0;
        }
        /* after the first record only lines that can hold an event matter (neither spelling
         * holds a '\r', so the line's parts cannot either) */
        if (s->first && !usage_may_hold_event(line, len))
                return 0;
        /* readline also ends lines at a lone '\r' */
        while (p <= end) {
                const char *cr = memchr(p, '\r', (size_t)(end - p));
                const char *e = cr ? cr : end;

                r = usage_subline(s, p, (size_t)(e - p));
                if (r < 0)
                        return r;
                p = e + 1;
        }
        return 0;
}

/* ------------------------------------------------------------------ last record */

static int usage_take_last(json_object *obj, void *userdata) {
        json_object **last = userdata;

        json_object_put(*last);
        *last = json_object_get(obj);
        return 0;
}

/* The backward scan over one window buf[0..n) of the text: lines split at \n and \r, last first,
 * until one parses to at least one object (its last object wins). Returns 1 when decided (*ret
 * set, or NULL when the window starts the file and holds no record), 0 when the window's first
 * line may begin before it (*ret_e: where the undecided part of the window ends), or -errno. */
static int usage_last_scan(const char *buf, size_t n, bool file_start, json_object **ret,
                           size_t *ret_e) {
        size_t e = n;
        int r;

        for (;;) {
                size_t b = e;
                while (b > 0 && buf[b - 1] != '\n' && buf[b - 1] != '\r')
                        b--;
                if (b == 0 && !file_start) {
                        *ret_e = e;
                        return 0; /* the line may begin before the window */
                }
                r = record_parse_line(buf + b, e - b, usage_take_last, ret);
                if (r < 0)
                        return r;
                if (*ret || b == 0)
                        return 1; /* a record, or the start of the file: none */
                e = b - 1;
        }
}

/* The last record of the first `end` bytes of fd: usage_last_scan() over windows read
 * backwards. */
static int usage_last_record(int fd, uint64_t end, json_object **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t win = USAGE_BACK_WINDOW;
        uint64_t pos = end;
        int r;

        *ret = NULL;
        buf = malloc(win);
        if (!buf)
                return -ENOMEM;
        while (pos > 0) {
                uint64_t start = pos > win ? pos - win : 0;
                size_t n = (size_t)(pos - start), e;
                ssize_t k = fs_pread_full(fd, buf, n, (off_t)start);

                if (k < 0)
                        return (int)k;
                if ((size_t)k < n)
                        return -EIO; /* the file shrank under us */
                r = usage_last_scan(buf, n, start == 0, ret, &e);
                if (r != 0)
                        return r < 0 ? r : 0;
                if (e == n) {
                        /* no line boundary in the whole window: widen it once */
                        if (win > USAGE_MAX_LINE)
                                return -E2BIG;
                        win = USAGE_MAX_LINE + 1;
                        free(buf);
                        buf = malloc(win);
                        if (!buf)
                                return -ENOMEM;
                        continue;
                }
                pos = start + e;
        }
        return 0;
}

/* ------------------------------------------------------------------ the record */

static int usage_render_models(StrBuf *b, Salvage *s) {
        _cleanup_free_ size_t *order = NULL;
        int r;

        r = js_key_order((const char *const *)s->models.names, s->models.lens, s->models.n,
                            &order);
        if (r < 0)
                return r;
        if (usage_puts(b, "\"models\":{") < 0)
                return -ENOMEM;
        for (size_t i = 0; i < s->models.n; i++) {
                size_t k = order[i];
                ModelStats *m = s->models.values[k];
                JsVal total = {};
                const struct {
                        const char *key;
                        const JsVal *v;
                } f[] = {
                        { ",\"inputTokens\":", &m->prompt },
                        { ",\"outputTokens\":", &m->candidates },
                        { ",\"cachedTokens\":", &m->cached },
                        { ",\"thoughtsTokens\":", &m->thoughts },
                        { ",\"totalTokens\":", &total },
                        { ",\"totalLatencyMs\":", &m->latency },
                };

                /* totalTokens: tokens.total || prompt + candidates + thoughts */
                if (js_val_truthy(&m->total))
                        r = js_val_copy(&total, &m->total);
                else if ((r = js_val_copy(&total, &m->prompt)) >= 0 &&
                         (r = js_val_add(&total, &m->candidates)) >= 0)
                        r = js_val_add(&total, &m->thoughts);
                if (r >= 0 && ((i > 0 && usage_puts(b, ",") < 0) ||
                               js_stringify_string(b, s->models.names[k], s->models.lens[k]) < 0 ||
                               usage_puts(b, ":{\"requests\":") < 0 ||
                               js_stringify_number(b, m->requests) < 0))
                        r = -ENOMEM;
                for (size_t j = 0; j < ELEMENTSOF(f) && r >= 0; j++)
                        if (usage_puts(b, f[j].key) < 0 || js_stringify_val(b, f[j].v) < 0)
                                r = -ENOMEM;
                if (r >= 0)
                        r = usage_puts(b, "}");
                js_val_done(&total);
                if (r < 0)
                        return r;
        }
        return usage_puts(b, "}");
}

static int usage_render_tools(StrBuf *b, Salvage *s) {
        _cleanup_free_ size_t *order = NULL;
        int r;

        r = js_key_order((const char *const *)s->tools.names, s->tools.lens, s->tools.n, &order);
        if (r < 0)
                return r;
        if (usage_puts(b, "\"tools\":{\"totalCalls\":") < 0 ||
            js_stringify_number(b, s->total_calls) < 0 || usage_puts(b, ",\"totalSuccess\":") < 0 ||
            js_stringify_number(b, s->total_success) < 0 || usage_puts(b, ",\"totalFail\":") < 0 ||
            js_stringify_number(b, s->total_fail) < 0 || usage_puts(b, ",\"byName\":{") < 0)
                return -ENOMEM;
        for (size_t i = 0; i < s->tools.n; i++) {
                size_t k = order[i];
                ToolStats *t = s->tools.values[k];

                if ((i > 0 && usage_puts(b, ",") < 0) ||
                    js_stringify_string(b, s->tools.names[k], s->tools.lens[k]) < 0 ||
                    usage_puts(b, ":{\"count\":") < 0 || js_stringify_number(b, t->count) < 0 ||
                    usage_puts(b, ",\"success\":") < 0 || js_stringify_number(b, t->success) < 0 ||
                    usage_puts(b, ",\"fail\":") < 0 || js_stringify_number(b, t->fail) < 0 ||
                    usage_puts(b, ",\"totalDurationMs\":") < 0 ||
                    js_stringify_val(b, &t->duration) < 0 || usage_puts(b, "}") < 0)
                        return -ENOMEM;
        }
        return usage_puts(b, "}}");
}

/* metricsToUsageRecord(): the line, in Qwen's key order. */
static int usage_render(Salvage *s, json_object *session_id, json_object *project, bool has_project,
                        double start, double end, char **ret) {
        StrBuf b = {};
        JsVal latency = {};
        int r = 0;

        for (size_t k = 0; k < s->models.n && r >= 0; k++)
                r = js_val_add(&latency, &((ModelStats *)s->models.values[k])->latency);
        if (r < 0)
                goto fail;

        if (usage_puts(&b, "{\"version\":1,\"sessionId\":") < 0 ||
            js_stringify(&b, session_id) < 0 || usage_puts(&b, ",\"timestamp\":") < 0 ||
            js_stringify_number(&b, end) < 0 || usage_puts(&b, ",\"startTime\":") < 0 ||
            js_stringify_number(&b, start) < 0)
                goto oom;
        /* JSON.stringify drops an undefined project (no cwd in the first record) */
        if (has_project &&
            (usage_puts(&b, ",\"project\":") < 0 || js_stringify(&b, project) < 0))
                goto oom;
        if (usage_puts(&b, ",\"durationMs\":") < 0 || js_stringify_number(&b, end - start) < 0 ||
            usage_puts(&b, ",\"totalLatencyMs\":") < 0 || js_stringify_val(&b, &latency) < 0 ||
            usage_puts(&b, ",") < 0)
                goto oom;
        r = usage_render_models(&b, s);
        if (r < 0)
                goto fail;
        if (usage_puts(&b, ",") < 0)
                goto oom;
        r = usage_render_tools(&b, s);
        if (r < 0)
                goto fail;
        if (usage_puts(&b, ",\"files\":{\"linesAdded\":") < 0 ||
            js_stringify_val(&b, &s->lines_added) < 0 || usage_puts(&b, ",\"linesRemoved\":") < 0 ||
            js_stringify_val(&b, &s->lines_removed) < 0 ||
            /* skills never reach transcripts: always the initial, empty metrics */
            usage_puts(&b, "},\"skills\":{\"totalCalls\":0,\"totalSuccess\":0,\"totalFail\":0,"
                           "\"byName\":{}}}\n") < 0)
                goto oom;
        js_val_done(&latency);
        *ret = strbuf_steal(&b);
        return 0;
oom:
        r = -ENOMEM;
fail:
        js_val_done(&latency);
        strbuf_done(&b);
        return r;
}

/* A file of at most this many bytes whose size is known is read whole, in one pread() that also
 * sees its end, and its last record is found in that text; longer ones are streamed. */
#define USAGE_WHOLE_MAX (1024 * 1024)

/* summarizeTranscript() + metricsToUsageRecord() of the transcript at fd, which the caller has
 * just seen at size bytes (UINT64_MAX: unknown, streamed). */
static int usage_summarize_sized(int fd, uint64_t size, char **ret_line, char **ret_key) {
        _cleanup_free_ char *text = NULL;
        Salvage s = {};
        json_object *last = NULL, *sid, *ts, *project;
        bool present, has_project;
        double start, end;
        int r;

        assert(ret_line);
        *ret_line = NULL;
        if (ret_key)
                *ret_key = NULL;
        r = size <= USAGE_WHOLE_MAX ? record_read_exact(fd, size, &text) : 0;
        if (r >= 0)
                r = text ? record_for_each_line_mem(text, (size_t)size, USAGE_MAX_LINE,
                                                    usage_line_cb, &s)
                         : record_for_each_line_at(fd, USAGE_MAX_LINE, usage_line_cb, &s);
        if (r < 0)
                goto finish;
        /* No summary at all: no records, a falsy sessionId, or a replay that throws (the
         * rebuild's try/catch skips the file before it remembers the id). */
        sid = s.first ? usage_get(s.first, "sessionId", &present) : NULL;
        if (!s.first || !js_truthy(sid, present) || s.threw) {
                r = 0;
                goto finish;
        }
        if (ret_key && !json_object_is_type(sid, json_type_object) &&
            !json_object_is_type(sid, json_type_array)) {
                /* a Set of ids compares strings, numbers and booleans by value (SameValueZero,
                 * which their JSON text reproduces: -0 prints as 0); objects never match */
                StrBuf k = {};
                if (js_stringify(&k, sid) < 0) {
                        strbuf_done(&k);
                        r = -ENOMEM;
                        goto finish;
                }
                *ret_key = strbuf_steal(&k);
                if (!*ret_key) {
                        r = -ENOMEM;
                        goto finish;
                }
        }
        r = 1;
        if (!s.has_events)
                goto finish; /* a summary without a record */

        /* The end is the last record within the bytes streamed (a writer may append more
         * meanwhile); an unreadable over-long last line leaves it unknown. */
        if (s.last_truncated) {
                r = -E2BIG;
                goto finish;
        }
        if (text) {
                size_t e;
                r = usage_last_scan(text, (size_t)s.end, true, &last, &e);
        } else
                r = usage_last_record(fd, s.end, &last);
        if (r < 0)
                goto finish;
        r = 1;
        ts = usage_get(s.first, "timestamp", &present);
        start = js_date_from_json(ts, present);
        ts = last ? usage_get(last, "timestamp", &present) : NULL;
        end = last ? js_date_from_json(ts, present) : NAN;
        if (isnan(start) || isnan(end))
                goto finish;
        project = usage_get(s.first, "cwd", &has_project);
        r = usage_render(&s, sid, project, has_project, start, end, ret_line);
        if (r >= 0)
                r = 1;
finish:
        if (r < 0 && ret_key) {
                free(*ret_key);
                *ret_key = NULL;
        }
        json_object_put(last);
        usage_salvage_done(&s);
        return r;
}

int usage_summarize(int fd, char **ret_line, char **ret_key) {
        return usage_summarize_sized(fd, UINT64_MAX, ret_line, ret_key);
}

int usage_build_record(int fd, char **ret_line) {
        int r = usage_summarize_sized(fd, UINT64_MAX, ret_line, NULL);
        return r < 0 ? r : 0;
}

int usage_build_record_sized(int fd, uint64_t size, char **ret_line) {
        int r = usage_summarize_sized(fd, size, ret_line, NULL);
        return r < 0 ? r : 0;
}

int usage_line_session_id(const char *line, char **ret) {
        static const char *const keys[] = { "sessionId" };
        JsonSpan span;
        json_object *v = NULL;
        char *s;
        int r;

        if (!line || !ret)
                return -EINVAL;
        r = json_members(line, strlen(line), /* validate= */ true, keys, 1, &span);
        if (r < 0)
                return r;
        if (!span.s || span.s[0] != '"')
                return -ENOMSG;
        r = json_parse(span.s, span.n, &v);
        if (r < 0)
                return r;
        s = strndup(json_object_get_string(v), (size_t)json_object_get_string_len(v));
        json_object_put(v);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}
