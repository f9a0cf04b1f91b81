#!/usr/bin/env bash
# Cross-compiles the CPU-only tree (no GStreamer, no CUDA) for aarch64 into build-aarch64/, runs the
# runtime, op, fusion and model tests under qemu-aarch64-static, and checks that the arm64
# `edgefuse detect` finds the same objects as the x86 build (cross-compile/compare-detect.sh).
# Usage: cross-compile/build-aarch64.sh [--no-tests]
# Environment: EDGEFUSE_SYSROOT (default ~/.cache/edgefuse/sysroot-arm64), EDGEFUSE_BOARD (generic),
#   EDGEFUSE_ASSETS_DIR (default ../shared), EDGEFUSE_X86_BUILD_DIR (x86 build with bin edgefuse; default build/),
#   EDGEFUSE_AARCH64_TESTS (ctest regex of the suites to run), JOBS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
sysroot=${EDGEFUSE_SYSROOT:-$HOME/.cache/edgefuse/sysroot-arm64}
assets=${EDGEFUSE_ASSETS_DIR:-$repo/../shared}
build=${EDGEFUSE_AARCH64_BUILD_DIR:-$repo/build-aarch64}
jobs=${JOBS:-2}
run_tests=1
[ "${1:-}" = "--no-tests" ] && run_tests=0
# The CI subset: runtime + ops (NEON/portable kernels), fusion, models (real ONNX models).
tests=${EDGEFUSE_AARCH64_TESTS:-^(test_runtime|test_ops|test_fusion|test_models)$}
targets=(edgefuse test_runtime test_ops test_fusion test_models)

cross-compile/make-sysroot.sh "$sysroot"
# GStreamer AUTO, not OFF: the sysroot has none, and AUTO runs find_package(PkgConfig) at the top
# level, which tests/mqtt relies on.
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$repo/cross-compile/aarch64-linux-gnu.cmake" \
  -DEDGEFUSE_SYSROOT="$sysroot" -DEDGEFUSE_BOARD="${EDGEFUSE_BOARD:-generic}" \
  -DEDGEFUSE_WITH_GSTREAMER=AUTO -DEDGEFUSE_WITH_CUDA=OFF -DEDGEFUSE_BUILD_BENCH=OFF \
  -DEDGEFUSE_WARNINGS_AS_ERRORS=ON -DEDGEFUSE_ASSETS_DIR="$assets" >/dev/null
cmake --build "$build" -j "$jobs" --target "${targets[@]}"
file "$build/edgefuse"
[ "$run_tests" = 1 ] || exit 0

# ctest runs each binary through CMAKE_CROSSCOMPILING_EMULATOR (qemu-aarch64-static -L sysroot).
EDGEFUSE_ASSETS_DIR="$assets" ctest --test-dir "$build" --output-on-failure -j "$jobs" -R "$tests"
cross-compile/compare-detect.sh "${EDGEFUSE_X86_BUILD_DIR:-$repo/build}/edgefuse" "$build/edgefuse" "$sysroot" "$assets"
