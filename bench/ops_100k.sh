#!/usr/bin/env bash
# Single-job operations at 100,000 queued jobs against the same operations
# on an (almost) empty queue (issue 12, item 1): each should cost what it
# touches, so the target is big/empty <= 1.5 for every row.
#
#   submit        `tern_submit one.sub` of one /bin/true job
#   q C.P         `tern_q 3.0`
#   q C -af       `tern_q 3 -af ClusterId ProcId` (a cluster of N jobs)
#   qedit         `tern_qedit 3.0 BenchAttr <rep>` (a new value each time)
#   prio          `tern_prio -p <0 or 1> 3.0` (alternating, so it changes)
#   hold          `tern_hold 3.1` on an idle job    } alternating on one
#   release       `tern_release 3.1` on a held job  } job, so each finds
#                                                      the state it changes
#   history -limit 1  `tern_history -limit 1`
#   history C.P       `tern_history 1.0` (the oldest job in history)
#   rm            `tern_rm 3.<rep>`: a different idle job each time
#   vacate        `tern_vacate_job C.<rep>`: a different running job each
#                 time (the tool's own time: it records the request and
#                 wakes the shadow; the shadow's work is off the clock)
#
# Two spools are built the same way, with the same cluster numbers, and
# differ only in the size of two clusters ($jobs in the big one, 1 in the
# empty one):
#   cluster 1   $jobs jobs submitted and removed: the history
#   cluster 2   $jobs idle jobs (/bin/sleep): the queue
#   cluster 3   N idle jobs: the targets of q, qedit, prio, hold, release, rm
#   the submit rows add N one-job clusters; then one cluster of N
#   `priority = 20` jobs is started by one `tern_negotiate` on N slots, as
#   the targets of vacate (and is the last thing timed).
# HISTORY_MAX_JOBS is set above $jobs, so the history keeps them all.
# NEGOTIATE_ON_SUBMIT and NEGOTIATE_ON_EXIT are off, so no pass runs while
# the clock runs. The WAL is checkpointed before timing.
#
# Timing: an own loop rather than hyperfine, because half the operations
# change the job they touch and need a fresh target each repetition, and so
# that the two spools run interleaved (rep 1 empty then big, rep 2 big then
# empty, ...) and a load spike hits both alike. Each sample is the wall time
# of one tool run, fork/exec included (`env -i ... tool`, as a user's shell
# runs it); the "spawn" row is `env -i ... /bin/true` timed the same way.
# Best and median of N repetitions are printed in milliseconds, with the
# ratio big/empty of the medians (the one held to the target) and of the
# best runs.
#
# Usage: bench/ops_100k.sh [reps] [jobs]   (defaults 25 and 100000)
# Honours CARGO_TARGET_DIR; builds the release binaries first.
set -euo pipefail

reps=${1:-25}
jobs=${2:-100000}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/pkg/release-build.sh"
tern_release_build "$root"
command -v sqlite3 >/dev/null || { echo "ops_100k.sh: sqlite3 is needed (apt-get install sqlite3)" >&2; exit 1; }
((reps >= 2)) || { echo "ops_100k.sh: at least 2 repetitions" >&2; exit 1; }

work=$(mktemp -d /tmp/tern-ops100k.XXXXXX)
# Copies, so a concurrent rebuild cannot swap the binaries mid-run;
# tern_negotiate finds tern_shadow beside itself.
mkdir "$work/bin"
cp "$tern_release_dir"/tern_{submit,negotiate,shadow,q,rm,hold,release,qedit,prio,vacate_job,history} "$work/bin/"
bin=$work/bin
# Submit files are read relative to here.
cd "$work"

. "$root/bench/common.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM

# A hermetic tool run on spool $1: no configuration files, $reps slots (for
# the vacate targets), no pass on submit or exit.
envv() {
    E=(env -i PATH=/usr/bin:/bin HOME="$work" TZ=UTC TERN_CONFIG=/dev/null _TERN_SPOOL="$1"
        _TERN_NUM_CPUS="$reps" _TERN_NUM_SLOTS="$reps" _TERN_MEMORY=$((reps * 1024))
        _TERN_NEGOTIATE_ON_SUBMIT=false _TERN_NEGOTIATE_ON_EXIT=false
        _TERN_HISTORY_MAX_JOBS=$((jobs + 1000)))
}
tern_env() {
    envv "$1"
    "${E[@]}" "${@:2}"
}
fail() { echo "ops_100k.sh: $*" >&2; exit 1; }
count() { sqlite3 "$1/queue.db" "$2"; }

