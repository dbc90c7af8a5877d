#!/bin/bash
# Submit-to-start latency in shared mode with `tern_negotiate -loop -watch`
# (the resident fallback; tern-negotiate.path starts the same pass on the
# same mark): a user's tern_submit leaves the pass-wanted mark, the root
# loop sees it with inotify and starts the job. Prints each run's latency
# (from just before tern_submit to the job's first instruction) and the
# median. The target of issue 16 is <= 1 s.
#
#   sudo bench/activation_latency.sh [RUNS]      (default 10)
#
# Root only. A throwaway shared SPOOL in a temp dir, made by tern_install
# with group nogroup, stands for /var/lib/tern; the submitter is nobody.
# Uses target/release/tern (cargo build --release), or $TERN_BIN.
set -eu
runs=${1:-10}
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${TERN_BIN:-$here/target/release/tern}
[ "$(id -u)" = 0 ] || { echo "activation_latency.sh: needs root" >&2; exit 2; }
[ -x "$bin" ] || { echo "activation_latency.sh: no $bin (cargo build --release)" >&2; exit 2; }

t=$(mktemp -d)
chmod 0755 "$t"
loop=
cleanup() {
    [ -n "$loop" ] && kill "$loop" 2>/dev/null && wait "$loop" 2>/dev/null
    rm -rf "$t"
}
trap cleanup EXIT
mkdir "$t/bin" "$t/work"
chown nobody:nogroup "$t/work"
# A copy with its tool names beside it, as /usr/bin has them: the pass
# starts tern_shadow from beside the program it runs.
cp "$bin" "$t/bin/tern"
for n in tern_install tern_submit tern_negotiate tern_shadow tern_q; do
    ln -s tern "$t/bin/$n"
done
cat >"$t/tern_config" <<CFG
SPOOL = $t/spool
SHARED_QUEUE = True
NUM_CPUS = 2
CFG
export TERN_CONFIG=$t/tern_config
"$t/bin/tern_install" -group nogroup >/dev/null
"$t/bin/tern_negotiate" -loop -watch &
loop=$!
sleep 1

lat=()
for i in $(seq "$runs"); do
    cat >"$t/work/job$i.sub" <<SUB
executable = /bin/sh
arguments = "-c 'date +%s.%N > $t/work/started.$i'"
initialdir = $t/work
queue
SUB
    t0=$(date +%s.%N)
    setpriv --reuid nobody --regid nogroup --clear-groups -- \
        env TERN_CONFIG="$TERN_CONFIG" "$t/bin/tern_submit" "$t/work/job$i.sub" >/dev/null
    for _ in $(seq 200); do
        [ -s "$t/work/started.$i" ] && break
        sleep 0.05
    done
    if [ -s "$t/work/started.$i" ]; then
        l=$(echo "$(cat "$t/work/started.$i") - $t0" | bc)
        lat+=("$l")
        printf 'run %2d: %.3f s\n' "$i" "$l"
    else
        echo "run $i: the job did not start within 10 s"
    fi
    sleep 1.2
done
[ ${#lat[@]} -gt 0 ] || exit 1
median=$(printf '%s\n' "${lat[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
printf 'median submit-to-start: %.3f s over %d runs\n' "$median" "${#lat[@]}"
