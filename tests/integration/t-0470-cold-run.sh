#!/bin/sh
# compress-after in runs (the cold tier, issue 14): the dry run plans "compress" with its rule and
# reason (text and JSON); a real run compresses archived sessions into chats/archive/.qgc-cold/
# and journals each with both sizes; the next runs see them as compressed archived sessions:
# their file-history/<id>/ is no orphan, status shows the compressed bytes and the space saved,
# `qgc show` and `qgc restore` give back each transcript byte for byte with its mtime, and a
# restored session is kept by restore-grace; and
# archive-max-age deletes a compressed session with its usage salvaged from the decompressed
# transcript, the very line the delete of the uncompressed session writes.
. "$(dirname "$0")/lib.sh"

NOW=2027-04-01T00:00:00Z
ARCH=1a914264-8e49-442e-bc79-1cb2de9eae0c   # archived in the corpus (scratch)
FH=df25afd1-db41-477e-87bb-98d273af1115     # my-notes, has file-history/<id>/
FH2=6dcfb8c0-951c-475b-9ca1-0d8837bead38    # my-notes, has file-history/<id>/
tree=$(make_tree tree)
orig=$(make_tree orig)
cat > "$T/c.conf" <<'CONF'
defaults = { action = "archive"; max-age = "90d"; compress-after = "90d"; compress-level = 5;
             keep-latest = 0; orphan-min-age = "1h"; max-deletions-percent = 100; };
CONF

# 1. the plan
run_qgc --dry-run --now "$NOW" --root "$tree" -c "$T/c.conf" > "$T/plan.txt" || fail "dry run"
grep -q "^  1a914264 would compress .* archived, idle .* > compress-after 90d$" "$T/plan.txt" ||
        { cat "$T/plan.txt"; fail "the text plan does not compress the archived session"; }
grep -q "^  would compress .*1 session" "$T/plan.txt" || { cat "$T/plan.txt"; fail "summary: no compress line"; }
run_qgc --dry-run --json --now "$NOW" --root "$tree" -c "$T/c.conf" > "$T/plan.json" || fail "dry run --json"
python3 - "$T/plan.json" "$ARCH" <<'PY' || fail "the JSON plan does not compress the archived session"
import json, sys
plan = json.load(open(sys.argv[1]))
s = {s["id"]: s for p in plan["projects"] for s in p["sessions"]}[sys.argv[2]]
assert s["verb"] == "compress" and s["rule"] == "compress-after", s
assert "compressed" not in s, s
assert plan["summary"]["verbs"]["compress"]["count"] == 1, plan["summary"]["verbs"]
assert plan["summary"]["rules"]["compress-after"]["count"] == 1, plan["summary"]["rules"]
PY

# 2. a real run: the others are archived, the archived one compressed and journalled
run_qgc --now "$NOW" --root "$tree" -c "$T/c.conf" --log-file "$T/run1.log" > "$T/run1.out" 2>&1 ||
        { cat "$T/run1.out"; fail "real run"; }
grep -q "compressed 1 (" "$T/run1.out" || { cat "$T/run1.out"; fail "the run does not report the compression"; }
cold="$tree/projects/-srv-demo-scratch/chats/archive/.qgc-cold"
[ -f "$cold/$ARCH.jsonl.zst" ] && [ ! -e "$tree/projects/-srv-demo-scratch/chats/archive/$ARCH.jsonl" ] ||
        fail "the archived session was not compressed in place"
size=$(stat -c %s "$orig/projects/-srv-demo-scratch/chats/archive/$ARCH.jsonl")
zsize=$(stat -c %s "$cold/$ARCH.jsonl.zst")
grep "QGC_ACTION=compressed" "$T/run1.log" | grep "QGC_SESSION=$ARCH" |
        grep -q "QGC_ORIGINAL_BYTES=$size QGC_COMPRESSED_BYTES=$zsize" ||
        { cat "$T/run1.log"; fail "the journal entry does not carry both sizes ($size, $zsize)"; }

