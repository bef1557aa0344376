#!/bin/sh
# The command line: exit codes (64 usage, 78 config, 75 locked), check-config, --now forms.
. "$(dirname "$0")/lib.sh"
tree=$(make_tree tree)

expect_rc() { # expect_rc RC ARGS...
        want=$1; shift
        set +e; timeout 60 "$QGC" "$@" > "$T/out" 2> "$T/err"; rc=$?; set -e
        [ "$rc" = "$want" ] || { cat "$T/out" "$T/err"; fail "qgc $*: exit $rc, expected $want"; }
}

expect_rc 0 --help
expect_rc 0 --version
grep -q "^qgc " "$T/out" || fail "--version prints no version"
expect_rc 64 --no-such-option
grep -q "^qgc: try 'qgc --help'$" "$T/err" || { cat "$T/err"; fail "an unknown option: no hint of --help"; }
expect_rc 64 frobnicate
grep -q "^qgc: unknown command 'frobnicate' (try 'qgc --help')$" "$T/err" || { cat "$T/err"; fail "an unknown command"; }
# a typo gets the closest command or option (issue 24.12h), as the policy's keys do
expect_rc 64 stauts
grep -q "^qgc: unknown command 'stauts'; did you mean 'status'? (try 'qgc --help')$" "$T/err" ||
        { cat "$T/err"; fail "no did-you-mean for a command"; }
expect_rc 64 --dry-rn
grep -q "^qgc: did you mean '--dry-run'? (try 'qgc --help')$" "$T/err" || { cat "$T/err"; fail "no did-you-mean for an option"; }
expect_rc 64 --root
grep -q "^qgc: try 'qgc --help'$" "$T/err" || { cat "$T/err"; fail "an option without its argument"; }
expect_rc 64 --dry-run --root "$tree" --now yesterday
expect_rc 64 --explain
expect_rc 64 --json --root "$tree"
expect_rc 0 status --json --root "$tree"     # qgc(8) promises status [-j] (issue 11)
python3 - "$T/out" <<'PY' || fail "status --json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 1 and d["trees"] and d["projects"], d.keys()
assert sum(p["active"] + p["archived"] for p in d["projects"]) == d["total"]["sessions"], d["total"]
assert "fs_avail" in d["trees"][0] and "archived_bytes_allocated" in d["trees"][0], d["trees"][0]
# and the breakdown by kind (tree-size.h)
assert d["breakdown"] and d["breakdown"][0]["kinds"] and d["breakdown"][0]["total"], d.get("breakdown")
PY
# the plan's and status's JSON write a tree's head alike (plan_json_tree_open()) and end a line
cp "$T/out" "$T/status.json"
expect_rc 0 --dry-run --json --root "$tree"
python3 - "$T/status.json" "$T/out" <<'PY' || fail "plan and status JSON: trees or ends differ"
import json, sys
docs = [open(f).read() for f in sys.argv[1:3]]
assert all(d.endswith("}\n") for d in docs), [d[-3:] for d in docs]
s, p = (json.loads(d) for d in docs)
head = lambda t: ({k: t[k] for k in ("global_dir", "runtime_dir", "user")}, "fs_size" in t, "fs_avail" in t)
assert [head(t) for t in s["trees"]] == [head(t) for t in p["trees"]], (s["trees"], p["trees"])
assert all(head(t)[1] and head(t)[2] for t in p["trees"]), p["trees"]
PY
expect_rc 64 check-config --json
expect_rc 64 restore

