#!/bin/sh
# A real run on a copy of the corpus does exactly what the dry run printed: archived sessions are
# in chats/archive/ with their sidecars, deleted ones are gone with theirs, every removed or
# archived session has exactly one usage line, nothing else changed; a second run does nothing.
. "$(dirname "$0")/lib.sh"
D=$(dirname "$0")
tree=$(make_tree tree)
NOW=2027-04-01T00:00:00Z
CONF="$QGC_TESTDATA/integration/apply.conf"

cp "$tree/usage_record.jsonl" "$T/usage-before"
run_qgc --dry-run --json --root "$tree" --now "$NOW" -c "$CONF" > "$T/plan.json" || fail "dry run"
run_qgc --root "$tree" --now "$NOW" -c "$CONF" --log-file "$T/actions.log" > "$T/run.out" ||
        { cat "$T/run.out" "$T/actions.log"; fail "real run failed"; }
cat "$T/run.out"

python3 - "$tree" "$T/plan.json" "$T/usage-before" "$T/actions.log" <<'PY' || fail "tree does not match the plan"
import json, os, sys
tree, plan, usage_before, log = sys.argv[1:5]
plan = json.load(open(plan))
def usage_counts(path):
    c = {}
    for line in open(path):
        try: c[json.loads(line)["sessionId"]] = c.get(json.loads(line)["sessionId"], 0) + 1
        except Exception: pass
    return c
before, after = usage_counts(usage_before), usage_counts(os.path.join(tree, "usage_record.jsonl"))
golden = {}
for line in open(os.path.join(os.environ["QGC_TESTDATA"], "corpus/golden/salvage.jsonl")):
    g = json.loads(line)
    golden[os.path.basename(g["transcript"])[:-6]] = g["record"]
acted = 0
for p in plan["projects"]:
    for s in p["sessions"]:
        sid, verb = s["id"], s["verb"]
        chats = os.path.join(tree, "projects", p["project_dir"], "chats")
        active = os.path.exists(os.path.join(chats, sid + ".jsonl"))
        archived = os.path.exists(os.path.join(chats, "archive", sid + ".jsonl"))
        if verb == "archive":
            assert not active and archived, f"{sid}: not archived"
        elif verb == "delete":
            assert not active and not archived, f"{sid}: not deleted"
            assert not os.path.exists(os.path.join(tree, "file-history", sid)), f"{sid}: file-history left"
        else:
            assert active or archived, f"{sid}: {verb} but gone"
        if verb in ("archive", "delete"):
            acted += 1
            want = max(before.get(sid, 0), 1 if golden.get(sid) else 0)
            assert after.get(sid, 0) == want, f"{sid}: {after.get(sid, 0)} usage lines, want {want}"
        else:
            assert after.get(sid, 0) == before.get(sid, 0), f"{sid}: usage lines changed"
assert acted > 0, "the plan acted on nothing: the test would prove nothing"
# the salvaged lines are Qwen's own records, byte for byte
lines = open(os.path.join(tree, "usage_record.jsonl")).read().splitlines()
for line in lines[sum(before.values()):]:
    rec = json.loads(line)
    want = json.dumps(golden[rec["sessionId"]], separators=(",", ":"), ensure_ascii=False)
    assert line == want, f"salvaged line differs from Qwen's:\n{line}\n{want}"
print(f"tree matches the plan: {acted} sessions acted on")
PY

# a second run finds nothing to do and changes nothing
run_qgc --dry-run --json --root "$tree" --now "$NOW" -c "$CONF" > "$T/plan2.json" || fail "second dry run"
python3 "$D/plan.py" "$T/plan2.json" count:archive=0 count:delete=0 || fail "second plan not empty"
snapshot "$tree" "$T/s1"
run_qgc --root "$tree" --now "$NOW" -c "$CONF" --log-file "$T/actions2.log" >/dev/null || fail "second run"
snapshot "$tree" "$T/s2"
sed 's/ a=[0-9]*//' "$T/s1" > "$T/s1n"; sed 's/ a=[0-9]*//' "$T/s2" > "$T/s2n"
diff -u "$T/s1n" "$T/s2n" || fail "the second run changed the tree"
# qgc restore moves an archived session back with its sidecars; a second restore is refused
A=aefd2a51-f2fc-4eed-a29c-91292bb022bf
W="$tree/projects/-srv-demo-webapp/chats"
[ -f "$W/archive/$A.jsonl" ] || fail "$A was not archived"
run_qgc restore "$A" --root "$tree" -c "$CONF" --log-file "$T/restore.log" || fail "restore failed"
[ -f "$W/$A.jsonl" ] && [ ! -e "$W/archive/$A.jsonl" ] || fail "restore did not move $A back"
grep -q "QGC_ACTION=restored" "$T/restore.log" || fail "restore not journalled"
set +e; "$QGC" restore "$A" --root "$tree" -c "$CONF" --log-file "$T/restore2.log" 2>/dev/null; rc=$?; set -e
[ $rc -ne 0 ] || fail "restoring a session that is not archived succeeded"
pass "real run matches the dry run; the rerun is a no-op; restore works"

