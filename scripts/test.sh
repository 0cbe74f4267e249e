#!/usr/bin/env bash
# README command 2: set up (Debian packages), check the mutation list (scripts/mutation-check.sh --check), build
# (Release, with tests) and run every test through CTest.
# WFS_SANITIZE=1 builds and tests with AddressSanitizer + UndefinedBehaviorSanitizer instead.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Every mutation of scripts/mutation-check.sh still applies to the sources (seconds, no build): a refactor
# that leaves one behind fails here, before the build.
bash scripts/mutation-check.sh --check
preset=release
[ "${WFS_SANITIZE:-0}" = "1" ] && preset=asan
cmake --preset "$preset" -DWFS_BUILD_TESTS=ON >/dev/null
cmake --build --preset "$preset"
ctest --preset "$preset" --timeout 900
