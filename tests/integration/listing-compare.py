#!/usr/bin/env python3
# listing-compare.py PLAN.json BEFORE.json AFTER.json NAME
# PLAN: qgc's --dry-run --json plan of the run; BEFORE/AFTER: qwen-check.mjs --json (Qwen Code's
# own SessionService listing and loading every session) before and after the real run. Fails
# (exit 1) unless every session Qwen listed before is in the plan, and after the run Qwen lists
# exactly: each kept session in its old state (active or archived), each archived one as
# archived, no deleted and no compressed one (the cold tier is invisible to Qwen); each of them
# loads, with as many messages as before.
import json, sys

plan, before, after = (json.load(open(p)) for p in sys.argv[1:4])
name = sys.argv[4]

def listed(report):
    out = {}
    for p in report["projects"]:
        for c in p["cwds"]:
            for s in c["sessions"]:
                out[s["sessionId"]] = s
    return out

b, a = listed(before), listed(after)
verbs = {s["id"]: s for p in plan["projects"] for s in p["sessions"]}
errors = []
for sid in b:
    if sid not in verbs:
        errors.append(f"session {sid}: Qwen listed it before the run, qgc's plan has no entry")
want = {}
for sid, s in verbs.items():
    if s["verb"] == "keep":
        if sid not in b and "compressed" in s:
            continue  # compressed before the run: Qwen lists it neither before nor after
        want[sid] = s["state"]
    elif s["verb"] == "archive":
        want[sid] = "archived"
    elif s["verb"] not in ("delete", "compress"):
        errors.append(f"session {sid}: unexpected verb {s['verb']}")
for sid, state in sorted(want.items()):
    got = a.get(sid)
    if got is None:
        errors.append(f"session {sid} ({verbs[sid]['verb']}): Qwen does not list it after the run")
        continue
    if got["state"] != state:
        errors.append(f"session {sid} ({verbs[sid]['verb']}): Qwen lists it {got['state']}, want {state}")
    if not got["loaded"] or not got["messages"]:
        errors.append(f"session {sid} ({verbs[sid]['verb']}): Qwen does not load it")
    elif sid in b and got["messages"] != b[sid]["messages"]:
        errors.append(f"session {sid}: {b[sid]['messages']} messages before, {got['messages']} after")
for sid in a:
    if sid not in want:
        errors.append(f"session {sid}: deleted or compressed by the plan, Qwen still lists it")
if after.get("errors"):
    errors += [f"qwen-check: {e}" for e in after["errors"]]
n = lambda verb: sum(1 for s in verbs.values() if s["verb"] == verb)
print(f"{name}: Qwen lists {len(b)} sessions before ({sum(1 for s in b.values() if s['state'] == 'archived')} "
      f"archived); plan keep {n('keep')} / archive {n('archive')} / delete {n('delete')}"
      f"{' / compress ' + str(n('compress')) if n('compress') else ''}; after: "
      f"{sum(1 for s in a.values() if s['state'] == 'active')} active + "
      f"{sum(1 for s in a.values() if s['state'] == 'archived')} archived" + ("" if errors else ", all loaded"))
for e in errors:
    print(f"  ERROR {e}")
sys.exit(1 if errors else 0)
