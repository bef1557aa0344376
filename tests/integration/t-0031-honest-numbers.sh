#!/bin/sh
# Honest numbers (issue 11): freed and moved-to-archive apart in the plan, the run line, the
# journal and status; sessions held back by the deletion limit are skipped with the limit as
# reason, counted, journalled, and warned about, also under --quiet.
. "$(dirname "$0")/lib.sh"
NOW=2027-04-01T00:00:00Z

expect_rc() { # expect_rc RC ARGS...
        want=$1; shift
        set +e; timeout 60 "$QGC" "$@" > "$T/out" 2> "$T/err"; rc=$?; set -e
        [ "$rc" = "$want" ] || { cat "$T/out" "$T/err"; fail "qgc $*: exit $rc, expected $want"; }
}

# archiving frees nothing: the plan and the run say so, the journal counts the two apart
a=$(make_tree archive)
expect_rc 0 --dry-run --root "$a" --now $NOW -c "$QGC_TESTDATA/integration/apply.conf"
grep -q "^  would move  *[0-9.]*[KMG]* to the archive (frees no space)$" "$T/out" || { cat "$T/out"; fail "plan: no moved-to-archive line"; }
grep -q "^  would free  *[0-9.]*[KMGB]* (deletions and orphans)$" "$T/out" || fail "plan: no freed line"
expect_rc 0 --root "$a" --now $NOW -c "$QGC_TESTDATA/integration/apply.conf" --log-file "$T/log"
grep -q "^qgc: archived [1-9][0-9]* ([0-9.]*[KMG] moved to the archive), deleted [1-9][0-9]*, .*; freed [0-9.]*[KMG]$" "$T/out" || { cat "$T/out"; fail "run line: freed and archived not apart"; }
summary=$(grep "QGC_ACTION=run-summary" "$T/log")
echo "$summary" | grep -q "QGC_FREED_BYTES=[1-9]" || fail "journal: no QGC_FREED_BYTES"
echo "$summary" | grep -q "QGC_ARCHIVED_BYTES=[1-9]" || fail "journal: no QGC_ARCHIVED_BYTES"
python3 - "$T/log" <<'PY' || fail "QGC_BYTES is not archived + freed"
import re, sys
line = [l for l in open(sys.argv[1]) if "QGC_ACTION=run-summary" in l][0]
f = dict(re.findall(r'(QGC_[A-Z_]+)=([0-9]+)\b', line))
assert int(f["QGC_BYTES"]) == int(f["QGC_FREED_BYTES"]) + int(f["QGC_ARCHIVED_BYTES"]), f
PY

# every "salvaged" entry names its session (field and message); the catalog shows the session
python3 - "$T/log" <<'PY' || fail "a salvaged entry does not name its session"
import re, sys
n = 0
for line in open(sys.argv[1]):
    if "QGC_ACTION=salvaged" not in line:
        continue
    n += 1
    m = re.search(r'QGC_SESSION=([0-9a-fA-F-]{36})', line)
    assert m, line
    assert m.group(1) in line.split("MESSAGE_ID=")[0], line
assert n > 0, "no salvaged entry: the test proves nothing"
PY
python3 - "$QGC_SRCDIR/systemd/qgc.catalog" <<'PY' || fail "the catalog does not substitute @QGC_SESSION@"
import re, sys
entries = re.split(r'^-- ', open(sys.argv[1]).read(), flags=re.M)[1:]
for e in entries:
    mid, body = e.split("\n", 1)
    if "run started" in body or "run finished" in body or "a user's run" in body:
        continue  # about a run, or a user's run as a whole (user-failed): no one session
    assert "@QGC_SESSION@" in body or "@QGC_PATH@" in body, mid
    assert not re.search(r'QGC_SESSION=(?!@)', body), mid   # named, not pointed at
PY

# an interactive real run says where its actions are recorded
if ! have_pty; then
        part_skipped "the interactive run (no pseudo-terminal here)"
