#!/bin/sh
# Config numbers that do not fit their key, and @include through the bounded reader: check-config
# and a dry run (and one real run) exit 78 with the value's file:line and the value as written,
# quickly, and nothing in the tree changes. libconfig 1.5 read 4294967297 as 1; an @include of a
# FIFO hung.
. "$(dirname "$0")/lib.sh"
tree=$(make_tree tree)
snapshot "$tree" "$T/s0"

# run_rc RC ARGS...: qgc within 10 s (a hang is a failure, not a stuck test), exit RC expected
run_rc() {
        want=$1; shift
        set +e; timeout 10 "$QGC" "$@" > "$T/out" 2> "$T/err"; rc=$?; set -e
        [ "$rc" = "$want" ] || { cat "$T/out" "$T/err"; fail "qgc $*: exit $rc, expected $want"; }
}

# expect_refused FILE LOC ECHO: check-config and a dry run refuse FILE with "LOC: ...ECHO..."
expect_refused() {
        for args in "check-config" "--dry-run --root $tree" "--dry-run --json --root $tree"; do
                # shellcheck disable=SC2086
                run_rc 78 $args -c "$1"
                grep -F -- "$2: " "$T/err" | grep -qF -- "$3" ||
                        { cat "$T/err"; fail "qgc $args: no error \"$2: ...$3...\""; }
                [ ! -s "$T/out" ] || { cat "$T/out"; fail "qgc $args printed a plan or OK"; }
        done
}

# group key value echo: each value at line 3 of its own file
n=0
while IFS='|' read -r group key value echo; do
        [ -n "$group" ] || continue
        n=$((n + 1))
        f="$T/num$n.conf"
        if [ "$group" = projects ]; then
                printf 'projects = (\n  { path = "/p";\n    %s = %s; }\n);\n' "$key" "$value" > "$f"
        else
                printf '%s = {\n  # the value\n  %s = %s;\n};\n' "$group" "$key" "$value" > "$f"
        fi
        expect_refused "$f" "$f:3" "$key: "
        grep -F -- "$f:3: " "$T/err" | grep -qF -- "$echo" ||
                { cat "$T/err"; fail "$key = $value: the error does not echo $echo"; }
done <<'CASES'
defaults|max-sessions|4294967297|4294967297
defaults|max-sessions|4294967296|4294967296
defaults|max-sessions|9223372036854775807|9223372036854775807
defaults|max-sessions|99999999999999999999L|99999999999999999999L
defaults|max-sessions|0x100000001|0x100000001
defaults|max-sessions|-1|-1
defaults|keep-latest|4294967296|4294967296
defaults|keep-latest|-4294967295|-4294967295
defaults|keep-latest|9223372036854775807L|9223372036854775807L
defaults|max-deletions|4294967297|4294967297
defaults|max-deletions|2.5|2.5
defaults|max-deletions-percent|4294967346|4294967346
defaults|max-deletions-percent|0x100000032|0x100000032
defaults|max-deletions-percent|-0.5|-0.5
defaults|max-deletions-percent|"150%"|"150%"
defaults|max-age|4294967297|4294967297
defaults|max-age|"1.5d"|"1.5d"
defaults|min-age|"-1d"|"-1d"
defaults|min-idle|"0.5h"|"0.5h"
defaults|archive-max-age|"36501d"|36501d
defaults|orphan-min-age|4294967297L|4294967297L
defaults|max-size|"1.5G"|"1.5G"
defaults|max-size|4294967297|4294967297
defaults|archive-max-size|"16777216T"|"16777216T"
projects|max-sessions|4294967297|4294967297
projects|keep-latest|4294967296|4294967296
tree|max-size|"0.5T"|"0.5T"
tree|low-watermark|-1|-1
tree|keep-free|"0.5%"|"0.5%"
tree|keep-free|"10.0%"|"10.0%"
tree|keep-free|4294967296|4294967296
admin|allow-user-files|4294967297|4294967297
CASES
[ "$n" -ge 30 ] || fail "only $n cases ran"

