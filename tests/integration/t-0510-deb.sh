#!/bin/sh
# t-0510-deb: the Debian package's life cycle under a real systemd. Builds the package (or takes
# the .deb files in $QGC_DEB_DIR), checks what its maintainer scripts enable, then boots a
# Debian 12 root (nspawn.sh) and, inside: install (the system timer enabled and active, the
# user timer not enabled for anyone, the catalog in journalctl's database through systemd's
# trigger, the conffiles, the cron line inert on a machine booted with systemd, timer or not),
# upgrade over it to a rebuild with a higher version (a changed conffile kept, the timer still
# enabled),
# the metrics file written by qgc.service through a policy drop-in alone (no unit drop-in),
# remove (timer stopped, binary gone, conffiles kept, cron line inert) and purge (nothing left
# but the admin's own drop-in; the metrics files qgc wrote at the configured and the default
# path gone, a file qgc did not write kept).
# Without root, nspawn or debootstrap the judge is missing (judge_missing: SKIP, or FAIL where
# every judge must run); SKIP without the package tools, or for a sanitizer build.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/nspawn.sh"
: "${QGC_BUILDDIR:?}" "${QGC_SRCDIR:?}"

[ "$(id -u)" = 0 ] || judge_missing nspawn "needs root (systemd-nspawn)"
for c in systemd-nspawn debootstrap dpkg-deb; do
        command -v $c >/dev/null 2>&1 || judge_missing nspawn "$c is not installed"
done
[ -z "$(sed -n 's/^SAN_FLAGS = //p' "$QGC_BUILDDIR/Makefile")" ] ||
        skip "a sanitizer build (the package is built without; tested from the plain build)"

# The package and a rebuild of it with a higher version (in next/), for the upgrade.
debs=${QGC_DEB_DIR:-}
if [ -z "$debs" ]; then
        debs="$T/debs"
        rc=0
        DEB_BUILD_OPTIONS=nocheck sh "$(dirname "$0")/deb-build.sh" "$QGC_SRCDIR" "$debs" || rc=$?
        [ $rc = 77 ] && skip "cannot build the package here (dpkg-buildpackage, debhelper or build dependencies)"
        [ $rc = 0 ] || fail "the package build failed"
