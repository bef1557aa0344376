#!/bin/sh
# Stale project entries (issue 12, upstream PR #9110): projects/<dir>/ whose every recorded cwd is
# a temporary directory that no longer exists. A table of entries with the guards: the first run
# writes the marker (.qwen-orphan-since, its lines the recorded cwds) and removes nothing; once
# the marker is older than stale-project-min-age, the entry's sessions go through the normal
# delete (usage salvaged first) and then the entry. A cwd that exists again cancels (and removes
# the marker); an unknown entry inside, a live runtime claim, a recent write, a pinned session
# and an archived session keep it, each reported with its reason. With the key off (the
# default), nothing is marked or removed.
. "$(dirname "$0")/lib.sh"

nbad=0
bad() { echo "FAIL: $*" >&2; nbad=$((nbad + 1)); }

OLD=$(( $(date +%s) - 10 * 86400 ))
BASE=/tmp/qgc-t0540-$$
rm -rf "$BASE"
mkdir -p "$BASE"
trap 'rm -rf "$BASE"; cleanup' EXIT
san() { printf '%s' "$1" | sed 's/[^A-Za-z0-9]/-/g'; }
n=0
transcript() { # TREE CWD: a transcript with one telemetry record; its id in $id
        n=$((n + 1))
        id=0c0ffee0-1234-4abc-8def-0000000000$(printf '%02d' $n)
        d="$1/projects/$(san "$2")/chats"
        mkdir -p "$d"
        printf '{"uuid":"u1","parentUuid":null,"sessionId":"%s","timestamp":"2026-10-01T00:00:00.000Z","type":"user","cwd":"%s","version":"0.24.4","message":{"role":"user","parts":[{"text":"hi"}]}}\n' "$id" "$2" > "$d/$id.jsonl"
        printf '{"uuid":"u2","parentUuid":"u1","sessionId":"%s","timestamp":"2026-10-01T00:00:01.000Z","type":"system","subtype":"ui_telemetry","cwd":"%s","version":"0.24.4","systemPayload":{"uiEvent":{"event.name":"qwen-code.api_response","model":"qwen3","duration_ms":10,"input_token_count":5,"output_token_count":7,"total_token_count":12,"cached_content_token_count":0,"thoughts_token_count":0}}}\n' "$id" "$2" >> "$d/$id.jsonl"
        echo "$id"
}

cat > "$T/on.conf" <<'EOF2'
defaults = { max-age = "off"; orphan-min-age = "off"; stale-project-min-age = "1d"; };
EOF2
cat > "$T/off.conf" <<'EOF2'
defaults = { max-age = "off"; orphan-min-age = "off"; };
EOF2

tree=$(make_tree stale)
GONE=$BASE/gone; BACK=$BASE/back; UNK=$BASE/unknown; LIVE=$BASE/live; YOUNG=$BASE/young
PIN=$BASE/pinned; ARCH=$BASE/archived; WT=$BASE/worktree; BIG=$BASE/big
transcript "$tree" "$GONE"; G1=$id; transcript "$tree" "$GONE"; G2=$id
# a line after the first with another (vanished, temporary) cwd: it is recorded too
printf '{"uuid":"u3","parentUuid":"u2","sessionId":"%s","timestamp":"2026-10-01T00:00:02.000Z","type":"user","cwd":"%s/sub","version":"0.24.4","message":{"role":"user","parts":[{"text":"cd"}]}}\n' "$G2" "$GONE" \
        >> "$tree/projects/$(san "$GONE")/chats/$G2.jsonl"
mkdir -p "$tree/projects/$(san "$GONE")/subagents/$G1"
echo '{}' > "$tree/projects/$(san "$GONE")/subagents/$G1/agent-a1.meta.json"
transcript "$tree" "$BACK"
transcript "$tree" "$UNK"
mkdir -p "$tree/projects/$(san "$UNK")/memory"; echo note > "$tree/projects/$(san "$UNK")/memory/notes.md"
transcript "$tree" "$LIVE"; L=$id
printf '{"pid":%s,"session_id":"%s","work_dir":"%s","hostname":"%s","started_at":"x"}' $$ "$L" "$LIVE" \
        "$(uname -n)" > "$tree/projects/$(san "$LIVE")/chats/$L.runtime.json"
