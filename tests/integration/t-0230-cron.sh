#!/bin/sh
# t-0230-cron: the line of etc/cron.d/qgc defers to systemd entirely (issue 23.8): on a machine
# booted with systemd (/run/systemd/system exists) it does nothing, whether qgc.timer runs or
# not; without systemd it runs qgc --all-users --quiet; with qgc not installed it does nothing and
# prints nothing. The line runs under sh with a stub qgc first in PATH, in a private mount
# namespace whose /run/systemd is a tmpfs with or without system/. Root and unshare, else SKIP.
. "$(dirname "$0")/lib.sh"

: "${QGC_SRCDIR:?}"
[ "$(id -u)" = 0 ] || skip "needs root (a mount namespace)"
command -v unshare >/dev/null 2>&1 || skip "no unshare"
unshare -m --propagation private true 2>/dev/null || skip "mount namespaces are not available"

line=$(grep -E '^[0-9*]' "$QGC_SRCDIR/etc/cron.d/qgc")
[ "$(echo "$line" | wc -l)" = 1 ] || fail "etc/cron.d/qgc has not one line: $line"
cmd=$(echo "$line" | awk '{ $1 = $2 = $3 = $4 = $5 = $6 = ""; print }')
[ "$(echo "$line" | awk '{ print $6 }')" = root ] || fail "the cron line does not run as root: $line"
mkdir -p "$T/stub" "$T/empty"
printf '#!/bin/sh\necho "$*" > "%s/ran"\n' "$T" > "$T/stub/qgc"
chmod 755 "$T/stub/qgc"

# cron_runs SYSTEMD PATH: 0 when the line started (the stub) qgc; SYSTEMD=yes makes
# /run/systemd/system. Its output goes to $T/out (cron would mail it).
cron_runs() {
        rm -f "$T/ran"
        unshare -m --propagation private sh -c '
                mkdir -p /run/systemd && mount -t tmpfs -o mode=0755 qgc-cron /run/systemd || exit 99
                if [ "$1" = yes ]; then mkdir /run/systemd/system; fi
                PATH=$2 exec /bin/sh -c "$3"' sh "$1" "$2" "$cmd" > "$T/out" 2>&1
        [ $? != 99 ] || fail "cannot mount a tmpfs on /run/systemd"
        [ -e "$T/ran" ]
}

cron_runs no "$T/stub" || fail "without systemd the cron line did not start qgc"
[ "$(cat "$T/ran")" = "--all-users --quiet --random-delay 1h" ] ||
        fail "the cron line ran qgc $(cat "$T/ran")"
pass "without systemd the cron line runs qgc --all-users --quiet"

! cron_runs yes "$T/stub" || fail "on a systemd machine the cron line started qgc"
[ ! -s "$T/out" ] || fail "on a systemd machine the cron line printed (cron would mail): $(cat "$T/out")"
pass "on a systemd machine the cron line does nothing, timer or not"

! cron_runs no "$T/empty" || fail "the cron line found a qgc that is not installed"
[ ! -s "$T/out" ] || fail "without qgc the cron line printed (cron would mail): $(cat "$T/out")"
pass "without qgc installed the cron line does nothing and prints nothing"
exit 0
