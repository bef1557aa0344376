#!/bin/sh
# t-0442-relative-runtime-dir: a relative advanced.runtimeOutputDir is resolved by Qwen against
# each project's cwd (<cwd>/<value>/projects/...), so those transcripts are not under G and qgc
# does not see them. The tree is then incomplete: no G/file-history/<id> is called an orphan
# (its session may live in a project's runtime root), the plan (JSON and text) and the real run's
# run-start entry say why, and the sessions qgc does see under G are handled as usual. An
# absolute value (the control) does reclaim it.
. "$(dirname "$0")/lib.sh"

G="$T/home/.qwen"
make_tree home/.qwen > /dev/null
id=0badc0de-1111-4222-8333-444455556666
mkdir -p "$G/file-history/$id"
echo data > "$G/file-history/$id/x@v1"
touch -d 2026-01-01T00:00:00Z "$G/file-history/$id/x@v1" "$G/file-history/$id"
# where Qwen put that session: the project's own runtime root
mkdir -p "$T/proj/.rt/projects/x/chats"
echo '{}' > "$T/proj/.rt/projects/x/chats/$id.jsonl"
. "$(dirname "$0")/runtime-lib.sh"
check() { # plan.json expect(incomplete|complete)
        python3 - "$1" "$2" "$id" <<'PY'
import json, sys
plan, mode, oid = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
tr = plan["trees"][0]
fh = [o for o in plan.get("orphans", []) if o["kind"] == "file-history" and o["name"] == oid]
deleted = [o for o in fh if o["verb"] == "delete"]
s = [x for p in plan["projects"] for x in p["sessions"]]
assert any(x["verb"] == "delete" for x in s), "no session is deleted: the test proves nothing"
if mode == "incomplete":
    assert "relative advanced.runtimeOutputDir" in tr.get("incomplete", ""), tr
    assert not deleted, deleted
else:
    assert "incomplete" not in tr, tr
    assert deleted, fh
PY
}

# the control: an absolute value (G itself) reclaims the orphan, so the test can fail
echo "{\"advanced\":{\"runtimeOutputDir\":\"$G\"}}" > "$G/settings.json"
q --dry-run --json > "$T/abs.json" 2> "$T/abs.err" || { cat "$T/abs.err"; fail "dry run, absolute"; }
check "$T/abs.json" complete || fail "an absolute runtimeOutputDir: the orphan is not reclaimed"
COLUMNS=1000 q --dry-run > "$T/abs.txt" 2> /dev/null || fail "text dry run, absolute"
grep -q "incomplete tree" "$T/abs.txt" && { tail -n 12 "$T/abs.txt"; fail "the text plan calls a complete tree incomplete"; }

echo '{"advanced":{"runtimeOutputDir":".rt"}}' > "$G/settings.json"
q --dry-run --json > "$T/rel.json" 2> "$T/rel.err" || { cat "$T/rel.err"; fail "dry run, relative"; }
check "$T/rel.json" incomplete || fail "a relative runtimeOutputDir: file-history reclaimed as an orphan"
grep -q "orphans are not decided in this run: .*relative advanced.runtimeOutputDir" "$T/rel.err" ||
        { cat "$T/rel.err"; fail "the dry run does not say why orphans are not decided"; }
# the text plan's summary names the tree, that no tree-level decision was made, and why
why="a relative advanced.runtimeOutputDir puts runtime roots in each project, which qgc does not see"
COLUMNS=1000 q --dry-run > "$T/rel.txt" 2> /dev/null || fail "text dry run, relative"
grep -qxF "  incomplete tree '$G': no tree-level decision (orphans, stale files, tree caps) because $why" "$T/rel.txt" ||
        { tail -n 12 "$T/rel.txt"; fail "the text plan does not say why the tree is incomplete"; }
q --log-target stderr > "$T/run.out" 2>&1 || { cat "$T/run.out"; fail "real run, relative"; }
[ -f "$G/file-history/$id/x@v1" ] || fail "the real run deleted file-history of a session it does not see"
# ... and so does the run-start entry of the action log, as fields an admin can filter on
grep "QGC_ACTION=run-start" "$T/run.out" > "$T/run-start" || { cat "$T/run.out"; fail "no run-start entry"; }
grep -qF " QGC_TREE_INCOMPLETE_DIR=$G QGC_TREE_INCOMPLETE=\"$why\"" "$T/run-start" &&
        grep -qF "1 incomplete tree: no orphan, stale file or tree cap decided there" "$T/run-start" ||
        { cat "$T/run-start"; fail "the run-start entry does not name the incomplete tree and why"; }
pass "a relative runtimeOutputDir: the tree is incomplete, no orphan is reclaimed, the reason is said"
finish
