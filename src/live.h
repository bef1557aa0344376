/* live.h: is a session in use now? Registry records (G/sessions), runtime claims (chats/),
 * writer locks (R/tmp/session-writer-locks). Read-only; fails closed (LIVE_UNKNOWN). */
#pragma once

#include "inventory.h"

typedef struct LiveProbe LiveProbe;

/* Load the registry of a tree once (G/sessions/<pid>.json), with this host's boot id and pid ns. */
int live_probe_new(const Tree *t, LiveProbe **ret);
LiveProbe *live_probe_free(LiveProbe *p);
static inline void live_probe_freep(LiveProbe **p) {
        live_probe_free(*p);
}

/* Set s->live and s->live_reason from the registry, claims in chats_fd and the writer lock. */
int live_check(const LiveProbe *p, Session *s, int chats_fd);
