# workspace-lib.sh: the setup t-0444 and t-0445 share (sourced after lib.sh): the corpus tree in
# $T/home/.qwen with its project /srv/demo/scratch moved to the cwd $W, an old orphaned
# file-history/$id in G, a delete policy; q runs qgc on it, check and dry judge the JSON plan
# (the tree incomplete, or complete and the orphan deleted) and the text plan (its summary line
# for an incomplete tree, or none), real_run the real run and its run-start entry.

G="$T/home/.qwen"
make_tree home/.qwen > /dev/null
W="$T/work/scratch"
# the corpus project /srv/demo/scratch, as if it had been started in $W
move_project "$G" "$W" keep-mtimes
mkdir -p "$W"
id=0badc0de-1111-4222-8333-444455556666
mkdir -p "$G/file-history/$id"
echo data > "$G/file-history/$id/x@v1"
touch -d 2026-01-01T00:00:00Z "$G/file-history/$id/x@v1" "$G/file-history/$id"
. "$(dirname "$0")/runtime-lib.sh"
check() { # plan.json expect(incomplete|complete)
        python3 - "$1" "$2" "$id" "$W" <<'PY'
import json, sys
plan, mode, oid, w = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], sys.argv[4]
tr = plan["trees"][0]
fh = [o for o in plan.get("orphans", []) if o["kind"] == "file-history" and o["name"] == oid]
deleted = [o for o in fh if o["verb"] == "delete"]
s = [x for p in plan["projects"] for x in p["sessions"]]
assert any(x["verb"] == "delete" for x in s), "no session is deleted: the test proves nothing"
assert any(p.get("project") == w for p in plan["projects"]), "the moved project is not seen"
if mode == "incomplete":
    assert "workspace settings or .env" in tr.get("incomplete", ""), tr
    assert not deleted, deleted
else:
    assert "incomplete" not in tr, tr
    assert deleted, fh
PY
}
dry() { # name expect [stderr pattern]
        q --dry-run --json > "$T/$1.json" 2> "$T/$1.err" || { cat "$T/$1.err"; fail "dry run, $1"; }
        check "$T/$1.json" "$2" || { cat "$T/$1.err"; fail "$1: expected a $2 tree"; }
        if [ -n "${3:-}" ]; then
                grep -q -- "$3" "$T/$1.err" || { cat "$T/$1.err"; fail "$1: the dry run does not say '$3'"; }
        fi
        if [ "$2" = complete ] && grep -q "may be in a runtime directory" "$T/$1.err"; then
                cat "$T/$1.err"; fail "$1: a notice although nothing may"
        fi
        # the text plan's summary names the incomplete tree and why, and nothing else gets it
        COLUMNS=1000 q --dry-run > "$T/$1.txt" 2> /dev/null || fail "text dry run, $1"
        if [ "$2" = incomplete ]; then
                grep -qxF -- "$incomplete_line" "$T/$1.txt" ||
                        { tail -n 12 "$T/$1.txt"; fail "$1: the text plan does not say why the tree is incomplete"; }
        elif grep -q "incomplete tree" "$T/$1.txt"; then
                tail -n 12 "$T/$1.txt"; fail "$1: the text plan calls a complete tree incomplete"
        fi
        return 0
}
incomplete_line="  incomplete tree '$G': no tree-level decision (orphans, stale files, tree caps) because a project's workspace settings or .env may put its sessions in a runtime directory qgc does not see"
# real_run: a real run (action log on stderr) keeps the orphan, says why in a notice, and its
# run-start entry carries the incomplete tree and why (QGC_TREE_INCOMPLETE_DIR/QGC_TREE_INCOMPLETE)
real_run() {
        q --log-target stderr > "$T/run.out" 2>&1 || { cat "$T/run.out"; fail "real run"; }
        [ -f "$G/file-history/$id/x@v1" ] || fail "the real run deleted file-history of a session it may not see"
        grep -q "may be in a runtime directory qgc does not see" "$T/run.out" ||
                { cat "$T/run.out"; fail "the real run does not say why"; }
        grep "QGC_ACTION=run-start" "$T/run.out" > "$T/run-start" || { cat "$T/run.out"; fail "no run-start entry"; }
        grep -qF " PRIORITY=5 " "$T/run-start" &&
                grep -qF " QGC_TREE_INCOMPLETE_DIR=$G QGC_TREE_INCOMPLETE=\"a project's workspace settings or .env may put its sessions in a runtime directory qgc does not see\"" "$T/run-start" ||
                { cat "$T/run-start"; fail "the run-start entry does not name the incomplete tree and why"; }
}

dry none complete
