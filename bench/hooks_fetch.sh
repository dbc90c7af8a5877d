#!/usr/bin/env bash
# Times one negotiation pass (`tern_negotiate`) on a machine of 8 static
# slots (NUM_CPUS = NUM_SLOTS = 8) whose every slot has a fetch-work hook
# that returns nothing, against the same pass without hooks (target: <= 2x):
#
#   plain   no hook keyword: the pass as every machine without hooks runs it.
#   hooks   STARTD_JOB_HOOK_KEYWORD = B, B_HOOK_FETCH_WORK a sh script that
#           prints nothing, FetchWorkDelay = 0: every timed pass finds all 8
#           slots due, reads their fetch records and starts one
#           tern_fetchwork beside it (detached; the pass does not wait for
#           it). Before each run, off the clock, the previous run's
#           tern_fetchwork is waited for, so the lock is free and every
#           timed pass starts one; the script checks that each run's
#           tern_fetchwork did run all 8 hooks.
#   fetch   for information: one tern_fetchwork itself (8 hooks started side
#           by side, waited for, each slot's record written), the work the
#           hooks case moves out of the pass.
#
# The queue is empty (the passes match nothing) and NEGOTIATE_ON_SUBMIT is
# off, so the pass's own cost is what is measured, with the machine sync,
# the accountant's update and the slots read that every pass does.
#
# Each case runs N times, interleaved (a load spike hits every case alike);
# best and median are printed, and the ratio of the bests.
#
# Usage: bench/hooks_fetch.sh [runs]      (default 20)
# Honours CARGO_TARGET_DIR; builds the release binaries first.
set -euo pipefail

runs=${1:-20}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/pkg/release-build.sh"
tern_release_build "$root"

work=$(mktemp -d /tmp/tern-hooksfetch.XXXXXX)
# Copies, so a concurrent rebuild cannot swap the binaries mid-run;
# tern_negotiate finds tern_fetchwork beside itself.
mkdir "$work/bin"
cp "$tern_release_dir"/tern_{negotiate,fetchwork,shadow,status} "$work/bin/"
bin=$work/bin

. "$root/bench/common.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM

printf '#!/bin/sh\necho x >> %s/calls\n' "$work" >"$work/fetch.sh"
chmod +x "$work/fetch.sh"

# envv SPOOL HOOKS: sets E to the env(1) prefix of a hermetic tool run,
# with the fetch hooks when HOOKS is 1.
envv() {
    E=(env -i PATH=/usr/bin:/bin HOME="$work" TERN_CONFIG=/dev/null _TERN_SPOOL="$1"
        _TERN_NUM_CPUS=8 _TERN_NUM_SLOTS=8 _TERN_MEMORY=8192
        _TERN_NEGOTIATE_ON_SUBMIT=false _TERN_NEGOTIATE_ON_EXIT=false)
    if [[ $2 == 1 ]]; then
        E+=(_TERN_STARTD_JOB_HOOK_KEYWORD=B _TERN_B_HOOK_FETCH_WORK="$work/fetch.sh"
            _TERN_FetchWorkDelay=0)
    fi
}

calls() { [[ -e $work/calls ]] && wc -l <"$work/calls" || echo 0; }

# Waits (at most 10 s) until the hooks' calls reach $1 and no tern_fetchwork
# of the run is left.
settle() {
    local i
    for i in $(seq 500); do
        if (($(calls) >= $1)) && ! pgrep -f "$bin/tern_fetchwork" >/dev/null; then
            return 0
        fi
        sleep 0.02
    done
    echo "tern_fetchwork did not run its 8 hooks: $(calls) calls, $1 expected" >&2
    return 1
}

# The queues and slots, each made by one untimed pass.
plain=$work/plain
hooks=$work/hooks
envv "$plain" 0
"${E[@]}" "$bin/tern_negotiate"
envv "$hooks" 1
"${E[@]}" "$bin/tern_negotiate"
settle 8

# timed CMD...: runs CMD once, prints its wall seconds.
timed() {
    local t0 t1
    t0=$EPOCHREALTIME
    "$@" >"$work/out" 2>&1 || {
        echo "failed: $*" >&2
        cat "$work/out" >&2
        return 1
    }
    t1=$EPOCHREALTIME
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'
}

run_plain() {
    envv "$plain" 0
    timed "${E[@]}" "$bin/tern_negotiate"
}
run_hooks() {
    local before t
    before=$(calls)
    envv "$hooks" 1
    t=$(timed "${E[@]}" "$bin/tern_negotiate") || return 1
    settle $((before + 8)) || return 1
    echo "$t"
}
run_fetch() {
    local before t
    before=$(calls)
    envv "$hooks" 1
    t=$(timed "${E[@]}" "$bin/tern_fetchwork") || return 1
    (($(calls) == before + 8)) || { echo "tern_fetchwork ran $(($(calls) - before)) hooks, not 8" >&2; return 1; }
    echo "$t"
}

declare -A times
cases=(plain hooks fetch)
run_interleaved

declare -A label=(
    [plain]="tern_negotiate, no hooks"
    [hooks]="tern_negotiate, 8 fetch hooks due"
    [fetch]="tern_fetchwork (beside the pass)"
)
plain_best=$(best "${times[plain]:-}")
printf '\n%-36s %9s %9s %8s\n' "case (8 static slots, empty queue)" "best/ms" "median/ms" "/plain"
for c in "${cases[@]}"; do
    if [[ -z ${times[$c]:-} ]]; then
        printf '%-36s %9s\n' "${label[$c]}" failed
        continue
    fi
    b=$(best "${times[$c]}")
    m=$(median "${times[$c]}")
    printf '%-36s %9s %9s %8s\n' "${label[$c]}" "$(awk -v t="$b" 'BEGIN { printf "%.1f", t * 1000 }')" \
        "$(awk -v t="$m" 'BEGIN { printf "%.1f", t * 1000 }')" "$(ratio "$b" "$plain_best" 2)"
done
if [[ -n ${times[hooks]:-} && -n $plain_best ]]; then
    r=$(ratio "$(best "${times[hooks]}")" "$plain_best" 2)
    rm_=$(ratio "$(median "${times[hooks]}")" "$(median "${times[plain]}")" 2)
    echo "target: a pass with 8 fetch hooks <= 2x a pass without: best ${r}x, median ${rm_}x, $(awk -v r="$r" 'BEGIN { print (r <= 2 ? "meets" : "misses") }') the target"
fi
echo "runs: $runs (all: $(for c in "${cases[@]}"; do printf '%s=[%s] ' "$c" "${times[$c]:-}"; done))"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)  cpus: $(nproc)"
