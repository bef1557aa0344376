#!/bin/sh
# t-0724-deepcode-fresh: qgc on a Deep Code store generated now by the real Deep Code 0.2.1
# (tests/realdeepcode/gen-corpus.sh: a fork, a path over 64 UTF-16 units (hashed project code),
# a non-ASCII path, a project of 53 sessions cut to 50 by Deep Code's cap, a project whose
# directory is gone), plus two /undo runs by Deep Code's own code (dc-undo.mjs): the fork's
# branch moved back by a code restore, so that its later prompts name a checkpoint no ref reaches,
# and its source undone in full (code and conversation). Two delete policies (max-age with a
# project that keeps everything, max-sessions), each on its own copy: the dry run's JSON plan is
# what the run journals (the same sessions deleted, the same repositories compacted); Deep Code's
# own code lists and loads every kept session with every /undo target restorable
# (dc-check.mjs --compare --expect-gone); `git fsck --full --strict` is clean in every
# file-history/.git; qgc's freed figure is at most what du lost, and short of it by no more than
# the indexes' shrinking as their entries went (1 KiB an entry, 8 KiB a project).
# Then archive, compress and restore of the sessions the age rule selects, judged the same way.
# Needs node, npm (the registry, once: the build is t-0720's) and git; SKIP otherwise.
. "$(dirname "$0")/lib.sh"
: "${QGC_SRCDIR:?}" "${QGC_BUILDDIR:?}"
HARNESS=$QGC_SRCDIR/tests/realdeepcode
REALDC_BUILD=${REALDC_BUILD:-$QGC_BUILDDIR/tests/realdeepcode-build}
export REALDC_BUILD

for tool in node npm git bash python3 timeout; do
        command -v $tool >/dev/null 2>&1 || skip "judge Deep Code: $tool is not installed"
done
# the build t-0720 makes (same directory, same lock; setup.sh is idempotent)
mkdir -p "$(dirname "$REALDC_BUILD")"
rc=0
( command -v flock >/dev/null && flock -w 1800 9; "$HARNESS/setup.sh" ) 9>>"$REALDC_BUILD.lock" \
        > "$T/setup.log" 2>&1 || rc=$?
[ $rc -ne 77 ] || skip "judge Deep Code: $(tail -1 "$T/setup.log")"
[ $rc -eq 0 ] || { cat "$T/setup.log"; fail "setup.sh could not build Deep Code"; }

# a fresh store (~2.5 min on 2 busy CPUs)
rc=0
REALDC_WORK=$T/work SKIP_CHECK=1 timeout 900 "$HARNESS/gen-corpus.sh" "$T/home" > "$T/gen.log" 2>&1 || rc=$?
[ $rc -eq 0 ] || { tail -20 "$T/gen.log"; fail "gen-corpus.sh exits $rc"; }
DC=$T/home/.deepcode
M=$T/work/manifest.tsv
[ "$(ls "$DC/projects" | grep -c '^berweisung-Service-billing-[0-9a-f]\{16\}$')" = 1 ] ||
        { ls "$DC/projects"; fail "no hashed project code for the long path"; }
[ ! -e "$T/work/scratch" ] || fail "the scratch project was not removed"
W1=$(awk -F'\t' '$3 == "tools" { print $1 }' "$M")
W2=$(awk -F'\t' '$3 == "forked" { print $1 }' "$M")
WEBAPP=$(awk -F'\t' '$3 == "forked" { print $2 }' "$M") # as Deep Code resolved it
[ -n "$W1" ] && [ -n "$W2" ] && [ -d "$WEBAPP" ] || { cat "$M"; fail "the manifest names no fork"; }
node "$HARNESS/dc-undo.mjs" "$T/home" "$WEBAPP" "$W2" 1 code > "$T/undo.txt" 2>&1 &&
        node "$HARNESS/dc-undo.mjs" "$T/home" "$WEBAPP" "$W1" 2 code-and-conversation \
                >> "$T/undo.txt" 2>&1 || { cat "$T/undo.txt"; fail "Deep Code's /undo"; }
find "$T/home" -exec touch -h -d '3 days ago' {} + # idle past min-idle and compact-min-idle
node "$HARNESS/dc-check.mjs" "$T/home" --save "$T/baseline.json" > "$T/check.txt" 2>&1 ||
        { cat "$T/check.txt"; fail "Deep Code's code cannot read the fresh store"; }
grep -q '^PASS: Deep Code lists 58 session(s) in 5 project(s), 60/60 undo targets restorable' \
        "$T/check.txt" || { cat "$T/check.txt"; fail "dc-check on the fresh store"; }
grep -q 'restorable checkpoint(s) are reachable from no ref' "$T/check.txt" ||
        { cat "$T/check.txt"; fail "the undo left no checkpoint reachable from no ref"; }
pass "a fresh store: 58 sessions in 5 projects, a checkpoint the undo left reachable from no ref"

