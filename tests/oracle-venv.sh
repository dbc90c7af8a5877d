#!/usr/bin/env bash
# Prints the path of a Python virtual environment with HTCondor 24.0.24's
# bindings (modules `classad` and `htcondor`), the oracle of the
# differential suites and of the tests that read event logs with
# htcondor.JobEventLog; makes it first when it is missing or holds another
# version. Every script that needs the oracle gets it here, and .ci/run
# makes it before `cargo test` so the process tests use it too.
#
# Which one: $TERN_ORACLE_VENV; else /tmp/oracle when it already holds the
# bindings (a developer's shared one); else oracle-venv under the cargo
# target directory. PYTHON names the interpreter that creates it (default
# python3, which must be 3.11 or later).
#
# Usage: venv=$(tests/oracle-venv.sh)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=24.0.24

has_bindings() {
    "$1/bin/python" - "$version" 2>/dev/null <<'PY'
import importlib.metadata, sys
sys.exit(importlib.metadata.version("htcondor") != sys.argv[1] or sys.version_info < (3, 11))
PY
}

venv=${TERN_ORACLE_VENV:-}
if [ -z "$venv" ]; then
    venv=${CARGO_TARGET_DIR:-$root/target}/oracle-venv
    if ! has_bindings "$venv" && has_bindings /tmp/oracle; then venv=/tmp/oracle; fi
fi
if ! has_bindings "$venv"; then
    echo "oracle: installing htcondor==$version into $venv" >&2
    rm -rf "$venv"
    "${PYTHON:-python3}" -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "htcondor==$version" >&2
    has_bindings "$venv" || {
        echo "oracle: $venv has no usable htcondor $version (Python 3.11+ needed)" >&2
        exit 2
    }
fi
echo "$venv"
