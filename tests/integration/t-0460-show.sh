#!/bin/sh
# qgc show ID writes a session's transcript to stdout byte for byte: active, archived, and
# compressed in the cold tier (chats/archive/.qgc-cold/<id>.jsonl.zst, the original gone); an
# unknown id and a compressed file that does not match its recorded SHA-256 exit 1. qgc restore
# brings a compressed session back into chats/archive/ byte for byte with its mtime, and refuses
# a compressed file that does not match.
# Needs the zstd command for the compressed case (SKIP without it).
. "$(dirname "$0")/lib.sh"
tree=$(make_tree tree)
chats="$tree/projects/-srv-demo-scratch/chats"
arch=1a914264-8e49-442e-bc79-1cb2de9eae0c
act=$(cd "$chats" && ls *.jsonl | head -1)
act=${act%.jsonl}

run_qgc show "$act" --root "$tree" > "$T/act.out" || fail "show of an active session"
cmp "$T/act.out" "$chats/$act.jsonl" || fail "show of an active session differs"
run_qgc show "$arch" --root "$tree" > "$T/arch.out" || fail "show of an archived session"
cmp "$T/arch.out" "$chats/archive/$arch.jsonl" || fail "show of an archived session differs"
run_qgc show 00000000-0000-0000-0000-000000000000 --root "$tree" > /dev/null 2>&1 &&
        fail "show of an unknown session succeeded"
# on a terminal the transcript goes through the one cleaner: JSON leaves C1 controls and the bidi
# overrides raw (JSON.stringify escapes only C0), and a model's output may hold them
printf '{"type":"system","sessionId":"%s","text":"EVILSHOW \302\2332J \342\200\256gpj.exe"}\n' "$act" \
        >> "$chats/$act.jsonl"
run_qgc show "$act" --root "$tree" > "$T/raw.out" || fail "show after the append"
cmp "$T/raw.out" "$chats/$act.jsonl" || fail "piped show is not byte for byte"
if have_pty; then
        script -qec "'$QGC' show '$act' --root '$tree'" /dev/null < /dev/null > "$T/tty.out" ||
                fail "show on a terminal"
        tr -d '\r' < "$T/tty.out" > "$T/tty.txt"
        python3 "$QGC_TESTDATA/../integration/nocontrols.py" "$T/tty.txt" EVILSHOW ||
                fail "show put control characters on the terminal"
else
        part_skipped "show on a terminal (no pseudo-terminal here)"
fi
# on a terminal the transcript is read 64 KiB (SHOW_TERMINAL_CHUNK, show.h) at a time, whatever
# its lines' lengths: a line of exactly 64 KiB and one of a byte more, a 4-byte character that a
# chunk's end cuts, and a line of 24 MiB come out whole, the last under a 16 MiB data limit
# (never held whole: a getline() of it failed and ended the output there)
python3 - "$chats/$act.jsonl" "$T/long.want" <<'PY'
import os, sys
path, want = sys.argv[1], sys.argv[2]
CHUNK = 64 * 1024
def rec(pad, tail=b""):
    return b'{"type":"system","text":"' + pad + tail + b'"}\n'