# The crash after step N is the fault tests' own (ld --wrap): the environment variable that once made the
# executor _exit(99) after step N does nothing to the installed binary.
tree2=$(make_tree crashenv)
set +e
QGC_TEST_CRASH_AFTER_STEP=1 "$QGC" --root "$tree2" --now "$NOW" -c "$CONF" --log-file "$T/crashenv.log" >/dev/null 2>&1
rc=$?
set -e
[ $rc -ne 99 ] || fail "QGC_TEST_CRASH_AFTER_STEP still crashes the binary"
[ $rc -eq 0 ] || fail "the run with QGC_TEST_CRASH_AFTER_STEP set failed ($rc)"
pass "no environment variable crashes the executor"

# --jobs 1 is the gentlest run: no salvage thread reads transcripts ahead of the executor, and
# the usage lines it salvages are the same as tree2's above. (The corpus has too few sessions for
# the thread to start, USAGE_AHEAD_MIN_JOBS; test_usage covers the lines the thread builds.)
tree3=$(make_tree jobs1)
run_qgc --jobs 1 -vv --root "$tree3" --now "$NOW" -c "$CONF" --log-file "$T/jobs1.log" \
        >/dev/null 2>"$T/jobs1.err" || { cat "$T/jobs1.err"; fail "the --jobs 1 run failed"; }
grep -q "salvage thread: off (--jobs 1)" "$T/jobs1.err" || { cat "$T/jobs1.err"; fail "--jobs 1 started the salvage thread"; }
cmp "$tree2/usage_record.jsonl" "$tree3/usage_record.jsonl" ||
        fail "--jobs 1 salvaged other usage lines than a run with the salvage thread"
pass "--jobs 1 runs without the salvage thread and salvages the same lines"

# A run with enough sessions to salvage starts the salvage thread, which builds their usage lines
# ahead of the executor (usage-ahead.h). It once got no Qwen session at all (each was taken for
# another store's), and every line was built by the executor alone.
cc -O2 -o "$T/gen-tree" "$QGC_SRCDIR/bench/gen-tree.c" -lm || fail "cannot build gen-tree"
"$T/gen-tree" --seed 42 --projects 4 --sessions 20 --min-age-days 120 --max-age-days 400 \
        --pin-pct 0 --title-pct 0 --runtime-pct 0 --archive-pct 0 --now 1796083200 "$T/ahead" \
        > /dev/null || fail "gen-tree"
cp -a "$T/ahead" "$T/ahead0"
printf 'defaults = { action = "archive"; max-age = "7d"; keep-latest = 0; min-age = "1d"; };\n' \
        > "$T/ahead.conf"
run_qgc -vv --force --root "$T/ahead" --now @1796083200 -c "$T/ahead.conf" \
        --log-file "$T/ahead.log" >/dev/null 2>"$T/ahead.err" ||
        { cat "$T/ahead.err"; fail "the run of 80 sessions failed"; }
if [ "$(nproc)" -ge 2 ]; then
        grep -q "salvage thread: [1-9][0-9]* usage lines built ahead" "$T/ahead.err" ||
                { grep "salvage thread" "$T/ahead.err"; fail "80 to salvage, $(nproc) CPUs: no thread"; }
else
        grep -q "salvage thread: off (one CPU)" "$T/ahead.err" ||
                { grep "salvage thread" "$T/ahead.err"; fail "one CPU, and the salvage thread is not said to be off"; }
fi
# the same lines as the executor builds alone (--jobs 1)
cp -a "$T/ahead0" "$T/ahead1"
run_qgc --jobs 1 --force --root "$T/ahead1" --now @1796083200 -c "$T/ahead.conf" \
        --log-file "$T/ahead1.log" >/dev/null 2>&1 || fail "the --jobs 1 run of 80 sessions failed"
cmp "$T/ahead/usage_record.jsonl" "$T/ahead1/usage_record.jsonl" ||
        fail "the salvage thread built other usage lines than the executor alone"
n=$(find "$T/ahead/projects" -path '*/chats/archive/*.jsonl' | wc -l)
[ "$n" -ge 16 ] || fail "only $n sessions archived"
pass "a run of 80 sessions to salvage starts the salvage thread ($(nproc) CPUs)"
