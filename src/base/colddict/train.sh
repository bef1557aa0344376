#!/usr/bin/env bash
# src/base/colddict/train.sh: trains the cold tier's zstd dictionaries (src/base/cold.h), reproducibly.
#
#   src/base/colddict/train.sh VERSION           write dict-VERSION.zdict and dict-VERSION.inc
#   src/base/colddict/train.sh --check VERSION   retrain into a temporary file and compare
#
# A dictionary, once shipped, is never changed or removed: every later qgc must restore every
# file any earlier qgc compressed with it. So this script refuses to overwrite one; a better
# dictionary is a new VERSION (a new training set or parameters below, a new zstd dictionary
# ID), added to cold.c's table, and the old ones stay compiled in.
#
# Version 1: zstd 1.5.4's COVER trainer (k=674, d=8: what `--train-cover` chose itself for
# this set), 32 KiB, dictionary ID 0x71676301 ("qgc" 1), trained on every file below
# projects/ of the trees Qwen Code 0.12.0, 0.15.10, 0.21.10 and 0.23.4 wrote for
# tests/data/qwen0NN (the realqwen harness), in C-locale path order. It is NOT trained on what
# bench/ measures: not on tests/data/corpus (Qwen 0.24.4), not on gen-tree's transcripts. The
# same zstd version and inputs give the same bytes (--check).
set -euo pipefail
export LC_ALL=C

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
top="$here/../../.."
check=0
if [ "${1:-}" = --check ]; then
        check=1
        shift
fi
version="${1:?usage: train.sh [--check] VERSION}"

case "$version" in
1)
        id=$(( 0x71676301 ))
        trees="qwen012 qwen015 qwen021 qwen023"
        params="--train-cover=k=674,d=8 --maxdict=32768"
        ;;
*)
        echo "train.sh: no recipe for version $version" >&2
        exit 2
        ;;
esac

files=()
for t in $trees; do
        while IFS= read -r f; do files+=("$f"); done < <(find "$top/tests/data/$t/tree/projects" -type f | sort)
done

out="$here/dict-$version.zdict"
inc="$here/dict-$version.inc"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2086
zstd -q -f $params --dictID="$id" "${files[@]}" -o "$tmp/dict.zdict"
{
        echo "/* dict-$version.inc: the cold tier's zstd dictionary $version (ID $id), made by"
        echo " * src/base/colddict/train.sh $version from dict-$version.zdict. Never edit or remove (cold.h). */"
        echo "static const unsigned char cold_dict_${version}[] = {"
        od -An -v -tx1 "$tmp/dict.zdict" | sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1, /g' -e 's/, $/,/' \
                -e 's/^/        /'
        echo "};"
} > "$tmp/dict.inc"

if [ "$check" = 1 ]; then
        cmp "$tmp/dict.zdict" "$out" && cmp "$tmp/dict.inc" "$inc"
        echo "dictionary $version: reproduced ($(zstd --version))"
        exit 0
fi
if [ -e "$out" ] || [ -e "$inc" ]; then
        echo "train.sh: dictionary $version exists; shipped dictionaries never change (use --check)" >&2
        exit 1
fi
mv "$tmp/dict.zdict" "$out"
mv "$tmp/dict.inc" "$inc"
echo "wrote $out and $inc (${#files[@]} files; $(zstd --version))"
