#!/bin/sh
# t-0445-project-dotenv: Qwen 0.15.6 took QWEN_RUNTIME_DIR and QWEN_HOME from the first .env it
# found walking up from its cwd (<dir>/.qwen/.env, then <dir>/.env; later versions exclude
# both from a project's .env), so the sessions of that project may be in another runtime
# root. When such a file sets either (or cannot be parsed with certainty), anywhere from the
# project's cwd up to the home, the tree is incomplete: no orphan is reclaimed, the dry run
# says which file. Controls: other keys only, a value naming the tree's own root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/workspace-lib.sh"
printf 'API_KEY=x\nDEBUG=1\n' > "$W/.env"
dry other-keys complete
printf 'QWEN_RUNTIME_DIR=%s\n' "$G" > "$W/.env"
dry same-root complete
printf 'QWEN_HOME=%s\n' "$G" > "$W/.env"
dry same-home complete

printf 'QWEN_RUNTIME_DIR=%s\n' "$T/elsewhere" > "$W/.env"
dry runtime incomplete "the sessions of '$W' may be in a runtime directory qgc does not see: the .env file '$W/.env' sets QWEN_RUNTIME_DIR"
printf 'export QWEN_RUNTIME_DIR=.rt\n' > "$W/.env"
dry relative incomplete "the .env file '$W/.env' sets QWEN_RUNTIME_DIR"
rm "$W/.env"
mkdir "$W/.qwen"
printf 'QWEN_HOME="%s"\n' "$T/otherhome" > "$W/.qwen/.env"
dry qwen-dir incomplete "the .env file '$W/.qwen/.env' sets QWEN_HOME"
rm "$W/.qwen/.env"
# an ancestor's (every directory up to the home, or to /)
printf 'QWEN_RUNTIME_DIR=/x\n' > "$T/work/.env"
dry ancestor incomplete "the .env file '$T/work/.env' sets QWEN_RUNTIME_DIR"
printf 'QWEN_RUNTIME_DIR="/x\ny"\n' > "$T/work/.env"
dry unsure incomplete "the .env file '$T/work/.env' Qwen may load cannot be used (not parsed with certainty)"
rm "$T/work/.env"
# a second project beside it, looked at after it (its directory name sorts later): the
# directories above both were found clean for the first; its own .env still counts
Z="$T/work/zz"
python3 - "$G" "$W" "$Z" <<'PY'
import os, re, shutil, sys
g, w, z = sys.argv[1:4]
src = os.path.join(g, "projects", re.sub(r"[^A-Za-z0-9]", "-", w))
dst = os.path.join(g, "projects", re.sub(r"[^A-Za-z0-9]", "-", z))
old_id, new_id = "582043e2-0a5b-430d-b2e9-daca37f89f10", "582043e2-0a5b-430d-b2e9-daca37f89f11"
shutil.copytree(src, dst, symlinks=True)
for d, _, files in os.walk(dst):
    for f in files:
        p = os.path.join(d, f)
        data = open(p, "rb").read().replace(('"%s"' % w).encode(), ('"%s"' % z).encode())
        os.unlink(p)
        open(os.path.join(d, f.replace(old_id, new_id)), "wb").write(data.replace(old_id.encode(), new_id.encode()))
PY
mkdir -p "$Z"
dry two-projects complete
printf 'QWEN_RUNTIME_DIR=/x\n' > "$Z/.env"
dry second-project incomplete "the sessions of '$Z' may be in a runtime directory qgc does not see: the .env file '$Z/.env' sets QWEN_RUNTIME_DIR"
rm "$Z/.env"
printf 'QWEN_RUNTIME_DIR=/x\n' > "$W/.env"

real_run
pass "a .env Qwen may load for a project that sets QWEN_RUNTIME_DIR or QWEN_HOME makes the tree incomplete, with the reason"
finish
