#!/bin/sh
# t-0511-build-depends: every library configure.ac requires (PKG_CHECK_MODULES) is a build
# dependency of the Debian package. The package builds in a clean chroot (sbuild, the buildds)
# with only Build-Depends installed: a library present on the developer's machine but missing
# from debian/control builds here and fails there (libzstd-dev was missing until stop 32).
# The .pc file configure found is mapped to its Debian package with dpkg -S. SKIP without dpkg
# or pkg-config.
. "$(dirname "$0")/lib.sh"
: "${QGC_SRCDIR:?}"

command -v dpkg >/dev/null 2>&1 || skip "dpkg is not installed"
command -v pkg-config >/dev/null 2>&1 || skip "pkg-config is not installed"
bd=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' "$QGC_SRCDIR/debian/control" | sed '$d')
[ -n "$bd" ] || fail "no Build-Depends in debian/control"
mods=$(sed -n 's/^PKG_CHECK_MODULES(\[[A-Z_]*\], \[\([a-z0-9-]*\).*/\1/p' "$QGC_SRCDIR/configure.ac")
[ "$(echo "$mods" | wc -w)" -ge 5 ] || fail "found only '$mods' in configure.ac's PKG_CHECK_MODULES"
n=0
for m in $mods; do
        pc="$(pkg-config --variable=pcfiledir "$m" 2>/dev/null)/$m.pc"
        [ -f "$pc" ] || fail "pkg-config finds no $m.pc here (configure needs it)"
        pkg=$(dpkg -S "$(readlink -f "$pc")" 2>/dev/null | sed -n '1s/:.*//p')
        [ -n "$pkg" ] || fail "no Debian package owns $pc"
        printf '%s\n' "$bd" | grep -Eq "(^|[ ,:])$pkg( |,|$)" ||
                fail "configure.ac requires $m ($pkg) but debian/control's Build-Depends does not list $pkg"
        n=$((n + 1))
done
pass "the $n libraries of configure.ac ($(echo $mods)) are in Build-Depends"
