#!/usr/bin/env bash
# Regenerates docs/images/overlay.jpg, the README's picture of the overlay: the sample app runs
# YOLOX-nano over the first seconds of the pedestrian clip, drawing every frame, and saves the
# last one at the live view's preview width (960 px).
#
# Usage: scripts/overlay-screenshot.sh [--build DIR] [--assets DIR] [--frames N] [--out FILE]
#   --build DIR   build folder holding samples/overlay/edgefuse-overlay (default: build)
#   --assets DIR  folder with models/yolox_nano.onnx and data/vtest_1080p30.mp4 (default: ../shared)
#   --frames N    frame of the clip to show, counted from 1 (default: 120, 4 s in)
#   --out FILE    the JPEG to write (default: docs/images/overlay.jpg)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build="$repo/build"
assets="${EDGEFUSE_ASSETS_DIR:-$repo/../shared}"
frames=120
out="$repo/docs/images/overlay.jpg"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --assets) assets="$2"; shift 2 ;;
    --frames) frames="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h | --help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "overlay-screenshot.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done

app="$build/samples/overlay/edgefuse-overlay"
[ -x "$app" ] || { echo "overlay-screenshot.sh: $app not built (cmake --build $build --target edgefuse-overlay)" >&2; exit 1; }
for f in models/yolox_nano.onnx data/vtest_1080p30.mp4; do
  [ -f "$assets/$f" ] || { echo "overlay-screenshot.sh: $assets/$f missing (--assets DIR)" >&2; exit 1; }
done
mkdir -p "$(dirname "$out")"
"$app" --source "$assets/data/vtest_1080p30.mp4" --model "$assets/models/yolox_nano.onnx" \
  --every-frame --frames "$frames" --snapshot "$out"
echo "wrote $out ($(stat -c %s "$out") bytes)"
