#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a working edgefuse: installs the packages,
# fetches the models, photos and the street clip, configures and builds, then runs the main job:
# the daemon on samples/configs/street.yaml (YOLOX-nano on a 1080p30 street video, events as JSON
# lines on stdout, statistics on stderr) for 20 seconds.
#
# Usage: scripts/setup.sh [--build-dir DIR]   (default build/)
# Environment: EDGEFUSE_ASSETS_DIR  an assets folder to take models from (default ../shared)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build_dir="$repo/build"
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    -h | --help) sed -n '2,9p' "$0"; exit 0 ;;
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

if [ -x "$build_dir/edgefuse" ] && "$build_dir/edgefuse" run --help >/dev/null 2>&1; then
  echo
  echo "== edgefuse run: the daemon on samples/configs/street.yaml for 20 s (events below, one JSON line each)"
  "$build_dir/edgefuse" run --config "$repo/samples/configs/street.yaml" --duration 20
else
  echo "setup: this build has no GStreamer, so no daemon (install libgstreamer1.0-dev and re-run)" >&2
fi
