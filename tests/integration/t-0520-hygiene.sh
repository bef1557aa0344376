#!/bin/sh
# Tree hygiene (issue 12): each rule as a table of planted paths, with what must go and what must
# stay, guards included: a young file, a symlink, a directory where a file is expected, a name
# qgc does not know next to known ones, a live sidecar (a scheduled-task lock, a bound task), a
# hash that is a session's, an id that has a transcript (active or archived), a tree with a
# session of unproven cwd. The dry run must plan exactly the removals of the table, each with its
# rule and reason; the real run must do exactly that and journal each; with the keys at their
# defaults ("off") nothing outside sessions is planned or touched. Stale project entries (every
# cwd a vanished temporary directory) are counted by status and never removed.
. "$(dirname "$0")/lib.sh"

nbad=0
bad() { echo "FAIL: $*" >&2; nbad=$((nbad + 1)); }

OLD=$(( $(date +%s) - 10 * 86400 ))   # 10 days: past every key below
sha() { printf '%s' "$1" | sha256sum | cut -c1-64; }
H_GONE=$(sha /tmp/gone-1)     # no session, only known names: goes whole
H_UNK=$(sha /tmp/gone-2)      # no session, an unknown file inside: stays
H_LOCK=$(sha /tmp/gone-3)     # no session, a scheduled-task lock of a live process: stays
H_DEAD=$(sha /tmp/gone-6)     # no session, the lock a clean exit left (dead pid): goes
H_TASKS=$(sha /tmp/gone-4)    # no session, a scheduled task: stays
H_YOUNG=$(sha /tmp/gone-5)    # no session, written today: stays
H_LEG=$(sha /tmp/legacy-01)   # Qwen <= 0.1 files: not stale while legacy chats are there
H_SESS=$(sha /srv/demo/webapp) # a project with sessions
ORPH=0c0ffee0-1234-4abc-8def-0123456789ab   # no transcript anywhere
YOUNG=0c0ffee0-1234-4abc-8def-0123456789ac  # no transcript, written today
ACT=aefd2a51-f2fc-4eed-a29c-91292bb022bf    # webapp, active
ARC=1a914264-8e49-442e-bc79-1cb2de9eae0c    # scratch, archived

cat > "$T/on.conf" <<'EOF'
defaults = { max-age = "off"; orphan-min-age = "off";
             tool-results-max-age = "1d"; stale-tmp-min-age = "1d";
             debug-plans-min-age = "1d"; legacy-max-age = "1d"; };
EOF
cat > "$T/off.conf" <<'EOF'
defaults = { max-age = "off"; orphan-min-age = "off"; };
EOF

