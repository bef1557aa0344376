#!/bin/sh
# t-0722-deepcode-status: qgc status of a Deep Code store (~/.deepcode) accounts for every byte
# by Deep Code's kinds (transcripts, images, sessions-index.json, file-history: the checkpoint
# git repository, logs, settings, other), with the total equal to du -b and du -B1 of the store
# (a hard link counted once), on the corpus (tests/data/deepcode/home.tar.gz, written by the real
# Deep Code 0.2.1) and with a hard link and an unknown file planted; its text uses no word of
# Qwen's layout (archive, compressed, sidecars, subagents, chats); status changes nothing.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"

tar xzf "$QGC_TESTDATA/deepcode/home.tar.gz" -C "$T"
DC=$T/home/.deepcode

# compare LABEL UNKNOWN: status --json against du, the kinds adding up, UNKNOWN files "other"
compare() {
        run_qgc status --json --root "$DC" > "$T/$1.json" 2> "$T/$1.err" ||
                { cat "$T/$1.err"; fail "$1: status --json"; }
        python3 - "$T/$1.json" "$(du -s -b "$DC" | cut -f1)" "$(du -s -B1 "$DC" | cut -f1)" "$1" "$2" <<'PY' ||
import json, sys
doc, du_b, du_a, label, unknown = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
[t] = doc["breakdown"]
k = t["kinds"]
sb = sum(v["bytes"] for v in k.values())
sa = sum(v["allocated"] for v in k.values())
print(f"{label}: status {t['total']['bytes']} apparent, {t['total']['allocated']} allocated; "
      f"du -b {du_b}, du -B1 {du_a}")
assert t["total"]["bytes"] == du_b == sb and t["total"]["allocated"] == du_a == sa, t
assert not t["incomplete"], t
assert sorted(k) == sorted(["transcripts", "images", "index", "file-history", "logs", "state",
                            "qgc", "other", "directories"]), k
assert k["transcripts"]["files"] == 58 and k["index"]["files"] == 5, k
assert k["file-history"]["files"] > 0 and k["logs"]["files"] == 1 and k["images"]["files"] > 0, k
assert k["other"]["files"] == unknown, (k["other"], t["unknown_shown"])
PY
        fail "$1: status and du differ"
}

reset_atimes "$T/home"
snapshot "$T/home" "$T/before"
compare corpus 0
run_qgc status --root "$DC" > "$T/status.txt" 2>&1 || { cat "$T/status.txt"; fail "status"; }
snapshot "$T/home" "$T/after"
diff "$T/before" "$T/after" || fail "status changed the store"
cat "$T/status.txt"
grep -q '^by kind, ' "$T/status.txt" || fail "no breakdown by kind"
grep -q '^  transcripts  *58 ' "$T/status.txt" || fail "no transcripts row"
grep -q '^  file-history (git)  *[0-9]' "$T/status.txt" || fail "no file-history row"
grep -q "^  bytes: $(du -s -b "$DC" | cut -f1) apparent, $(du -s -B1 "$DC" | cut -f1) on disk$" \
        "$T/status.txt" || fail "the text's exact bytes are not du's"
! grep -Eiq 'archiv|compress|sidecar|subagent|chats' "$T/status.txt" || fail "Qwen's words in a Deep Code status"

# planted: a hard link (counted once, as du does) and a file Deep Code does not write
P=$(find "$DC/projects" -mindepth 1 -maxdepth 1 -type d | head -1)
head -c 12345 /dev/urandom > "$P/notes.bin"
ln "$P/notes.bin" "$DC/notes-link.bin"
compare planted 1 # the two names of one inode: once
pass "Deep Code status: every byte by kind, total = du"

