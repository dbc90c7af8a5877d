#!/usr/bin/env bash
# End to end: 2,000 jobs of /bin/true on two cpus, from `tern_submit` to the
# last completion (target <= 4 s, i.e. >= 500 jobs/s), and the same work in
# the same run with the local peers and the fork/exec/wait floor:
#
#   floor         `xargs -P2 -n1 /bin/true` over 2000 items: GNU xargs (C),
#                 one fork/exec/wait per job, two in flight, nothing stored.
#   tern          one submit file with `queue 2000`; the pass starts on
#                 submit (NEGOTIATE_ON_SUBMIT); the clock stops at the first
#                 poll (`tern_q -totals`, every 20 ms) that finds the queue
#                 empty, and history must then hold 2000 jobs that exited 0.
#   task-spooler  `tsp -S 2`, 2000 `tsp /bin/true` (the default: output to a
#                 file), then wait until the list has nothing queued/running.
#                 In memory, nothing survives a crash.
#   nq            nq runs one queue strictly in order, so two at a time is
#                 two queues (two NQDIRs) with job i in queue i mod 2; then
#                 `nq -w` on each. Jobs are files in the queue directories.
#   pueue         pueued with its own config and directory, `pueue parallel 2`,
#                 2000 `pueue add /bin/true` (one client call each, as a user
#                 adds them), then `pueue wait`. Adding is part of the time.
#
# tern is also held to the floor: the "tern/floor" line is tern's time over
# xargs's, best over best (target <= 1.5x).
#
#   xfer          the same 2000 jobs with should_transfer_files = YES, one
#                 small input file of its own per job copied into its
#                 sandbox and stdout copied back; "transfer/tern" is its
#                 time over plain tern's (target <= 1.5x). SKIP="xfer"
#                 leaves it out.
#
# Every peer's clock runs from before the first add to the last completion,
# as a user sees it. Runs are interleaved (floor, tern, tsp, nq, pueue, then
# again) so a load spike hits every case alike; the best and the median of
# the runs are printed, with jobs/s and tern's time over each peer's.
#
# pueue runs 200 jobs unless PUEUE_JOBS says otherwise: its daemon loop
# starts about 6 jobs/s whatever the count, so 2000 would take ~6 minutes a
# run. Its jobs/s and the per-job ratio stay comparable; its seconds do not.
#
# Missing peers are installed (apt-get install task-spooler nq; cargo install
# pueue --locked) or skipped with a message. SKIP="pueue nq" leaves peers
# out; TIMEOUT (default 300 s) bounds each case.
#
# Usage: bench/run_2000.sh [runs] [jobs]   (defaults 3 and 2000)
# Honours CARGO_TARGET_DIR; builds the release binaries first.
set -euo pipefail

runs=${1:-3}
jobs=${2:-2000}
pueue_jobs=${PUEUE_JOBS:-$((jobs < 200 ? jobs : 200))}
skip=" ${SKIP:-} "
timeout_s=${TIMEOUT:-300}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/pkg/release-build.sh"
tern_release_build "$root"

work=$(mktemp -d /tmp/tern-run2000.XXXXXX)
# The binaries are copied so a concurrent rebuild cannot swap them mid-run;
# tern_submit finds tern_negotiate, and that finds tern_shadow, beside itself.
mkdir "$work/bin"
cp "$tern_release_dir"/tern_{submit,negotiate,shadow,q,history,rm} "$work/bin/"
bin=$work/bin

. "$root/bench/common.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- installing the peers ---------------------------------------------------
peers=()
add_apt_peers
if [[ $skip != *" pueue "* ]]; then
    export PATH=$PATH:${CARGO_HOME:-$HOME/.cargo}/bin
    if ! { have pueue && have pueued; }; then
        echo "installing pueue (cargo install pueue --locked) ..." >&2
        cargo install pueue --locked --quiet >"$work/cargo-install.log" 2>&1 || true
    fi
    if have pueue && have pueued; then peers+=(pueue); else echo "skipping pueue: cargo install pueue --locked failed" >&2; fi
fi

# ---- the cases: each prints its wall seconds, or fails ----------------------
run_floor() {
    local t0
    t0=$(now)
    seq "$jobs" | xargs -P2 -n1 /bin/true
    elapsed "$t0" "$(now)"
}

printf 'executable = /bin/true\nqueue %d\n' "$jobs" >"$work/true.sub"
tern_env() {
    env -i PATH=/usr/bin:/bin HOME="$work" TERN_CONFIG=/dev/null \
        _TERN_SPOOL="$1" _TERN_NUM_CPUS=2 "${@:2}"
}
# The same jobs with file transfer (issue 13): each job runs in its own
# sandbox with one small input file of its own copied in, and its stdout
# copied back.
mkdir -p "$work/in"
for ((i = 0; i < jobs; i++)); do echo "$i" >"$work/in/$i.txt"; done
printf 'executable = /bin/true
should_transfer_files = YES
transfer_input_files = in/$(Process).txt
output = out.txt
queue %d
' \
    "$jobs" >"$work/xfer.sub"
