#!/usr/bin/env bash
# A million jobs (issue 18, item 4): 1,000 clusters of 1,000 idle jobs
# (`tern_submit` of `queue 1000`, 1,000 times), then each whole-queue
# operation once on that queue, with its wall time and peak RSS
# (/usr/bin/time):
#
#   submit          the 1,000 submits: the total, and the slowest one
#                   (the last ones run against 999,000 queued jobs)
#   q default       `tern_q` (the batch view over every job)
#                   target <= 4 s and <= 600 MB
#   q -af           `tern_q -af ClusterId ProcId JobStatus` (a line a job)
#   q -constraint   hot: `JobStatus == 1 && ProcId == 7` (columns the queue
#                   keeps outside the ad); not hot: `RequestMemory == 7`
#                   (every job's ad parsed and evaluated)
#   pass, none      one `tern_negotiate` that starts nothing (START = false:
#                   every autocluster tried and refused)   target <= 2 s
#   pass, 2 start   one `tern_negotiate` on 2 slots that starts 2 jobs
#                                                          target <= 2 s
#   watch_q         `tern_watch_q -exit any,idle` (its first frame over
#                   every job, then it exits)
#   rm -all         `tern_rm -all`: 1,000,000 jobs leave the queue for
#                   the history
#   history trim    the next write (a one-job submit) with HISTORY_MAX_JOBS
#                   = 10000: the history cut from 1,000,000 jobs to 10,000
#
# Single-job operations at this size are bench/ops_100k.sh's rows with
# `ops_100k.sh 10 1000000` (target ratio <= 1.5 against an empty queue).
#
# Clusters differ in request_memory (cluster i asks i % 100 MiB), so a pass
# sees 100 autoclusters. The clock is pinned; NEGOTIATE_ON_SUBMIT and
# NEGOTIATE_ON_EXIT are off, so the only passes are the timed ones.
#
# Usage: bench/scale_1m.sh [clusters] [jobs_per_cluster]  (defaults 1000 1000)
# Honours CARGO_TARGET_DIR; builds the release binaries first. Needs about
# 2 GB in /tmp (the queue and one copy of it).
set -euo pipefail

clusters=${1:-1000}
per=${2:-1000}
total=$((clusters * per))
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/pkg/release-build.sh"
tern_release_build "$root"
for t in sqlite3 /usr/bin/time; do
    command -v "$t" >/dev/null || { echo "scale_1m.sh: $t is needed (apt-get install sqlite3 time)" >&2; exit 1; }
done

work=$(mktemp -d /tmp/tern-scale1m.XXXXXX)
mkdir "$work/bin"
cp "$tern_release_dir"/tern_{submit,negotiate,shadow,q,rm,watch_q,history} "$work/bin/"
bin=$work/bin
. "$root/bench/common.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM

# envv SPOOL START [KNOB=VALUE...]: sets E to the env(1) prefix of a
# hermetic tool run (an array, so /usr/bin/time can run it); tern SPOOL
# START CMD... runs CMD with it.
envv() {
    E=(env -i PATH=/usr/bin:/bin HOME="$work" TERN_CONFIG=/dev/null TZ=UTC TERN_NOW=1700000000
        TERM=xterm COLUMNS=120 LINES=40 _TERN_SPOOL="$1" _TERN_NUM_CPUS=2 _TERN_NUM_SLOTS=2
        _TERN_NEGOTIATE_ON_SUBMIT=false _TERN_NEGOTIATE_ON_EXIT=false _TERN_START="$2" "${@:3}")
}
tern() {
    envv "$1" "$2"
    "${E[@]}" "${@:3}"
}

# timed NAME CMD...: runs CMD once, prints and records "wall_s rss_mb".
declare -A wall rss
timed() {
    local name=$1 t0 t1
    shift
    t0=$EPOCHREALTIME
    /usr/bin/time -o "$work/time" -f '%M' "$@" >"$work/out" 2>"$work/err" || {
        echo "$name failed: $*" >&2
        cat "$work/err" >&2
        return 1
    }
    t1=$EPOCHREALTIME
    wall[$name]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    rss[$name]=$(awk '{ printf "%.0f", $1 / 1024 }' "$work/time")
    printf '%-16s %8s s %6s MB\n' "$name" "${wall[$name]}" "${rss[$name]}" >&2
}

jobs_in() { # SPOOL: the number of jobs in the queue
    tern "$1" true "$bin/tern_q" -totals -allusers |
        sed -n 's/^Total for all users: \([0-9]*\) jobs;.*/\1/p'
}

# ---- the queue ---------------------------------------------------------------
spool=$work/spool
echo "submitting $clusters clusters of $per jobs ..." >&2
slowest=0
slowest_rss=0
t_start=$EPOCHREALTIME
cd "$work"
envv "$spool" true
for ((i = 1; i <= clusters; i++)); do
    printf 'executable = /bin/sleep\narguments = 1000\nrequest_memory = %d\nqueue %d\n' \
        $((i % 100 + 1)) "$per" >"$work/c.sub"
    t0=$EPOCHREALTIME
    /usr/bin/time -o "$work/time" -f '%M' "${E[@]}" "$bin/tern_submit" c.sub >/dev/null 2>"$work/err" ||
        { echo "submit $i failed" >&2; cat "$work/err" >&2; exit 1; }
    t1=$EPOCHREALTIME
    read -r slowest slowest_rss < <(awk -v a="$t0" -v b="$t1" -v s="$slowest" -v r="$slowest_rss" \
        -v m="$(cat "$work/time")" 'BEGIN { w = b - a; if (w > s) s = w; m /= 1024; if (m > r) r = m;
            printf "%.3f %.0f\n", s, r }')
