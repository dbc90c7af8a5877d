#!/usr/bin/env bash
# Differential test of tern_submit against HTCondor's Python bindings.
#
#   tests/submit_diff/run.sh [-v] [CASE ...]
#
# The virtualenv with htcondor==24.0.24 is tests/oracle-venv.sh's. Builds
# tern_submit unless $TERN_SUBMIT names a binary.
# Prints one line per case and "N passed, M failed"; exits 1 on failures.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
export CONDOR_CONFIG=/dev/null

venv=$("$root/tests/oracle-venv.sh")

tern=${TERN_SUBMIT:-}
if [ -z "$tern" ]; then
    (cd "$root" && CARGO_TARGET_DIR=$target cargo build --quiet --bin tern_submit)
    tern=$target/debug/tern_submit
fi

exec "$venv/bin/python" "$here/diff.py" \
    --tern "$tern" --cases "$here/cases" --allowlist "$here/allowlist.toml" "$@"
