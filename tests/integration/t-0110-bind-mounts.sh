#!/bin/sh
# Bind mounts of the SAME filesystem inside a tree are never entered (issue 9, item 1). Their
# st_dev is the tree's own, so only a mount-point test (openat2 RESOLVE_NO_XDEV, statx
# STATX_ATTR_MOUNT_ROOT) tells them apart. Directories outside the tree, on the tree's
# filesystem, are bind-mounted at
#   (a) file-history/<id>/sub           of a session the delete run deletes,
#   (b) projects/<p>/subagents/<id>/x   of a session the delete run deletes,
#   (c) projects/-srv-demo-api-server   a whole project (its real directory moved out),
#   (d) file-history/<orphan>/sub and projects/<p>/subagents/<orphan>/x, orphans to reclaim,
#   (e) a file over usage_record.jsonl (in a tree of its own),
# then a dry run, `qgc status`, a delete run (with orphan reclaim) and an archive run are made.
# Each must leave the bind sources exactly as they were (names, types, sizes, mtimes, contents),
# the mounts mounted, and no size sum may count the mounted bytes. A removal stopped by a mount
# point is reported, not passed off as done. All of it twice: with openat2, and with the
# fallback walk (the run under tests/helpers/no-openat2, a seccomp filter that makes openat2 fail
# with ENOSYS). Needs root and mount namespaces, and seccomp for the second; otherwise SKIP.
if [ "${QGC_T0110_IN_NS:-}" != 1 ]; then
        [ "$(id -u)" = 0 ] || { echo "SKIP: needs root (mount --bind)" >&2; exit 77; }
        command -v unshare >/dev/null 2>&1 || { echo "SKIP: no unshare" >&2; exit 77; }
        command -v mountpoint >/dev/null 2>&1 || { echo "SKIP: no mountpoint" >&2; exit 77; }
        unshare -m --propagation private true 2>/dev/null ||
                { echo "SKIP: mount namespaces are not available" >&2; exit 77; }
        QGC_T0110_IN_NS=1 exec unshare -m --propagation private sh "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
# the mounts go before the tree: never let the cleanup's rm -rf walk into a bind source
trap 'for m in $(findmnt -rn -o TARGET | grep "^$T/" | sort -r); do umount "$m"; done; cleanup' EXIT

# every check runs, so that the log says everything a broken build does
nbad=0
bad() { echo "FAIL: $*" >&2; nbad=$((nbad + 1)); }

NOW=2027-04-01T00:00:00Z
FH=6dcfb8c0-951c-475b-9ca1-0d8837bead38  # my.notes, deleted by delete.conf
SA=aefd2a51-f2fc-4eed-a29c-91292bb022bf  # webapp, deleted by delete.conf
ORPH=0c0ffee0-1234-4abc-8def-0123456789ab # no transcript anywhere
cat > "$T/delete.conf" <<'EOF'
defaults = { action = "delete"; max-age = "90d"; keep-latest = 0; max-deletions-percent = 100;
             orphan-min-age = "1h"; };
EOF
cat > "$T/archive.conf" <<'EOF'
defaults = { action = "archive"; max-age = "90d"; keep-latest = 0; max-deletions-percent = 100;
             orphan-min-age = "off"; };
EOF

# outside NAME: a bind source at $T/outside/NAME with 1 MiB of data in two levels, printed.
outside() {
        o="$T/outside/$1"
        mkdir -p "$o/deeper"
        head -c 1048576 /dev/zero | tr '\0' 'o' > "$o/data.bin"
        echo "not the tree's: $1" > "$o/deeper/note.txt"
        echo "$o"
}

# listing: every path below $T/outside with type, size, mtime and content hash.
listing() {
        (cd "$T/outside" && find . -printf '%p %y %s %T@\n' | LC_ALL=C sort &&
                find . -type f -exec sha256sum {} + | LC_ALL=C sort)
}

