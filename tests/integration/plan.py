#!/usr/bin/env python3
"""plan.py PLAN.json CHECK...: assertions on a `qgc --dry-run --json` plan (doc/plan-schema.md).
CHECK is ID=VERB or ID=VERB~REGEX (the reason must match REGEX), or count:VERB=N.
Exits 1 with a message on the first failed check."""
import json, re, sys

plan = json.load(open(sys.argv[1]))
sessions = {}
for proj in plan["projects"]:
    for s in proj["sessions"]:
        key = s["id"].lower()
        if key in sessions:
            print(f"duplicate session {key} in the plan"); sys.exit(1)
        sessions[key] = s
for o in plan.get("orphans", []):
    sessions.setdefault("orphan:" + o.get("name", "?").lower(), o)

def fail(msg):
    print("plan check failed:", msg)
    sys.exit(1)

for check in sys.argv[2:]:
    if check.startswith("count:"):
        verb, n = check[6:].split("=")
        got = sum(1 for s in sessions.values() if s["verb"] == verb)
        if got != int(n):
            fail(f"{got} sessions with verb {verb}, expected {n}")
        continue
    ident, want = check.split("=", 1)
    regex = None
    if "~" in want:
        want, regex = want.split("~", 1)
    s = sessions.get(ident.lower())
    if s is None:
        fail(f"{ident} not in the plan")
    if s["verb"] != want:
        fail(f"{ident}: verb {s['verb']} ({s.get('reason')}), expected {want}")
    if regex and not re.search(regex, s.get("reason", "")):
        fail(f"{ident}: reason {s.get('reason')!r} does not match /{regex}/")
print(f"plan ok: {len(sys.argv) - 2} checks on {len(sessions)} entries")
