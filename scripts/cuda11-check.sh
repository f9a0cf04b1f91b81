#!/usr/bin/env bash
# Compiles the CUDA code with an 11.x toolkit, as JetPack 5 (CUDA 11.4, Xavier and Orin) must: the
# machines here have CUDA 13 only, which would not notice an API or device feature newer than 11.x.
# No GPU is needed; test_cuda then starts and skips its device cases.
#
#   scripts/cuda11-check.sh
#
# CUDA11_FETCH_OPTIONAL=1 (CI): when the packages cannot be fetched, say so and exit 0 instead of
# failing; a build error still fails.
#
# The toolkit is Debian bookworm's non-free nvidia-cuda-toolkit (11.8). Its packages are fetched with
# a private apt configuration (from $CUDA11_MIRROR, default deb.debian.org) into $CUDA11_CACHE (default ~/.cache/edgefuse/cuda-11.8), so the
# system's sources and installed packages are left alone, and unpacked there into the layout nvcc
# and CMake expect (bin/, nvvm/, include/, lib64/). nvcc 11.8 accepts g++ up to 11 or clang up to
# 14 as host compiler: clang++-14 (Debian's clang-14 package) compiles the .cu files here, g++ the rest.
# The build tree is $CUDA11_BUILD_DIR (default build-cuda11), for CUDA architectures 72 (Xavier)
# and 87 (Orin), with warnings as errors; it builds every target with CUDA sources (the runtime's
# kernels, the GPU preprocessing, the cuBLAS peer in bench_cuda) and the CUDA test binary.
set -euo pipefail
cd "$(dirname "$0")/.."

cache=${CUDA11_CACHE:-$HOME/.cache/edgefuse/cuda-11.8}
build=${CUDA11_BUILD_DIR:-build-cuda11}
host_compiler=${CUDA11_HOST_COMPILER:-clang++-14}
mirror=${CUDA11_MIRROR:-http://deb.debian.org/debian}
packages=(nvidia-cuda-toolkit nvidia-cuda-dev libcudart11.0 libnvvm4)

command -v "$host_compiler" >/dev/null ||
  { echo "cuda11-check: $host_compiler not found (apt-get install clang-14, or set CUDA11_HOST_COMPILER)" >&2; exit 1; }

fetch_packages() {
  local apt=$cache/apt
  mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$apt/parts" "$cache/debs"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bookworm main contrib non-free" \
    >"$apt/sources.list"
  local options=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/parts"
    -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt" -o "Dir::Cache::Archives=$apt/archives"
    -o "APT::Sandbox::User=root")
  apt-get "${options[@]}" -q update >/dev/null && (cd "$cache/debs" && apt-get "${options[@]}" -q download "${packages[@]}")
}

# nvcc finds cicc, libdevice and its headers relative to itself (bin/nvcc.profile); Debian spreads
# them over /usr, so the toolkit directory links them back together.
assemble_toolkit() {
  local root=$cache/root toolkit=$cache/toolkit
  rm -rf "$root" "$toolkit"
  mkdir -p "$root"
  for deb in "$cache"/debs/*.deb; do dpkg-deb -x "$deb" "$root"; done
  # The math libraries (cuBLAS, cuFFT, NPP, ...) are most of the 3 GB unpacked and not linked: the
  # runtime opens cuBLAS at run time. Keep the CUDA runtime, its device runtime and libnvvm.
  find "$root/usr/lib/x86_64-linux-gnu" -maxdepth 1 -type f \( -name '*.a' -o -name '*.so*' \) \
    ! -name 'libcudart*' ! -name 'libcudadevrt*' ! -name 'libculibos*' ! -name 'libnvvm*' -delete
  local cuda_bin=$root/usr/lib/nvidia-cuda-toolkit/bin
  mkdir -p "$toolkit/bin" "$toolkit/nvvm/bin" "$toolkit/nvvm/lib64"
  ln -s "$cuda_bin/crt" "$toolkit/bin/crt"
  for tool in ptxas fatbinary nvlink cudafe++ bin2c cuobjdump nvprune; do ln -s "$root/usr/bin/$tool" "$toolkit/bin/$tool"; done
  ln -s "$cuda_bin/cicc" "$toolkit/nvvm/bin/cicc"
  ln -s "$root/usr/lib/nvidia-cuda-toolkit/libdevice" "$toolkit/nvvm/libdevice"
  ln -s "$root"/usr/lib/x86_64-linux-gnu/libnvvm.so* "$toolkit/nvvm/lib64/"
  ln -s "$root/usr/include" "$toolkit/include"
  ln -s "$root/usr/lib/x86_64-linux-gnu" "$toolkit/lib64"
  cat >"$toolkit/bin/nvcc.profile" <<'EOF'
TOP                = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
LD_LIBRARY_PATH   += $(TOP)/nvvm/lib64:$(TOP)/lib64:
PATH              += $(TOP)/nvvm/bin:$(_HERE_):
INCLUDES          += "-I$(TOP)/include" $(_SPACE_)
LIBRARIES         =+ $(_SPACE_) "-L$(TOP)/lib64/stubs" "-L$(TOP)/lib64"
EOF
  cp "$cuda_bin/nvcc" "$toolkit/bin/"  # last: its presence marks a complete toolkit
  rm -rf "$cache/debs"
}

if [ ! -x "$cache/toolkit/bin/nvcc" ]; then
  if ! ls "$cache"/debs/*.deb >/dev/null 2>&1 && ! fetch_packages; then
    rm -rf "$cache/debs"
    echo "cuda11-check: could not fetch ${packages[*]} from Debian's non-free archive" >&2
    [ "${CUDA11_FETCH_OPTIONAL:-0}" = 1 ] && { echo "cuda11-check: skipped"; exit 0; }
    exit 1
  fi
  assemble_toolkit
fi
"$cache/toolkit/bin/nvcc" --version | tail -n 2

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEDGEFUSE_WITH_CUDA=ON -DEDGEFUSE_WARNINGS_AS_ERRORS=ON \
  -DCMAKE_CUDA_COMPILER="$cache/toolkit/bin/nvcc" -DCMAKE_CUDA_HOST_COMPILER="$host_compiler" \
  -DCUDAToolkit_ROOT="$cache/toolkit" -DCMAKE_CUDA_ARCHITECTURES="72;87" >/dev/null
cmake --build "$build" --target test_cuda bench_cuda edgefuse_preprocess_gpu
"$build/tests/cuda/test_cuda" | tail -n 3
echo "cuda11-check: the CUDA code builds with $("$cache/toolkit/bin/nvcc" --version | grep -o 'release [0-9.]*') for sm_72 and sm_87"
