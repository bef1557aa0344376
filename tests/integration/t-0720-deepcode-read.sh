#!/bin/sh
# t-0720-deepcode-read: the judge of Deep Code stores runs from the project. The real Deep Code
# 0.2.1 is built from tests/realdeepcode/'s source tarball (setup.sh, into the build tree), and
# its own code (dc-check.mjs: SessionManager, listSessionMessages, listUndoTargets, git fsck)
# lists and loads the corpus store qgc's Deep Code reader is tested on
# (tests/data/deepcode/home.tar.gz): 58 sessions in 5 projects, 61 undo targets restorable. Its
# baseline compares equal to itself, and a store that lost a kept session's transcript fails
# the comparison. Needs node, npm (the registry) and git; SKIP otherwise.
. "$(dirname "$0")/lib.sh"
: "${QGC_SRCDIR:?}" "${QGC_BUILDDIR:?}"
HARNESS=$QGC_SRCDIR/tests/realdeepcode
REALDC_BUILD=${REALDC_BUILD:-$QGC_BUILDDIR/tests/realdeepcode-build}
export REALDC_BUILD

for tool in node npm git; do
        command -v $tool >/dev/null 2>&1 || judge_missing "Deep Code" "$tool is not installed"
done
# one build at a time (setup.sh is idempotent: a stamp holds the tarball's sha256)
mkdir -p "$(dirname "$REALDC_BUILD")"
rc=0
( command -v flock >/dev/null && flock -w 1800 9; "$HARNESS/setup.sh" ) 9>>"$REALDC_BUILD.lock" \
        > "$T/setup.log" 2>&1 || rc=$?
[ $rc -ne 77 ] || judge_missing "Deep Code" "$(tail -1 "$T/setup.log")"
[ $rc -eq 0 ] || { cat "$T/setup.log"; fail "setup.sh could not build Deep Code"; }

tar xzf "$QGC_TESTDATA/deepcode/home.tar.gz" -C "$T"
node "$HARNESS/dc-check.mjs" "$T/home" --save "$T/baseline.json" > "$T/check.txt" 2>&1 ||
        { cat "$T/check.txt"; fail "Deep Code's code cannot read the corpus"; }
tail -1 "$T/check.txt"
grep -q '^PASS: Deep Code lists 58 session(s) in 5 project(s), 61/61 undo targets restorable' \
        "$T/check.txt" || fail "dc-check did not list the corpus as expected"
node "$HARNESS/dc-check.mjs" "$T/home" --compare "$T/baseline.json" > "$T/same.txt" 2>&1 ||
        { cat "$T/same.txt"; fail "the unchanged store does not compare equal to its baseline"; }
pass "dc-check --save and --compare on the corpus"

# the judge has teeth: a kept session's transcript removed
rm "$T/home/.deepcode/projects/-srv-deepcode-demo-work-webapp/458313f1-0b4f-420b-9d20-b6c7a466945d.jsonl"
if node "$HARNESS/dc-check.mjs" "$T/home" --compare "$T/baseline.json" > "$T/bad.txt" 2>&1; then
        cat "$T/bad.txt"
        fail "dc-check did not notice a lost transcript"
fi
grep -q 458313f1 "$T/bad.txt" || { cat "$T/bad.txt"; fail "dc-check's failure does not name the session"; }
pass "dc-check --compare fails on a lost transcript"
