#!/usr/bin/env bash
# Differential test of tern_transform_ads against HTCondor 24.0.24's own
# transform code (xform_utils.cpp), as the htcondor==24.0.24 Python wheel
# ships it in libcondor_utils.
#
#   tests/transform_diff/run.sh [-v] [CASE ...]
#
# The bindings have no transform API, so shim.cpp (compiled here with g++
# against the wheel's libraries, no HTCondor headers needed) drives
# TransformClassAd the way condor_transform_ads does. Each case is
# cases/NAME.rules applied to cases/ads.new (or cases/NAME.ads, one ad a
# line, when there is one) by both, or cases/NAME.routes
# (old-syntax routes) converted as -convertoldroutes converts them; the
# outputs (split at blank lines, each part's lines sorted) must be equal, or
# both runs must fail. A case listed in allowlist.txt is a known, documented difference.
# The virtualenv with the wheel is tests/oracle-venv.sh's. Prints one line
# per case and "N passed, M failed"; exits 1 on failures.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
export CONDOR_CONFIG=/dev/null
verbose=0
if [ "${1:-}" = "-v" ]; then verbose=1; shift; fi

venv=$("$root/tests/oracle-venv.sh")
libs=$(echo "$venv"/lib/python*/site-packages/htcondor.libs)
utils=$(cd "$libs" && ls libcondor_utils_*.so)
classad=$(cd "$libs" && ls libclassad-*.so.*)

shim=$target/transform-diff/shim
if [ ! -x "$shim" ] || [ "$here/shim.cpp" -nt "$shim" ]; then
    mkdir -p "$(dirname "$shim")"
    g++ -O1 -o "$shim" "$here/shim.cpp" -L"$libs" -l:"$utils" -l:"$classad" -Wl,-rpath,"$libs"
fi

tern=${TERN_TRANSFORM_ADS:-}
if [ -z "$tern" ]; then
    (cd "$root" && CARGO_TARGET_DIR=$target cargo build --quiet --bin tern_transform_ads)
    tern=$target/debug/tern_transform_ads
fi

# The ads of a run, each ad's lines sorted, ads in order.
normalize() {
    python3 -c '
import sys
ads = [sorted(a.splitlines()) for a in sys.stdin.read().split("\n\n") if a.strip()]
for a in ads:
    print("\n".join(a)); print()'
}

allowed() {
    grep -q "^$1 " "$here/allowlist.txt" 2>/dev/null
}

cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
    for f in "$here"/cases/*.rules "$here"/cases/*.routes; do cases+=("$(basename "$f")"); done
fi
pass=0
fail=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here"/cases/* "$work"/
cd "$work"
for c in "${cases[@]}"; do
    set +e
    case $c in
    *.routes)
        # Old-syntax routes: the first line is JOB_ROUTER_DEFAULTS, the rest
        # JOB_ROUTER_ENTRIES; compared as -convertoldroutes prints them.
        "$shim" -convert "$c" > "$c.htcondor" 2> "$c.htcondor.err"
        hc=$?
        { echo "JOB_ROUTER_DEFAULTS = $(head -n 1 "$c")"
          echo "JOB_ROUTER_ENTRIES @=end"; tail -n +2 "$c"; echo "@end"; } > "$c.config"
        TERN_CONFIG="$c.config" "$tern" -convertoldroutes > "$c.tern" 2> "$c.tern.err"
        tc=$?
        ;;
    *)
        c=${c%.rules}
        ads=ads.new
        if [ -f "$c.ads" ]; then ads=$c.ads; fi
        "$shim" "$c.rules" "$ads" > "$c.htcondor" 2> "$c.htcondor.err"
        hc=$?
        TERN_CONFIG=/dev/null "$tern" -rules "$c.rules" -in:new "$ads" > "$c.tern" 2> "$c.tern.err"
        tc=$?
        ;;
    esac
    set -e
    if [ $hc -ne 0 ] && [ $tc -ne 0 ]; then
        verdict="ok (both refuse)"
    elif [ $hc -ne 0 ] || [ $tc -ne 0 ]; then
        verdict="DIFFERS (HTCondor exit $hc, tern exit $tc)"
    elif diff <(normalize < "$c.htcondor") <(normalize < "$c.tern") > "$c.diff"; then
        verdict="ok"
    else
        verdict="DIFFERS"
    fi
    if [ "${verdict#ok}" != "$verdict" ]; then
        pass=$((pass + 1))
    elif allowed "$c"; then
        verdict="allowed: $(grep "^$c " "$here/allowlist.txt" | cut -d' ' -f2-)"
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
    fi
    echo "$c: $verdict"
    if [ $verbose -eq 1 ] && [ "${verdict#ok}" = "$verdict" ]; then
        cat "$c.diff" 2>/dev/null || true
        echo "--- HTCondor stderr:"; cat "$c.htcondor.err"
        echo "--- tern stderr:"; cat "$c.tern.err"
    fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
