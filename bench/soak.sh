#!/usr/bin/env bash
# A soak (issue 18, item 5): a simulated day of cron jobs and a steady
# stream of short jobs, squeezed into REAL seconds of real time (default
# 1800: 48 simulated seconds a second), on the release build, as a user's
# workstation runs it: a pass every simulated minute (cron's, started in
# the background as cron starts it), passes on submit and on exit, a
# sandbox and file transfer for half the jobs, HISTORY_MAX_JOBS and
# QUEUE_LOG_MAX_RECORDS (the transaction log's retention) small enough to
# be reached within the first third of the run.
#
# The cron jobs: one every minute (cron_window 120), one every 15 minutes,
# one every hour with its files transferred; all stay in the queue. The
# stream: a cluster of RATE short jobs (/bin/sh writing one line) every
# second. Every minute of real time one line: the simulated time, the jobs
# done in that minute, the queue (idle, running), the database's size
# (queue.db and its WAL), the history's rows, the transaction log's
# records, this run's processes, the
# most descriptors any one of them holds, and the sandboxes in EXECUTE.
#
# Before the stream and after it (once the queue holds only the cron jobs
# again), a probe: a cluster of PROBE jobs submitted at once, timed to its
# last completion. At the end it checks, and fails when one does not hold:
#   - the database at the end is at most 1.25x its size when the history
#     and the transaction log first reached their retention (bounded by
#     it);
#   - no process of the run is left (a lingering shadow may take
#     SHADOW_LINGER_MSEC), no sandbox is left in EXECUTE;
#   - no process of the run ever held more descriptors at the end than at
#     the start (+4);
#   - the stream's jobs done in the last five minutes are within 10% of
#     the first five (the submitted rate; fewer minutes in a short run), and the end probe takes at most
#     1.5x the start probe;
#   - every stream job is accounted for (done, and in the history or
#     trimmed from it, never in the queue); the every-minute cron job ran
#     once for each simulated minute it was given (at least 90% of them);
#   - PRAGMA integrity_check is ok.
#
# Usage: bench/soak.sh [REAL_SECONDS] [RATE] [PROBE]  (defaults 1800 4 200)
# Honours CARGO_TARGET_DIR; builds the release binaries first.
set -euo pipefail

real=${1:-1800}
rate=${2:-4}
probe_n=${3:-200}
hist_max=$((real * rate / 3))
[[ $hist_max -ge 100 ]] || hist_max=100
# A short job writes about 10 records (one per new ad and per change);
# the limit leaves room for 60.
txlog_max=$((hist_max * 60))
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/pkg/release-build.sh"
tern_release_build "$root"
command -v sqlite3 >/dev/null || { echo "soak.sh: sqlite3 is needed (apt-get install sqlite3)" >&2; exit 1; }

work=$(mktemp -d /tmp/tern-soak.XXXXXX)
mkdir "$work/bin" "$work/execute" "$work/jobs"
cp "$tern_release_dir"/tern_{submit,negotiate,shadow,q,history} "$work/bin/"
bin=$work/bin
spool=$work/spool
. "$root/bench/common.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM

sim0=1700000040 # 2023-11-14 22:14:00 UTC, a minute boundary
speed=$((86400 / real))
[[ $speed -ge 1 ]] || speed=1
t0=$EPOCHREALTIME
# One clock for every process of the run (TERN_NOW's anchored running form
# at $speed times real time): a pass, a shadow and the pass a job's exit
# starts all read the same simulated instant.
clock="$sim0+@$t0*$speed"
sim_now() { awk -v a="$t0" -v b="$EPOCHREALTIME" -v s="$sim0" -v k="$speed" \
    'BEGIN { printf "%d", s + int((b - a) * k) }'; }

# tern CMD...: a tool of the run, at the simulated time.
tern() {
    env -i PATH=/usr/bin:/bin HOME="$work" TERN_CONFIG=/dev/null TZ=UTC \
        TERN_NOW="$clock" _TERN_SPOOL="$spool" _TERN_EXECUTE="$work/execute" \
        _TERN_NUM_CPUS=4 _TERN_MEMORY=8192 _TERN_HISTORY_MAX_JOBS="$hist_max" _TERN_QUEUE_LOG_MAX_RECORDS="$txlog_max" \
        _TERN_SCHEDD_INTERVAL=1 "$@"
}