# 3. the next run compresses what the first archived; the file-history of compressed sessions
# is no orphan (orphan-min-age 1h would reclaim it)
run_qgc --dry-run --json --now "$NOW" --root "$tree" -c "$T/c.conf" > "$T/plan2.json" || fail "dry run 2"
python3 - "$T/plan2.json" "$FH" "$FH2" "$ARCH" <<'PY' || fail "plan 2"
import json, sys
plan = json.load(open(sys.argv[1]))
s = {s["id"]: s for p in plan["projects"] for s in p["sessions"]}
assert s[sys.argv[2]]["verb"] == "compress" and s[sys.argv[3]]["verb"] == "compress"
a = s[sys.argv[4]]
assert a["state"] == "archived" and a["verb"] == "keep" and a["owner"] == "ok", a
c = a["compressed"]
assert 0 < c["bytes"] < c["original_bytes"] and c["saved_bytes"] == c["original_bytes"] - c["bytes"], c
assert not [o for o in plan["orphans"] if o["name"] in sys.argv[2:]], plan["orphans"]
PY
# one compression story (issue 24.10): the forecast names the bytes the run compresses and an
# estimate labelled as one (from the ratio the first run's compression measured); the run line,
# the journal summary and each action entry say the same figures in the same units, the
# entries' fields the exact bytes
run_qgc --dry-run --now "$NOW" --root "$tree" -c "$T/c.conf" > "$T/plan2.txt" || fail "dry run 2 (text)"
fc=$(sed -n 's/^  would compress \([0-9.]*[KMGB]*\) (their transcripts and sidecars) into the cold tier$/\1/p' "$T/plan2.txt")
[ -n "$fc" ] || { cat "$T/plan2.txt"; fail "forecast: no bytes to compress"; }
grep -q "^    about [0-9.]*[KMGB]* after compression, estimated from the tree's compressed sessions (1:[0-9.]*)$" "$T/plan2.txt" ||
        { cat "$T/plan2.txt"; fail "forecast: no estimate from the measured ratio"; }
run_qgc --now "$NOW" --root "$tree" -c "$T/c.conf" --log-file "$T/run2.log" > "$T/run2.out" 2>&1 ||
        { cat "$T/run2.out"; fail "real run 2"; }
ran=$(sed -n 's/.*, compressed \([0-9]*\) (\([0-9.]*[KMGB]*\) into \([0-9.]*[KMGB]*\)); freed.*/\1 \2 \3/p' "$T/run2.out")
[ "$(echo "$ran" | cut -d' ' -f2)" = "$fc" ] || { cat "$T/run2.out"; fail "the run compressed other bytes ($ran) than forecast ($fc)"; }
grep "QGC_ACTION=run-summary" "$T/run2.log" | grep -q "compressed $(echo "$ran" | cut -d' ' -f1) ($(echo "$ran" | cut -d' ' -f2) into $(echo "$ran" | cut -d' ' -f3)); freed" ||
        { grep run-summary "$T/run2.log"; fail "the journal summary does not say the run line's compression"; }
python3 - "$T/run2.log" <<'PY' || fail "compressed entries: human units in MESSAGE, exact bytes in fields"
import re, shlex, sys
def human(b):  # util.c's util_format_bytes(): B, then K, M, ... truncated, one decimal below 10
    if b < 1024:
        return "%dB" % b
    shift, i = 10, 0
    while (b >> shift) >= 1024 and i < 5:
        shift, i = shift + 10, i + 1
    whole = b >> shift
    frac = "." + str(((b & ((1 << shift) - 1)) * 10) >> shift) if whole < 10 else ""
    return "%d%s%s" % (whole, frac, "KMGTPE"[i])
seen = 0
for line in open(sys.argv[1]):
    if "QGC_ACTION=compressed" not in line:
        continue
    f = dict(kv.split("=", 1) for kv in shlex.split(line))
    i, o = int(f["QGC_ORIGINAL_BYTES"]), int(f["QGC_COMPRESSED_BYTES"])
    want = "%s into %s" % (human(i), human(o))
    assert f["MESSAGE"].endswith(": " + want), (f["MESSAGE"], want)
    seen += 1
