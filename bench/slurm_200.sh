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
# Usage: bench/slurm_200.sh [runs] [jobs]   (defaults 3 and 200)
# Honours CARGO_TARGET_DIR; builds the release binaries first.
set -euo pipefail

runs=${1:-3}
jobs=${2:-200}
timeout_s=${TIMEOUT:-600}
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
cargo build --release --quiet --manifest-path "$root/Cargo.toml"

work=$(mktemp -d /tmp/tern-slurm200.XXXXXX)
# munged wants its socket's directories world-executable.
chmod 755 "$work"
mkdir "$work/bin"
cp "$target"/release/tern_{submit,negotiate,gridmanager,q,history} "$work/bin/"
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
    env -i PATH=/usr/bin:/bin HOME="$work" TERN_CONFIG=/dev/null SLURM_CONF="$SLURM_CONF" \
        _TERN_SPOOL="$1" ${GRIDMANAGER_JOB_PROBE_INTERVAL:+_TERN_GRIDMANAGER_JOB_PROBE_INTERVAL=$GRIDMANAGER_JOB_PROBE_INTERVAL} \
        "${@:2}"
}
run_tern() {
    local spool=$work/tern.$1 t0 t1 total left by_code end
    end=$(deadline)
    t0=$(now)
    (cd "$work" && tern_env "$spool" "$bin/tern_submit" grid.sub >/dev/null)
    while :; do
        total=$(tern_env "$spool" "$bin/tern_q" -totals -allusers |
            sed -n 's/^Total for all users: \([0-9]*\) jobs.*/\1/p')
        [[ $total == 0 ]] && break
        past "$end" && {
            tern_env "$spool" "$bin/tern_q" -totals -allusers >&2
            fail tern "queue not empty after ${timeout_s}s (spool kept in $spool)"
            tail -n 20 "$spool/grid/GridmanagerLog" >&2 2>/dev/null
            return 1
        }
        sleep 0.1
    done
    t1=$(now)
    left=$(tern_env "$spool" "$bin/tern_history" -af ClusterId | wc -l)
    [[ $left == "$jobs" ]] || fail tern "history holds $left jobs, not $jobs" || return 1
    by_code=$(tern_env "$spool" "$bin/tern_history" -af ExitCode JobStatus | sort | uniq -c | awk '{ printf "%s", $0 }')
    [[ $by_code == *"$jobs 0 4" ]] || fail tern "not every job exited 0 and completed: $by_code" || return 1
    wait_for_shadows "$spool"
    rm -rf "$spool"
    elapsed "$t0" "$t1"
}

# ---- running them -------------------------------------------------------
cases=(sbatch tern)
declare -A times
run_interleaved

s_best=$(best "${times[sbatch]:-}")
s_med=$(median "${times[sbatch]:-}")
t_best=$(best "${times[tern]:-}")
t_med=$(median "${times[tern]:-}")
printf '\n%-40s %8s %8s %8s\n' "case ($jobs x true, Slurm CPUs=$SLURM_LOCAL_CPUS)" "best/s" "median/s" "jobs/s"
printf '%-40s %8s %8s %8s\n' "sbatch directly (Slurm's own time)" "${s_best:-failed}" "${s_med:-}" "$(rate "$jobs" "${s_med:-0}")"
printf '%-40s %8s %8s %8s\n' "tern grid universe -> Slurm" "${t_best:-failed}" "${t_med:-}" "$(rate "$jobs" "${t_med:-0}")"
if [[ -n ${s_med:-} && -n ${t_med:-} ]]; then
    awk -v t="$t_med" -v s="$s_med" -v tb="$t_best" -v sb="$s_best" 'BEGIN {
        printf "tern overhead over Slurm: median %+.1f%%, best %+.1f%% (target <= 10%%)\n", (t - s) / s * 100, (tb - sb) / sb * 100 }'
fi
