#!/usr/bin/env bash
# Makes the reference frames of tests/watch_q/cases.txt with the real
# condor_watch_q 24.0 (src/condor_scripts/condor_watch_q.in of v24.0.23)
# under the htcondor==24.0.24 wheel:
#
#   tests/watch_q/make_frames.sh PYTHON CONDOR_WATCH_Q_IN
#
# PYTHON is a python with the wheel installed (see tests/submit_diff/run.sh
# for making one). Each case leaves NAME.out (stdout), NAME.err (stderr)
# and NAME.code; times are masked as YYYY-MM-DD HH:MM:SS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python=$1
script=$(mktemp)
sed "1s|.*|#!$python|" "$2" > "$script"
chmod +x "$script"
export CONDOR_CONFIG=/dev/null
cd "$here"
grep -v '^#' cases.txt | while IFS=$'\t' read -r name cols lines args; do
    set +e
    # shellcheck disable=SC2086
    COLUMNS=$cols LINES=$lines HOME=/nonexistent "$script" $args </dev/null \
        >"$name.out" 2>"$name.err.raw"
    echo $? >"$name.code"
    set -e
    sed -i -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}/YYYY-MM-DD HH:MM:SS/g' "$name.out"
    sed -i "s|$here|\$DIR|g" "$name.out" "$name.err.raw"
    # The wheel's warning about a missing configuration is not the tool's.
    grep -v -e 'condor_config source' -e '_warnings.warn' "$name.err.raw" >"$name.err" || true
    rm "$name.err.raw"
done
rm "$script"
