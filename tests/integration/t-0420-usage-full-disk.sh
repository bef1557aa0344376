#!/bin/sh
# usage_record.jsonl after interrupted appends (issue 9, item 2), checked with Qwen Code's own
# loadUsageHistory (qwen-check.sh --expect-usage): every session qgc deleted has its line, and no
# session has a duplicate.
#  1. The file ends in a partial line (Qwen died mid-append): the salvaged line starts a fresh one.
#  2. A full disk: in a private mount namespace, the tree lives on a small tmpfs filled up so that
#     the salvage append is short. The session is kept, the fragment is made harmless; after space
#     is freed a rerun salvages it once and deletes it.
# Needs node and npm; part 2 needs root and unshare -m (SKIP without them, as in a container).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/qwen-npm.sh"

NOW=2027-04-01T00:00:00Z
CONF="$QGC_TESTDATA/integration/apply.conf"
KILLED=6dcfb8c0-951c-475b-9ca1-0d8837bead38 # deleted by apply.conf, no usage line yet

# salvaged_ids PLAN.json: the sessions the plan removes whose salvage has a record, comma-separated.
salvaged_ids() {
        python3 - "$1" "$QGC_TESTDATA/corpus/golden/salvage.jsonl" <<'PY'
import json, os, sys
plan = json.load(open(sys.argv[1]))
golden = {}
for line in open(sys.argv[2]):
    g = json.loads(line)
    golden[os.path.basename(g["transcript"])[:-6]] = g["record"]
print(",".join(s["id"] for p in plan["projects"] for s in p["sessions"]
               if s["verb"] in ("archive", "delete") and golden.get(s["id"])))
PY
}

# check_tree TREE NAME IDS: Qwen returns a line for each of IDS, and no session gained more than
# one line (compared with $T/NAME.usage-before and Qwen's view in $T/NAME.before.json).
check_tree() {
        "$NPMDIR/qwen-check.sh" "$1" --expect-usage "$3" > "$T/$2.check.txt" 2>&1 ||
                { cat "$T/$2.check.txt"; fail "$2: Qwen does not return every salvaged line"; }
        qwen_usage "$1" "$T/$2.after.json"
        python3 "$QGC_SRCDIR/tests/integration/usage-compare.py" "$T/$2.before.json" "$T/$2.after.json" \
                "$T/$2.usage-before" "$1/usage_record.jsonl" "$2" --allow-added "$3" ||
                fail "$2: a session lost its line or has a duplicate"
}

# ---------------------------------------------------------------- 1. a partial last line
tree=$(make_tree partial)
printf '{"version":1,"sessionId":"died-mid-append","timestamp":1764' >> "$tree/usage_record.jsonl"
qwen_usage "$tree" "$T/partial.before.json"
cp "$tree/usage_record.jsonl" "$T/partial.usage-before"
run_qgc --dry-run --json --root "$tree" --now "$NOW" -c "$CONF" > "$T/plan.json" || fail "dry run"
ids=$(salvaged_ids "$T/plan.json")
case ",$ids," in *",$KILLED,"*) ;; *) fail "the plan does not delete $KILLED: the test would prove nothing" ;; esac
run_qgc --root "$tree" --now "$NOW" -c "$CONF" > /dev/null 2>&1 || fail "real run after a partial line"
check_tree "$tree" partial "$ids"
[ ! -e "$tree/projects/-srv-demo-my-notes/chats/$KILLED.jsonl" ] || fail "partial: $KILLED not deleted"

# ---------------------------------------------------------------- 2. a full disk
[ "$(id -u)" = 0 ] || skip "part 2 (full disk) needs root for a tmpfs in a private mount namespace"
command -v unshare >/dev/null || skip "part 2 (full disk) needs unshare"
unshare -m true 2>/dev/null || skip "part 2 (full disk): no mount namespaces here"

MNT=$T/mnt
mkdir -p "$MNT"
unshare -m sh -c "mount --make-rprivate / 2>/dev/null; mount -t tmpfs qgc-probe '$MNT' && umount '$MNT'" 2>/dev/null ||
        skip "part 2 (full disk): cannot mount a tmpfs in a private mount namespace here"

