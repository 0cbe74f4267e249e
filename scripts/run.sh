#!/usr/bin/env bash
# README command 1: set up (Debian packages), build (Release) and run the main job: the desktop
# program on its demo when there is a display and the program exists, else the headless demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake --preset release -DWFS_BUILD_TESTS=OFF >/dev/null
cmake --build --preset release
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x build/bin/wavefront-studio ]; then
  exec build/bin/wavefront-studio --demo "$@"
fi
exec build/bin/wavefront-cli reconstruct --preset demo "$@"