else
        ia=$(make_tree interactive)
        run_qgc --dry-run --json --root "$ia" --now $NOW -c "$QGC_TESTDATA/integration/apply.conf" > "$T/iplan.json"
        script -qec "exec '$QGC' --root '$ia' --now $NOW -c '$QGC_TESTDATA/integration/apply.conf' --log-file '$T/ilog'" /dev/null < /dev/null > "$T/iout" 2>&1 ||
                { cat "$T/iout"; fail "interactive run"; }
        grep -q "^qgc: archived [1-9].*; freed " "$T/iout" || { cat "$T/iout"; fail "interactive run: no counts"; }
        grep -q "^qgc: every action is in $T/ilog" "$T/iout" || { cat "$T/iout"; fail "interactive run: no hint where the actions are"; }
        # it lists what it did, one line per change, as --changes lists the plan (issue 24.11)
        python3 - "$T/iplan.json" "$T/iout" <<'PY' || { cat "$T/iout"; fail "interactive run: does not list each change"; }
import json, re, sys
plan = json.load(open(sys.argv[1]))
want = {s["id"]: s["verb"] + "d" for p in plan["projects"] for s in p["sessions"]
        if s["verb"] in ("archive", "delete")}
assert want, "the plan changes nothing: the test proves nothing"
got = {}
for line in open(sys.argv[2]):
    m = re.match(r"(archived|deleted) +([0-9a-f-]{36}) +\S+  (/\S*)", line.replace("\r", ""))
    if m:
        assert m.group(2) not in got, line
        got[m.group(2)] = m.group(1)
assert got == want, (got, want)
PY
fi
grep -q "every action is in" "$T/out" && fail "a piped run printed the interactive hint"
grep -Eq "^(archived|deleted) " "$T/out" && fail "a piped run listed its changes (only a terminal gets them)"

# status: the file system's free space and the archive's size
expect_rc 0 status --root "$a"
grep -q "^archive: [1-9][0-9]* sessions\?, [0-9.]*[KMG] (archiving frees no space)$" "$T/out" || { cat "$T/out"; fail "status: no archive size"; }
grep -q "^file system: [0-9.]*[KMGT] free of [0-9.]*[KMGT]" "$T/out" || { cat "$T/out"; fail "status: no free space"; }

# the deletion limit: held-back sessions are skipped with the limit as reason, in plan and run
h=$(make_tree held)
printf 'defaults = { action = "delete"; max-age = "90d"; max-deletions = 1; max-deletions-percent = 100; };\n' > "$T/held.conf"
expect_rc 0 --dry-run --root "$h" --now $NOW -c "$T/held.conf"
grep -q " skip .*held back by max-deletions (1 per run; use --force)" "$T/out" || { cat "$T/out"; fail "plan: held-back session not skipped with the limit as reason"; }
grep -q "^  warning: policy not met: [1-9][0-9]* sessions\? ([0-9.]*[KMGB]*) held back by max-deletions$" "$T/out" || { cat "$T/out"; fail "plan: no held-back warning"; }
n=$(grep -c " skip .*held back by max-deletions" "$T/out")
expect_rc 0 --root "$h" --now $NOW -c "$T/held.conf" --log-file "$T/hlog"
grep -q "skipped $n, failed 0" "$T/out" || { cat "$T/out"; fail "run: held-back sessions not counted as skipped"; }
[ "$(grep -c 'QGC_ACTION=skipped.*held back by max-deletions' "$T/hlog")" = "$n" ] || { cat "$T/hlog"; fail "journal: held-back sessions not journalled"; }
grep "QGC_ACTION=run-summary" "$T/hlog" | grep -q "QGC_HELD_BACK=$n .*QGC_WARNING=\"policy not met: $n sessions\? (" || { cat "$T/hlog"; fail "journal: no warning in the summary"; }
grep -q "warning: policy not met: $n sessions\? (.*) held back by max-deletions" "$T/err" || fail "run: no warning on stderr"

# --quiet (cron): exactly that one warning line, so cron mails it
h2=$(make_tree held2)
expect_rc 0 --quiet --log-target stderr --root "$h2" --now $NOW -c "$T/held.conf"
[ ! -s "$T/out" ] || { cat "$T/out"; fail "--quiet printed to stdout"; }
[ "$(wc -l < "$T/err")" = 1 ] && grep -q "^qgc: warning: policy not met: " "$T/err" || { cat "$T/err"; fail "--quiet: not exactly the one warning line"; }

