#!/usr/bin/env bash
# README command 2: set up (Debian packages), check the mutation list (scripts/mutation-check.sh --check), the include
# floors (scripts/check-layers.sh) and the formatting (scripts/check-format.sh), build
# (Release, with tests), run every test through CTest, then the whole mutation run (scripts/mutation-check.sh: every
# listed bug applied alone to a copy of the tree, its tests rebuilt and run), so that a mutation no test catches any
# more fails the build as a failing test does.
# WFS_SANITIZE=1 builds and tests with AddressSanitizer + UndefinedBehaviorSanitizer instead.
# WFS_MUTATIONS=check runs only the mutation list's --check (seconds), not the whole run (a local run in a hurry;
# CI runs the whole).
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache compiles paths relative to the tree, so the mutation run's copy (build-mutation/src, inside the tree) reuses
# this build's objects wherever the clone lies.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
bash scripts/setup.sh
# Every mutation of scripts/mutation-check.sh still applies to the sources (seconds, no build): a refactor
# that leaves one behind fails here, before the build.
bash scripts/mutation-check.sh --check
# No include runs up a floor (docs/architecture.md; seconds, no build).
bash scripts/check-layers.sh
# Every C++ source is formatted as .clang-format says (seconds, no build); each file that drifts is named with its fix.
bash scripts/check-format.sh
preset=release
[ "${WFS_SANITIZE:-0}" = "1" ] && preset=asan
cmake --preset "$preset" -DWFS_BUILD_TESTS=ON >/dev/null
# The build prints no warning (third-party headers are included as system headers; the few false positives of
# GCC 12's own headers are worked around where they arise), so that a new one is seen: any fails the run here.
build_log="$(mktemp)"
cmake --build --preset "$preset" 2>&1 | tee "$build_log"
if grep -E ": warning:|warning #[0-9]" "$build_log" >/dev/null; then
  echo "test.sh: the build printed warnings:" >&2
  grep -E ": warning:|warning #[0-9]" "$build_log" | sort | uniq -c >&2
  rm -f "$build_log"
  exit 1
fi
rm -f "$build_log"
ctest --preset "$preset" --timeout 900
# The whole mutation run last: it needs a build of its own (build-mutation/, kept between runs, its objects from
# ccache) and the suite above passing, which is why it does not run the mutations' tests unmutated again. Its build and test jobs: one per core unless WFS_MUTATION_JOBS says otherwise.
if [ "${WFS_MUTATIONS:-all}" != check ]; then
  WFS_MUTATION_JOBS="${WFS_MUTATION_JOBS:-$(nproc)}" bash scripts/mutation-check.sh --suite-passed
fi
