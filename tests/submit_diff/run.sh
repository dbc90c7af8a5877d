#!/usr/bin/env bash
# Differential test of tern_submit against HTCondor's Python bindings.
#
#   tests/submit_diff/run.sh [-v] [CASE ...]
#
# Uses the virtualenv in $TERN_ORACLE_VENV, else /tmp/oracle if it holds the
# bindings, else creates one under the cargo target directory with
# htcondor==24.0.24. Builds tern_submit unless $TERN_SUBMIT names a binary.
# Prints one line per case and "N passed, M failed"; exits 1 on failures.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
version=24.0.24
export CONDOR_CONFIG=/dev/null

has_bindings() {
    [ -x "$1/bin/python" ] &&
        "$1/bin/python" -c "import htcondor, sys; sys.exit(0 if '$version' in htcondor.version() else 1)" 2>/dev/null
}

venv=${TERN_ORACLE_VENV:-}
if [ -z "$venv" ]; then
    if has_bindings /tmp/oracle; then
        venv=/tmp/oracle
    else
        venv=$target/submit-diff-venv
    fi
fi
if ! has_bindings "$venv"; then
    echo "creating $venv with htcondor==$version" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "htcondor==$version"
fi

tern=${TERN_SUBMIT:-}
if [ -z "$tern" ]; then
    (cd "$root" && CARGO_TARGET_DIR=$target cargo build --quiet --bin tern_submit)
    tern=$target/debug/tern_submit
fi

exec "$venv/bin/python" "$here/diff.py" \
    --tern "$tern" --cases "$here/cases" --allowlist "$here/allowlist.toml" "$@"
