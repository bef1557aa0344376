#!/bin/sh
# t-0011-source-rules: rules of the source that no compiler checks.
#   - errno becomes text only through errno_to_string() (log.c): strerror() is not thread-safe,
#     and the scan's worker threads report errors.
#   - one FNV-1a (hashmap.c): no other copy of its offset basis or prime, right or wrong.
#   - one UTF-8 decoder (utf8.c), one days_from_civil and ISO 8601 parser (js.c).
#   - one case-insensitive comparison of ids: util.c's ascii_strcasecmp() family (no locale);
#     the C library's strcasecmp()/tolower() only for the policy file's words (conftext.c,
#     config-value.c's suggestions), never for ids.
#   - no cycle between modules, neither of includes (src/*.[ch]) nor of calls (the symbols the
#     objects of libqgc.a define and use, by nm). A module is a file's name up to its first '-'
#     or '.' (scan-session.c is scan), and a file that includes X-int.h belongs to module X
#     (scanpool.c is scan, recordtail.c record); an edge A -> B is a file of A including a
#     header of B, or an object of A using a symbol an object of B defines. The exceptions are
#     listed in EXCEPT with their reason, and one that no longer occurs fails (remove it).
# Each rule is checked on a planted violation first, so a rule that never fires fails.
. "$(dirname "$0")/lib.sh"
: "${QGC_SRCDIR:?QGC_SRCDIR must name the source tree}"
# the rules below read one flat view of src/*/ (a file's folder is its layer)
mkdir -p "$T/flat/src"
ln -s "$QGC_SRCDIR"/src/*/*.[ch] "$T/flat/src/"
SRC_TREE=$T/flat

# rule NAME REGEX ALLOWED-FILE...: REGEX matches in no src/*.[ch] but the allowed ones.
rule() {
        name=$1 re=$2
        shift 2
        hits=$(cd "${SRC_TREE:-$QGC_SRCDIR}/src" && grep -nE "$re" -- *.c *.h | while IFS=: read -r f rest; do
                ok=0
                for a in "$@"; do [ "$f" = "$a" ] && ok=1; done
                [ $ok = 1 ] || echo "$f:$rest"
        done)
        [ -z "$hits" ] || { echo "$hits" >&2; fail "$name"; }
        pass "$name"
}

# the checks fire on a planted violation
mkdir -p "$T/src"
printf 'x = strerror(e);\n' > "$T/src/bad.c"
( SRC_TREE=$T; rule planted '(^|[^_a-z])strerror\(' ) 2>/dev/null && fail "a planted strerror() was not reported"

rule "no strerror() outside log.c" '(^|[^_a-z])strerror\(' log.c log.h
rule "one FNV-1a" '1469598103934665603|14695981039346656037|cbf29ce484222325|1099511628211|100000001b3' hashmap.h hashmap.c
rule "one days_from_civil" 'days_from_civil\(' js.c js.h
rule "one UTF-8 decoder" '0xc2 && .*<= 0xdf' utf8.c
rule "one id compare ignoring case" '(^|[^_a-z])(str(n)?casecmp|tolower)\(' conftext.c config-value.c

# modules DIR: "file module" for each DIR/*.[ch]
modules() {
        ( cd "$1" && for f in *.c *.h; do
                [ -e "$f" ] || continue
                m=${f%%.*}
                i=$(sed -n 's/^#include "\([a-z0-9_-]*\)-int\.h".*/\1/p' "$f" | head -n 1)
                [ -z "$i" ] || m=$i
                echo "$f ${m%%-*}"
        done )
}

# Edges left out of the graphs, "file:header" or "file:symbol", each with its reason (none
# today; the stale project entry's quote of the session that keeps it is rendered by reason.c
# from VerdictFacts.quote, so policy-stale.c no longer calls reason_verdict()).
EXCEPT=""

# include_edges DIR MODS: "A B" for each module A with a file including a header of module B
include_edges() {
        ( cd "$1" && grep -H '^#include "' -- *.c *.h ) |
        sed 's/^\([^:]*\):#include "\([^"]*\)".*/\1 \2/' |
        awk -v except="$EXCEPT" 'BEGIN { n = split(except, e, " "); for (i = 1; i <= n; i++) x[e[i]] = 1 }
             NR == FNR { m[$1] = $2; next }
             ($1 ":" $2) in x { next }
             ($1 in m) && ($2 in m) && m[$1] != m[$2] { print m[$1], m[$2] }' "$2" - | sort -u
}