cd "$work/jobs"
# ---- the cron jobs -----------------------------------------------------------
cron_job() { # NAME MINUTE HOUR WINDOW TRANSFER
    cat >"$1.sub" <<EOF
executable = /bin/sh
arguments = "-c 'echo \$\$([DeferralTime]) >> $work/jobs/$1.runs'"
cron_minute = $2
cron_hour = $3
cron_window = $4
cron_prep_time = 0
on_exit_remove = false
should_transfer_files = $5
log = cron.log
queue
EOF
    tern "$bin/tern_submit" "$1.sub" >/dev/null
}
cron_job minutely '*' '*' 120 NO
cron_job quarter '*/15' '*' 300 NO
cron_job hourly 0 '*' 600 YES

# ---- the stream and the probes -----------------------------------------------
stream_sub() { # NAME COUNT TRANSFER
    cat >"$1.sub" <<EOF
executable = /bin/sh
arguments = "-c 'echo \$\$([ClusterId]).\$\$([ProcId]) >> $work/jobs/$1.done'"
should_transfer_files = $3
queue $2
EOF
}
stream_sub stream_a "$rate" YES
stream_sub stream_b "$rate" NO
stream_sub probe "$probe_n" YES

lines() { [[ -f $1 ]] && wc -l <"$1" || echo 0; }
queue_counts() { # "idle running"
    tern "$bin/tern_q" -af JobStatus 2>/dev/null |
        awk '$1 == 1 { i++ } $1 == 2 { r++ } END { printf "%d %d\n", i, r }'
}
db_kb() { # the database and its WAL, which a checkpoint may have removed
    { du -k "$spool/queue.db" "$spool/queue.db-wal" 2>/dev/null || true; } |
        awk '{ s += $1 } END { print s + 0 }'
}
rows_of() { sqlite3 -readonly "file:$spool/queue.db?mode=ro" \
    "SELECT count(*) FROM $1" 2>/dev/null || echo "?"; }
max_fds() {
    local pid n max=0
    for pid in $(own_pids "$spool"); do
        n=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l) || n=0
        ((n > max)) && max=$n
    done
    echo "$max"
}

# probe: a cluster of $probe_n jobs at once; prints the seconds to the last
# completion.
probe() {
    rm -f "$work/jobs/probe.done"
    local a=$EPOCHREALTIME
    tern "$bin/tern_submit" probe.sub >/dev/null
    while (($(lines "$work/jobs/probe.done") < probe_n)); do sleep 0.05; done
    awk -v a="$a" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'
}

# The per-minute pass, in the background as cron starts it.
cron_pass() { (tern "$bin/tern_negotiate" >/dev/null 2>>"$work/pass.err" &); }

echo "soak: $real s real, $speed simulated s a second, $rate+$rate jobs a second, HISTORY_MAX_JOBS $hist_max, QUEUE_LOG_MAX_RECORDS $txlog_max" >&2
cron_pass
probe_start=$(probe)
echo "probe at the start: $probe_n jobs in $probe_start s" >&2
fds_start=$(max_fds)

printf '%5s %-19s %6s %6s %4s %8s %8s %8s %5s %4s %4s\n' min sim done idle run db_kb history txlog procs fds sbox >&2
declare -a done_per_min
last_done=0
cap_kb=""
next_sec=$SECONDS
next_pass_sim=$(( ( $(sim_now) / 60 + 1) * 60 ))
minute=0
stream_start=$SECONDS
while ((SECONDS - stream_start < real)); do
    if ((SECONDS >= next_sec)); then
        tern "$bin/tern_submit" stream_a.sub >/dev/null
        tern "$bin/tern_submit" stream_b.sub >/dev/null
        next_sec=$((next_sec + 1))
    fi
    if (($(sim_now) >= next_pass_sim)); then
        cron_pass
        next_pass_sim=$((next_pass_sim + 60))
    fi
    if ((SECONDS - stream_start >= (minute + 1) * 60)); then
        minute=$((minute + 1))
        d=$(($(lines "$work/jobs/stream_a.done") + $(lines "$work/jobs/stream_b.done")))
        done_per_min+=($((d - last_done)))
        last_done=$d
        read -r idle running < <(queue_counts)
        h=$(rows_of history)
        x=$(rows_of txlog)
        kb=$(db_kb)
        # Trimming keeps the newest 90% (a trim per 10% of growth).
        if [[ -z $cap_kb && $h != "?" && $x != "?" ]] &&
            ((h * 10 >= hist_max * 9 && x * 10 >= txlog_max * 9)); then cap_kb=$kb; fi
        printf '%5d %-19s %6d %6d %4d %8d %8s %8s %5d %4d %4d\n' "$minute" \
            "$(date -u -d "@$(sim_now)" '+%F %T')" "${done_per_min[-1]}" "$idle" "$running" \
            "$kb" "$h" "$x" "$(own_pids "$spool" | wc -l)" "$(max_fds)" \
            "$(find "$work/execute" -mindepth 1 -maxdepth 1 | wc -l)" >&2
    fi
    sleep 0.05
