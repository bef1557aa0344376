#!/bin/sh
# t-0723-deepcode-stores: admin.stores chooses whose stores `qgc --all-users` collects. Two
# users: one with a ~/.qwen, one with a ~/.deepcode (the Deep Code corpus). By default ("qwen")
# the Deep Code store is not looked at; with "all" both are planned, each as its user; with
# "deepcode" the Qwen tree is not. check-config refuses another word. Root only (else SKIP, 77).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (creates users)"
users_lock
for c in useradd userdel getent; do
        command -v $c >/dev/null 2>&1 || skip "$c is not installed"
done

P="qgd$$"
created=""
users_cleanup() {
        for u in $created; do userdel -r "$u" >/dev/null 2>&1 || userdel "$u" >/dev/null 2>&1 || true; done
}
trap 'users_cleanup; cleanup' EXIT
trap 'exit 99' INT TERM HUP

chmod 755 "$T"
mkdir -m 755 "$T/home"
for u in ${P}q ${P}d; do
        useradd -m -b "$T/home" -s /usr/sbin/nologin "$u" || fail "useradd $u"
        created="$created $u"
        chmod 755 "$T/home/$u"
done
Q="$T/home/${P}q" D="$T/home/${P}d"
mkdir "$Q/.qwen"
cp -a "$QGC_TESTDATA/corpus/tree/." "$Q/.qwen/"
chown -R "${P}q:$(id -gn ${P}q)" "$Q/.qwen"
tar xzf "$QGC_TESTDATA/deepcode/home.tar.gz" -C "$T"
mv "$T/home/.deepcode" "$D/.deepcode"
chown -R "${P}d:$(id -gn ${P}d)" "$D/.deepcode"
chmod -R u+w,go-w "$Q/.qwen" "$D/.deepcode"

# other users' trees are hidden behind an empty tmpfs in a private mount namespace, or skip
others=$(getent passwd | awk -F: -v p="$P" 'index($1, p) != 1 { print $6 }' | sort -u |
         while read -r h; do
                 if [ -n "$h" ] && { [ -e "$h/.qwen" ] || [ -e "$h/.deepcode" ]; }; then echo "$h"; fi
         done)
[ -z "$(echo "$others" | grep -x /)" ] || skip "a user's home is / and holds a store"
NS=""
if [ -n "$others" ]; then
        command -v unshare >/dev/null 2>&1 || skip "other users have stores and unshare is missing"
        unshare -m --propagation private true 2>/dev/null || skip "no mount namespaces"
        NS=yes
fi
export QGC_HIDE="$others"
qgc_root() {
        if [ -n "$NS" ]; then
                unshare -m --propagation private sh -c '
                        for h in $QGC_HIDE; do mount -t tmpfs -o mode=0755,size=1m qgc-hide "$h" || exit 99; done
                        exec timeout 120 "$@"' sh "$QGC" --system-config "$T/qgc.conf" "$@"
        else
                timeout 120 "$QGC" --system-config "$T/qgc.conf" "$@"
        fi
}

conf() {
        printf 'defaults = { max-age = "1d"; };\nadmin = { user-dirs = ( "%s" );%s };\n' \
                "$T/home" "$1" > "$T/qgc.conf"
        chmod 644 "$T/qgc.conf"
}

conf ""
qgc_root --all-users --dry-run --user ${P}q --user ${P}d > "$T/default.txt" 2>&1 ||
        { cat "$T/default.txt"; fail "the default dry run"; }
# the Qwen corpus's projects are /srv/demo/*, the Deep Code corpus's /srv/deepcode-demo/*
grep -q "^/srv/demo/" "$T/default.txt" || { cat "$T/default.txt"; fail "the Qwen tree is not planned"; }
! grep -q "^User ${P}d:\|/srv/deepcode-demo/" "$T/default.txt" ||
        { cat "$T/default.txt"; fail "stores = qwen planned Deep Code"; }
grep -q "^qgc: users: 1 ok, 0 failed, 0 skipped" "$T/default.txt" || fail "the default's users"

conf ' stores = "all";'
qgc_root --all-users --dry-run --user ${P}q --user ${P}d > "$T/all.txt" 2>&1 ||
        { cat "$T/all.txt"; fail "the dry run with stores = all"; }
grep -q "^/srv/demo/" "$T/all.txt" || { cat "$T/all.txt"; fail "stores = all: no Qwen tree"; }
grep -q "^/srv/deepcode-demo/" "$T/all.txt" || { cat "$T/all.txt"; fail "stores = all: no Deep Code store"; }
grep -q "^qgc: users: 2 ok, 0 failed, 0 skipped" "$T/all.txt" || fail "stores = all: the users"
# a user of one agent only has no tree of the other: that is no warning on every run
! grep -q "cannot stat\|skipping that tree" "$T/all.txt" || { cat "$T/all.txt"; fail "stores = all: a warning for the tree a user does not have"; }

conf ' stores = "deepcode";'
qgc_root --all-users --dry-run --user ${P}q --user ${P}d > "$T/dc.txt" 2>&1 ||
        { cat "$T/dc.txt"; fail "the dry run with stores = deepcode"; }
grep -q "^/srv/deepcode-demo/" "$T/dc.txt" || { cat "$T/dc.txt"; fail "stores = deepcode: no Deep Code store"; }
! grep -q "^/srv/demo/" "$T/dc.txt" || { cat "$T/dc.txt"; fail "stores = deepcode planned Qwen"; }

conf ' stores = "claude";'
! "$QGC" --system-config "$T/qgc.conf" check-config > "$T/bad.txt" 2>&1 ||
        fail "check-config accepts stores = claude"
grep -q "stores" "$T/bad.txt" || { cat "$T/bad.txt"; fail "check-config does not name the key"; }
pass "admin.stores: qwen by default, all and deepcode collect ~/.deepcode per user"
