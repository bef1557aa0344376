#!/bin/sh
# t-0440-qwen-system-settings: the runtime root comes from Qwen's merged settings, not only from
# ~/.qwen/settings.json (settings.ts loadSettings()). An admin's advanced.runtimeOutputDir in the
# system settings file (QWEN_CODE_SYSTEM_SETTINGS_PATH, as Qwen names it; default
# /etc/qwen-code/settings.json) moves the runtime root: qgc finds the sessions there and keeps
# the one with a live runtime claim. The system file beats the user's; comments and $VAR are
# read as Qwen reads them; a system file Qwen could not read leaves the root unknown, and then
# nothing is done.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/home/.qwen" "$T/etc"
rt=$(make_tree rt)
live=6dcfb8c0-951c-475b-9ca1-0d8837bead38
claim="$rt/projects/-srv-demo-my-notes/chats/$live.runtime.json"
# a live claim: this shell's pid, this host (Qwen's rule)
python3 - "$claim" "$$" <<'PY'
import json, os, sys
c = json.load(open(sys.argv[1]))
c["hostname"], c["pid"] = os.uname().nodename, int(sys.argv[2])
open(sys.argv[1], "w").write(json.dumps(c))
PY
touch -h -d 2026-11-01T00:00:00Z "$claim"
cat > "$T/delete.conf" <<'CONF'
defaults = { action = "delete"; max-age = "2h"; min-age = "1h"; keep-latest = 0; min-idle = "1h";
             max-deletions = "off"; };
CONF
cat > "$T/etc/settings.json" <<JSON
// the admin moves every user's runtime output
{
  /* shared scratch */ "advanced": { "runtimeOutputDir": "$rt" } // here
}
JSON
# the user's own setting, which the system file overrides
echo '{"advanced":{"runtimeOutputDir":"/nonexistent/user-rt"}}' > "$T/home/.qwen/settings.json"

q() {
        HOME="$T/home" QWEN_HOME= QWEN_RUNTIME_DIR= QWEN_CODE_SYSTEM_DEFAULTS_PATH= \
                QWEN_CODE_SYSTEM_SETTINGS_PATH="$T/etc/settings.json" run_qgc -c "$T/delete.conf" "$@"
}

q --dry-run --json > "$T/plan.json" || fail "dry run with the system settings"
python3 - "$T/plan.json" "$rt" "$live" <<'PY' || fail "the plan does not see the runtime root of the system settings"
import json, sys
plan, rt, live = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
assert plan["trees"][0]["runtime_dir"] == rt, plan["trees"]
s = {x["id"]: x for p in plan["projects"] for x in p["sessions"]}
assert live in s, sorted(s)
assert s[live]["verb"] == "skip" and "live" in s[live]["protections"], s[live]
assert any(x["verb"] == "delete" for x in s.values()), "nothing to delete: the test proves nothing"
PY
pass "the system settings' runtimeOutputDir is the runtime root; the live session is kept"

q > "$T/run.out" 2>&1 || { cat "$T/run.out"; fail "real run with the system settings"; }
[ -f "$rt/projects/-srv-demo-my-notes/chats/$live.jsonl" ] || fail "the session with a live claim was deleted"
n=$(ls "$rt"/projects/*/chats/*.jsonl 2>/dev/null | wc -l)
[ "$n" -lt "$(ls "$QGC_TESTDATA"/corpus/tree/projects/*/chats/*.jsonl | wc -l)" ] ||
        fail "the real run deleted nothing in the runtime root: the test proves nothing"
pass "a real run deletes in the runtime root and keeps the live session"

# $VAR resolves against the environment of the user's own run
sed -i "s|\"$rt\"|\"\${QGC_T0440_BASE}/rt\"|" "$T/etc/settings.json"
grep -q 'QGC_T0440_BASE' "$T/etc/settings.json" || fail "the test did not rewrite the setting"
QGC_T0440_BASE="$T" q --dry-run --json > "$T/env.json" || fail "dry run with \$VAR"
python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["trees"][0]; assert t["runtime_dir"] == sys.argv[2], t' \
        "$T/env.json" "$rt" || fail "\${VAR} in the system setting not resolved"
# ... and a variable qgc does not have is not guessed: nothing is done
snapshot "$rt" "$T/before"
if q > "$T/unset.out" 2>&1; then cat "$T/unset.out"; fail "an unknown variable: the run went on"; fi
grep -q "names an environment variable that is not set here" "$T/unset.out" ||
        { cat "$T/unset.out"; fail "no reason for the unknown variable"; }
pass "\${VAR} resolves from qgc's environment; an unset one stops the run"

# a system file that does not parse (a trailing comma): older Qwen refuses to start, newer Qwen
# drops that file's settings; either way the runtime root of running sessions is not known
printf '{ "advanced": { "runtimeOutputDir": "%s", } }\n' "$rt" > "$T/etc/settings.json"
if q > "$T/bad.out" 2>&1; then cat "$T/bad.out"; fail "an unparsable system settings file: the run went on"; fi
grep -q "system settings file .* cannot be used as Qwen reads it" "$T/bad.out" ||
        { cat "$T/bad.out"; fail "no reason for the unparsable system settings file"; }
snapshot "$rt" "$T/after"
diff "$T/before" "$T/after" > /dev/null || fail "the runtime root changed although it is not known"
pass "an unparsable system settings file: nothing is done, the reason is said"
finish
