#!/usr/bin/env bash
# Exploratory fuzzing (issue 12): every reader and the session parser for SECONDS each, with a random
# seed, starting from the seed corpus, the kept corpus and the regression inputs. Unlike the fuzz_*
# tests of CI (a fixed seed and a fixed number of mutations, scripts/test.sh), runs here differ by
# design; what they find is kept in the source tree:
#   - inputs that crash, overrun, leak, time out or allocate too much: tests/data/fuzz/FORMAT/
#     (replayed by every CI run and by tst_imageio from then on; fix the reader, then commit them);
#   - inputs that reach new code: merged (libFuzzer -merge=1, so only those adding coverage) into
#     tests/data/fuzz/corpus/FORMAT/, which CI replays and mutates from.
# Needs a build with the fuzz targets (clang with libFuzzer): cmake --build --preset release.
# Usage: scripts/fuzz.sh [SECONDS] [FORMAT...]   (default 300 s; tiff png fits session)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
shift || true
formats=("$@")
[ ${#formats[@]} -eq 0 ] && formats=(tiff png fits session)
build=${WFS_BUILD_DIR:-build}
work=$(mktemp -d "${TMPDIR:-/tmp}/wfs-fuzz-XXXXXX")
trap 'rm -rf "$work"' EXIT
found=0
for format in "${formats[@]}"; do
  fuzzer="$build/fuzz/fuzz_$format"
  if [ ! -x "$fuzzer" ]; then
    echo "fuzz.sh: $fuzzer not built (needs clang with libFuzzer); skipping $format"
    continue
  fi
  regression="tests/data/fuzz/$format" kept="tests/data/fuzz/corpus/$format"
  mkdir -p "$regression" "$kept" "$work/$format/corpus" "$work/$format/seeds"
  if [ "$format" != session ]; then
    "$build/bin/fuzz_seeds" "$work/$format/seeds" >/dev/null
    cp "$work/$format/seeds/$format/"* "$work/$format/corpus/"
  fi
  find "$kept" "$regression" -maxdepth 1 -type f ! -name '.*' ! -name '*.md' -exec cp {} "$work/$format/corpus/" \;
  before=$(find "$regression" -maxdepth 1 -type f ! -name '.*' | wc -l)
  echo "fuzz.sh: $format for $seconds s (random seed)"
  # -fork keeps going after a finding, so one run can find several; each lands in $regression.
  "$fuzzer" -max_total_time="$seconds" -seed=0 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -artifact_prefix="$regression/" "$work/$format/corpus" 2>"$work/$format.log" || true
  tail -n 3 "$work/$format.log"
  after=$(find "$regression" -maxdepth 1 -type f ! -name '.*' | wc -l)
  if [ "$after" -gt "$before" ]; then
    echo "fuzz.sh: $format: $((after - before)) new finding(s) in $regression:"
    find "$regression" -maxdepth 1 -type f -newer "$work/$format.log" -o -maxdepth 1 -type f -cnewer "$work/$format/seeds" | sort -u
    found=1
  fi
  # Keep only the inputs that add coverage to the kept corpus.
  "$fuzzer" -merge=1 "$kept" "$work/$format/corpus" >/dev/null 2>&1 || true
done
[ "$found" -eq 0 ] && echo "fuzz.sh: no new findings" || echo "fuzz.sh: findings kept; fix them and commit them with the fix"
exit "$found"
