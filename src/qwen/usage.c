/* usage.c: the telemetry replay of the usage salvage: Qwen Code's UiTelemetryService fed a
 * transcript's ui_telemetry events (api_response, api_error, tool_call), with the per-model
 * and per-tool counters it keeps. usagerecord.c streams the transcript into it and builds the
 * usage_record.jsonl line (summarizeTranscript, metricsToUsageRecord in Qwen 0.24); writing the
 * line is usageidx.c's job, the one owner of usage_record.jsonl.
 *
 * Qwen does this in JavaScript, so the arithmetic is JavaScript's (js.c): fields are added with
 * "+=" whatever their type (a missing one gives NaN, serialized as null; a string turns the sum
 * into a string), names are property keys, and some hostile names make Qwen throw, in which
 * case it writes nothing. */
#include "autoconf.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hashmap.h"
#include "js.h"
#include "macro.h"
#include "record.h"
#include "usage-int.h"
#include "usage.h"

#define USAGE_STR_MAX (8 * 1024 * 1024)   /* budget for sums that JavaScript turned into strings */

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
        void *e = hashmap_get(&m->index, hash_bytes(s, n), usage_map_eq, &(NameKey){ m, s, n });

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
        return hashmap_put(&m->index, hash_bytes(s, n), (void *)(uintptr_t)m->n);
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

void usage_salvage_done(Salvage *s) {
        json_object_put(s->first);
        usage_map_done(&s->models, usage_model_free);
        usage_map_done(&s->tools, usage_tool_free);
        js_val_done(&s->lines_added);
        js_val_done(&s->lines_removed);
        strbuf_done(&s->key);
}

const char *const usage_event_keys[_USAGE_EV_MAX] = {
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
const char *const usage_meta_keys[USAGE_META_MAX] = { "model_added_lines", "model_removed_lines" };

json_object *usage_get(json_object *obj, const char *key, bool *ret_present) {
        json_object *v = NULL;

        *ret_present = json_object_is_type(obj, json_type_object) &&
                       json_object_object_get_ex(obj, key, &v);
        return v;
}

/* The value of a validated JSON number text exactly as record_json_parse() makes it (int64 for
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
        if (record_json_parse(sp->s, sp->n, ret_owned) < 0)
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
int usage_api_event(Salvage *s, const UsageEvent *ev, bool is_error) {
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
                        if (record_json_parse(sp->s, sp->n, &o) < 0)
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
int usage_tool_event(Salvage *s, const UsageEvent *ev) {
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

bool usage_string_is_value(json_object *v, const char *want) {
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
int usage_record_cb(json_object *obj, void *userdata) {
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