# run_policy NAME CONF_TEXT: plan, run and judge a copy of the store
run_policy() {
        name=$1
        H=$T/$name/home
        mkdir "$T/$name"
        cp -a "$T/home" "$H"
        printf '%s\n' "$2" > "$T/$name.conf"
        run_qgc -c "$T/$name.conf" --root "$H/.deepcode" --now +30d --force --dry-run --json \
                > "$T/$name.json" || fail "$name: the dry run"
        before=$(du -sB1 "$H/.deepcode" | cut -f1)
        rc=0
        run_qgc -c "$T/$name.conf" --root "$H/.deepcode" --now +30d --force \
                --log-file "$T/$name.log" > "$T/$name.txt" 2>&1 || rc=$?
        [ $rc -eq 0 ] || { cat "$T/$name.txt"; fail "$name: the run exits $rc"; }
        after=$(du -sB1 "$H/.deepcode" | cut -f1)
        grep -q ' failed 0;' "$T/$name.txt" || { cat "$T/$name.txt"; fail "$name: a failure"; }
        # the plan is the run: the same sessions deleted, the same repositories compacted
        python3 - "$T/$name.json" "$T/$name.log" > "$T/$name.gone" <<'PY' ||
import json, re, sys
plan = json.load(open(sys.argv[1]))
want = {s["id"] for p in plan["projects"] for s in p["sessions"] if s["verb"] == "delete"}
want_c = {o["project_dir"] for o in plan["orphans"] if o["verb"] == "delete"}
assert all(o["kind"] == "deepcode-checkpoints" for o in plan["orphans"] if o["verb"] == "delete")
done, done_c = set(), set()
for line in open(sys.argv[2], encoding="utf-8"):
    m = re.search(r' QGC_ACTION=deleted QGC_SESSION=(\S+)', line)
    if m:
        done.add(m.group(1))
    m = re.search(r' QGC_ACTION=orphan-reclaimed QGC_PROJECT=(?:"((?:[^"\\]|\\.)*)"|(\S+))', line)
    if m:
        done_c.add(m.group(1) or m.group(2))
    assert not re.search(r' QGC_ACTION=(skipped|failed) ', line), line
assert want == done, (sorted(want - done), sorted(done - want))
assert want_c == done_c and len(want_c) == 5, (want_c, done_c)
print(",".join(sorted(done)))
PY
                fail "$name: the run is not the plan"
        node "$HARNESS/dc-check.mjs" "$H" --compare "$T/baseline.json" --expect-gone "$(cat "$T/$name.gone")" \
                > "$T/$name.check" 2>&1 || { cat "$T/$name.check"; fail "$name: Deep Code's judgement"; }
        grep -q "^compare with .*: $3 kept session(s) identical, $4 expected-gone session(s) gone, 0 difference(s)" \
                "$T/$name.check" || { cat "$T/$name.check"; fail "$name: dc-check --compare"; }
        grep -q "^PASS: .* 0 error(s), 0 warning(s)" "$T/$name.check" ||
                { cat "$T/$name.check"; fail "$name: dc-check's warnings"; }
        for g in "$H"/.deepcode/projects/*/file-history/.git; do
                git --git-dir="$g" fsck --full --strict --no-progress > "$T/fsck.txt" 2>&1 ||
                        { cat "$T/fsck.txt"; fail "$name: git fsck $g"; }
        done
        freed=$(sed -n 's/.* QGC_ACTION=run-summary .*QGC_FREED_BYTES=\([0-9]*\).*/\1/p' "$T/$name.log")
        du_freed=$((before - after))
        slack=$(($4 * 1024 + 5 * 8192))
        echo "$name: deleted $4, kept $3; qgc freed $freed bytes, du $du_freed ($before -> $after)"
        [ "$freed" -le "$du_freed" ] && [ $((du_freed - freed)) -le $slack ] ||
                fail "$name: qgc says $freed bytes freed, du $du_freed (allowed short by $slack)"
}

run_policy age 'defaults = {
  max-age = "1d";
  action = "delete";
};
projects = ( { path = "'"$WEBAPP"'"; max-age = "off"; } );' 8 50
# the fork kept: the checkpoint its undo left reachable from no ref is kept by a ref of qgc's
git --git-dir="$T/age/home/.deepcode/projects/$(ls "$DC/projects" | grep -- '-work-webapp$')/file-history/.git" \
        for-each-ref refs/qgc/keep | grep -q . || fail "age: no keep-ref for the undone checkpoint"
pass "max-age: the plan's 50 deletions and 5 compactions done; Deep Code's judgement and git fsck clean"

run_policy count 'defaults = {
  max-sessions = 2;
  keep-latest = 1;
  max-age = "off";
  action = "delete";
};' 8 50
pass "max-sessions: the plan's 50 deletions and 5 compactions done; Deep Code's judgement and git fsck clean"

