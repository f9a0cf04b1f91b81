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
#                                 $OUT (default ./gpu-check-out); then, where the tools are there,
#                                 ncu_kernels.csv (every kernel's duration over the first runs of
#                                 the benchmark, from Nsight Compute), ncu_detail.txt (throughput
#                                 and occupancy of a few kernels) and memcheck.log (test_cuda under
#                                 compute-sanitizer), each under a time limit so that the figures
#                                 above come back whatever they do. Exits non-zero if a test failed.
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
  # cuBLAS and cuDNN are loaded at run time (dlopen): where the machine has them only in PyTorch's
  # wheels, those go on the loader's path too: site-packages/nvidia/{cublas,cudnn}/lib, and
  # nvidia/cu13/lib (or cu12) where CUDA 13's wheels put cuBLAS.
  local nvidia_dir lib
  while read -r nvidia_dir; do
    for lib in cublas cudnn cu13 cu12; do
      if [ -n "$nvidia_dir" ] && [ -d "$nvidia_dir/$lib/lib" ]; then
        LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$nvidia_dir/$lib/lib"
      fi
    done
  done < <(python3 -c 'import nvidia; print("\n".join(nvidia.__path__))' 2>/dev/null || true)
  export EDGEFUSE_ASSETS_DIR="$PWD/$bundle/assets" EDGEFUSE_REQUIRE_ASSETS=1
  nvidia-smi >"$out/nvidia-smi.txt" 2>&1 || true
  # Each step under its own time limit (exit 124 when it ran out), so that a hung kernel leaves the
  # lease's minutes to the steps after it and its log still comes back.
  local tests_rc=0
  timeout "${GPU_CHECK_TEST_S:-240}" "$bundle/bin/test_cuda" >"$out/test_cuda.log" 2>&1 || tests_rc=$?
  local bench_rc=0
  timeout "${GPU_CHECK_BENCH_S:-180}" "$bundle/bin/bench_cuda" --runs "${GPU_CHECK_RUNS:-200}" \
    >"$out/bench_cuda.md" 2>&1 || bench_rc=$?
  {
    echo "# GPU check $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    head -n 12 "$out/nvidia-smi.txt" | sed 's/^/    /'
    echo
    echo "test_cuda exit $tests_rc: $(grep -E '^\[doctest\] (test cases|assertions)' "$out/test_cuda.log" | tr '\n' ' ')"
    echo "loader path: $LD_LIBRARY_PATH"
    grep -E 'SKIPPED|ERROR|MESSAGE' "$out/test_cuda.log" | head -n 60 || true
    echo
    echo "bench_cuda exit $bench_rc"
    grep -v '^{' "$out/bench_cuda.md" || true
  } >"$out/summary.md"
  cat "$out/summary.md"
  # Per-kernel durations of bench_cuda's timed runs (its NVTX range; not the warm-up, planning or
  # tuning launches): one metric is one replay pass per kernel. --clock-control none leaves the
  # clocks as the benchmark saw them, --cache-control none the L2 as the previous kernel left it
  # (as in a replayed frame, whose activations stay in L2).
  if command -v ncu >/dev/null; then
    timeout "${GPU_CHECK_NCU_S:-90}" ncu --clock-control none --cache-control none --nvtx --nvtx-include "timed run/" \
      --metrics gpu__time_duration.sum --csv \
      --launch-count "${GPU_CHECK_NCU_LAUNCHES:-600}" "$bundle/bin/bench_cuda" --runs 2 --warmup 1 --no-cublas \
      >"$out/ncu_kernels.csv" 2>&1 || echo "ncu exit $?" >>"$out/summary.md"
    # Throughput, occupancy and launch figures of a few kernels matching GPU_CHECK_NCU_DETAIL.
    timeout "${GPU_CHECK_NCU_S:-90}" ncu --clock-control none --cache-control none --nvtx --nvtx-include "timed run/" \
      --section SpeedOfLight \
      --section Occupancy --section LaunchStats -k "regex:${GPU_CHECK_NCU_DETAIL:-depthwise_tile|conv_gemm}" \
      --launch-skip "${GPU_CHECK_NCU_SKIP:-8}" --launch-count 8 "$bundle/bin/bench_cuda" --runs 1 --warmup 1 --no-cublas \
      >"$out/ncu_detail.txt" 2>&1 || echo "ncu detail exit $?" >>"$out/summary.md"
  fi
  if command -v compute-sanitizer >/dev/null; then
    # Without the cases that load and time cuBLAS and cuDNN or build an executor per tiling, which
    # under memcheck would take the whole time limit: our kernels are what it checks.
    timeout "${GPU_CHECK_MEMCHECK_S:-120}" compute-sanitizer --tool memcheck --error-exitcode 3 \
      "$bundle/bin/test_cuda" --test-case-exclude='*cuBLAS*,*cuDNN*,the Conv GEMM in every tiling*' \
      >"$out/memcheck.log" 2>&1 || echo "compute-sanitizer exit $?" >>"$out/summary.md"
    tail -n 4 "$out/memcheck.log" >>"$out/summary.md"
  fi
  [ "$tests_rc" -eq 0 ]
}

case "${1:-}" in
  bundle) make_bundle ;;
  run) run_checks ;;
  *) echo "usage: scripts/gpu-check.sh bundle|run" >&2; exit 2 ;;
esac
