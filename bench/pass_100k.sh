#!/usr/bin/env bash
# Times one negotiation pass (`tern_negotiate`) over 100,000 idle jobs in
# 100 autoclusters with 64 static slots (target <= 0.5 s):
#
#   (a) no match   START = false: every slot refuses every job, so the pass
#                  tries each of the 100 autoclusters and starts nothing.
#                  The pass changes nothing, so the runs repeat on one queue
#                  (after one untimed pass, as a cron pass would find it).
#   (b) 64 start   START = true: the pass claims all 64 slots and starts 64
#                  shadows (jobs are /bin/sleep 1000, so nothing exits and
#                  no claim is reused while the pass runs). Every run gets a
#                  fresh copy of the queue; afterwards the run is checked
#                  (64 running) and torn down with `tern_rm -all`.
#
# The queue: 100 clusters of 1,000 jobs, cluster i with request_memory = i
# (MiB), so the jobs differ only in a significant attribute: 100
# autoclusters. Slots: NUM_SLOTS = NUM_CPUS = 64, MEMORY = 65536 (1 GiB a
# slot, so every job fits). NEGOTIATE_ON_SUBMIT and NEGOTIATE_ON_EXIT are
# off, so the only pass is the timed one.
#
# Baselines in the same run, on the same queue, so the ratio means something
# on a loaded machine: `tern_q -totals -allusers` (one tool run that counts
# all 100,000 jobs), `tern_q -af ClusterId RequestMemory` (one that parses
# every job's ad and evaluates an attribute, as the pass must at least
# read each job's significant attributes) and a bare sqlite3 scan of the
# procs table (every ad's text read, nothing parsed).
#
# Each case runs N times; the best and the median are printed, with peak RSS
# (/usr/bin/time). Own loop rather than hyperfine: (b) needs a checked
# teardown between runs.
#
# Usage: bench/pass_100k.sh [runs]      (default 3)
# Honours CARGO_TARGET_DIR; builds the release binaries first.
set -euo pipefail

