/* live.c: is a session in use now? (qwen-layout.md §6) The signals of one session, from the
 * probe of its tree (live-probe.c: the registry records, already verified, and the writer locks'
 * names) and the runtime claims of its chats/ (claims.h): the liveness pass over a project's
 * sessions after the scan (live_pass()), the executor's re-check (live_check()) and whether a
 * project's shared files may be in use (live_project_busy()). Runtime claims are live when their
 * pid is alive here or their host is foreign (Qwen's isRuntimeStatusActive). Writer locks are live
 * unless provably stale: same host, boot and pid namespace, and the pid dead or started at another
 * time; a sealed lock is always live. Everything is read-only, by fd, without following symlinks. */
#include "autoconf.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "json.h"
#include "json-input.h"
#include "live.h"
#include "live-int.h"
#include "log.h"
#include "macro.h"
#include "qwen.h"

/* Read a small text file by absolute path (for /proc); NUL-terminated into buf. */
int live_read_small(const char *path, char *buf, size_t n) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        ssize_t k;

        if (fd < 0)
                return -errno;
        k = read(fd, buf, n - 1);
        if (k < 0)
                return -errno;
        buf[k] = 0;
        return (int)k;
}

int live_pid_start(int64_t pid, uint64_t *ret_ticks) {
        char path[64], buf[1024];
        const char *p;
        char state;
        unsigned long long ticks;
        int r;

        if (pid <= 0 || pid > INT_MAX)
                return -EINVAL;
        if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
                return 0;
        (void)snprintf(path, sizeof(path), "/proc/%" PRId64 "/stat", pid);
        r = live_read_small(path, buf, sizeof(buf));
        if (r == -ENOENT || r == -ESRCH)
                return 0;
        if (r < 0)
                return r;
        /* comm may contain anything, up to the LAST ')' */
        p = strrchr(buf, ')');
        if (!p || p[1] != ' ')
                return -EBADMSG;
        p += 2;
        state = *p;
        if (state == 'Z' || state == 'X')
                return 0;
        /* p is at field 3; starttime is field 22: skip 19 more fields */
        for (int i = 3; i < 22; i++) {
                p = strchr(p, ' ');
                if (!p)
                        return -EBADMSG;
                p++;
        }
        if (sscanf(p, "%llu", &ticks) != 1)
                return -EBADMSG;
        if (ret_ticks)
                *ret_ticks = ticks;
        return 1;
}

/* Add flag and a reason to s. */
static int live_add(Session *s, unsigned flag, const char *reason) {
        char *n;

        s->live |= flag;
        if (!reason)
                return 0;
        n = s->live_reason ? strprintf("%s; %s", s->live_reason, reason) : strdup(reason);
        if (!n)
                return -ENOMEM;
        free(s->live_reason);
        s->live_reason = n;
        return 0;
}

/* Evaluate one claim naming s. */
static int live_check_claim(const LiveProbe *p, Session *s, const RuntimeClaim *c) {
        _cleanup_free_ char *why = NULL;
        int r;

        if (c->malformed) {
                why = strprintf("runtime claim '%s' unreadable", c->file);
                return why ? live_add(s, LIVE_UNKNOWN, why) : -ENOMEM;
        }
        if (c->pid <= 0)
                return 0; /* Qwen: not active */
        if (!c->hostname || !streq(c->hostname, p->hostname)) {
                why = strprintf("runtime claim pid %" PRId64 " on host '%s'", c->pid,
                                c->hostname ? c->hostname : "(none)");
                return why ? live_add(s, LIVE_CLAIM, why) : -ENOMEM;
        }
        r = live_pid_start(c->pid, NULL);
        if (r == 0)
                return 0;
        why = strprintf("runtime claim pid %" PRId64 " alive", c->pid);
        return why ? live_add(s, LIVE_CLAIM, why) : -ENOMEM;
}

