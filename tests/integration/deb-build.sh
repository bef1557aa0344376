#!/bin/sh
# deb-build.sh SRCDIR OUTDIR [VERSION]: build the Debian package (dpkg-buildpackage -us -uc -b)
# from a copy of SRCDIR, then run lintian on it. OUTDIR gets the .deb files, build.log and
# lintian.txt. VERSION, if given, is a new debian/changelog entry in the copy (for upgrade tests).
# Exit 0 when it built with no lintian error, 1 otherwise, 77 when dpkg-buildpackage or
# debhelper are missing. DEB_BUILD_OPTIONS passes through (nocheck skips dh_auto_test).
# Used by .ci/run and by t-0510-deb.sh.
set -eu
src=$1 out=$2 version=${3:-}
command -v dpkg-buildpackage >/dev/null 2>&1 || { echo "deb-build: no dpkg-buildpackage" >&2; exit 77; }
command -v dh >/dev/null 2>&1 || { echo "deb-build: no debhelper" >&2; exit 77; }
dpkg-checkbuilddeps "$src/debian/control" >/dev/null 2>&1 ||
        { dpkg-checkbuilddeps "$src/debian/control" || true; echo "deb-build: build dependencies missing" >&2; exit 77; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/qgc-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
# the source without builds, VCS data, generated autotools files or earlier package builds
mkdir "$work/qgc"
tar -C "$src" -cf - --exclude=./.git --exclude='./_build' --exclude='./build*' \
        --exclude=./autom4te.cache --exclude=./debian/build --exclude=./debian/qgc \
        --exclude=./debian/.debhelper --exclude=./debian/tmp --exclude=node_modules \
        --exclude='*.o' --exclude='*.a' --exclude=./config.status --exclude=./config.log \
        --exclude=./Makefile . | tar -C "$work/qgc" -xf -
chmod -R u+w "$work/qgc"
if [ -n "$version" ]; then
        {
                printf 'qgc (%s) unstable; urgency=medium\n\n  * Rebuild for an upgrade test.\n\n' "$version"
                printf ' -- %s  %s\n\n' "$(dpkg-parsechangelog -l "$work/qgc/debian/changelog" -S Maintainer)" \
                        "$(date -R -d @"$(($(dpkg-parsechangelog -l "$work/qgc/debian/changelog" -S Timestamp) + 86400))")"
                cat "$work/qgc/debian/changelog"
        } >"$work/changelog" && mv "$work/changelog" "$work/qgc/debian/changelog"
fi
start=$(date +%s)
if ! (cd "$work/qgc" && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1; then
        tail -40 "$out/build.log" >&2
        echo "deb-build: dpkg-buildpackage failed (log: $out/build.log)" >&2
        exit 1
fi
echo "deb-build: built in $(($(date +%s) - start)) s"
rm -f "$out"/*.deb
rm -f "$out"/*.changes "$out"/*.buildinfo
cp "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$out/"
for d in "$out"/qgc_*.deb; do echo "deb-build: $(basename "$d"): $(stat -c %s "$d") bytes"; done
if command -v lintian >/dev/null 2>&1; then
        # lintian prefers not to run as root; its findings are the same
        rc=0
        lintian --info --pedantic --display-info --display-experimental "$out"/*.changes \
                >"$out/lintian.txt" 2>&1 || rc=$?
        grep -v '^running with root privileges' "$out/lintian.txt" | sed 's/^/lintian: /' || true
        if [ $rc -ne 0 ] || grep -q '^E: \|No packages selected' "$out/lintian.txt"; then
                echo "deb-build: lintian failed or reports errors (exit $rc)" >&2
                exit 1
        fi
        echo "deb-build: lintian: $(grep -c '^E: ' "$out/lintian.txt") errors, $(grep -c '^W: ' "$out/lintian.txt") warnings, $(grep -c '^[IP]: ' "$out/lintian.txt") info/pedantic"
else
        echo "deb-build: lintian is not installed; not checked"
fi