runs=${1:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/pkg/release-build.sh"
tern_release_build "$root"
for t in sqlite3 /usr/bin/time; do
    command -v "$t" >/dev/null || { echo "pass_100k.sh: $t is needed (apt-get install sqlite3 time)" >&2; exit 1; }
done

work=$(mktemp -d /tmp/tern-pass100k.XXXXXX)
# Copies, so a concurrent rebuild cannot swap the binaries mid-run;
# tern_negotiate finds tern_shadow beside itself.
mkdir "$work/bin"
cp "$tern_release_dir"/tern_{submit,negotiate,shadow,q,rm} "$work/bin/"
bin=$work/bin

. "$root/bench/common.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM

# envv SPOOL START: sets E to the env(1) prefix of a hermetic tool run on
# this machine layout; tern_env SPOOL START CMD... runs CMD with it.
envv() {
    E=(env -i PATH=/usr/bin:/bin HOME="$work" TERN_CONFIG=/dev/null _TERN_SPOOL="$1"
        _TERN_NUM_CPUS=64 _TERN_NUM_SLOTS=64 _TERN_MEMORY=65536
        _TERN_NEGOTIATE_ON_SUBMIT=false _TERN_NEGOTIATE_ON_EXIT=false _TERN_START="$2")
}
tern_env() {
    envv "$1" "$2"
    "${E[@]}" "${@:3}"
}
totals() { # SPOOL: "jobs idle running" of the whole queue
    tern_env "$1" true "$bin/tern_q" -totals -allusers |
        sed -n 's/^Total for all users: \([0-9]*\) jobs;.* \([0-9]*\) idle, \([0-9]*\) running.*/\1 \2 \3/p'
}

# ---- the queue ---------------------------------------------------------------
base=$work/base
echo "building the queue: 100 clusters x 1000 jobs ..." >&2
for i in $(seq 100); do
    printf 'executable = /bin/sleep\narguments = 1000\nrequest_memory = %d\nqueue 1000\n' "$i" >"$work/c$i.sub"
    (cd "$work" && tern_env "$base" true "$bin/tern_submit" "c$i.sub" >/dev/null)
done
read -r n idle running < <(totals "$base")
[[ $n == 100000 && $idle == 100000 ]] || { echo "queue holds $n jobs ($idle idle), not 100000 idle" >&2; exit 1; }
acs=$(tern_env "$base" true "$bin/tern_q" -af RequestMemory | sort -u | wc -l)
[[ $acs == 100 ]] || { echo "the jobs have $acs distinct RequestMemory values, not 100" >&2; exit 1; }
sqlite3 "$base/queue.db" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null

# ---- timing --------------------------------------------------------------------
# timed CMD...: runs CMD once (output to $work/out), prints "wall_s rss_kb".
timed() {
    local t0 t1 rss
    t0=$EPOCHREALTIME
    /usr/bin/time -o "$work/time" -f '%M' "$@" >"$work/out" 2>&1 || {
        echo "failed: $*" >&2
        cat "$work/out" >&2
        return 1
    }
    t1=$EPOCHREALTIME
    rss=$(tail -n 1 "$work/time")
    awk -v a="$t0" -v b="$t1" -v r="$rss" 'BEGIN { printf "%.3f %s\n", b - a, r }'
}

# (a): one queue for every run, after one untimed pass.
nomatch=$work/nomatch
cp -r "$base" "$nomatch"
# The untimed pass, verbose: one "reject" line per autocluster tried.
tried=$(tern_env "$nomatch" false "$bin/tern_negotiate" -v | grep -c '^reject ' || true)
[[ $tried == 100 ]] || { echo "(a) the pass rejected $tried autoclusters, not 100" >&2; exit 1; }
run_nomatch() {
    envv "$nomatch" false
    timed "${E[@]}" "$bin/tern_negotiate" || return 1
    read -r _ idle running < <(totals "$nomatch")
    [[ $idle == 100000 && $running == 0 ]] ||
        { echo "(a) the pass started jobs: $idle idle, $running running" >&2; return 1; }
}

# (b): a fresh copy per run, checked and torn down after.
run_start() {
    local spool=$work/start.$1 line i
    cp -r "$base" "$spool"
    envv "$spool" true
    line=$(timed "${E[@]}" "$bin/tern_negotiate") || return 1
    read -r _ idle running < <(totals "$spool")
    if [[ $running != 64 ]]; then
        echo "(b) after the pass: $running running, $idle idle (not 64 running); pass output:" >&2
        cat "$work/out" >&2
        tail -n 20 "$spool/shadow/ShadowLog" >&2 2>/dev/null
        return 1
    fi
    echo "$line"
    # Teardown, off the clock: remove everything, let the shadows kill their
    # sleeps and leave (KILLING_TIMEOUT bounds it), then drop the copy.
    tern_env "$spool" true "$bin/tern_rm" -all >/dev/null
    for i in $(seq 1500); do
        [[ -z $(own_pids "$spool") ]] && break
        sleep 0.02
    done
    if [[ -n $(own_pids "$spool") ]]; then
        echo "(b) shadows still alive 30 s after tern_rm -all: $(own_pids "$spool" | tr '\n' ' ')" >&2
        for pid in $(own_pids "$spool"); do kill -KILL "$pid" 2>/dev/null || true; done
    fi
    rm -rf "$spool"
}

run_totals() {
    envv "$nomatch" false
    timed "${E[@]}" "$bin/tern_q" -totals -allusers
}
run_af() {
    envv "$nomatch" false
    timed "${E[@]}" "$bin/tern_q" -allusers -af ClusterId RequestMemory
}
run_sqlite() { timed sqlite3 "$nomatch/queue.db" 'select count(*), sum(length(ad)) from procs where status = 1'; }

declare -A times rss
cases=(nomatch start totals af sqlite)
for ((r = 1; r <= runs; r++)); do
    for c in "${cases[@]}"; do
        if line=$("run_$c" "$r"); then
            times[$c]+="${line% *} "
            rss[$c]=${line#* }
            echo "run $r/$runs  $c: ${line% *}s" >&2
        else
            echo "run $r/$runs  $c: failed" >&2
        fi
    done
done


declare -A label=(
    [nomatch]="(a) tern_negotiate, START = false"
    [start]="(b) tern_negotiate, 64 jobs start"
    [totals]="baseline: tern_q -totals -allusers"
    [af]="baseline: tern_q -af RequestMemory"
    [sqlite]="baseline: sqlite3 scan of procs"
)
tot_best=$(best "${times[totals]:-}")
sql_best=$(best "${times[sqlite]:-}")
printf '\n%-38s %8s %8s %7s %7s %9s %9s\n' "case (100000 idle jobs, 100 ACs, 64 slots)" "best/s" "median/s" "target" "RSS/MB" "/tern_q" "/sqlite3"
for c in "${cases[@]}"; do
    if [[ -z ${times[$c]:-} ]]; then
        printf '%-38s %8s\n' "${label[$c]}" failed
        continue
    fi
    b=$(best "${times[$c]}")
    m=$(median "${times[$c]}")
    tgt="-"
    [[ $c == nomatch || $c == start ]] && tgt="0.5"
    printf '%-38s %8s %8s %7s %7s %9s %9s\n' "${label[$c]}" "$b" "$m" "$tgt" \
        "$(awk -v k="${rss[$c]}" 'BEGIN { printf "%.0f", k / 1024 }')" "$(ratio "$b" "$tot_best" 1)" "$(ratio "$b" "$sql_best" 1)"
done
echo "/tern_q, /sqlite3 = the case's best time over the baseline's best time"
for c in nomatch start; do
    [[ -n ${times[$c]:-} ]] || continue
    b=$(best "${times[$c]}")
    echo "target: ${label[$c]} <= 0.5 s: best $b s, median $(median "${times[$c]}") s, $(awk -v t="$b" 'BEGIN { print (t <= 0.5 ? "meets" : "misses") }') the target"
done
echo "runs: $runs (all: $(for c in "${cases[@]}"; do printf '%s=[%s] ' "$c" "${times[$c]:-}"; done))"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)  cpus: $(nproc)"