# stale project entries in Deep Code's words: the corpus's 5 projects/<code>/ whose originalPath
# is gone, with every byte du counts in them; not a project whose originalPath exists (made
# here, of no session); status --json counts the same 5
mkdir -p "$T/s" "$T/work"
tar xzf "$QGC_TESTDATA/deepcode/home.tar.gz" -C "$T/s"
S=$T/s/home/.deepcode
stale=$(du -scB1 "$S"/projects/*/ | tail -n 1 | cut -f1)
code=$(printf '%s' "$T/work" | tr '/\\' '--' | tr -d :)
mkdir "$S/projects/$code"
printf '{\n  "version": 1,\n  "entries": [],\n  "originalPath": "%s"\n}' "$T/work" > "$S/projects/$code/sessions-index.json"
run_qgc status --root "$S" > "$T/stale.txt" 2>&1 || { cat "$T/stale.txt"; fail "status (stale)"; }
run_qgc status --json --root "$S" > "$T/stale.json" 2>&1 || { cat "$T/stale.json"; fail "status --json (stale)"; }
# util_format_bytes(): 1024-based, one decimal (truncated) below 10
b=$(python3 -c 'import sys
b, i = int(sys.argv[1]), 0
while b >> (10 * (i + 2)) >= 1: i += 1
s, u = 10 * (i + 1), "KMGTPE"[i]
w, r = b >> s, b & ((1 << s) - 1)
print(f"{w}.{(r * 10) >> s}{u}" if w < 10 else f"{w}{u}")' "$stale")
want="  stale project entries: 5 of 6 ($b): projects/<code>/ whose originalPath no longer exists, every byte in it (candidates; the plan of stale-project-min-age checks its guards)"
grep -qxF "$want" "$T/stale.txt" || { cat "$T/stale.txt"; fail "the stale line is not: $want"; }
! grep -q 'temporary directory' "$T/stale.txt" || fail "Qwen's stale rule in a Deep Code status"
python3 -c 'import json,sys; [t]=json.load(open(sys.argv[1]))["breakdown"]; sys.exit(t["stale_projects"] != 5)' "$T/stale.json" ||
        fail "status --json: $(grep stale_projects "$T/stale.json"), not 5"
pass "Deep Code status: 5 of 6 projects stale ($b, du $stale), in Deep Code's words; the JSON says 5"

# file-history's objects by what reaches them (dc-gitobj.c), in the text and in status --json,
# against git's own walk done here: live = reachable from the branch of a session the index
# lists, a checkpoint a transcript names, HEAD or any ref not of a session; orphan-ref-only =
# reachable only from refs/heads/<id> of a session gone from the index; unreachable = the rest
command -v git >/dev/null 2>&1 || skip "git is not installed (the file-history split's judge)"
rm -rf "$T/g" && mkdir -p "$T/g" && tar xzf "$QGC_TESTDATA/deepcode/home.tar.gz" -C "$T/g"
G=$T/g/home/.deepcode
run_qgc status --root "$G" > "$T/g.txt" 2>&1 || { cat "$T/g.txt"; fail "status (split)"; }
run_qgc status --json --root "$G" > "$T/g.json" 2>&1 || { cat "$T/g.json"; fail "status --json (split)"; }
python3 - "$G" "$T/g.json" "$T/g.txt" <<'PY' || fail "the file-history split differs from git's"
import json, os, re, subprocess, sys
store, js, txt = sys.argv[1:4]
parts = {p["project_dir"]: p for p in json.load(open(js))["breakdown"][0]["file_history_by_project"]}
text = open(txt).read()
def reach(git, roots):
    if not roots: return set()
    out = subprocess.run(["git", "--git-dir", git, "rev-list", "--objects", "--ignore-missing"] + sorted(roots),
                         capture_output=True, text=True, check=True).stdout
    return {l.split()[0] for l in out.splitlines() if l}
n = 0
for code in sorted(os.listdir(f"{store}/projects")):
    pdir = f"{store}/projects/{code}"
    git = f"{pdir}/file-history/.git"
    if not os.path.isdir(git): continue
    kept = {e["id"] for e in json.load(open(f"{pdir}/sessions-index.json"))["entries"]}
    kept |= {f[:-6] for f in os.listdir(pdir) if f.endswith(".jsonl")}
    named = set()
    for f in os.listdir(pdir):
        if f.endswith(".jsonl"):
            named |= set(re.findall(r'"checkpointHash":"([0-9a-f]{40})"', open(f"{pdir}/{f}").read()))
    refs = subprocess.run(["git", "--git-dir", git, "for-each-ref", "--format=%(refname) %(objectname)"],
                          capture_output=True, text=True, check=True).stdout.split("\n")
    live_roots, orphan_roots = set(named), set()
    for l in filter(None, refs):
        name, oid = l.split()
        if name.startswith("refs/heads/") and name[11:] not in kept: orphan_roots.add(oid)
        else: live_roots.add(oid)
    head = subprocess.run(["git", "--git-dir", git, "rev-parse", "-q", "--verify", "HEAD"], capture_output=True, text=True).stdout.strip()
    if head: live_roots.add(head)
    allobj = {l.split()[0] for l in subprocess.run(["git", "--git-dir", git, "cat-file", "--batch-all-objects",
              "--batch-check"], capture_output=True, text=True, check=True).stdout.splitlines()}
    live = reach(git, live_roots) & allobj
    orphan = (reach(git, orphan_roots) & allobj) - live
    want = [len(live), len(orphan), len(allobj - live - orphan)]
    p = parts.get(code)
    got = [p[k]["objects"] for k in ("live", "orphan_ref_only", "unreachable")] if p and p["known"] else None
    if got != want:
        sys.exit(f"{code}: qgc says {got}, git {want}")
    row = [l for l in text.splitlines() if l.rstrip().endswith(" " + code)]
    if len(row) != 1 or [int(x) for x in row[0].split()[0:6:2]] != want:
        sys.exit(f"{code}: the text row {row} is not {want}")
    n += 1
if n != len(parts) or n < 5:
    sys.exit(f"{n} repositories checked, {len(parts)} in the JSON")
print(f"{n} repositories: qgc's split = git's")
PY
pass "Deep Code status: each project's checkpoint objects split as git's own walk splits them, text and JSON"

# --root tells a Deep Code store with no session yet (Deep Code made projects/<code>/ and nothing
# in it) by its name .deepcode, or by qgc's .qgc-archive/ in it: Deep Code's kinds, and no empty
# project (a Qwen orphan) found there
for d in "$T/fresh/.deepcode" "$T/fresh/.deepcode/" "$T/renamed"; do
        mkdir -p "$d/projects/-srv-new"
        printf '{}\n' > "$d/settings.json"
done
mkdir "$T/renamed/.qgc-archive"
mkdir -p "$T/qwenlike/projects/-srv-new"
for d in "$T/fresh/.deepcode" "$T/fresh/.deepcode/" "$T/renamed" "$T/qwenlike"; do
        run_qgc status --root "$d" > "$T/fresh.txt" 2>&1 || { cat "$T/fresh.txt"; fail "status --root $d"; }
        if [ "$d" = "$T/qwenlike" ]; then
                grep -q 'with its sidecars, file-history, subagents' "$T/fresh.txt" || { cat "$T/fresh.txt"; fail "$d: not Qwen's"; }
                continue
        fi
        grep -q 'settings, machine-id' "$T/fresh.txt" && grep -q ' 0 orphans ' "$T/fresh.txt" ||
                { cat "$T/fresh.txt"; fail "--root $d is not told a Deep Code store"; }
done
pass "--root: a Deep Code store with no session yet is told by its name or qgc's archive in it"
