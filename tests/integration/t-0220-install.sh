#!/bin/sh
# make install DESTDIR=... lays out every file: binary, policy example, cron example, units,
# journal catalog and man pages; the installed units run the installed binary.
. "$(dirname "$0")/lib.sh"
: "${QGC_BUILDDIR:?}"
command -v make >/dev/null || skip "make not installed"
make -s -C "$QGC_BUILDDIR" install DESTDIR="$T/dest" > "$T/install.log" 2>&1 ||
        { cat "$T/install.log"; fail "make install failed"; }
prefix=$(sed -n 's/^prefix = //p' "$QGC_BUILDDIR/Makefile")
sysconfdir=$(sed -n 's/^sysconfdir = //p' "$QGC_BUILDDIR/Makefile" | sed "s|\${prefix}|$prefix|")
unitdir=$(sed -n 's/^systemdsystemunitdir = //p' "$QGC_BUILDDIR/Makefile" | sed "s|\${prefix}|$prefix|")
D="$T/dest"
for f in "$prefix/bin/qgc" "$sysconfdir/qgc/qgc.conf" "$sysconfdir/cron.d/qgc" \
         "$unitdir/qgc.service" "$unitdir/qgc.timer" \
         "$prefix/share/man/man8/qgc.8" "$prefix/share/man/man5/qgc.conf.5"; do
        [ -f "$D$f" ] || { find "$D" -type f; fail "not installed: $f"; }
done
find "$D" -name qgc.catalog | grep -q . || fail "journal catalog not installed"
# the documents the man pages cite (issue 24.9), at those paths for prefix /usr
for n in README.md fleet.md plan-schema.md; do
        [ -f "$D$prefix/share/doc/qgc/$n" ] || { find "$D" -type f; fail "not installed: $prefix/share/doc/qgc/$n"; }
done
find "$D" -path '*systemd/user/qgc.timer' | grep -q . || fail "user timer not installed"
find "$D" -path '*/bash-completion/completions/qgc' | grep -q . || fail "bash completion not installed"
find "$D" -path '*/zsh/vendor-completions/_qgc' | grep -q . || fail "zsh completion not installed"
grep -q "^ExecStart=$prefix/bin/qgc " "$D$unitdir/qgc.service" || fail "service does not run the installed binary"
"$D$prefix/bin/qgc" check-config -c "$D$sysconfdir/qgc/qgc.conf" >/dev/null || fail "installed qgc.conf does not parse"
make -s -C "$QGC_BUILDDIR" uninstall DESTDIR="$T/dest" > "$T/uninstall.log" 2>&1 || fail "make uninstall failed"
left=$(find "$D" -type f | head -3)
[ -z "$left" ] || fail "uninstall left files: $left"
pass "make install DESTDIR lays out every file; uninstall removes them"