/* The writer lock verdict for an open lock record. NULL reason: stale. */
static int live_lock_eval(const LiveProbe *p, json_object *o, char **ret_reason) {
        const char *state = json_get_string(o, "state");
        const char *host = json_get_string(o, "hostname");
        const char *psi = json_get_string(o, "process_start_identity");
        json_object *ns = NULL;
        int64_t pid = 0;
        uint64_t now_ticks;
        unsigned long long ticks;
        const char *colon;
        size_t blen;
        int r;

        *ret_reason = NULL;
#define LIVE_LOCKED(...)                                                                           \
        do {                                                                                       \
                *ret_reason = strprintf(__VA_ARGS__);                                              \
                return *ret_reason ? 0 : -ENOMEM;                                                  \
        } while (0)

        if (!json_object_is_type(o, json_type_object))
                LIVE_LOCKED("writer lock malformed");
        if (state && streq(state, "sealed"))
                LIVE_LOCKED("writer lock sealed");
        if (state && !streq(state, "active"))
                LIVE_LOCKED("writer lock in state '%s'", state);
        if (json_object_object_get_ex(o, "state", &ns) && ns && !state)
                LIVE_LOCKED("writer lock malformed");
        if (!host || !streq(host, p->hostname))
                LIVE_LOCKED("writer lock held on host '%s'", host ? host : "(none)");
        if (!json_get_int(o, "pid", &pid) || pid <= 0)
                LIVE_LOCKED("writer lock malformed");
        if (!psi || !strneq(psi, "linux:", 6) || !p->boot_known)
                LIVE_LOCKED("writer lock pid %" PRId64 ": start identity not checkable", pid);
        psi += 6;
        colon = strrchr(psi, ':');
        blen = strlen(p->boot_id);
        if (!colon || sscanf(colon + 1, "%llu", &ticks) != 1)
                LIVE_LOCKED("writer lock malformed");
        if ((size_t)(colon - psi) != blen || !strneq(psi, p->boot_id, blen))
                LIVE_LOCKED("writer lock pid %" PRId64 " from another boot", pid);
        if (json_object_object_get_ex(o, "pid_namespace_id", &ns) && ns) {
                int64_t v = 0;
                const char *sv = json_object_is_type(ns, json_type_string) ?
                                         json_object_get_string(ns) :
                                         NULL;
                bool same;
                if (json_object_is_type(ns, json_type_int))
                        v = json_object_get_int64(ns);
                else if (sv) {
                        /* "pid:[4026531836]" or "4026531836" */
                        const char *dgt = sv + strcspn(sv, "0123456789");
                        v = strtoll(dgt, NULL, 10);
                }
                same = p->pidns_known && v > 0 && (uint64_t)v == p->pidns;
                if (!same)
                        LIVE_LOCKED("writer lock pid %" PRId64 " in another pid namespace", pid);
        }
        r = live_pid_start(pid, &now_ticks);
        if (r < 0)
                LIVE_LOCKED("writer lock pid %" PRId64 ": cannot check the process", pid);
        if (r == 0 || now_ticks != ticks)
                return 0; /* stale: Qwen would reclaim it */
        LIVE_LOCKED("writer lock held by pid %" PRId64, pid);
#undef LIVE_LOCKED
}

/* The writer lock R/tmp/session-writer-locks/<id>.lock. */
static int live_check_lock(const LiveProbe *p, Session *s) {
        _cleanup_free_ char *why = NULL;
        char name[SESSION_ID_MAX + sizeof(".lock")];
        const char *key = name;
        json_object *o = NULL;
        size_t k = strnlen(s->id, SESSION_ID_MAX);
        int r;

        memcpy(name, s->id, k);
        memcpy(name + k, ".lock", sizeof(".lock"));
        if (p->locks_problem)
                return live_add(s, LIVE_UNKNOWN, p->locks_problem);
        if (p->n_locks == 0 ||
            !bsearch(&key, p->locks, p->n_locks, sizeof(char *), live_cmp_name))
                return 0;
        r = json_input_read(p->locks_fd, name, JSON_INPUT_WRITER_LOCK, &o);
        if (r == -ENOENT)
                return 0; /* released since the listing */
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return live_add(s, LIVE_LOCK, "writer lock unreadable");
        r = live_lock_eval(p, o, &why);
        json_object_put(o);
        if (r < 0)
                return r;
        return why ? live_add(s, LIVE_LOCK, why) : 0;
}

int live_check_claims(const LiveProbe *p, Session *s, const ClaimSet *claims) {
        size_t first, end;
        int r;

        if (p->registry_problem) {
                r = live_add(s, LIVE_UNKNOWN, p->registry_problem);
                if (r < 0)
                        return r;
        }
        /* first registry entry for the id, then every entry with it */
        first = 0;
        end = p->n_reg;
        while (first < end) {
                size_t mid = first + (end - first) / 2;
                if (live_reg_cmp_id(&p->reg[mid], s->id) < 0)
                        first = mid + 1;
                else
                        end = mid;
        }
        for (size_t i = first; i < p->n_reg; i++) {
                const LiveRegEntry *e = &p->reg[i];
                if (live_reg_cmp_id(e, s->id) != 0)
                        break;
                if (e->flags == 0) {
                        log_debug("session %s: %s", s->id, e->reason);
                        continue;
                }
                r = live_add(s, e->flags, e->reason);
                if (r < 0)
                        return r;
        }
        claims_range(claims, s->id, &first, &end);
        for (size_t i = first; i < end; i++) {
                if (!claims_match(&claims->claims[i], s->id))
                        continue;
                r = live_check_claim(p, s, &claims->claims[i]);
                if (r < 0)
                        return r;
        }
        return live_check_lock(p, s);
}

