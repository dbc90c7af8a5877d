#!/usr/bin/env bash
# A shell loop of single submits, as a script drives tern (issue 12, item 3):
# 1,000 `tern_submit one.sub` calls of one /bin/true job each, one after the
# other, with the default setup (each submit starts a pass or leaves the
# pass-wanted mark; claim reuse runs what arrives), timed from the first
# submit to the last completion; target >= 300 jobs/s end to end. The same
# loop in the same run with the local peers, each one client call per job
# and then a wait for all:
#
#   tern          `tern_submit one.sub` x N in a loop (in a bash started by
#                 `env -i`, so nothing but the tool is exec'd per job); the
#                 clock stops at the first poll (`tern_q -totals`, every
#                 20 ms) that finds the queue empty, and history must then
#                 hold N jobs that exited 0. Two cpus (NUM_CPUS = 2).
#   task-spooler  `tsp -S 2`, N `tsp /bin/true`, then wait until the list
#                 has nothing queued/running and N finished with 0.
#   nq            two queues (two NQDIRs, job i in queue i mod 2, nq runs
#                 one queue strictly in order), N `nq -q /bin/true`, then
#                 `nq -w` on each.
#   loop          the same shell loop running /bin/true itself: what the
#                 loop and N fork/exec/waits cost, nothing queued.
#   write         the same loop running examples/durable_write.rs: one
#                 row written to a one-table SQLite database per process,
#                 durably and kept as tern keeps its queue (WAL, the commit
#                 synced, no checkpoint at close): the floor under any
#                 design with a process per submit, nothing run.
#
# Runs are interleaved (loop, tern, tsp, nq, then again) so a load spike
# hits every case alike; the best and the median are printed with jobs/s,
# and tern's jobs/s over each peer's.
#
# Missing peers are installed (apt-get install task-spooler nq) or skipped
# with a message. SKIP="nq" leaves peers out; TIMEOUT (default 300 s) bounds
# each case.
#
# Usage: bench/loop_submit.sh [runs] [jobs]   (defaults 3 and 1000)
# Honours CARGO_TARGET_DIR; builds the release binaries first.
set -euo pipefail

runs=${1:-3}
jobs=${2:-1000}
skip=" ${SKIP:-} "
timeout_s=${TIMEOUT:-300}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/pkg/release-build.sh"
tern_release_build "$root"
tern_release_build "$root" --example durable_write

work=$(mktemp -d /tmp/tern-loopsubmit.XXXXXX)
# Copies, so a concurrent rebuild cannot swap them mid-run; tern_submit
# finds tern_negotiate, and that finds tern_shadow, beside itself.
mkdir "$work/bin"
cp "$tern_release_dir"/tern_{submit,negotiate,shadow,q,history} "$work/bin/"
cp "$tern_release_dir/examples/durable_write" "$work/bin/"
bin=$work/bin

. "$root/bench/common.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- installing the peers ---------------------------------------------------
peers=()
add_apt_peers

# ---- the cases: each prints its wall seconds, or fails ----------------------
run_loop() {
    local t0
    t0=$(now)
    for ((i = 0; i < jobs; i++)); do /bin/true; done
    elapsed "$t0" "$(now)"
}

run_write() {
    local db=$work/write.$1 t0
    t0=$(now)
    env -i PATH=/usr/bin:/bin N="$jobs" W="$bin/durable_write" DB="$db/t.db" bash -c \
        'mkdir -p "${DB%/*}"; for ((i = 0; i < N; i++)); do "$W" "$DB" || exit 1; done' ||
        { fail write "a durable_write failed"; return 1; }
    elapsed "$t0" "$(now)"
    rm -rf "$db"
}

printf 'executable = /bin/true\nqueue\n' >"$work/one.sub"
tern_env() {
    env -i PATH=/usr/bin:/bin HOME="$work" TERN_CONFIG=/dev/null \
        _TERN_SPOOL="$1" _TERN_NUM_CPUS=2 "${@:2}"
}
run_tern() {
    local spool=$work/tern.$1 t0 t1 end
    end=$(deadline)
    t0=$(now)
    (cd "$work" && tern_env "$spool" N="$jobs" SUBMIT="$bin/tern_submit" bash -c \
        'for ((i = 0; i < N; i++)); do "$SUBMIT" one.sub >/dev/null || exit 1; done') ||
        { fail tern "a tern_submit failed"; return 1; }
    tern_drain "$spool" "$end" 0.02 "$spool/shadow/ShadowLog" || return 1
    t1=$(now)
    tern_all_done "$spool" "$jobs" || return 1
    wait_for_shadows "$spool"
    rm -rf "$spool"
    elapsed "$t0" "$t1"
}
# ---- running them -------------------------------------------------------
cases=(loop write tern "${peers[@]}")
declare -A times
run_interleaved


declare -A label=(
    [loop]="loop: /bin/true itself"
    [write]="floor: a durable write each"
    [tern]="tern: tern_submit one.sub"
    [tsp]="task-spooler (tsp -S 2)"
    [nq]="nq (two queues)"
)
tern_best=$(best "${times[tern]:-}")
tern_med=$(median "${times[tern]:-}")
printf '\n%-30s %8s %8s %8s %9s %11s\n' "case ($jobs x one job, 2 cpus)" "best/s" "median/s" "jobs/s" "(median)" "tern/peer"
for c in "${cases[@]}"; do
    if [[ -z ${times[$c]:-} ]]; then
        printf '%-30s %8s\n' "${label[$c]}" failed
        continue
    fi
    b=$(best "${times[$c]}")
    m=$(median "${times[$c]}")
    # tern's jobs/s over the peer's (best runs): above 1 means tern is faster
    if [[ $c == tern || -z $tern_best ]]; then rel="-"; else rel=$(ratio "$b" "$tern_best"); fi
    printf '%-30s %8s %8s %8s %9s %11s\n' "${label[$c]}" "$b" "$m" "$(rate "$jobs" "$b")" "$(rate "$jobs" "$m")" "$rel"
done
echo "tern/peer = tern's jobs/s over the peer's (best runs); above 1 means tern is faster"
if [[ -n $tern_best ]]; then
    verdict=$(awk -v t="$tern_best" -v j="$jobs" 'BEGIN { if (j / t >= 300) print "meets"; else print "misses" }')
    echo "target: tern >= 300 jobs/s end to end: best $(rate "$jobs" "$tern_best") jobs/s ($tern_best s), median $(rate "$jobs" "$tern_med") jobs/s, $verdict the target"
fi
echo "runs: $runs (all: $(for c in "${cases[@]}"; do printf '%s=[%s] ' "$c" "${times[$c]:-}"; done))"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)  cpus: $(nproc)"