transcript "$tree" "$YOUNG"
transcript "$tree" "$PIN"; P=$id
printf '{\n  "version": 1,\n  "groups": {},\n  "sessions": {\n    "%s": {\n      "pinnedAt": "2026-10-01T00:00:00.000Z"\n    }\n  }\n}' "$P" \
        > "$tree/projects/$(san "$PIN")/session-organization.v1.json"
transcript "$tree" "$ARCH"; A=$id
mkdir -p "$tree/projects/$(san "$ARCH")/chats/archive"
mv "$tree/projects/$(san "$ARCH")/chats/$A.jsonl" "$tree/projects/$(san "$ARCH")/chats/archive/"
# no session at all, only a worktree sidecar naming a vanished temporary path (issue #7906)
mkdir -p "$tree/projects/$(san "$WT")/chats"
printf '{"slug":"s","worktreePath":"%s/wt","worktreeBranch":"b","originalCwd":"/srv/x"}' "$WT" \
        > "$tree/projects/$(san "$WT")/chats/0c0ffee0-1234-4abc-8def-0000000000ff.worktree.json"
# a transcript over 8M is not read whole: incomplete evidence keeps the entry
transcript "$tree" "$BIG"
python3 -c 'import sys; f=open(sys.argv[1],"a"); [f.write("{\"type\":\"user\",\"cwd\":\"%s\",\"pad\":\"%s\"}\n" % (sys.argv[2], "x"*1000)) for _ in range(9000)]' \
        "$tree/projects/$(san "$BIG")/chats/$id.jsonl" "$BIG"
# session-organization.v1.json written today by qgc's own edit (a delete took an entry out; the
# kill of issue 23.5): its entries say nothing was organized since, so it is no recent write
ORGQ=$BASE/orgqgc; ORGU=$BASE/orguser
transcript "$tree" "$ORGQ"; Q=$id
printf '{\n  "schemaVersion": 1,\n  "groups": [],\n  "sessions": {\n    "%s": {\n      "groupId": null,\n      "updatedAt": "2026-10-01T00:00:00.000Z"\n    }\n  }\n}' "$Q" \
        > "$tree/projects/$(san "$ORGQ")/session-organization.v1.json"
# ... and one whose entry a person organized today (no pin, no group: a colour): a recent write
transcript "$tree" "$ORGU"; U=$id
printf '{\n  "schemaVersion": 1,\n  "groups": [],\n  "sessions": {\n    "%s": {\n      "groupId": null,\n      "updatedAt": "%s"\n    }\n  }\n}' "$U" "$(date -u +%Y-%m-%dT%H:%M:%S.000Z)" \
        > "$tree/projects/$(san "$ORGU")/session-organization.v1.json"
mkdir -p "$BACK"    # exists: not stale
find "$tree/projects" -path "*qgc-t0540*" -exec touch -h -d "@$OLD" {} +
touch "$tree/projects/$(san "$YOUNG")/chats/"*.jsonl
touch "$tree/projects/$(san "$ORGQ")/session-organization.v1.json"

# The table: entry, what the first run does (mark|none), what a later run does (gone|kept), why.
cat > "$T/table" <<EOF2
$GONE   mark gone  every cwd gone, only known names inside
$BACK   none kept  its cwd exists
$UNK    none kept  an entry qgc does not know (memory/)
$LIVE   none kept  a live runtime claim
$YOUNG  none kept  a transcript written today
$PIN    none kept  a pinned session
$ARCH   none kept  an archived session
$WT     mark gone  no session, a worktree sidecar's vanished temporary path
$BIG    none kept  a transcript over 8M
$ORGQ   mark gone  session-organization.v1.json rewritten today, no entry organized since
$ORGU   none kept  an entry organized today (its updatedAt)
EOF2

# 0. the key off: nothing planned, marked or removed
run_qgc --dry-run --json --root "$tree" -c "$T/off.conf" > "$T/off.json" || fail "dry run (off)"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); sys.exit(1 if [o for o in p["orphans"] if o["kind"]=="stale-project"] else 0)' "$T/off.json" ||
        bad "key off, and stale projects are planned"

