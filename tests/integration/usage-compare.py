#!/usr/bin/env python3
# usage-compare.py BEFORE.json AFTER.json USAGE_BEFORE USAGE_AFTER NAME [--allow-added ID,...]
# BEFORE/AFTER: qwen-usage.mjs output (Qwen's own loadUsageHistory) before and after a qgc run;
# USAGE_*: the raw usage_record.jsonl (or a missing path). Fails (exit 1) unless every session
# Qwen counted before is counted after with the very same record, no other session appears
# (except the --allow-added ones), the totals are equal up to those, and no session gained more
# than one line.
import json, sys

def lines(path):
    n = {}
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except FileNotFoundError:
        return n
    for l in text.splitlines():
        try:
            r = json.loads(l)
        except ValueError:
            continue
        if isinstance(r, dict) and r.get("version") == 1:
            n[r.get("sessionId")] = n.get(r.get("sessionId"), 0) + 1
    return n

b, a = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
lb, la = lines(sys.argv[3]), lines(sys.argv[4])
name = sys.argv[5]
allow = set()
if len(sys.argv) > 7 and sys.argv[6] == "--allow-added":
    allow = set(x for x in sys.argv[7].split(",") if x)
errors = []
for sid, rec in b["sessions"].items():
    if sid not in a["sessions"]:
        errors.append(f"session {sid} dropped out of Qwen's /stats")
    elif a["sessions"][sid]["line"] != rec["line"]:
        errors.append(f"session {sid} changed: {rec['line'][:120]} -> {a['sessions'][sid]['line'][:120]}")
added = [s for s in a["sessions"] if s not in b["sessions"]]
for sid in added:
    if sid not in allow:
        errors.append(f"session {sid} appeared in Qwen's /stats")
want = dict(b["totals"])
for sid in added:
    want["sessions"] += 1
    want["requests"] += a["sessions"][sid]["requests"]
    want["tokens"] += a["sessions"][sid]["tokens"]
if a["totals"] != want:
    errors.append(f"totals {a['totals']} != {want}")
for sid, n in la.items():
    if n > lb.get(sid, 0) + 1 or (sid in lb and n > lb[sid] and sid not in allow and b["from"] == "file"):
        errors.append(f"session {sid} has {n} v1 lines after the run, {lb.get(sid, 0)} before")
t0, t1 = b["totals"], a["totals"]
print(f"{name}: Qwen /stats before ({b['from']}): {t0['sessions']} sessions / {t0['requests']} requests / "
      f"{t0['tokens']} tokens; after ({a['from']}): {t1['sessions']} / {t1['requests']} / {t1['tokens']}"
      + (f"; added by salvage: {','.join(added)}" if added else ""))
for e in errors:
    print(f"  ERROR {e}")
sys.exit(1 if errors else 0)
