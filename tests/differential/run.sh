#!/usr/bin/env bash
# Differential test of tern's ClassAd engine against HTCondor's Python
# bindings (the `classad` module of htcondor 24.0.24): installs the bindings
# into a virtual environment, builds tern_eval and the round-trip helper, and
# runs driver.py. Extra arguments go to driver.py (see its --help), e.g.
#   tests/differential/run.sh --seed 7 --count 20000 --report /tmp/diff.txt
# Environment: TERN_ORACLE_VENV (where the virtual environment lives, default
# target/oracle-venv; reused when it already has the right version),
# TERN_DIFF_SEED (the random seed), PYTHON (the interpreter that creates the
# environment, default python3; needs 3.11+).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/tests/differential
HTCONDOR_VERSION=24.0.24
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
VENV=${TERN_ORACLE_VENV:-$TARGET/oracle-venv}
PYTHON=${PYTHON:-python3}

have_oracle() {
    "$VENV/bin/python" - "$HTCONDOR_VERSION" 2>/dev/null <<'PY'
import importlib.metadata, sys
sys.exit(importlib.metadata.version("htcondor") != sys.argv[1] or sys.version_info < (3, 11))
PY
}

if ! have_oracle; then
    echo "differential: installing htcondor==$HTCONDOR_VERSION into $VENV"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "htcondor==$HTCONDOR_VERSION"
    have_oracle || { echo "differential: $VENV has no usable htcondor $HTCONDOR_VERSION (Python 3.11+ needed)" >&2; exit 2; }
fi

cd "$ROOT"
cargo build --release --quiet --bin tern_eval
# The helper is its own workspace; pin it to tern's dependency versions.
cp Cargo.lock "$HERE/roundtrip/Cargo.lock"
CARGO_TARGET_DIR=$TARGET cargo build --release --quiet --manifest-path "$HERE/roundtrip/Cargo.toml"

# formatTime() and friends use local time: pin the zone on both sides.
export TZ=UTC CONDOR_CONFIG=/dev/null
exec "$VENV/bin/python" "$HERE/driver.py" \
    --tern "$TARGET/release/tern_eval" \
    --roundtrip "$TARGET/release/tern_roundtrip" "$@"
