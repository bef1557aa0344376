#!/usr/bin/env python3
"""textcheck.py PLAN.json PLAN.txt: every session of a `qgc --dry-run --json` plan has the same
verb and reason in the text plan of the same tree (the text plan is printed to a file, so its
reasons are whole on the session's line). The text plan shows short ids (a unique prefix of at
least 8 characters). Exits 1 with a message on the first difference."""
import json, re, sys

plan = json.load(open(sys.argv[1]))
lines = {}
for line in open(sys.argv[2], encoding="utf-8", errors="replace"):
    m = re.match(r"^  ([0-9A-Fa-f-]{8,36}) +(would archive|would delete|keep|skip)\s+\S+\s+\S+\s+(.*)$",
                 line.rstrip("\n"))
    if m:
        lines[m.group(1).lower()] = (m.group(2), m.group(3))
words = {"archive": "would archive", "delete": "would delete", "keep": "keep", "skip": "skip"}
n = 0
for proj in plan["projects"]:
    for s in proj["sessions"]:
        got = next((v for k, v in lines.items() if s["id"].lower().startswith(k)), None)
        if got is None:
            print(f"textcheck: {s['id']} ({s['verb']}) is not in the text plan"); sys.exit(1)
        if got[0] != words[s["verb"]] or got[1] != s["reason"]:
            print(f"textcheck: {s['id']}: text says {got[0]!r} {got[1]!r}, JSON says "
                  f"{s['verb']!r} {s['reason']!r}")
            sys.exit(1)
        n += 1
if n == 0:
    print("textcheck: no sessions"); sys.exit(1)
print(f"textcheck ok: {n} sessions agree")