# 1. the dry run: marks planned, with reasons; nothing written
snapshot "$tree" "$T/before"
run_qgc --dry-run --json --root "$tree" -c "$T/on.conf" > "$T/plan1.json" || fail "dry run"
run_qgc --dry-run --root "$tree" -c "$T/on.conf" > "$T/plan1.txt" || fail "dry run (text)"
snapshot "$tree" "$T/after"
cmp -s "$T/before" "$T/after" || bad "the dry run changed the tree"
python3 - "$T/plan1.json" "$T/table" <<'PY' || bad "first plan is not the table's"
import json, re, sys
plan = json.load(open(sys.argv[1]))
items = {o["name"]: o for o in plan["orphans"] if o["kind"] == "stale-project"}
ok = True
for line in open(sys.argv[2]):
    cwd, first, later, *why = line.split()
    name = re.sub(r"[^A-Za-z0-9]", "-", cwd)
    o = items.get(name)
    if first == "mark":
        if not o or o["mark"] != "write" or o["verb"] != "keep" or "would mark" not in o["reason"]:
            print("want a mark:", cwd, o); ok = False
        elif name.endswith("-gone") and set(o["cwds"]) != {cwd, cwd + "/sub"}:
            print("recorded cwds:", o["cwds"]); ok = False
    elif o is not None and (o["mark"] is not None or o["verb"] != "keep"):
        print("want no mark:", cwd, o); ok = False
    elif o is not None:
        print("kept:", cwd, "--", o["reason"])
for name, o in items.items():
    if "back" in name:
        print("a project whose cwd exists, without a marker, is listed:", o); ok = False
want = {"unknown": "does not know: memory", "live": "may be live", "young": "(live: in use",
        "pinned": "(pinned)", "archived": "archived sessions stay", "big": "over 8M",
        "orguser": "ago <= stale-project-min-age"}
for k, w in want.items():
    o = [x for n, x in items.items() if n.endswith("-" + k)]
    if not o or w not in o[0]["reason"]:
        print("reason for", k, ":", o and o[0]["reason"]); ok = False
sys.exit(0 if ok else 1)
PY
grep -q "would mark it" "$T/plan1.txt" || bad "the text plan does not say it would mark"
grep -q "projects/$(san "$GONE")" "$T/plan1.txt" || bad "the text plan does not name the entry by its path"

# 2. the first real run writes the marker only
run_qgc --root "$tree" -c "$T/on.conf" --log-file "$T/run1.log" > /dev/null || fail "first run"
M="$tree/projects/$(san "$GONE")/.qwen-orphan-since"
[ -f "$M" ] || bad "no marker written"
grep -qx "$GONE" "$M" || bad "the marker does not record the cwd: $(cat "$M" 2>/dev/null)"
[ -f "$tree/projects/$(san "$GONE")/chats/$G1.jsonl" ] || bad "a session went on first sight"
grep -q "QGC_ACTION=stale-mark" "$T/run1.log" || bad "the marker write is not journalled"
[ -f "$tree/projects/$(san "$WT")/.qwen-orphan-since" ] || bad "the sidecar-only entry is not marked"
for c in "$BACK" "$UNK" "$LIVE" "$YOUNG" "$PIN" "$ARCH" "$BIG"; do
        [ ! -e "$tree/projects/$(san "$c")/.qwen-orphan-since" ] || bad "$c: marked"
done
# a second run the same day: marked 0s ago, nothing more
run_qgc --root "$tree" -c "$T/on.conf" --log-file "$T/run2.log" > /dev/null || fail "second run"
[ -f "$tree/projects/$(san "$GONE")/chats/$G1.jsonl" ] || bad "removed before the wait"

# 3. the wait is over: its sessions are deleted (usage salvaged), then the entry
touch -d "@$OLD" "$M" "$tree/projects/$(san "$WT")/.qwen-orphan-since" \
        "$tree/projects/$(san "$ORGQ")/.qwen-orphan-since"
