#!/bin/sh
# t-0725-deepcode-freed: what a run says it freed in a Deep Code store is what du sees (and its
# dry run says "would compact" of a checkpoint repository, not "would delete"). On the
# corpus (tests/data/deepcode/home.tar.gz, whose 5 projects' originalPaths are all gone) a run
# that only compacts the 5 checkpoint repositories journals, per repository, the bytes that
# repository's du lost (the plan's figure is only an estimate: "frees about this"), and its
# summary's freed is their sum, the store's du difference. A run that only marks the 5 stale
# projects journals 5 stale marks (as Qwen's marks), reclaims no orphan and frees nothing; once
# the marks are old enough, the run that deletes the 58 sessions and removes the 5 projects says
# it freed what du lost, short by no more than the indexes' shrinking as their entries went
# (1 KiB an entry, 8 KiB a project).
. "$(dirname "$0")/lib.sh"

tar xzf "$QGC_TESTDATA/deepcode/home.tar.gz" -C "$T"
find "$T/home" -exec touch -h -d 2026-06-01 {} +
DC=$T/home/.deepcode
NOW=2027-02-01T00:00:00Z
printf 'defaults = {\n  max-age = "off";\n  orphan-min-age = "off";\n  compact-min-idle = "1d";\n};\n' > "$T/c.conf"
printf 'defaults = {\n  max-age = "off";\n  orphan-min-age = "off";\n  compact-min-idle = "off";\n  stale-project-min-age = "1d";\n};\n' > "$T/s.conf"

# the dry run names a compaction as one: the repository stays, only what no kept session reaches goes
run_qgc -c "$T/c.conf" --root "$DC" --now "$NOW" --dry-run > "$T/c-dry.txt" 2>&1 ||
        { cat "$T/c-dry.txt"; fail "the compaction dry run"; }
[ "$(grep -c '^  projects/.*/file-history would compact ' "$T/c-dry.txt")" = 5 ] ||
        { cat "$T/c-dry.txt"; fail "the dry run does not show 5 compactions as such"; }
! grep -q 'file-history would delete' "$T/c-dry.txt" ||
        { cat "$T/c-dry.txt"; fail "the dry run says a checkpoint repository would be deleted"; }

# compaction: journalled bytes == du's, per repository and in the summary
for p in "$DC"/projects/*/; do du -sB1 "$p/file-history" | cut -f1 > "$p.du0"; done
before=$(du -sB1 "$DC" | cut -f1)
rc=0
run_qgc -c "$T/c.conf" --root "$DC" --now "$NOW" --log-file "$T/c.log" > "$T/c.txt" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/c.txt"; fail "the compaction run exits $rc"; }
after=$(du -sB1 "$DC" | cut -f1)
grep -q '^qgc: archived 0 (0B moved to the archive), deleted 0, orphans reclaimed 5, skipped 0, failed 0;' \
        "$T/c.txt" || { cat "$T/c.txt"; fail "5 compactions"; }
sum=0
for p in "$DC"/projects/*/; do
        code=$(basename "$p")
        freed=$(( $(cat "$p.du0") - $(du -sB1 "$p/file-history" | cut -f1) ))
        got=$(grep "QGC_ACTION=orphan-reclaimed QGC_PROJECT=\"\?$code\"\? " "$T/c.log" |
                sed -n 's/.* QGC_BYTES=\([0-9]*\) .*/\1/p')
        [ "$got" = "$freed" ] || { cat "$T/c.log"; fail "$code: journalled $got bytes freed, du says $freed"; }
        sum=$((sum + freed))
done
[ "$sum" = $((before - after)) ] || fail "the repositories freed $sum bytes, the store $((before - after))"
grep -q "QGC_ACTION=run-summary .*QGC_FREED_BYTES=$sum " "$T/c.log" ||
        { grep run-summary "$T/c.log"; fail "the summary's freed is not du's $sum"; }
pass "5 compactions journal the bytes du lost ($sum), and so does the summary"