# config errors: every error reported as file:line, exit 78, nothing done
cat > "$T/bad.conf" <<'CONF'
defaults = {
        max-age = "90m";
        max-sessions = "lots";
        colour = "red";
};
tree = { max-size = "10G"; low-watermark = "20G"; };
CONF
snapshot "$tree" "$T/s0"
expect_rc 78 --root "$tree" -c "$T/bad.conf"
grep -q "bad.conf:2:" "$T/err" || { cat "$T/err"; fail "no error for line 2 (ambiguous m)"; }
grep -q "bad.conf:3:" "$T/err" || { cat "$T/err"; fail "no error for line 3 (wrong type)"; }
grep -q "bad.conf:4:" "$T/err" || { cat "$T/err"; fail "no error for line 4 (unknown key)"; }
grep -q "bad.conf:6:" "$T/err" || { cat "$T/err"; fail "no error for line 6 (watermark above cap)"; }
expect_rc 78 check-config -c "$T/bad.conf"
printf 'defaults = { max-age = "90d" \n' > "$T/syntax.conf"
expect_rc 78 check-config -c "$T/syntax.conf"
grep -q "syntax.conf:[0-9]*:" "$T/err" || { cat "$T/err"; fail "syntax error without file:line"; }
snapshot "$tree" "$T/s1"
diff "$T/s0" "$T/s1" >/dev/null || fail "a config error changed the tree"

expect_rc 0 check-config -c "$QGC_SRCDIR/etc/qgc.conf"
expect_rc 0 check-config --explain -c "$QGC_TESTDATA/integration/empty.conf"
grep -q "max-age" "$T/out" || fail "--explain does not show max-age"
grep -qi "default" "$T/out" || fail "--explain does not say where values come from"

# layering: without a system file the user's file applies freely; with one, it may only tighten
mkdir -p "$T/xdg/qgc"
printf 'defaults = { max-age = "200d"; };\n' > "$T/xdg/qgc/qgc.conf"
printf 'defaults = { max-age = "100d"; };\n' > "$T/system.conf"
XDG_CONFIG_HOME="$T/xdg" expect_rc 0 --system-config "$T/none.conf" check-config --explain
grep -q "max-age *200d" "$T/out" || { cat "$T/out"; fail "user file not applied without a system file"; }
XDG_CONFIG_HOME="$T/xdg" expect_rc 0 --system-config "$T/system.conf" check-config --explain
grep -q "max-age *100d" "$T/out" || { cat "$T/out"; fail "user file loosened the system policy"; }
grep -q "warning" "$T/err" || fail "no warning when a user value is clamped"

# --now accepts ISO 8601 and @epoch, and a forecast differs from today
expect_rc 0 --dry-run --root "$tree" -c "$QGC_TESTDATA/integration/empty.conf" --now @1800000000
expect_rc 0 --dry-run --root "$tree" -c "$QGC_TESTDATA/integration/empty.conf" --now 2027-01-01T00:00:00Z

# one qgc per tree: a held lock makes a real run exit 75
if command -v flock >/dev/null; then
        : > "$tree/.qgc.lock"
        flock -o "$tree/.qgc.lock" sleep 20 &   # -o: the lock dies with flock, not with sleep
        holder=$!
        i=0   # wait until the holder really has the lock (no fixed sleep: CI may be slow)
        while flock -n "$tree/.qgc.lock" true; do
                i=$((i + 1)); [ $i -lt 300 ] || fail "the test could not take the lock"
                sleep 0.1
        done
        expect_rc 75 --root "$tree" -c "$QGC_TESTDATA/integration/empty.conf"
        grep -qi "another qgc" "$T/err" || fail "no clear message when locked"
        kill "$holder" 2>/dev/null || true
        wait "$holder" 2>/dev/null || true
