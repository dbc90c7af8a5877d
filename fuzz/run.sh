#!/usr/bin/env bash
# Runs every fuzz target (or those named in TARGETS) for SECONDS (default
# 20) on its corpus; a crash fails the run, after the other targets have
# had theirs, and leaves the input in fuzz/artifacts/<target>/.
#
# Two builds:
# - the default, for the long runs: cargo-fuzz's release build with
#   AddressSanitizer and with debug assertions and overflow checks (-a), as
#   tests build tern. cargo-fuzz needs nightly -Z flags, which stable
#   accepts with RUSTC_BOOTSTRAP=1.
# - SMOKE=1, what CI runs: a debug build with libFuzzer's coverage
#   instrumentation and no sanitizer, made by cargo itself (no cargo-fuzz,
#   no -Z flag), about 2 minutes where the release build takes 11 on two
#   cores. A debug build runs a whole kept corpus too slowly for a short
#   run, so each target starts from SAMPLE (default 300) inputs of its
#   corpus picked at random, and a crash names the seed of that pick.
#
# Each target's corpus is kept as corpus/<target>.tar.gz (thousands of small
# files packed into one); it is unpacked into a scratch directory for the run.
# With UPDATE=1 the inputs a run found are merged in, the corpus minimised
# (cargo fuzz cmin) and packed again, for a commit after a long run.
#
# Usage: fuzz/run.sh [SECONDS]      UPDATE=1 TARGETS="submit config" fuzz/run.sh 1800
#                                   SMOKE=1 fuzz/run.sh 10      BUILD_ONLY=1 SMOKE=1 fuzz/run.sh
set -euo pipefail
cd "$(dirname "$0")"
export RUSTC_BOOTSTRAP=1
seconds=${1:-20}
targets=${TARGETS:-$(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^tern-fuzz$')}
host=$(rustc -vV | sed -n 's/^host: //p')
if [ -n "${SMOKE:-}" ]; then
    [ -z "${UPDATE:-}" ] || { echo "fuzz: UPDATE=1 needs the release build, not SMOKE=1" >&2; exit 2; }
    # The flags cargo-fuzz passes for libFuzzer, without the sanitizer;
    # --target keeps build scripts uninstrumented, as cargo-fuzz does.
    RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing" \
        cargo build --quiet --target "$host" --bins
    sample=${SAMPLE:-300}
    seed=${SAMPLE_SEED:-$RANDOM}
    [ -n "${BUILD_ONLY:-}" ] ||
        echo "fuzz: smoke build; each target starts from $sample inputs of its corpus (SAMPLE_SEED=$seed)" >&2
else
    cargo fuzz build -O -a
fi
# BUILD_ONLY=1: the build alone (CI makes it beside the tests).
[ -z "${BUILD_ONLY:-}" ] || exit 0
failed=()
for t in $targets; do
    echo "fuzz: $t for $seconds s" >&2
    work=$(mktemp -d)
    mkdir "$work/$t" "$work/new"
    if [ -f "corpus/$t.tar.gz" ]; then
        tar -C "$work" -xzf "corpus/$t.tar.gz"
    fi
    flags=(-max_total_time="$seconds" -max_len=4096 -rss_limit_mb=2048 -print_final_stats=1)
    if [ -n "${SMOKE:-}" ]; then
        mkdir "$work/sample" "artifacts/$t" -p
        find "$work/$t" -type f | sort | shuf -n "$sample" --random-source=<(yes "$seed") |
            xargs -r cp -t "$work/sample"
        run=("target/$host/debug/$t" -artifact_prefix="artifacts/$t/" "${flags[@]}" "$work/new" "$work/sample")
    else
        run=(cargo fuzz run -O -a "$t" "$work/new" "$work/$t" -- "${flags[@]}")
    fi
    if ! "${run[@]}" 2> >(tail -n 12 >&2); then
        failed+=("$t")
    elif [ -n "${UPDATE:-}" ]; then
        cp -n "$work/new"/* "$work/$t"/ 2>/dev/null || true
        cargo fuzz cmin -O -a "$t" "$work/$t" -- -max_len=4096 -rss_limit_mb=2048 >/dev/null 2>&1
        tar -C "$work" -czf "corpus/$t.tar.gz.tmp" "$t"
        mv -f "corpus/$t.tar.gz.tmp" "corpus/$t.tar.gz"
    fi
    rm -rf "$work"
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: failed: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
    exit 1
fi