tree=$(make_tree full)
qwen_usage "$tree" "$T/full.before.json"
cp "$tree/usage_record.jsonl" "$T/full.usage-before"
cat > "$T/inner.sh" <<'IN'
set -eu
mount --make-rprivate / 2>/dev/null || :
kb=$(du -sk "$SRC" | cut -f1)
mount -t tmpfs -o "size=$((kb + 1024))k,mode=0755" qgc-full-disk "$MNT"
cp -a "$SRC/." "$MNT/q/"
q=$MNT/q
# leave 64 bytes in the last page of usage_record.jsonl (tmpfs allocates whole pages), with a
# blank line Qwen skips, so that the salvaged line (651 bytes) cannot fit
size=$(stat -c %s "$q/usage_record.jsonl")
room=$(( (4096 - size % 4096) % 4096 ))
[ "$room" -gt 65 ] || room=$((room + 4096))
head -c $((room - 65)) /dev/zero | tr '\0' ' ' >> "$q/usage_record.jsonl"
echo >> "$q/usage_record.jsonl"
cp "$q/usage_record.jsonl" "$OUT/usage-padded"
# a second link to every file, so that the run's deletions free no space, then fill the disk
cp -al "$q" "$MNT/links"
dd if=/dev/zero of="$MNT/fill" bs=4096 2>/dev/null || :
set +e
timeout 60 "$QGC" --root "$q" --now "$NOW" -c "$CONF" --log-file "$OUT/run1.log" > "$OUT/run1.out" 2>&1
echo $? > "$OUT/run1.rc"
set -e
cp "$q/usage_record.jsonl" "$OUT/usage-run1"
[ -e "$q/projects/-srv-demo-my-notes/chats/$KILLED.jsonl" ] && echo kept > "$OUT/run1.killed" || echo gone > "$OUT/run1.killed"
# free the space, run again
rm -rf "$MNT/fill" "$MNT/links"
set +e
timeout 60 "$QGC" --root "$q" --now "$NOW" -c "$CONF" --log-file "$OUT/run2.log" > "$OUT/run2.out" 2>&1
echo $? > "$OUT/run2.rc"
set -e
rm -rf "$OUT/tree" && mkdir -p "$OUT/tree" && cp -a "$q/." "$OUT/tree/"
umount "$MNT"
IN
mkdir -p "$T/out"
SRC=$tree MNT=$MNT OUT=$T/out QGC=$QGC NOW=$NOW CONF=$CONF KILLED=$KILLED \
        unshare -m sh "$T/inner.sh" || fail "the full-disk run could not be set up"
cat "$T/out/run1.out"
[ "$(cat "$T/out/run1.rc")" = 1 ] || fail "run on a full disk: exit $(cat "$T/out/run1.rc"), expected 1 (a failure)"
[ "$(cat "$T/out/run1.killed")" = kept ] || fail "run on a full disk deleted $KILLED without its usage line"
grep -q "cannot salvage the usage record; session kept" "$T/out/run1.log" ||
        fail "the full-disk run does not say why the session was kept"
python3 - "$T/out/usage-padded" "$T/out/usage-run1" <<'PY' || fail "the short append was not undone"
import sys
a, b = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
assert b.startswith(a), "bytes before the append changed"
rest = b[len(a):]
assert rest.strip(b" ") in (b"\n", b""), f"left behind: {rest[:80]!r}"
assert len(rest) > 0, "the append was not short: the test proves nothing"
print(f"full disk: {len(rest)} bytes of the short append blanked in place")
PY
[ "$(cat "$T/out/run2.rc")" = 0 ] || { cat "$T/out/run2.out"; fail "rerun after freeing space: exit $(cat "$T/out/run2.rc")"; }
[ ! -e "$T/out/tree/projects/-srv-demo-my-notes/chats/$KILLED.jsonl" ] || fail "rerun did not delete $KILLED"
check_tree "$T/out/tree" full "$ids"
pass "a partial last line and a full disk leave every deleted session's usage line readable by Qwen, once"
