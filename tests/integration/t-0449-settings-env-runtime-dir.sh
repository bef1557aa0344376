#!/bin/sh
# t-0449-settings-env-runtime-dir: Qwen Code 0.15.6 applies the settings' env.QWEN_RUNTIME_DIR
# (its loadEnvironment(): a string of the merged "env" becomes the variable when the process
# lacks it), so the sessions it started are in that root while their plans/<id>.md stay in G;
# 0.15.10 and later skip the variable there (PROJECT_ENV_HARDCODED_EXCLUSIONS), as 0.24.4 shows.
# The real 0.15.6 (npm) is the judge of where the transcript lands; qgc must then call the tree
# incomplete (no orphan plan of that session reclaimed, the real run keeps it), and stay
# complete where the value names the tree's own root or the variable is in the environment.
# Needs node and npm (SKIP).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/qwen-npm.sh" # SKIP without node/npm; NPMDIR has 0.24.4
# 0.15.6 runs on the system's node (as the qwen() below runs it)
qwen_old 0.15.6 node --ignore-scripts --omit=optional || judge_missing "Qwen Code 0.15.6" "$QWEN_WHY"

G="$T/home/.qwen"
P="$T/work/p"
RT="$T/rt156"
mkdir -p "$G" "$P"
cat > "$T/delete.conf" <<'CONF'
defaults = { action = "delete"; max-age = "2h"; min-age = "1h"; keep-latest = 0; min-idle = "1h";
             max-deletions = "off"; debug-plans-min-age = "1d"; };
CONF

# qwen JS NAME [VAR=VALUE...]: one headless prompt of the Qwen CLI at JS, started in $P with the
# home $T/home; no model service (loopback port 9, every other connection refused by
# net-guard.cjs): the prompt is recorded, then the request fails. Prints the transcript's path.
qwen() {
        js=$1 name=$2
        shift 2
        touch "$T/$name.stamp"
        (cd "$P" && env -i PATH="$PATH" HOME="$T/home" OPENAI_API_KEY=sk-none \
                OPENAI_BASE_URL=http://127.0.0.1:9/v1 OPENAI_MODEL=none NO_COLOR=1 \
                QWEN_CODE_SYSTEM_SETTINGS_PATH="$T/no-system.json" \
                NODE_OPTIONS="--require $NPMDIR/net-guard.cjs" "$@" \
                timeout 120 node "$js" "hello" --approval-mode yolo) \
                < /dev/null > "$T/$name.qout" 2> "$T/$name.qerr" || true
        find "$T" -path '*/chats/*.jsonl' -newer "$T/$name.stamp" > "$T/$name.found"
        [ "$(wc -l < "$T/$name.found")" = 1 ] ||
                { cat "$T/$name.qerr" "$T/$name.found"; fail "$name: Qwen wrote no single transcript"; }
        cat "$T/$name.found"
}
Q156="$QWEN_OLD_PKG/cli.js"

# the plan of a session (plans/<id>.md in G, as 0.15.6's plan mode leaves it), old enough
plan_of() {
        id=$(basename "$1" .jsonl)
        mkdir -p "$G/plans"
        echo "# plan" > "$G/plans/$id.md"
        touch -d 2026-01-01T00:00:00Z "$G/plans/$id.md"
        echo "$id"
}

# check NAME ID complete|incomplete [VAR=VALUE...]: qgc's dry run (the environment as Qwen's)
check() {
        name=$1 id=$2 want=$3
        shift 3
        env HOME="$T/home" QWEN_HOME= QWEN_RUNTIME_DIR= QWEN_CODE_SYSTEM_DEFAULTS_PATH= \
                QWEN_CODE_SYSTEM_SETTINGS_PATH="$T/no-system.json" "$@" \
                "$QGC" -c "$T/delete.conf" --now 2040-01-01T00:00:00Z --dry-run --json \
                > "$T/$name.json" 2> "$T/$name.err" || { cat "$T/$name.err"; fail "$name: qgc dry run"; }
        python3 - "$T/$name.json" "$id" "$want" <<'PY' || { cat "$T/$name.err"; fail "$name: expected a $want tree"; }
import json, sys
plan, oid, want = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
tr = plan["trees"][0]
pl = [o for o in plan.get("orphans", []) if o["kind"] == "plan" and o["name"].startswith(oid)]
if want == "incomplete":
    assert "env.QWEN_RUNTIME_DIR" in tr.get("incomplete", ""), tr
    assert not [o for o in pl if o["verb"] == "delete"], pl
else:
    assert "incomplete" not in tr, tr
    assert [o for o in pl if o["verb"] == "delete"], ("the orphan plan is not reclaimed", pl)
PY
        # the text plan's summary says it too, and only for an incomplete tree
        env HOME="$T/home" QWEN_HOME= QWEN_RUNTIME_DIR= QWEN_CODE_SYSTEM_DEFAULTS_PATH= \
                QWEN_CODE_SYSTEM_SETTINGS_PATH="$T/no-system.json" COLUMNS=1000 "$@" \
                "$QGC" -c "$T/delete.conf" --now 2040-01-01T00:00:00Z --dry-run \
                > "$T/$name.txt" 2> /dev/null || fail "$name: qgc text dry run"
        if grep -qx "  incomplete tree '.*': no tree-level decision (orphans, stale files, tree caps) because env.QWEN_RUNTIME_DIR in Qwen's settings put the sessions of Qwen 0.15.6 in a runtime directory qgc does not see" "$T/$name.txt"; then
                [ "$want" = incomplete ] || { tail -n 12 "$T/$name.txt"; fail "$name: the text plan calls a complete tree incomplete"; }
        else
                [ "$want" = complete ] || { tail -n 12 "$T/$name.txt"; fail "$name: the text plan does not say why the tree is incomplete"; }
        fi
}

