#!/bin/sh
# t-0727-deepcode-restore: qgc restore brings Deep Code sessions back from qgc's archive whole,
# judged by the real Deep Code 0.2.1 (dc-check.mjs: its SessionManager lists and loads every
# session, every /undo target restorable, git fsck clean). On the corpus
# (tests/data/deepcode/home.tar.gz): a real archive run (max-age 1d: 53 sessions to .qgc-archive/,
# the checkpoint repositories compacted in the same run), a compress run (compress-after 1d: every
# archived transcript as .zst; qgc show still reads one), a dry run of `qgc restore --project` that
# changes nothing, then `qgc restore ID` of every archived id (half of them by a prefix): dc-check
# --compare with nothing gone, every index, transcript and image byte for byte as before, the
# archive empty, no marker left, each restore's end recorded (restore-grace: the next archive run
# leaves them alone). Needs node, npm (the registry) and git; SKIP otherwise.
. "$(dirname "$0")/lib.sh"
realdc_setup

mkdir "$T/orig"
tar xzf "$QGC_TESTDATA/deepcode/home.tar.gz" -C "$T"
tar xzf "$QGC_TESTDATA/deepcode/home.tar.gz" -C "$T/orig"
find "$T/home" -exec touch -h -d 2026-06-01 {} +
DC=$T/home/.deepcode
NOW=2027-02-01T00:00:00Z
node "$HARNESS/dc-check.mjs" "$T/home" --save "$T/baseline.json" > "$T/check.txt" 2>&1 ||
        { cat "$T/check.txt"; fail "Deep Code's code cannot read the corpus"; }

# archive (the compaction too: it must keep what archived sessions name), then compress
printf 'defaults = {\n  max-age = "1d";\n  action = "archive";\n};\n' > "$T/a.conf"
printf 'defaults = {\n  max-age = "off";\n  compress-after = "1d";\n};\n' > "$T/c.conf"
rc=0
run_qgc -c "$T/a.conf" --root "$DC" --now "$NOW" --log-file "$T/a.log" > "$T/a.txt" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/a.txt"; fail "the archive run exits $rc"; }
IDS=$(sed -n 's/.*QGC_ACTION=archived QGC_SESSION=\([^ ]*\) .*/\1/p' "$T/a.log")
n=$(echo "$IDS" | grep -c .)
[ "$n" -ge 40 ] || { cat "$T/a.txt"; fail "$n sessions archived"; }
grep -q 'QGC_ACTION=orphan-reclaimed .*file-history' "$T/a.log" || fail "no compaction in the archive run"
rc=0
run_qgc -c "$T/c.conf" --root "$DC" --now "$NOW" --log-file "$T/c.log" > "$T/c.txt" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/c.txt"; fail "the compress run exits $rc"; }
[ "$(ls "$DC"/.qgc-archive/*/*.jsonl.zst | wc -l)" = "$n" ] ||
        { cat "$T/c.txt"; ls -R "$DC/.qgc-archive"; fail "not every archived transcript compressed"; }
node "$HARNESS/dc-check.mjs" "$T/home" --compare "$T/baseline.json" \
        --expect-gone "$(echo "$IDS" | paste -sd, -)" > "$T/gone.txt" 2>&1 ||
        { cat "$T/gone.txt"; fail "Deep Code's judgement of the archived store"; }
# qgc show reads an archived, compressed transcript: the original, byte for byte
id1=$(echo "$IDS" | head -1)
f1=$(find "$T/orig/home/.deepcode/projects" -name "$id1.jsonl")
run_qgc --root "$DC" show "$id1" > "$T/show.jsonl" 2> "$T/show.err" || { cat "$T/show.err"; fail "qgc show $id1"; }
cmp "$T/show.jsonl" "$f1" || fail "qgc show of a compressed archived session is not its transcript"
pass "$n sessions archived and compressed: Deep Code lists the rest, whole; qgc show reads them"

