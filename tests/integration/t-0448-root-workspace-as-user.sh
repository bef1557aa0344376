#!/bin/sh
# t-0448-root-workspace-as-user: in root mode (--all-users) a project's own files are read by
# the user's child, after it dropped root: a workspace settings file the user may not read
# (root's, mode 0600) is one qgc cannot read, so the tree is incomplete and no orphan in G is
# reclaimed; the same file readable by the user (the control) holds nothing that moves the
# runtime root, and the orphan is reclaimed. Root only (else SKIP, 77).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (creates a user)"
users_lock # held to the end: t-0300 counts every user of the system
for c in useradd userdel; do
        command -v $c >/dev/null 2>&1 || skip "$c is not installed"
done

U="qgw$$"
created=""
trap '[ -z "$created" ] || userdel -r "$U" >/dev/null 2>&1 || userdel "$U" >/dev/null 2>&1 || true; cleanup' EXIT
trap 'exit 99' INT TERM HUP

chmod 755 "$T"
mkdir -m 755 "$T/home"
useradd -m -b "$T/home" -s /usr/sbin/nologin "$U" || fail "useradd"
created=yes
h="$T/home/$U"
G="$h/.qwen"
W="$h/src/scratch"
mkdir -p "$G" "$W/.qwen"
cp -a "$QGC_TESTDATA/corpus/tree/." "$G/"
# the corpus project /srv/demo/scratch, as if started in $W
move_project "$G" "$W"
id=0badc0de-1111-4222-8333-444455556666
mkdir -p "$G/file-history/$id"
echo data > "$G/file-history/$id/x@v1"
find "$h" -exec touch -h -d 2026-01-01T00:00:00Z {} +
chown -R "$U:$(id -gn "$U")" "$h"
chmod -R u+w,go-w "$h"
chmod 755 "$h"
echo '{}' > "$W/.qwen/settings.json"

cat > "$T/qgc.conf" <<'CONF'
defaults = { action = "delete"; max-age = "2h"; min-age = "1h"; keep-latest = 0; min-idle = "1h";
             max-deletions = "off"; };
CONF
chmod 644 "$T/qgc.conf"
run() { # name
        set +e
        timeout 120 "$QGC" --system-config "$T/qgc.conf" --all-users --user "$U" --dry-run --json \
                --now 2040-01-01T00:00:00Z > "$T/$1.json" 2> "$T/$1.err"
        rc=$?
        set -e
        [ $rc -eq 0 ] || { cat "$T/$1.err"; fail "$1: exit $rc"; }
}
check() { # name expect
        python3 - "$T/$1.json" "$2" "$id" <<'PY' || { cat "$T/$1.err"; fail "$1: expected a $2 tree"; }
import json, sys
text, mode, oid = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
dec, i, plans = json.JSONDecoder(), 0, []
while i < len(text):
    while i < len(text) and text[i].isspace(): i += 1
    if i >= len(text): break
    o, i = dec.raw_decode(text, i)
    plans += [o] if "trees" in o else [u["plan"] for u in o.get("users", []) if u.get("plan")]
assert len(plans) == 1, plans
plan = plans[0]
tr = plan["trees"][0]
deleted = [o for o in plan.get("orphans", []) if o["kind"] == "file-history" and o["name"] == oid and o["verb"] == "delete"]
if mode == "incomplete":
    assert "workspace settings or .env" in tr.get("incomplete", ""), tr
    assert not deleted, deleted
else:
    assert "incomplete" not in tr, tr
    assert deleted, "the orphan is not reclaimed"
PY
}

# the control: root's file, readable by the user
chown root:root "$W/.qwen/settings.json"
chmod 644 "$W/.qwen/settings.json"
run readable
check readable complete
# root's file the user may not read: as root qgc could, as the user it cannot
chmod 600 "$W/.qwen/settings.json"
run unreadable
check unreadable incomplete
grep -q "cannot be used (Permission denied)" "$T/unreadable.err" ||
        { cat "$T/unreadable.err"; fail "the notice does not say the file could not be read"; }
pass "root mode: a project's files are read as the user (one it may not read keeps the tree incomplete)"
finish
