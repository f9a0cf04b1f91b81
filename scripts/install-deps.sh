#!/usr/bin/env bash
# Installs every Debian package edgefuse needs to build, test and benchmark.
# Usage: scripts/install-deps.sh [--no-gstreamer] [--cross]  (--cross: aarch64 cross compiler + qemu)
# Runs apt-get as root (or through sudo when not root). Idempotent.
set -euo pipefail

with_gstreamer=1
with_cross=0
for arg in "$@"; do
  case "$arg" in
    --no-gstreamer) with_gstreamer=0 ;;
    --cross) with_cross=1 ;;
    -h | --help) sed -n '2,4p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake ninja-build ccache pkg-config git ca-certificates
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  libeigen3-dev libyaml-cpp-dev doctest-dev nlohmann-json3-dev
  libopencv-dev
  libmosquitto-dev mosquitto libcpp-httplib-dev libssl-dev libsystemd-dev
  clang-14  # host compiler for CUDA 11.8's nvcc in scripts/cuda11-check.sh (it refuses g++ 12)
)
if [ "$with_gstreamer" = 1 ]; then
  packages+=(
    libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
    gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad
    gstreamer1.0-libav gstreamer1.0-tools
    libgstrtspserver-1.0-dev gstreamer1.0-rtsp
    gstreamer1.0-plugins-ugly chromium
  )
fi
if [ "$with_cross" = 1 ]; then
  packages+=(g++-aarch64-linux-gnu qemu-user-static)  # cross-compile/: aarch64 build, tests under qemu
fi

sudo_cmd=()
if [ "$(id -u)" != 0 ]; then sudo_cmd=(sudo); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" = 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
