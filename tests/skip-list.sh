#!/bin/sh
# skip-list.sh BUILDDIR...: every SKIP of the last `make check` in each BUILDDIR, one line each
# with its reason, then their count. The reason of a test script is its last "SKIP: WHY" line
# (lib.sh's skip, judge_missing, finish() for skipped parts); the reason of a cmocka case is the
# "# SKIP: WHY" comment that test_skip() (tests/common/testskip.h) prints before the case's
# result. Exits 1 when a SKIP gave no reason. .ci/run prints this list at the end.
set -eu
list=$(
for b in "$@"; do
        [ -d "$b/tests" ] || continue
        find "$b/tests" -name '*.trs' | LC_ALL=C sort | while read -r trs; do
                grep -q '^:test-result: SKIP' "$trs" || continue
                name=${trs#"$b"/}
                name=${name%.trs}
                log=${trs%.trs}.log
                [ -f "$log" ] || { echo "SKIP $b $name: no reason given (no log)"; continue; }
                LC_ALL=C awk -v b="$b" -v name="$name" '
                        # a TAP result line of this program (tap-driver.sh): "SKIP: NAME 8 # SKIP case"
                        /^(PASS|FAIL|XFAIL|XPASS|ERROR|SKIP): / && index($0, ": " name " ") == index($0, ":") {
                                tap = 1
                                if ($0 ~ /^SKIP: /) {
                                        c = $0
                                        sub(/.*# SKIP */, "", c)
                                        print "SKIP " b " " name " " c ": " (why != "" ? why : "no reason given")
                                }
                                why = ""
                                next
                        }
                        /^# SKIP: / { why = substr($0, 9); next }
                        /^SKIP: / { last = substr($0, 7) }
                        END {
                                if (!tap)
                                        print "SKIP " b " " name ": " (last != "" ? last : "no reason given")
                        }' "$log"
        done
done
)
[ -z "$list" ] || printf '%s\n' "$list"
n=$(printf '%s' "$list" | grep -c '^SKIP ' || true)
bad=$(printf '%s' "$list" | grep -c ': no reason given' || true)
echo "skip-list: $n SKIP(s) (test scripts and cmocka cases), $bad without a reason"
[ "$bad" = 0 ]
