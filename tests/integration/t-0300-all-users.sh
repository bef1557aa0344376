#!/bin/sh
# t-0300-all-users: `qgc --all-users` as root, with real users (useradd). Each tree is changed as
# its user; an unsafe tree is skipped with a reason; a user who planted symlinks to root-owned
# files or turned chats/ into a symlink into another tree changes nothing outside their own tree;
# --all-users as a non-root user fails with a clear message. Root only (else SKIP, 77).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (creates users)"
users_lock # held to the end: t-0300 counts every user of the system
for c in useradd userdel runuser getent python3; do
        command -v $c >/dev/null 2>&1 || skip "$c is not installed"
done

NOW=2040-01-01T00:00:00Z
P="qgt$$"                      # unique prefix; the users are removed on exit
USERS="${P}a ${P}b ${P}e ${P}c" # alice, bob, evil, carol
created=""
users_cleanup() {
        for u in $created; do userdel -r "$u" >/dev/null 2>&1 || userdel "$u" >/dev/null 2>&1 || true; done
}
trap 'users_cleanup; cleanup' EXIT
trap 'exit 99' INT TERM HUP

chmod 755 "$T"
mkdir -m 755 "$T/home" "$T/bin"
for u in $USERS; do
        useradd -m -b "$T/home" -s /usr/sbin/nologin "$u" || fail "useradd $u"
        created="$created $u"
        h="$T/home/$u"
        chmod 755 "$h"
        mkdir "$h/.qwen"
        cp -a "$QGC_TESTDATA/corpus/tree/." "$h/.qwen/"
        # written long ago: a real run measures min-idle with the real clock, not --now
        find "$h/.qwen" -exec touch -h -d 2026-11-01T00:00:00Z {} +
        chown -R "$u:$(id -gn "$u")" "$h/.qwen"
        chmod -R u+w,go-w "$h/.qwen"
done
A="$T/home/${P}a/.qwen" B="$T/home/${P}b/.qwen" E="$T/home/${P}e/.qwen" C="$T/home/${P}c/.qwen"

# Other users' real trees must not be touched by this test: hide every other home holding a
# .qwen behind an empty tmpfs in a private mount namespace, or skip.
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
# qgc_root ARGS: run qgc as root with the test policy, other homes hidden.
qgc_root() {
        if [ -n "$NS" ]; then
                unshare -m --propagation private sh -c '
                        for h in $QGC_HIDE; do mount -t tmpfs -o mode=0755,size=1m qgc-hide "$h" || exit 99; done
                        exec timeout 120 "$@"' sh "$QGC" --system-config "$T/qgc.conf" "$@"
        else
                timeout 120 "$QGC" --system-config "$T/qgc.conf" "$@"
        fi
}
export QGC_HIDE="$others"

cat > "$T/qgc.conf" <<'CONF'
# everything idle for more than a week is archived; nothing is protected by count
defaults = {
        action = "archive";
        max-age = "7d";
};
admin = {
        allow-user-files = true;
};
CONF
chmod 644 "$T/qgc.conf"

# --- a non-root --all-users fails clearly and changes nothing
cp "$QGC" "$T/bin/qgc"; chmod 755 "$T/bin/qgc"
set +e
runuser -u "${P}a" -- "$T/bin/qgc" --system-config "$T/qgc.conf" --all-users --now "$NOW" \
        > "$T/nonroot.out" 2>&1
rc=$?
set -e
cat "$T/nonroot.out"
[ $rc -ne 0 ] || fail "--all-users as a non-root user exited 0"
grep -qi "root" "$T/nonroot.out" || fail "--all-users as non-root: no clear message"

