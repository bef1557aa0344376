#!/bin/sh
# t-0447-usage-record-workspace: a project whose workspace settings named another runtime root
# from its first session never wrote a transcript under the tree's root, so no scanned
# transcript names its cwd; its sessions' G/file-history/<id> look orphaned. Qwen writes each
# ended session's line to G/usage_record.jsonl with its "project" (cwd): for a G-level orphan
# candidate (file-history/<id>, plans/<id>.md) that usage_record.jsonl places in a project
# whose files may move its runtime root, the tree is incomplete and nothing is reclaimed.
# Controls: no line for the id, a line naming a project without such files: reclaimed.
. "$(dirname "$0")/lib.sh"

G="$T/home/.qwen"
make_tree home/.qwen > /dev/null
W="$T/work/elsewhere"
mkdir -p "$W/.qwen"
echo "{\"advanced\":{\"runtimeOutputDir\":\"$T/ws-rt\"}}" > "$W/.qwen/settings.json"
mkdir -p "$T/work/plain"
id=0badc0de-1111-4222-8333-444455556666
mkdir -p "$G/file-history/$id"
echo data > "$G/file-history/$id/x@v1"
touch -d 2026-01-01T00:00:00Z "$G/file-history/$id/x@v1" "$G/file-history/$id"
cp "$G/usage_record.jsonl" "$T/usage.orig"
. "$(dirname "$0")/runtime-lib.sh"
# usage_line PROJECT: the tree's usage records plus one line of session $id in PROJECT
usage_line() {
        cp "$T/usage.orig" "$G/usage_record.jsonl"
        printf '{"version":1,"sessionId":"%s","timestamp":1796010734910,"startTime":1796010731673,"project":"%s","durationMs":1,"totalLatencyMs":1,"models":{}}\n' \
                "$id" "$1" >> "$G/usage_record.jsonl"
}
dry() { # name expect(incomplete|complete)
        q --dry-run --json > "$T/$1.json" 2> "$T/$1.err" || { cat "$T/$1.err"; fail "dry run, $1"; }
        python3 - "$T/$1.json" "$2" "$id" <<'PY' || { cat "$T/$1.err"; fail "$1: expected a $2 tree"; }
import json, sys
plan, mode, oid = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
tr = plan["trees"][0]
deleted = [o for o in plan.get("orphans", []) if o["kind"] == "file-history" and o["name"] == oid and o["verb"] == "delete"]
if mode == "incomplete":
    assert "workspace settings or .env" in tr.get("incomplete", ""), tr
    assert not deleted, deleted
else:
    assert "incomplete" not in tr, tr
    assert deleted, "the orphan is not reclaimed"
PY
}

dry no-line complete
usage_line "$T/work/plain"
dry plain-project complete
usage_line "$W"
dry workspace incomplete
# after a line longer than the 1 MiB window qgc reads in, and one with an escape
cp "$T/usage.orig" "$G/usage_record.jsonl"
python3 - "$G/usage_record.jsonl" "$id" "$W" <<'PY'
import sys
f, oid, w = sys.argv[1:4]
with open(f, "a") as o:
    o.write('{"sessionId":"%s","project":"/x","pad":"%s"}\n' % (oid, "y" * (3 << 19)))
    o.write('{"sessionId":"%s","project":"/x\\u0041"}\n' % oid)
    o.write('{"sessionId":"%s","project":"%s"}\n' % (oid, w))
PY
dry workspace-after-long incomplete
grep -q "sessions of '$W' (named in usage_record.jsonl) may be in a runtime directory qgc does not see: its workspace settings '$W/.qwen/settings.json' set advanced.runtimeOutputDir" "$T/workspace.err" ||
        { cat "$T/workspace.err"; fail "the dry run does not name the project"; }
# a plan (G/plans/<id>.md) is such a candidate too
rm -rf "$G/file-history/$id"
mkdir -p "$G/plans"
echo plan > "$G/plans/$id.md"
q --dry-run --json > "$T/plan.json" 2> "$T/plan.err" || { cat "$T/plan.err"; fail "dry run, plan"; }
grep -q "(named in usage_record.jsonl) may be" "$T/plan.err" || { cat "$T/plan.err"; fail "a plan's session is not looked up"; }
mkdir -p "$G/file-history/$id"
echo data > "$G/file-history/$id/x@v1"
touch -d 2026-01-01T00:00:00Z "$G/file-history/$id/x@v1" "$G/file-history/$id"
q > "$T/run.out" 2>&1 || { cat "$T/run.out"; fail "real run"; }
[ -f "$G/file-history/$id/x@v1" ] || fail "the real run deleted file-history of a session in another runtime root"
pass "usage_record.jsonl's project of an orphan candidate is looked at: a workspace that may move its root keeps the candidate"
finish