done
submitted=$((2 * rate * (next_sec - stream_start)))

# ---- the end -----------------------------------------------------------------
# The stream drains; the queue holds the cron jobs alone again.
for _ in $(seq 1200); do
    read -r idle running < <(queue_counts)
    ((idle + running <= 3)) && (($(lines "$work/jobs/stream_a.done") + $(lines "$work/jobs/stream_b.done") >= submitted)) && break
    cron_pass
    sleep 0.5
done
probe_end=$(probe)
echo "probe at the end: $probe_n jobs in $probe_end s" >&2
fds_end=$(max_fds)
# Lingering shadows leave; nothing else of the run may stay.
for _ in $(seq 100); do [[ -z $(own_pids "$spool") ]] && break; sleep 0.1; done

fail=0
check() { # DESC COND...
    local d=$1
    shift
    if "$@"; then echo "ok: $d" >&2; else echo "FAIL: $d" >&2; fail=1; fi
}
end_kb=$(db_kb)
sqlite3 "$spool/queue.db" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
ckpt_kb=$(db_kb)
left=$(own_pids "$spool" | wc -l)
sandboxes=$(find "$work/execute" -mindepth 1 -maxdepth 1 | wc -l)
done_total=$(($(lines "$work/jobs/stream_a.done") + $(lines "$work/jobs/stream_b.done")))
k=$(( ${#done_per_min[@]} / 2 < 5 ? ${#done_per_min[@]} / 2 : 5 ))
((k >= 1)) || k=1
first5=$(printf '%s\n' "${done_per_min[@]:0:k}" | awk '{ s += $1 } END { print s + 0 }')
last5=$(printf '%s\n' "${done_per_min[@]:${#done_per_min[@]}-k:k}" | awk '{ s += $1 } END { print s + 0 }')
given=$(( ( $(sim_now) - sim0) / 60 ))
touch "$work/jobs/minutely.runs"
minutely=$(lines "$work/jobs/minutely.runs")
minutely_unique=$(sort -u "$work/jobs/minutely.runs" | wc -l)
in_queue=$(tern "$bin/tern_q" -af ClusterId | wc -l)

echo "database: ${cap_kb:-never capped} KB when the history and the transaction log reached $hist_max and $txlog_max, $end_kb KB at the end ($ckpt_kb KB checkpointed)" >&2
echo "stream: $submitted submitted, $done_total done; first $k minutes $first5, last $k $last5" >&2
echo "cron: minutely ran $minutely times ($minutely_unique distinct times) over $given simulated minutes; quarter $(lines "$work/jobs/quarter.runs"), hourly $(lines "$work/jobs/hourly.runs")" >&2
echo "descriptors: at most $fds_start in a process at the start, $fds_end at the end" >&2
[[ -n $cap_kb ]] && check "the database stays within 1.25x its size at the history's cap" \
    awk -v a="$end_kb" -v b="$cap_kb" 'BEGIN { exit !(a <= 1.25 * b) }'
[[ -n $cap_kb ]] || check "the history and the transaction log reached their retention" false
check "no process of the run is left ($left)" test "$left" -eq 0
check "no sandbox is left in EXECUTE ($sandboxes)" test "$sandboxes" -eq 0
check "no process holds more descriptors at the end" test "$fds_end" -le $((fds_start + 4))
check "every stream job ran ($done_total of $submitted)" test "$done_total" -eq "$submitted"
check "the queue holds the three cron jobs alone ($in_queue)" test "$in_queue" -eq 3
check "the stream's last five minutes keep up with its first" \
    awk -v a="$last5" -v b="$first5" 'BEGIN { exit !(a >= 0.9 * b) }'
check "the end probe takes at most 1.5x the start probe" \
    awk -v a="$probe_end" -v b="$probe_start" 'BEGIN { exit !(a <= 1.5 * b) }'
check "the minutely cron job never ran twice for one time" test "$minutely" -eq "$minutely_unique"
check "the minutely cron job ran for at least 90% of its minutes" \
    awk -v a="$minutely" -v b="$given" 'BEGIN { exit !(a >= 0.9 * b) }'
check "PRAGMA integrity_check" test "$(sqlite3 "$spool/queue.db" 'PRAGMA integrity_check')" = ok
if [[ -s $work/pass.err ]]; then
    echo "passes said:" >&2
    sort "$work/pass.err" | uniq -c | sort -rn | sed -n 1,10p >&2
fi
exit $fail
