#!/usr/bin/env bash
# One deterministic fuzzing run as a CTest test (issue 12): the same inputs, in the same order, with the
# same seed on every machine and every run, so the test cannot pass on one run and fail on the next.
#   1. Replay: every kept input, once each: the regression inputs (tests/data/fuzz/FORMAT: crashes,
#      overruns, timeouts, out-of-memory cases found before) and the kept corpus (tests/data/fuzz/corpus/FORMAT).
#   2. Mutation: RUNS inputs mutated from the seed corpus (fuzz_seeds) plus the kept corpus, with
#      -seed=1, starting from a fresh corpus folder each time (a corpus that grows in the build folder
#      between runs would make each run different).
# Long, randomly seeded exploration is scripts/fuzz.sh, which keeps what it finds under tests/data/fuzz/.
# A crash, leak, overrun, timeout or allocation over the limit fails the test; the input is left in
# WORK/artifacts (copy it into tests/data/fuzz/FORMAT to keep it).
# Exit 77 (skipped) when the fuzzer was not built (no clang with libFuzzer).
# Usage: run_fuzzer.sh FUZZER SEEDS_TOOL WORK FORMAT REGRESSION_DIR CORPUS_DIR RUNS
set -u
fuzzer=$1 seeds=$2 work=$3 format=$4 regression=$5 kept=$6 runs=$7
if [ ! -x "$fuzzer" ]; then
  echo "fuzz_$format: not built here (needs clang with libFuzzer); skipped"
  exit 77
fi
limits=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024)
run="$work/run-$format"
rm -rf "$run"
mkdir -p "$run/seeds" "$run/corpus" "$work/artifacts"

# 1. Replay, file by file (libFuzzer runs each file given by name once, without mutating).
mapfile -t inputs < <(find "$regression" "$kept" -maxdepth 1 -type f ! -name '*.md' ! -name '.*' 2>/dev/null | LC_ALL=C sort)
if [ "${#inputs[@]}" -gt 0 ]; then
  echo "fuzz_$format: replaying ${#inputs[@]} kept input(s)"
  "$fuzzer" "${limits[@]}" -artifact_prefix="$work/artifacts/$format-replay-" "${inputs[@]}" || exit 1
fi

# 2. Bounded mutation with a fixed seed from a fresh corpus.
"$seeds" "$run/seeds" || { echo "fuzz_$format: writing the seed corpus failed"; exit 1; }
cp "$run/seeds/$format/"* "$run/corpus/"
[ -d "$kept" ] && find "$kept" -maxdepth 1 -type f -exec cp {} "$run/corpus/" \;
echo "fuzz_$format: $runs mutations, seed 1"
exec "$fuzzer" "${limits[@]}" -runs="$runs" -seed=1 -artifact_prefix="$work/artifacts/$format-" -print_final_stats=1 "$run/corpus"
