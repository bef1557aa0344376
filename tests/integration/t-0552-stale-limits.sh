#!/bin/sh
# t-0552-stale-limits: the stale-project examination's read limits are the plan's. The scan and
# the executor's re-check before the removal examine an entry with one function
# (hygiene_stale_walk()), which reads each transcript up to 8 MiB and each line up to 1 MiB; past
# either, the entry is incomplete evidence and kept. So the dry run says exactly what the run
# does: at 8 MiB and at a 1 MiB line the entry is marked, then removed with its session (its
# usage salvaged); one byte past either it is kept from the first plan on with the reason, never
# marked, its session stays and nothing is salvaged for it.
. "$(dirname "$0")/lib.sh"

OLD=$(( $(date +%s) - 10 * 86400 ))
BASE=/tmp/qgc-t0552-$$
trap 'rm -rf "$BASE"; cleanup' EXIT
san() { printf '%s' "$1" | sed 's/[^A-Za-z0-9]/-/g'; }
cat > "$T/on.conf" <<'EOF2'
defaults = { max-age = "off"; orphan-min-age = "off"; stale-project-min-age = "1d"; };
EOF2

# entry TREE NAME N SIZE LINE: projects/<cwd>/chats/<id>.jsonl for the vanished temporary cwd
# $BASE/NAME, its session id ending in N (a prompt and its usage record, then prompts): SIZE
# bytes in all (prompts of 1000 bytes), or, with LINE,
# one line of LINE bytes (without its '\n') in the middle
entry() {
        python3 - "$1/projects/$(san "$BASE/$2")/chats" "$BASE/$2" "$3" "$4" "${5:-0}" <<'PY'
import os, sys
d, cwd, n, size, line = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
sid = "0c0ffee0-1234-4abc-8def-0000000000%02d" % n
os.makedirs(d)
first = ('{"uuid":"u1","parentUuid":null,"sessionId":"%s","timestamp":"2026-10-01T00:00:00.000Z",'
         '"type":"user","cwd":"%s","version":"0.24.4","message":{"role":"user","parts":[{"text":"hi"}]}}\n'
         % (sid, cwd))
first += ('{"uuid":"u2","parentUuid":"u1","sessionId":"%s","timestamp":"2026-10-01T00:00:01.000Z",'
          '"type":"system","subtype":"ui_telemetry","cwd":"%s","version":"0.24.4","systemPayload":'
          '{"uiEvent":{"event.name":"qwen-code.api_response","model":"qwen3","duration_ms":10,'
          '"input_token_count":5,"output_token_count":7,"total_token_count":12,'
          '"cached_content_token_count":0,"thoughts_token_count":0}}}\n' % (sid, cwd))
def pad(k):  # a prompt of k bytes, '\n' excluded
    head = ('{"uuid":"p","parentUuid":"u2","sessionId":"%s","timestamp":"2026-10-01T00:00:02.000Z",'
            '"type":"user","cwd":"%s","version":"0.24.4","message":{"role":"user","parts":[{"text":"'
            % (sid, cwd))
    return head + "x" * (k - len(head) - 5) + '"}]}}'
with open(os.path.join(d, sid + ".jsonl"), "w") as f:
    f.write(first)
    if line:
        f.write(pad(1000) + "\n" + pad(line) + "\n" + pad(1000) + "\n")
    else:
        left = size - len(first)
        while left > 2001:
            f.write(pad(1000) + "\n"); left -= 1001
        f.write(pad(left - 1) + "\n")
print(sid)
PY
}

tree=$(make_tree stale)
MAXF=$((8 * 1024 * 1024)) MAXL=$((1024 * 1024))
S1=$(entry "$tree" file-max 1 $MAXF); S2=$(entry "$tree" file-over 2 $((MAXF + 1)))
S3=$(entry "$tree" line-max 3 0 $MAXL); S4=$(entry "$tree" line-over 4 0 $((MAXL + 1)))
for n in file-max file-over; do
        f=$(ls "$tree/projects/$(san "$BASE/$n")/chats/"*.jsonl)
        echo "$n: $(stat -c %s "$f") bytes"
done
find "$tree/projects" -path "*qgc-t0552*" -exec touch -h -d "@$OLD" {} +
cp "$tree/usage_record.jsonl" "$T/usage-before"

# plan PASS: the dry run's stale entries and sessions, checked against what run PASS then does
check() {
        python3 - "$1" "$2" "$tree" "$BASE" "$T/usage-before" "$S1 $S2 $S3 $S4" <<'PY'
import json, os, re, sys
step, plan, tree, base, before, ids = sys.argv[1], json.load(open(sys.argv[2])), *sys.argv[3:]
ids = ids.split()
san = lambda p: re.sub(r"[^A-Za-z0-9]", "-", p)
items = {o["name"]: o for o in plan["orphans"] if o["kind"] == "stale-project"}
usage = open(os.path.join(tree, "usage_record.jsonl")).read()
for name, sid, goes, why in (("file-max", ids[0], True, None),
                             ("file-over", ids[1], False, "a transcript over 8M, not read whole"),
                             ("line-max", ids[2], True, None),
                             ("line-over", ids[3], False, "a record too long to read whole")):
    e = os.path.join(tree, "projects", san(os.path.join(base, name)))
    o = items.get(san(os.path.join(base, name)))
    if goes and step == "mark":
        assert o and o["mark"] == "write", (name, o)
        assert os.path.exists(os.path.join(e, ".qwen-orphan-since")), (name, "not marked")
    elif goes:
        assert o and o["verb"] == "delete", (name, o)
        assert not os.path.exists(e), (name, "stayed")
        assert sid in usage, (name, "no usage line salvaged")
    else:
        # kept from the first plan on, its reason the examination's; never marked or removed
        assert o is None or (o["verb"] == "keep" and not o["mark"]), (name, o)
        assert o is None or why in o["reason"], (name, o["reason"])
        assert os.path.exists(os.path.join(e, "chats", sid + ".jsonl")), (name, "gone")
        assert not os.path.exists(os.path.join(e, ".qwen-orphan-since")), (name, "marked")
        assert usage.count(sid) == open(before).read().count(sid), (name, "usage salvaged")
    print(step, name, "as planned:", o and o["reason"])
PY
}

run_qgc --dry-run --json --root "$tree" -c "$T/on.conf" > "$T/plan1.json" || fail "dry run 1"
run_qgc --root "$tree" -c "$T/on.conf" > /dev/null || fail "run 1"
check mark "$T/plan1.json" || fail "the first run is not its plan"
find "$tree/projects" -name .qwen-orphan-since -exec touch -d "@$OLD" {} +
run_qgc --dry-run --json --root "$tree" -c "$T/on.conf" --force > "$T/plan2.json" || fail "dry run 2"
run_qgc --root "$tree" -c "$T/on.conf" --force > /dev/null || fail "run 2"
check remove "$T/plan2.json" || fail "the second run is not its plan"
finish