# the dry run of a project's restore shows its plan and changes nothing
reset_atimes "$T/home"
snapshot "$T/home" "$T/s0"
PROJ=/srv/deepcode-demo/work/busy
run_qgc --root "$DC" restore --dry-run --project "$PROJ" > "$T/dry.txt" 2>&1 ||
        { cat "$T/dry.txt"; fail "restore --dry-run --project"; }
snapshot "$T/home" "$T/s1"
diff "$T/s0" "$T/s1" || fail "a dry run changed the store"
nb=$(grep -c '^would restore session ' "$T/dry.txt")
[ "$nb" -ge 1 ] && [ "$(grep -c "/.qgc-archive/-srv-deepcode-demo-work-busy/.*\.jsonl\.zst' -> '.*/projects/-srv-deepcode-demo-work-busy/.*\.jsonl'$" "$T/dry.txt")" = "$nb" ] ||
        { cat "$T/dry.txt"; fail "the dry run's plan"; }
pass "restore --dry-run --project: $nb sessions planned, nothing changed"

# restore every archived id (every other one by an 8-character prefix)
i=0
for id in $IDS; do
        i=$((i + 1))
        arg=$id
        [ $((i % 2)) = 0 ] && arg=$(echo "$id" | cut -c1-8)
        run_qgc --root "$DC" --log-file "$T/r.log" restore "$arg" > "$T/r.txt" 2>&1 ||
                { cat "$T/r.txt"; fail "qgc restore $arg"; }
done
[ "$(grep -c 'QGC_ACTION=restored ' "$T/r.log")" = "$n" ] || { cat "$T/r.log"; fail "$n restores journalled"; }
node "$HARNESS/dc-check.mjs" "$T/home" --compare "$T/baseline.json" > "$T/after.txt" 2>&1 ||
        { cat "$T/after.txt"; fail "Deep Code's judgement after the restores"; }
grep -q '^compare with .*: 58 kept session(s) identical, 0 expected-gone session(s) gone, 0 difference(s)' \
        "$T/after.txt" || { cat "$T/after.txt"; fail "dc-check --compare after the restores"; }
grep -q '^PASS: Deep Code lists 58 session(s) in 5 project(s), 61/61 undo targets restorable, 0 error(s)' \
        "$T/after.txt" || { cat "$T/after.txt"; fail "dc-check after the restores"; }
for p in "$T"/orig/home/.deepcode/projects/*/; do
        c=$(basename "$p")
        cmp "$p/sessions-index.json" "$DC/projects/$c/sessions-index.json" ||
                fail "$c: the index is not byte for byte what it was"
        for f in "$p"/*.jsonl; do
                cmp "$f" "$DC/projects/$c/${f##*/}" || fail "$c: ${f##*/} is not what it was"
        done
        [ ! -d "$p/images" ] || [ -z "$(ls -A "$p/images")" ] ||
                diff -r "$p/images" "$DC/projects/$c/images" || fail "$c: images differ"
done
[ ! -e "$DC/.qgc-archive" ] || { ls -R "$DC/.qgc-archive"; fail "the archive is not empty"; }
[ "$(ls "$DC/.qgc")" = session-times ] || { ls -R "$DC/.qgc"; fail "a marker is left"; }
[ "$(grep -c '^restored [0-9]* ' "$DC/.qgc/session-times")" = "$n" ] ||
        { cat "$DC/.qgc/session-times"; fail "$n restores recorded"; }
pass "$n sessions restored: Deep Code lists all 58 whole, indexes, transcripts and images byte for byte"

# restore-grace: the archive run again archives none of them
printf 'defaults = {\n  max-age = "1d";\n  action = "archive";\n  restore-grace = "30d";\n};\n' > "$T/g.conf"
rc=0
run_qgc -c "$T/g.conf" --root "$DC" --now "$NOW" --log-file "$T/g.log" > "$T/g.txt" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/g.txt"; fail "the archive run after the restores exits $rc"; }
grep -q '^qgc: archived 0 ' "$T/g.txt" || { cat "$T/g.txt"; fail "restored sessions archived again at once"; }
pass "restore-grace: the next archive run leaves the $n restored sessions alone"
