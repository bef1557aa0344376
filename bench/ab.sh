#!/bin/bash
# bench/ab.sh: two qgc binaries side by side on the same trees (issue 10: "the benchmarks are
# unchanged, or better; give the bench table before and after").
#
#   bench/ab.sh [--reps N] [--real-reps N] [--sessions N] [--real N] [--shared-rows N]
#               [--work DIR] OLD_QGC NEW_QGC
#
# One gen-tree tree of --sessions sessions (default 20000, 400 projects) for the dry runs
# (text, --json, --jobs 1), warm, the two binaries in turn for each repetition; then real archive
# and delete runs (bench/policies/*.conf) of --real sessions (default 5000), each binary on its
# own fresh, warm copy, in turn. Prints per row the median wall and CPU seconds of each binary
# and NEW / OLD; checks that the two dry runs' plans are identical (the JSON plan but for
# fs_avail) and that the real runs leave identical trees (file names and sizes) and identical
# usage_record.jsonl contents. --shared-rows N: the real runs' tree also has the files Qwen shares
# between a project's sessions (gen-tree --log-rows N --org-pct 20: N logs.json rows per session,
# unpinned organisation entries; run.sh --shared-rows), whose contents must then be identical too.
# The trees have no runtime claims (--runtime-pct 0): a generated claim pid that happens to be a
# live process would make a session live in one run and not the other.
# Needs a C compiler, /usr/bin/time; root is not needed. Not part of make check.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPS=7
REAL_REPS=3
SESSIONS=20000
REAL=5000
SHARED_ROWS=0
WORK=${TMPDIR:-/var/tmp}/qgc-ab
NOW_EPOCH=1796083200
SEED=42

die() { echo "ab.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
        case $1 in
        --reps) REPS=$2; shift 2 ;;
        --real-reps) REAL_REPS=$2; shift 2 ;;
        --sessions) SESSIONS=$2; shift 2 ;;
        --real) REAL=$2; shift 2 ;;
        --shared-rows) SHARED_ROWS=$2; shift 2 ;;
        --work) WORK=$2; shift 2 ;;
        -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        --*) die "unknown option $1" ;;
        *) break ;;
        esac
done
[ $# -eq 2 ] || die "usage: ab.sh [options] OLD_QGC NEW_QGC"
OLD=$(readlink -f "$1"); NEW=$(readlink -f "$2")
[ -x "$OLD" ] && [ -x "$NEW" ] || die "both binaries must be executable"
[ -x /usr/bin/time ] || die "needs /usr/bin/time (Debian package time)"

mkdir -p "$WORK/bin"
${CC:-cc} -O2 -o "$WORK/bin/gen-tree" "$HERE/gen-tree.c" -lm || die "cannot build gen-tree"

warm() { find "$1" -type f -exec cat {} + >/dev/null; }
# one timed run: appends "wall cpu" to $WORK/t.<row>
run_once() {
        local row=$1; shift
        /usr/bin/time -f '%e %U %S' -o "$WORK/time.tmp" "$@" >"$WORK/out.$row" 2>"$WORK/err.$row" || {
                echo "ab.sh: $row exited $? (see $WORK/err.$row)" >&2; return 1; }
        awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$WORK/time.tmp" >>"$WORK/t.$row"
}
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
col() { awk -v c="$1" '{ print $c }' "$WORK/t.$2" | median; }
ROWS=()
report() {
        local row=$1 ow oc nw nc
        ow=$(col 1 "old_$row"); oc=$(col 2 "old_$row"); nw=$(col 1 "new_$row"); nc=$(col 2 "new_$row")
        printf '| %s | %s / %s s | %s / %s s | %s | %s |\n' "$row" "$ow" "$oc" "$nw" "$nc" \
                "$(awk -v a="$nw" -v b="$ow" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')" \
                "$(awk -v a="$nc" -v b="$oc" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
}

TREE=$WORK/tree
rm -rf "$TREE" "$WORK"/t.* "$WORK"/copy-*
echo "ab.sh: generating $SESSIONS sessions" >&2
"$WORK/bin/gen-tree" --seed $SEED --projects $((SESSIONS / 50)) --sessions 50 --min-age-days 1 --runtime-pct 0 \
        --now $NOW_EPOCH "$TREE" >/dev/null || die "gen-tree failed"
warm "$TREE"
DRY=(-c "$HERE/policies/archive.conf" --root "$TREE" --now @$NOW_EPOCH --log-target stderr --dry-run)
for variant in text json jobs1; do
        case $variant in text) extra=() ;; json) extra=(--json) ;; jobs1) extra=(--jobs 1) ;; esac
        "$OLD" "${DRY[@]}" "${extra[@]}" >/dev/null 2>&1 || true # warm-up
        "$NEW" "${DRY[@]}" "${extra[@]}" >/dev/null 2>&1 || true
        for ((i = 0; i < REPS; i++)); do
                run_once "old_dry_$variant" "$OLD" "${DRY[@]}" "${extra[@]}" || true
                run_once "new_dry_$variant" "$NEW" "${DRY[@]}" "${extra[@]}" || true
        done
        ROWS+=("dry_$variant")
        if [ "$variant" = json ]; then
                sed 's/"fs_avail": *[0-9]*/"fs_avail":0/g' "$WORK/out.old_dry_json" >"$WORK/a.json"
                sed 's/"fs_avail": *[0-9]*/"fs_avail":0/g' "$WORK/out.new_dry_json" >"$WORK/b.json"
                cmp -s "$WORK/a.json" "$WORK/b.json" && echo "ab.sh: JSON plans identical" >&2 ||
                        echo "ab.sh: JSON plans DIFFER ($WORK/out.old_dry_json, $WORK/out.new_dry_json)" >&2
        fi
        if [ "$variant" = text ]; then
                cmp -s "$WORK/out.old_dry_text" "$WORK/out.new_dry_text" && echo "ab.sh: text plans identical" >&2 ||
                        echo "ab.sh: text plans DIFFER" >&2
        fi
