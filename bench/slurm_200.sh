#!/usr/bin/env bash
# End to end through Slurm: 200 trivial jobs submitted to tern as grid
# universe jobs (`grid_resource = batch slurm`), run by tern_gridmanager on
# a one-node Slurm, against the same 200 jobs submitted to that Slurm
# directly with sbatch, in the same run:
#
#   sbatch   `sbatch -o /dev/null --wrap true` 200 times, then `squeue -h`
#            every 0.1 s until no job is pending or running (Slurm's own
#            time for the work, as the single-node notes measure it).
#   tern     one submit file with `queue 200` of /bin/true; the pass starts
#            on submit and starts the gridmanager; the clock stops at the
#            first poll (`tern_q -totals`, every 0.1 s) that finds the queue
#            empty, and history must then hold 200 jobs that exited 0.
#   routed   the same 200 jobs as vanilla jobs with `+WantSlurm = true` and
#            `requirements = false`, routed by the route README.md documents
#            (read from README.md). The pass on submit starts the router;
#            the router asks for a pass after routing and the gridmanager
#            when a copy moves, so nothing else is needed. A cron tick
#            (tern_negotiate) still runs every ROUTER_TICK seconds (default
#            60, cron's minute) as the README sets it up. The clock stops
#            when the queue is empty: the last source completed (sources
#            leave the queue with their copies); history must then hold 200
#            sources that exited 0 with Managed = "ScheddDone". The route's
#            MaxIdleJobs = 20 keeps at most 20 copies not yet seen running,
#            so the jobs go to Slurm 20 at a time: that is the route's
#            throttle, not tern's cost. ROUTE_MAX_IDLE=N replaces the
#            route's MaxIdleJobs (-1: no idle limit) to measure the routing
#            itself.
#
# Runs are interleaved (sbatch, tern, sbatch, ...) so a load spike hits both
# alike; the best and the median are printed, with tern's overhead over
# Slurm's own time (target: <= 10%).
#
# The Slurm is brought up by tests/slurm/slurm.sh (root; the Debian packages
# are installed if missing) on ports 16847/16848 with SLURM_LOCAL_CPUS
# (default 16, oversubscribed: about 15 trivial jobs/s; with 2 cpus Slurm
# starts about 2 jobs/s and a case takes ~100 s) and torn down at the end.
# GRIDMANAGER_JOB_PROBE_INTERVAL is tern's default unless set.
#
# Usage: bench/slurm_200.sh [runs] [jobs]   (defaults 3 and 200); CASES picks
# cases ("sbatch tern routed" by default).
# Honours CARGO_TARGET_DIR; builds the release binaries first.
set -euo pipefail

runs=${1:-3}
jobs=${2:-200}
timeout_s=${TIMEOUT:-600}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/pkg/release-build.sh"
tern_release_build "$root"

work=$(mktemp -d /tmp/tern-slurm200.XXXXXX)
# munged wants its socket's directories world-executable.
chmod 755 "$work"
mkdir "$work/bin"
cp "$tern_release_dir"/tern_{submit,negotiate,gridmanager,job_router,q,history} "$work/bin/"
bin=$work/bin

. "$root/bench/common.sh"
export SLURM_LOCAL_CTLD_PORT=16847 SLURM_LOCAL_SLURMD_PORT=16848
export SLURM_LOCAL_CPUS=${SLURM_LOCAL_CPUS:-16}
slurm_down() {
    bash "$root/tests/slurm/slurm.sh" purge "$work/slurm" >/dev/null 2>&1 || true
    cleanup
}
trap slurm_down EXIT
trap 'exit 130' INT TERM

bash "$root/tests/slurm/slurm.sh" up "$work/slurm" >/dev/null
export SLURM_CONF=$work/slurm/etc/slurm.conf
# Slurm's answers for the checks below.
export SLURM_TIME_FORMAT=%s

# ---- the cases: each prints its wall seconds, or fails ----------------------
run_sbatch() {
    local t0 t1 i end
    end=$(deadline)
    t0=$(now)
    for ((i = 0; i < jobs; i++)); do
        (cd "$work" && sbatch -o /dev/null --wrap true >/dev/null)
    done
    while [[ -n $(squeue -h -o %i) ]]; do
        past "$end" && { fail sbatch "jobs still queued after ${timeout_s}s"; return 1; }
        sleep 0.1
    done
    t1=$(now)
    elapsed "$t0" "$t1"
}

printf 'universe = grid\ngrid_resource = batch slurm\nexecutable = /bin/true\nqueue %d\n' \
    "$jobs" >"$work/grid.sub"
tern_env() {
    env -i PATH=/usr/bin:/bin HOME="$work" TERN_CONFIG="${TERN_CONFIG_FILE:-/dev/null}" SLURM_CONF="$SLURM_CONF" \
        _TERN_SPOOL="$1" ${GRIDMANAGER_JOB_PROBE_INTERVAL:+_TERN_GRIDMANAGER_JOB_PROBE_INTERVAL=$GRIDMANAGER_JOB_PROBE_INTERVAL} \
        "${@:2}"
}
run_tern() {
    local spool=$work/tern.$1 t0 t1 end
    end=$(deadline)
    t0=$(now)
    (cd "$work" && tern_env "$spool" "$bin/tern_submit" grid.sub >/dev/null)
    tern_drain "$spool" "$end" 0.1 "$spool/grid/GridmanagerLog" || return 1
    t1=$(now)
    tern_all_done "$spool" "$jobs" || return 1
    wait_for_shadows "$spool"
    rm -rf "$spool"
    elapsed "$t0" "$t1"
}