fi
deb=$(ls "$debs"/qgc_*_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || fail "no qgc_*.deb in $debs"
v1=$(dpkg-deb -f "$deb" Version)
if [ ! -d "$debs/next" ]; then
        DEB_BUILD_OPTIONS=nocheck sh "$(dirname "$0")/deb-build.sh" "$QGC_SRCDIR" "$debs/next" "$v1+upgradetest1" ||
                fail "the rebuild as $v1+upgradetest1 failed"
fi
deb2=$(ls "$debs"/next/qgc_*_*.deb 2>/dev/null | head -1)
[ -n "$deb2" ] || fail "no qgc_*.deb in $debs/next"
v2=$(dpkg-deb -f "$deb2" Version)
dpkg --compare-versions "$v2" gt "$v1" || fail "next/ holds $v2, not newer than $v1"

# What the package enables, read from the package itself.
dpkg-deb -e "$deb" "$T/ctrl"
dpkg-deb -c "$deb" > "$T/files"
grep -q ' \./lib/systemd/system/qgc\.timer$' "$T/files" || fail "qgc.timer is not in /lib/systemd/system"
grep -q ' \./usr/lib/systemd/user/qgc\.timer$' "$T/files" || fail "the user timer is not installed"
! grep -q 'wants/' "$T/files" || fail "the package ships a .wants symlink: $(grep wants/ "$T/files")"
grep -q "deb-systemd-helper enable 'qgc.timer'" "$T/ctrl/postinst" || fail "postinst does not enable qgc.timer"
grep -q "deb-systemd-invoke \$_dh_action 'qgc.timer'" "$T/ctrl/postinst" || fail "postinst does not start qgc.timer"
! grep -q -- '--user' "$T/ctrl/postinst" "$T/ctrl/postrm" "$T/ctrl/prerm" ||
        fail "a maintainer script touches the user units (enabled for every user?)"
! grep -q "qgc.service" "$T/ctrl/postinst" || fail "postinst starts or restarts qgc.service (a collection at install)"
grep -q "deb-systemd-invoke stop 'qgc.timer'" "$T/ctrl/prerm" || fail "prerm does not stop qgc.timer"
grep -qx '/etc/qgc/qgc.conf' "$T/ctrl/conffiles" || fail "/etc/qgc/qgc.conf is not a conffile"
pass "the package enables and starts qgc.timer only; the user units are not enabled"
# qgc --version names the package's version (issue 24.12e: a new revision showed the old text)
for d in "$deb" "$deb2"; do
        rm -rf "$T/x" && dpkg-deb -x "$d" "$T/x"
        v=$(dpkg-deb -f "$d" Version)
        "$T/x/usr/bin/qgc" --version | grep -qxF "qgc ${v%%[-+~]*} (package $v)" ||
                fail "qgc --version of $v says: $("$T/x/usr/bin/qgc" --version)"
done
pass "qgc --version names the package's version ($v1, $v2)"

base=$(nspawn_base) || judge_missing nspawn "cannot make the Debian 12 base root (debootstrap)"
nspawn_usable "$base" ||
        judge_missing nspawn "systemd-nspawn cannot run a container here (a container or chroot: no CAP_SYS_ADMIN or cgroups)"
R=$(mktemp -d /var/tmp/qgc-nspawn.XXXXXX)
trap 'rm -rf "$R" "$R.console"; cleanup' EXIT
trap 'exit 99' INT TERM HUP
cp -a "$base/." "$R/"
cp "$deb" "$R/root/qgc_v1.deb"
cp "$deb2" "$R/root/qgc_v2.deb"
mkdir -p "$R/root/stub"
printf '#!/bin/sh\ntouch /root/cron-ran\n' > "$R/root/stub/qgc"
chmod 755 "$R/root/stub/qgc"

cat >"$T/check" <<'CHECK'
#!/bin/bash
set -u
n_fail=0
ok() { echo "ok: $*"; }
bad() { echo "not ok: $*"; n_fail=$((n_fail + 1)); }
export DEBIAN_FRONTEND=noninteractive
# cron_runs: does the cron line start qgc now? (a stub qgc, first in PATH, leaves a mark)
cron_runs() {
        local line cmd
        line=$(grep -E '^[0-9*]' /etc/cron.d/qgc | head -1)
        cmd=$(echo "$line" | awk '{ $1 = $2 = $3 = $4 = $5 = $6 = ""; print }')
        rm -f /root/cron-ran
        PATH=/root/stub:/usr/sbin:/usr/bin:/sbin:/bin sh -c "$cmd" >/dev/null 2>&1
        [ -e /root/cron-ran ]
}

# --- install
dpkg -i /root/qgc_v1.deb >/root/dpkg.log 2>&1 && ok "dpkg -i (install)" || { cat /root/dpkg.log; bad "dpkg -i failed"; }
[ "$(systemctl is-enabled qgc.timer)" = enabled ] && ok "qgc.timer enabled" || bad "qgc.timer is $(systemctl is-enabled qgc.timer)"
systemctl -q is-active qgc.timer && ok "qgc.timer active" || bad "qgc.timer not active"
systemctl list-timers --all --no-pager | grep -q 'qgc\.timer' && ok "list-timers lists qgc.timer" || bad "qgc.timer not in list-timers"
[ "$(systemctl show -P ActiveState qgc.service)" = inactive ] && [ -z "$(journalctl -q -u qgc.service -o cat)" ] &&
        ok "qgc.service did not run at install" || bad "qgc.service ran at install"
[ ! -e /etc/systemd/user/timers.target.wants/qgc.timer ] && ! ls /etc/systemd/user/*.wants/qgc.* >/dev/null 2>&1 &&
        ok "no user unit enabled globally" || bad "a user unit is enabled for every user: $(ls /etc/systemd/user/*.wants/)"
[ "$(systemctl --global is-enabled qgc.timer 2>&1)" = disabled ] && ok "systemctl --global is-enabled qgc.timer: disabled" ||
        bad "systemctl --global is-enabled qgc.timer: $(systemctl --global is-enabled qgc.timer 2>&1)"
journalctl --list-catalog 2>/dev/null | grep -qi 'caec719ed545467d92482f1a66e06938.*qgc run started' &&
        ok "the journal catalog knows qgc's messages (systemd's dpkg trigger)" || bad "qgc's catalog entries are not in journalctl --list-catalog"
for f in /usr/bin/qgc /usr/share/man/man8/qgc.8.gz /usr/share/man/man5/qgc.conf.5.gz \
         /usr/share/bash-completion/completions/qgc /usr/share/zsh/vendor-completions/_qgc \
         /usr/share/doc/qgc/README.md /usr/share/doc/qgc/fleet.md /usr/share/doc/qgc/plan-schema.md; do
        [ -e "$f" ] || bad "not installed: $f"
done
qgc check-config -c /etc/qgc/qgc.conf >/dev/null && ok "qgc check-config on the packaged qgc.conf" || bad "the packaged qgc.conf does not parse"
pkgv() { dpkg-query -W -f='${Version}' qgc; }
qgc --version | grep -qF "(package $(pkgv))" && ok "qgc --version: $(qgc --version)" || bad "qgc --version: $(qgc --version), package $(pkgv)"
cron_runs && bad "the cron line starts qgc while qgc.timer is active" || ok "cron line inert while qgc.timer is active"
# a machine booted with systemd: the cron line does nothing even with the timer disabled (issue
# 23.8: disabling the timer stops qgc, as for logrotate)
systemctl disable --now qgc.timer >/dev/null 2>&1
cron_runs && bad "the cron line starts qgc on a systemd machine when qgc.timer is disabled" ||
        ok "cron line inert on a systemd machine with qgc.timer disabled"
systemctl enable --now qgc.timer >/dev/null 2>&1

# --- upgrade, with a locally changed conffile
echo '# changed by the admin' >> /etc/qgc/qgc.conf
dpkg -i /root/qgc_v2.deb >/root/dpkg.log 2>&1 && ok "dpkg -i (upgrade to $(dpkg-query -W -f='${Version}' qgc))" || { cat /root/dpkg.log; bad "upgrade failed"; }
grep -q '^# changed by the admin' /etc/qgc/qgc.conf && ok "upgrade kept the changed conffile" || bad "upgrade lost the admin's change"
qgc --version | grep -qF "(package $(pkgv))" && ok "after the upgrade, qgc --version: $(qgc --version)" || bad "after the upgrade, qgc --version: $(qgc --version), package $(pkgv)"
[ "$(systemctl is-enabled qgc.timer)" = enabled ] && systemctl -q is-active qgc.timer &&
        ok "qgc.timer enabled and active after the upgrade" || bad "qgc.timer after the upgrade: $(systemctl is-enabled qgc.timer), $(systemctl is-active qgc.timer)"
[ "$(systemctl show -P ActiveState qgc.service)" = inactive ] && [ -z "$(journalctl -q -u qgc.service -o cat)" ] &&
        ok "qgc.service did not run at the upgrade" || bad "qgc.service ran at the upgrade"

# --- the metrics file (issue 24.9): admin.metrics-file in a policy drop-in, no unit drop-in;
# a second path named in qgc.conf (a conffile, gone before postrm hears purge) holds a file qgc
# wrote; beside them a .prom file that is not qgc's
M=/var/lib/prometheus/node-exporter
mkdir -p $M /etc/qgc/conf.d /srv/metrics
echo "admin = { metrics-file = \"$M/qgc.prom\"; };" >/etc/qgc/conf.d/metrics.conf
echo 'node_apt_upgrades_pending 0' >$M/apt.prom
systemctl start qgc.service
res=$(systemctl show -P Result qgc.service) st=$(systemctl show -P ExecMainStatus qgc.service)
[ "$res" = success ] && [ "$st" = 0 ] && grep -q '^qgc_last_run_exit_code 0$' $M/qgc.prom &&
        ok "qgc.service wrote $M/qgc.prom with a policy drop-in alone" ||
        { journalctl -u qgc.service -o cat --no-pager | tail -5; bad "qgc.service: Result=$res status=$st, metrics: $(ls $M)"; }
qgc --all-users --quiet --metrics-file /srv/metrics/qgc.prom || bad "qgc --metrics-file /srv/metrics/qgc.prom failed"
echo 'admin = { metrics-file = "/srv/metrics/qgc.prom"; };' >>/etc/qgc/qgc.conf
qgc check-config >/dev/null || bad "the policy with two metrics-file keys does not parse"

# --- remove
dpkg -r qgc >/root/dpkg.log 2>&1 && ok "dpkg -r" || { cat /root/dpkg.log; bad "dpkg -r failed"; }
systemctl -q is-active qgc.timer && bad "qgc.timer still active after removal" || ok "qgc.timer stopped by removal"
systemctl list-timers --no-pager | grep -q "qgc\.timer" && bad "qgc.timer still scheduled after removal" || ok "qgc.timer no longer scheduled (list-timers)"
[ ! -e /usr/bin/qgc ] && [ ! -e /lib/systemd/system/qgc.timer ] && ok "binary and units removed" || bad "files left after removal"
[ -f /etc/qgc/qgc.conf ] && [ -f /etc/cron.d/qgc ] && ok "conffiles kept after removal" || bad "conffiles gone after removal"
PATH=/usr/sbin:/usr/bin:/sbin:/bin sh -c "$(grep -E '^[0-9*]' /etc/cron.d/qgc | awk '{ $1 = $2 = $3 = $4 = $5 = $6 = ""; print }')" >/root/cron.out 2>&1
[ ! -s /root/cron.out ] && ok "the removed package's cron line is silent" || bad "the cron line prints (cron would mail): $(cat /root/cron.out)"
[ -f $M/qgc.prom ] && [ -f /srv/metrics/qgc.prom ] && ok "remove kept the metrics files" || bad "remove: a metrics file is missing: $(ls $M /srv/metrics)"

# --- purge
dpkg -P qgc >/root/dpkg.log 2>&1 && ok "dpkg -P" || { cat /root/dpkg.log; bad "dpkg -P failed"; }
left=$(ls -d /etc/qgc/qgc.conf /etc/cron.d/qgc /etc/systemd/system/timers.target.wants/qgc.timer /var/lib/systemd/deb-systemd-helper-enabled/qgc.timer.dsh-also /var/lib/qgc 2>/dev/null)
[ -z "$left" ] && ok "purge left nothing" || bad "purge left: $left"
[ "$(find /etc/qgc)" = "$(printf '/etc/qgc\n/etc/qgc/conf.d\n/etc/qgc/conf.d/metrics.conf')" ] &&
        ok "/etc/qgc holds the admin's drop-in only" || bad "/etc/qgc after purge: $(find /etc/qgc)"
[ ! -e $M/qgc.prom ] && [ ! -e /srv/metrics/qgc.prom ] && ok "purge removed the metrics files qgc wrote (the drop-in's and qgc.conf's)" ||
        bad "purge left a metrics file: $(ls $M/qgc.prom /srv/metrics/qgc.prom 2>/dev/null)"
[ -f $M/apt.prom ] && ok "purge kept a .prom file qgc did not write" || bad "purge removed $M/apt.prom"
dpkg-query -W qgc >/dev/null 2>&1 && bad "dpkg still knows qgc" || ok "dpkg no longer knows qgc"
exit $((n_fail > 0))
CHECK
t0=$(date +%s)
nspawn_boot "$R" "$T/check" || { tail -30 "$R.console"; fail "systemd-nspawn failed"; }
[ -f "$R/root/boot-check.rc" ] || { tail -30 "$R.console"; fail "the container did not run the check"; }
cat "$R/root/boot-check.out"
echo "boot + install/upgrade/remove/purge + poweroff: $(($(date +%s) - t0)) s"
[ "$(cat "$R/root/boot-check.rc")" = 0 ] || fail "checks failed inside the container"
pass "install, upgrade, remove and purge of $v1 (upgrade to $v2) under a real systemd"