# ---- the two spools ---------------------------------------------------------
printf 'executable = /bin/true\nqueue\n' >"$work/one.sub"
printf 'executable = /bin/sleep\narguments = 100000\nqueue %d\n' "$reps" >"$work/targets.sub"
printf 'executable = /bin/sleep\narguments = 100000\npriority = 20\nqueue %d\n' "$reps" >"$work/running.sub"
build() { # SPOOL N
    local spool=$1 n=$2
    printf 'executable = /bin/sleep\narguments = 100000\nqueue %d\n' "$n" >"$work/bulk$n.sub"
    tern_env "$spool" "$bin/tern_submit" "bulk$n.sub" >/dev/null
    tern_env "$spool" "$bin/tern_rm" 1 >/dev/null
    tern_env "$spool" "$bin/tern_submit" "bulk$n.sub" >/dev/null
    tern_env "$spool" "$bin/tern_submit" targets.sub >/dev/null
    sqlite3 "$spool/queue.db" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
    local queued history
    queued=$(tern_env "$spool" "$bin/tern_q" -af ClusterId | wc -l)
    history=$(tern_env "$spool" "$bin/tern_history" -af ClusterId | wc -l)
    [[ $queued == $((n + reps)) ]] || fail "$spool: $queued jobs queued, not $((n + reps))"
    [[ $history == "$n" ]] || fail "$spool: $history jobs in history, not $n"
}
small=$work/empty
big=$work/big
echo "building the spools: $jobs jobs queued and $jobs in history; 1 and 1 ..." >&2
build "$small" 1
build "$big" "$jobs"
spools=("$small" "$big")
names=(empty big)

# ---- timing ---------------------------------------------------------------------
# T[op.empty] and T[op.big]: the samples (seconds), space-separated.
declare -A T
ops=()
# sample OP SIDE CMD...: one timed run of CMD (output to $work/out); a
# failing run stops the script, as its figure would mean nothing.
sample() {
    local op=$1 side=$2 t0 t1 rc=0
    shift 2
    t0=$EPOCHREALTIME
    "$@" >"$work/out" 2>&1 || rc=$?
    t1=$EPOCHREALTIME
    ((rc == 0)) || { cat "$work/out" >&2; fail "$op ($side) exited $rc: ${*: -3}"; }
    T[$op.$side]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }') "
}
# measure OP ARGS_FN: $reps repetitions on both spools, interleaved; ARGS_FN
# REP prints nothing but sets A to the tool and its arguments for that rep.
measure() {
    local op=$1 fn=$2 r i order
    ops+=("$op")
    for ((r = 0; r < reps; r++)); do
        "$fn" "$r"
        if ((r % 2)); then order=(1 0); else order=(0 1); fi
        for i in "${order[@]}"; do
            envv "${spools[$i]}"
            sample "$op" "${names[$i]}" "${E[@]}" "${A[@]}"
        done
        [[ -z ${AFTER:-} ]] || "$AFTER" "$r"
    done
    echo "  $op done" >&2
}

a_spawn() { A=(/bin/true); }
a_submit() { A=("$bin/tern_submit" one.sub); }
a_q() { A=("$bin/tern_q" 3.0); }
a_af() { A=("$bin/tern_q" 3 -af ClusterId ProcId); }
a_qedit() { A=("$bin/tern_qedit" 3.0 BenchAttr "$1"); }
a_prio() { A=("$bin/tern_prio" -p $((($1 + 1) % 2)) 3.0); }
a_hold() { A=("$bin/tern_hold" 3.1); }
a_release() { A=("$bin/tern_release" 3.1); }
a_hist1() { A=("$bin/tern_history" -limit 1); }
a_histid() { A=("$bin/tern_history" 1.0); }
a_rm() { A=("$bin/tern_rm" "3.$1"); }
a_vacate() { A=("$bin/tern_vacate_job" "$vc.$1"); }

# hold and release alternate on job 3.1: hold (both spools), release (both).
measure_hold_release() {
    local r i order
    ops+=(hold release)
    for ((r = 0; r < reps; r++)); do
        if ((r % 2)); then order=(1 0); else order=(0 1); fi
        for op in hold release; do
            "a_$op" "$r"
            for i in "${order[@]}"; do
                envv "${spools[$i]}"
                sample "$op" "${names[$i]}" "${E[@]}" "${A[@]}"
            done
        done
    done
    echo "  hold, release done" >&2
}