# The README's route: the first fenced block of its section "When one
# machine is not enough".
awk '/^## When one machine is not enough/ { s = 1; next }
     s && /^## / { exit }
     s && /^```/ { if (b) exit; b = 1; next }
     b' "$root/README.md" >"$work/route.config"
grep -q 'batch slurm' "$work/route.config" || { echo "no route to Slurm in README.md" >&2; exit 1; }
if [[ -n ${ROUTE_MAX_IDLE:-} ]]; then
    sed -i "s/^\( *\)MaxIdleJobs = .*/\1MaxIdleJobs = $ROUTE_MAX_IDLE/" "$work/route.config"
    grep -q "MaxIdleJobs = $ROUTE_MAX_IDLE" "$work/route.config" ||
        { echo "the README's route sets no MaxIdleJobs to replace" >&2; exit 1; }
fi
printf 'executable = /bin/true\n+WantSlurm = true\nrequirements = false\nqueue %d\n' \
    "$jobs" >"$work/routed.sub"
tick=${ROUTER_TICK:-60}
# cron's tick, every $tick seconds of a routed run (run_routed's $next):
# the pass starts the router in the background.
cron_tick() {
    past "$next" || return 0
    tern_env "$spool" "$bin/tern_negotiate" >/dev/null
    next=$(awk -v t="$EPOCHREALTIME" -v d="$tick" 'BEGIN { printf "%.3f", t + d }')
}
run_routed() {
    local spool=$work/routed.$1 t0 t1 left by_code end next
    export TERN_CONFIG_FILE=$work/route.config
    end=$(deadline)
    t0=$(now)
    (cd "$work" && tern_env "$spool" "$bin/tern_submit" routed.sub >/dev/null)
    next=$(awk -v t="$t0" -v d="$tick" 'BEGIN { printf "%.3f", t + d }')
    tern_drain "$spool" "$end" 0.1 "$spool/JobRouterLog" cron_tick || return 1
    t1=$(now)
    left=$(tern_env "$spool" "$bin/tern_history" -constraint 'RoutedToJobId =!= undefined' -af ClusterId | wc -l)
    by_code=$(tern_env "$spool" "$bin/tern_history" -constraint 'RoutedToJobId =!= undefined' \
        -af ExitCode JobStatus Managed | sort | uniq -c | awk '{ printf "%s", $0 }')
    [[ $left == "$jobs" ]] || fail routed "history holds $left sources, not $jobs" || return 1
    [[ $by_code == *"$jobs 0 4 ScheddDone" ]] ||
        fail routed "not every source exited 0 and completed: $by_code" || return 1
    wait_for_shadows "$spool"
    rm -rf "$spool"
    elapsed "$t0" "$t1"
}

# ---- running them -------------------------------------------------------
read -ra cases <<<"${CASES:-sbatch tern routed}"
declare -A times
run_interleaved

s_best=$(best "${times[sbatch]:-}")
s_med=$(median "${times[sbatch]:-}")
t_best=$(best "${times[tern]:-}")
t_med=$(median "${times[tern]:-}")
printf '\n%-40s %8s %8s %8s\n' "case ($jobs x true, Slurm CPUs=$SLURM_LOCAL_CPUS)" "best/s" "median/s" "jobs/s"
r_best=$(best "${times[routed]:-}")
r_med=$(median "${times[routed]:-}")
row() {
    if [[ " ${cases[*]} " == *" $1 "* ]]; then
        printf '%-40s %8s %8s %8s\n' "$2" "${3:-failed}" "${4:-}" "$(rate "$jobs" "${4:-0}")"
    fi
}
row sbatch "sbatch directly (Slurm's own time)" "$s_best" "$s_med"
row tern "tern grid universe -> Slurm" "$t_best" "$t_med"
row routed "tern vanilla, routed -> Slurm" "$r_best" "$r_med"
overhead() {
    awk -v t="$2" -v s="$s_med" -v tb="$3" -v sb="$s_best" -v what="$1" 'BEGIN {
        printf "%s overhead over Slurm: median %+.1f%%, best %+.1f%% (target <= 10%%)\n", what, (t - s) / s * 100, (tb - sb) / sb * 100 }'
}
ran() { [[ " ${cases[*]} " == *" $1 "* && -n ${times[$1]:-} ]]; }
if ran sbatch && ran tern; then
    overhead "tern grid universe" "$t_med" "$t_best"
fi
if ran sbatch && ran routed; then
    overhead "tern routed${ROUTE_MAX_IDLE:+ (MaxIdleJobs = $ROUTE_MAX_IDLE)}" "$r_med" "$r_best"
fi