fi
# --quiet (cron): silent on success, even when the action log falls back to stderr; on a
# failure, the failed actions and a summary, and exit 1
q=$(make_tree quiet)
expect_rc 0 --quiet --log-target stderr --root "$q" --now 2027-04-01T00:00:00Z -c "$QGC_TESTDATA/integration/apply.conf"
[ ! -s "$T/out" ] && [ ! -s "$T/err" ] || { cat "$T/out" "$T/err"; fail "--quiet printed something on success"; }
ls "$q"/projects/*/chats/archive/*.jsonl >/dev/null 2>&1 || fail "--quiet run did nothing"
q2=$(make_tree quietfail)
rm "$q2/usage_record.jsonl" && mkdir "$q2/usage_record.jsonl"   # salvage cannot be written
expect_rc 1 --quiet --log-target stderr --root "$q2" --now 2027-04-01T00:00:00Z -c "$QGC_TESTDATA/integration/apply.conf"
grep -q "QGC_ACTION=failed" "$T/err" || { cat "$T/err"; fail "--quiet hid the failures"; }
grep -q "failed [1-9]" "$T/out" "$T/err" || fail "no summary on failure"
grep -q "QGC_ACTION=archived\|QGC_ACTION=run-start" "$T/err" && fail "--quiet printed successful actions"
# The output table (issue 11): each command at 80 and 60 columns, in the C and a UTF-8 locale,
# through a pipe (COLUMNS set) and on a pseudo-terminal (script, stty cols). Every line fits
# (where the row says so), nothing is cut ("…" or "..."), C output is ASCII, and the expected
# text is there. A row: NAME FIT EXPECT ARGS..., EXPECT a Python regex on the whole output.
ran=$(make_tree ran)
run_qgc --root "$ran" --now 2027-04-01T00:00:00Z -c "$QGC_TESTDATA/integration/apply.conf" --log-file "$T/ran.log" > /dev/null
E="$QGC_TESTDATA/integration/empty.conf"
A="$QGC_TESTDATA/integration/apply.conf"
utf8=$(locale -a 2>/dev/null | grep -i -m1 '^c\.utf-\?8$' || true)
have_script=$(have_pty && echo yes || true)
[ -n "$have_script" ] || part_skipped "the pseudo-terminal cases (no pty here)"
# C.UTF-8 ships with the C library (Debian 12's libc-bin): without it the UTF-8 cases fail, not vanish
[ -n "$utf8" ] || fail "no C.UTF-8 locale (it ships with the C library: glibc 2.35 and later, Debian 12's libc-bin): the UTF-8 table cases cannot run"
table_row() { # NAME FIT EXPECT ARGS...
        name=$1 fit=$2 expect=$3; shift 3
        for cols in 80 60; do
                for loc in C ${utf8:+"$utf8"}; do
                        for mode in pipe ${have_script:+pty}; do
                                out="$T/tab.$name.$cols.$loc.$mode"
                                if [ $mode = pipe ]; then
                                        set +e
                                        COLUMNS=$cols LC_ALL=$loc timeout 60 "$QGC" "$@" > "$out" 2> "$out.err"
                                        rc=$?; set -e
                                else
                                        cmd="stty cols $cols rows 50; exec env -u COLUMNS LC_ALL=$loc"
                                        for a in "$QGC" "$@"; do cmd="$cmd '$a'"; done
                                        set +e
                                        script -qec "$cmd" /dev/null < /dev/null > "$out.raw" 2> "$out.err"
                                        rc=$?; set -e
                                        tr -d '\r' < "$out.raw" > "$out"
                                fi
                                [ $rc = 0 ] || { cat "$out" "$out.err"; fail "table $name ($cols cols, $loc, $mode): exit $rc"; }
                                python3 - "$out" "$cols" "$loc" "$fit" "$expect" <<'PY' || fail "table $name ($cols columns, $loc, $mode): see above"
import re, sys, unicodedata
path, cols, loc, fit, expect = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
raw = open(path, "rb").read()
if loc == "C" and any(b >= 0x80 for b in raw):
    print(f"{path}: non-ASCII output in the C locale"); sys.exit(1)
text = raw.decode("utf-8")
def width(s):
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in s)
for line in text.split("\n"):
    if fit == "fit" and width(line) > cols:
        print(f"{path}: wider than {cols}: {line!r}"); sys.exit(1)
if "\u2026" in text or re.search(r"[^.]\.\.\.(\s|$)", text):
    print(f"{path}: something was cut: {text}"); sys.exit(1)
flat = re.sub(r"\n {3,}", " ", text)    # wrapped reasons (indented past the rows) read whole
if not re.search(expect, flat, re.M):
    print(f"{path}: {expect!r} not in:\n{text}"); sys.exit(1)
PY
                        done
                done
        done
}
table_row plan fit '^  [0-9a-f]{8} would delete +121d +[0-9.]+K +idle 121d > max-age 90d$' \
        --dry-run --root "$tree" --now 2027-04-01T00:00:00Z -c "$A"
table_row keep fit 'kept: keep-latest 1 \(rank 1, newest first\) \(a rule would select it: archive for idle 121d > max-age 90d\)' \
        --dry-run --root "$tree" --now 2027-04-01T00:00:00Z -c "$A"
table_row summary fit '^  would move +[0-9.]+K to the archive \(frees no space\)$' \
        --dry-run --root "$tree" --now 2027-04-01T00:00:00Z -c "$A"
table_row changes fit '^would archive [0-9a-f]{8} +121d +[0-9.]+K  /srv/demo/webapp' \
        --changes --root "$tree" --now 2027-04-01T00:00:00Z -c "$A"
table_row status fit '^/srv/demo/webapp +3 +0 ' status --root "$tree"
# two projects wider than what 80 columns leave them (43, no bar), narrower than 60, that differ
# only at the end (issue 24.3: both were cut to the same 21 characters): each is written whole on
# its own line, the short ones keep theirs
long=$(make_tree long)
L=/srv/qgc-hold/0.21.1-with-a-rather-long-name/workspace
move_project "$long" "$L-one"
move_project "$long" "$L-two" "" /srv/demo/api-server
table_row status-long fit "(?=[\s\S]*^$L-one +1 +1 )(?=[\s\S]*^$L-two +4 +0 )^/srv/demo/webapp +3 +0 " \
        status --root "$long"
table_row status-archive fit '^archive: [0-9]+ sessions?, [0-9.]+K \(archiving frees no space\)$' \
        status --root "$ran"
table_row restore nofit '^would restore session dd3dc65a-7d32-4843-a56c-9eef3a13391d:' \
        -n restore dd3dc65a --root "$ran"
table_row explain nofit '^tree:  # disk caps always delete' check-config --explain -c "$A"
table_row help nofit '^Usage: qgc' --help
# one action is one action (issue 24.12g: "1 actions planned"): a restore of one session, and the
# run that archived several
expect_rc 0 restore dd3dc65a --root "$ran" -c "$A" --log-file "$T/restore.log"
grep -q 'MESSAGE="qgc run started: 1 action planned"' "$T/restore.log" || { cat "$T/restore.log"; fail "the run-start entry of one action"; }
grep -q 'MESSAGE="qgc run started: [0-9]* actions planned"' "$T/ran.log" || { cat "$T/ran.log"; fail "the run-start entry of several actions"; }
# piped without COLUMNS: whole lines, and status sized to its content (not ~1,000 columns)
run_qgc status --root "$tree" > "$T/status.pipe"
awk 'length > 100 { bad = 1 } END { exit bad }' "$T/status.pipe" || { cat "$T/status.pipe"; fail "piped status is padded wide"; }
grep -q "  $" "$T/status.pipe" && fail "piped status has trailing padding"
# root with no tree of its own is pointed to --all-users (issue 24.11); nobody else is
mkdir -p "$T/emptyhome"
for a in "-n" "status" "--log-target stderr"; do
        HOME="$T/emptyhome" QWEN_HOME= QWEN_RUNTIME_DIR= timeout 60 "$QGC" $a > "$T/nt.out" 2> "$T/nt.err" ||
                { cat "$T/nt.err"; fail "qgc $a without a tree failed"; }
        if [ "$(id -u)" = 0 ]; then
                grep -q "^qgc: root has no Qwen tree of its own ('$T/emptyhome/.qwen'); to collect every user's trees, each as its user: qgc --all-users$" "$T/nt.err" ||
                        { cat "$T/nt.err"; fail "root's qgc $a without a tree: no hint of --all-users"; }
        else
                ! grep -q -- "--all-users" "$T/nt.err" || fail "a user's qgc $a was pointed to --all-users"
        fi
done
HOME="$T/emptyhome" QWEN_HOME= QWEN_RUNTIME_DIR= timeout 60 "$QGC" -q --log-target stderr > "$T/nt.out" 2> "$T/nt.err"
! grep -q -- "--all-users" "$T/nt.err" || fail "--quiet printed the hint of --all-users"
[ "$(id -u)" = 0 ] || part_skipped "root's hint of --all-users (not root)"
pass "command line"
finish
