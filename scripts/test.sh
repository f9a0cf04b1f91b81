#!/usr/bin/env bash
# Builds (if needed) and runs the test suite. Extra arguments go to ctest, e.g. `-L cpu`.
#
# Usage: scripts/test.sh [ctest arguments...]
# Environment: EDGEFUSE_BUILD_DIR (default build/), EDGEFUSE_ASSETS_DIR (default: the folder
# the build was configured with), EDGEFUSE_REQUIRE_ASSETS=1 to fail instead of skip when absent.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build_dir="${EDGEFUSE_BUILD_DIR:-$repo/build}"
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake -S "$repo" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$build_dir" -j "$(nproc)"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" "$@"
