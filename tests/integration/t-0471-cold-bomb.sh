#!/bin/sh
# A compressed-archive bomb (issue 23.3): chats/archive/.qgc-cold/<id>.jsonl.zst holding a real
# transcript followed by 1 GiB of zeros in one zstd frame of a few hundred KiB, whose trailer
# records the transcript's size. With archive-max-age set, the dry run decompresses no more than
# the recorded size (qgc runs with a 128 MiB file-size limit, which a memfd of the whole content
# would pass, and its peak RSS is measured) and keeps the session with the reason; show, restore
# and the delete refuse it and keep the file. A frame whose lie lies beyond what the scan reads
# (recorded 5 MiB) is refused by the delete's salvage, with the reason, and kept. (A delete that
# need not read the content, its usage line written already, removes it as the policy says.)
# Needs the zstd command (SKIP without it).
. "$(dirname "$0")/lib.sh"

command -v zstd >/dev/null || skip "zstd not installed"
NOW=2027-04-01T00:00:00Z
ARCH=1a914264-8e49-442e-bc79-1cb2de9eae0c   # archived in the corpus (scratch)
tree=$(make_tree tree)
chats="$tree/projects/-srv-demo-scratch/chats"
z="$chats/archive/.qgc-cold/$ARCH.jsonl.zst"
cp -p "$chats/archive/$ARCH.jsonl" "$T/orig.jsonl"
tsize=$(stat -c %s "$T/orig.jsonl")

# make_bomb RECORDED: the transcript and 1 GiB of zeros in one frame, then qgc's trailer
# (cold.h) recording RECORDED bytes and the transcript's SHA-256; the transcript's mtime
make_bomb() {
        mkdir -p "$chats/archive/.qgc-cold"
        { cat "$T/orig.jsonl"; head -c 1073741824 /dev/zero; } | zstd -q -1 --check -c > "$T/frame" ||
                fail "zstd"
        python3 - "$T/orig.jsonl" "$T/frame" "$z" "$1" <<'PY' || fail "cannot write the bomb"
import hashlib, os, struct, sys
src, frame, dst, recorded = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
payload = b"qgc-cold 1 %s %020d\n" % (hashlib.sha256(open(src, "rb").read()).hexdigest().encode(), recorded)
open(dst, "wb").write(open(frame, "rb").read() + struct.pack("<II", 0x184D2A5E, len(payload)) + payload)
st = os.stat(src)
os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
PY
        rm -f "$chats/archive/$ARCH.jsonl"
}

# limited OUT ERR CMD...: run CMD with a 128 MiB file-size limit (a memfd counts), its output in
# OUT and ERR; prints the exit status and the peak RSS in KiB
limited() {
        python3 - "$@" <<'PY'
import resource, subprocess, sys
out, err, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
lim = lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (128 << 20, 128 << 20))
try:
        p = subprocess.run(cmd, preexec_fn=lim, stdout=open(out, "wb"), stderr=open(err, "wb"), timeout=60)
        rc = p.returncode
except subprocess.TimeoutExpired:
        rc = 124
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}

cat > "$T/c.conf" <<'CONF'
defaults = { action = "archive"; max-age = "90d"; archive-max-age = "30d"; keep-latest = 0;
             max-deletions-percent = 100; };
CONF

make_bomb "$tsize"
zbytes=$(stat -c %s "$z")
[ "$zbytes" -lt 4194304 ] || fail "the bomb is $zbytes bytes"

# 1. the dry runs (text and JSON): bounded, the session kept with the reason
set -- $(limited "$T/plan.txt" "$T/plan.err" "$QGC" --dry-run --now "$NOW" --root "$tree" -c "$T/c.conf")
[ "$1" = 0 ] || { cat "$T/plan.err"; fail "the dry run exited $1 (killed past the file-size limit?)"; }
[ "$2" -lt 131072 ] || fail "the dry run's peak RSS was $2 KiB"
echo "dry run: peak RSS $2 KiB, bomb $zbytes bytes"
grep -q "inflates past its recorded size" "$T/plan.txt" ||
        { cat "$T/plan.txt"; fail "the plan does not say why the compressed session is kept"; }