# an entry whose cwd came back while marked: the marker goes
cp "$M" "$tree/projects/$(san "$BACK")/.qwen-orphan-since"
touch -d "@$OLD" "$tree/projects/$(san "$BACK")/.qwen-orphan-since"
run_qgc --dry-run --root "$tree" -c "$T/on.conf" --force > "$T/plan3.txt" || fail "dry run 3"
grep -q "would remove its mark" "$T/plan3.txt" || bad "no unmark planned for the entry whose cwd exists"
# its bytes are counted once: the entry's own plus its sessions' are what du says of it
run_qgc --dry-run --json --root "$tree" -c "$T/on.conf" --force > "$T/plan3.json" || fail "dry run 3 (json)"
python3 - "$T/plan3.json" "$(san "$GONE")" "$(du -s -b "$tree/projects/$(san "$GONE")" | cut -f1)" <<'PY' ||
import json, sys
plan, name, du = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3])
o = [x for x in plan["orphans"] if x["kind"] == "stale-project" and x["name"] == name][0]
s = sum(x["bytes"] for p in plan["projects"] for x in p["sessions"] if x["project_dir"] == name)
assert o["verb"] == "delete", o
print("entry", o["bytes"], "sessions", s, "du", du)
sys.exit(0 if o["bytes"] + s == du else 1)
PY
        bad "the entry's bytes and its sessions' do not add up to du (counted twice?)"
run_qgc --root "$tree" -c "$T/on.conf" --force --log-file "$T/run3.log" > /dev/null || fail "third run"
[ ! -e "$tree/projects/$(san "$GONE")" ] || { ls -laR "$tree/projects/$(san "$GONE")"; cat "$T/run3.log"; bad "the stale entry is still there"; }
grep -q "QGC_ACTION=orphan-reclaimed QGC_PROJECT=$(san "$GONE") .*QGC_RULE=stale-project-min-age" "$T/run3.log" ||
        { grep orphan-reclaimed "$T/run3.log"; bad "its removal is not journalled with its project"; }
n_del=$(grep -c "QGC_ACTION=deleted.*QGC_RULE=stale-project-min-age" "$T/run3.log" || true)
[ "$n_del" -eq 3 ] || bad "$n_del sessions deleted by the rule, want 3"
for id in "$G1" "$G2" "$Q"; do
        grep -q "\"sessionId\":\"$id\"" "$tree/usage_record.jsonl" || bad "no usage line for $id"
done
[ ! -e "$tree/projects/$(san "$BACK")/.qwen-orphan-since" ] || bad "the marker of an entry whose cwd exists stayed"
grep -q "QGC_ACTION=stale-mark.*removed the stale mark" "$T/run3.log" || grep -q "removed the stale mark" "$T/run3.log" || bad "the unmark is not journalled"
while read -r cwd first later why; do
        if [ "$later" = kept ]; then
                [ -d "$tree/projects/$(san "$cwd")" ] || bad "$cwd went ($why)"
        else
                [ ! -e "$tree/projects/$(san "$cwd")" ] || bad "$cwd stayed ($why)"
        fi
done < "$T/table"
# nothing more to do
run_qgc --dry-run --json --root "$tree" -c "$T/on.conf" --force > "$T/plan4.json" || fail "dry run 4"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); sys.exit(1 if [o for o in p["orphans"] if o["kind"]=="stale-project" and (o["verb"]=="delete" or o["mark"])] else 0)' "$T/plan4.json" ||
        bad "a later run would still act"

# 4. Qwen's own code lists and loads what is left of the corpus and reads the usage qgc salvaged
#    from the removed entry's sessions (the test's own minimal entries are left out)
QWEN_NPM_PART=1 . "$(dirname "$0")/qwen-npm.sh"
if [ $QWEN_OK = 0 ]; then
        judge_missing --part "Qwen Code" "$QWEN_WHY"
else
        cp -a "$tree" "$T/judge"
        rm -rf "$T/judge/projects/"*qgc-t0540*
        "$NPMDIR/qwen-check.sh" "$T/judge" --expect-usage "$G1,$G2" > "$T/judge.txt" 2>&1 ||
                { cat "$T/judge.txt"; bad "Qwen cannot read the tree or the salvaged usage"; }
        tail -2 "$T/judge.txt"
fi

[ $nbad -eq 0 ] || fail "$nbad checks failed"
pass "stale project entries: marked, removed after the wait with their sessions' usage salvaged, guards hold"
finish
