#!/usr/bin/env bash
# Times one routing pass (`tern_job_router`) over 10,000 idle candidates
# and 10 routes (target <= 0.5 s):
#
#   (a) first pass   every route takes its MaxIdleJobs (the default 50):
#                    10,000 candidates read and matched, 500 routed copies
#                    submitted, each claim + submit one transaction.
#   (b) full routes  the next pass: every route is at MaxIdleJobs, so the
#                    pass looks after the 500 managed jobs, reads the idle
#                    jobs again and stops at the first one no route takes.
#   (c) no limits    MaxIdleJobs = -1, MaxJobs = 10000: the pass routes all
#                    10,000 (the upper bound of one pass's work).
#
# Route i (0..9) takes ProcId % 10 == i, so each job matches one route and
# tries the ones before it. Every run gets a fresh copy of the queue.
#
# Usage: bench/router_10k.sh [runs]      (default 3)
# Honours CARGO_TARGET_DIR; builds the release binaries first.
set -euo pipefail

runs=${1:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/pkg/release-build.sh"
tern_release_build "$root"

work=$(mktemp -d /tmp/tern-router10k.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
cp "$tern_release_dir"/tern_{submit,job_router,q} "$work/bin/"
bin=$work/bin

routes() { # $1: extra route lines
    local names="" i
    for i in $(seq 0 9); do names="$names R$i"; done
    echo "JOB_ROUTER_ROUTE_NAMES =$names"
    for i in $(seq 0 9); do
        printf 'JOB_ROUTER_ROUTE_R%s @=end\n  UNIVERSE vanilla\n  REQUIREMENTS ProcId %% 10 == %s\n  SET RoutedVia "R%s"\n%s\n@end\n' "$i" "$i" "$i" "$1"
    done
}
routes "" > "$work/limited.config"
routes "  MaxIdleJobs = -1
  MaxJobs = 10000" > "$work/unlimited.config"

export _TERN_SPOOL=$work/spool _TERN_NEGOTIATE_ON_SUBMIT=false TERN_NOW=1700000000
printf 'executable = /bin/true\nqueue 10000\n' > "$work/jobs.sub"
TERN_CONFIG=/dev/null "$bin/tern_submit" "$work/jobs.sub" >/dev/null
cp "$work/spool/queue.db" "$work/base.db"

fresh() { rm -rf "$work/run"; mkdir -p "$work/run"; cp "$work/base.db" "$work/run/queue.db"; }
time_it() { # prints seconds of one run of "$@"
    local s e
    s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N)
    echo "$e - $s" | bc
}
report() { # name, times...
    local name=$1; shift
    printf '%-40s best %6.3f s   median %6.3f s\n' "$name" \
        "$(printf '%s\n' "$@" | sort -n | head -1)" \
        "$(printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p")"
}

export _TERN_SPOOL=$work/run
a=(); b=(); c=()
for _ in $(seq "$runs"); do
    fresh
    a+=("$(TERN_CONFIG=$work/limited.config time_it "$bin/tern_job_router")")
    b+=("$(TERN_CONFIG=$work/limited.config TERN_NOW=1700000010 time_it "$bin/tern_job_router")")
    n=$(TERN_CONFIG=/dev/null "$bin/tern_q" -af RouteName -constraint 'RouteName isnt undefined' | wc -l)
    [ "$n" = 500 ] || { echo "router_10k.sh: expected 500 routed copies, got $n" >&2; exit 1; }
    fresh
    c+=("$(TERN_CONFIG=$work/unlimited.config time_it "$bin/tern_job_router")")
    n=$(TERN_CONFIG=/dev/null "$bin/tern_q" -af RouteName -constraint 'RouteName isnt undefined' | wc -l)
    [ "$n" = 10000 ] || { echo "router_10k.sh: expected 10000 routed copies, got $n" >&2; exit 1; }
done
report "(a) first pass, 500 routed" "${a[@]}"
report "(b) next pass, routes full" "${b[@]}"
report "(c) no limits, 10000 routed" "${c[@]}"
