#!/usr/bin/env bash
# Times tern's ClassAd engine and HTCondor's (through its Python bindings) on
# the same ads in one run, and prints both figures and their ratio for each
# operation: parsing a 60-attribute job ad (old and new syntax), evaluating the
# default job Requirements against a machine in a match, unparsing the job ad.
#
# Usage: bench/classad_vs_htcondor.sh [criterion options...]
#   e.g. bench/classad_vs_htcondor.sh --measurement-time 10
# Environment:
#   HTCONDOR_PYTHON  a python with htcondor==24.0.24 installed; otherwise the
#                    first of /tmp/oracle, target/oracle-venv, target/htcondor-venv
#                    that has it, else target/htcondor-venv is created with pip.
#   CARGO_TARGET_DIR as for cargo (criterion's results are read from it).
#
# tern's figures are criterion's median estimates (benches/classad.rs);
# HTCondor's are the median of 7 timeit loops (bench/classad_htcondor.py).
# The ratio is HTCondor's time over tern's: above 1 means tern is faster.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
target_dir=${CARGO_TARGET_DIR:-$root/target}
want_version=24.0.24
export CONDOR_CONFIG=/dev/null

has_htcondor() {
    [ -x "$1" ] && "$1" - "$want_version" >/dev/null 2>&1 <<'EOF'
import sys, warnings
warnings.simplefilter("ignore")
import htcondor
sys.exit(0 if htcondor.__version__ == sys.argv[1] else 1)
EOF
}

python=""
for candidate in "${HTCONDOR_PYTHON:-}" /tmp/oracle/bin/python \
    "$target_dir/oracle-venv/bin/python" "$target_dir/htcondor-venv/bin/python"; do
    if [ -n "$candidate" ] && has_htcondor "$candidate"; then
        python=$candidate
        break
    fi
done
if [ -z "$python" ]; then
    echo "classad_vs_htcondor: creating $target_dir/htcondor-venv with htcondor==$want_version" >&2
    python3 -m venv "$target_dir/htcondor-venv"
    "$target_dir/htcondor-venv/bin/pip" install --quiet "htcondor==$want_version"
    python=$target_dir/htcondor-venv/bin/python
fi

stamp=$(mktemp)
trap 'rm -f "$stamp"' EXIT

echo "== tern: cargo bench --bench classad $*" >&2
cargo bench --bench classad -- "$@" >&2

echo "== HTCondor $want_version: $python bench/classad_htcondor.py" >&2
htcondor_json=$("$python" bench/classad_htcondor.py)

"$python" - "$target_dir/criterion" "$stamp" "$htcondor_json" <<'EOF'
import json, os, sys

criterion_dir, stamp, htcondor = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
fresh_after = os.path.getmtime(stamp)

def tern(bench_id):
    path = os.path.join(criterion_dir, *bench_id.split("/"), "new", "estimates.json")
    if not os.path.exists(path) or os.path.getmtime(path) < fresh_after:
        return None  # filtered out of this run, or never run
    with open(path) as f:
        return json.load(f)["median"]["point_estimate"]

def show(ns):
    if ns is None:
        return "-"
    return f"{ns / 1000:.2f} us" if ns >= 1000 else f"{ns:.0f} ns"

rows = [
    ("parse/old_syntax_job_ad", "parse/old_syntax_job_ad"),
    ("parse/new_syntax_job_ad", "parse/new_syntax_job_ad"),
    ("match/requirements_context_reused", "match/requirements_context_reused"),
    ("match/requirements_with_context_construction",
     "match/requirements_with_context_construction"),
    ("unparse/new_syntax_job_ad", "unparse/new_syntax_job_ad"),
    ("unparse/old_syntax_job_ad_unsorted", "unparse/old_syntax_job_ad_unsorted"),
    ("unparse/old_syntax_job_ad_sorted", None),
    ("unparse/json_job_ad", "unparse/json_job_ad"),
]
print(f"{'operation':46} {'tern':>11} {'HTCondor':>11} {'HTCondor/tern':>14}")
for tern_id, htc_id in rows:
    t = tern(tern_id)
    h = htcondor[htc_id]["median_ns"] if htc_id else None
    ratio = f"{h / t:.1f}x" if t and h else "-"
    print(f"{tern_id:46} {show(t):>11} {show(h):>11} {ratio:>14}")
print()
print(f"HTCondor Python call overhead (eval of a literal): "
      f"{show(htcondor['match/call_overhead']['median_ns'])}")
print("HTCondor APIs timed:")
for key, v in htcondor.items():
    if not key.startswith("_"):
        print(f"  {key:46} {v['api']}")
print(htcondor["_version"]["api"])
EOF
