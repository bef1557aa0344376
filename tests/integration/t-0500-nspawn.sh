#!/bin/sh
# t-0500-nspawn: the installed units under a real systemd. Boots a Debian 12 root (debootstrap,
# cached under /var/tmp, see nspawn.sh) with systemd as PID 1 in systemd-nspawn, after
# `make install DESTDIR=` into a fresh copy, and checks inside:
#   - the system service, started as its timer would, runs over root's and a user's trees:
#     Result=success, journal entries with QGC_USER for both users, each tree still owned by
#     its owner only, sessions archived; the timer, once enabled, is in `systemctl list-timers`;
#   - the user service, under a lingering user's own manager: Result=success, journal entries;
#   - an invalid policy file: the unit fails with exit status 78 and the file:line error is in
#     `journalctl -u qgc`;
#   - with doc/fleet.md's policy drop-in (admin.metrics-file) and no unit drop-in, the textfile
#     has one series per user and passes promcheck.py; with --metrics-file in a unit drop-in, it
#     says exit code 78 after the invalid policy.
# Without root, systemd-nspawn or debootstrap, when the base root cannot be made or nspawn cannot
# run it, the judge is missing (judge_missing: SKIP, or FAIL where every judge must run). SKIP for
# a sanitizer build, a build whose sysconfdir is not /etc, or whose prefix is neither /usr nor
# /usr/local (distcheck's: units out of systemd's search path, binary under /tmp which the
# hardened service cannot see).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/nspawn.sh"
: "${QGC_BUILDDIR:?}"

[ "$(id -u)" = 0 ] || judge_missing nspawn "needs root (systemd-nspawn)"
for c in systemd-nspawn debootstrap chroot make; do
        command -v $c >/dev/null 2>&1 || judge_missing nspawn "$c is not installed"
done
prefix=$(sed -n 's/^prefix = //p' "$QGC_BUILDDIR/Makefile")
case $prefix in
/usr | /usr/local) ;;
*) skip "the build's prefix is $prefix, not /usr or /usr/local" ;;
esac
# the checks write the policy at /etc/qgc/qgc.conf, where the packaged and bootstrap builds read it
sysconfdir=$(sed -n 's/^sysconfdir = //p' "$QGC_BUILDDIR/Makefile")
[ "$sysconfdir" = /etc ] ||
        skip "the build's sysconfdir is $sysconfdir, not /etc (configure --sysconfdir=/etc, as ./bootstrap does)"
[ -z "$(sed -n 's/^SAN_FLAGS = //p' "$QGC_BUILDDIR/Makefile")" ] ||
        skip "a sanitizer build (its runtime and shadow memory do not belong in the hardened unit)"
t0=$(date +%s)
base=$(nspawn_base) || judge_missing nspawn "cannot make the Debian 12 base root (debootstrap; see /var/tmp/qgc-nspawn-base-*.log)"
nspawn_usable "$base" ||
        judge_missing nspawn "systemd-nspawn cannot run a container here (a container or chroot: no CAP_SYS_ADMIN or cgroups)"
t1=$(date +%s)

R=$(mktemp -d /var/tmp/qgc-nspawn.XXXXXX)
trap 'rm -rf "$R" "$R.console"; cleanup' EXIT
trap 'exit 99' INT TERM HUP
cp -a "$base/." "$R/"
make -s -C "$QGC_BUILDDIR" install DESTDIR="$R" >"$T/install.log" 2>&1 ||
        { cat "$T/install.log"; fail "make install DESTDIR failed"; }
chroot "$R" useradd -m -s /bin/bash qgcuser || fail "useradd in the root"
mkdir -p "$R/root/corpus"
cp -a "$QGC_TESTDATA/corpus/tree/." "$R/root/corpus/"
# the policy: archive what has been idle for 12 hours (the corpus is older than that)
cat >"$R/root/good.conf" <<'CONF'
defaults = {
        action = "archive";
        max-age = "12h";
        min-age = "1h";
};
CONF
printf 'defaults = {\n        max-age = "soon";\n};\n' >"$R/root/bad.conf"

