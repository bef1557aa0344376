#!/bin/sh
# t-0200-units: every systemd unit passes `systemd-analyze verify`, and the system service's
# `systemd-analyze security` exposure is 3.0 or lower. SKIP (77) without systemd-analyze.
. "$(dirname "$0")/lib.sh"
: "${QGC_SRCDIR:?QGC_SRCDIR must name the source tree}"

command -v systemd-analyze >/dev/null 2>&1 || skip "systemd-analyze is not installed"
[ -x "$QGC" ] || fail "no qgc binary at $QGC"

# Temporary copies, with ExecStart running the qgc just built (verify checks it exists).
mkdir -p "$T/system" "$T/user" "$T/run"; chmod 700 "$T/run"
for u in system/qgc.service system/qgc.timer user/qgc.service user/qgc.timer; do
        src="$QGC_SRCDIR/systemd/${u#system/}"
        [ -f "$src" ] || src="$src.in"
        [ -f "$src" ] || fail "missing unit source for $u"
        sed -e "s|@bindir@/qgc|$QGC|g" "$src" > "$T/$u"
        ! grep -q '@[a-z]*@' "$T/$u" || fail "$u: unsubstituted @...@ left"
done
grep -q "^ExecStart=$QGC --all-users --quiet\$" "$T/system/qgc.service" ||
        fail "system service does not run qgc --all-users --quiet"
grep -q "^ExecStart=$QGC --quiet\$" "$T/user/qgc.service" ||
        fail "user service does not run qgc --quiet"
! grep -q -- '--all-users' "$T/user/qgc.service" || fail "user service must not use --all-users"

# The installed units (made by make from the .in files) carry the configured bindir.
if [ -f "${QGC_BUILDDIR:-}/systemd/qgc.service" ]; then
        grep -q '^ExecStart=/.*/qgc --all-users --quiet$' "$QGC_BUILDDIR/systemd/qgc.service" ||
                fail "built systemd/qgc.service has no absolute ExecStart"
fi

# verify: man pages are not installed in a build tree, so --man=no.
for mode in system user; do
        for u in "$T/$mode/qgc.service" "$T/$mode/qgc.timer"; do
                if [ $mode = user ]; then
                        out=$(cd "$T/$mode" && XDG_RUNTIME_DIR="$T/run" systemd-analyze --user --man=no verify "$u" 2>&1) ||
                                { echo "$out" >&2; fail "verify --user $u"; }
                else
                        out=$(cd "$T/$mode" && systemd-analyze --man=no verify "$u" 2>&1) ||
                                { echo "$out" >&2; fail "verify $u"; }
                fi
                # verify exits 0 on some warnings: treat any output about our unit as a failure
                if echo "$out" | grep -q "qgc\.\(service\|timer\)"; then
                        echo "$out" >&2
                        fail "verify printed warnings for $u"
                fi
        done
done
pass "systemd-analyze verify: 4 units"

# A broken unit must be caught (the check can fail).
sed -e 's/^Type=oneshot/Type=bogus/' "$T/system/qgc.service" > "$T/broken.service"
if (cd "$T" && systemd-analyze --man=no verify "$T/broken.service") >"$T/broken.out" 2>&1 &&
   ! grep -q "broken.service" "$T/broken.out"; then
        fail "systemd-analyze verify accepted a broken unit"
fi

# Timer settings required by the issue.
for t in "$T/system/qgc.timer" "$T/user/qgc.timer"; do
        grep -q '^OnCalendar=daily$' "$t" || fail "$t: not daily"
        grep -q '^RandomizedDelaySec=' "$t" || fail "$t: no RandomizedDelaySec"
        grep -q '^Persistent=true$' "$t" || fail "$t: not Persistent"
done
grep -q '^Type=oneshot$' "$T/system/qgc.service" || fail "system service is not Type=oneshot"
# a oneshot has no start timeout by default: one that never ended would stop the timer for
# good (issue 23.1). It must leave room above admin.user-timeout's default (30min), by which qgc
# kills one user's run itself.
ts=$(sed -n 's/^TimeoutStartSec=\([0-9]*\)h$/\1/p' "$T/system/qgc.service")
[ -n "$ts" ] && [ "$ts" -ge 2 ] || fail "system service: no TimeoutStartSec= of hours (got '$ts')"

# Every admin.KEY a unit's comment names is a key of the policy (issue 24.12d: "users-dirs").
keys=$("$QGC" check-config -c /dev/null --explain 2>/dev/null |
        sed -n '/^admin/,$s/^ *\([a-z][a-z-]*\) .*/\1/p')
[ -n "$keys" ] || fail "cannot list the admin keys (qgc check-config --explain)"
named=$(cat "$T"/system/qgc.* "$T"/user/qgc.* | grep '^#' | grep -o 'admin\.[a-z-]*' | sort -u)
[ -n "$named" ] || fail "the units' comments name no admin key"
for k in $named; do
        echo "$keys" | grep -qx "${k#admin.}" || fail "a unit's comment names $k, which is no admin key"
done

# The catalog's text fits every entry of its kind (issue 24.12i: "archived ... with its
# .worktree.json, .pr.json and .ledger.jsonl sidecars" for sessions that had none): the session
# entries name no particular sidecar file.
python3 - "$QGC_SRCDIR/systemd/qgc.catalog" <<'PY' || fail "a catalog entry claims sidecars a session may not have"
import re, sys
for e in re.split(r'^-- ', open(sys.argv[1]).read(), flags=re.M)[1:]:
    mid, body = e.split("\n", 1)
    for name in (".worktree.json", ".pr.json", ".ledger.jsonl"):
        if name in body:
            print(f"{mid}: names {name}"); sys.exit(1)
PY

# The metrics file at its documented place (issue 24.9: qgc.conf's example of admin.metrics-file,
# Debian's node_exporter textfile directory) is writable without a drop-in: under
# ProtectSystem=strict its directory is one of the ReadWritePaths= ("-": only where it exists).
grep -q '^ProtectSystem=strict$' "$T/system/qgc.service" || fail "the system service is not ProtectSystem=strict"
mdir=$(sed -n 's|^#[[:space:]]*metrics-file = "\(/.*\)/[^/]*";$|\1|p' "$QGC_SRCDIR/etc/qgc.conf")
[ -n "$mdir" ] || fail "etc/qgc.conf has no metrics-file example"
sed -n 's/^ReadWritePaths=//p' "$T/system/qgc.service" | tr ' ' '\n' | grep -qx -- "-\?$mdir" ||
        fail "qgc.service cannot write the metrics file's default directory $mdir (no ReadWritePaths=)"

# security: exposure <= 3.0.
out=$(systemd-analyze security --offline=true "$T/system/qgc.service" 2>&1) || {
        # older systemd-analyze without --offline
        if echo "$out" | grep -q "unrecognized option"; then
                skip "systemd-analyze security has no --offline"
        fi
        echo "$out" >&2
        fail "systemd-analyze security failed"
}
level=$(echo "$out" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9][0-9]*\.[0-9]\).*/\1/p')
[ -n "$level" ] || { echo "$out" >&2; fail "no 'Overall exposure level' line"; }
awk -v l="$level" 'BEGIN { exit !(l <= 3.0) }' || {
        echo "$out" | grep '✗' >&2
        fail "exposure $level > 3.0"
}
pass "systemd-analyze security: exposure $level <= 3.0"
exit 0
