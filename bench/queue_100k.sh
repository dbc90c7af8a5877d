#!/usr/bin/env bash
# Times the queue's two big writes on a cluster of 100,000 jobs:
#   - `tern_submit` of `queue 100000` into an empty SPOOL   (target <= 1.5 s)
#   - `tern_rm <cluster>` of that cluster                    (target <= 2 s)
# each the best of N runs, with its peak RSS (/usr/bin/time), and its ratio
# to the raw SQLite floor measured in the same run: the same rows written by
# a bare rusqlite loop in one transaction (benches/sqlite_floor.rs, reading
# the rows from the queue tern_submit just made).
#
# A second description, with `arguments = $(Process)`, gives every job its
# own attribute; it is shown for information (no target).
#
# Usage: bench/queue_100k.sh [runs]      (default 3; the best run is kept)
# Honours CARGO_TARGET_DIR; builds the release binaries first.
set -euo pipefail

runs=${1:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/pkg/release-build.sh"
tern_release_build "$root" --bin tern_submit --bin tern_rm
cargo bench --quiet --manifest-path "$root/Cargo.toml" --bench sqlite_floor --no-run 2>/dev/null
bin=$tern_release_dir

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'executable = /bin/echo\nqueue 100000\n' >"$work/same.sub"
printf 'executable = /bin/echo\narguments = $(Process)\nqueue 100000\n' >"$work/per_proc.sub"

# A hermetic run with SPOOL in $1: pinned clock, no configuration files,
# and no pass after the submit (one would start jobs, and the copy that
# tern_rm is timed on would hold running jobs, which a removal leaves to
# their shadows). /usr/bin/time prints "wall_seconds peak_rss_kb" on the
# last stderr line.
timed() {
    local spool=$1
    shift
    /usr/bin/time -f '%e %M' env -i PATH=/usr/bin:/bin HOME="$work" TERN_NOW=1700000000 \
        TERN_CONFIG=/dev/null _TERN_SPOOL="$spool" _TERN_NEGOTIATE_ON_SUBMIT=false \
        "$@" 2>&1 >/dev/null | tail -n 1
}

# best_submit FILE: "wall rss_kb" of the fastest of $runs submits, each into
# an empty SPOOL; leaves the last queue in $work/submitted.
best_submit() {
    local best="" line
    for _ in $(seq "$runs"); do
        rm -rf "$work/submitted"
        line=$(timed "$work/submitted" "$bin/tern_submit" "$1")
        if [[ -z $best ]] || awk -v a="${line% *}" -v b="${best% *}" 'BEGIN { exit !(a < b) }'; then
            best=$line
        fi
    done
    echo "$best"
}

# best_rm: "wall rss_kb" of the fastest of $runs `tern_rm 1`, each on a
# fresh copy of the submitted queue.
best_rm() {
    local best="" line
    for _ in $(seq "$runs"); do
        rm -rf "$work/rm"
        cp -r "$work/submitted" "$work/rm"
        line=$(timed "$work/rm" "$bin/tern_rm" 1)
        if [[ -z $best ]] || awk -v a="${line% *}" -v b="${best% *}" 'BEGIN { exit !(a < b) }'; then
            best=$line
        fi
    done
    echo "$best"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "-" }'; }
mb() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }

notes=""
printf '%-40s %8s %8s %8s %8s %7s\n' "case (100000 jobs)" "wall/s" "target" "RSS/MB" "floor/s" "ratio"
for f in same per_proc; do
    read -r sub_wall sub_rss < <(best_submit "$work/$f.sub")
    count=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from procs").fetchone()[0])' "$work/submitted/queue.db")
    [[ $count == 100000 ]] || { echo "tern_submit queued $count jobs, not 100000" >&2; exit 1; }
    read -r rm_wall rm_rss < <(best_rm)
    left=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from procs").fetchone()[0])' "$work/rm/queue.db")
    [[ $left == 0 ]] || { echo "tern_rm left $left jobs" >&2; exit 1; }
    floor=$(cargo bench --quiet --manifest-path "$root/Cargo.toml" --bench sqlite_floor -- \
        --db "$work/submitted/queue.db" --runs "$runs" 2>/dev/null)
    floor_submit=$(sed -n 's/^floor_submit_s=//p' <<<"$floor")
    floor_rm=$(sed -n 's/^floor_rm_s=//p' <<<"$floor")
    if [[ $f == same ]]; then st="1.5"; rt="2.0"; else st="-"; rt="-"; fi
    printf '%-40s %8s %8s %8s %8s %7s\n' "tern_submit, $f" "$sub_wall" "$st" "$(mb "$sub_rss")" "$floor_submit" "$(ratio "$sub_wall" "$floor_submit")"
    printf '%-40s %8s %8s %8s %8s %7s\n' "tern_rm 1, $f" "$rm_wall" "$rt" "$(mb "$rm_rss")" "$floor_rm" "$(ratio "$rm_wall" "$floor_rm")"
    notes+="  $f: $(sed -n 's/^floor_procs=\([0-9]*\) floor_log_records=\([0-9]*\)/\1 proc rows, \2 log records/p' <<<"$floor")"$'\n'
done
echo "floor = the same rows by a bare rusqlite loop, one transaction, open to close; ratio = tern / floor"
printf '%s' "$notes"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)  cpus: $(nproc)"
