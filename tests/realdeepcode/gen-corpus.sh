#!/usr/bin/env bash
# gen-corpus.sh OUTHOME
#
# Makes a genuine Deep Code 0.2.1 session store in OUTHOME/.deepcode by running
# the REAL Deep Code CLI (build/packages/cli/dist/cli.js, see setup.sh) and
# Deep Code's own core library (dc-session-op.mjs) against the loopback mock
# model server of mock-openai.mjs (copied from realqwen). OUTHOME is used as HOME for
# every Deep Code process (Deep Code has no other override of ~/.deepcode), so
# the real home is never touched. OUTHOME must not exist or must be empty.
#
# Knobs:
#   REALDC_WORK   where the project directories are made (default: a new
#                 /tmp/realdc-work.XXXXXX; if given it must not exist). Kept,
#                 except the "scratch" project, deleted on purpose.
#   MANIFEST      manifest path (default $REALDC_WORK/manifest.tsv)
#   SKIP_CHECK=1  skip the closing dc-check.mjs self-test
# Needs: node >= 20, git, ./build (run ./setup.sh first).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REALQWEN="$HERE"   # mock-openai.mjs, copied from realqwen unchanged
NET_GUARD="$HERE/../realqwen/net-guard.cjs" # the one copy, realqwen's
CLI="${REALDC_BUILD:-$HERE/build}/packages/cli/dist/cli.js"
OP="$HERE/dc-session-op.mjs"

die() { echo "gen-corpus: $*" >&2; exit 1; }
log() { echo "[gen-corpus $(date +%T)] $*" >&2; }

