#!/usr/bin/env bash
# A one-node Slurm cluster from Debian's packages, without systemd, in one
# directory (see the project's notes on single-node Slurm).
#
#   slurm.sh install        install the Debian packages if missing (root)
#   slurm.sh up DIR         install if needed, start munged, slurmctld and
#                           slurmd under DIR, wait until the node is usable,
#                           print `export SLURM_CONF=DIR/etc/slurm.conf`
#   slurm.sh down DIR       cancel every job, stop the daemons; no process is left
#   slurm.sh down-keep-jobs DIR   stop the daemons, leave running jobs alone
#   slurm.sh purge DIR      down, then remove DIR
#   slurm.sh env DIR        print the export line again
#   slurm.sh ctld-stop DIR  stop slurmctld alone (the controller unreachable,
#                           jobs keep running under slurmd)
#   slurm.sh ctld-start DIR start it again and wait until it answers
#
# Environment: SLURM_LOCAL_CTLD_PORT / SLURM_LOCAL_SLURMD_PORT (16817/16818,
# so a system Slurm or a second instance can coexist), SLURM_LOCAL_CPUS
# (default nproc; more than nproc oversubscribes), SLURM_LOCAL_SCHEDPARAMS
# (default batch_sched_delay=0; set but empty gives Slurm's defaults),
# SLURM_LOCAL_MINJOBAGE (default 300).
# Exit codes: 0 done, 1 failed, 77 cannot run here (not root, no packages
# and no way to install them).
set -euo pipefail

die() { echo "slurm.sh: $*" >&2; exit 1; }
skip() { echo "slurm.sh: $*" >&2; exit 77; }

ctld_port=${SLURM_LOCAL_CTLD_PORT:-16817}
slurmd_port=${SLURM_LOCAL_SLURMD_PORT:-16818}

have_packages() {
    command -v slurmctld >/dev/null && command -v slurmd >/dev/null &&
        command -v sbatch >/dev/null && command -v munged >/dev/null &&
        command -v mungekey >/dev/null
}

install() {
    have_packages && return 0
    [ "$(id -u)" = 0 ] || skip "the Slurm packages are missing and installing them needs root"
    command -v apt-get >/dev/null || skip "the Slurm packages are missing and there is no apt-get"
    # The postinst scripts print "policy-rc.d denied execution of start" and
    # start nothing; this script starts the daemons itself.
    apt-get update -qq || skip "apt-get update failed (no network?)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        slurm-wlm slurmctld slurmd slurm-client munge >/dev/null ||
        skip "installing the Slurm packages failed"
    have_packages || die "the Slurm packages are installed but a program is missing"
}

# The node counts as usable in any of these states: after a restart it may
# still be running jobs that the previous `down-keep-jobs` left behind.
node_ready() {
    local st
    st=$(sinfo -h -n localhost -o %T 2>/dev/null) || return 1
    case "$st" in idle | mixed | allocated | completing) return 0 ;; *) return 1 ;; esac
}

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

up() {
    local d=$1
    [ "$(id -u)" = 0 ] || skip "slurmctld and slurmd run as root here (SlurmUser=root)"
    install
    mkdir -p "$d"/{etc,munge,state/ctld,state/d,log,run,jobs}
    d=$(cd "$d" && pwd)
    # munged refuses a socket directory that is not world-executable, and
    # so every directory above it.
    chmod 755 "$d" "$d/munge"
    local p=$d
    while p=$(dirname "$p") && [ "$p" != / ]; do
        [ "$(stat -c %A "$p" | cut -c10)" = x ] || [ "$(stat -c %A "$p" | cut -c10)" = t ] ||
            die "munged needs every directory above its socket world-executable; $p is not (chmod o+x $p)"
    done
    if pid_alive "$d/run/slurmctld.pid"; then
        die "a Slurm already runs in $d (slurm.sh down $d first)"
    fi
    if [ ! -f "$d/munge/munge.key" ]; then
        mungekey --create --keyfile="$d/munge/munge.key" >/dev/null
    fi
    chmod 600 "$d/munge/munge.key"
    if ! pid_alive "$d/run/munged.pid"; then
        # Foreground daemons backgrounded with setsid: no forked orphans for
        # a slow PID 1 to reap, and the pid files name the real daemons.
        setsid munged -F --socket="$d/munge/munge.sock" --key-file="$d/munge/munge.key" \
            --pid-file="$d/run/munged.pid" --log-file="$d/log/munged.log" \
            --seed-file="$d/munge/munged.seed" </dev/null >"$d/log/munged.stdout" 2>&1 &
    fi
    local i
    for i in $(seq 100); do
        munge -n -S "$d/munge/munge.sock" 2>/dev/null | unmunge -S "$d/munge/munge.sock" >/dev/null 2>&1 && break
        [ "$i" = 100 ] && die "munged did not start (see $d/log/munged.log)"
        sleep 0.05
    done
    write_conf "$d"
    export SLURM_CONF="$d/etc/slurm.conf"
    setsid slurmctld -D -f "$SLURM_CONF" </dev/null >"$d/log/slurmctld.stdout" 2>&1 &
    setsid slurmd -D -f "$SLURM_CONF" -N localhost </dev/null >"$d/log/slurmd.stdout" 2>&1 &
    for i in $(seq 300); do
        node_ready && break
        [ "$i" = 300 ] && die "the node did not become idle in 30 s (see $d/log/slurmctld.log, $d/log/slurmd.log)"
        sleep 0.1
    done
    echo "export SLURM_CONF=$SLURM_CONF"
}

