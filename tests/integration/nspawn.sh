#!/bin/bash
# nspawn.sh: boot a Debian 12 root with systemd as PID 1 (systemd-nspawn --boot) and run a script
# inside once the system is up. Adapted from the team's nspawn-boot tool; sourced by t-05xx tests.
#   nspawn_base           make (once) and print the cached base root; exit 77 when it cannot
#   nspawn_usable BASE    can nspawn run here (not in a container or chroot)? 0 yes
#   nspawn_boot ROOT SCRIPT
#                         boot ROOT (a fresh copy of the base, prepared by the caller), run SCRIPT
#                         as a unit of the boot (after multi-user.target), power off; SCRIPT's
#                         output is in ROOT/root/boot-check.out, its exit code in .rc
# The base is debootstrap --variant=minbase bookworm plus systemd and qgc's run-time libraries,
# nothing of qgc's; it is cached under $QGC_NSPAWN_CACHE (default /var/tmp), keyed by
# NSPAWN_BASE_VERSION: change the version when the package list changes.
NSPAWN_BASE_VERSION=bookworm-2
NSPAWN_BASE_PKGS="systemd systemd-sysv dbus dbus-user-session libpam-systemd passwd libconfig9 libjson-c5 libssl3"

nspawn_base() {
        local base=${QGC_NSPAWN_CACHE:-/var/tmp}/qgc-nspawn-base-$NSPAWN_BASE_VERSION
        if [ ! -f "$base/.done" ]; then
                command -v debootstrap >/dev/null || return 77
                (
                        # one builder at a time; a second test waits for the first
                        exec 9>"$base.lock"
                        flock 9
                        [ -f "$base/.done" ] && exit 0
                        mirror=$(grep -h "^URIs" /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 | awk '{print $2}')
                        [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
                        rm -rf "$base" "$base.tmp"
                        debootstrap --variant=minbase bookworm "$base.tmp" ${mirror:+"$mirror"} \
                                >"$base.log" 2>&1 || exit 77
                        cp /etc/resolv.conf "$base.tmp/etc/resolv.conf"
                        chroot "$base.tmp" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
                                DEBIAN_FRONTEND=noninteractive bash -c \
                                "apt-get update -qq && apt-get install -y -qq --no-install-recommends $NSPAWN_BASE_PKGS && apt-get clean" \
                                >>"$base.log" 2>&1 || exit 77
                        touch "$base.tmp/.done"
                        mv "$base.tmp" "$base"
                ) || return 77
        fi
        echo "$base"
}

# nspawn_usable BASE: can systemd-nspawn run a container here at all? Not inside a plain
# container or a chroot (no CAP_SYS_ADMIN, no cgroup hierarchy): the boot tests SKIP there. The
# probe runs /bin/true in the base, read-only, and involves nothing of qgc's.
nspawn_usable() {
        timeout 60 systemd-nspawn -q --read-only --register=no --keep-unit -D "$1" /bin/true \
                >/dev/null 2>&1 </dev/null
}

nspawn_boot() {
        local r=$1 script=$2
        install -m 0755 "$script" "$r/root/boot-check"
        cat >"$r/etc/systemd/system/boot-check.service" <<'IN'
[Unit]
After=multi-user.target
[Service]
Type=oneshot
StandardOutput=journal+console
ExecStart=/bin/bash -c '/root/boot-check >/root/boot-check.out 2>&1; echo $? >/root/boot-check.rc; systemctl poweroff'
IN
        mkdir -p "$r/etc/systemd/system/multi-user.target.wants"
        ln -sf /etc/systemd/system/boot-check.service "$r/etc/systemd/system/multi-user.target.wants/boot-check.service"
        rm -f "$r/root/boot-check.rc" "$r/root/boot-check.out"
        timeout "${NSPAWN_TIMEOUT:-300}" systemd-nspawn -q -D "$r" --boot --register=no --keep-unit \
                >"$r.console" 2>&1 </dev/null
}
