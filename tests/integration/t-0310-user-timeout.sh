#!/bin/sh
# t-0310-user-timeout: in `qgc --all-users` a user owns the child that works on their tree (it
# dropped to the user's uid), so the user can stop it with SIGSTOP. The root parent must not wait
# for it for ever (issue 23.1): past admin.user-timeout it kills the child, reports that user as
# failed (stderr, and a user-failed entry at priority err with QGC_USER), exits 1, and still
# processes the next user. Real users (useradd); root only (else SKIP, 77). qgc runs with the
# capabilities qgc.service leaves it (setpriv --bounding-set).
#
# The user stops the child with SIGSTOP from the user's uid, as soon as it runs as the user (a
# loop of pkill as that user; the user's tree has 1500 more sessions, so that the child lives
# long enough to be caught). The old code waited in read() and waitpid() for ever: the whole run
# is given 60 s (timeout(1)), so it FAILs rather than hangs.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (creates users)"
users_lock
for c in useradd userdel runuser getent pkill timeout python3; do
        command -v $c >/dev/null 2>&1 || skip "$c is not installed"
done

NOW=2040-01-01T00:00:00Z
P="qgu$$"
X="${P}x" V="${P}v" # the user who stops the child, then the next user (passwd order)
created="" holder=""
users_cleanup() {
        [ -z "$holder" ] || kill "$holder" 2>/dev/null || true
        for u in $created; do
                pkill -KILL -u "$u" 2>/dev/null || true
                userdel -r "$u" >/dev/null 2>&1 || userdel "$u" >/dev/null 2>&1 || true
        done
}
trap 'users_cleanup; cleanup' EXIT
trap 'exit 99' INT TERM HUP

chmod 755 "$T"
mkdir -m 755 "$T/home"
for u in $X $V; do
        useradd -m -b "$T/home" -s /usr/sbin/nologin "$u" || fail "useradd $u"
        created="$created $u"
        h="$T/home/$u"
        chmod 755 "$h"
        mkdir "$h/.qwen"
        cp -a "$QGC_TESTDATA/corpus/tree/." "$h/.qwen/"
        find "$h/.qwen" -exec touch -h -d 2026-11-01T00:00:00Z {} +
        chown -R "$u:$(id -gn "$u")" "$h/.qwen"
        chmod -R u+w,go-w "$h/.qwen"
done
VQ="$T/home/$V/.qwen"

# other users' real trees are hidden (as in t-0300)
others=$(getent passwd | awk -F: -v p="$P" 'index($1, p) != 1 { print $6 }' | sort -u |
         while read -r h; do
                 if [ -n "$h" ] && [ -e "$h/.qwen" ]; then echo "$h"; fi
         done)
[ -z "$(echo "$others" | grep -x /)" ] || skip "a user's home is / and holds .qwen"
NS=""
if [ -n "$others" ]; then
        command -v unshare >/dev/null 2>&1 || skip "other users have Qwen trees and unshare is missing"
        unshare -m --propagation private true 2>/dev/null ||
                skip "other users have Qwen trees and mount namespaces are not available"
        NS=yes
fi
export QGC_HIDE="$others"

cat > "$T/qgc.conf" <<'CONF'
defaults = { action = "archive"; max-age = "7d"; };
admin = { allow-user-files = true; user-timeout = "3s"; };
CONF
chmod 644 "$T/qgc.conf"

# many idle sessions for X: the child's run takes long enough to be caught
python3 - "$T/home/$X/.qwen/projects/-srv-demo-api-server/chats" <<'PY'
import os, sys, uuid
d = sys.argv[1]
src = "122b1556-a4f5-48b6-9bf1-eae6bac23f87"
text = open(os.path.join(d, src + ".jsonl")).read()
for i in range(1500):
    sid = str(uuid.UUID(int=i + 1, version=4))
    p = os.path.join(d, sid + ".jsonl")
    with open(p, "w") as f:
        f.write(text.replace(src, sid))
    os.utime(p, (1793491200, 1793491200)) # 2026-11-01
PY
chown -R "$X:$(id -gn "$X")" "$T/home/$X/.qwen"