cat >"$T/check" <<'CHECK'
#!/bin/bash
# Runs inside the booted container, as a unit after multi-user.target.
set -u
prefix=@prefix@
n_fail=0
ok() { echo "ok: $*"; }
bad() { echo "not ok: $*"; n_fail=$((n_fail + 1)); }
# tree HOME OWNER: a fresh corpus tree in HOME/.qwen, owned by OWNER, written long ago
tree() {
        rm -rf "$1/.qwen"
        cp -a /root/corpus "$1/.qwen"
        chown -R "$2:$2" "$1/.qwen"
        chmod -R go-w "$1/.qwen" # qgc skips a group-writable tree; a checkout can be made with umask 002
        find "$1/.qwen" -exec touch -h -d 2026-11-01T00:00:00Z {} +
}
archived() { ls "$1"/.qwen/projects/*/chats/archive/*.jsonl 2>/dev/null | wc -l; }
# entries USER MATCHES...: how many journal entries of qgc's for USER
entries() { local u=$1; shift; journalctl -q --no-pager -o cat QGC_USER="$u" "$@" | wc -l; }

cp /root/good.conf /etc/qgc/qgc.conf
tree /root root
tree /home/qgcuser qgcuser
before_root=$(archived /root) before_user=$(archived /home/qgcuser)

# --- the system service, as the timer starts it, with the metrics key of doc/fleet.md: a policy
# drop-in and no unit drop-in (the unit may write Debian's textfile directory)
mkdir -p /var/lib/prometheus/node-exporter /etc/qgc/conf.d
echo 'admin = { metrics-file = "/var/lib/prometheus/node-exporter/qgc.prom"; };' >/etc/qgc/conf.d/metrics.conf
systemctl start qgc.service && ok "systemctl start qgc.service" || bad "systemctl start qgc.service failed"
res=$(systemctl show -P Result qgc.service) st=$(systemctl show -P ExecMainStatus qgc.service)
[ "$res" = success ] && [ "$st" = 0 ] && ok "qgc.service Result=$res status=$st" ||
        bad "qgc.service Result=$res status=$st"
journalctl --sync
for u in root qgcuser; do
        n=$(entries $u _SYSTEMD_UNIT=qgc.service QGC_ACTION=archived)
        [ "$n" -gt 0 ] && ok "journal: $n archive entries with QGC_USER=$u from qgc.service" ||
                bad "journal: no archive entries with QGC_USER=$u from qgc.service"
done
cp -p /var/lib/prometheus/node-exporter/qgc.prom /root/metrics-ok.prom || bad "qgc.service wrote no metrics file"
after_root=$(archived /root) after_user=$(archived /home/qgcuser)
[ "$after_root" -gt "$before_root" ] && ok "root's tree: $before_root -> $after_root archived" ||
        bad "root's tree: nothing archived ($before_root -> $after_root)"
[ "$after_user" -gt "$before_user" ] && ok "qgcuser's tree: $before_user -> $after_user archived" ||
        bad "qgcuser's tree: nothing archived ($before_user -> $after_user)"
others=$(find /home/qgcuser/.qwen \( ! -user qgcuser -o ! -group qgcuser \) | head -3)
[ -z "$others" ] && ok "qgcuser's tree: every file owned by qgcuser" || bad "qgcuser's tree: not qgcuser's: $others"
others=$(find /root/.qwen \( ! -user root -o ! -group root \) | head -3)
[ -z "$others" ] && ok "root's tree: every file owned by root" || bad "root's tree: not root's: $others"
systemctl enable --now qgc.timer >/dev/null 2>&1 || bad "systemctl enable --now qgc.timer"
systemctl list-timers --all --no-pager | grep -q 'qgc\.timer.*qgc\.service' &&
        ok "systemctl list-timers lists qgc.timer" || { systemctl list-timers --all --no-pager; bad "qgc.timer not listed"; }

# --- the user service, under the lingering user's own manager
tree /home/qgcuser qgcuser
uid=$(id -u qgcuser)
loginctl enable-linger qgcuser
for i in $(seq 1 100); do
        [ -S /run/user/$uid/systemd/private ] && systemctl -q is-active user@$uid.service && break
        sleep 0.2
done
systemctl -q is-active user@$uid.service && ok "user@$uid.service runs (linger)" || bad "user@$uid.service not running"
ucmd() { runuser -u qgcuser -- env XDG_RUNTIME_DIR=/run/user/$uid "$@"; }
ucmd systemctl --user daemon-reload
ucmd systemctl --user start qgc.service && ok "systemctl --user start qgc.service" || bad "systemctl --user start qgc.service failed"
res=$(ucmd systemctl --user show -P Result qgc.service) st=$(ucmd systemctl --user show -P ExecMainStatus qgc.service)
[ "$res" = success ] && [ "$st" = 0 ] && ok "user qgc.service Result=$res status=$st" ||
        bad "user qgc.service Result=$res status=$st"
journalctl --sync
n=$(entries qgcuser _SYSTEMD_USER_UNIT=qgc.service _UID=$uid QGC_ACTION=archived)
[ "$n" -gt 0 ] && ok "journal: $n archive entries with QGC_USER=qgcuser from the user's qgc.service" ||
        bad "journal: no archive entries from the user's qgc.service"
ucmd systemctl --user list-unit-files qgc.timer --no-pager | grep -q 'qgc.timer *disabled' &&
        ok "the user timer is installed and not enabled" || bad "the user timer is not 'disabled'"

# --- an invalid policy file; --metrics-file in a unit drop-in (the key is in the policy that
# does not parse) reports its exit code
mkdir -p /etc/systemd/system/qgc.service.d
cat >/etc/systemd/system/qgc.service.d/metrics.conf <<IN
[Service]
ExecStart=
ExecStart=$prefix/bin/qgc --all-users --quiet --metrics-file /var/lib/prometheus/node-exporter/qgc.prom
IN
systemctl daemon-reload
cp /root/bad.conf /etc/qgc/qgc.conf
if systemctl start qgc.service 2>/dev/null; then bad "qgc.service started with an invalid policy"; fi
res=$(systemctl show -P Result qgc.service) st=$(systemctl show -P ExecMainStatus qgc.service)
state=$(systemctl show -P ActiveState qgc.service)
[ "$state" = failed ] && [ "$res" = exit-code ] && [ "$st" = 78 ] &&
        ok "invalid policy: qgc.service $state, Result=$res, status $st" ||
        bad "invalid policy: qgc.service $state, Result=$res, status $st (expected failed, exit-code, 78)"
journalctl --sync
journalctl -u qgc.service --no-pager -o cat | grep -q '^/etc/qgc/qgc.conf:2: max-age: invalid duration' &&
        ok "journalctl -u qgc: /etc/qgc/qgc.conf:2: max-age: invalid duration" ||
        { journalctl -u qgc.service --no-pager -o cat | tail -5; bad "no file:line error in journalctl -u qgc"; }
cp -p /var/lib/prometheus/node-exporter/qgc.prom /root/metrics-failed.prom
exit $((n_fail > 0))
CHECK
sed -i "s|@prefix@|$prefix|" "$T/check"
t2=$(date +%s)
nspawn_boot "$R" "$T/check" || { tail -30 "$R.console"; fail "systemd-nspawn failed"; }
t3=$(date +%s)
[ -f "$R/root/boot-check.rc" ] || { tail -30 "$R.console"; fail "the container did not run the check"; }
cat "$R/root/boot-check.out"
echo "base: $((t1 - t0)) s, setup: $((t2 - t1)) s, boot + checks + poweroff: $((t3 - t2)) s"
[ "$(cat "$R/root/boot-check.rc")" = 0 ] || fail "checks failed inside the container"
if command -v python3 >/dev/null 2>&1; then
        PC="$QGC_TESTDATA/../integration/promcheck.py"
        [ "$(stat -c %a "$R/root/metrics-ok.prom")" = 644 ] || fail "the metrics file's mode is not 644 (UMask=0077)"
        python3 "$PC" "$R/root/metrics-ok.prom" 'qgc_last_run_exit_code==0' \
                'qgc_last_run_actions{user="root",outcome="archived"}>0' \
                'qgc_last_run_actions{user="qgcuser",outcome="archived"}>0' \
                'qgc_tree_size_bytes{user="root",tree="/root/.qwen"}>0' \
                'qgc_tree_size_bytes{user="qgcuser",tree="/home/qgcuser/.qwen"}>0' \
                'qgc_filesystem_avail_bytes{user="qgcuser"}>0' ||
                { cat "$R/root/metrics-ok.prom"; fail "the system service's metrics"; }
        python3 "$PC" "$R/root/metrics-failed.prom" 'qgc_last_run_exit_code==78' ||
                fail "the failed run's metrics"
        echo "ok: metrics from qgc.service: one series per user; exit code 78 after the invalid policy"
fi
pass "the units under a real systemd (nspawn boot)"
