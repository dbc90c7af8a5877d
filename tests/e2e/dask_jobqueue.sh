#!/usr/bin/env bash
# End-to-end test with a real HTCondor client from PyPI: dask-jobqueue's
# HTCondorCluster runs Dask workers as jobs through `condor_submit` and
# `condor_rm`, here links to tern's tools in a temporary directory on PATH.
#
#   tests/e2e/dask_jobqueue.sh
#
# Uses the virtualenv in $TERN_E2E_VENV, else creates one under the cargo
# target directory with the pinned dask-jobqueue and distributed. Links the
# condor_* names to the multi-call `tern` in $TERN_BIN_DIR, else builds it
# (release). Exits 0 on success, 1 on failure, and 77 (skipped) when the
# virtualenv cannot be made (no network). Bounded: the driver is killed
# after $TERN_E2E_TIMEOUT seconds (default 180).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
pins=(dask-jobqueue==0.9.0 distributed==2026.8.0 dask==2026.8.0)

venv=${TERN_E2E_VENV:-$target/e2e-venv}
has_client() {
    [ -x "$1/bin/python" ] && "$1/bin/python" -c "import dask_jobqueue, distributed" 2>/dev/null
}
if ! has_client "$venv"; then
    echo "creating $venv with ${pins[*]}" >&2
    if ! { python3 -m venv "$venv" && "$venv/bin/pip" install --quiet --timeout 20 --retries 1 "${pins[@]}"; }; then
        echo "dask_jobqueue.sh: SKIPPED: cannot make the virtualenv $venv (no network?)" >&2
        exit 77
    fi
fi

bindir=${TERN_BIN_DIR:-}
if [ -z "$bindir" ]; then
    (cd "$root" && CARGO_TARGET_DIR=$target cargo build --quiet --release --bins)
    bindir=$target/release
fi
bindir=$(cd "$bindir" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/tern-e2e.XXXXXX")
export _TERN_SPOOL=$work/spool
cleanup() {
    # Whatever the outcome, no job of this run is left running.
    "$bindir/tern_rm" -all >/dev/null 2>&1 || true
    "$bindir/tern_rm" -all -forcex >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

# The names dask-jobqueue calls (condor_submit, condor_rm) and condor_q for
# the checks, as a user would make them: symbolic links to the multi-call
# `tern`, which runs the tool it is named after and finds tern_negotiate
# and tern_shadow beside itself.
mkdir -p "$work/bin" "$_TERN_SPOOL"
for name in condor_submit condor_q condor_rm; do
    ln -s "$bindir/tern" "$work/bin/$name"
done
export PATH=$work/bin:$PATH
# Only this run's configuration: no user's or system's file.
export TERN_CONFIG=/dev/null
unset TERN_NOW

cd "$work"
status=0
timeout -k 10 "${TERN_E2E_TIMEOUT:-180}" \
    "$venv/bin/python" "$here/dask_cluster.py" "$work" || status=$?
if [ "$status" -ne 0 ]; then
    echo "dask_jobqueue.sh: FAILED (exit $status); the workers' logs and the shadow log:" >&2
    tail -n 20 "$work"/logs-*/* "$_TERN_SPOOL"/shadow/ShadowLog 2>/dev/null >&2 || true
    exit 1
fi
echo "dask_jobqueue.sh: passed" >&2