# X stops every qgc process of X's as soon as there is one: the child, right after its drop
runuser -u "$X" -- timeout 60 sh -c 'until pkill -e -STOP -u "$1" -x "$2"; do :; done' sh \
        "$X" "$(basename "$QGC")" > "$T/stopped" 2>&1 &
holder=$!

# the capabilities qgc.service leaves root (CapabilityBoundingSet=): killing the user's child
# must work with them (it needs CAP_KILL: the child is the user's)
: "${QGC_SRCDIR:?}"
command -v setpriv >/dev/null 2>&1 || skip "setpriv is not installed"
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$QGC_SRCDIR/systemd/qgc.service.in" |
       tr 'A-Z' 'a-z' | sed 's/cap_//g; s/ /,+/g')
[ -n "$caps" ] || fail "qgc.service has no CapabilityBoundingSet="
export BOUND="-all,+$caps"

# run (in the background): the whole --all-users run, bounded so that a hang FAILs
(
        if [ -n "$NS" ]; then
                exec unshare -m --propagation private sh -c '
                        for h in $QGC_HIDE; do mount -t tmpfs -o mode=0755,size=1m qgc-hide "$h" || exit 99; done
                        exec setpriv --bounding-set "$BOUND" timeout 60 "$@"' sh "$QGC" --user "$X" \
                        --user "$V" --system-config "$T/qgc.conf" --now "$NOW" --log-file "$T/actions.log"
        else
                exec setpriv --bounding-set "$BOUND" timeout 60 "$QGC" --user "$X" --user "$V" \
                        --system-config "$T/qgc.conf" --now "$NOW" --log-file "$T/actions.log"
        fi
) > "$T/run.out" 2> "$T/run.err" &
runpid=$!

wait $holder || true
holder=""
child=$(sed -n 's/.* (pid \([0-9]*\))$/\1/p' "$T/stopped" | head -n 1)
[ -n "$child" ] || { cat "$T/stopped"; kill $runpid 2>/dev/null; fail "$X stopped no child of qgc"; }
state=$(awk '{ print $3 }' "/proc/$child/stat" 2>/dev/null || echo gone)
i=0
while [ "$state" != T ] && [ $i -lt 1000 ]; do # SIGSTOP is delivered asynchronously
        state=$(awk '{ print $3 }' "/proc/$child/stat" 2>/dev/null || echo gone)
        i=$((i + 1))
done
[ "$state" = T ] || { kill $runpid 2>/dev/null; fail "$X's child $child is in state '$state', not stopped"; }
echo "$X's child $child stopped by $X"

set +e
wait $runpid
rc=$?
set -e
cat "$T/run.out" "$T/run.err"
[ $rc -ne 124 ] || fail "the --all-users run hung on the stopped child (killed by timeout after 60 s)"
[ $rc -eq 1 ] || fail "--all-users with a user's run killed at the deadline exited $rc, not 1"
grep -q "qgc: $X: failed: no end after admin.user-timeout (3s): killed" "$T/run.err" ||
        fail "no failure line for $X"
[ ! -d "/proc/$child" ] || [ "$(awk '{ print $3 }' "/proc/$child/stat")" = Z ] ||
        fail "$X's child $child is still there"
pass "the stopped child was killed at the deadline; exit 1"

grep -q "qgc: $V: ok" "$T/run.err" || fail "the next user $V was not processed"
ls -d "$VQ"/projects/*/chats/archive >/dev/null 2>&1 || fail "$V: nothing was archived"
grep -q "qgc: users: 1 ok, 1 failed, 0 skipped" "$T/run.err" || fail "no per-user tally"
pass "the next user was processed"

# the action log: a user-failed entry at priority err with QGC_USER
grep "QGC_ACTION=user-failed" "$T/actions.log" > "$T/failed.log" || fail "no user-failed entry"
grep -q "QGC_USER=$X" "$T/failed.log" || fail "the user-failed entry has no QGC_USER=$X"
grep -q "PRIORITY=3" "$T/failed.log" || fail "the user-failed entry is not at priority err"
grep -q "QGC_REASON=.*user-timeout" "$T/failed.log" || fail "the user-failed entry has no reason"
pass "user-failed entry at priority err with QGC_USER"

exit 0
