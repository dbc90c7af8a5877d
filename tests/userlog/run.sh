#!/usr/bin/env bash
# Checks tern's job event logs with HTCondor's own reader,
# htcondor.JobEventLog (htcondor 24.0.24): check.py has tern write every
# event tern produces (through tern_userlog_write.rs, compiled here against
# the tern library) and runs the real tern_submit (and tern_rm, tern_hold,
# tern_release when they are built) with `log =`, then compares every field
# JobEventLog reports with what was written. Prints `N passed, M failed`;
# exits non-zero on any failure. Arguments go to check.py (see its --help):
#   tests/userlog/run.sh [-v] [--zones UTC,Asia/Kolkata]
# Environment: TERN_ORACLE_VENV and PYTHON (the virtual environment with
# htcondor, see tests/oracle-venv.sh), TERN_USERLOG_PROFILE (cargo
# profile, default dev).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/tests/userlog
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
PROFILE=${TERN_USERLOG_PROFILE:-dev}
OUT=$TARGET/$([ "$PROFILE" = dev ] && echo debug || echo "$PROFILE")

VENV=$("$ROOT/tests/oracle-venv.sh")

cd "$ROOT"
# The tools the check runs: tern_submit, and the others once they exist.
BINS=(--bin tern_submit)
for tool in tern_rm tern_hold tern_release; do
    [ -f "src/bin/$tool.rs" ] && BINS+=(--bin "$tool")
done
cargo build --profile "$PROFILE" --quiet "${BINS[@]}" \
    --message-format=json-render-diagnostics >"$TARGET/userlog-build.json"
# The tern library and serde_json, for the helper to link against.
mapfile -t LIBS < <("$VENV/bin/python" - "$TARGET/userlog-build.json" <<'PY'
import json, sys
found = {}
for line in open(sys.argv[1]):
    msg = json.loads(line)
    if msg.get("reason") == "compiler-artifact" and "lib" in msg["target"]["kind"] \
            and msg["target"]["name"] in ("tern", "serde_json"):
        found[msg["target"]["name"]] = next(f for f in msg["filenames"] if f.endswith(".rlib"))
print(found["tern"])
print(found["serde_json"])
PY
)
mkdir -p "$TARGET/userlog"
rustc --edition 2024 --crate-name tern_userlog_write \
    -L "dependency=$OUT/deps" --extern "tern=${LIBS[0]}" --extern "serde_json=${LIBS[1]}" \
    -o "$TARGET/userlog/tern_userlog_write" "$HERE/tern_userlog_write.rs"

# The log holds local time: check.py runs in UTC and in a zone with
# daylight saving time.
export CONDOR_CONFIG=/dev/null
exec "$VENV/bin/python" "$HERE/check.py" \
    --writer "$TARGET/userlog/tern_userlog_write" --bin-dir "$OUT" "$@"