# --- hostile plants by evil (${P}e)
# a root-only secret, a root-owned directory, and a root-owned tree nobody runs for
printf 'root:secret-hash:19000:0:99999:7:::\n' > "$T/shadow"; chmod 600 "$T/shadow"
mkdir -m 755 "$T/rootdir"; echo keep > "$T/rootdir/file"; chmod 644 "$T/rootdir/file"
mkdir -m 755 "$T/victim"; cp -a "$QGC_TESTDATA/corpus/tree/." "$T/victim/"; chmod -R go-w "$T/victim"
printf '{"sessionId":"x"}\n' > "$T/usage-root"; chmod 644 "$T/usage-root"
proj=$(ls "$E/projects" | head -n 1)
proj2=$(ls "$E/projects" | sed -n 2p)
[ -n "$proj" ] && [ -n "$proj2" ] || fail "corpus has fewer than two projects"
sid=$(ls "$E/projects/$proj/chats" | grep -m1 '\.jsonl$')
fh=$(ls "$E/file-history" | head -n 1)
runuser -u "${P}e" -- sh -c "
        set -e
        ln -s '$T/shadow' '$E/projects/$proj/chats/00000000-0000-4000-8000-000000000001.jsonl'
        rm -rf '$E/file-history/$fh'
        ln -s '$T/rootdir' '$E/file-history/$fh'
        ln -s '$T/rootdir' '$E/file-history/00000000-0000-4000-8000-000000000002'
        rm -rf '$E/projects/$proj2/chats'
        ln -s '$T/victim/projects/$proj2/chats' '$E/projects/$proj2/chats'
        mkdir -p '$E/projects/-x-bob/'
        ln -s '$B/projects/$proj/chats' '$E/projects/-x-bob/chats'
        rm -f '$E/usage_record.jsonl'
        ln -s '$T/usage-root' '$E/usage_record.jsonl'
" || fail "planting evil's symlinks"
[ -n "$fh" ] || fail "corpus has no file-history"

# --- bob's own file tries to keep more than the admin allows: the admin's cap wins
mkdir -p "$T/home/${P}b/.config/qgc"
printf 'defaults = { max-age = "3650w"; };\n' > "$T/home/${P}b/.config/qgc/qgc.conf"
chown -R "${P}b" "$T/home/${P}b/.config"

# --- carol's tree is group-writable: skipped with a reason
chmod g+w "$C"

listing() { # DIR: path, type, owner, mode, size, content hash of every entry
        (cd "$1" && find . -printf '%p %y %U %m %s %l\n' | sort
         find . -type f -exec sha256sum {} + | sort -k 2) 2>/dev/null
}
listing "$T/victim" > "$T/victim.before"
listing "$T/rootdir" > "$T/rootdir.before"
listing "$C" > "$T/carol.before"
sha256sum "$T/shadow" "$T/usage-root" > "$T/secrets.before"
for u in a b; do wc -l < "$T/home/$P$u/.qwen/usage_record.jsonl" > "$T/usage.$u.before"; done

# --- the dry run changes nothing anywhere
listing "$A" > "$T/a.before"
qgc_root --all-users --dry-run --now "$NOW" > "$T/dry.out" 2>&1 || { cat "$T/dry.out"; fail "dry run"; }
listing "$A" > "$T/a.after-dry"
qgc_root --all-users --dry-run --json --now "$NOW" > "$T/dry.json" 2> "$T/dry.err" ||
        { cat "$T/dry.err"; fail "dry run --json"; }
python3 - "$T/dry.json" "$P" <<'PY' || fail "--all-users --dry-run --json is not one JSON document with a plan per user"
import json, sys
doc = json.load(open(sys.argv[1]))          # one document (issue 11), not plans back to back
assert doc["version"] == 1, doc.keys()
users = {}
for u in doc["users"]:
    users[u["user"]] = u
    if u["plan"] is not None:
        assert u["status"] == "ok", u
        assert {t["user"] for t in u["plan"]["trees"]} == {u["user"]}, u["plan"]["trees"]
    else:
        assert u["status"] in ("skipped", "failed") and u.get("reason"), u
want = {sys.argv[2] + c for c in "abe"}
planned = {n for n, u in users.items() if u["plan"] is not None}
assert want <= planned, f"plans for {sorted(planned)}, want {sorted(want)}"
PY
# --user NAME: that user only (repeatable); a name nobody has is an error
qgc_root --user "${P}a" --user "${P}b" --dry-run --json --now "$NOW" > "$T/one.json" 2> "$T/one.err" ||
        { cat "$T/one.err"; fail "--user --dry-run --json"; }