write_conf() {
    local d=$1 cpus mem extra=""
    cpus=${SLURM_LOCAL_CPUS:-$(nproc)}
    mem=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
    # More CPUs than the hardware has leaves the node INVAL unless slurmd is
    # told to take the configured numbers.
    if [ "$cpus" -gt "$(nproc)" ]; then extra="SlurmdParameters=config_overrides"; fi
    local sched="SchedulerParameters=batch_sched_delay=0"
    if [ "${SLURM_LOCAL_SCHEDPARAMS+set}" = set ]; then
        sched=""
        [ -n "$SLURM_LOCAL_SCHEDPARAMS" ] && sched="SchedulerParameters=$SLURM_LOCAL_SCHEDPARAMS"
    fi
    cat >"$d/etc/slurm.conf.tmp" <<EOF
ClusterName=local
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/munge.sock
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
StateSaveLocation=$d/state/ctld
SlurmdSpoolDir=$d/state/d
SlurmctldPidFile=$d/run/slurmctld.pid
SlurmdPidFile=$d/run/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
$sched
ReturnToService=2
MailProg=/bin/true
MpiDefault=none
JobCompType=jobcomp/filetxt
JobCompLoc=$d/log/jobcomp.txt
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MinJobAge=${SLURM_LOCAL_MINJOBAGE:-300}
$extra
NodeName=localhost CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
    mv "$d/etc/slurm.conf.tmp" "$d/etc/slurm.conf"
}

wait_gone() {
    local f=$1 i
    [ -f "$f" ] || return 0
    local pid
    pid=$(cat "$f")
    for i in $(seq 100); do
        kill -0 "$pid" 2>/dev/null || return 0
        [ "$i" = 50 ] && kill -TERM "$pid" 2>/dev/null
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
}

down() {
    local d=$1 keep=$2 i
    [ -d "$d" ] || return 0
    d=$(cd "$d" && pwd)
    export SLURM_CONF="$d/etc/slurm.conf"
    if pid_alive "$d/run/slurmctld.pid"; then
        # scontrol shutdown leaves running jobs running: cancel them first.
        if [ "$keep" = no ]; then
            squeue -h -o %i 2>/dev/null | xargs -r scancel 2>/dev/null || true
            for i in $(seq 100); do
                [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
                sleep 0.1
            done
        fi
        scontrol shutdown >/dev/null 2>&1 || true
    fi
    wait_gone "$d/run/slurmctld.pid"
    wait_gone "$d/run/slurmd.pid"
    if pid_alive "$d/run/munged.pid"; then
        munged -s --socket="$d/munge/munge.sock" >/dev/null 2>&1 || true
        wait_gone "$d/run/munged.pid"
    fi
    rm -f "$d"/run/*.pid
}

ctld_stop() {
    local d
    d=$(cd "$1" && pwd)
    pid_alive "$d/run/slurmctld.pid" && kill -TERM "$(cat "$d/run/slurmctld.pid")"
    wait_gone "$d/run/slurmctld.pid"
}

ctld_start() {
    local d i
    d=$(cd "$1" && pwd)
    export SLURM_CONF="$d/etc/slurm.conf"
    setsid slurmctld -D -f "$SLURM_CONF" </dev/null >>"$d/log/slurmctld.stdout" 2>&1 &
    for i in $(seq 300); do
        node_ready && return 0
        sleep 0.1
    done
    die "slurmctld did not come back in 30 s (see $d/log/slurmctld.log)"
}

cmd=${1:-}
case "$cmd" in
install) install ;;
up) [ $# = 2 ] || die "usage: slurm.sh up DIR"; up "$2" ;;
down) [ $# = 2 ] || die "usage: slurm.sh down DIR"; down "$2" no ;;
down-keep-jobs) [ $# = 2 ] || die "usage: slurm.sh down-keep-jobs DIR"; down "$2" yes ;;
purge) [ $# = 2 ] || die "usage: slurm.sh purge DIR"; down "$2" no; rm -rf "$2" ;;
env) [ $# = 2 ] || die "usage: slurm.sh env DIR"; echo "export SLURM_CONF=$(cd "$2" && pwd)/etc/slurm.conf" ;;
ctld-stop) [ $# = 2 ] || die "usage: slurm.sh ctld-stop DIR"; ctld_stop "$2" ;;
ctld-start) [ $# = 2 ] || die "usage: slurm.sh ctld-start DIR"; ctld_start "$2" ;;
*) die "usage: slurm.sh install|up|down|down-keep-jobs|purge|env|ctld-stop|ctld-start DIR" ;;
esac
