#!/bin/sh
# t-0721-deepcode-plan: the plan is the run for a store qgc does not change yet. On the Deep Code
# corpus (tests/data/deepcode/home.tar.gz, a ~/.deepcode with 58 sessions) a policy that deletes
# plans every selected session as a skip (rule "store", the store's read-only reason) in the
# text, the JSON plan and the journal; the dry run and the run agree; the run exits 0 with the
# "policy not met" warning, and leaves the tree byte-identical (no .qgc.lock either). The journal
# names each session by its own path in the store (StoreOps.session_path), where qgc show reads it.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"

tar xzf "$QGC_TESTDATA/deepcode/home.tar.gz" -C "$T"
find "$T/home" -exec touch -h -d 2026-06-01 {} +
DC=$T/home/.deepcode
NOW=2027-02-01T00:00:00Z
WHY='qgc does not change Deep Code stores yet (read only: scan, status, plan)'
printf 'defaults = {\n  max-age = "1d";\n  action = "delete";\n};\n' > "$T/p.conf"

reset_atimes "$T/home"
snapshot "$T/home" "$T/before"
run_qgc -c "$T/p.conf" --root "$DC" --dry-run --now "$NOW" > "$T/dry.txt" 2>&1 ||
        { cat "$T/dry.txt"; fail "dry run"; }
run_qgc -c "$T/p.conf" --root "$DC" --dry-run --json --now "$NOW" > "$T/plan.json" ||
        fail "dry run --json"
grep -q '^  would delete       0 sessions' "$T/dry.txt" || { cat "$T/dry.txt"; fail "the dry run would delete"; }
grep -q "^  skip              53 sessions" "$T/dry.txt" || { cat "$T/dry.txt"; fail "53 skips planned"; }
grep -q "warning: policy not met: 53 sessions (1020K) not changed: $WHY (store)" "$T/dry.txt" ||
        { cat "$T/dry.txt"; fail "the dry run's warning"; }
grep -q "skip .*$WHY (store) (would delete: idle 57d > max-age 1d)" "$T/dry.txt" ||
        fail "a skip's reason"
python3 - "$T/plan.json" "$WHY" <<'PY' > "$T/planned" || fail "the JSON plan"
import json, sys
plan, why = json.load(open(sys.argv[1])), sys.argv[2]
n = 0
for s in (s for p in plan["projects"] for s in p["sessions"]):
    assert s["verb"] in ("keep", "skip"), s
    if s["verb"] == "skip":
        assert s["rule"] == "store" and s["reason"].startswith(why + " (store) (would delete: "), s
        n += 1
for o in plan.get("orphans", []):
    assert o["verb"] in ("keep", "skip"), o
print(n)
PY
[ "$(cat "$T/planned")" = 53 ] || fail "the JSON plan skips $(cat "$T/planned"), not 53"

rc=0
run_qgc -c "$T/p.conf" --root "$DC" --now "$NOW" --log-file "$T/actions.log" > "$T/run.txt" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/run.txt"; fail "the run exits $rc"; }
grep -q '^qgc: archived 0 (0B moved to the archive), deleted 0, orphans reclaimed 0, skipped 53, failed 0; freed 0B$' \
        "$T/run.txt" || { cat "$T/run.txt"; fail "the run's summary"; }
grep -q "warning: policy not met: 53 sessions (1020K) not changed: $WHY (store)" "$T/run.txt" ||
        fail "the run's warning"
[ "$(grep -c 'QGC_ACTION=skipped .*QGC_RULE=store' "$T/actions.log")" = 53 ] ||
        { cat "$T/actions.log"; fail "53 skips journalled"; }
# the journal names each session's own file (projects/<code>/<id>.jsonl), not Qwen's chats/<id>.jsonl
python3 - "$T/actions.log" "$DC" <<'PY' || fail "the journal's paths"
import os, re, sys
log, dc = sys.argv[1], sys.argv[2]
paths = [m.group(1) or m.group(2) for m in
         re.finditer(r' QGC_PATH=(?:"((?:[^"\\]|\\.)*)"|(\S+))', open(log, encoding="utf-8").read())]
assert len(paths) == 53, len(paths)
for f in paths:
    assert f.startswith(dc + "/projects/") and "/chats/" not in f, f
    assert os.path.isfile(f), f
PY
! grep -q 'QGC_ACTION=\(deleted\|archived\|failed\)' "$T/actions.log" || fail "the run acted"
[ ! -e "$DC/.qgc.lock" ] || fail "the run left a lock in the read-only store"
snapshot "$T/home" "$T/after"
diff "$T/before" "$T/after" || fail "the run changed the tree"
# qgc show reads a session where its store keeps it
F=$(find "$DC/projects" -name '*.jsonl' | head -1)
run_qgc --root "$DC" show "$(basename "$F" .jsonl)" > "$T/shown" || fail "qgc show"
cmp "$F" "$T/shown" || fail "qgc show is not the transcript"
pass "Deep Code: 53 planned skips (store), the run skips the same 53 and changes nothing"
