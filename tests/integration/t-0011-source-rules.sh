#!/bin/sh
# t-0011-source-rules: rules of the source that no compiler checks.
#   - errno becomes text only through errno_to_string() (log.c): strerror() is not thread-safe,
#     and the scan's worker threads report errors.
#   - one FNV-1a (hashmap.c): no other copy of its offset basis or prime, right or wrong.
#   - one UTF-8 decoder (utf8.c), one days_from_civil and ISO 8601 parser (js.c).
#   - one case-insensitive comparison of ids: util.c's ascii_strcasecmp() family (no locale);
#     the C library's strcasecmp()/tolower() only for the policy file's words (conftext.c,
#     config-value.c's suggestions), never for ids.
# Each rule is checked on a planted violation first, so a rule that never fires fails.
. "$(dirname "$0")/lib.sh"
: "${QGC_SRCDIR:?QGC_SRCDIR must name the source tree}"

# rule NAME REGEX ALLOWED-FILE...: REGEX matches in no src/*.[ch] but the allowed ones.
rule() {
        name=$1 re=$2
        shift 2
        hits=$(cd "$QGC_SRCDIR/src" && grep -nE "$re" -- *.c *.h | while IFS=: read -r f rest; do
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
( QGC_SRCDIR=$T; rule planted '(^|[^_a-z])strerror\(' ) 2>/dev/null && fail "a planted strerror() was not reported"

rule "no strerror() outside log.c" '(^|[^_a-z])strerror\(' log.c log.h
rule "one FNV-1a" '1469598103934665603|14695981039346656037|cbf29ce484222325|1099511628211|100000001b3' hashmap.h hashmap.c
rule "one days_from_civil" 'days_from_civil\(' js.c js.h
rule "one UTF-8 decoder" '0xc2 && .*<= 0xdf' utf8.c
rule "one id compare ignoring case" '(^|[^_a-z])(str(n)?casecmp|tolower)\(' conftext.c config-value.c
exit 0