# The table: expectation (gone|kept), age (old|young), type (file|dir|link), path, why.
cat > "$T/table" <<EOF
gone old  file tmp/$H_SESS/tool-results/call_1.txt        tool result older than 24h
gone old  file tmp/$H_SESS/shell_1.output                 legacy *.output older than 24h
kept young file tmp/$H_SESS/tool-results/call_2.txt       tool result written today
kept old  link tmp/$H_SESS/tool-results/call_3.txt        a symlink is never a tool result
kept old  dir  tmp/$H_SESS/tool-results/sub               a directory is never a tool result
kept old  file tmp/$H_SESS/notes.txt                      not *.output
kept old  file tmp/$H_SESS/logs.json                      the project has sessions
gone old  dir  tmp/$H_GONE                                no session, every name known
kept old  file tmp/$H_UNK/mystery.bin                     unknown name next to known ones
kept old  file tmp/$H_UNK/logs.json                       ... keeps the whole directory
gone old  file tmp/$H_UNK/tool-results/call_9.txt         ... but its old tool results go
kept old  file tmp/$H_LOCK/scheduled_tasks.lock           a live process's task lock: a live sidecar
kept old  file tmp/$H_LOCK/logs.json                      ... keeps the directory
gone old  dir  tmp/$H_DEAD                                the lock of a dead process is a leftover
kept old  file tmp/$H_TASKS/scheduled_tasks.json          a scheduled task keeps it
kept young file tmp/$H_YOUNG/logs.json                    written today
gone old  file debug/$ORPH.txt                            debug log, no transcript
kept young file debug/$YOUNG.txt                          debug log written today
kept old  file debug/$ACT.txt                             its session is active
kept old  file debug/$ARC.txt                             its session is archived
kept old  file debug/notes.txt                            not a session id
kept old  link debug/latest                               a symlink (Qwen's own)
gone old  file plans/$ORPH.md                             plan, no transcript
kept old  file plans/$ACT.md                              its session is active
kept young file plans/$YOUNG.md                           written today
kept old  file plans/README.md                            not a session id
gone old  file tmp/$H_LEG/chats/session-2025-01-02T10-11-abcd1234.json legacy chat
gone old  file tmp/$H_LEG/checkpoint-mytag.json           legacy checkpoint
gone old  file tmp/$H_LEG/checkpoint.json                 legacy checkpoint
kept young file tmp/$H_LEG/chats/session-2026-11-30T10-11-abcd1235.json legacy chat written today
kept old  file tmp/$H_LEG/chats/other.txt                 not a legacy chat name
kept old  file tmp/$H_LEG/logs.json                       legacy chats keep the directory
EOF

# plant TREE: every path of the table, and the bodies the guards need
plant() {
        while read -r want age type path why; do
                p="$1/$path"
                mkdir -p "$(dirname "$p")"
                case $type in
                file) [ -e "$p" ] || printf 'data of %s\n' "$path" > "$p" ;;
                dir) mkdir -p "$p/x"; printf 'inside\n' > "$p/x/f" ;;
                link) [ -e "$p" ] || [ -L "$p" ] || ln -s /etc/hostname "$p" ;;
                esac
        done < "$T/table"
        # the directory that goes whole holds only names qgc knows
        for f in logs.json shell_history a.output; do echo "$f" > "$1/tmp/$H_GONE/$f"; done
        mkdir -p "$1/tmp/$H_GONE/tool-results" "$1/tmp/$H_GONE/checkpoints"
        echo r > "$1/tmp/$H_GONE/tool-results/c.txt"
        echo '[]' > "$1/tmp/$H_GONE/scheduled_tasks.json"
        rm -rf "$1/tmp/$H_GONE/x"
        echo '[{"id":"t1","cron":"* * * * *","prompt":"p"}]' > "$1/tmp/$H_TASKS/scheduled_tasks.json"
        # this test's shell is alive; a pid that just exited is not
        printf '{"pid":%s,"sessionId":"x","lockId":"a"}' $$ > "$1/tmp/$H_LOCK/scheduled_tasks.lock"
        rm -rf "$1/tmp/$H_DEAD/x"
        printf '{"pid":%s,"sessionId":"x","lockId":"b"}' "$(sh -c 'echo $$')" > "$1/tmp/$H_DEAD/scheduled_tasks.lock"
        echo '[]' > "$1/tmp/$H_DEAD/logs.json"
        # ages: everything old first, then the young rows touched now
        find "$1/tmp" "$1/debug" "$1/plans" -exec touch -h -d "@$OLD" {} +
        while read -r want age type path why; do
                [ "$age" = young ] && touch -h "$1/$path"
        done < "$T/table"
        [ "$(stat -c %Y "$1/tmp/$H_YOUNG")" -gt "$OLD" ] || touch "$1/tmp/$H_YOUNG"
}

check_table() { # TREE LABEL [all-kept]
        while read -r want age type path why; do
                [ "${3:-}" = all-kept ] && want=kept
                if [ -e "$1/$path" ] || [ -L "$1/$path" ]; then there=kept; else there=gone; fi
                [ "$there" = "$want" ] || bad "$2: $path is $there, want $want ($why)"
        done < "$T/table"
}