grep "would delete" "$T/plan.txt" | grep -q "1a914264" && { cat "$T/plan.txt"; fail "the bomb would be deleted"; }
set -- $(limited "$T/plan.json" "$T/plan.err" "$QGC" --dry-run --json --now "$NOW" --root "$tree" -c "$T/c.conf")
[ "$1" = 0 ] || { cat "$T/plan.err"; fail "the JSON dry run exited $1"; }
[ "$2" -lt 131072 ] || fail "the JSON dry run's peak RSS was $2 KiB"
python3 - "$T/plan.json" "$ARCH" <<'PY' || fail "the JSON plan"
import json, sys
plan = json.load(open(sys.argv[1]))
s = {s["id"]: s for p in plan["projects"] for s in p["sessions"]}[sys.argv[2]]
assert s["verb"] in ("keep", "skip"), s
assert "inflates past its recorded size" in json.dumps(s), s
PY

# 2. show and restore refuse it; nothing is written past the recorded size; the file stays
set -- $(limited "$T/show.out" "$T/show.err" "$QGC" show "$ARCH" --root "$tree")
[ "$1" = 1 ] || fail "show of the bomb exited $1"
grep -q "inflates past its recorded size" "$T/show.err" || { cat "$T/show.err"; fail "show: no reason"; }
[ "$(stat -c %s "$T/show.out")" -le "$tsize" ] || fail "show wrote more than the recorded size"
# the dry run of the restore says what the real one does: refused, with the reason, bounded
set -- $(limited "$T/nrestore.out" "$T/nrestore.err" "$QGC" -n restore "$ARCH" --root "$tree")
[ "$2" -lt 131072 ] || fail "the restore's dry run's peak RSS was $2 KiB"
grep -q "would restore" "$T/nrestore.out" && { cat "$T/nrestore.out"; fail "the dry run would restore the bomb"; }
grep -q "inflates past its recorded size" "$T/nrestore.out" ||
        { cat "$T/nrestore.out" "$T/nrestore.err"; fail "restore's dry run: no reason"; }
set -- $(limited "$T/restore.out" "$T/restore.err" "$QGC" restore "$ARCH" --root "$tree")
[ "$1" != 0 ] || fail "restore of the bomb succeeded"
grep -q "inflates past its recorded size" "$T/restore.err" || { cat "$T/restore.err"; fail "restore: no reason"; }
[ -f "$z" ] && [ ! -e "$chats/archive/$ARCH.jsonl" ] && [ ! -e "$chats/$ARCH.jsonl" ] ||
        fail "restore of the bomb changed the session"
ls -a "$chats/archive" | grep -q qgc-tmp && fail "restore left a temporary file"

# 3. a real run keeps it
set -- $(limited "$T/run.out" "$T/run.err" "$QGC" --now "$NOW" --root "$tree" -c "$T/c.conf")
[ "$1" = 0 ] || { cat "$T/run.err"; fail "the run exited $1"; }
[ -f "$z" ] || fail "the run removed the bomb"

# 4. a lie past what the scan reads (5 MiB recorded, titles not needed): the delete's salvage
# (which reads the transcript when usage_record.jsonl has no line of it yet) refuses it with the
# reason, and the file stays
make_bomb 5242880
grep -v "\"sessionId\":\"$ARCH\"" "$tree/usage_record.jsonl" > "$T/usage" || fail "usage"
cp "$T/usage" "$tree/usage_record.jsonl"
# (restore-grace off: the refused restore of part 2 began a restore, which grants a grace)
cat > "$T/c2.conf" <<'CONF'
defaults = { action = "archive"; max-age = "90d"; archive-max-age = "30d"; keep-latest = 0;
             keep-titled = false; max-deletions-percent = 100; restore-grace = "0s"; };
CONF
set -- $(limited "$T/run2.out" "$T/run2.err" "$QGC" --now "$NOW" --root "$tree" -c "$T/c2.conf" --log-file "$T/run2.log")
[ "$2" -lt 131072 ] || fail "the run's peak RSS was $2 KiB"
[ -f "$z" ] || { cat "$T/run2.out" "$T/run2.err"; fail "the delete removed a bomb"; }
grep "QGC_SESSION=$ARCH" "$T/run2.log" | grep -q "inflates past its recorded size" ||
        { cat "$T/run2.log" "$T/run2.err"; fail "the delete's refusal is not journalled with its reason"; }
pass "a compressed-archive bomb: the dry run stays bounded and keeps it with the reason; show, restore (and its dry run) and the delete's salvage refuse it; nothing is written past the recorded size"
finish