# stale marks: journalled as marks, nothing freed (on a fresh copy: the compaction wrote there)
rm -rf "$T/home"
tar xzf "$QGC_TESTDATA/deepcode/home.tar.gz" -C "$T"
find "$T/home" -exec touch -h -d 2026-06-01 {} +
rc=0
run_qgc -c "$T/s.conf" --root "$DC" --now "$NOW" --log-file "$T/s.log" > "$T/s.txt" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/s.txt"; fail "the marking run exits $rc"; }
grep -q '^qgc: archived 0 (0B moved to the archive), deleted 0, orphans reclaimed 0, skipped 0, failed 0; freed 0B$' \
        "$T/s.txt" || { cat "$T/s.txt"; fail "a run that only marks frees nothing"; }
[ "$(grep -c 'QGC_ACTION=stale-mark .*QGC_REASON="its originalPath is gone"' "$T/s.log")" = 5 ] ||
        { cat "$T/s.log"; fail "5 stale marks journalled"; }
! grep -q 'QGC_ACTION=orphan-reclaimed' "$T/s.log" || { cat "$T/s.log"; fail "a mark journalled as reclaimed"; }
[ "$(ls "$DC"/projects/*/.qgc-stale-since | wc -l)" = 5 ] || fail "5 markers written"
pass "5 stale marks journalled as marks, 0 bytes freed"

# the marks old enough: the projects go, with what du counted in them; each delete journals
# what du counts of the session's files (its transcript, images/<id>/ with what is in it, its
# branch and reflog): allocated blocks, not st_size
touch -h -d 2026-06-01 "$DC"/projects/*/.qgc-stale-since "$DC"/projects/*
for j in "$DC"/projects/*/*.jsonl; do
        p=$(dirname "$j") id=$(basename "$j" .jsonl)
        du -cB1 "$j" "$p/images/$id" "$p/file-history/.git/refs/heads/$id" \
                "$p/file-history/.git/logs/refs/heads/$id" 2>/dev/null | tail -n 1 | cut -f1 > "$T/$id.du"
done
imaged=$(basename "$(dirname "$DC"/projects/*/images/*/*.png)")
[ -s "$T/$imaged.du" ] || fail "the corpus has no session with images"
before=$(du -sB1 "$DC" | cut -f1)
rc=0
run_qgc -c "$T/s.conf" --root "$DC" --now "$NOW" --force --log-file "$T/r.log" > "$T/r.txt" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/r.txt"; fail "the removing run exits $rc"; }
grep -q '^qgc: archived 0 (0B moved to the archive), deleted 58, orphans reclaimed 5, skipped 0, failed 0;' \
        "$T/r.txt" || { cat "$T/r.txt"; fail "58 sessions deleted, 5 stale projects removed"; }
[ -z "$(ls "$DC/projects")" ] || { ls -a "$DC/projects"; fail "a stale project is left"; }
du_freed=$((before - $(du -sB1 "$DC" | cut -f1)))
freed=$(sed -n 's/.* QGC_ACTION=run-summary .*QGC_FREED_BYTES=\([0-9]*\).*/\1/p' "$T/r.log")
[ "$freed" -le "$du_freed" ] && [ $((du_freed - freed)) -le $((58 * 1024 + 5 * 8192)) ] ||
        fail "the run says $freed bytes freed, du $du_freed"
pass "5 stale projects removed: $freed bytes freed said, du $du_freed"
n=0
grep 'QGC_ACTION=deleted' "$T/r.log" > "$T/deleted"
while read -r line; do
        id=$(echo "$line" | sed 's/.* QGC_SESSION=\([^ ]*\) .*/\1/')
        got=$(echo "$line" | sed -n 's/.* QGC_BYTES=\([0-9]*\) .*/\1/p')
        [ "$got" = "$(cat "$T/$id.du")" ] || fail "$id: journalled $got bytes freed, du $(cat "$T/$id.du")"
        n=$((n + 1))
done < "$T/deleted"
[ $n = 58 ] && grep -q "QGC_SESSION=$imaged " "$T/deleted" || fail "$n deletes checked, $imaged's not among them"
pass "each of the 58 deletes journals what du counted of its files, images included"
