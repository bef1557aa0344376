#!/bin/sh
# t-0720-deepcode-read: the judge of Deep Code stores runs from the project. The real Deep Code
# 0.2.1 is built from tests/realdeepcode/'s source tarball (setup.sh, into the build tree), and
# its own code (dc-check.mjs: SessionManager, listSessionMessages, listUndoTargets, git fsck)
# lists and loads the corpus store qgc's Deep Code reader is tested on
# (tests/data/deepcode/home.tar.gz): 58 sessions in 5 projects, 61 undo targets restorable. Its
# baseline compares equal to itself, and a store that lost a kept session's transcript fails
# the comparison. A real qgc delete run (28 sessions) is judged by it (--compare --expect-gone),
# and its indexes are compared byte for byte with what Deep Code's own deleteSession() writes
# for the same sessions. Needs node, npm (the registry) and git; SKIP otherwise.
. "$(dirname "$0")/lib.sh"
realdc_setup

tar xzf "$QGC_TESTDATA/deepcode/home.tar.gz" -C "$T"
node "$HARNESS/dc-check.mjs" "$T/home" --save "$T/baseline.json" > "$T/check.txt" 2>&1 ||
        { cat "$T/check.txt"; fail "Deep Code's code cannot read the corpus"; }
tail -1 "$T/check.txt"
grep -q '^PASS: Deep Code lists 58 session(s) in 5 project(s), 61/61 undo targets restorable' \
        "$T/check.txt" || fail "dc-check did not list the corpus as expected"
node "$HARNESS/dc-check.mjs" "$T/home" --compare "$T/baseline.json" > "$T/same.txt" 2>&1 ||
        { cat "$T/same.txt"; fail "the unchanged store does not compare equal to its baseline"; }
pass "dc-check --save and --compare on the corpus"

# a real delete run: Deep Code's own code still lists and loads every kept session, with every
# /undo target restorable, and git fsck is clean (dc-check fails otherwise); the index qgc wrote
# is byte for byte what Deep Code's own deleteSession() writes for the same sessions
mkdir "$T/q" "$T/d"
tar xzf "$QGC_TESTDATA/deepcode/home.tar.gz" -C "$T/q"
tar xzf "$QGC_TESTDATA/deepcode/home.tar.gz" -C "$T/d"
find "$T/q/home" -exec touch -h -d 2026-06-01 {} +
printf 'defaults = {\n  max-age = "1d";\n  action = "delete";\n};\n' > "$T/d.conf"
rc=0
run_qgc -c "$T/d.conf" --root "$T/q/home/.deepcode" --now 2027-02-01T00:00:00Z \
        --log-file "$T/actions.log" > "$T/run.txt" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/run.txt"; fail "the delete run exits $rc"; }
grep -q 'deleted 28, orphans reclaimed 6, .* failed 0;' "$T/run.txt" ||
        { cat "$T/run.txt"; fail "the delete run's summary"; }
# the same run compacts the 5 checkpoint repositories (default compact-min-idle): judged below too
[ "$(grep -c 'QGC_ACTION=orphan-reclaimed .*/file-history"\? QGC_RULE=compact-min-idle' "$T/actions.log")" = 5 ] ||
        { cat "$T/actions.log"; fail "5 compactions journalled"; }
GONE=$(sed -n 's/.*QGC_ACTION=deleted QGC_SESSION=\([^ ]*\) .*/\1/p' "$T/actions.log" | paste -sd, -)
node "$HARNESS/dc-check.mjs" "$T/q/home" --compare "$T/baseline.json" --expect-gone "$GONE" \
        > "$T/after.txt" 2>&1 || { cat "$T/after.txt"; fail "Deep Code's judgement after qgc's delete"; }
grep -q '^compare with .*: 30 kept session(s) identical, 28 expected-gone session(s) gone, 0 difference(s)' \
        "$T/after.txt" || { cat "$T/after.txt"; fail "dc-check --compare after the delete"; }
grep -q '^PASS: Deep Code lists 30 session(s) in 5 project(s), 30/30 undo targets restorable, 0 error(s)' \
        "$T/after.txt" || { cat "$T/after.txt"; fail "dc-check after the delete"; }
sed -n 's/.*QGC_ACTION=deleted QGC_SESSION=\([^ ]*\) QGC_PROJECT=\("[^"]*"\|[^ ]*\) .*/\2\t\1/p' \
        "$T/actions.log" | sed 's/^"\(.*\)"\t/\1\t/' > "$T/ops"
[ "$(wc -l < "$T/ops")" = 28 ] || { cat "$T/ops"; fail "28 deletions to replay"; }
while IFS="$(printf '\t')" read -r root id; do
        node "$HARNESS/dc-session-op.mjs" delete "$T/d/home" "$root" "$id" > "$T/op.txt" 2>&1 ||
                { cat "$T/op.txt"; fail "Deep Code's delete of $id"; }
        grep -q " true$" "$T/op.txt" || { cat "$T/op.txt"; fail "Deep Code did not delete $id"; }
done < "$T/ops"
n=0
for f in "$T"/q/home/.deepcode/projects/*/sessions-index.json; do
        cmp "$f" "$T/d/home/.deepcode/projects/${f#"$T"/q/home/.deepcode/projects/}" ||
                fail "qgc's index is not what Deep Code writes: $f"
        n=$((n + 1))
done
[ $n = 5 ] || fail "$n indexes compared, not 5"
pass "a real delete run: Deep Code lists and loads the 30 kept sessions, fsck clean, its indexes byte for byte"

# the judge has teeth: a kept session's transcript removed
rm "$T/home/.deepcode/projects/-srv-deepcode-demo-work-webapp/458313f1-0b4f-420b-9d20-b6c7a466945d.jsonl"
if node "$HARNESS/dc-check.mjs" "$T/home" --compare "$T/baseline.json" > "$T/bad.txt" 2>&1; then
        cat "$T/bad.txt"
        fail "dc-check did not notice a lost transcript"
fi
grep -q 458313f1 "$T/bad.txt" || { cat "$T/bad.txt"; fail "dc-check's failure does not name the session"; }
pass "dc-check --compare fails on a lost transcript"
