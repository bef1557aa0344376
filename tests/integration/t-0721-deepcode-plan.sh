#!/bin/sh
# t-0721-deepcode-plan: the plan is the run in a Deep Code store. On the Deep Code corpus
# (tests/data/deepcode/home.tar.gz, a ~/.deepcode with 58 sessions) a policy that deletes plans
# 28 deletions (25 more held back by max-deletions-percent in the 50-session project, 5 kept by
# keep-latest) in the text and the JSON plan; the run takes the tree lock, deletes exactly those
# 28 (journalled with their own paths, projects/<code>/<id>.jsonl, now gone) and skips the 25.
# A policy that archives plans the 53 selected sessions as archives (qgc's archive of Deep Code,
# dc-archive.h), and its run moves exactly those: each out of its index, its transcript byte for
# byte and its entry in .qgc-archive/<code>/, journalled with that path.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"

tar xzf "$QGC_TESTDATA/deepcode/home.tar.gz" -C "$T"
find "$T/home" -exec touch -h -d 2026-06-01 {} +
DC=$T/home/.deepcode
NOW=2027-02-01T00:00:00Z
# orphans and compaction off: their reclaim is judged in t-0720 and test_dc_reclaim; here the
# sessions alone
printf 'defaults = {\n  max-age = "1d";\n  action = "archive";\n  orphan-min-age = "off";\n  compact-min-idle = "off";\n};\n' > "$T/a.conf"
printf 'defaults = {\n  max-age = "1d";\n  action = "delete";\n  orphan-min-age = "off";\n  compact-min-idle = "off";\n};\n' > "$T/d.conf"

# archive: the 53 planned, the same 53 archived (on a copy: the delete below runs on the corpus)
mkdir "$T/a"
tar xzf "$QGC_TESTDATA/deepcode/home.tar.gz" -C "$T/a"
find "$T/a/home" -exec touch -h -d 2026-06-01 {} +
A=$T/a/home/.deepcode
run_qgc -c "$T/a.conf" --root "$A" --dry-run --now "$NOW" > "$T/dry.txt" 2>&1 ||
        { cat "$T/dry.txt"; fail "dry run (archive)"; }
grep -q "^  would archive     53 sessions    1020K$" "$T/dry.txt" ||
        { cat "$T/dry.txt"; fail "53 archives planned"; }
grep -q "would archive .*idle 57d > max-age 1d" "$T/dry.txt" || fail "an archive's reason"
! grep -q "(store)" "$T/dry.txt" || fail "an archive planned as a skip of the store"
rc=0
run_qgc -c "$T/a.conf" --root "$A" --now "$NOW" --log-file "$T/archive.log" > "$T/run.txt" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/run.txt"; fail "the archive run exits $rc"; }
grep -q '^qgc: archived 53 (1020K moved to the archive), deleted 0, orphans reclaimed 0, skipped 0, failed 0; freed 0B$' \
        "$T/run.txt" || { cat "$T/run.txt"; fail "the archive run's summary"; }
[ -e "$A/.qgc.lock" ] || fail "a real run in a Deep Code store takes the tree lock"
[ ! -e "$A/.qgc" ] || fail "the run left its pending-archive markers"
python3 - "$T/archive.log" "$A" "$DC" <<'PY' || fail "the archived sessions"
import json, os, re, sys
log, a, orig = sys.argv[1], sys.argv[2], sys.argv[3]
n = 0
for line in open(log, encoding="utf-8"):
    if "QGC_ACTION=archived" not in line:
        continue
    m = re.search(r' QGC_PATH=(?:"((?:[^"\\]|\\.)*)"|(\S+))', line)
    f = m.group(1) or m.group(2)
    sid = re.search(r' QGC_SESSION=(\S+)', line).group(1)
    code = os.path.basename(os.path.dirname(f))
    assert f == os.path.join(a, ".qgc-archive", code, sid + ".jsonl"), f
    was = os.path.join(orig, "projects", code, sid + ".jsonl")
    assert open(f, "rb").read() == open(was, "rb").read(), f
    assert not os.path.exists(os.path.join(a, "projects", code, sid + ".jsonl")), sid
    entries = json.load(open(os.path.join(orig, "projects", code, "sessions-index.json")))["entries"]
    entry = [e for e in entries if e["id"] == sid][0]
    assert json.load(open(os.path.join(a, ".qgc-archive", code, sid + ".entry.json"))) == entry, sid
    ids = [e["id"] for e in json.load(open(os.path.join(a, "projects", code, "sessions-index.json")))["entries"]]
    assert sid not in ids, sid
    n += 1
assert n == 53, n
PY