[ $# -ge 1 ] || die "usage: gen-corpus.sh OUTHOME"
[ -f "$CLI" ] || die "Deep Code not built; run $HERE/setup.sh"
[ -f "$REALQWEN/mock-openai.mjs" ] || die "missing $REALQWEN/mock-openai.mjs"
OUT="$1"
if [ -e "$OUT" ] && [ -n "$(ls -A "$OUT" 2>/dev/null)" ]; then die "OUTHOME $OUT exists and is not empty"; fi
mkdir -p "$OUT"; OUT="$(cd "$OUT" && pwd -P)"
if [ -n "${REALDC_WORK:-}" ]; then
  [ -e "$REALDC_WORK" ] && die "REALDC_WORK $REALDC_WORK already exists"
  mkdir -p "$REALDC_WORK"; WORK="$(cd "$REALDC_WORK" && pwd -P)"
else
  WORK="$(mktemp -d /tmp/realdc-work.XXXXXX)"
fi
MANIFEST="${MANIFEST:-$WORK/manifest.tsv}"
NODE="$(command -v node)"
MOCK_PID=""
cleanup() {
  set +e
  if [ -n "$MOCK_PID" ] && kill -0 "$MOCK_PID" 2>/dev/null; then kill "$MOCK_PID"; wait "$MOCK_PID" 2>/dev/null; fi
}
trap cleanup EXIT
T0=$(date +%s)

# ---------------------------------------------------------------- mock server
PORT_FILE="$WORK/.mock.port"
MOCK_MAX_SECONDS=900 "$NODE" "$REALQWEN/mock-openai.mjs" --port 0 --port-file "$PORT_FILE" \
  --log "$WORK/mock-requests.log" >"$WORK/.mock.out" 2>&1 &
MOCK_PID=$!
for _ in $(seq 1 100); do [ -s "$PORT_FILE" ] && break; sleep 0.1; done
[ -s "$PORT_FILE" ] || die "mock server did not start"
PORT="$(cat "$PORT_FILE")"
log "mock pid $MOCK_PID on 127.0.0.1:$PORT; store: $OUT/.deepcode; projects: $WORK"

export HOME="$OUT"
export NO_COLOR=1
# Deep Code's telemetry is off in settings.json; anything else non-loopback is
# refused in-process (same guard as realqwen).
export NODE_OPTIONS="--require $NET_GUARD${NODE_OPTIONS:+ $NODE_OPTIONS}"
export REALQWEN_NET_GUARD_LOG="$WORK/net-guard.log"
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE 2>/dev/null || true

write_settings() { # write_settings BASE_URL
  mkdir -p "$OUT/.deepcode"
  cat >"$OUT/.deepcode/settings.json" <<EOF
{
  "env": {
    "API_KEY": "sk-mock-not-a-real-key",
    "BASE_URL": "$1",
    "MODEL": "deepseek-chat"
  },
  "telemetryEnabled": false,
  "permissions": { "allow": [], "deny": [], "ask": [], "defaultMode": "allowAll" }
}
EOF
}
write_settings "http://127.0.0.1:$PORT/v1"

printf 'session_id\tproject_root\tkind\tnote\tindexed_by_deepcode\n' >"$MANIFEST.tmp"
manifest() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$MANIFEST.tmp"; }

RUN_N=0
# dc CWD PROMPT [cli args...]  -- one headless run of the real CLI
dc() {
  local cwd="$1" prompt="$2"; shift 2
  RUN_N=$((RUN_N + 1))
  log "cli #$RUN_N in ${cwd#$WORK/} $*"
  ( cd "$cwd" && timeout 120 "$NODE" "$CLI" -x -p "$prompt" "$@" </dev/null \
      >"$WORK/run-$RUN_N.out" 2>"$WORK/run-$RUN_N.err" )
}
# newest session (by createTime) of a project, via Deep Code's own listSessions
newest() { "$NODE" "$OP" list "$OUT" "$1" | tail -n 1 | cut -f1; }
need() { [ -n "$2" ] || die "no session id for $1 (see $WORK/run-*.err)"; }
# JSON-escape a string for the @@tool argument objects
js() { "$NODE" -e 'process.stdout.write(JSON.stringify(process.argv[1]))' "$1"; }
# (each prints "\n@@tool ..." : $(...) would strip a trailing newline)
t_read()  { printf '\n@@tool read {"file_path":%s}' "$(js "$1")"; }
t_write() { printf '\n@@tool write {"file_path":%s,"content":%s}' "$(js "$1")" "$(js "$2")"; }
# edit needs the snippet id of an earlier read in the same process run:
# full_file_0 for the first full read of a session (common/state.ts)
t_edit()  { printf '\n@@tool edit {"file_path":%s,"snippet_id":%s,"old_string":%s,"new_string":%s}' "$(js "$1")" "$(js "$2")" "$(js "$3")" "$(js "$4")"; }
t_bash()  { printf '\n@@tool bash {"command":%s,"description":%s,"sideEffects":%s}' "$(js "$1")" "$(js "run $1")" "${2:-false}"; }

mkrepo() { # mkrepo DIR : a git repo with one commit
  mkdir -p "$1"
  ( cd "$1" && git init -q -b main && git config user.email dev@example.invalid && git config user.name dev \
    && printf '# %s\n\nTODO: login\n' "$(basename "$1")" >README.md && git add -A && git commit -qm init )
}

WEBAPP="$WORK/webapp"
LONG="$WORK/clients/acme-industries/platform/services/Überweisung Service (billing)"
UNI="$WORK/my project ñandú"
BUSY="$WORK/busy"
SCRATCH="$WORK/scratch"
for d in "$WEBAPP" "$LONG" "$UNI" "$BUSY"; do mkrepo "$d"; done
mkdir -p "$SCRATCH"; printf 'junk\n' >"$SCRATCH/junk.txt"

# ------------------------------------------------------------------ webapp
dc "$WEBAPP" "Set up the login page.
$(t_read "$WEBAPP/README.md")$(t_edit "$WEBAPP/README.md" full_file_0 "TODO: login" "DONE: login")$(t_write "$WEBAPP/src/login.js" $'export function login(u) {\n  return u === "admin";\n}\n')$(t_bash "git status --short")
@@say Login page added." || die "cli run $RUN_N failed"
W1="$(newest "$WEBAPP")"; need W1 "$W1"
manifest "$W1" "$WEBAPP" tools "read+edit+write+bash: file-history branch with Initial/User prompt/Pre-mutation/File mutation checkpoints"

dc "$WEBAPP" "Bump the version.
$(t_write "$WEBAPP/src/version.js" $'export const version = 2;\n')$(t_write "$WEBAPP/src/login.js" $'export function login(u) {\n  return u === "root";\n}\n')$(t_bash "ls src")
@@say Version bumped." -r "$W1" || die "cli run $RUN_N failed"
manifest "$W1" "$WEBAPP" resumed "-r: second user prompt (second undo target) appended to the same jsonl; branch advanced"

dc "$WEBAPP" "Try another approach on a fork.
$(t_write "$WEBAPP/src/fork.txt" $'forked work\n')
@@say Fork done." -f "$W1" || die "cli run $RUN_N failed"
W2="$(newest "$WEBAPP")"; need W2 "$W2"; [ "$W2" != "$W1" ] || die "fork made no new session"
manifest "$W2" "$WEBAPP" forked "-f: copied messages (old checkpointHash values), forkedFrom in the index, refs/heads/<fork> started at the source's head"

dc "$WEBAPP" "Flaky backend.
@@fail
@@say Answered after a retry." || die "cli run $RUN_N failed"
W3="$(newest "$WEBAPP")"; need W3 "$W3"
manifest "$W3" "$WEBAPP" mock-fail "@@fail: one HTTP 500; the OpenAI SDK retries (maxRetries 2) so the session completes"

# A loopback port nothing listens on (ports like 9 are on fetch's "bad port"
# list and fail differently): connection refused, retried, then failed.
DEAD_PORT="$("$NODE" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
write_settings "http://127.0.0.1:$DEAD_PORT/v1"
if dc "$WEBAPP" "This request cannot reach the model.
@@say never"; then die "run against a dead port succeeded?"; fi
write_settings "http://127.0.0.1:$PORT/v1"
W4="$(newest "$WEBAPP")"; need W4 "$W4"
manifest "$W4" "$WEBAPP" failed "BASE_URL port with no listener: status failed, failReason in the index, no assistant message"

dc "$WEBAPP" "Write a temporary file.
$(t_write "$WEBAPP/tmp-notes.txt" $'temporary\n')$(t_bash "cat tmp-notes.txt")
@@say Temp file written." || die "cli run $RUN_N failed"
W5="$(newest "$WEBAPP")"; need W5 "$W5"
"$NODE" "$OP" delete "$OUT" "$WEBAPP" "$W5" | grep -q ' true$' || die "deleteSession($W5) failed"
manifest "$W5" "$WEBAPP" deleted "deleted with Deep Code's SessionManager.deleteSession: index entry + jsonl gone, refs/heads/<id> and its objects stay"

# ------------------------------------------------- long path -> hashed code
dc "$LONG" "Reconcile invoices.
$(t_write "$LONG/reconcile.py" $'def reconcile():\n    return 0\n')$(t_bash "python3 reconcile.py || true")
@@say Reconciler added." || die "cli run $RUN_N failed"
L1="$(newest "$LONG")"; need L1 "$L1"
manifest "$L1" "$LONG" hashed-code "path longer than 64 chars: project code <sanitized basename>-<sha256(path)[:16]>"

# ------------------------------------------- space + non-ASCII in the path
dc "$UNI" "Añade una sección.
$(t_read "$UNI/README.md")$(t_edit "$UNI/README.md" full_file_0 "TODO: login" "Sección: ñandú ✓")$(t_write "$UNI/notas ü.txt" $'café\n')
@@say Hecho." || die "cli run $RUN_N failed"
U1="$(newest "$UNI")"; need U1 "$U1"
manifest "$U1" "$UNI" non-ascii "project dir with a space and non-ASCII: legacy project code keeps them; file-history manifest paths with UTF-8"
U2="$("$NODE" "$OP" create "$OUT" "$UNI" 1 "Look at this picture" --image | tail -n 1)"; need U2 "$U2"
manifest "$U2" "$UNI" image "core library, prompt with a PNG: projects/<code>/images/<id>/<uuid>.png"

# ------------------------------------- busy: > 50 sessions, Deep Code's cap
dc "$BUSY" "First notes.
$(t_write "$BUSY/notes.txt" $'one\n')$(t_bash "wc -l notes.txt")
@@say Noted." || die "cli run $RUN_N failed"
B1="$(newest "$BUSY")"; need B1 "$B1"
dc "$BUSY" "More notes.
$(t_read "$BUSY/notes.txt")$(t_write "$BUSY/notes.txt" $'one\ntwo\n')
@@say Noted again." || die "cli run $RUN_N failed"
B2="$(newest "$BUSY")"; need B2 "$B2"
B3="$("$NODE" "$OP" create "$OUT" "$BUSY" 1 "Busy picture" --image | tail -n 1)"; need B3 "$B3"
manifest "$B1" "$BUSY" capped "write+bash; later dropped by Deep Code's 50-entry cap (jsonl removed, ref+objects stay)"
manifest "$B2" "$BUSY" capped "read+write (Deep Code refuses to overwrite an unread file); later dropped by the cap"
manifest "$B3" "$BUSY" capped-image "image prompt; dropped by the cap: Deep Code removes images/<id>/ too"
log "core library: 50 one-prompt sessions in busy"
"$NODE" "$OP" create "$OUT" "$BUSY" 50 "Busy question" >"$WORK/busy-ids.txt" || die "bulk sessions failed"
n=0
while read -r id; do n=$((n + 1)); manifest "$id" "$BUSY" bulk "core library one-prompt session $n/50 (text only; Initial checkpoint ref)"; done <"$WORK/busy-ids.txt"

# --------------------------------------------- scratch: project dir deleted
dc "$SCRATCH" "Clean up.
$(t_write "$SCRATCH/keep.txt" $'kept\n')$(t_bash "rm -f junk.txt && ls" true)
@@say Cleaned." || die "cli run $RUN_N failed"
S1="$(newest "$SCRATCH")"; need S1 "$S1"
manifest "$S1" "$SCRATCH" stale-project "not a git repo; the project directory is deleted afterwards (originalPath no longer exists)"

# indexed_by_deepcode column, from Deep Code's own listSessions (before the
# scratch dir goes: listing works either way, it only reads the store)
declare -A INDEXED=()
for d in "$WEBAPP" "$LONG" "$UNI" "$BUSY" "$SCRATCH"; do
  while IFS=$'\t' read -r id _; do INDEXED[$id]=1; done < <("$NODE" "$OP" list "$OUT" "$d")
done
{ head -n 1 "$MANIFEST.tmp"; tail -n +2 "$MANIFEST.tmp" | while IFS=$'\t' read -r id root kind note; do
    printf '%s\t%s\t%s\t%s\t%s\n' "$id" "$root" "$kind" "$note" "$([ -n "${INDEXED[$id]:-}" ] && echo yes || echo no)"
  done; } >"$MANIFEST"
rm -f "$MANIFEST.tmp"
rm -rf "$SCRATCH"

log "done in $(( $(date +%s) - T0 ))s: $(find "$OUT/.deepcode" -type f | wc -l) files, $(du -sk "$OUT/.deepcode" | cut -f1) KiB; manifest $MANIFEST"
[ -s "$REALQWEN_NET_GUARD_LOG" ] && log "net-guard refused $(wc -l <"$REALQWEN_NET_GUARD_LOG") connection(s)"
if [ "${SKIP_CHECK:-0}" != 1 ]; then
  GONE="$(awk -F'\t' 'NR>1 && $5=="no" {print $1}' "$MANIFEST" | sort -u | paste -sd, -)"
  "$NODE" "$HERE/dc-check.mjs" "$OUT" --save "$WORK/baseline.json" >"$WORK/dc-check.txt" \
    || die "dc-check failed on the fresh store; see $WORK/dc-check.txt"
  log "$(tail -n 1 "$WORK/dc-check.txt")"
  log "not indexed by Deep Code (manifest column 5 = no): $GONE"
fi
printf '%s\n' "$OUT"
