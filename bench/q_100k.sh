#!/usr/bin/env bash
# Times tern_q over a queue of 100,000 jobs made by `tern_submit` of
# `queue 100000`:
#   - the default batch view (one line per batch, plus the totals);
#   - `tern_q -af ClusterId ProcId JobStatus` (one line per job).
# Both read only the hot columns of the jobs and one cluster ad. Each is
# shown with its peak RSS (/usr/bin/time) and its ratio to a raw-SQLite
# floor measured in the same run: the sqlite3 shell printing the same
# columns of the same table (python3's sqlite3 module when there is no
# sqlite3 shell).
#
# Targets on a 2-core machine: each view <= 0.5 s, peak RSS <= 150 MB.
#
# Usage: bench/q_100k.sh [runs]      (default 5; the best run is kept)
# Honours CARGO_TARGET_DIR; builds the release binaries first.
set -euo pipefail

runs=${1:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/pkg/release-build.sh"
tern_release_build "$root" --bin tern_q --bin tern_submit
bin=$tern_release_dir

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'executable = /bin/echo\narguments = x\nqueue 100000\n' >"$work/job.sub"

# A hermetic run: pinned clock, no configuration files, SPOOL in $work.
# (An array, not a function, so that /usr/bin/time can run it.)
tern=(env -i PATH=/usr/bin:/bin HOME="$work" TERN_NOW=1700000000 TZ=UTC
    TERN_CONFIG=/dev/null _TERN_SPOOL="$work/spool")
"${tern[@]}" "$bin/tern_submit" "$work/job.sub" >/dev/null
db=$work/spool/queue.db

floor() {
    if command -v sqlite3 >/dev/null; then
        sqlite3 "$db" "$1"
    else
        python3 -c 'import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]):
    print(*r, sep="|")' "$db" "$1"
    fi
}

# best COMMAND...: prints the fastest wall time (seconds) of $runs runs.
best() {
    local b="" t
    for _ in $(seq "$runs"); do
        t=$( { TIMEFORMAT='%R'; time "$@" >/dev/null; } 2>&1 )
        if [[ -z $b ]] || awk -v a="$t" -v b="$b" 'BEGIN { exit !(a < b) }'; then
            b=$t
        fi
    done
    echo "$b"
}

# rss COMMAND...: peak resident set size in MB (env execs the tool, so
# this is the tool's own).
rss() {
    /usr/bin/time -f 'rss %M' "$@" 2>&1 >/dev/null | awk '$1 == "rss" { printf "%.1f", $2 / 1024 }'
}

printf '%-40s %8s %8s %9s %7s\n' "case (100000 jobs)" "wall/s" "floor/s" "ratio" "RSS/MB"
row() {
    local name=$1 sql=$2
    shift 2
    local t f
    t=$(best "${tern[@]}" "$@")
    f=$(best floor "$sql")
    printf '%-40s %8s %8s %8.1fx %7s\n' "$name" "$t" "$f" \
        "$(awk -v a="$t" -v b="$f" 'BEGIN { print (b > 0 ? a / b : 0) }')" \
        "$(rss "${tern[@]}" "$@")"
}
row "tern_q" "select cluster, proc, status, owner from procs" "$bin/tern_q"
row "tern_q -af ClusterId ProcId JobStatus" "select cluster, proc, status from procs" \
    "$bin/tern_q" -af ClusterId ProcId JobStatus
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)  cpus: $(nproc)"