# setup NAME: a corpus tree at $T/NAME with the mounts (a) to (d); the tree path is printed.
setup() {
        tree=$(make_tree "$1")
        W="$tree/projects/-srv-demo-webapp"
        mkdir -p "$tree/file-history/$FH/sub" "$W/subagents/$SA/x" \
                "$tree/file-history/$ORPH/sub" "$W/subagents/$ORPH/x"
        echo "the session's own" > "$W/subagents/$SA/own.txt"
        echo "the orphan's own" > "$tree/file-history/$ORPH/own.txt"
        touch -d 2026-11-01T00:00:00Z "$W/subagents/$SA/own.txt" "$tree/file-history/$ORPH/own.txt" \
                "$tree/file-history/$FH/sub" "$W/subagents/$SA/x" "$tree/file-history/$ORPH/sub" \
                "$W/subagents/$ORPH/x" "$tree/file-history/$ORPH" "$W/subagents/$ORPH" \
                "$W/subagents/$SA" "$tree/file-history/$FH" "$W/subagents"
        mv "$tree/projects/-srv-demo-api-server" "$T/outside/$1-api-server"
        mkdir "$tree/projects/-srv-demo-api-server"
        mount --bind "$(outside "$1-fh")" "$tree/file-history/$FH/sub"
        mount --bind "$(outside "$1-sa")" "$W/subagents/$SA/x"
        mount --bind "$T/outside/$1-api-server" "$tree/projects/-srv-demo-api-server"
        mount --bind "$(outside "$1-orph-fh")" "$tree/file-history/$ORPH/sub"
        mount --bind "$(outside "$1-orph-sa")" "$W/subagents/$ORPH/x"
        [ "$(stat -c %d "$T/outside")" = "$(stat -c %d "$tree/file-history")" ] ||
                fail "the bind sources are not on the tree's filesystem"
        echo "$tree"
}

# still_mounted TREE: every mount of setup() is still there.
still_mounted() {
        for m in "file-history/$FH/sub" "projects/-srv-demo-webapp/subagents/$SA/x" \
                "projects/-srv-demo-api-server" "file-history/$ORPH/sub" \
                "projects/-srv-demo-webapp/subagents/$ORPH/x"; do
                mountpoint -q "$1/$m" || bad "$m is no longer mounted"
        done
}

# total_bytes PLAN.json: the sum of every session's and orphan's bytes (and allocated bytes).
total_bytes() {
        python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
items = [s for pr in p["projects"] for s in pr["sessions"]] + p.get("orphans", [])
print(sum(i["bytes"] for i in items), sum(i.get("bytes_allocated", 0) for i in items))
' "$1"
}

mkdir -p "$T/outside"

# ---- the sums: a dry run and status before and after mounting (on a tree without mounts,
# the sums are the baseline; mounted data is 1 MiB per mount, so any counting shows)
base=$(make_tree base)
W="$base/projects/-srv-demo-webapp"
mkdir -p "$base/file-history/$FH/sub" "$W/subagents/$SA/x" "$base/file-history/$ORPH/sub" \
        "$W/subagents/$ORPH/x"
run_qgc --dry-run --json --root "$base" --now "$NOW" -c "$T/delete.conf" > "$T/plan0.json" ||
        fail "baseline dry run"
run_qgc status --root "$base" --now "$NOW" -c "$T/delete.conf" > "$T/status0.txt" ||
        fail "baseline status"
rm -rf "$base"

tree=$(setup dry)
listing > "$T/before"
run_qgc --dry-run --json --root "$tree" --now "$NOW" -c "$T/delete.conf" > "$T/plan1.json" ||
        fail "dry run"
set -- $(total_bytes "$T/plan0.json"); b0=$1 a0=$2
set -- $(total_bytes "$T/plan1.json"); b1=$1 a1=$2
echo "sizes without mounts: $b0 ($a0 allocated); with: $b1 ($a1 allocated)"
[ "$b1" -le "$b0" ] && [ "$a1" -le "$a0" ] || bad "the plan's sizes count bytes below a mount point"
python3 "$(dirname "$0")/plan.py" "$T/plan1.json" "$FH=delete" "$SA=delete" \
        "orphan:$ORPH=delete" || bad "plan"
grep -q 122b1556 "$T/plan1.json" && bad "the plan names a session of the bind-mounted project"
run_qgc status --root "$tree" --now "$NOW" -c "$T/delete.conf" > "$T/status1.txt" || fail "status"
cat "$T/status1.txt" | sed 's/   */  /g'
grep -q 'api-server' "$T/status1.txt" && bad "status counts the bind-mounted project"
python3 - "$T/status0.txt" "$T/status1.txt" <<'PY' || bad "status counts bytes below a mount point"
import re, sys
def disk(path):
    m = re.search(r"total: .* ([0-9.]+)([KMGT]?) on disk", open(path).read())
    return float(m.group(1)) * 1024 ** " KMGT".index(m.group(2) or " ")
