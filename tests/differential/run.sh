#!/usr/bin/env bash
# Differential test of tern's ClassAd engine against HTCondor's Python
# bindings (the `classad` module of htcondor 24.0.24): installs the bindings
# into a virtual environment, builds tern_eval and the round-trip helper
# (tern_roundtrip.rs), and runs driver.py. Extra arguments go to driver.py (see its --help), e.g.
#   tests/differential/run.sh --seed 7 --count 20000 --report /tmp/diff.txt
# Environment: TERN_ORACLE_VENV and PYTHON (the virtual environment, see
# tests/oracle-venv.sh), TERN_DIFF_SEED (the random seed), TERN_DIFF_PROFILE
# (cargo profile of the tern build: release, or dev to share a CI's test
# build; default release).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/tests/differential
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
PROFILE=${TERN_DIFF_PROFILE:-release}
OUT=$TARGET/$([ "$PROFILE" = dev ] && echo debug || echo "$PROFILE")

VENV=$("$ROOT/tests/oracle-venv.sh")

cd "$ROOT"
# Build tern_eval, noting where cargo put the tern library ...
cargo build --profile "$PROFILE" --quiet --bin tern_eval --message-format=json-render-diagnostics >"$TARGET/differential-build.json"
RLIB=$("$VENV/bin/python" - "$TARGET/differential-build.json" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    msg = json.loads(line)
    if msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == "tern" \
            and "lib" in msg["target"]["kind"]:
        print(next(f for f in msg["filenames"] if f.endswith(".rlib")))
PY
)
# ... and compile the round-trip helper, a single file, against it.
mkdir -p "$TARGET/differential"
rustc --edition 2024 -C opt-level=1 --crate-name tern_roundtrip \
    -L "dependency=$OUT/deps" --extern "tern=$RLIB" \
    -o "$TARGET/differential/tern_roundtrip" "$HERE/tern_roundtrip.rs"

# formatTime() and friends use local time: pin the zone on both sides.
export TZ=UTC CONDOR_CONFIG=/dev/null
exec "$VENV/bin/python" "$HERE/driver.py" \
    --tern "$OUT/tern_eval" \
    --roundtrip "$TARGET/differential/tern_roundtrip" "$@"
