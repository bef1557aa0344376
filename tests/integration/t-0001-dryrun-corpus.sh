#!/bin/sh
# A dry run on a copy of the genuine corpus tree with hostile entries planted: the right verb and
# reason for every session, nothing hangs or crashes, and the tree is byte-identical afterwards,
# atimes included.
. "$(dirname "$0")/lib.sh"
D=$(dirname "$0")

tree=$(make_tree tree)
HOSTILE_TREE=$tree; . "$D/hostile.sh"

NOW=2027-04-01T00:00:00Z
snapshot "$tree" "$T/s0"   # gathers the path list (reads directories)
reset_atimes "$tree"
snapshot "$tree" "$T/before"

run_qgc --dry-run --root "$tree" --now "$NOW" -c "$QGC_TESTDATA/integration/empty.conf" > "$T/plan.txt" || fail "dry run failed"
run_qgc --dry-run --json --root "$tree" --now "$NOW" -c "$QGC_TESTDATA/integration/empty.conf" > "$T/plan.json" || fail "json dry run failed"
run_qgc status --root "$tree" --now "$NOW" -c "$QGC_TESTDATA/integration/empty.conf" > "$T/status.txt" || fail "status failed"

snapshot "$tree" "$T/after"
diff -u "$T/before" "$T/after" || fail "the dry run changed the tree"
python3 -c '
import os, sys
root, listfile = sys.argv[1], sys.argv[2]
before = set(open(listfile).read().split("\n"))
now = set()
for d, ds, fs in os.walk(root):
    for n in ds + fs: now.add(os.path.join(d, n))
now.add(root)
extra = now - before
if extra: print("new paths:", sorted(extra)); sys.exit(1)
' "$tree" "$T/.paths-tree" || fail "the dry run created files"

cat "$T/plan.txt"
python3 "$D/plan.py" "$T/plan.json" \
        "$ID_SYMLINK=skip~symlink" \
        "$ID_FIFO=skip~(FIFO|fifo|regular)" \
        "$ID_DIR=skip~(director|regular)" \
        "$ID_FOREIGN=skip~foreign" \
        "$ID_EMPTY=skip~empty" \
        "$ID_HUGE=skip~(1 MiB|too long|longer)" \
        "$ID_MISMATCH=skip~sessionId" \
        "$ID_NOTJSON=skip~JSON" \
        "$ID_GLUED=archive" \
        "$ID_BADUTF=archive" \
        "aefd2a51-f2fc-4eed-a29c-91292bb022bf=archive~max-age" \
        "8a7ded31-31b8-46e9-b4e0-9e1af37c0d0d=archive~max-age" \
        "1a914264-8e49-442e-bc79-1cb2de9eae0c=keep~archived" \
        "582043e2-0a5b-430d-b2e9-daca37f89f10=keep~(newest|latest)" \
        "df25afd1-db41-477e-87bb-98d273af1115=keep~(newest|latest)" \
        || fail "unexpected plan"
# the whole plan, against the golden one (reviewed by hand when it was made; make update-golden
# rewrites it: review the diff)
normalize_plan "$T/plan.json" "$tree" > "$T/plan.norm.json"
golden_compare "$QGC_TESTDATA/integration/corpus-plan.golden.json" "$T/plan.norm.json"
grep -q "would archive" "$T/plan.txt" || fail "text plan lacks 'would archive'"
grep -q "srv/demo/api-server" "$T/status.txt" || fail "status lacks a project"
pass "dry run on the corpus"
