#!/bin/sh
# t-0726-deepcode-archive: qgc's archive of Deep Code sessions judged by the real Deep Code 0.2.1
# (tests/realdeepcode/, as t-0720). On the corpus (tests/data/deepcode/home.tar.gz: 58 sessions
# in 5 projects) a policy that archives (max-age 1d, keep-latest 1 a project) archives 53 in a
# real run (the checkpoint repositories compacted in the same run), then a run of the same
# policy compresses the 53 (compress-after 1d). Deep Code's own code then lists and loads the 5
# kept sessions as before, with every /undo target restorable, git fsck clean, the 53 gone
# (dc-check --compare --expect-gone, 0 warnings); in .qgc-archive/<code>/ each archived
# transcript decompresses to the original byte for byte, its <id>.entry.json is
# JSON.stringify(entry, null, 2) of its original index entry, and its branch and every
# checkpoint its <id>.checkpoints names survived the compaction. Needs node, npm (the registry),
# git and zstd; SKIP otherwise.
. "$(dirname "$0")/lib.sh"
: "${QGC_SRCDIR:?}" "${QGC_BUILDDIR:?}"
DICT=$QGC_SRCDIR/src/base/colddict/dict-1.zdict

realdc_setup zstd

mkdir "$T/orig"
tar xzf "$QGC_TESTDATA/deepcode/home.tar.gz" -C "$T/orig"
tar xzf "$QGC_TESTDATA/deepcode/home.tar.gz" -C "$T"
node "$HARNESS/dc-check.mjs" "$T/home" --save "$T/baseline.json" > "$T/check.txt" 2>&1 ||
        { cat "$T/check.txt"; fail "Deep Code's code cannot read the corpus"; }
find "$T/home" -exec touch -h -d 2026-06-01 {} +
DC=$T/home/.deepcode
NOW=2027-02-01T00:00:00Z
printf 'defaults = {\n  max-age = "1d";\n  action = "archive";\n  compress-after = "1d";\n  orphan-min-age = "off";\n};\n' > "$T/a.conf"

# the archive run (and the compaction of the 5 repositories), then the compress run
rc=0
run_qgc -c "$T/a.conf" --root "$DC" --now "$NOW" --log-file "$T/archive.log" > "$T/run.txt" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/run.txt"; fail "the archive run exits $rc"; }
grep -q '^qgc: archived 53 (1020K moved to the archive), deleted 0, orphans reclaimed 5, skipped 0, failed 0;' \
        "$T/run.txt" || { cat "$T/run.txt"; fail "the archive run's summary"; }
rc=0
run_qgc -c "$T/a.conf" --root "$DC" --now "$NOW" --log-file "$T/compress.log" > "$T/run2.txt" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/run2.txt"; fail "the compress run exits $rc"; }
[ "$(grep -c 'QGC_ACTION=compressed .*QGC_RULE=compress-after' "$T/compress.log")" = 53 ] ||
        { cat "$T/run2.txt" "$T/compress.log"; fail "53 compressions journalled"; }
! grep -q 'QGC_ACTION=\(failed\|skipped\|deleted\)' "$T/compress.log" ||
        { cat "$T/compress.log"; fail "the compress run failed, skipped or deleted"; }
[ ! -e "$DC/.qgc" ] || fail "a run left its pending markers"
pass "a real archive run (53 archived, 5 repositories compacted), then 53 compressed"

# Deep Code's judgement: the kept sessions as before, the archived ones gone from its view
GONE=$(sed -n 's/.*QGC_ACTION=archived QGC_SESSION=\([^ ]*\) .*/\1/p' "$T/archive.log" | paste -sd, -)
node "$HARNESS/dc-check.mjs" "$T/home" --compare "$T/baseline.json" --expect-gone "$GONE" \
        > "$T/after.txt" 2>&1 || { cat "$T/after.txt"; fail "Deep Code's judgement after qgc's archive"; }
grep -q '^compare with .*: 5 kept session(s) identical, 53 expected-gone session(s) gone, 0 difference(s)' \
        "$T/after.txt" || { cat "$T/after.txt"; fail "dc-check --compare after the archive"; }
grep -q '^PASS: Deep Code lists 5 session(s) in 5 project(s), .* 0 error(s), 0 warning(s)' \
        "$T/after.txt" || { cat "$T/after.txt"; fail "dc-check after the archive"; }
for g in "$DC"/projects/*/file-history/.git; do
        git --git-dir="$g" fsck --no-progress > "$T/fsck.txt" 2>&1 || { cat "$T/fsck.txt"; fail "git fsck $g"; }
done
pass "Deep Code lists its 5 kept sessions as before, the 53 archived gone, 0 warnings; git fsck clean"

# the archive: transcripts byte for byte, entries as the index held them, branches and
# checkpoints kept
n=0
for id in $(echo "$GONE" | tr , ' '); do
        z=$(ls "$DC"/.qgc-archive/*/"$id.jsonl.zst")
        code=$(basename "$(dirname "$z")")
        a=$DC/.qgc-archive/$code
        [ ! -e "$a/$id.jsonl" ] || fail "$id: its plain transcript left beside the compressed one"
        zstd -d -q -c -D "$DICT" "$z" | cmp - "$T/orig/home/.deepcode/projects/$code/$id.jsonl" ||
                fail "$id: the archived transcript is not the original"
        node -e '
                const fs = require("fs");
                const [index, id, got] = process.argv.slice(1);
                const e = JSON.parse(fs.readFileSync(index, "utf8")).entries.find((x) => x.id === id);
                process.exit(e && JSON.stringify(e, null, 2) === fs.readFileSync(got, "utf8") ? 0 : 1);
        ' "$T/orig/home/.deepcode/projects/$code/sessions-index.json" "$id" "$a/$id.entry.json" ||
                fail "$id: its entry.json is not its original index entry"
        g=$DC/projects/$code/file-history/.git
        ! git --git-dir="$T/orig/home/.deepcode/projects/$code/file-history/.git" rev-parse -q \
                --verify "refs/heads/$id" > /dev/null ||
                git --git-dir="$g" rev-parse -q --verify "refs/heads/$id" > /dev/null ||
                fail "$id: its branch did not survive the compaction"
        while read -r h; do
                git --git-dir="$g" cat-file -e "$h^{commit}" || fail "$id: checkpoint $h pruned"
        done < "$a/$id.checkpoints"
        n=$((n + 1))
done
[ $n = 53 ] || fail "$n archived sessions checked, not 53"
pass "53 archived: transcripts byte for byte, entries as indexed, branches and checkpoints kept"
