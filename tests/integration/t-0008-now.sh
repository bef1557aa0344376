#!/bin/sh
# t-0008-now: --now forecasts ages, never liveness. A real run "as of" a date far ahead archives
# or deletes what has aged by then, but never a session (or orphan) written within min-idle by
# the real clock: on trees of Qwen 0.12-0.15 (no registry, no runtime claims) the mtime grace is
# the only sign that a session is in use.
. "$(dirname "$0")/lib.sh"

tree=$(make_tree q)
cat > "$T/delete.conf" <<'CONF'
defaults = { action = "delete"; max-age = "30d"; keep-latest = 0; min-idle = "1d";
             orphan-min-age = "7d"; max-deletions = "off"; };
CONF
# one session of each project written just now (as a running Qwen would), the rest long ago
fresh=""
for p in "$tree"/projects/*/chats; do
        f=$(ls "$p"/*.jsonl 2>/dev/null | head -n 1)
        [ -n "$f" ] || continue
        touch "$f"
        fresh="$fresh $f"
done
[ -n "$fresh" ] || fail "the corpus has no transcript"
mkdir -p "$tree/file-history/01234567-89ab-4def-8123-456789abcdef"
echo data > "$tree/file-history/01234567-89ab-4def-8123-456789abcdef/x@v1"

run_qgc --root "$tree" -c "$T/delete.conf" --now 2040-01-01T00:00:00Z --log-target stderr \
        > "$T/run.out" 2> "$T/run.err" || { cat "$T/run.out" "$T/run.err"; fail "real run"; }
cat "$T/run.out"
for f in $fresh; do
        [ -f "$f" ] || fail "a session written just now was deleted by a run with --now: $f"
done
[ -d "$tree/file-history/01234567-89ab-4def-8123-456789abcdef" ] ||
        fail "an orphan written just now was reclaimed by a run with --now"
grep -q "deleted [1-9]" "$T/run.out" || fail "the forecast deleted nothing: the test proves nothing"

# the plan says why
run_qgc --root "$tree" -c "$T/delete.conf" --now 2040-01-01T00:00:00Z --dry-run > "$T/dry.out"
grep -q "in use: written .* ago < min-idle 1d" "$T/dry.out" ||
        { cat "$T/dry.out"; fail "no min-idle reason in the plan"; }
pass "--now ahead keeps sessions written within min-idle"