frame = len(rec(b""))
lines = [rec(b"a" * (CHUNK - frame)), rec(b"b" * (CHUNK + 1 - frame))]
size = os.path.getsize(path) + sum(map(len, lines))
head = len(b'{"type":"system","text":"')
# an ASCII lead, then 4-byte characters from an offset 2 past a multiple of 4, across the next
# multiple of 64 KiB: that chunk's end falls in the middle of one
lead = (2 - (size + head)) % 4 + 4
lines.append(rec(b"c" * lead + "\U0001F600".encode() * (CHUNK // 4 + 8)))
lines.append(rec(b"d" * (24 << 20)))
data = b"".join(lines)
with open(path, "ab") as f:
    f.write(data)
with open(want, "wb") as f:
    f.write(data)
PY
if have_pty; then
        limit="ulimit -d 16384; "
        if nm "$QGC" 2>/dev/null | grep -q __asan_init; then
                limit="" # the sanitizers' shadow memory does not fit a data limit
                part_skipped "show's memory bound under a data limit (a sanitizer build)"
        fi
        script -qec "${limit}LC_ALL=C.UTF-8 '$QGC' show '$act' --root '$tree'; echo \$? > '$T/long.rc'" \
                /dev/null < /dev/null > "$T/long.out"
        [ "$(cat "$T/long.rc")" = 0 ] || fail "show on a terminal of long lines: exit $(cat "$T/long.rc")"
        tr -d '\r' < "$T/long.out" > "$T/long.txt"
        python3 -c '
import sys
got, want = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
sys.exit(0 if got.endswith(want) else 1)' "$T/long.txt" "$T/long.want" ||
                fail "show on a terminal did not write the long lines whole"
fi
# a unique prefix will do, as for restore (issue 11); an ambiguous one is a usage error
run_qgc show "$(echo "$act" | cut -c1-8)" --root "$tree" > "$T/prefix.out" || fail "show by prefix"
cmp "$T/prefix.out" "$chats/$act.jsonl" || fail "show by prefix differs"
set +e
timeout 60 "$QGC" show 6 --root "$tree" > /dev/null 2>&1
rc=$?
set -e
[ $rc = 64 ] || fail "show of an ambiguous prefix: exit $rc, expected 64"

command -v zstd >/dev/null || skip "zstd not installed (the compressed case)"
# make_cold: compress the archived transcript into the cold tier's format (src/cold.h: a zstd
# frame, then a skippable frame with SHA-256 and size; the original's mtime), original removed
make_cold() {
        mkdir -p "$chats/archive/.qgc-cold"
        python3 - "$chats/archive/$arch.jsonl" "$chats/archive/.qgc-cold/$arch.jsonl.zst" <<'PY' || fail "cannot write the compressed file"
import hashlib, os, struct, subprocess, sys
src, dst = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
z = subprocess.run(["zstd", "-q", "-3", "--check", "-c", src], check=True, capture_output=True).stdout
payload = b"qgc-cold 1 %s %020d\n" % (hashlib.sha256(data).hexdigest().encode(), len(data))
open(dst, "wb").write(z + struct.pack("<II", 0x184D2A5E, len(payload)) + payload)
st = os.stat(src)
os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
PY
        rm "$chats/archive/$arch.jsonl"
}
mtime() { python3 -c 'import os, sys; print(os.stat(sys.argv[1]).st_mtime_ns)' "$1"; }
cp -p "$chats/archive/$arch.jsonl" "$T/orig.jsonl"
make_cold
run_qgc show "$arch" --root "$tree" > "$T/cold.out" || fail "show of a compressed session"
cmp "$T/cold.out" "$T/orig.jsonl" || fail "show of a compressed session differs"

# qgc restore --to-archive: the plan, then back into chats/archive/ byte for byte, with its mtime
run_qgc -n restore --to-archive "$arch" --root "$tree" > "$T/plan.txt" || fail "restore -n of a compressed session"
grep -q "would restore session $arch" "$T/plan.txt" || { cat "$T/plan.txt"; fail "no restore plan"; }
grep -q "$chats/archive/$arch.jsonl" "$T/plan.txt" || { cat "$T/plan.txt"; fail "--to-archive: not to chats/archive/"; }
[ -f "$chats/archive/.qgc-cold/$arch.jsonl.zst" ] || fail "restore -n changed something"
run_qgc restore --to-archive "$arch" --root "$tree" --log-file "$T/actions.log" > "$T/restore.out" || fail "restore of a compressed session"
grep -qx "qgc: restored session $arch from the compressed archive to $chats/archive" "$T/restore.out" || { cat "$T/restore.out"; fail "restore --to-archive does not say what it did"; }
cmp "$chats/archive/$arch.jsonl" "$T/orig.jsonl" || fail "the restored transcript differs"
[ "$(mtime "$chats/archive/$arch.jsonl")" = "$(mtime "$T/orig.jsonl")" ] || fail "the restored transcript has another mtime"
[ ! -e "$chats/archive/.qgc-cold/$arch.jsonl.zst" ] || fail "the compressed file is still there"
grep -q "QGC_ACTION=restored" "$T/actions.log" || { cat "$T/actions.log"; fail "restore not journalled"; }

# qgc restore of a compressed session: back to chats/ in one command, and it says so
make_cold
run_qgc -n restore "$arch" --root "$tree" > "$T/plan.txt" || fail "restore -n of a compressed session"
grep -qF -e "-> '$chats/$arch.jsonl'" "$T/plan.txt" || { cat "$T/plan.txt"; fail "the plan does not bring it to chats/"; }
run_qgc restore "$arch" --root "$tree" --log-file "$T/actions.log" > "$T/restore.out" || fail "restore of a compressed session"
grep -qx "qgc: restored session $arch from the compressed archive to $chats" "$T/restore.out" || { cat "$T/restore.out"; fail "restore does not say what it did"; }
cmp "$chats/$arch.jsonl" "$T/orig.jsonl" || fail "the restored transcript differs"
[ "$(mtime "$chats/$arch.jsonl")" = "$(mtime "$T/orig.jsonl")" ] || fail "the restored transcript has another mtime"
[ ! -e "$chats/archive/$arch.jsonl" ] && [ ! -e "$chats/archive/.qgc-cold/$arch.jsonl.zst" ] || fail "restore left an archived or compressed copy"
grep "QGC_ACTION=restored" "$T/actions.log" | tail -1 | grep -q "restored session $arch from the compressed archive to chats/ (" || { cat "$T/actions.log"; fail "the journal does not say where it went"; }
mv "$chats/$arch.jsonl" "$chats/archive/$arch.jsonl"

# a restore killed after it recorded its start (G/.qgc/session-times) is finished by the next
# normal run's recovery pass, which the dry run shows
make_cold
mkdir -p "$tree/.qgc"
echo "restore $(date +%s)000 $arch" >> "$tree/.qgc/session-times"
run_qgc -n --root "$tree" > "$T/rec.txt" || fail "dry run with an interrupted restore"
grep -q "^recover: would finish the interrupted restore of session $arch:" "$T/rec.txt" || { cat "$T/rec.txt"; fail "the dry run does not show the interrupted restore"; }
run_qgc -n --json --root "$tree" > "$T/rec.json" || fail "dry run --json with an interrupted restore"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["recover"]; assert [s for s in r if s["kind"]=="restore" and s["session"]==sys.argv[2] and s["verb"]=="restore"], r' "$T/rec.json" "$arch" ||
        fail "the JSON plan does not show the interrupted restore"
run_qgc --root "$tree" --log-file "$T/actions.log" > /dev/null || fail "the run that finishes the restore"
cmp "$chats/$arch.jsonl" "$T/orig.jsonl" || fail "the interrupted restore was not finished"
[ ! -e "$chats/archive/.qgc-cold/$arch.jsonl.zst" ] || fail "the finished restore left the compressed file"
grep -q "^restored [0-9]* $arch\$" "$tree/.qgc/session-times" || fail "the finished restore is not recorded"
mv "$chats/$arch.jsonl" "$chats/archive/$arch.jsonl"

# a compressed file whose content does not match the recorded SHA-256: neither shown nor restored
make_cold
python3 - "$chats/archive/.qgc-cold/$arch.jsonl.zst" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[-30] = ord("0") if b[-30] != ord("0") else ord("1")  # a digit of the recorded SHA-256
open(p, "wb").write(bytes(b))
PY
run_qgc show "$arch" --root "$tree" > /dev/null 2>&1 && fail "a mismatching compressed file was shown as good"
run_qgc restore "$arch" --root "$tree" --log-file "$T/actions.log" > /dev/null 2>&1 && fail "a mismatching compressed file was restored"
[ ! -e "$chats/archive/$arch.jsonl" ] || fail "a mismatching compressed file left a transcript"
# ... and its refusal ends the restore: no later run tries it again
[ "$(tail -1 "$tree/.qgc/session-times" | cut -d' ' -f1,3)" = "restored $arch" ] || fail "the refused restore did not end"
run_qgc --root "$tree" --log-file "$T/actions.log" > /dev/null || fail "a run after a refused restore failed"
pass "qgc show and restore: active, archived and compressed transcripts byte for byte (mtime kept); unknown and corrupt refused"
finish
