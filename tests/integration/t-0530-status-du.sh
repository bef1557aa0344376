#!/bin/sh
# qgc status accounts for every byte (issue 12): the total of its breakdown by kind equals what
# du says of the tree, apparent (du -b) and allocated (du -B1), on the corpus (Qwen 0.24.4), on a
# tree written by Qwen 0.15, and on the corpus with unknown files, a hard link and Qwen <= 0.1
# legacy files planted, and with a runtime root inside the global one. Unknown files are counted as unknown and named; the text form keeps the
# per-project table above the breakdown; a status run changes nothing.
. "$(dirname "$0")/lib.sh"

nbad=0
bad() { echo "FAIL: $*" >&2; nbad=$((nbad + 1)); }

# compare TREE LABEL: status --json totals against du, and the kinds adding up
compare() {
        run_qgc status --json --root "$1" > "$T/$2.json" 2> "$T/$2.err" || { cat "$T/$2.err"; bad "$2: status --json"; return; }
        du_b=$(du -s -b "$1" | cut -f1)
        du_a=$(du -s -B1 "$1" | cut -f1)
        python3 - "$T/$2.json" "$du_b" "$du_a" "$2" <<'PY' || bad "$2: status and du differ"
import json, sys
doc, du_b, du_a, label = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
t = doc["breakdown"][0]
kinds = t["kinds"]
sb = sum(k["bytes"] for k in kinds.values())
sa = sum(k["allocated"] for k in kinds.values())
print(f"{label}: status {t['total']['bytes']} apparent, {t['total']['allocated']} allocated; "
      f"du -b {du_b}, du -B1 {du_a}; unknown {kinds['unknown']['files']} files")
ok = t["total"]["bytes"] == du_b == sb and t["total"]["allocated"] == du_a == sa and not t["incomplete"]
sys.exit(0 if ok else 1)
PY
}

tree=$(make_tree corpus)
compare "$tree" corpus
python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["breakdown"][0]; sys.exit(1 if t["kinds"]["unknown"]["files"] else 0)' "$T/corpus.json" ||
        bad "corpus: a file of a genuine Qwen tree is called unknown: $(cat "$T/corpus.json")"

mkdir -p "$T/q015"
cp -a "$QGC_TESTDATA/qwen015/tree/." "$T/q015/"
compare "$T/q015" qwen015

# planted: unknown names, a hard link (counted once, as du does), legacy files, tool results
tree=$(make_tree planted)
H=$(printf /tmp/legacy | sha256sum | cut -c1-64)
mkdir -p "$tree/tmp/$H/chats" "$tree/stray-dir" "$tree/projects/-srv-demo-webapp/chats/junk"
head -c 12345 /dev/urandom > "$tree/stray-dir/blob.bin"
echo unknown > "$tree/projects/-srv-demo-webapp/notes.txt"
echo '{}' > "$tree/tmp/$H/chats/session-2025-01-01T00-00-abcd1234.json"
echo '{}' > "$tree/tmp/$H/checkpoint-x.json"
ln "$tree/stray-dir/blob.bin" "$tree/stray-dir/blob-link.bin"
# qgc's own files, as a run and an interrupted one leave them: its own kind, not unknown
: > "$tree/.qgc.lock"
mkdir -p "$tree/.qgc/pending"
echo '{}' > "$tree/.qgc/pending/marker"
echo partial > "$tree/projects/-srv-demo-webapp/chats/.logs.json.qgc-tmp"
compare "$tree" planted
python3 - "$T/planted.json" <<'PY' || bad "planted: kinds not as planted"
import json, sys
t = json.load(open(sys.argv[1]))["breakdown"][0]
k = t["kinds"]
assert k["unknown"]["files"] == 2, k["unknown"]          # blob (linked twice: once), notes.txt
assert k["qgc"]["files"] == 3, k["qgc"]                  # the lock, a marker, a temporary file
assert k["legacy"]["files"] == 2, k["legacy"]
assert any("stray-dir/blob" in p for p in t["unknown_shown"]), t["unknown_shown"]
PY

# a runtime root inside the global one (QWEN_RUNTIME_DIR=$QWEN_HOME/rt): each byte once
g=$(make_tree global)
mkdir "$g/rt"
cp -a "$QGC_TESTDATA/qwen015/tree/." "$g/rt/"
echo 'defaults = { };' > "$T/empty.conf"
QWEN_HOME="$g" QWEN_RUNTIME_DIR="$g/rt" HOME="$T" \
        run_qgc --system-config "$T/empty.conf" status --json > "$T/nested.json" || bad "status --json (nested roots)"
python3 - "$T/nested.json" "$(du -s -b "$g" | cut -f1)" "$(du -s -B1 "$g" | cut -f1)" <<'PY' || bad "nested roots: status and du differ"
import json, sys
t = json.load(open(sys.argv[1]))["breakdown"][0]
print(f"nested: status {t['total']['bytes']} / {t['total']['allocated']}, du {sys.argv[2]} / {sys.argv[3]}")
sys.exit(0 if (t["total"]["bytes"], t["total"]["allocated"]) == (int(sys.argv[2]), int(sys.argv[3])) else 1)
PY

# the text form: the per-project table first, then the breakdown with du's exact totals
reset_atimes "$tree"
snapshot "$tree" "$T/before"
run_qgc status --root "$tree" > "$T/status.txt" || bad "status (text)"
snapshot "$tree" "$T/after"
diff "$T/before" "$T/after" > /dev/null || bad "status changed the tree (atimes included)"
cat "$T/status.txt"
head -1 "$T/status.txt" | grep -q "^PROJECT" || bad "the per-project table is not first"
grep -q "^  bytes: $(du -s -b "$tree" | cut -f1) apparent, $(du -s -B1 "$tree" | cut -f1) on disk" "$T/status.txt" ||
        bad "the text total is not du's"
grep -q "^  unknown: stray-dir/blob" "$T/status.txt" || bad "the text does not name the unknown file"

[ $nbad -eq 0 ] || fail "$nbad checks failed"
pass "status totals equal du (apparent and allocated) on the corpus, a Qwen 0.15 tree and a planted tree"