# call_edges ARCHIVE MODS: "A B" for each module A whose object uses a symbol defined in one of B
call_edges() {
        nm -A "$1" | awk -v mods="$2" -v except="$EXCEPT" '
        BEGIN { while ((getline l < mods) > 0) { split(l, f, " "); m[f[1]] = f[2] }
                n = split(except, e, " "); for (i = 1; i <= n; i++) x[e[i]] = 1 }
        NF == 3 {
                n = split($1, p, ":"); obj = p[n - 1]
                sub(/^libqgc_a-/, "", obj); sub(/\.o$/, ".c", obj)
                if ($2 ~ /^[TDRBCV]$/) def[$3] = obj
                else if ($2 == "U") { k++; uo[k] = obj; us[k] = $3 }
        }
        END {
                for (i = 1; i <= k; i++)
                        if ((us[i] in def) && m[uo[i]] != "" && m[def[us[i]]] != "" &&
                            m[uo[i]] != m[def[us[i]]] && !((uo[i] ":" us[i]) in x))
                                print m[uo[i]], m[def[us[i]]]
        }' | sort -u
}

# acyclic NAME EDGES-FILE: fails with the loop tsort finds (and the edges between its modules)
acyclic() {
        if ! tsort "$2" >/dev/null 2>"$T/tsort.err"; then
                loop=$(sed -n 's/^tsort: \([a-z0-9_]*\)$/\1/p' "$T/tsort.err" | sort -u | tr '\n' ' ')
                echo "modules in a cycle: $loop" >&2
                for a in $loop; do for b in $loop; do
                        grep -x "$a $b" "$2" | sed 's/ / -> /' >&2
                done; done
                fail "$1"
        fi
        pass "$1"
}

# the checks fire on planted cycles: a.c includes b.h and calls b(), b.c includes a.h and calls a()
mkdir -p "$T/cyc"
printf 'int a(void);\n' > "$T/cyc/a.h"
printf 'int b(void);\n' > "$T/cyc/b.h"
printf '#include "a.h"\n#include "b.h"\nint a(void) { return b(); }\n' > "$T/cyc/a.c"
printf '#include "b.h"\n#include "a.h"\nint b(void) { return a(); }\n' > "$T/cyc/b-x.c"
modules "$T/cyc" > "$T/cyc.mods"
include_edges "$T/cyc" "$T/cyc.mods" > "$T/cyc.inc"
( acyclic planted "$T/cyc.inc" ) 2>/dev/null && fail "a planted include cycle was not reported"
cc=${CC:-cc}
if command -v "$cc" >/dev/null 2>&1 && command -v ar >/dev/null 2>&1 &&
   ( cd "$T/cyc" && "$cc" -c a.c b-x.c && ar rc libplanted.a a.o b-x.o ) 2>/dev/null; then
        call_edges "$T/cyc/libplanted.a" "$T/cyc.mods" > "$T/cyc.call"
        [ -s "$T/cyc.call" ] || fail "nm found no call edge in a planted archive"
        ( acyclic planted "$T/cyc.call" ) 2>/dev/null && fail "a planted call cycle was not reported"
else
        part_skipped "no C compiler or ar to plant a call cycle"
fi

# an exception that no longer occurs fails: it would hide a later edge
for e in $EXCEPT; do
        grep -q -e "^#include \"${e#*:}\"" -e "${e#*:}(" "$SRC_TREE/src/${e%%:*}" 2>/dev/null ||
                fail "the exception $e no longer occurs: remove it from EXCEPT"
done
modules "$SRC_TREE/src" > "$T/mods"
include_edges "$SRC_TREE/src" "$T/mods" > "$T/inc"
[ -s "$T/inc" ] || fail "no include edge found in src/"
acyclic "no include cycle between modules" "$T/inc"
lib=${QGC_BUILDDIR:-}/libqgc.a
if [ -n "${QGC_BUILDDIR:-}" ] && [ -f "$lib" ] && command -v nm >/dev/null 2>&1; then
        call_edges "$lib" "$T/mods" > "$T/call"
        [ -s "$T/call" ] || fail "nm found no call edge in libqgc.a"
        acyclic "no call cycle between modules" "$T/call"
else
        part_skipped "no libqgc.a (QGC_BUILDDIR) or no nm: calls not checked"
fi
finish
