#!/bin/sh
# erase-race.sh: build bench/erase-race.c against a build dir's libqgc.a and run it RUNS times for
# each writer mode (issue 23 item 6: qgc's logs.json edit against an unpaced writer). Not part of
# make check: its numbers depend on the machine's timing.
# Usage: bench/erase-race.sh [-b BUILD] [-n RUNS] [-m "alternate inplace rename"] [-- ARGS]
#   BUILD: a configured and built qgc build dir (default _build); ARGS go to erase-race.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
SRC="$HERE/../src"
BUILD="$HERE/../_build"
RUNS=10
MODES="alternate inplace rename"
while [ $# -gt 0 ]; do
        case "$1" in
        -b) BUILD=$2; shift 2 ;;
        -n) RUNS=$2; shift 2 ;;
        -m) MODES=$2; shift 2 ;;
        --) shift; break ;;
        *) echo "Usage: erase-race.sh [-b BUILD] [-n RUNS] [-m MODES] [-- ARGS]" >&2; exit 2 ;;
        esac
done
[ -f "$BUILD/libqgc.a" ] || { echo "erase-race.sh: no $BUILD/libqgc.a (run make there)" >&2; exit 2; }
BIN=$(mktemp -d "${TMPDIR:-/var/tmp}/erase-race-bin.XXXXXX")
trap 'rm -rf "$BIN"' EXIT
INC="-I$BUILD"
for d in "$SRC"/*/; do INC="$INC -I$d"; done
LIBS=$(awk '/^(JSONC|LIBCONFIG|LIBCRYPTO|LIBSYSTEMD|ZSTD)_LIBS =|^LIBS =/ { sub(/^[A-Z_]+ = ?/, ""); printf "%s ", $0 }' "$BUILD/Makefile")
# shellcheck disable=SC2086
${CC:-cc} -O2 -D_GNU_SOURCE $INC -o "$BIN/erase-race" "$HERE/erase-race.c" "$BUILD/libqgc.a" \
        $LIBS -lpthread
for m in $MODES; do
        i=0
        while [ "$i" -lt "$RUNS" ]; do
                "$BIN/erase-race" -m "$m" "$@" || true
                i=$((i + 1))
        done
done