python3 - "$T/one.json" "$P" <<'PY' || fail "--user did not limit the run to the named users"
import json, sys
doc = json.load(open(sys.argv[1]))
assert sorted(u["user"] for u in doc["users"]) == [sys.argv[2] + "a", sys.argv[2] + "b"], doc["users"]
PY
set +e; qgc_root --user "${P}nosuch" --dry-run --now "$NOW" > "$T/nosuch.out" 2> "$T/nosuch.err"; rc=$?; set -e
[ $rc = 1 ] && grep -q -- "--user '${P}nosuch'" "$T/nosuch.err" || { cat "$T/nosuch.err"; fail "--user with an unknown name: exit $rc"; }
# the text plan names each user
for u in a b e; do
        grep -q "^user $P$u:$" "$T/dry.out" || { cat "$T/dry.out"; fail "the text plan has no header for $P$u"; }
done
cmp -s "$T/a.before" "$T/a.after-dry" || fail "--all-users --dry-run changed ${P}a's tree"

# --- the real run
set +e
: > "$T/actions.log"; chmod 600 "$T/actions.log"   # root's own log, unreachable for the users
qgc_root --all-users --now "$NOW" --log-file "$T/actions.log" > "$T/run.out" 2> "$T/run.err"
rc=$?
set -e
cat "$T/run.out" "$T/run.err"
[ $rc -eq 0 ] || [ $rc -eq 1 ] || fail "--all-users exited $rc"
if grep -q "${P}e: failed" "$T/run.err"; then
        [ $rc -eq 1 ] || fail "a user's run failed but --all-users exited $rc"
fi
grep -q "qgc: users: 2 ok, [01] failed, 1 skipped" "$T/run.err" || fail "no per-user tally"
grep -q "${P}b/.config/qgc/qgc.conf.*max-age" "$T/run.err" ||
        fail "no warning that bob's looser max-age was clamped"

# each normal tree was changed, as its user
for u in a b; do
        q="$T/home/$P$u/.qwen"
        ls -d "$q"/projects/*/chats/archive >/dev/null 2>&1 || fail "$P$u: nothing was archived"
        bad=$(find "$q" ! -user "$P$u" -printf '%p (%u)\n' | head -n 5)
        [ -z "$bad" ] || fail "$P$u: files not owned by the user after the run: $bad"
        [ "$(stat -c %U "$q/usage_record.jsonl")" = "$P$u" ] || fail "$P$u: usage_record.jsonl owner"
        n0=$(cat "$T/usage.$u.before"); n1=$(wc -l < "$q/usage_record.jsonl")
        [ "$n1" -ge "$n0" ] || fail "$P$u: usage_record.jsonl shrank"
        grep -q "$P$u: ok" "$T/run.err" || fail "no 'ok' summary line for $P$u"
        grep -q "QGC_USER=$P$u" "$T/actions.log" || fail "no action log line with QGC_USER=$P$u"
done
n=$(grep -o 'QGC_RUN=[0-9a-f]*' "$T/actions.log" | sort -u | wc -l)
[ "$n" = 1 ] || fail "$n run ids in one --all-users run, expected 1"
# every entry names its user, the run start and summary of each user's run included (issue 24.2)
bad=$(grep -v "QGC_USER=$P" "$T/actions.log" | head -n 3)
[ -z "$bad" ] || fail "action log entries without QGC_USER: $bad"
for u in a b; do
        for a in run-start run-summary; do
                grep "QGC_ACTION=$a " "$T/actions.log" | grep -q "QGC_USER=$P$u" ||
                        fail "no $a entry with QGC_USER=$P$u"
        done
        grep "QGC_ACTION=run-summary " "$T/actions.log" | grep -q "MESSAGE=\"$P$u: qgc run finished" ||
                fail "$P$u's run summary does not name the user in its text"
done
pass "normal users' trees changed, every file still owned by its user"

# carol: skipped with a reason, untouched
grep -q "${P}c: skipped: .*group-writable" "$T/run.err" || fail "carol not skipped with a reason"
listing "$C" > "$T/carol.after"
cmp -s "$T/carol.before" "$T/carol.after" || fail "carol's unsafe tree was changed"
pass "unsafe tree skipped with a reason and left alone"

# evil: nothing outside evil's own tree changed
sha256sum -c --quiet "$T/secrets.before" || fail "a root-owned file changed"
[ "$(stat -c '%U %a' "$T/shadow")" = "root 600" ] || fail "shadow copy owner/mode changed"
listing "$T/victim" > "$T/victim.after"
diff -u "$T/victim.before" "$T/victim.after" || fail "evil's chats symlink changed the victim tree"
listing "$T/rootdir" > "$T/rootdir.after"
diff -u "$T/rootdir.before" "$T/rootdir.after" || fail "evil's file-history symlink changed a root dir"
[ -L "$E/projects/$proj/chats/00000000-0000-4000-8000-000000000001.jsonl" ] ||
        fail "evil's transcript symlink was acted on"
bad=$(find "$E" ! -user "${P}e" ! -type l -printf '%p (%u)\n' | head -n 5)
[ -z "$bad" ] || fail "evil's tree has files not owned by evil: $bad"
bad=$(find "$B" ! -user "${P}b" -printf '%p (%u)\n' | head -n 5)
[ -z "$bad" ] || fail "bob's tree has foreign files after evil's run: $bad"
pass "hostile symlinks caused no change outside the user's own tree"

# --- restore in root mode (issue 24.7): an id that only alice has
arch=$(ls -d "$A"/projects/*/chats/archive | head -n 1)
src=$(ls "$arch" | grep -m1 '\.jsonl$')
NEWID=3c000000-0000-4000-8000-0000000000a1
runuser -u "${P}a" -- sh -c 'sed "s/$1/$2/g" "$3/$1.jsonl" > "$3/$2.jsonl"' sh "${src%.jsonl}" "$NEWID" "$arch"
# root without --all-users, in root's own (here empty) home: told how to reach a user's
mkdir -m 700 "$T/roothome"
set +e
HOME="$T/roothome" QWEN_HOME= QWEN_RUNTIME_DIR= qgc_root restore "$NEWID" --now "$NOW" \
        > "$T/rr.out" 2> "$T/rr.err"
