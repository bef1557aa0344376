#!/bin/sh
# Admin controls (issue 11): restore by prefix and by project, with errors that say "restore"
# and name the path; bad arguments that name what is wrong; per-project protect; drop-ins.
. "$(dirname "$0")/lib.sh"
NOW=2027-04-01T00:00:00Z

expect_rc() { # expect_rc RC ARGS...: no system policy but one ARGS names
        want=$1; shift
        set +e; timeout 60 "$QGC" --system-config "$T/no-system.conf" "$@" > "$T/out" 2> "$T/err"; rc=$?; set -e
        [ "$rc" = "$want" ] || { cat "$T/out" "$T/err"; fail "qgc $*: exit $rc, expected $want"; }
}

# --- restore: a unique prefix, --project, one line on success, "restore" and the path on failure
r=$(make_tree restore)
expect_rc 0 --root "$r" --now $NOW -c "$QGC_TESTDATA/integration/apply.conf" --log-file "$T/log"
[ -f "$r/projects/-srv-demo-webapp/chats/archive/dd3dc65a-7d32-4843-a56c-9eef3a13391d.jsonl" ] || fail "setup: dd3dc65a not archived"
expect_rc 0 -n restore --root "$r" dd3dc65a
grep -q "^would restore session dd3dc65a-7d32-4843-a56c-9eef3a13391d:" "$T/out" || { cat "$T/out"; fail "restore -n by prefix"; }
expect_rc 0 restore --root "$r" dd3d --log-file "$T/log"
[ "$(wc -l < "$T/out")" = 1 ] && grep -q "^qgc: restored session dd3dc65a-7d32-4843-a56c-9eef3a13391d into $r/projects/-srv-demo-webapp/chats$" "$T/out" || { cat "$T/out"; fail "restore: not one line on success"; }
[ -f "$r/projects/-srv-demo-webapp/chats/dd3dc65a-7d32-4843-a56c-9eef3a13391d.jsonl" ] || fail "restore by prefix did not restore"
expect_rc 1 restore --root "$r" dd3dc65a --log-file "$T/log"
# restoring an active session is the person's mistake (issue 24.1): an error line that names
# the tree, nothing journaled, no failure counted
grep -q "restore: session dd3dc65a-7d32-4843-a56c-9eef3a13391d is not archived (it is in '$r'): nothing to restore" "$T/err" || { cat "$T/err"; fail "restore of an active session: no error naming it"; }
! grep -q "QGC_ACTION=failed\|QGC_FAILED=1" "$T/log" || { tail -3 "$T/log"; fail "journal: a typo logged as a failed restore"; }
grep -q "failed delete" "$T/log" && fail "journal: a restore logged as a delete"
expect_rc 1 restore --root "$r" nosuch
grep -q "restore: no session 'nosuch' in '$r'" "$T/err" || { cat "$T/err"; fail "restore typo: no path named"; }
f=$(make_tree fresh)
expect_rc 64 -n restore --root "$f" 6
grep -q "restore: '6' names more than one session" "$T/err" || { cat "$T/err"; fail "ambiguous prefix not refused"; }
expect_rc 0 -n restore --root "$r" --project /srv/demo/scratch
grep -q "^would restore session 1a914264-" "$T/out" || { cat "$T/out"; fail "restore --project -n"; }
expect_rc 0 restore --root "$r" --project /srv/demo/webapp
grep -q "^qgc: restored session aefd2a51-" "$T/out" || { cat "$T/out"; fail "restore --project"; }
expect_rc 1 restore --root "$r" --project /srv/demo/nope
grep -q "restore: project '/srv/demo/nope' has no archived session in '$r'" "$T/err" || { cat "$T/err"; fail "restore --project: no path named"; }
expect_rc 64 --project /srv/demo/webapp --root "$r"
# --- bad arguments name what is wrong
expect_rc 66 --dry-run --root "$T/no/such/dir"
grep -q -- "--root '$T/no/such/dir'" "$T/err" || { cat "$T/err"; fail "-r DIR: the path is not named"; }
grep -q "no sessions found" "$T/out" && fail "-r DIR that does not exist: 'no sessions found'"
expect_rc 1 --root "$f" -c "$QGC_TESTDATA/integration/empty.conf" --log-file "$T/no/such/log"
grep -q -- "--log-file '$T/no/such/log'" "$T/err" || { cat "$T/err"; fail "--log-file: the path is not named"; }
if [ "$(id -u)" = 0 ]; then
        # a copy nobody can run (the build tree may be below a home only root can enter)
        mkdir -p "$T/bin" && cp "$QGC" "$T/bin/qgc" && chmod 755 "$T" "$T/bin" "$T/bin/qgc"
        set +e; runuser -u nobody -- "$T/bin/qgc" --all-users --dry-run > "$T/out" 2> "$T/err"; rc=$?; set -e
