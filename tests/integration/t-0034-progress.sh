#!/bin/sh
# t-0034-progress: a real run over thousands of sessions on a terminal shows its progress on
# stderr (done/total, bytes), one line rewritten in place and erased at the end; none when
# stderr is not a terminal, none under --quiet (issue 11). The terminal is script(1)'s pty.
. "$(dirname "$0")/lib.sh"

have_pty || skip "no pseudo-terminal here (script(1) missing, or no /dev/pts)"
command -v cc >/dev/null 2>&1 || skip "no C compiler for the tree generator"
cc -O2 -o "$T/gen-tree" "$QGC_SRCDIR/bench/gen-tree.c" -lm || fail "cannot build gen-tree"
# sessions 30 to 400 days old (min-idle and every grace long past by the real clock)
gen() { "$T/gen-tree" --projects 100 --sessions 150 --min-age-days 30 --archive-pct 0 \
        --now "$(date +%s)" "$1" > /dev/null || fail "gen-tree"; }
# A delete run: an archive run of 15,000 sessions (a rename each) can end within the 0.5 s
# before the first progress line on a quiet machine; deleting them (every file read for its
# usage line, unlinked, sidecars and file-history with them) cannot, as cat + rm of the same
# files already takes longer (bench/ row e).
printf 'defaults = { action = "delete"; max-age = "7d"; keep-latest = 0; min-age = "1d"; };\n' \
        > "$T/policy.conf"

gen "$T/tty"
script -qec "'$QGC' --force --root '$T/tty' -c '$T/policy.conf' --log-file '$T/tty.log' 2>'$T/tty.err'" \
        /dev/null > /dev/null || { cat "$T/tty.err"; fail "the run on a terminal"; }
# stderr went to a file there: no progress (it is not a terminal)
[ ! -s "$T/tty.err" ] || { cat "$T/tty.err"; fail "progress written to a file"; }

gen "$T/tty2"
script -qec "'$QGC' --force --root '$T/tty2' -c '$T/policy.conf' --log-file '$T/tty2.log'" \
        "$T/typescript" > /dev/null || fail "the run on a terminal"
grep -a -q "qgc: [0-9]*/[0-9]* sessions, " "$T/typescript" ||
        { tail -c 600 "$T/typescript"; fail "no progress line on the terminal"; }
grep -a -q "deleted [1-9]" "$T/typescript" || fail "the run deleted nothing"
n=$(find "$T/tty2/projects" -name '*.jsonl' -path '*/chats/*' | wc -l)
[ "$n" -le 5000 ] || fail "$n of 15000 sessions left"

gen "$T/quiet"
script -qec "'$QGC' --force --quiet --root '$T/quiet' -c '$T/policy.conf' --log-file '$T/quiet.log'" \
        "$T/typescript.quiet" > /dev/null || fail "the quiet run"
! grep -a -q "sessions, " "$T/typescript.quiet" || fail "progress under --quiet"
pass "progress on a terminal only, and not under --quiet"
