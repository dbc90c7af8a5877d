# The helpers the comparison scripts share; sourced, not run. The sourcing
# script sets `work` (its temporary directory, which every process of the
# run names in its environment) before calling them, and `jobs` and
# `timeout_s` before the peer cases (run_tsp, run_nq) and `deadline`.

# The clocks below read $EPOCHREALTIME, which bash writes with the
# locale's decimal separator, and compute with awk, which reads and prints
# with it: one locale for every script, whatever the caller's.
export LC_ALL=C

# ---- this run's processes and the cleanup -----------------------------------

# The processes of this run (shadows, passes, jobs, peers' servers): those
# whose environment names $1 (default $work), by pid. One grep over every
# environment (a grep per process costs seconds on a loaded machine); the
# script itself is left out.
own_pids() {
    grep -lsF "${1:-$work}" /proc/[0-9]*/environ 2>/dev/null |
        sed -n 's,^/proc/\([0-9]*\)/environ$,\1,p' | grep -vx "$$" || true
}

# Stops task-spooler servers of the run, kills whatever else of it is left
# (tern's shadows and passes, nq jobs, pueued) and removes $work.
cleanup() {
    local pid s
    set +e
    for s in "$work"/tsp.*/socket; do
        [[ -S $s ]] && TS_SOCKET=$s tsp -K >/dev/null 2>&1
    done
    for pid in $(own_pids); do kill -KILL "$pid" 2>/dev/null; done
    rm -rf "$work"
}

# Shadows and passes leave after the queue is empty; waits (at most 5 s)
# for those of spool $1, so the next case does not share the cpus with them.
wait_for_shadows() {
    local i
    for i in $(seq 250); do
        [[ -z $(own_pids "$1") ]] && return 0
        sleep 0.02
    done
}

# ---- running the cases --------------------------------------------------------

# Runs each case named in the array `cases` (`run_<case> <run number>`,
# printing its seconds) `runs` times, interleaved so a load spike hits
# every case alike, adding each time to the global associative array
# `times` (declared by the caller).
run_interleaved() {
    local r c t
    for ((r = 1; r <= runs; r++)); do
        for c in "${cases[@]}"; do
            if t=$("run_$c" "$r"); then
                times[$c]+="$t "
                echo "run $r/$runs  $c: ${t}s" >&2
            else
                echo "run $r/$runs  $c: failed" >&2
            fi
        done
    done
}