echo "timing, $reps repetitions of each ..." >&2
measure spawn a_spawn
measure submit a_submit
measure "q C.P" a_q
measure "q C -af" a_af
# The -af row must have listed the whole target cluster, not an error.
[[ $(wc -l <"$work/out") == "$reps" ]] || fail "tern_q 3 -af printed $(wc -l <"$work/out") lines, not $reps"
measure qedit a_qedit
measure prio a_prio
measure_hold_release
measure "history -limit 1" a_hist1
measure "history C.P" a_histid
grep -q . "$work/out" || fail "tern_history 1.0 printed nothing"
measure rm a_rm
for s in "${spools[@]}"; do
    left=$(tern_env "$s" "$bin/tern_q" 3 -af ProcId | wc -l)
    [[ $left == 0 ]] || fail "$s: $left jobs of cluster 3 left after tern_rm of each"
done

# The vacate targets: one cluster of $reps jobs started by one pass on
# $reps slots (priority 20, so they go before the idle bulk).
vcs=()
for s in "${spools[@]}"; do
    vcs+=("$(tern_env "$s" "$bin/tern_submit" running.sub | sed -n 's/.* submitted to cluster \([0-9]*\)\./\1/p')")
    tern_env "$s" "$bin/tern_negotiate" >/dev/null
done
vc=${vcs[0]}
[[ -n $vc && ${vcs[1]} == "$vc" ]] || fail "the vacate clusters differ or are unknown: ${vcs[*]}"
# Wait for every shadow to report its job running.
for s in "${spools[@]}"; do
    for _ in $(seq 500); do
        n=$(tern_env "$s" "$bin/tern_q" "$vc" -af JobStatus | grep -cx 2 || true)
        [[ $n == "$reps" ]] && break
        sleep 0.02
    done
    [[ $n == "$reps" ]] || fail "$s: $n of cluster $vc's $reps jobs running after the pass"
done
sqlite3 "$big/queue.db" 'PRAGMA wal_checkpoint(PASSIVE);' >/dev/null
sqlite3 "$small/queue.db" 'PRAGMA wal_checkpoint(PASSIVE);' >/dev/null
# Between repetitions the shadows act on the request, off the clock.
settle() { sleep 0.1; }
AFTER=settle measure vacate a_vacate
grep -q vacated "$work/out" || fail "tern_vacate_job said: $(cat "$work/out")"

# ---- the table --------------------------------------------------------------------
ms() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | awk -v q="$2" '
    { v[NR] = $1 * 1000 }
    END {
        if (q == "best") x = v[1]
        else if (NR % 2) x = v[(NR + 1) / 2]
        else x = (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%.2f", x
    }'; }
printf '\n%-18s %9s %9s %9s %9s %7s %7s %7s\n' "operation" "empty" "(best)" "$jobs" "(best)" "ratio" "(best)" "target"
printf '%-18s %9s %9s %9s %9s %7s %7s %7s\n' "" "median/ms" "ms" "median/ms" "ms" "" "" "<= 1.5"
met=0
total=0
for op in "${ops[@]}"; do
    em=$(ms "${T[$op.empty]}" median)
    bm=$(ms "${T[$op.big]}" median)
    ratio=$(awk -v a="$bm" -v b="$em" 'BEGIN { printf "%.2f", a / b }')
    if [[ $op == spawn ]]; then
        tgt="-"
    else
        total=$((total + 1))
        if awk -v r="$ratio" 'BEGIN { exit !(r <= 1.5) }'; then tgt="ok"; met=$((met + 1)); else tgt="MISS"; fi
    fi
    eb=$(ms "${T[$op.empty]}" best)
    bb=$(ms "${T[$op.big]}" best)
    printf '%-18s %9s %9s %9s %9s %7s %7s %7s\n' "$op" "$em" "$eb" "$bm" "$bb" "$ratio" \
        "$(awk -v a="$bb" -v b="$eb" 'BEGIN { printf "%.2f", a / b }')" "$tgt"
done
echo "ratio = big/empty of the medians (judged against the target), (best) of the best runs"
echo "target: ratio <= 1.5 for every operation: $met of $total meet it"
echo "spawn = env -i ... /bin/true, the fork/exec share of every row; $reps repetitions, interleaved"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)  cpus: $(nproc)"
