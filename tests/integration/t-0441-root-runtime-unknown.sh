#!/bin/sh
# t-0441-root-runtime-unknown: in root mode (--all-users), a user whose runtime root is not known
# (a ~/.qwen/settings.json Qwen could not use) is a failure, not a silent skip: the run exits 1
# and the summary names the reason; that tree is not touched. Root only (else SKIP, 77).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (creates a user)"
users_lock # held to the end: t-0300 counts every user of the system
for c in useradd userdel getent; do
        command -v $c >/dev/null 2>&1 || skip "$c is not installed"
done

U="qgu$$"
created=""
trap '[ -z "$created" ] || userdel -r "$U" >/dev/null 2>&1 || userdel "$U" >/dev/null 2>&1 || true; cleanup' EXIT
trap 'exit 99' INT TERM HUP

chmod 755 "$T"
mkdir -m 755 "$T/home"
useradd -m -b "$T/home" -s /usr/sbin/nologin "$U" || fail "useradd"
created=yes
h="$T/home/$U"
chmod 755 "$h"
mkdir "$h/.qwen"
cp -a "$QGC_TESTDATA/corpus/tree/." "$h/.qwen/"
find "$h/.qwen" -exec touch -h -d 2026-11-01T00:00:00Z {} +
# a trailing comma: Qwen cannot use the file, so the runtime root is not known
printf '{ "advanced": { "runtimeOutputDir": "/srv/rt", } }\n' > "$h/.qwen/settings.json"
chown -R "$U:$(id -gn "$U")" "$h/.qwen"
chmod -R u+w,go-w "$h/.qwen"

cat > "$T/qgc.conf" <<'CONF'
defaults = { action = "delete"; max-age = "7d"; };
CONF
chmod 644 "$T/qgc.conf"
snapshot "$h/.qwen" "$T/before"
set +e
timeout 120 "$QGC" --system-config "$T/qgc.conf" --all-users --user "$U" --now 2040-01-01T00:00:00Z \
        > "$T/out" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || { cat "$T/out"; fail "a tree whose runtime root is not known: exit $rc, not 1"; }
grep -q "$U: failed: .*user settings file .* cannot be used as Qwen reads it" "$T/out" ||
        { cat "$T/out"; fail "no reason for the failed user"; }
grep -q "1 failed" "$T/out" || { cat "$T/out"; fail "the summary does not count the failure"; }
snapshot "$h/.qwen" "$T/after"
# settings.json itself is read (its atime moves); nothing else may change
diff "$T/before" "$T/after" | grep -v '^[<>] settings.json ' | grep -q '^[<>]' && fail "the tree changed although its runtime root is not known"
pass "root mode: a runtime root that is not known fails the run (exit 1) with the reason"
finish
