#!/bin/sh
# t-0443-root-shared-runtime: in root mode one user's two homes (pw_dir and a user-dirs home)
# whose settings give the same runtime directory are two global directories over one runtime
# root: the second is skipped with a reason, not handled twice. Root only (else SKIP, 77).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (creates a user)"
users_lock # held to the end: t-0300 counts every user of the system
for c in useradd userdel; do
        command -v $c >/dev/null 2>&1 || skip "$c is not installed"
done

U="qgs$$"
created=""
trap '[ -z "$created" ] || userdel -r "$U" >/dev/null 2>&1 || userdel "$U" >/dev/null 2>&1 || true; cleanup' EXIT
trap 'exit 99' INT TERM HUP

chmod 755 "$T"
mkdir -m 755 "$T/home" "$T/ud"
useradd -m -b "$T/home" -s /usr/sbin/nologin "$U" || fail "useradd"
created=yes
h1="$T/home/$U" h2="$T/ud/$U"
mkdir -p "$h1/.qwen" "$h2/.qwen" "$T/rt"
cp -a "$QGC_TESTDATA/corpus/tree/." "$T/rt/"
for h in "$h1" "$h2"; do
        echo "{\"advanced\":{\"runtimeOutputDir\":\"$T/rt\"}}" > "$h/.qwen/settings.json"
done
chown -R "$U:$(id -gn "$U")" "$h1" "$h2" "$T/rt"
chmod -R u+w,go-w "$h1" "$h2" "$T/rt"
chmod 755 "$h1" "$h2"

cat > "$T/qgc.conf" <<CONF
defaults = { action = "archive"; max-age = "7d"; };
admin = { user-dirs = ( "$T/ud" ); };
CONF
chmod 644 "$T/qgc.conf"
set +e
timeout 120 "$QGC" --system-config "$T/qgc.conf" --all-users --user "$U" --dry-run --json \
        --now 2040-01-01T00:00:00Z > "$T/out.json" 2> "$T/err"
rc=$?
set -e
cat "$T/err"
python3 - "$T/out.json" "$T/rt" <<'PY' || fail "one runtime root served two trees"
import json, sys
text, rt = open(sys.argv[1]).read(), sys.argv[2]
dec, i, trees = json.JSONDecoder(), 0, []
while i < len(text):
    while i < len(text) and text[i].isspace(): i += 1
    if i >= len(text): break
    o, i = dec.raw_decode(text, i)
    plans = [o] if "trees" in o else [u["plan"] for u in o.get("users", []) if u.get("plan")]
    for p in plans: trees += p["trees"]
rts = [t["runtime_dir"] for t in trees]
assert rts.count(rt) == 1, rts
PY
grep -q "has the runtime directory of" "$T/err" || fail "no reason for the skipped tree"
pass "root mode: a second tree with the same runtime directory is skipped with a reason (rc $rc)"
finish