a, b = disk(sys.argv[1]), disk(sys.argv[2])
sys.exit(0 if b <= a else 1)
PY
listing > "$T/after"
diff -u "$T/before" "$T/after" || bad "the dry run and status changed files outside the tree"
still_mounted "$tree"

# ---- a delete run, with orphan reclaim
tree=$(setup del)
listing > "$T/before"
set +e
timeout 60 "$QGC" --root "$tree" --now "$NOW" -c "$T/delete.conf" --log-file "$T/del.log" \
        > "$T/del.out" 2>&1
rc=$?
set -e
cat "$T/del.out"
[ $rc -lt 124 ] || fail "the delete run crashed (rc=$rc)"
listing > "$T/after"
diff -u "$T/before" "$T/after" || bad "the delete run changed files outside the tree"
still_mounted "$tree"
[ ! -e "$tree/projects/-srv-demo-my-notes/chats/$FH.jsonl" ] || bad "(a) transcript not deleted"
[ ! -e "$tree/projects/-srv-demo-webapp/chats/$SA.jsonl" ] || bad "(b) transcript not deleted"
[ ! -e "$tree/projects/-srv-demo-webapp/subagents/$SA/own.txt" ] || bad "(b) own file kept"
[ ! -e "$tree/file-history/$ORPH/own.txt" ] || bad "(d) the orphan's own file kept"
# not "done": the sessions and orphans whose directories hold a mount point are reported
[ $rc -eq 1 ] || bad "the delete run exited $rc, expected 1 (removals stopped at mount points)"
for id in "$FH" "$SA" "$ORPH"; do
        grep "$id" "$T/del.log" | grep -q 'kept: a mount point inside' ||
                bad "$id: no 'kept: a mount point inside' in the action log"
done

# ---- an archive run
tree=$(setup arc)
listing > "$T/before"
run_qgc --root "$tree" --now "$NOW" -c "$T/archive.conf" --log-file "$T/arc.log" \
        > "$T/arc.out" 2>&1 || { cat "$T/arc.out"; bad "the archive run failed"; }
listing > "$T/after"
diff -u "$T/before" "$T/after" || bad "the archive run changed files outside the tree"
still_mounted "$tree"
[ -e "$tree/projects/-srv-demo-webapp/chats/archive/$SA.jsonl" ] || bad "$SA not archived"

# ---- (e) a file of the tree's filesystem bind-mounted over usage_record.jsonl: the salvage
# never appends to it, and no session goes without its usage line
tree=$(make_tree usg)
cp "$tree/usage_record.jsonl" "$T/outside/usage-usg.jsonl"
mount --bind "$T/outside/usage-usg.jsonl" "$tree/usage_record.jsonl"
listing > "$T/before"
set +e
timeout 60 "$QGC" --root "$tree" --now "$NOW" -c "$T/delete.conf" --log-file "$T/usg.log" \
        > "$T/usg.out" 2>&1
rc=$?
set -e
[ $rc -lt 124 ] || fail "the usage run crashed (rc=$rc)"
listing > "$T/after"
diff -u "$T/before" "$T/after" || bad "a bind-mounted usage_record.jsonl was written to"
mountpoint -q "$tree/usage_record.jsonl" || bad "usage_record.jsonl is no longer mounted"
[ -e "$tree/projects/-srv-demo-my-notes/chats/$FH.jsonl" ] ||
        bad "$FH was deleted although its usage could not be salvaged"
grep -q "salvage" "$T/usg.log" || bad "no salvage failure in the action log"

[ $nbad -eq 0 ] || fail "$nbad checks failed"
# once more where the kernel refuses openat2 (ENOSYS from a seccomp filter, as before Linux 5.6):
# the walk that tests each directory for a mount root
if [ -z "${QGC_T0110_NO_OPENAT2:-}" ]; then
        noa2="$QGC_BUILDDIR/tests/helpers/no-openat2"
        [ -x "$noa2" ] || skip "tests/helpers/no-openat2 is not built: the walk without openat2 is untested"
        set +e
        "$noa2" true
        rc=$?
        set -e
        [ $rc -ne 77 ] || skip "no seccomp filters here: the walk without openat2 is untested"
        QGC_T0110_NO_OPENAT2=1 "$noa2" sh "$0" || fail "without openat2 (tests/helpers/no-openat2)"
fi
pass "bind mounts of the tree's own filesystem are never entered, counted or emptied"
