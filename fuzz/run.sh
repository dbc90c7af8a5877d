#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 20) on its corpus; a crash
# fails the run and leaves the input in fuzz/artifacts/<target>/. cargo-fuzz
# needs nightly -Z flags, which stable accepts with RUSTC_BOOTSTRAP=1.
# Usage: fuzz/run.sh [SECONDS]
set -euo pipefail
export RUSTC_BOOTSTRAP=1
cd "$(dirname "$0")"
seconds=${1:-20}
cargo fuzz build -O
for t in $(cargo fuzz list); do
    echo "fuzz: $t for $seconds s" >&2
    # The kept corpus is read, not grown: new finds go to a scratch copy.
    scratch=$(mktemp -d)
    cargo fuzz run -O "$t" "$scratch" "corpus/$t" -- \
        -max_total_time="$seconds" -max_len=4096 -rss_limit_mb=2048 -print_final_stats=1 \
        2> >(tail -n 5 >&2)
    rm -rf "$scratch"
done