done
wall[submit]=$(awk -v a="$t_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
rss[submit]=$slowest_rss
echo "submit: $clusters submits in ${wall[submit]} s, the slowest ${slowest} s, peak RSS ${slowest_rss} MB" >&2
n=$(jobs_in "$spool")
[[ $n == "$total" ]] || { echo "the queue holds $n jobs, not $total" >&2; exit 1; }
sqlite3 "$spool/queue.db" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
echo "queue: $(du -sh "$spool/queue.db" | cut -f1) on disk" >&2

# ---- reading the queue ---------------------------------------------------------
envv "$spool" true
timed "q default" "${E[@]}" "$bin/tern_q" -allusers
grep -q "^Total for all users: $total jobs" "$work/out" || { echo "tern_q's totals are wrong:" >&2; tail -n 2 "$work/out" >&2; exit 1; }
envv "$spool" true
timed "q -af" "${E[@]}" "$bin/tern_q" -allusers -af ClusterId ProcId JobStatus
[[ $(wc -l <"$work/out") == "$total" ]] || { echo "tern_q -af printed $(wc -l <"$work/out") lines" >&2; exit 1; }
envv "$spool" true
timed "q hot" "${E[@]}" "$bin/tern_q" -allusers -constraint 'JobStatus == 1 && ProcId == 7' -af ClusterId
[[ $(wc -l <"$work/out") == "$clusters" ]] || { echo "the hot constraint matched $(wc -l <"$work/out") jobs" >&2; exit 1; }
envv "$spool" true
timed "q not hot" "${E[@]}" "$bin/tern_q" -allusers -constraint 'RequestMemory == 7' -af ClusterId ProcId
expect=$(( (clusters / 100 + (clusters % 100 >= 6 ? 1 : 0)) * per ))
[[ $(wc -l <"$work/out") == "$expect" ]] || { echo "RequestMemory == 7 matched $(wc -l <"$work/out") jobs, not $expect" >&2; exit 1; }
envv "$spool" true
timed "watch_q" "${E[@]}" "$bin/tern_watch_q" -users "$(id -un)" -exit any,idle -no-color
grep -q 'Exiting with code' "$work/out" || { echo "tern_watch_q did not exit on its condition:" >&2; tail -n 5 "$work/out" >&2; exit 1; }

# ---- passes ----------------------------------------------------------------------
# One untimed pass first, as cron would have run one: the timed pass finds
# the queue as a pass between PERIODIC_EXPR_INTERVALs does.
tern "$spool" false "$bin/tern_negotiate" >/dev/null
envv "$spool" false
timed "pass, none" "${E[@]}" "$bin/tern_negotiate"
[[ $(jobs_in "$spool") == "$total" ]] || { echo "the no-match pass changed the queue" >&2; exit 1; }
envv "$spool" true
timed "pass, 2 start" "${E[@]}" "$bin/tern_negotiate"
running=$(tern "$spool" true "$bin/tern_q" -allusers -totals | sed -n 's/^Total for all users:.* \([0-9]*\) running.*/\1/p')
[[ $running == 2 ]] || { echo "the pass started $running jobs, not 2" >&2; exit 1; }

# ---- removing and trimming ---------------------------------------------------------
envv "$spool" true
timed "rm -all" "${E[@]}" "$bin/tern_rm" -all
wait_for_shadows "$spool"
printf 'executable = /bin/true\nqueue\n' >"$work/one.sub"
envv "$spool" true _TERN_HISTORY_MAX_JOBS=10000
timed "history trim" "${E[@]}" "$bin/tern_submit" one.sub
left=$(sqlite3 "$spool/queue.db" 'SELECT count(*) FROM history')
echo "history after the trim: $left jobs" >&2

# ---- the summary --------------------------------------------------------------------
verdict() { # NAME MAX_S [MAX_MB]
    awk -v w="${wall[$1]}" -v r="${rss[$1]}" -v s="$2" -v m="${3:-0}" 'BEGIN {
        ok = w <= s && (m == 0 || r <= m); printf "%s", ok ? "meets" : "misses" }'
}
printf '\n%-16s %10s %9s   %s\n' "operation ($total jobs)" "wall s" "peak MB" "target"
for name in submit "q default" "q -af" "q hot" "q not hot" watch_q "pass, none" "pass, 2 start" "rm -all" "history trim"; do
    case $name in
    "q default") t="<= 4 s, <= 600 MB: $(verdict "$name" 4 600)" ;;
    "pass, none" | "pass, 2 start") t="<= 2 s: $(verdict "$name" 2)" ;;
    submit) t="(all $clusters submits; the slowest took $slowest s)" ;;
    *) t="" ;;
    esac
    printf '%-16s %10s %9s   %s\n' "$name" "${wall[$name]}" "${rss[$name]}" "$t"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)  cpus: $(nproc)"
