#!/bin/sh
# t-0444-workspace-runtime-dir: Qwen merges a project's workspace settings
# (<cwd>/.qwen/settings.json) over the user's, so advanced.runtimeOutputDir there puts the
# sessions started in that project in another runtime root, which qgc does not see; their
# G/file-history/<id> would look orphaned. When a project's cwd has such a file (or one qgc
# cannot read or parse, or a symlink it does not follow), the tree is incomplete: no orphan is
# reclaimed and the dry run names the project. Controls: no file, a file without the key, a
# value naming the tree's own root, a cwd that is gone: the orphan is reclaimed.
. "$(dirname "$0")/lib.sh"

G="$T/home/.qwen"
make_tree home/.qwen > /dev/null
W="$T/work/scratch"
# the corpus project /srv/demo/scratch, as if it had been started in $W
python3 - "$G" "$W" <<'PY'
import os, re, sys
g, w = sys.argv[1], sys.argv[2]
old = os.path.join(g, "projects", "-srv-demo-scratch")
new = os.path.join(g, "projects", re.sub(r"[^A-Za-z0-9]", "-", w))
os.rename(old, new)
for d, _, files in os.walk(new):
    for f in files:
        p = os.path.join(d, f)
        st = os.stat(p)
        data = open(p, "rb").read().replace(b'"/srv/demo/scratch"', ('"%s"' % w).encode())
        open(p, "wb").write(data)
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
PY
mkdir -p "$W"
id=0badc0de-1111-4222-8333-444455556666
mkdir -p "$G/file-history/$id"
echo data > "$G/file-history/$id/x@v1"
touch -d 2026-01-01T00:00:00Z "$G/file-history/$id/x@v1" "$G/file-history/$id"
cat > "$T/delete.conf" <<'CONF'
defaults = { action = "delete"; max-age = "2h"; min-age = "1h"; keep-latest = 0; min-idle = "1h";
             max-deletions = "off"; };
CONF

q() {
        HOME="$T/home" QWEN_HOME= QWEN_RUNTIME_DIR= QWEN_CODE_SYSTEM_DEFAULTS_PATH= \
                QWEN_CODE_SYSTEM_SETTINGS_PATH="$T/no-system.json" \
                run_qgc -c "$T/delete.conf" --now 2040-01-01T00:00:00Z "$@"
}
check() { # plan.json expect(incomplete|complete)
        python3 - "$1" "$2" "$id" "$W" <<'PY'
import json, sys
plan, mode, oid, w = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], sys.argv[4]
tr = plan["trees"][0]
fh = [o for o in plan.get("orphans", []) if o["kind"] == "file-history" and o["name"] == oid]
deleted = [o for o in fh if o["verb"] == "delete"]
s = [x for p in plan["projects"] for x in p["sessions"]]
assert any(x["verb"] == "delete" for x in s), "no session is deleted: the test proves nothing"
assert any(p.get("project") == w for p in plan["projects"]), "the moved project is not seen"
if mode == "incomplete":
    assert "workspace settings or .env" in tr.get("incomplete", ""), tr
    assert not deleted, deleted
else:
    assert "incomplete" not in tr, tr
    assert deleted, fh
PY
}
dry() { # name expect [stderr pattern]
        q --dry-run --json > "$T/$1.json" 2> "$T/$1.err" || { cat "$T/$1.err"; fail "dry run, $1"; }
        check "$T/$1.json" "$2" || { cat "$T/$1.err"; fail "$1: expected a $2 tree"; }
        if [ -n "${3:-}" ]; then
                grep -q -- "$3" "$T/$1.err" || { cat "$T/$1.err"; fail "$1: the dry run does not say '$3'"; }
        fi
        if [ "$2" = complete ] && grep -q "may be in a runtime directory" "$T/$1.err"; then
                cat "$T/$1.err"; fail "$1: a notice although nothing may"
        fi
        return 0
}

dry none complete
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

# the real run keeps the file-history of a session it may not see
q > "$T/run.out" 2>&1 || { cat "$T/run.out"; fail "real run"; }
[ -f "$G/file-history/$id/x@v1" ] || fail "the real run deleted file-history of a session it may not see"
grep -q "may be in a runtime directory qgc does not see" "$T/run.out" ||
        { cat "$T/run.out"; fail "the real run does not say why"; }

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
