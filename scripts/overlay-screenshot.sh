#!/usr/bin/env bash
# Regenerates docs/images/overlay.jpg, the README's picture of the overlay: the sample app runs
# the stream of samples/configs/street.yaml (YOLOX-nano on the pedestrian clip, with its zones and
# counting line) over its first seconds, drawing every frame, and saves the last one at the live
# view's preview width (960 px). The config finds the model and clip under assets/
# (scripts/fetch-assets.sh).
#
# Usage: scripts/overlay-screenshot.sh [--build DIR] [--frames N] [--out FILE]
#   --build DIR   build folder holding samples/overlay/edgefuse-overlay (default: build)
#   --frames N    frame of the clip to show, counted from 1 (default: 120, 4 s in)
#   --out FILE    the JPEG to write (default: docs/images/overlay.jpg)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build="$repo/build"
frames=120
out="$repo/docs/images/overlay.jpg"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --frames) frames="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "overlay-screenshot.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done

app="$build/samples/overlay/edgefuse-overlay"
[ -x "$app" ] || { echo "overlay-screenshot.sh: $app not built (cmake --build $build --target edgefuse-overlay)" >&2; exit 1; }
for f in models/yolox_nano.onnx data/vtest_1080p30.mp4; do
  [ -f "$repo/assets/$f" ] || { echo "overlay-screenshot.sh: assets/$f missing (scripts/fetch-assets.sh)" >&2; exit 1; }
done
mkdir -p "$(dirname "$out")"
"$app" --config "$repo/samples/configs/street.yaml" --stream street --every-frame --frames "$frames" --snapshot "$out"
echo "wrote $out ($(stat -c %s "$out") bytes)"