assert seen >= 2, seen
PY
run_qgc --dry-run --json --now "$NOW" --root "$tree" -c "$T/c.conf" > "$T/plan3.json" || fail "dry run 3"
python3 - "$T/plan3.json" "$FH" "$FH2" <<'PY' || fail "compressed sessions' file-history taken for orphans"
import json, sys
plan = json.load(open(sys.argv[1]))
s = {s["id"]: s for p in plan["projects"] for s in p["sessions"]}
for i in sys.argv[2:]:
    assert s[i]["state"] == "archived" and "compressed" in s[i] and s[i]["verb"] == "keep", s[i]
assert not [o for o in plan["orphans"] if o["name"] in sys.argv[2:]], plan["orphans"]
PY
for id in $FH $FH2; do
        [ -d "$tree/file-history/$id" ] || fail "file-history/$id of a compressed session was removed"
        [ -f "$tree/projects/-srv-demo-my-notes/chats/archive/.qgc-cold/$id.jsonl.zst" ] || fail "$id not compressed"
done

# 4. status: compressed bytes and the space saved
run_qgc status --root "$tree" -c "$T/c.conf" > "$T/status.txt" || fail "status"
# one size per session: counted at its size on disk, what it was before said as such
grep -q "^compressed: 12 of them, at their size on disk ([0-9.]*[KMGB]* before)$" "$T/status.txt" || { cat "$T/status.txt"; fail "status: no compressed line"; }
run_qgc status --json --root "$tree" -c "$T/c.conf" > "$T/status.json" || fail "status --json"
python3 - "$T/status.json" <<'PY' || fail "status --json: compressed"
import json, sys
c = json.load(open(sys.argv[1]))["total"]["compressed"]
assert c["sessions"] == 12 and 0 < c["bytes"] < c["original_bytes"], c
PY

# status still accounts for every byte: its total equals du, the cold tier counted as archive
du_b=$(du -s -b "$tree" | cut -f1)
python3 - "$T/status.json" "$du_b" <<'PY' || fail "status and du -b differ with a cold tier"
import json, sys
t = json.load(open(sys.argv[1]))["breakdown"][0]
assert t["total"]["bytes"] == int(sys.argv[2]), (t["total"], sys.argv[2])
assert not [p for p in t.get("unknown_shown", []) if ".qgc-cold" in p], t["unknown_shown"]
PY

# 5. show and restore of a session a run compressed: byte for byte, with its mtime
o="$orig/projects/-srv-demo-my-notes/chats/$FH.jsonl"
run_qgc show "$FH" --root "$tree" -c "$T/c.conf" > "$T/show.out" || fail "show"
cmp -s "$T/show.out" "$o" || fail "show of a compressed session differs"
run_qgc restore "$FH" --root "$tree" -c "$T/c.conf" --log-file "$T/restore.log" > "$T/restore.out" 2>&1 ||
        { cat "$T/restore.out"; fail "restore"; }
grep -qx "qgc: restored session $FH from the compressed archive to $tree/projects/-srv-demo-my-notes/chats" "$T/restore.out" ||
        { cat "$T/restore.out"; fail "restore does not say it went from the compressed archive to chats/"; }
r="$tree/projects/-srv-demo-my-notes/chats/$FH.jsonl"
cmp -s "$r" "$o" || fail "the restored transcript differs"
[ "$(stat -c %y "$r")" = "$(stat -c %y "$o")" ] || fail "the restored mtime differs: $(stat -c %y "$r") vs $(stat -c %y "$o")"
[ ! -e "$tree/projects/-srv-demo-my-notes/chats/archive/.qgc-cold/$FH.jsonl.zst" ] || fail "the .zst stayed"
# the restore sticks: restore-grace (30d by default) keeps it from max-age, and the plan says so
grep -q "^restore [0-9]* $FH\$" "$tree/.qgc/session-times" && grep -q "^restored [0-9]* $FH\$" "$tree/.qgc/session-times" ||
        { cat "$tree/.qgc/session-times"; fail "the restore is not recorded"; }
