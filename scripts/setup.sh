#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a working edgefuse: installs the packages,
# fetches the models and photos, configures and builds, then runs the main job (detection with
# YOLOX-nano on a real photo).
#
# Usage: scripts/setup.sh [--build-dir DIR]   (default build/)
# Environment: EDGEFUSE_ASSETS_DIR  an assets folder to take models from (default ../shared)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build_dir="$repo/build"
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    -h | --help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done

"$repo/scripts/install-deps.sh"

# Models and photos: from the shared assets when present, else fetched (see fetch-assets.sh).
assets="$repo/assets"
"$repo/scripts/fetch-assets.sh" --from "${EDGEFUSE_ASSETS_DIR:-$repo/../shared}" --to "$assets" ||
  echo "setup: some assets are missing (see above); the build goes on, tests that need them will skip"

cmake -S "$repo" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEDGEFUSE_ASSETS_DIR="$assets"
cmake --build "$build_dir" -j "$(nproc)"

echo
echo "== edgefuse detect: YOLOX-nano on dog.jpg"
"$build_dir/edgefuse" detect --model "$assets/models/yolox_nano.onnx" --image "$assets/data/images/dog.jpg"
