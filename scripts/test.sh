#!/usr/bin/env bash
# README command 2: set up (Debian packages), build (Release, with tests) and run every test through CTest.
# WFS_SANITIZE=1 builds and tests with AddressSanitizer + UndefinedBehaviorSanitizer instead.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
preset=release
[ "${WFS_SANITIZE:-0}" = "1" ] && preset=asan
cmake --preset "$preset" -DWFS_BUILD_TESTS=ON >/dev/null
cmake --build --preset "$preset"
ctest --preset "$preset" --timeout 900
