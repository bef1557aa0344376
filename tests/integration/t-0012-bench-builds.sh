#!/bin/sh
# t-0012-bench-builds: every C program of bench/ builds, the ones that measure qgc's own parts
# against this build's libqgc.a (bench/run.sh's include path: each folder of src/). bench/ is not
# run by make check (speed is measured there, not in tests), so a rename in src/ once left
# qgc-cold and qgc-salvage unbuildable, and run.sh quietly left their rows out.
. "$(dirname "$0")/lib.sh"
: "${QGC_SRCDIR:?QGC_SRCDIR must name the source tree}"
: "${QGC_BUILDDIR:?QGC_BUILDDIR must name the build tree}"
[ -f "$QGC_BUILDDIR/libqgc.a" ] || fail "no libqgc.a in $QGC_BUILDDIR"
# the build's own compiler and sanitizer flags (a sanitized libqgc.a links only with them)
mk() { sed -n "s/^$1 = //p" "$QGC_BUILDDIR/Makefile" | head -n 1; }
cc=$(mk CC)
san=$(mk SAN_FLAGS)
command -v "${cc%% *}" >/dev/null 2>&1 || skip "the build's C compiler ($cc) is not here"
inc="-I$QGC_BUILDDIR"
for d in "$QGC_SRCDIR"/src/*/; do inc="$inc -I$d"; done
libs=$(awk '/^(JSONC|LIBCONFIG|LIBCRYPTO|LIBSYSTEMD|ZSTD)_LIBS =|^LIBS =/ { sub(/^[A-Z_]+ = ?/, ""); printf "%s ", $0 }' \
        "$QGC_BUILDDIR/Makefile")
n=0
for c in "$QGC_SRCDIR"/bench/*.c; do
        name=${c##*/}
        name=${name%.c}
        # shellcheck disable=SC2086
        $cc -O2 -D_GNU_SOURCE $san $inc -o "$T/$name" "$c" "$QGC_BUILDDIR/libqgc.a" $libs -lm -lpthread \
                2> "$T/$name.log" || { cat "$T/$name.log" >&2; fail "bench/$name.c does not build"; }
        [ -x "$T/$name" ] || fail "bench/$name.c built no program"
        n=$((n + 1))
done
[ "$n" -ge 8 ] || fail "only $n programs in bench/ (8 expected at least)"
pass "the $n C programs of bench/ build against this libqgc.a"
