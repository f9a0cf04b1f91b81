#!/usr/bin/env bash
# The GPU check, in two halves, for a session lent a GPU machine (which has the NVIDIA driver,
# nvcc and CMake but none of Debian's -dev packages, so it cannot configure this project):
#
#   scripts/gpu-check.sh bundle   here: builds test_cuda and bench_cuda (runtime libraries only:
#                                 no OpenCV or GStreamer) and copies them, the shared libraries they
#                                 load (not glibc, not the driver) and the models into build-gpu-bundle/
#   scripts/gpu-check.sh run      on the GPU machine, from the repository root with build-gpu-bundle
#                                 carried: runs the cuda tests and the GPU benchmark and writes
#                                 nvidia-smi.txt, test_cuda.log, bench_cuda.md and summary.md under
#                                 $OUT (default ./gpu-check-out). Exits non-zero if a test failed.
#
# EDGEFUSE_BUILD_DIR (default build) is the build tree `bundle` uses; EDGEFUSE_ASSETS_DIR (default
# ../shared) is where it finds the models.
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=build-gpu-bundle

make_bundle() {
  local build=${EDGEFUSE_BUILD_DIR:-build}
  local assets=${EDGEFUSE_ASSETS_DIR:-../shared}
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEDGEFUSE_WITH_CUDA=ON >/dev/null
  cmake --build "$build" --target test_cuda bench_cuda
  rm -rf "$bundle"
  mkdir -p "$bundle/bin" "$bundle/lib" "$bundle/assets/models"
  cp "$build/tests/cuda/test_cuda" "$build/bench/bench_cuda" "$bundle/bin/"
  # Every library the binaries load except glibc's own and the loader; libstdc++ goes along in
  # case the GPU machine's is older than the compiler's.
  ldd "$bundle"/bin/* | awk '$3 ~ /^\// {print $3}' | sort -u |
    grep -Ev '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' | xargs -r -I{} cp -L {} "$bundle/lib/"
  cp "$assets"/models/yolox_nano.onnx "$assets"/models/blazeface_front_128.onnx \
    "$assets"/models/blazeface_back_256.onnx "$bundle/assets/models/"
  du -sh "$bundle"
}

run_checks() {
  [ -x "$bundle/bin/test_cuda" ] || { echo "gpu-check: $bundle is missing: run 'scripts/gpu-check.sh bundle' first and carry it" >&2; exit 1; }
  local out=${OUT:-gpu-check-out}
  mkdir -p "$out"
  export LD_LIBRARY_PATH="$PWD/$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export EDGEFUSE_ASSETS_DIR="$PWD/$bundle/assets" EDGEFUSE_REQUIRE_ASSETS=1
  nvidia-smi >"$out/nvidia-smi.txt" 2>&1 || true
  local tests_rc=0
  "$bundle/bin/test_cuda" >"$out/test_cuda.log" 2>&1 || tests_rc=$?
  local bench_rc=0
  "$bundle/bin/bench_cuda" --runs "${GPU_CHECK_RUNS:-200}" >"$out/bench_cuda.md" 2>&1 || bench_rc=$?
  {
    echo "# GPU check $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    head -n 12 "$out/nvidia-smi.txt" | sed 's/^/    /'
    echo
    echo "test_cuda exit $tests_rc: $(grep -E '^\[doctest\] (test cases|assertions)' "$out/test_cuda.log" | tr '\n' ' ')"
    grep -E 'SKIPPED|ERROR|MESSAGE' "$out/test_cuda.log" | head -n 40 || true
    echo
    echo "bench_cuda exit $bench_rc"
    grep -v '^{' "$out/bench_cuda.md" || true
  } >"$out/summary.md"
  cat "$out/summary.md"
  [ "$tests_rc" -eq 0 ]
}

case "${1:-}" in
  bundle) make_bundle ;;
  run) run_checks ;;
  *) echo "usage: scripts/gpu-check.sh bundle|run" >&2; exit 2 ;;
esac
