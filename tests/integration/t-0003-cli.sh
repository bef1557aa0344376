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
expect_rc 64 frobnicate
expect_rc 64 --dry-run --root "$tree" --now yesterday
expect_rc 64 --explain
expect_rc 64 --json --root "$tree"
expect_rc 64 check-config --json
# status --json is the breakdown by kind (treesize.h), one JSON document
run_qgc status --json --root "$tree" > "$T/status.json" || fail "status --json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["version"] == 1 and d["trees"]' "$T/status.json" ||
        fail "status --json is not the breakdown"
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
XDG_CONFIG_HOME="$T/xdg" QGC_SYSTEM_CONFIG="$T/none.conf" expect_rc 0 check-config --explain
grep -q "max-age *200d" "$T/out" || { cat "$T/out"; fail "user file not applied without a system file"; }
XDG_CONFIG_HOME="$T/xdg" QGC_SYSTEM_CONFIG="$T/system.conf" expect_rc 0 check-config --explain
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
pass "command line"
