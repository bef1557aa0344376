#!/bin/sh
# t-0553-tasks-limits: tmp/<hash>/scheduled_tasks.json is read up to 16 MiB, by the scan only
# (the executor's re-check of a stale tmp directory calls the same hygiene_tmp_classify()). Past
# it the file is one that cannot be read, and what it would decide is kept, in the dry run and
# the run alike: every session of the hash counts as bound to a task (kept, "scheduled", nothing
# deleted or salvaged), and a stale tmp directory holding it is not removed. At exactly 16 MiB
# the file is read: only the bound session stays, and an empty schedule lets the directory go.
. "$(dirname "$0")/lib.sh"
NOW=2027-04-01T00:00:00Z
MAX=$((16 * 1024 * 1024))
BOUND=47406782-cafc-46f6-a948-02f7b5b53f92 # /srv/demo/api-server: deleted by max-age
OLD=$(( $(date +%s) - 10 * 86400 ))
GONE=$(printf '%s' /tmp/qgc-t0553-gone | sha256sum | cut -c1-64)
cat > "$T/on.conf" <<'EOF2'
defaults = { action = "delete"; max-age = "90d"; max-deletions-percent = 100;
             orphan-min-age = "off"; stale-tmp-min-age = "1d"; };
EOF2

# tasks PATH SIZE: a schedule of exactly SIZE bytes: one task bound to $BOUND (its prompt padded),
# or, with SIZE prefixed by "empty:", no task (whitespace inside the brackets, as JSON.parse reads)
tasks() {
        python3 - "$1" "$2" "$BOUND" <<'PY'
import sys
path, size, sid = sys.argv[1], sys.argv[2], sys.argv[3]
if size.startswith("empty:"):
    n = int(size[6:])
    open(path, "w").write("[" + " " * (n - 2) + "]")
    sys.exit(0)
head = '[{"id":"t1","cron":"0 9 * * *","sessionId":"%s","prompt":"' % sid
tail = '"}]'
open(path, "w").write(head + "x" * (int(size) - len(head) - len(tail)) + tail)
PY
}

case_tasks() {
        name=$1 size=$2 want=$3
        tree=$(make_tree "tree-$name")
        hash=$(python3 - "$QGC_TESTDATA/integration/corpus-plan.golden.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
print([x for x in p["projects"] if x["project_dir"] == "-srv-demo-api-server"][0]["hash"])
PY
)
        mkdir -p "$tree/tmp/$hash" "$tree/tmp/$GONE"
        tasks "$tree/tmp/$hash/scheduled_tasks.json" "$size"
        tasks "$tree/tmp/$GONE/scheduled_tasks.json" "empty:$size"
        touch -d "@$OLD" "$tree/tmp/$GONE/scheduled_tasks.json" "$tree/tmp/$GONE"
        cp "$tree/usage_record.jsonl" "$T/usage-before-$name"
        run_qgc --dry-run --json --root "$tree" --now "$NOW" -c "$T/on.conf" > "$T/plan-$name.json" ||
                fail "$name: dry run"
        run_qgc --root "$tree" --now "$NOW" -c "$T/on.conf" > /dev/null 2>&1 || fail "$name: run"
        python3 - "$tree" "$T/plan-$name.json" "$T/usage-before-$name" "$BOUND" "$GONE" "$want" <<'PY' ||
import json, os, sys
tree, plan, before, bound, gone, want = sys.argv[1:7]
plan = json.load(open(plan))
chats = os.path.join(tree, "projects", "-srv-demo-api-server", "chats")
usage = open(os.path.join(tree, "usage_record.jsonl")).read()
proj = [p for p in plan["projects"] if p["project_dir"] == "-srv-demo-api-server"][0]
held = [s for s in proj["sessions"] if s["rule"] == "scheduled"]
dels = [s for s in proj["sessions"] if s["verb"] == "delete"]
# the plan, then the run: each session as planned, usage salvaged only for a delete
for s in proj["sessions"]:
    there = os.path.exists(os.path.join(chats, s["id"] + ".jsonl"))
    assert there == (s["verb"] != "delete"), (s["id"], s["verb"], there)
    if s["verb"] != "delete":
        assert usage.count(s["id"]) == open(before).read().count(s["id"]), (s["id"], "salvaged")
if want == "read":
    assert [s["id"] for s in held] == [bound] and len(dels) == 2, proj["sessions"]
else:
    assert len(held) == len(proj["sessions"]) and not dels, proj["sessions"]
tmp = [o for o in plan["orphans"] if o["name"] == gone]
removed = not os.path.exists(os.path.join(tree, "tmp", gone))
assert removed == (want == "read") == bool(tmp and tmp[0]["verb"] == "delete"), (tmp, removed)
print(f"{want}: {len(held)} held by the schedule, {len(dels)} deleted; stale tmp removed: {removed}")
PY
                fail "$name: run and plan differ"
}

case_tasks over $((MAX + 1)) unread
case_tasks max $MAX read
finish