run_qgc --dry-run --now "$NOW" --root "$tree" -c "$T/c.conf" > "$T/grace.txt" || fail "dry run after the restore"
grep -q "^  df25afd1 keep .*kept: restored [0-9]*s ago (restore-grace 30d) (a rule would select it: archive for idle .* > max-age 90d)$" "$T/grace.txt" ||
        { cat "$T/grace.txt"; fail "the restored session is not kept by restore-grace"; }

# 6. archive-max-age deletes a compressed session, salvaging its usage from the decompressed
# transcript: the line is the one the delete of the same session uncompressed writes
cat > "$T/d.conf" <<'CONF'
defaults = { action = "archive"; max-age = "90d"; archive-max-age = "90d"; keep-latest = 0;
             max-deletions-percent = 100; };
CONF
drop_line() { # drop_line TREE ID N: remove ID's N lines from TREE/usage_record.jsonl
        python3 - "$1/usage_record.jsonl" "$2" "$3" <<'PY'
import sys
p, sid, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = open(p).readlines()
keep = [l for l in lines if '"sessionId":"%s"' % sid not in l]
assert len(keep) == len(lines) - n, "not %d line(s) for %s" % (n, sid)
open(p, "w").writelines(keep)
PY
}
drop_line "$tree" "$FH2" 1
run_qgc --now "$NOW" --root "$tree" -c "$T/d.conf" --log-file "$T/del.log" > "$T/del.out" 2>&1 ||
        { cat "$T/del.out"; fail "delete run"; }
[ ! -e "$tree/projects/-srv-demo-my-notes/chats/archive/.qgc-cold/$FH2.jsonl.zst" ] || fail "compressed session not deleted"
# the journal names the file that was deleted: the compressed one
grep "QGC_ACTION=deleted QGC_SESSION=$FH2" "$T/del.log" |
        grep -qF "QGC_PATH=$tree/projects/-srv-demo-my-notes/chats/archive/.qgc-cold/$FH2.jsonl.zst " ||
        { grep "$FH2" "$T/del.log"; fail "the delete of a compressed session names another path"; }
[ ! -e "$tree/file-history/$FH2" ] || fail "the deleted compressed session's file-history stayed"
ref=$(make_tree ref)
mkdir -p "$ref/projects/-srv-demo-my-notes/chats/archive"
mv "$ref/projects/-srv-demo-my-notes/chats/$FH2.jsonl" "$ref/projects/-srv-demo-my-notes/chats/archive/"
drop_line "$ref" "$FH2" 0 # the corpus has none
run_qgc --now "$NOW" --root "$ref" -c "$T/d.conf" > "$T/ref.out" 2>&1 || { cat "$T/ref.out"; fail "reference delete run"; }
grep "\"sessionId\":\"$FH2\"" "$tree/usage_record.jsonl" > "$T/line.cold" || fail "no usage line salvaged from the compressed transcript"
grep "\"sessionId\":\"$FH2\"" "$ref/usage_record.jsonl" > "$T/line.ref" || fail "reference: no usage line"
[ "$(wc -l < "$T/line.cold")" = 1 ] || fail "more than one usage line"
cmp -s "$T/line.cold" "$T/line.ref" || { diff "$T/line.ref" "$T/line.cold"; fail "the salvaged line differs"; }
# 7. a project whose compressed sessions are all gone is an empty project (its empty cold tier
# no content), reclaimed like any other
s="$tree/projects/-srv-demo-scratch"
[ -d "$s/chats/archive/.qgc-cold" ] && [ -z "$(ls -A "$s/chats/archive/.qgc-cold")" ] || fail "scratch: no empty cold tier"
find "$s" -exec touch -h -d 2026-11-01T00:00:00Z {} +
cat > "$T/o.conf" <<'CONF'
defaults = { max-age = "off"; orphan-min-age = "1h"; };
CONF
run_qgc --now "$NOW" --root "$tree" -c "$T/o.conf" > "$T/orph.out" 2>&1 || { cat "$T/orph.out"; fail "orphan run"; }
[ ! -e "$s" ] || { cat "$T/orph.out"; fail "the empty project with an empty cold tier stayed"; }
pass "compress-after: planned, compressed and journalled with both sizes; compressed sessions keep their file-history, show in status, restore byte for byte, and are deleted with their usage salvaged"