# 1. the rules on: the dry run plans exactly the table's removals
tree=$(make_tree on)
plant "$tree"
touch -h -d "@$OLD" "$tree/debug/latest"
run_qgc --dry-run --json --root "$tree" -c "$T/on.conf" > "$T/plan.json" || fail "dry run"
python3 - "$T/plan.json" "$T/table" <<'PY' || bad "the plan is not the table's"
import json, sys
plan = json.load(open(sys.argv[1]))
want = set()
for line in open(sys.argv[2]):
    w, age, typ, path, *_ = line.split()
    if w == "gone":
        want.add(path)
got, rules = set(), {}
for o in plan["orphans"]:
    if o["verb"] == "delete":
        p = o["project_dir"] + "/" + o["name"]
        got.add(p)
        rules[p] = (o["kind"], o["rule"], o["reason"])
        assert o["reason"], p
# tmp/H_GONE/ goes whole; the corpus's own old *.output goes too
extra = {p for p in got - want if p.endswith(".output") and "/" in p}
for p in sorted(got - want - extra):
    print("planned, not in the table:", p, rules[p])
for p in sorted(want - got):
    print("in the table, not planned:", p)
for p, r in sorted(rules.items()):
    print(p, r)
sys.exit(0 if got - extra == want else 1)
PY
# the text plan names the rule's reason
run_qgc --dry-run --root "$tree" -c "$T/on.conf" > "$T/plan.txt" || fail "text dry run"
grep -q "tool result (Qwen removes them after 24h), idle" "$T/plan.txt" || bad "no tool-result reason in the text plan"
grep -q "tmp/<hash>/ of a project with no session left" "$T/plan.txt" || bad "no stale-tmp reason"
# each row names its item by its path in the tree (which tmp/<hash>/ it is), in --changes too
grep -q "^  tmp/$H_SESS/tool-results/call_1.txt " "$T/plan.txt" || bad "the text plan does not name tmp/<hash>/tool-results/call_1.txt"
grep -q "^  tmp/$H_GONE " "$T/plan.txt" || bad "the text plan does not name tmp/$H_GONE"
run_qgc --changes --root "$tree" -c "$T/on.conf" > "$T/changes.txt" || fail "--changes"
grep -q " call_1.txt .* tmp/$H_SESS/tool-results  tool result" "$T/changes.txt" ||
        { cat "$T/changes.txt"; bad "--changes does not name the item's directory"; }
grep -q "projects/tmp/" "$T/changes.txt" && bad "--changes calls tmp/ a project"

run_qgc --root "$tree" -c "$T/on.conf" --log-file "$T/actions.log" > "$T/run.out" ||
        { cat "$T/run.out" "$T/actions.log"; fail "real run failed"; }
check_table "$tree" "rules on"
for rule in tool-results-max-age stale-tmp-min-age debug-plans-min-age legacy-max-age; do
        grep -q "QGC_ACTION=orphan-reclaimed.*QGC_RULE=$rule" "$T/actions.log" ||
                bad "no journal entry for $rule"
done
n=$(grep -c "QGC_ACTION=orphan-reclaimed" "$T/actions.log" || true)
[ "$n" -ge 9 ] || bad "$n reclaims journalled, want at least 9"
[ -d "$tree/tmp/$H_LEG" ] || bad "the legacy project's tmp/ went"
# a second run finds nothing more to do outside sessions
run_qgc --dry-run --json --root "$tree" -c "$T/on.conf" > "$T/plan2.json" || fail "second dry run"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); d=[o for o in p["orphans"] if o["verb"]=="delete"]; sys.exit(1 if d else 0)' "$T/plan2.json" ||
        bad "a second run would still reclaim something"

# 2. the defaults: nothing outside sessions is planned or touched
tree=$(make_tree off)
plant "$tree"
run_qgc --dry-run --json --root "$tree" -c "$T/off.conf" > "$T/plan-off.json" || fail "dry run (off)"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); sys.exit(1 if p["orphans"] else 0)' "$T/plan-off.json" ||
        bad "keys off, and the plan holds hygiene items"
run_qgc --root "$tree" -c "$T/off.conf" --log-file "$T/actions-off.log" > /dev/null || fail "run (off)"
check_table "$tree" "keys off" all-kept

