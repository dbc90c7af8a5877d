# Boots systemd as PID 1 of a throwaway container made of this machine's
# own files, so that a bench can use the real path unit and service where
# systemd does not run (a CI runner or a VM whose PID 1 is something
# else). Sourced by activation_latency.sh; root only.
#
#   sd_boot            boots it (SD_PID: systemd's pid here); fails with
#                      the reason in SD_WHY
#   sd_run CMD...      runs CMD inside, as root, with a plain PATH
#   sd_teardown        kills it; everything it changed is gone
#
# The container has private PID, mount, network, UTS, IPC and cgroup
# namespaces. Its root is a tmpfs holding overlays of /usr, /etc, /var,
# /home and /root (their changes land in a temp dir and vanish), /proc of
# its own, /sys read-only, a cgroup2 file system of its own under a new
# cgroup of the unified hierarchy, and this machine's /dev. $SD_SHARE
# is visible inside as /mnt. systemd starts tern-bench.target, which
# pulls in only sysinit.target, so no service of the machine (a
# database, a getty, Slurm) starts; the tern units come with the package
# a bench installs. It is what systemd-nspawn does, with util-linux's
# unshare and pivot_root, which every Debian has.

SD_PID=
SD_WHY=
SD_DIR=
SD_CGROUP=

# The unified (cgroup2) hierarchy: /sys/fs/cgroup itself on a cgroup2
# machine, /sys/fs/cgroup/unified on a hybrid one.
sd_unified() {
    if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
        echo /sys/fs/cgroup
    elif [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
        echo /sys/fs/cgroup/unified
    fi
}

sd_boot() {
    local unified systemd
    systemd=$(command -v /lib/systemd/systemd || true)
    [ -n "$systemd" ] || { SD_WHY="no /lib/systemd/systemd (apt-get install systemd)"; return 1; }
    unified=$(sd_unified)
    [ -n "$unified" ] || { SD_WHY="no cgroup2 hierarchy mounted"; return 1; }
    SD_DIR=$(mktemp -d /tmp/tern-systemd-XXXXXX)
    mkdir "$SD_DIR/share"
    SD_SHARE=$SD_DIR/share
    SD_CGROUP=$unified/tern-bench-$$
    mkdir "$SD_CGROUP" || { SD_WHY="cannot make the cgroup $SD_CGROUP"; return 1; }
    # The container's init, run as PID 1 of the new namespaces.
    cat >"$SD_DIR/init.sh" <<'INIT'
set -e
d=$1
r=$d/root
mkdir -p "$r"
mount -t tmpfs -o mode=0755 tmpfs "$r"
for x in usr etc var home root; do
    mkdir -p "$d/$x/up" "$d/$x/work" "$r/$x"
    mount -t overlay overlay -o "lowerdir=/$x,upperdir=$d/$x/up,workdir=$d/$x/work" "$r/$x"
done
for l in bin sbin lib lib64; do [ -e "/$l" ] && ln -s "usr/$l" "$r/$l"; done
mkdir -p "$r/proc" "$r/sys" "$r/dev" "$r/run" "$r/tmp" "$r/mnt" "$r/oldroot"
chmod 1777 "$r/tmp"
mount -t proc proc "$r/proc"
mount -t sysfs -o ro sysfs "$r/sys"
mount -t cgroup2 cgroup2 "$r/sys/fs/cgroup"
mount --rbind /dev "$r/dev"
mount -t tmpfs -o mode=0755 tmpfs "$r/run"
mount --bind "$d/share" "$r/mnt"
# Package scripts may start services (a policy-rc.d that says no is how
# container images stop them).
rm -f "$r/usr/sbin/policy-rc.d"
mkdir -p "$r/etc/systemd/system"
cat >"$r/etc/systemd/system/tern-bench.target" <<'UNIT'
[Unit]
Description=tern bench: systemd and nothing of the machine's
Requires=sysinit.target systemd-journald.socket
After=sysinit.target
UNIT
cd "$r"
pivot_root . oldroot
umount -l /oldroot
exec env -i container=tern-bench /lib/systemd/systemd --unit=tern-bench.target
INIT
    sh -c "echo \$\$ >'$SD_CGROUP/cgroup.procs' && exec unshare --fork --pid --mount \
        --uts --ipc --net --cgroup --propagation private /bin/sh '$SD_DIR/init.sh' '$SD_DIR'" \
        >"$SD_DIR/boot.log" 2>&1 &
    local unshare=$! i
    for i in $(seq 100); do
        SD_PID=$(pgrep -P "$unshare" || true)
        if [ -n "$SD_PID" ] && [ "$(cat "/proc/$SD_PID/comm" 2>/dev/null)" = systemd ]; then
            case $(sd_run systemctl is-system-running --wait 2>/dev/null) in
            running | degraded) return 0 ;;
            esac
        fi
        kill -0 "$unshare" 2>/dev/null || break
        sleep 0.3
    done
    SD_WHY="systemd did not come up: $(tail -n 3 "$SD_DIR/boot.log" | tr '\n' ' ')"
    return 1
}

sd_run() {
    nsenter -t "$SD_PID" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

sd_teardown() {
    # PID 1 gone, the kernel kills everything else in the namespace.
    [ -n "$SD_PID" ] && kill -9 "$SD_PID" 2>/dev/null
    local i
    for i in $(seq 50); do
        [ -z "$SD_PID" ] || ! kill -0 "$SD_PID" 2>/dev/null && break
        sleep 0.1
    done
    # systemd's cgroups inside, deepest first, once the processes the
    # kernel is killing have left them.
    for i in $(seq 50); do
        [ -n "$SD_CGROUP" ] && [ -d "$SD_CGROUP" ] || break
        find "$SD_CGROUP" -depth -type d -exec rmdir {} + 2>/dev/null
        sleep 0.1
    done
    [ -n "$SD_DIR" ] && rm -rf "$SD_DIR"
    SD_PID=
}