rc=$?
set -e
[ $rc = 1 ] && grep -q -- "--user NAME, or --all-users" "$T/rr.err" ||
        { cat "$T/rr.err"; fail "root's restore of a user's id: exit $rc, no hint of --user/--all-users"; }
# --all-users: restored for alice; bob and evil, who do not have it, are no failure
: > "$T/rr.log"; chmod 600 "$T/rr.log"
set +e
qgc_root restore "$NEWID" --all-users --now "$NOW" --log-file "$T/rr.log" > "$T/rr.out" 2> "$T/rr.err"
rc=$?
set -e
cat "$T/rr.out" "$T/rr.err"
[ $rc = 0 ] || fail "restore --all-users of an id that one user has exited $rc"
[ -f "$(dirname "$arch")/$NEWID.jsonl" ] || fail "alice's session was not restored"
! grep -q ": failed" "$T/rr.err" || fail "restore --all-users reports a failure for users without the id"
! grep -q "PRIORITY=[0-3] " "$T/rr.log" || fail "restore --all-users logged an error entry"
grep -q "^qgc: ${P}b: not in this user's trees" "$T/rr.err" || fail "no line for bob, who does not have it"
grep -q "^qgc: ${P}a: restored session $NEWID into " "$T/rr.out" || fail "no line naming alice's restore"
# found nowhere: that is the error
set +e
qgc_root restore 3c000000-0000-4000-8000-0000000000ff --all-users --now "$NOW" > "$T/rn.out" 2> "$T/rn.err"
rc=$?
set -e
[ $rc = 1 ] && grep -q "restore: in no user's trees" "$T/rn.err" ||
        { cat "$T/rn.err"; fail "restore --all-users of an id nobody has: exit $rc"; }
pass "root-mode restore: a hint without --all-users; users without the id are no failure; nowhere is"

# --- a user's own policy file with terminal controls (OSC 52, CSI, U+202E): its error reaches
# root's terminal cleaned
mkdir -p "$T/home/${P}e/.config/qgc"
printf 'defaults = { max-age = "EVILVAL\033]52;c;aGk=\007\033[2J\302\233\342\200\256"; };\n' \
        > "$T/home/${P}e/.config/qgc/qgc.conf"
