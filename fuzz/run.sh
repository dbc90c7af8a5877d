#!/usr/bin/env bash
# Runs every fuzz target (or those named in TARGETS) for SECONDS (default
# 20) on its corpus; a crash fails the run, after the other targets have
# had theirs, and leaves the input in fuzz/artifacts/<target>/. cargo-fuzz
# needs nightly -Z flags, which stable accepts with RUSTC_BOOTSTRAP=1.
#
# Each target's corpus is kept as corpus/<target>.tar.gz (thousands of small
# files packed into one); it is unpacked into a scratch directory for the run.
# With UPDATE=1 the inputs a run found are merged in, the corpus minimised
# (cargo fuzz cmin) and packed again, for a commit after a long run.
#
# Usage: fuzz/run.sh [SECONDS]      UPDATE=1 TARGETS="submit config" fuzz/run.sh 1800
set -euo pipefail
cd "$(dirname "$0")"
export RUSTC_BOOTSTRAP=1
seconds=${1:-20}
cargo fuzz build -O
failed=()
for t in ${TARGETS:-$(cargo fuzz list)}; do
    echo "fuzz: $t for $seconds s" >&2
    work=$(mktemp -d)
    mkdir "$work/$t" "$work/new"
    if [ -f "corpus/$t.tar.gz" ]; then
        tar -C "$work" -xzf "corpus/$t.tar.gz"
    fi
    if ! cargo fuzz run -O "$t" "$work/new" "$work/$t" -- \
        -max_total_time="$seconds" -max_len=4096 -rss_limit_mb=2048 -print_final_stats=1 \
        2> >(tail -n 12 >&2); then
        failed+=("$t")
    elif [ -n "${UPDATE:-}" ]; then
        cp -n "$work/new"/* "$work/$t"/ 2>/dev/null || true
        cargo fuzz cmin -O "$t" "$work/$t" -- -max_len=4096 -rss_limit_mb=2048 >/dev/null 2>&1
        tar -C "$work" -czf "corpus/$t.tar.gz.tmp" "$t"
        mv -f "corpus/$t.tar.gz.tmp" "corpus/$t.tar.gz"
    fi
    rm -rf "$work"
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: failed: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
    exit 1
fi
