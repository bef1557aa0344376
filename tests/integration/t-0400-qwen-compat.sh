#!/bin/sh
# Qwen Code's own code (SessionService, usage-history readers) still lists and loads every kept
# session, lists the archived ones, and reads every salvaged usage line after a real qgc run.
# Needs node and npm (the npm registry); SKIP otherwise.
. "$(dirname "$0")/lib.sh"
command -v node >/dev/null && command -v npm >/dev/null || skip "node/npm not installed"
: "${QGC_SRCDIR:?}"
NPMDIR=${QGC_NPM_DIR:-/var/tmp/qgc-realqwen}
mkdir -p "$NPMDIR"
for f in net-guard.cjs package.json qwen-check.mjs qwen-check.sh qwen-internals.mjs qwen-session-op.mjs; do
        cmp -s "$QGC_SRCDIR/tests/realqwen/$f" "$NPMDIR/$f" || cp "$QGC_SRCDIR/tests/realqwen/$f" "$NPMDIR/$f"
done
chmod +x "$NPMDIR/qwen-check.sh"
if [ ! -d "$NPMDIR/node_modules/@qwen-code/qwen-code" ]; then
        (cd "$NPMDIR" && timeout 600 npm install --no-package-lock --no-audit --no-fund >"$NPMDIR/npm.log" 2>&1) ||
                skip "npm install of @qwen-code/qwen-code failed (see $NPMDIR/npm.log)"
fi

tree=$(make_tree tree)
NOW=2027-04-01T00:00:00Z
CONF="$QGC_TESTDATA/integration/apply.conf"
"$NPMDIR/qwen-check.sh" "$tree" > "$T/before.txt" 2>&1 || { cat "$T/before.txt"; fail "Qwen cannot read the pristine corpus"; }
run_qgc --dry-run --json --root "$tree" --now "$NOW" -c "$CONF" > "$T/plan.json" || fail "dry run"
run_qgc --root "$tree" --now "$NOW" -c "$CONF" --log-file "$T/actions.log" > /dev/null || fail "real run"

# every session qgc archived or deleted must have a usage line Qwen reads (when it had telemetry)
ids=$(python3 - "$T/plan.json" "$QGC_TESTDATA/corpus/golden/salvage.jsonl" <<'PY'
import json, os, sys
plan = json.load(open(sys.argv[1]))
golden = {}
for line in open(sys.argv[2]):
    g = json.loads(line)
    golden[os.path.basename(g["transcript"])[:-6]] = g["record"]
ids = [s["id"] for p in plan["projects"] for s in p["sessions"]
       if s["verb"] in ("archive", "delete") and golden.get(s["id"])]
print(",".join(ids))
PY
)
[ -n "$ids" ] || fail "the plan salvaged nothing: the test would prove nothing"
"$NPMDIR/qwen-check.sh" "$tree" --expect-usage "$ids" > "$T/after.txt" 2>&1 ||
        { cat "$T/after.txt"; fail "Qwen cannot read what qgc left"; }
tail -3 "$T/after.txt"
grep -q archived "$T/after.txt" || fail "Qwen lists no archived session"
pass "Qwen reads the tree after qgc (usage expected for $ids)"