chown -R "${P}e" "$T/home/${P}e/.config"
set +e
qgc_root --all-users --dry-run --now "$NOW" > "$T/evilconf.out" 2> "$T/evilconf.err"
set -e
python3 "$QGC_TESTDATA/../integration/nocontrols.py" "$T/evilconf.err" EVILVAL "qgc.conf:1" ||
        fail "a user's policy file put control characters on root's terminal"
rm -rf "$T/home/${P}e/.config"
pass "a user's hostile policy value is echoed cleaned"

# --- --quiet: nothing for the users whose run succeeded; failures still reported
set +e
qgc_root --all-users --quiet --now "$NOW" --log-target stderr > "$T/quiet.out" 2> "$T/quiet.err"
rc=$?
set -e
! grep -q "${P}[ab]: ok" "$T/quiet.out" "$T/quiet.err" || fail "--quiet printed per-user ok lines"
# bob's clamped max-age is said without --quiet (above), not mailed by cron every day (issue 11)
! grep -q "${P}b/.config/qgc/qgc.conf.*warning" "$T/quiet.err" || fail "--quiet printed a user's clamping warning"
if [ $rc -eq 0 ]; then
        [ ! -s "$T/quiet.out" ] || { cat "$T/quiet.out"; fail "--quiet printed on success"; }
else
        grep -q "qgc: users: .* [1-9] failed" "$T/quiet.err" || fail "--quiet failure without a summary"
fi
# what --quiet prints (cron mails it, the unit logs it) names the user each line is about: the
# parent's lines, a child's lines ("qgc: NAME: ..."), the action log's lines on stderr
bad=$(cat "$T/quiet.out" "$T/quiet.err" |
      grep -v -e "^qgc: $P[abec]: " -e "^qgc: users: " -e "QGC_USER=$P[abec] " | head -n 3)
[ -z "$bad" ] || fail "--quiet printed lines that name no user: $bad"
grep -q "^qgc: ${P}e: archived " "$T/quiet.out" ||
        fail "--quiet: evil's failed run has no summary line naming the user"
pass "--quiet is silent for users that succeeded; every line it prints names its user"

# --- a user's broken policy file skips that user only (issue 24.8): at err with QGC_USER, in the
# metrics, the run exits 0 (the unit does not fail for everyone); the error has a hint
printf 'defaults = {\n        max-age = 10d;\n};\n' > "$T/home/${P}b/.config/qgc/qgc.conf"
: > "$T/typo.log"; chmod 600 "$T/typo.log"
set +e
qgc_root --user "${P}a" --user "${P}b" --quiet --now "$NOW" --log-file "$T/typo.log" \
        --metrics-file "$T/typo.prom" > "$T/typo.out" 2> "$T/typo.err"
rc=$?
set -e
cat "$T/typo.out" "$T/typo.err"
[ $rc = 0 ] || fail "one user's invalid policy file made the run exit $rc"
grep -q "^qgc: ${P}b: skipped: invalid policy file: .*${P}b/.config/qgc/qgc.conf:2: syntax error: a duration must be quoted: max-age = \"10d\";" "$T/typo.err" ||
        fail "no err line naming the user, the file:line and the hint"
grep "QGC_ACTION=user-failed" "$T/typo.log" | grep "QGC_USER=${P}b" | grep -q "PRIORITY=3" ||
        fail "no user-failed entry at priority err with QGC_USER=${P}b"
grep "QGC_USER=${P}a" "$T/typo.log" | grep -q "QGC_ACTION=run-summary" || fail "${P}a was not run"
grep -q '^qgc_last_run_users{outcome="invalid_policy"} 1$' "$T/typo.prom" ||
        { cat "$T/typo.prom"; fail "the metrics do not count the invalid policy file"; }
grep -q '^qgc_last_run_users{outcome="ok"} 1$' "$T/typo.prom" || fail "the metrics: not 1 user ok"
grep -q '^qgc_last_run_exit_code 0$' "$T/typo.prom" || fail "the metrics: exit code not 0"
rm -f "$T/home/${P}b/.config/qgc/qgc.conf"
pass "a user's invalid policy file skips that user: err entry with QGC_USER, metric, exit 0"

exit 0