# a tree cap that the limit holds back says so
t=$(make_tree treecap)
printf 'defaults = { max-age = "off"; max-deletions = 1; keep-latest = 0; min-age = "0d"; };\ntree = { max-size = "1K"; };\n' > "$T/tree.conf"
expect_rc 0 --dry-run --root "$t" --now $NOW -c "$T/tree.conf"
grep -q "^  warning: tree cap not met: [0-9.]*[KMGB]* > max-size 1K after the plan; held by max-deletions [1-9][0-9]* sessions\? ([0-9.]*[KMGB]*)$" "$T/out" || { cat "$T/out"; fail "plan: tree cap held back without the warning"; }
[ "$(grep -c "not met" "$T/out")" = 1 ] || { cat "$T/out"; fail "plan: the tree cap's held-back sessions warned twice"; }

# keep-latest alone keeps the tree cap unmet (issue 24.4): the plan, the run's stderr and its
# journal summary (PRIORITY=4) say so once, naming keep-latest; status shows the figure the cap
# compares, the same as the plan's reasons; the next run, which plans nothing, still says so
k=$(make_tree keeplatest)
printf 'defaults = { max-age = "off"; keep-latest = 1; max-deletions-percent = 100; min-age = "0d"; };\ntree = { max-size = "1K"; };\n' > "$T/kl.conf"
expect_rc 0 --dry-run --root "$k" --now $NOW -c "$T/kl.conf"
grep -q "^  warning: tree cap not met: [0-9.]*K > max-size 1K after the plan; held by keep-latest 5 sessions ([0-9.]*K)$" "$T/out" || { cat "$T/out"; fail "plan: no warning naming keep-latest"; }
before=$(sed -n 's/.* tree \([0-9.]*[KMG]\) > max-size 1K, shrinking.*/\1/p' "$T/out" | sort -u)
[ -n "$before" ] && [ "$(echo "$before" | wc -l)" = 1 ] || { cat "$T/out"; fail "plan: no single tree figure"; }
expect_rc 0 status --root "$k" -c "$T/kl.conf"
grep -q "^tree cap: $before counted, tree.max-size 1K (over)$" "$T/out" || { cat "$T/out"; fail "status: not the plan's tree figure ($before)"; }
grep -q "^  = 12 sessions $before + 0 orphans 0B (allocated bytes);$" "$T/out" || { cat "$T/out"; fail "status: what the cap counts"; }
for run in 1 2; do
        expect_rc 0 --root "$k" --now $NOW -c "$T/kl.conf" --log-file "$T/kl$run.log"
        [ "$(grep -c "tree cap not met" "$T/err")" = 1 ] && grep -q "^qgc: warning: tree cap not met: .* held by keep-latest 5 sessions" "$T/err" || { cat "$T/err"; fail "run $run: not one warning naming keep-latest"; }
        grep "QGC_ACTION=run-summary" "$T/kl$run.log" | grep -q "PRIORITY=4 .*QGC_WARNING=\"tree cap not met: .*keep-latest 5 sessions" || { cat "$T/kl$run.log"; fail "run $run: the journal summary does not warn"; }
done
# --help, --explain and qgc.conf(5) agree: archiving frees nothing, tree caps always delete
expect_rc 0 --help
grep -q "it frees no" "$T/out" || fail "--help does not say archiving frees no space"
expect_rc 0 check-config --explain -c "$T/tree.conf"
grep -q "^tree:.*disk caps always delete (action does not apply)" "$T/out" || { cat "$T/out"; fail "--explain: tree caps and action"; }
grep -q "frees no space" "$QGC_SRCDIR/man/qgc.conf.5" || fail "qgc.conf(5) does not say archiving frees no space"
grep -q "caps are not governed by" "$QGC_SRCDIR/man/qgc.conf.5" || fail "qgc.conf(5): action still governs the tree caps"
pass "honest numbers"
finish
