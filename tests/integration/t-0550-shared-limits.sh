#!/bin/sh
# t-0550-shared-limits: a limit the executor enforces is planned. A project whose
# tmp/<hash>/logs.json is larger than the 64 MiB qgc edits (or is not what Qwen Code writes) gets
# "would skip: ... (limit)" for each delete in the dry run, and the real run skips exactly those:
# their transcripts stay, no usage line is salvaged for them, each is journalled as skipped, a
# warning says the policy was not met, and the exit status is 0 (as for the deletion limits). At
# exactly 64 MiB the file is edited and the deletes happen. (Before, the dry run said "delete",
# and the run skipped them after salvaging their usage lines.)
. "$(dirname "$0")/lib.sh"
NOW=2027-04-01T00:00:00Z
CONF="$QGC_TESTDATA/integration/apply.conf"
MAX=$((64 * 1024 * 1024))

# logs.json of exactly $2 bytes: one row of another session, as Qwen's Logger writes it, its
# message padded; or, with $2 = bad, a text JSON.parse refuses
write_logs() {
        python3 - "$1" "$2" <<'PY'
import sys
path, size = sys.argv[1], sys.argv[2]
if size == "bad":
    open(path, "w").write("[\n  {\n    \"sessionId\": \"x\",\n")
    sys.exit(0)
head = '[\n  {\n    "sessionId": "0f0f0f0f-0000-4000-8000-000000000001",\n    "messageId": 0,\n    "type": "user",\n    "message": "'
tail = '",\n    "timestamp": "2026-11-30T03:53:27.728Z"\n  }\n]'
n = int(size) - len(head) - len(tail)
with open(path, "w") as f:
    f.write(head); f.write("x" * n); f.write(tail)
PY
}

# case NAME SIZE WANT: WANT is "skip" (the deletes of the project are planned and run as skips)
# or "delete"
case_limit() {
        name=$1 size=$2 want=$3
        tree=$(make_tree "tree-$name")
        hash=$(python3 - "$QGC_TESTDATA/integration/corpus-plan.golden.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
print([x for x in p["projects"] if x["project_dir"] == "-srv-demo-api-server"][0]["hash"])
PY
)
        mkdir -p "$tree/tmp/$hash"
        write_logs "$tree/tmp/$hash/logs.json" "$size"
        cp "$tree/usage_record.jsonl" "$T/usage-before-$name"
        run_qgc --dry-run --root "$tree" --now "$NOW" -c "$CONF" > "$T/plan-$name.txt" ||
                fail "$name: dry run"
        run_qgc --dry-run --json --root "$tree" --now "$NOW" -c "$CONF" > "$T/plan-$name.json" ||
                fail "$name: dry run (json)"
        run_qgc --root "$tree" --now "$NOW" -c "$CONF" --log-file "$T/actions-$name.log" \
                > "$T/run-$name.out" 2> "$T/run-$name.err" ||
                { cat "$T/run-$name.out" "$T/run-$name.err"; fail "$name: the run failed"; }
        python3 - "$tree" "$T/plan-$name.json" "$T/usage-before-$name" "$T/actions-$name.log" \
                "$want" "$T/plan-$name.txt" "$T/run-$name.err" <<'PY' || fail "$name: run and plan differ"
import json, os, sys
tree, plan, before, log, want, text, err = sys.argv[1:8]
plan = json.load(open(plan))
def ids(path):
    out = []
    for line in open(path):
        try: out.append(json.loads(line)["sessionId"])
        except Exception: pass
    return out
before, after = ids(before), ids(os.path.join(tree, "usage_record.jsonl"))
log, text, err = open(log).read(), open(text).read(), open(err).read()
proj = [p for p in plan["projects"] if p["project_dir"] == "-srv-demo-api-server"][0]
limited = [s for s in proj["sessions"] if s["rule"] == "limit"]
deleted = [s for s in proj["sessions"] if s["verb"] == "delete"]
if want == "skip":
    assert limited and not deleted, f"planned: {[(s['id'], s['verb'], s['rule']) for s in proj['sessions']]}"
    for s in limited:
        assert s["verb"] == "skip", s
        assert "(limit)" in s["reason"] and "would delete" in s["reason"], s["reason"]
        assert s["reason"] in text.replace("\n", " ") or "(limit)" in text, "text plan"
        chats = os.path.join(tree, "projects", proj["project_dir"], "chats")
        assert os.path.exists(os.path.join(chats, s["id"] + ".jsonl")), f"{s['id']} gone"
        assert after.count(s["id"]) == before.count(s["id"]), f"{s['id']}: usage line salvaged"
        assert s["id"] in log and "(limit)" in log, f"{s['id']} not journalled"
    assert "not deleted: a file Qwen shares is one qgc does not edit (limit)" in err, err
    assert "would skip" in text or "skip" in text
    print(f"{len(limited)} deletes planned and run as skips, no usage line salvaged")
else:
    assert deleted and not limited, proj["sessions"]
    chats = os.path.join(tree, "projects", proj["project_dir"], "chats")
    for s in deleted:
        assert not os.path.exists(os.path.join(chats, s["id"] + ".jsonl")), f"{s['id']} kept"
    print(f"{len(deleted)} deletes done at the maximum")
PY
}

case_limit over $((MAX + 1)) skip
case_limit bad bad skip
case_limit max $MAX delete
finish
