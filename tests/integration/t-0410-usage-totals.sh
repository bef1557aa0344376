#!/bin/sh
# Qwen is the judge: Qwen's /stats totals do not change when qgc archives or deletes (issue 9,
# item 8), and Qwen still lists and loads every session qgc kept or archived. Qwen Code 0.24.4's
# own loadUsageHistory and aggregateUsage read each tree before and after a real run: every
# session Qwen counted is still counted with the same record, and the only sessions that may
# appear are ones the run removed that Qwen did not count yet (their salvaged line, as Qwen's
# own removeSession writes it). Its SessionService lists and loads every session before and
# after: kept ones in their old state, archived ones as archived, deleted ones gone, each with
# as many messages as before. Trees: every committed one, the corpus (a 0.24.4 tree with
# usage_record.jsonl) and each tests/data/qwen0NN/tree written by an older Qwen Code (0.12.0 and
# 0.15.10 write no usage file; 0.21.10 and 0.23.4 do), plus each tree that has a usage file
# without it (Qwen rebuilds /stats from the transcripts). The compress runs (compress-after) take
# each tree after an archive run: Qwen's totals stay, it lists and loads every session kept or
# archived and none compressed. Needs node and npm (SKIP otherwise).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/qwen-npm.sh"

NOW=2027-04-01T00:00:00Z

# plan_ids PLAN.json: the sessions the plan archives or deletes, comma-separated.
plan_ids() {
        python3 - "$1" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
print(",".join(s["id"] for p in plan["projects"] for s in p["sessions"]
               if s["verb"] in ("archive", "delete", "compress")))
PY
}

# check_run TREE NAME CONF: a real run on TREE, Qwen's totals before and after compared.
check_run() {
        tree=$1 name=$2 conf=$3
        qwen_usage "$tree" "$T/$name.before.json"
        cp "$tree/usage_record.jsonl" "$T/$name.usage-before" 2>/dev/null || rm -f "$T/$name.usage-before"
        run_qgc --dry-run --json --root "$tree" --now "$NOW" -c "$conf" > "$T/$name.plan.json" || fail "$name: dry run"
        ids=$(plan_ids "$T/$name.plan.json")
        [ -n "$ids" ] || fail "$name: the plan acts on nothing: the test would prove nothing"
        "$NPMDIR/qwen-check.sh" "$tree" --json > "$T/$name.list-before.json" 2> "$T/$name.list-before.err" ||
                { "$NPMDIR/qwen-check.sh" "$tree"; fail "$name: Qwen cannot read the pristine tree"; }
        run_qgc --root "$tree" --now "$NOW" -c "$conf" > "$T/$name.out" 2>&1 || { cat "$T/$name.out"; fail "$name: real run"; }
        qwen_usage "$tree" "$T/$name.after.json"
        python3 "$QGC_SRCDIR/tests/integration/usage-compare.py" "$T/$name.before.json" "$T/$name.after.json" \
                "$T/$name.usage-before" "$tree/usage_record.jsonl" "$name" --allow-added "$ids" ||
                fail "$name: Qwen's /stats changed"
        "$NPMDIR/qwen-check.sh" "$tree" --json > "$T/$name.list-after.json" 2> "$T/$name.list-after.err" ||
                { "$NPMDIR/qwen-check.sh" "$tree"; fail "$name: Qwen cannot read what qgc left"; }
        python3 "$QGC_SRCDIR/tests/integration/listing-compare.py" "$T/$name.plan.json" \
                "$T/$name.list-before.json" "$T/$name.list-after.json" "$name" ||
                fail "$name: Qwen does not list and load every session qgc kept or archived"
        # a rerun changes nothing more
        cp "$tree/usage_record.jsonl" "$T/$name.usage-1" 2>/dev/null || :
        run_qgc --root "$tree" --now "$NOW" -c "$conf" > /dev/null 2>&1 || :
        if [ -e "$T/$name.usage-1" ]; then
                cmp -s "$T/$name.usage-1" "$tree/usage_record.jsonl" || fail "$name: a rerun changed usage_record.jsonl"
        fi
}

# old_tree NAME DIR: a copy of tests/data/DIR/tree (written by an older Qwen Code), its times
# pinned past the liveness grace.
old_tree() {
        mkdir -p "$T/$1"
        cp -a "$QGC_TESTDATA/$2/tree/." "$T/$1/"
        chmod -R u+w "$T/$1"
        find "$T/$1" -exec touch -h -d 2026-09-01T00:00:00Z {} +
        echo "$T/$1"
}

olds=$(cd "$QGC_TESTDATA" && ls -d qwen0*/tree | sed 's|/tree$||')
[ "$(echo $olds | wc -w)" -ge 4 ] || fail "the older Qwen trees are missing from $QGC_TESTDATA: $olds"
# prepare RUN TREE: the compress runs start from a tree an archive run left (not checked here)
prepare() {
        [ "$1" = compress ] || return 0
        run_qgc --root "$2" --now "$NOW" -c "$QGC_TESTDATA/integration/usage-archive.conf" \
                > "$T/prepare.out" 2>&1 || { cat "$T/prepare.out"; fail "archive run before compress"; }
}

for run in archive delete compress; do
        conf="$QGC_TESTDATA/integration/usage-$run.conf"
        tree=$(make_tree corpus-$run)
        prepare $run "$tree"
        check_run "$tree" "corpus-$run" "$conf"
        tree=$(make_tree nofile-$run)
        rm "$tree/usage_record.jsonl"
        prepare $run "$tree"
        check_run "$tree" "nofile-$run" "$conf"
        for d in $olds; do
                tree=$(old_tree $d-$run $d)
                prepare $run "$tree"
                check_run "$tree" "$d-$run" "$conf"
                [ -e "$QGC_TESTDATA/$d/tree/usage_record.jsonl" ] || continue
                tree=$(old_tree $d-nofile-$run $d)
                rm "$tree/usage_record.jsonl"
                prepare $run "$tree"
                check_run "$tree" "$d-nofile-$run" "$conf"
        done
done
pass "no session Qwen's /stats counted is lost or changed by qgc's archive, delete and compress runs, and Qwen lists and loads every session kept or archived (corpus, $(echo $olds))"