# delete: 28 planned, the same 28 done
run_qgc -c "$T/d.conf" --root "$DC" --dry-run --now "$NOW" > "$T/dry.txt" 2>&1 ||
        { cat "$T/dry.txt"; fail "dry run (delete)"; }
run_qgc -c "$T/d.conf" --root "$DC" --dry-run --json --now "$NOW" > "$T/plan.json" ||
        fail "dry run --json"
grep -q '^  would delete      28 sessions     555K$' "$T/dry.txt" || { cat "$T/dry.txt"; fail "28 deletions planned"; }
grep -q '^  skip              25 sessions     464K$' "$T/dry.txt" || { cat "$T/dry.txt"; fail "25 skips planned"; }
python3 - "$T/plan.json" <<'PY' > "$T/planned" || fail "the JSON plan"
import json, sys
plan = json.load(open(sys.argv[1]))
for s in (s for p in plan["projects"] for s in p["sessions"]):
    assert s["verb"] in ("keep", "skip", "delete"), s
    assert s.get("rule") != "store", s
    if s["verb"] == "delete":
        print(s["id"])
PY
[ "$(wc -l < "$T/planned")" = 28 ] || fail "the JSON plan deletes $(wc -l < "$T/planned"), not 28"
rc=0
before=$(du -sB1 "$DC" | cut -f1)
run_qgc -c "$T/d.conf" --root "$DC" --now "$NOW" --log-file "$T/actions.log" > "$T/run.txt" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/run.txt"; fail "the delete run exits $rc"; }
# freed: what the deletes freed (transcript blocks, images, branch and reflog), not the plan's
# 555K of transcript bytes; short of du by the indexes' shrinking only
grep -q '^qgc: archived 0 (0B moved to the archive), deleted 28, orphans reclaimed 0, skipped 25, failed 0; freed 824K$' \
        "$T/run.txt" || { cat "$T/run.txt"; fail "the delete run's summary"; }
du_freed=$((before - $(du -sB1 "$DC" | cut -f1)))
freed=$(sed -n 's/.* QGC_ACTION=run-summary .*QGC_FREED_BYTES=\([0-9]*\).*/\1/p' "$T/actions.log")
[ "$freed" -le "$du_freed" ] && [ $((du_freed - freed)) -le $((28 * 1024 + 5 * 8192)) ] ||
        fail "the run says $freed bytes freed, du $du_freed"
grep 'QGC_ACTION=deleted' "$T/actions.log" | sed 's/.* QGC_SESSION=\([^ ]*\) .*/\1/' | sort > "$T/done"
sort "$T/planned" | cmp - "$T/done" || fail "the run did not delete what the plan said"
[ "$(grep -c 'QGC_ACTION=skipped .*held back by max-deletions-percent' "$T/actions.log")" = 25 ] ||
        { cat "$T/actions.log"; fail "25 held back journalled"; }
# each deleted session journalled with its own file (projects/<code>/<id>.jsonl), now gone with
# its index entry, images, branch and reflog
python3 - "$T/actions.log" "$DC" <<'PY' || fail "the deleted sessions"
import json, os, re, sys
log, dc = sys.argv[1], sys.argv[2]
n = 0
for line in open(log, encoding="utf-8"):
    if "QGC_ACTION=deleted" not in line:
        continue
    m = re.search(r' QGC_PATH=(?:"((?:[^"\\]|\\.)*)"|(\S+))', line)
    f = m.group(1) or m.group(2)
    sid = re.search(r' QGC_SESSION=(\S+)', line).group(1)
    proj = os.path.dirname(f)
    assert f == os.path.join(proj, sid + ".jsonl") and proj.startswith(dc + "/projects/"), f
    assert not os.path.exists(f), f
    assert not os.path.exists(os.path.join(proj, "images", sid)), sid
    for ref in ("refs/heads/", "logs/refs/heads/"):
        assert not os.path.exists(os.path.join(proj, "file-history/.git", ref + sid)), (ref, sid)
    ids = [e["id"] for e in json.load(open(os.path.join(proj, "sessions-index.json")))["entries"]]
    assert sid not in ids, sid
    n += 1
assert n == 28, n
PY
[ ! -e "$DC/.qgc" ] || fail "the run left its pending-delete markers"
# qgc show reads a kept session where its store keeps it
F=$(find "$DC/projects" -name '*.jsonl' | head -1)
run_qgc --root "$DC" show "$(basename "$F" .jsonl)" > "$T/shown" || fail "qgc show"
cmp "$F" "$T/shown" || fail "qgc show is not the transcript"
pass "Deep Code: archive: 53 planned, the same 53 archived; delete: 28 planned, the same 28 deleted"