# 1. the user settings' env.QWEN_RUNTIME_DIR: 0.15.6 puts the transcript in that root
echo "{\"env\":{\"QWEN_RUNTIME_DIR\":\"$RT\"}}" > "$G/settings.json"
f=$(qwen "$Q156" user-env)
case $f in "$RT/projects/"*) ;; *) fail "Qwen 0.15.6 put the transcript in $f, not under $RT" ;; esac
id=$(plan_of "$f")
check user-env "$id" incomplete
grep -q "env.QWEN_RUNTIME_DIR in the user settings file '$G/settings.json'" "$T/user-env.err" ||
        { cat "$T/user-env.err"; fail "the dry run does not name the file"; }
# the real run keeps the plan of the session it does not see
(HOME="$T/home" QWEN_HOME= QWEN_RUNTIME_DIR= QWEN_CODE_SYSTEM_DEFAULTS_PATH= \
        QWEN_CODE_SYSTEM_SETTINGS_PATH="$T/no-system.json" &&
        export HOME QWEN_HOME QWEN_RUNTIME_DIR QWEN_CODE_SYSTEM_DEFAULTS_PATH \
                QWEN_CODE_SYSTEM_SETTINGS_PATH &&
        run_qgc -c "$T/delete.conf" --now 2040-01-01T00:00:00Z --log-target stderr) > "$T/run.out" 2>&1 ||
        { cat "$T/run.out"; fail "real run"; }
grep -q "env.QWEN_RUNTIME_DIR in the user settings file" "$T/run.out" ||
        { cat "$T/run.out"; fail "the real run does not say why"; }
grep "QGC_ACTION=run-start" "$T/run.out" | grep -qF "QGC_TREE_INCOMPLETE=\"env.QWEN_RUNTIME_DIR in Qwen's settings" ||
        { cat "$T/run.out"; fail "the run-start entry does not say why the tree is incomplete"; }
[ -f "$G/plans/$id.md" ] || fail "the real run deleted the plan of a session in $RT"

# 2. Qwen 0.24.4 ignores the same setting (the versions differ: qgc takes the conservative
#    reading, incomplete, for either)
f=$(qwen "$NPMDIR/node_modules/@qwen-code/qwen-code/cli.js" new-ignores)
case $f in "$G/projects/"*) ;; *) fail "Qwen 0.24.4 put the transcript in $f, not in G" ;; esac

# 3. the system settings' env: the same in 0.15.6
rm -rf "$RT" "$G/plans"
echo '{}' > "$G/settings.json"
echo "{\"env\":{\"QWEN_RUNTIME_DIR\":\"$RT\"}}" > "$T/system.json"
f=$(qwen "$Q156" system-env QWEN_CODE_SYSTEM_SETTINGS_PATH="$T/system.json")
case $f in "$RT/projects/"*) ;; *) fail "Qwen 0.15.6 put the transcript in $f, not under $RT" ;; esac
id=$(plan_of "$f")
check system-env "$id" incomplete QWEN_CODE_SYSTEM_SETTINGS_PATH="$T/system.json"

# 4. controls, 0.15.6 and qgc agreeing on the root: the value names G; the variable in the
#    environment wins over the setting
rm -rf "$RT" "$G/plans"
echo '{"env":{"QWEN_RUNTIME_DIR":"~/.qwen"}}' > "$G/settings.json"
f=$(qwen "$Q156" same-root)
case $f in "$G/projects/"*) ;; *) fail "Qwen 0.15.6 put the transcript in $f, not in G" ;; esac
rm -f "$f" # a session not seen: its plan is an orphan in a complete tree
id=$(plan_of "$f")
check same-root "$id" complete
rm -rf "$G/plans"
echo "{\"env\":{\"QWEN_RUNTIME_DIR\":\"$T/elsewhere\"}}" > "$G/settings.json"
f=$(qwen "$Q156" variable QWEN_RUNTIME_DIR="$RT")
case $f in "$RT/projects/"*) ;; *) fail "Qwen 0.15.6 put the transcript in $f, not under $RT" ;; esac
rm -f "$f"
id=$(plan_of "$f")
check variable "$id" complete QWEN_RUNTIME_DIR="$RT"
pass "the settings' env.QWEN_RUNTIME_DIR that Qwen 0.15.6 applies makes the tree incomplete unless it names the tree's root"
finish