done
rm -rf "$TREE"

BASE=$WORK/real
echo "ab.sh: generating $REAL sessions for the real runs" >&2
SHARED=()
[ "$SHARED_ROWS" -gt 0 ] && SHARED=(--log-rows "$SHARED_ROWS" --org-pct 20)
"$WORK/bin/gen-tree" --seed $SEED --projects $((REAL / 50)) --sessions 50 --min-age-days 120 \
        --max-age-days 400 --pin-pct 0 --title-pct 0 --runtime-pct 0 "${SHARED[@]}" --now $NOW_EPOCH "$BASE" >/dev/null ||
        die "gen-tree failed"
listing() { (cd "$1" && find . -path ./.qgc -prune -o -printf '%P %s\n' | grep -v -e usage_record -e '^\.qgc' | sort); }
for kind in archive delete; do
        for ((i = 0; i < REAL_REPS; i++)); do
                for who in old new; do
                        bin=$OLD; [ $who = new ] && bin=$NEW
                        copy=$WORK/copy-$who
                        rm -rf "$copy"; cp -a "$BASE" "$copy"; warm "$copy"; sync
                        run_once "${who}_real_$kind" "$bin" -c "$HERE/policies/$kind.conf" --root "$copy" \
                                --now @$NOW_EPOCH --force --log-target stderr || true
                done
                listing "$WORK/copy-old" >"$WORK/l.old"; listing "$WORK/copy-new" >"$WORK/l.new"
                acted=$(find "$WORK/copy-new" -path '*/chats/*.jsonl' -not -path '*/archive/*' | wc -l)
                echo "ab.sh: real $kind rep $i: $acted active transcripts left (of $REAL)" >&2
                cmp -s "$WORK/l.old" "$WORK/l.new" || echo "ab.sh: real $kind trees DIFFER (rep $i)" >&2
                cmp -s <(cat "$WORK/copy-old/usage_record.jsonl" 2>/dev/null) \
                       <(cat "$WORK/copy-new/usage_record.jsonl" 2>/dev/null) &&
                        echo "ab.sh: real $kind rep $i: usage_record.jsonl identical" >&2 ||
                        echo "ab.sh: real $kind usage_record.jsonl DIFFERS (rep $i)" >&2
                if [ "$SHARED_ROWS" -gt 0 ]; then
                        shared() { (cd "$1" && find tmp projects -maxdepth 2 \( -name logs.json -o \
                                -name session-organization.v1.json \) -print0 | sort -z | xargs -0 -r cat); }
                        cmp -s <(shared "$WORK/copy-old") <(shared "$WORK/copy-new") &&
                                echo "ab.sh: real $kind rep $i: shared files identical ($(shared "$WORK/copy-new" |
                                        grep -c '^    "sessionId": "') logs.json rows left)" >&2 ||
                                echo "ab.sh: real $kind shared files DIFFER (rep $i)" >&2
                fi
                rm -rf "$WORK"/copy-*
        done
        ROWS+=("real_$kind")
done
rm -rf "$BASE"

echo "| row | old: wall / CPU | new: wall / CPU | wall new/old | CPU new/old |"
echo "|---|---|---|---|---|"
for r in "${ROWS[@]}"; do report "$r"; done
echo "(medians; dry runs: $REPS reps on $SESSIONS sessions; real runs: $REAL_REPS reps on $REAL sessions; load average $(cut -d' ' -f1-3 /proc/loadavg))"
