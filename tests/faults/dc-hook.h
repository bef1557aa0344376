/* dc-hook.h: what the Deep Code fault tests (test_dc_run.c, test_dc_cold.c, test_dc_restore.c)
 * share: the hook at every step of the executor (ld --wrap=actions_report_step), which crashes
 * the run after its nth step or, at the index edit's hook, rewrites the index as Deep Code does
 * (whole, with no lock); the session ids and the store's paths of their fixtures; a store of a
 * project a Deep Code process works in (dc-process.h). Included once per test program: it
 * defines the wrap. */
#pragma once

#include <stdio.h>
#include <unistd.h>

#include "dc-process.h"
#include "dc-project.h"
#include "fixture.h"
#include "macro.h"
#include "util.h"

#define ID1 "aaaaaaaa-0000-4000-8000-000000000001"
#define ID2 "aaaaaaaa-0000-4000-8000-000000000002"
#define ID3 "aaaaaaaa-0000-4000-8000-000000000003"
#define ID4 "aaaaaaaa-0000-4000-8000-000000000004"
#define ID5 "aaaaaaaa-0000-4000-8000-000000000005"
#define DC "h/.deepcode"
#define PROJ DC "/projects/-srv-x"
#define ARC DC "/.qgc-archive/-srv-x"
/* An index's first lines as Deep Code 0.2.1 writes it (JSON.stringify(index, null, 2)). */
#define HEAD "{\n  \"version\": 1,\n  \"entries\": [\n"

static struct {
        unsigned crash_after, n_steps; /* _exit(99) right after the nth step (0: never) */
        const char *rewrite_index;     /* at the index edit's hook, Deep Code writes this ... */
        const char *rewrite_text;      /* ... text there (once) */
        void (*before_exec)(void);     /* between the scan and the run (test_dc_cold.c) */
} hk;

void __real_actions_report_step(void *userdata, const char *what);
void __wrap_actions_report_step(void *userdata, const char *what);
void __wrap_actions_report_step(void *userdata, const char *what) {
        __real_actions_report_step(userdata, what);
        if (hk.rewrite_text && strneq(what, "replace projects/", 17)) {
                _cleanup_free_ char *tmp = util_strprintf("%s.dc-tmp", hk.rewrite_index);
                FILE *f = fopen(tmp, "we");

                assert_non_null(f);
                assert_int_equal(fputs(hk.rewrite_text, f) >= 0, 1);
                assert_int_equal(fclose(f), 0);
                assert_int_equal(rename(tmp, hk.rewrite_index), 0); /* as a whole rewrite */
                hk.rewrite_text = NULL;
        }
        if (hk.crash_after > 0 && ++hk.n_steps >= hk.crash_after)
                _exit(99);
}

/* A store under root whose one project is at the real directory root/work/proj (its code:
 * getProjectCode's), ID1 indexed with its .jsonl: for the tests of a Deep Code process working
 * there. Paths relative to root; dc_live_done() frees them. */
typedef struct DcLive {
        char *work;  /* absolute */
        char *code;
        char *index; /* the index's text */
        char *rel;   /* the index */
        char *jsonl;
} DcLive;

static inline void dc_live_store(const char *root, DcLive *l) {
        *l = (DcLive){ .work = fixture_path(root, "work/proj") };
        assert_int_equal(fixture_mkdir(root, "work/proj"), 0);
        assert_int_equal(dc_project_code(l->work, &l->code), 0);
        l->index = util_strprintf("{\n  \"version\": 1,\n  \"entries\": [\n    {\n      \"id\": \"" ID1
                                  "\",\n      \"status\": \"completed\"\n    }\n  ],\n"
                                  "  \"originalPath\": \"%s\"\n}",
                                  l->work);
        l->rel = util_strprintf(DC "/projects/%s/sessions-index.json", l->code);
        l->jsonl = util_strprintf(DC "/projects/%s/" ID1 ".jsonl", l->code);
        assert_non_null(l->index);
        assert_non_null(l->rel);
        assert_non_null(l->jsonl);
        assert_int_equal(fixture_write(root, l->rel, l->index), 0);
        assert_int_equal(fixture_write(root, l->jsonl, "{\"sessionId\":\"" ID1 "\"}\n"), 0);
}

static inline void dc_live_done(DcLive *l) {
        free(l->work);
        free(l->code);
        free(l->index);
        free(l->rel);
        free(l->jsonl);
}
