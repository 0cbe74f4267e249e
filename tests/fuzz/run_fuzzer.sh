#!/usr/bin/env bash
# One bounded fuzzing run as a CTest test: the seed corpus (fuzz_seeds) plus the kept regression
# inputs (tests/data/fuzz/FORMAT), then SECONDS of libFuzzer. A crash, leak, overrun or timeout fails
# the test and leaves the input in WORK/artifacts; copy it into tests/data/fuzz/FORMAT to keep it.
# Exit 77 (skipped) when the fuzzer was not built (no clang with libFuzzer).
# Usage: run_fuzzer.sh FUZZER SEEDS_TOOL WORK FORMAT REGRESSION_DIR SECONDS
set -u
fuzzer=$1 seeds=$2 work=$3 format=$4 regression=$5 seconds=$6
if [ ! -x "$fuzzer" ]; then
  echo "fuzz_$format: not built here (needs clang with libFuzzer); skipped"
  exit 77
fi
# Seeds in a folder of this format's own, so that fuzz tests run in parallel (ctest -j) do not collide.
mkdir -p "$work/seeds-$format" "$work/corpus-$format" "$work/artifacts"
"$seeds" "$work/seeds-$format" || { echo "fuzz_$format: writing the seed corpus failed"; exit 1; }
cp "$work/seeds-$format/$format/"* "$work/corpus-$format/"
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -seed=1 \
  -artifact_prefix="$work/artifacts/$format-" -print_final_stats=1 "$work/corpus-$format" "$regression"
