#!/bin/sh
# The cold tier's dictionaries (src/colddict/) are what their committed, reproducible script
# makes: each compiled-in dict-N.inc holds exactly the bytes of dict-N.zdict, and train.sh
# --check N retrains them byte for byte. Retraining needs the zstd version that trained them
# (1.5.4): with another one (or no zstd) that part reports SKIP.
. "$(dirname "$0")/lib.sh"
: "${QGC_SRCDIR:?}"
dir="$QGC_SRCDIR/src/base/colddict"
n=0
for z in "$dir"/dict-*.zdict; do
        [ -f "$z" ] || fail "no dictionary in $dir"
        v=${z##*/dict-}; v=${v%.zdict}
        inc="$dir/dict-$v.inc"
        [ -f "$inc" ] || fail "dict-$v.zdict without dict-$v.inc"
        # the array's bytes, in order, against the file's
        sed -n 's/^ *\(0x.*\)$/\1/p' "$inc" | tr -d ' \n' | tr ',' '\n' | sed -n 's/^0x//p' >"$T/inc.hex"
        od -An -v -tx1 "$z" | tr -s ' ' '\n' | sed '/^$/d' >"$T/zdict.hex"
        cmp -s "$T/inc.hex" "$T/zdict.hex" || fail "dict-$v.inc does not hold the bytes of dict-$v.zdict"
        grep -q "cold_dict_$v, sizeof cold_dict_$v" "$QGC_SRCDIR/src/base/cold.c" ||
                fail "dictionary $v is not in cold.c's table (a shipped dictionary never goes)"
        if command -v zstd >/dev/null && zstd --version | grep -q 'v1\.5\.4,'; then
                "$dir/train.sh" --check "$v" >"$T/check.out" 2>&1 || { cat "$T/check.out" >&2; fail "train.sh --check $v: not reproduced"; }
        else
                part_skipped "retraining dictionary $v needs zstd 1.5.4"
        fi
        n=$((n + 1))
done
pass "$n dictionaries: compiled in byte for byte, in cold.c's table, reproduced by train.sh"
finish