run_tern() { tern_case "$1" true.sub; }
run_xfer() { tern_case "x$1" xfer.sub; }
tern_case() {
    local spool=$work/tern.$1 t0 t1 end
    end=$(deadline)
    t0=$(now)
    (cd "$work" && tern_env "$spool" "$bin/tern_submit" "$2" >/dev/null)
    tern_drain "$spool" "$end" 0.02 "$spool/shadow/ShadowLog" || return 1
    t1=$(now)
    tern_all_done "$spool" "$jobs" || return 1
    # A safety pass: there must be nothing left to start.
    tern_env "$spool" "$bin/tern_negotiate" >/dev/null 2>&1 || true
    wait_for_shadows "$spool"
    rm -rf "$spool"
    elapsed "$t0" "$t1"
}
run_pueue() {
    local dir=$work/pueue.$1 t0 t1 n cfg
    mkdir -p "$dir/data" "$dir/runtime"
    cfg=$dir/pueue.yml
    cat >"$cfg" <<EOF
shared:
  pueue_directory: $dir/data
  runtime_directory: $dir/runtime
  use_unix_socket: true
  unix_socket_path: $dir/runtime/pueue.socket
daemon:
  callback: null
client:
  restart_in_place: false
EOF
    BENCH_MARK=$work pueued -c "$cfg" >"$dir/pueued.log" 2>&1 &
    pueued_pid=$!
    local i
    for i in $(seq 250); do pueue -c "$cfg" status >/dev/null 2>&1 && break; sleep 0.02; done
    pueue -c "$cfg" parallel 2 >/dev/null
    t0=$(now)
    for ((i = 0; i < pueue_jobs; i++)); do pueue -c "$cfg" add -- /bin/true >/dev/null; done
    timeout "$timeout_s" pueue -c "$cfg" wait --quiet >/dev/null 2>&1 ||
        { fail pueue "jobs not done after ${timeout_s}s"; return 1; }
    t1=$(now)
    n=$(pueue -c "$cfg" status --json | python3 -c '
import json, sys
tasks = json.load(sys.stdin)["tasks"].values()
print(sum(1 for t in tasks if "Success" in json.dumps(t["status"])))')
    pueue -c "$cfg" shutdown >/dev/null 2>&1 || true
    wait "$pueued_pid" 2>/dev/null || true
    pueued_pid=""
    [[ $n == "$pueue_jobs" ]] || fail pueue "$n tasks succeeded, not $pueue_jobs" || return 1
    rm -rf "$dir"
    elapsed "$t0" "$t1"
}

# ---- running them -------------------------------------------------------
cases=(floor tern)
[[ $skip == *" xfer "* ]] || cases+=(xfer)
cases+=("${peers[@]}")
declare -A times
run_interleaved


declare -A label=(
    [floor]="floor: xargs -P2 -n1 /bin/true"
    [tern]="tern: submit -> last completion"
    [xfer]="tern with file transfer"
    [tsp]="task-spooler (tsp -S 2)"
    [nq]="nq (two queues)"
    [pueue]="pueue (parallel 2)"
)
tern_best=$(best "${times[tern]:-}")
tern_med=$(median "${times[tern]:-}")
printf '\n%-34s %6s %8s %8s %8s %8s %9s\n' "case ($jobs x /bin/true, 2 cpus)" "jobs" "best/s" "median/s" "jobs/s" "(median)" "tern/peer"
for c in "${cases[@]}"; do
    n=$jobs
    [[ $c == pueue ]] && n=$pueue_jobs
    if [[ -z ${times[$c]:-} ]]; then
        printf '%-34s %6s %8s\n' "${label[$c]}" "$n" failed
        continue
    fi
    b=$(best "${times[$c]}")
    m=$(median "${times[$c]}")
    # tern's time over the peer's for the same number of jobs (pueue may run fewer)
    if [[ $c == tern || $c == xfer ]]; then rel="-"
    else rel=$(ratio "$(awk -v t="$tern_best" -v j="$jobs" 'BEGIN { print t / j }')" "$(awk -v t="$b" -v j="$n" 'BEGIN { print t / j }')"); fi
    printf '%-34s %6s %8s %8s %8s %8s %9s\n' "${label[$c]}" "$n" "$b" "$m" "$(rate "$n" "$b")" "$(rate "$n" "$m")" "$rel"
done
echo "tern/peer = tern's seconds per job over the peer's (best runs); below 1 means tern is faster"
if [[ -n $tern_best ]]; then
    verdict=$(awk -v t="$tern_best" -v j="$jobs" 'BEGIN { if (t * 2000 / j <= 4) print "meets"; else print "misses" }')
    echo "target: tern <= 4 s for 2000 jobs (>= 500 jobs/s): best $tern_best s, median $tern_med s, $verdict the target"
fi
# tern against the fork/exec floor of the same run, best over best and
# median over median (target <= 1.5x).
if [[ -n $tern_best && -n ${times[floor]:-} ]]; then
    fb=$(ratio "$tern_best" "$(best "${times[floor]}")")
    fm=$(ratio "$tern_med" "$(median "${times[floor]}")")
    verdict=$(awk -v r="$fb" 'BEGIN { if (r <= 1.5) print "meets"; else print "misses" }')
    echo "tern/floor: ${fb}x best, ${fm}x median (target <= 1.5x: $verdict it)"
fi
# File transfer against the same jobs without it (target <= 1.5x).
if [[ -n $tern_best && -n ${times[xfer]:-} ]]; then
    xb=$(ratio "$(best "${times[xfer]}")" "$tern_best")
    xm=$(ratio "$(median "${times[xfer]}")" "$tern_med")
    verdict=$(awk -v r="$xb" 'BEGIN { if (r <= 1.5) print "meets"; else print "misses" }')
    echo "transfer/tern: ${xb}x best, ${xm}x median (target <= 1.5x: $verdict it)"
fi
echo "runs: $runs (all: $(for c in "${cases[@]}"; do printf '%s=[%s] ' "$c" "${times[$c]:-}"; done))"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)  cpus: $(nproc)"
