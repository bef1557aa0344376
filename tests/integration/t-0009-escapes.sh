#!/bin/sh
# t-0009-escapes: text from session files and policy files reaches no terminal and no text log
# raw. A table of hostile strings (an ESC clear-screen, an OSC 52 clipboard write, C1 CSI and OSC,
# DEL, BEL, the bidi overrides U+202E and U+2066-U+2069) is planted in a session's cwd (an owned
# session that a run deletes, and a foreign one whose reason quotes it), a title, a project
# directory name and policy-file values, then run through every output path: the text plan,
# the JSON plan, status, config errors, check-config --explain, the stderr and file action logs,
# and diagnostics (-vv). nocontrols.py checks each output holds no control and still shows the
# text around it.
. "$(dirname "$0")/lib.sh"

tree=$(make_tree q)
check() { python3 "$QGC_TESTDATA/../integration/nocontrols.py" "$@" || fail "controls in $1"; }

# the hostile strings, as JSON escapes (a transcript carries them so) and as raw bytes
python3 - "$tree" > "$T/ids" <<'PY'
import json, os, re, sys
tree = sys.argv[1]
bad = ["\x1b[2J\x1b[H", "\x1b]52;c;aGFja2Vk\x07", "\u009b2J", "\u009d52;c;eA==\u009c",
       "\x7f\x08\x08", "\u202egpj.exe", "\u2066\u2067\u2068\u2069", "\u200f\u061c"]
cwd = "/srv/EVILCWD" + "".join(bad)
proj = re.sub(r"[^A-Za-z0-9]", "-", cwd)  # Qwen's sanitizeCwd (all BMP: one unit each)
sid = "0badc0de-0000-4000-8000-000000000001"
fid = "0badc0de-0000-4000-8000-000000000002"
os.makedirs(f"{tree}/projects/{proj}/chats")
def rec(i, c, ts):
    return json.dumps({"uuid": "u-" + i, "parentUuid": None, "sessionId": i, "timestamp": ts,
                       "type": "user", "cwd": c, "version": "0.24.4",
                       "message": {"role": "user", "parts": [{"text": "hi"}]}})
title = {"uuid": "t-" + sid, "parentUuid": "u-" + sid, "sessionId": sid,
         "timestamp": "2026-01-01T00:00:01.000Z", "type": "system", "subtype": "custom_title",
         "cwd": cwd, "systemPayload": {"customTitle": "EVILTITLE" + "".join(bad),
                                        "titleSource": "auto"}}
with open(f"{tree}/projects/{proj}/chats/{sid}.jsonl", "w") as f:
    f.write(rec(sid, cwd, "2026-01-01T00:00:00.000Z") + "\n" + json.dumps(title, separators=(",", ":")) + "\n")
# a foreign session in another project: its reason quotes the cwd
other = sorted(d for d in os.listdir(f"{tree}/projects") if d != proj)[0]
with open(f"{tree}/projects/{other}/chats/{fid}.jsonl", "w") as f:
    f.write(rec(fid, cwd, "2026-01-01T00:00:00.000Z") + "\n")
# a project directory whose name itself is hostile (no transcript: an empty project)
os.makedirs(f"{tree}/projects/EVILDIR\x1b]52;c;eA==\x07\u202e".encode())
print(sid, fid)
PY
find "$tree" -exec touch -h -d 2026-01-01T00:00:00Z {} +
read -r sid fid < "$T/ids"

# a policy with a hostile project pattern (explain prints it) and one with a hostile bad value
printf 'defaults = { action = "delete"; max-age = "30d"; keep-latest = 0; max-deletions = "off"; };\nprojects = ( { path = "/srv/EVILPAT\033]52;c;eA==\007\302\233\342\200\256*"; max-age = "40d"; } );\n' > "$T/good.conf"
printf 'defaults = { max-age = "EVILVAL\033[2J\033]52;c;aGk=\007\302\233\342\200\256"; };\n' > "$T/bad.conf"

NOW=2027-04-01T00:00:00Z
run_qgc --root "$tree" -c "$T/good.conf" --now $NOW -n > "$T/plan.txt" 2>&1 || fail "dry run"
check "$T/plan.txt" EVILCWD "$sid"
run_qgc --root "$tree" -c "$T/good.conf" --now $NOW -n --json > "$T/plan.json" || fail "json plan"
check "$T/plan.json" EVILCWD EVILTITLE '\u001b[2J' '\u009b2J' '\u202egpj' '\u2066'
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/plan.json" || fail "JSON plan does not parse"
run_qgc --root "$tree" -c "$T/good.conf" --now $NOW status > "$T/status.txt" 2>&1 || fail "status"
check "$T/status.txt" EVILCWD
set +e
timeout 60 "$QGC" -c "$T/bad.conf" check-config > "$T/bad.out" 2>&1
rc=$?
set -e
[ $rc = 78 ] || fail "bad.conf: exit $rc, expected 78"
check "$T/bad.out" EVILVAL "bad.conf:1"
run_qgc -c "$T/good.conf" check-config --explain > "$T/explain.txt" 2>&1 || fail "explain"
check "$T/explain.txt" EVILPAT
run_qgc --root "$tree" -c "$T/good.conf" --now $NOW -vv -n > /dev/null 2> "$T/debug.txt" || fail "-vv"
check "$T/debug.txt" "scan:"
# diagnostics quote paths: a policy file that does not exist
set +e
timeout 60 "$QGC" -c "$(printf "$T/EVILPATH\033]52;c;eA==\007\302\233\342\200\256")" check-config \
        > /dev/null 2> "$T/diag.txt"
set -e
check "$T/diag.txt" EVILPATH
check "$T/plan.txt" EVILDIR

# the real run: the owned hostile session is deleted, logged to stderr and to a file
cp -a "$tree" "$T/q2"
run_qgc --root "$tree" -c "$T/good.conf" --now $NOW --force --log-target stderr > "$T/run.out" 2> "$T/run.err" ||
        { cat "$T/run.out" "$T/run.err"; fail "real run"; }
check "$T/run.err" EVILCWD "$sid"
check "$T/run.out"
run_qgc --root "$T/q2" -c "$T/good.conf" --now $NOW --force --log-file "$T/actions.log" > /dev/null 2>&1 ||
        fail "real run with --log-file"
check "$T/actions.log" EVILCWD "$sid"
# the log keeps what was there, escaped: a reader can still tell what the cwd was
grep -q 'EVILCWD\\x1b\[2J' "$T/actions.log" || fail "the file log lost the escaped cwd"
grep -q '\\u202egpj' "$T/actions.log" || fail "the file log lost the escaped U+202E"
pass "no control character reaches a terminal or a text log"