# 3. a session whose cwd is not proven: no tmp/<hash>/ is called stale in that tree
tree=$(make_tree unsure)
plant "$tree"
mkdir -p "$tree/projects/-srv-demo-x/chats"
printf 'not json\n' > "$tree/projects/-srv-demo-x/chats/0c0ffee0-1234-4abc-8def-0123456789ad.jsonl"
touch -h -d "@$OLD" "$tree/projects/-srv-demo-x/chats/0c0ffee0-1234-4abc-8def-0123456789ad.jsonl"
run_qgc --root "$tree" -c "$T/on.conf" --log-file "$T/actions-unsure.log" > /dev/null 2>&1 || fail "run (unsure)"
[ -d "$tree/tmp/$H_GONE" ] || bad "unsure: tmp/<hash>/ removed although a session's cwd is unknown"
[ ! -e "$tree/tmp/$H_SESS/tool-results/call_1.txt" ] || bad "unsure: the tool-results rule does not depend on sessions"

# 4. stale project entries (every cwd a temporary directory that no longer exists) are reported
#    by status, never removed; a cwd that exists again keeps its project out of the count
tree=$(make_tree stale)
gone=/tmp/qgc-t0500-gone-$$
back="$T/../qgc-t0500-back-$$"
back=$(cd "$(dirname "$back")" && pwd)/$(basename "$back")
case $back in /tmp/*) ;; *) back=/tmp/qgc-t0500-back-$$ ;; esac
rm -rf "$gone"
mkdir -p "$back"
trap 'rm -rf "$back"; cleanup' EXIT
transcript() { # CWD ID
        dir="$tree/projects/$(printf '%s' "$1" | sed 's/[^A-Za-z0-9]/-/g')/chats"
        mkdir -p "$dir"
        printf '{"uuid":"u1","parentUuid":null,"sessionId":"%s","timestamp":"2026-10-01T00:00:00.000Z","type":"user","cwd":"%s","version":"0.24.4","message":{"role":"user","parts":[{"text":"hi"}]}}\n' \
                "$2" "$1" > "$dir/$2.jsonl"
        touch -d "@$OLD" "$dir/$2.jsonl"
}
transcript "$gone" 0c0ffee0-1234-4abc-8def-0123456789b1
transcript "$gone" 0c0ffee0-1234-4abc-8def-0123456789b2
transcript "$back" 0c0ffee0-1234-4abc-8def-0123456789b3
run_qgc status --json --root "$tree" > "$T/stale.json" || fail "status --json (stale)"
python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["breakdown"][0]; sys.exit(0 if t["stale_projects"] == 1 else 1)' "$T/stale.json" ||
        bad "stale projects: want 1 (the vanished /tmp cwd; not the one that exists again): $(grep stale_projects "$T/stale.json")"
run_qgc status --root "$tree" > "$T/stale.txt" || fail "status (stale)"
grep -q "stale project entries: 1 of 6 " "$T/stale.txt" || bad "status text: $(grep "stale project" "$T/stale.txt")"
rm -rf "$back"   # now both are gone: two stale entries
run_qgc status --json --root "$tree" > "$T/stale2.json" || fail "status --json (stale, 2)"
python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["breakdown"][0]; sys.exit(0 if t["stale_projects"] == 2 else 1)' "$T/stale2.json" ||
        bad "stale projects: want 2 once the other cwd is gone too"
run_qgc --root "$tree" -c "$T/on.conf" --log-file "$T/actions-stale.log" > /dev/null || fail "run (stale)"
[ -f "$tree/projects/$(printf '%s' "$gone" | sed 's/[^A-Za-z0-9]/-/g')/chats/0c0ffee0-1234-4abc-8def-0123456789b1.jsonl" ] ||
        bad "a stale project entry was removed: qgc only reports them"

[ $nbad -eq 0 ] || fail "$nbad checks failed"
pass "hygiene rules act on the table exactly, guards hold, defaults touch nothing"