# archive (with compaction), compress and restore on its own copy of the fresh store: after the
# archive and compress runs Deep Code lists the rest whole and the archived ids gone; after
# `qgc restore` of every one (in the order of their ids: neither the archive's order nor its
# reverse), Deep Code lists all 58 whole again, every /undo target restorable, every transcript
# and every index byte for byte what the generator left (an unsorted one too: <id>.after), git
# fsck clean, nothing left in the archive
H=$T/arc/home
mkdir "$T/arc"
cp -a "$T/home" "$H"
printf 'defaults = {\n  max-age = "1d";\n  action = "archive";\n};\n' > "$T/arc-a.conf"
printf 'defaults = {\n  max-age = "off";\n  compress-after = "1d";\n};\n' > "$T/arc-c.conf"
rc=0
run_qgc -c "$T/arc-a.conf" --root "$H/.deepcode" --now +30d --force --log-file "$T/arc-a.log" \
        > "$T/arc-a.txt" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/arc-a.txt"; fail "archive: the run exits $rc"; }
IDS=$(sed -n 's/.*QGC_ACTION=archived QGC_SESSION=\([^ ]*\) .*/\1/p' "$T/arc-a.log")
n=$(echo "$IDS" | grep -c .)
[ "$n" -ge 40 ] || { cat "$T/arc-a.txt"; fail "archive: $n sessions archived"; }
rc=0
run_qgc -c "$T/arc-c.conf" --root "$H/.deepcode" --now +60d --force --log-file "$T/arc-c.log" \
        > "$T/arc-c.txt" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/arc-c.txt"; fail "compress: the run exits $rc"; }
[ "$(ls "$H"/.deepcode/.qgc-archive/*/*.jsonl.zst | wc -l)" = "$n" ] ||
        { cat "$T/arc-c.txt"; fail "compress: not every archived transcript compressed"; }
node "$HARNESS/dc-check.mjs" "$H" --compare "$T/baseline.json" --expect-gone "$(echo "$IDS" | paste -sd, -)" \
        > "$T/arc-gone.txt" 2>&1 || { cat "$T/arc-gone.txt"; fail "archive: Deep Code's judgement"; }
grep -q "^compare with .*: $((58 - n)) kept session(s) identical, $n expected-gone session(s) gone, 0 difference(s)" \
        "$T/arc-gone.txt" || { cat "$T/arc-gone.txt"; fail "archive: dc-check --compare"; }
for id in $(echo "$IDS" | sort); do
        run_qgc --root "$H/.deepcode" --log-file "$T/arc-r.log" restore "$id" > "$T/arc-r.txt" 2>&1 ||
                { cat "$T/arc-r.txt"; fail "qgc restore $id"; }
done
[ "$(grep -c 'QGC_ACTION=restored ' "$T/arc-r.log")" = "$n" ] || fail "restore: $n restores journalled"
node "$HARNESS/dc-check.mjs" "$H" --compare "$T/baseline.json" > "$T/arc-after.txt" 2>&1 ||
        { cat "$T/arc-after.txt"; fail "restore: Deep Code's judgement"; }
grep -q '^compare with .*: 58 kept session(s) identical, 0 expected-gone session(s) gone, 0 difference(s)' \
        "$T/arc-after.txt" || { cat "$T/arc-after.txt"; fail "restore: dc-check --compare"; }
grep -q "^PASS: .* 0 error(s), 0 warning(s)" "$T/arc-after.txt" ||
        { cat "$T/arc-after.txt"; fail "restore: dc-check's warnings"; }
# Every index byte for byte, also one Deep Code left unsorted (the undone fork's entry, updated
# last, stays where it was): each restored entry goes before the first id its <id>.after names
# that is indexed again.
unsorted=0
for p in "$T"/home/.deepcode/projects/*/; do
        c=$(basename "$p")
        [ -f "$p/sessions-index.json" ] || continue
        cmp "$p/sessions-index.json" "$H/.deepcode/projects/$c/sessions-index.json" ||
                fail "restore: $c's index is not byte for byte what it was"
        python3 - "$p/sessions-index.json" <<'PY' || unsorted=$((unsorted + 1))
import json, sys
e = [x["updateTime"] for x in json.load(open(sys.argv[1]))["entries"]]
sys.exit(0 if e == sorted(e, reverse=True) else 1)
PY
        for f in "$p"/*.jsonl; do
                [ -e "$f" ] || continue
                cmp "$f" "$H/.deepcode/projects/$c/${f##*/}" || fail "restore: $c/${f##*/} is not what it was"
        done
done
for g in "$H"/.deepcode/projects/*/file-history/.git; do
        git --git-dir="$g" fsck --full --strict --no-progress > "$T/fsck.txt" 2>&1 ||
                { cat "$T/fsck.txt"; fail "restore: git fsck $g"; }
done
[ -z "$(ls -A "$H/.deepcode/.qgc-archive"/* 2>/dev/null)" ] || fail "restore: the archive is not empty"
[ "$unsorted" -ge 1 ] || fail "restore: no index Deep Code left unsorted (the undone fork's)"
pass "archive, compress, restore of $n sessions: Deep Code's judgement before and after, every index byte for byte ($unsorted unsorted), git fsck clean"