# ---- clocks and failures -----------------------------------------------------
now() { echo "$EPOCHREALTIME"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
# Whether the clock is past $1 (seconds, as `deadline` prints them), in
# bash alone: the drain loops call it every 20 ms, and a process per call
# would load the cpus the timed work runs on.
past() {
    local d=$1 t=$EPOCHREALTIME df tf
    [[ $d == *.* ]] || d+=.0
    df=${d#*.}000 tf=${t#*.}000
    ((${t%.*} * 1000 + 10#${tf:0:3} > ${d%.*} * 1000 + 10#${df:0:3}))
}
# Sleeps $1 seconds without starting a process: `read -t` on a pipe that
# never delivers (opened once).
nap() {
    [[ -n ${nap_fd:-} ]] || exec {nap_fd}<> <(:)
    read -rt "$1" -u "$nap_fd" || true
}
deadline() { awk -v t="$EPOCHREALTIME" -v s="$timeout_s" 'BEGIN { printf "%.3f", t + s }'; }
fail() { echo "$1: $2" >&2; return 1; }

# ---- the peers -----------------------------------------------------------------
have() { command -v "$1" >/dev/null 2>&1; }
apt_install() {
    local sudo=""
    [[ $(id -u) == 0 ]] || { have sudo && sudo=sudo; } || return 1
    $sudo apt-get install -y -q "$@" >"$work/apt.log" 2>&1 ||
        { $sudo apt-get update -q >/dev/null 2>&1 && $sudo apt-get install -y -q "$@" >"$work/apt.log" 2>&1; }
}

# Adds task-spooler and nq to the array `peers`, installing them when
# missing, unless the space-padded `skip` names them.
add_apt_peers() {
    if [[ $skip != *" tsp "* ]]; then
        have tsp || apt_install task-spooler || true
        if have tsp; then peers+=(tsp); else echo "skipping task-spooler: tsp missing, apt-get install task-spooler failed" >&2; fi
    fi
    if [[ $skip != *" nq "* ]]; then
        have nq || apt_install nq || true
        if have nq; then peers+=(nq); else echo "skipping nq: nq missing, apt-get install nq failed" >&2; fi
    fi
}

# task-spooler with two slots: $jobs calls of `tsp /bin/true`, then a wait
# for all; prints the wall seconds, or fails. $1 numbers the run.
run_tsp() {
    local dir=$work/tsp.$1 t0 t1 end i done_n
    mkdir -p "$dir"
    export TS_SOCKET=$dir/socket TMPDIR=$dir TS_MAXFINISHED=$((jobs + 10)) TS_MAXCONN=$((jobs + 10))
    # The first client starts the server, which inherits this environment.
    export BENCH_MARK=$work
    tsp -S 2 >/dev/null
    end=$(deadline)
    t0=$(now)
    for ((i = 0; i < jobs; i++)); do tsp /bin/true >/dev/null; done
    timeout "$timeout_s" tsp -w >/dev/null 2>&1 || true
    while tsp -l | awk 'NR > 1 && ($2 == "running" || $2 == "queued") { f = 1 } END { exit !f }'; do
        past "$end" && { fail tsp "jobs still queued after ${timeout_s}s"; tsp -K; return 1; }
        sleep 0.02
    done
    t1=$(now)
    done_n=$(tsp -l | awk 'NR > 1 && $2 == "finished" && $4 == 0' | wc -l)
    tsp -K >/dev/null 2>&1 || true
    unset TS_SOCKET TMPDIR TS_MAXFINISHED TS_MAXCONN
    [[ $done_n == "$jobs" ]] || fail tsp "$done_n jobs finished with 0, not $jobs" || return 1
    rm -rf "$dir"
    elapsed "$t0" "$t1"
}

# How many of the jobs in nq directory $1 have finished with status 0.
nq_done() { { grep -ls -F '[exited with status 0.]' "$1"/q0/,* "$1"/q1/,* || true; } | wc -l; }

# nq with two queues (job i in queue i mod 2): $jobs calls of `nq -q
# /bin/true`, then `nq -w` on each; prints the wall seconds, or fails.
run_nq() {
    local dir=$work/nq.$1 t0 t1 n end i
    mkdir -p "$dir/q0" "$dir/q1"
    t0=$(now)
    for ((i = 0; i < jobs; i++)); do NQDIR=$dir/q$((i % 2)) nq -q /bin/true; done
    NQDIR=$dir/q0 timeout "$timeout_s" nq -w || { fail nq "queue 0 not done after ${timeout_s}s"; return 1; }
    NQDIR=$dir/q1 timeout "$timeout_s" nq -w || { fail nq "queue 1 not done after ${timeout_s}s"; return 1; }
    # A finished job's output file ends with its exit status, and `nq -w`
    # can return just before the last job has written it (about one run in
    # three here): the clock runs until every job's status is there.
    end=$(deadline)
    while n=$(nq_done "$dir") && ((n < jobs)) && ! past "$end"; do sleep 0.005; done
    t1=$(now)
    [[ $n == "$jobs" ]] || fail nq "$n jobs finished, not $jobs" || return 1
    rm -rf "$dir"
    elapsed "$t0" "$t1"
}

# ---- figures -------------------------------------------------------------------

# The best and the median of a space-separated list of seconds.
best() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | head -n 1; }
median() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# $1 jobs in $2 seconds, per second.
rate() { awk -v n="$1" -v t="$2" 'BEGIN { if (t > 0) printf "%.0f", n / t; else print "-" }'; }
# $1 over $2, with $3 decimals (default 2).
ratio() { awk -v a="$1" -v b="$2" -v d="${3:-2}" 'BEGIN { if (a > 0 && b > 0) printf "%.*f", d, a / b; else print "-" }'; }

# What `env -i NAME=VALUE... COMMAND [ARG...]` does, done by the calling
# subshell, whose caller has un-exported every variable: exports the
# assignments and execs COMMAND. (bash still passes SHLVL=0 on; nothing
# of tern reads it.)
env_here() {
    [[ $1 == -i ]] && shift
    while [[ $1 == *=* ]]; do
        export "${1%%=*}=${1#*=}"
        shift
    done
    exec "$@"
}

# Waits until the tern queue in SPOOL is empty, looking every POLL seconds;
# past the deadline END it prints the totals and the tail of LOG, and fails.
# EACH, if given, is run at every look (a cron tick). Uses the script's
# tern_env and $bin.
tern_drain() {
    local spool=$1 end=$2 poll=$3 log=$4 each=${5:-} total names
    # One process per poll, the tern_q itself: the poller's own cost is not
    # tern's, and every fork or exec of it takes cpu from the jobs being
    # timed. tern_env's `env -i` is done by the poll's subshell itself
    # (env_here), not by an exec of env: env is a dynamically linked
    # program, whose start (about 1.4 ms of cpu here, most of it the
    # loader's cpu probing) cost more than the static tern_q's whole run.
    mapfile -t names < <(compgen -e)
    while :; do
        total=$(
            export -n "${names[@]}"
            env() { env_here "$@"; }
            tern_env "$spool" "$bin/tern_q" -totals -allusers
        )
        [[ $total =~ Total\ for\ all\ users:\ ([0-9]+)\ jobs ]] && total=${BASH_REMATCH[1]}
        [[ $total == 0 ]] && return 0
        past "$end" && {
            tern_env "$spool" "$bin/tern_q" -totals -allusers >&2
            fail tern "queue not empty after ${timeout_s}s (spool kept in $spool; tail of $log:)"
            tail -n 20 "$log" >&2 2>/dev/null
            return 1
        }
        [[ -n $each ]] && "$each"
        nap "$poll"
    done
}

# Checks that SPOOL's history holds N jobs, every one of which exited 0 and
# completed.
tern_all_done() {
    local spool=$1 n=$2 left by_code
    left=$(tern_env "$spool" "$bin/tern_history" -af ClusterId | wc -l)
    [[ $left == "$n" ]] || fail tern "history holds $left jobs, not $n" || return 1
    by_code=$(tern_env "$spool" "$bin/tern_history" -af ExitCode JobStatus | sort | uniq -c | awk '{ printf "%s", $0 }')
    [[ $by_code == *"$n 0 4" ]] || fail tern "not every job exited 0 and completed: $by_code"
}