int live_pass(const LiveProbe *p, Session *sessions, const LiveFacts *facts, size_t n,
              const ClaimSet *claims) {
        int r;

        for (size_t i = 0; i < n; i++) {
                Session *s = &sessions[i];

                if (p) {
                        r = live_check_claims(p, s, claims);
                        if (r < 0)
                                return r;
                } else {
                        s->live |= LIVE_UNKNOWN;
                        s->live_reason = strdup("liveness probe unavailable");
                        if (!s->live_reason)
                                return -ENOMEM;
                }
                if (facts[i].subagents_incomplete) {
                        /* a recent subagent write may be missing from last_write: count it as
                         * in use */
                        s->live |= LIVE_UNKNOWN;
                        if (!s->live_reason &&
                            !(s->live_reason = strdup("subagents/ could not be listed")))
                                return -ENOMEM;
                }
        }
        return 0;
}

int live_check(const LiveProbe *p, Session *s, int chats_fd) {
        _cleanup_(claims_done) ClaimSet claims = {};
        _cleanup_(live_probe_freep) LiveProbe *fresh = NULL;
        Tree t = { .global_dir = p->global_dir, .runtime_dir = p->runtime_dir };
        int r;

        /* the re-check before an action: registry and locks as they are now, not at scan time */
        r = live_probe_new(&t, &fresh);
        if (r < 0)
                return r;

        if (chats_fd >= 0) {
                r = claims_load(&claims, chats_fd);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        r = live_add(s, LIVE_UNKNOWN, "runtime claims unreadable");
                        if (r < 0)
                                return r;
                }
        }
        return live_check_claims(fresh, s, &claims);
}

/* Evaluate the signals of id (registry, claims, lock) on a scratch session: 1 live, 0 not. */
static int live_busy_id(const LiveProbe *p, const ClaimSet *claims, const char *id,
                        char **ret_reason) {
        Session s = {};
        int r;

        snprintf(s.id, sizeof s.id, "%s", id);
        r = live_check_claims(p, &s, claims);
        if (r < 0) {
                free(s.live_reason);
                return r;
        }
        if (s.live == 0) {
                free(s.live_reason);
                return 0;
        }
        *ret_reason = s.live_reason ? strprintf("session %s: %s", s.id, s.live_reason)
                                    : strprintf("session %s in use", s.id);
        free(s.live_reason);
        return *ret_reason ? 1 : -ENOMEM;
}

int live_project_busy(const Tree *t, int chats_fd, bool (*elsewhere)(const char *id, void *userdata),
                      void *userdata, char **ret_reason) {
        _cleanup_(claims_done) ClaimSet claims = {};
        _cleanup_(live_probe_freep) LiveProbe *p = NULL;
        int r;

        r = live_probe_new(t, &p);
        if (r < 0)
                return r;
        if (p->registry_problem || p->locks_problem) {
                *ret_reason = strdup(p->registry_problem ?: p->locks_problem);
                return *ret_reason ? 1 : -ENOMEM;
        }
        if (chats_fd >= 0) {
                r = claims_load(&claims, chats_fd);
                if (r < 0) {
                        *ret_reason = strdup("runtime claims unreadable");
                        return *ret_reason ? 1 : -ENOMEM;
                }
        }
        for (size_t i = 0; i < p->n_reg; i++) {
                if (p->reg[i].flags == 0 || elsewhere(p->reg[i].session_id, userdata))
                        continue;
                r = live_busy_id(p, &claims, p->reg[i].session_id, ret_reason);
                if (r != 0)
                        return r;
        }
        for (size_t i = 0; i < claims.n; i++) {
                const RuntimeClaim *c = &claims.claims[i];
                char id[SESSION_ID_MAX + 1];
                size_t k;

                if (c->malformed || !c->session_id) {
                        *ret_reason = strprintf("runtime claim '%s' unreadable", c->file);
                        return *ret_reason ? 1 : -ENOMEM;
                }
                k = strcspn(c->session_id, "");
                snprintf(id, sizeof id, "%.*s", (int)MIN(k, (size_t)SESSION_ID_MAX),
                         c->session_id);
                if (elsewhere(id, userdata))
                        continue;
                r = live_busy_id(p, &claims, id, ret_reason);
                if (r != 0)
                        return r;
        }
        for (size_t i = 0; i < p->n_locks; i++) {
                char id[SESSION_ID_MAX + 1];
                size_t k = strlen(p->locks[i]) - strlen(".lock");

                if (k > SESSION_ID_MAX)
                        continue; /* not a session's lock name */
                snprintf(id, sizeof id, "%.*s", (int)k, p->locks[i]);
                if (elsewhere(id, userdata))
                        continue;
                r = live_busy_id(p, &claims, id, ret_reason);
                if (r != 0)
                        return r;
        }
        return 0;
}
