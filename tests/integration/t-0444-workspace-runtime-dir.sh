#!/bin/sh
# t-0444-workspace-runtime-dir: Qwen merges a project's workspace settings
# (<cwd>/.qwen/settings.json) over the user's, so advanced.runtimeOutputDir there puts the
# sessions started in that project in another runtime root, which qgc does not see; their
# G/file-history/<id> would look orphaned. When a project's cwd has such a file (or one qgc
# cannot read or parse, or a symlink it does not follow), the tree is incomplete: no orphan is
# reclaimed and the dry run names the project. Controls: no file, a file without the key, a
# value naming the tree's own root, a cwd that is gone: the orphan is reclaimed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/workspace-lib.sh"
mkdir "$W/.qwen"
echo '{"general":{"vimMode":true},"advanced":{"excludedEnvVars":[]}}' > "$W/.qwen/settings.json"
dry other-keys complete
echo "{\"advanced\":{\"runtimeOutputDir\":\"$G\"}}" > "$W/.qwen/settings.json"
dry same-root complete
echo '{"advanced":{"runtimeOutputDir":"~/.qwen/../.qwen"}}' > "$W/.qwen/settings.json"
dry same-root-tilde complete

echo "{\"advanced\":{\"runtimeOutputDir\":\"$T/elsewhere\"}}" > "$W/.qwen/settings.json"
dry absolute incomplete "the sessions of '$W' may be in a runtime directory qgc does not see: its workspace settings '$W/.qwen/settings.json' set advanced.runtimeOutputDir"
echo '// a comment
{"advanced":{"runtimeOutputDir":".rt"}}' > "$W/.qwen/settings.json"
dry relative incomplete "set advanced.runtimeOutputDir"
echo '{"advanced":{"runtimeOutputDir":"$RT_DIR"}}' > "$W/.qwen/settings.json"
RT_DIR="$G" dry variable incomplete "set advanced.runtimeOutputDir"
echo '{"advanced":{"runtimeOutputDir":"/x",}}' > "$W/.qwen/settings.json"
dry trailing-comma incomplete "cannot be used (no JSON object once its comments are stripped)"
echo '{"env":{"QWEN_RUNTIME_DIR":"/x"}}' > "$W/.qwen/settings.json"
dry settings-env incomplete "set QWEN_RUNTIME_DIR or QWEN_HOME in env"
# a symlink: Qwen follows it, qgc does not
echo '{}' > "$T/target.json"
rm "$W/.qwen/settings.json"
ln -s "$T/target.json" "$W/.qwen/settings.json"
dry symlink incomplete "it is a symlink, not followed"
rm "$W/.qwen/settings.json"
echo '{"advanced":{"runtimeOutputDir":"/x"}}' > "$T/target.json"
mv "$W/.qwen" "$T/qwen-dir"
ln -s "$T/qwen-dir" "$W/.qwen"
dry symlinked-dir incomplete "it is a symlink, not followed"
rm "$W/.qwen"
mv "$T/qwen-dir" "$W/.qwen"
echo "{\"advanced\":{\"runtimeOutputDir\":\"$T/elsewhere\"}}" > "$W/.qwen/settings.json"

# the real run keeps the file-history of a session it may not see, and its run-start entry says why
real_run

# a cwd that is gone: no Qwen starts there again, nothing of it to read
mv "$W" "$T/gone"
q --dry-run --json > "$T/gone.json" 2> "$T/gone.err" || { cat "$T/gone.err"; fail "dry run, gone"; }
python3 - "$T/gone.json" "$id" <<'PY' || fail "a vanished cwd: the orphan is not reclaimed"
import json, sys
plan, oid = json.load(open(sys.argv[1])), sys.argv[2]
assert "incomplete" not in plan["trees"][0], plan["trees"][0]
assert [o for o in plan.get("orphans", []) if o["kind"] == "file-history" and o["name"] == oid and o["verb"] == "delete"]
PY
pass "workspace settings that may move a project's runtime root make the tree incomplete, with the reason"
finish