else
        set +e; "$QGC" --all-users --dry-run > "$T/out" 2> "$T/err"; rc=$?; set -e
fi
[ $rc = 77 ] || { cat "$T/err"; fail "--all-users as a normal user: exit $rc, expected 77"; }
grep -q "needs root" "$T/err" || fail "--all-users as a normal user: no reason"

# --- --now: +7d from the real clock; a time without a zone is local time
expect_rc 0 --dry-run --json --root "$f" -c "$QGC_TESTDATA/integration/empty.conf" --now +7d
python3 - "$T/out" <<'PY' || fail "--now +7d is not a week from now"
import json, sys, time
now = json.load(open(sys.argv[1]))["now_ms"] / 1000
assert abs(now - (time.time() + 7 * 86400)) < 120, now
PY
expect_rc 64 --dry-run --root "$f" --now +7x
if [ -e /usr/share/zoneinfo/America/New_York ]; then
        TZ=America/New_York expect_rc 0 --dry-run --json --root "$f" -c "$QGC_TESTDATA/integration/empty.conf" --now 2027-01-01
        grep -q '"now": "2027-01-01T05:00:00Z"' "$T/out" || fail "--now DATE without a zone is not local time"
        TZ=America/New_York expect_rc 0 --dry-run --json --root "$f" -c "$QGC_TESTDATA/integration/empty.conf" --now "2027-07-01 12:30"
        grep -q '"now": "2027-07-01T16:30:00Z"' "$T/out" || fail "--now TIME without a zone is not local time (DST)"
fi
TZ=America/New_York expect_rc 0 --dry-run --json --root "$f" -c "$QGC_TESTDATA/integration/empty.conf" --now 2027-01-01T00:00:00Z
grep -q '"now": "2027-01-01T00:00:00Z"' "$T/out" || fail "--now with Z is not UTC"
# --- protect = true: nothing touches the project, tree caps included; --explain shows it
p=$(make_tree protect)
cat > "$T/protect.conf" <<'CONF'
defaults = { action = "delete"; max-age = "30d"; keep-latest = 0; max-deletions = "off";
             max-deletions-percent = "off"; };
tree = { max-size = "1K"; };
projects = ( { path = "/srv/demo/webapp"; protect = true; } );
CONF
expect_rc 0 --changes --root "$p" --now $NOW -c "$T/protect.conf"
grep -q "/srv/demo/webapp" "$T/out" && { cat "$T/out"; fail "protect: a change in the protected project"; }
grep -q "would delete .*/srv/demo/api-server" "$T/out" || { cat "$T/out"; fail "protect: the test proves nothing"; }
expect_rc 0 --dry-run --root "$p" --now $NOW -c "$T/protect.conf"
grep -q "keep .*kept: protected project (protect = true) (a rule would select it: delete for " "$T/out" || { cat "$T/out"; fail "protect: no reason in the plan"; }
expect_rc 0 check-config --explain -c "$T/protect.conf"
grep -q "# protected: no rule touches this project" "$T/out" || { cat "$T/out"; fail "--explain does not show protect"; }
grep -q "protect *true" "$T/out" || fail "--explain: no protect value"
# --- drop-ins: conf.d/*.conf next to the system file, after it, in lexical order, listed
mkdir -p "$T/etc/conf.d"
printf 'defaults = { max-age = "100d"; };\n' > "$T/etc/qgc.conf"
printf 'defaults = { max-age = "50d"; keep-latest = 3; };\n' > "$T/etc/conf.d/20-b.conf"
printf 'defaults = { max-age = "70d"; };\nadmin = { allow-user-files = false; };\n' > "$T/etc/conf.d/10-a.conf"
printf 'defaults = { max-age = "1d"; };\n' > "$T/etc/conf.d/30-c.conf.disabled"
XDG_CONFIG_HOME="$T/noxdg" expect_rc 0 --system-config "$T/etc/qgc.conf" check-config --explain
grep -q "^files: $T/etc/qgc.conf $T/etc/conf.d/10-a.conf $T/etc/conf.d/20-b.conf$" "$T/out" || { cat "$T/out"; fail "--explain does not list the drop-ins in order"; }
grep -q "max-age *50d *$T/etc/conf.d/20-b.conf:1" "$T/out" || { cat "$T/out"; fail "the last drop-in does not win"; }
grep -q "allow-user-files *false" "$T/out" || fail "admin settings refused in a drop-in"
grep -q "30-c" "$T/out" && fail "a file not ending in .conf was read"
printf 'defaults = { max-age = "50q"; };\n' > "$T/etc/conf.d/40-bad.conf"
XDG_CONFIG_HOME="$T/noxdg" expect_rc 78 --system-config "$T/etc/qgc.conf" check-config
grep -q "$T/etc/conf.d/40-bad.conf:1:" "$T/err" || { cat "$T/err"; fail "a drop-in error has no file:line"; }
pass "admin controls"
