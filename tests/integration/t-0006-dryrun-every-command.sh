#!/bin/sh
# Every command with --dry-run (and the read-only commands) changes nothing: the tree is
# byte-identical afterwards, mtimes and atimes included (every atime is first set to 2001, so
# that any read, even a relatime one, would show), no action-log entry is written and no lock
# file is created. Includes `--dry-run restore ID` and `restore -n ID`, which must print what
# would move instead of moving it.
. "$(dirname "$0")/lib.sh"

tree=$(make_tree tree)
ARCH=1a914264-8e49-442e-bc79-1cb2de9eae0c   # scratch, archived
ACTIVE=47406782-cafc-46f6-a948-02f7b5b53f92 # api-server, active
NOW=2027-04-01T00:00:00Z
CONF="$QGC_TESTDATA/integration/apply.conf"
LOG="$T/action.log"
# no host policy files
export XDG_CONFIG_HOME="$T/xdg"
NOSYS="--system-config $T/no-system.conf"

# something for a dry run to plan around: a sidecar of the archived session and a stale temp
# file of an interrupted merge
printf '{"prs":[]}\n' > "$tree/projects/-srv-demo-scratch/chats/archive/$ARCH.pr.json"
printf 'half' > "$tree/projects/-srv-demo-scratch/chats/archive/.$ARCH.ledger.jsonl.qgc-tmp"
touch -d 2026-11-30T06:00:00Z "$tree/projects/-srv-demo-scratch/chats/archive/$ARCH.pr.json" \
        "$tree/projects/-srv-demo-scratch/chats/archive/.$ARCH.ledger.jsonl.qgc-tmp"

snapshot "$tree" "$T/s0"   # gathers the path list (reads directories)
reset_atimes "$tree"
snapshot "$tree" "$T/before"

dry() { # dry NAME ARGS...: run, keep stdout and stderr, fail on a crash
        name=$1; shift
        set +e
        timeout 60 "$QGC" $NOSYS "$@" > "$T/$name.out" 2> "$T/$name.err"
        rc=$?
        set -e
        [ $rc -lt 124 ] || { cat "$T/$name.err"; fail "qgc $*: rc $rc"; }
        grep -q "QGC_ACTION=" "$T/$name.err" && { cat "$T/$name.err"; fail "qgc $* wrote action-log entries"; }
        return $rc
}
common="--root $tree --now $NOW -c $CONF --log-target stderr --log-file $LOG"

dry n -n $common || fail "qgc -n failed"
dry json -n --json $common || fail "qgc -n --json failed"
dry restore1 -n $common restore "$ARCH" || { cat "$T/restore1.err"; fail "qgc -n restore failed"; }
dry restore2 $common restore -n "$ARCH" || { cat "$T/restore2.err"; fail "qgc restore -n failed"; }
dry restorejson -n --json $common restore "$ARCH" || fail "qgc -n --json restore failed"
dry restore3 --dry-run $common restore "$ACTIVE" && fail "dry restore of an active session succeeded"
dry status status --root "$tree" --now "$NOW" -c "$CONF" || fail "status failed"
dry cc check-config -c "$CONF" || fail "check-config failed"
dry cce check-config --explain -c "$CONF" || fail "check-config --explain failed"

snapshot "$tree" "$T/after"
diff -u "$T/before" "$T/after" || fail "a dry run changed the tree"
python3 -c '
import os, sys
root, listfile = sys.argv[1], sys.argv[2]
before = set(open(listfile).read().split("\n"))
now = {root}
for d, ds, fs in os.walk(root):
    for n in ds + fs: now.add(os.path.join(d, n))
extra = now - before
if extra: print("new paths:", sorted(extra)); sys.exit(1)
' "$tree" "$T/.paths-tree" || fail "a dry run created files (a lock file?)"
[ ! -e "$LOG" ] || { cat "$LOG"; fail "a dry run wrote the action log"; }

# the dry restore says what would move, from where to where, sidecars included
for f in restore1 restore2; do
        grep -q "would restore" "$T/$f.out" || { cat "$T/$f.out"; fail "$f: no 'would restore'"; }
        grep -q "chats/archive/$ARCH.jsonl" "$T/$f.out" || { cat "$T/$f.out"; fail "$f: no source path"; }
        grep -q "chats/$ARCH.jsonl" "$T/$f.out" || { cat "$T/$f.out"; fail "$f: no target path"; }
        grep -q "$ARCH.pr.json" "$T/$f.out" || { cat "$T/$f.out"; fail "$f: sidecar not shown"; }
done
grep -qi "not archived" "$T/restore3.out" "$T/restore3.err" || fail "no reason for refusing an active session"
python3 - "$T/restorejson.out" "$ARCH" <<'PY' || fail "the JSON restore plan is wrong"
import json, sys
plan, arch = json.load(open(sys.argv[1])), sys.argv[2]
(st,) = plan["restore"]
assert st["session"] == arch and st["verb"] == "restore", st
moves = {(p["from"].split("/chats/")[1], p["to"].split("/chats/")[1]) for p in st["paths"]}
assert moves == {(f"archive/{arch}.jsonl", f"{arch}.jsonl"),
                 (f"archive/{arch}.pr.json", f"{arch}.pr.json")}, moves
assert "projects" not in plan, "a restore plan has no policy part"
PY
grep -q "would archive\|would delete" "$T/n.out" || fail "the dry run plans nothing"
# the recovery pass is part of the plan: shown by the dry run, in text and JSON
grep -q "recover: would remove a stale temporary file" "$T/n.out" || { cat "$T/n.out"; fail "no recover row"; }
grep -q "\.$ARCH.ledger.jsonl.qgc-tmp" "$T/n.out" || fail "the recover row does not name the file"
grep -q '"kind": "remove-temporary"' "$T/json.out" || fail "no recover step in the JSON plan"

# and the real restore still works, takes the lock and journals
run_qgc $NOSYS --root "$tree" -c "$CONF" --log-file "$LOG" restore "$ARCH" || fail "restore failed"
[ -f "$tree/projects/-srv-demo-scratch/chats/$ARCH.jsonl" ] || fail "restore did not move the session"
[ -f "$tree/projects/-srv-demo-scratch/chats/$ARCH.pr.json" ] || fail "restore left the sidecar"
grep -q "QGC_ACTION=restored" "$LOG" || fail "the restore was not journalled"
[ -e "$tree/.qgc.lock" ] || fail "the restore took no lock"
# a real run executes the recovery step first, and journals it
run_qgc $NOSYS --root "$tree" -c "$QGC_TESTDATA/integration/empty.conf" --log-file "$LOG" > /dev/null || fail "real run failed"
[ ! -e "$tree/projects/-srv-demo-scratch/chats/archive/.$ARCH.ledger.jsonl.qgc-tmp" ] || fail "the stale temporary file stayed"
grep -q "QGC_ACTION=recovered" "$LOG" || fail "the recovery was not journalled"
pass "dry runs of every command change nothing"