# a real run refuses too, and changes nothing
run_rc 78 --root "$tree" -c "$T/num1.conf"
grep -qF "$T/num1.conf:3: max-sessions: 4294967297" "$T/err" || { cat "$T/err"; fail "real run"; }

# --- @include -----------------------------------------------------------------------------
mkdir -p "$T/inc/sub" "$T/inc/dir"
mkfifo "$T/inc/fifo"
printf 'defaults = {\n  max-age = "30d";\n  @include "sub/a.conf"  # keep-latest, max-sessions\n  min-age = "1d";\n};\n' > "$T/inc/main.conf"
printf '# relative to this file: sub/b.conf\nkeep-latest = 2;\n@include "b.conf"\n' > "$T/inc/sub/a.conf"
printf 'max-sessions = 7;\n' > "$T/inc/sub/b.conf"
run_rc 0 check-config --explain -c "$T/inc/main.conf"
grep -qF "files: $T/inc/main.conf $T/inc/sub/a.conf $T/inc/sub/b.conf" "$T/out" ||
        { cat "$T/out"; fail "--explain does not list the included files in order"; }
grep -qF "$T/inc/sub/a.conf included from $T/inc/main.conf:3" "$T/out" || fail "--explain: a.conf"
grep -qF "$T/inc/sub/b.conf included from $T/inc/sub/a.conf:3" "$T/out" || fail "--explain: b.conf"
grep -q "max-sessions *7 *$T/inc/sub/b.conf:1" "$T/out" || { cat "$T/out"; fail "origin in include"; }
run_rc 0 --dry-run --root "$tree" -c "$T/inc/main.conf"

# an out-of-range number inside an include: the include's own file:line
printf '\nmax-sessions = 4294967297;\n' > "$T/inc/sub/b.conf"
expect_refused "$T/inc/main.conf" "$T/inc/sub/b.conf:2" "max-sessions: 4294967297 is out of range"

# include_refused NAME PATH NEEDLE [LOC]: main.conf including PATH is refused at LOC
include_refused() {
        printf '# %s\n@include "%s"\n' "$1" "$2" > "$T/inc/m.conf"
        start=$(date +%s)
        expect_refused "$T/inc/m.conf" "${4:-$T/inc/m.conf:2}" "$3"
        [ $(( $(date +%s) - start )) -lt 10 ] || fail "$1: took too long"
}
include_refused fifo fifo "not a regular file"
include_refused device /dev/zero "not a regular file"
include_refused directory dir "Is a directory"
include_refused missing nope.conf "No such file or directory"
include_refused self m.conf "include cycle"
head -c $((4 * 1024 * 1024 + 1)) /dev/zero | tr '\0' '#' > "$T/inc/big.conf"
include_refused oversized big.conf "larger than 4194304 bytes"
printf '@include "c2.conf"\n' > "$T/inc/c1.conf"
printf '@include "c1.conf"\n' > "$T/inc/c2.conf"
include_refused cycle c1.conf "include cycle" "$T/inc/c2.conf:1"
i=1
while [ $i -le 11 ]; do printf '@include "d%d.conf"\n' $((i + 1)) > "$T/inc/d$i.conf"; i=$((i + 1)); done
: > "$T/inc/d12.conf"
include_refused deep d1.conf "nested too deep" "$T/inc/d10.conf:1"

# a FIFO with a writer that never writes: still refused at once, never read
sleep 30 > "$T/inc/fifo" &
writer=$!
include_refused "fifo with a writer" fifo "not a regular file"
kill "$writer" 2>/dev/null || true
wait "$writer" 2>/dev/null || true

snapshot "$tree" "$T/s1"
diff "$T/s0" "$T/s1" >/dev/null || fail "a refused config changed the tree"
pass "config numbers and includes"
