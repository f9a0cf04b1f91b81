#!/usr/bin/env bash
# edgefuse detect, infer and bench on the real models in the assets folder (skips when absent).
# Expects EDGEFUSE, MAKE_NPY, REDRESS_YOLOX, MAKE_YOLO_MODEL, and EDGEFUSE_ASSETS_DIR or EDGEFUSE_DEFAULT_ASSETS_DIR (the CMake cache entry).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

assets="${EDGEFUSE_ASSETS_DIR:-$EDGEFUSE_DEFAULT_ASSETS_DIR}"

yolox="$assets/models/yolox_nano.onnx"
blazeface="$assets/models/blazeface_front_128.onnx"
dog="$assets/data/images/dog.jpg"
person="$assets/data/images/person.jpg"
for asset in "$yolox" "$blazeface" "$dog" "$person"; do require_file "$asset"; done

# The reference run in models/README.md finds a dog, a bicycle and a car in dog.jpg.
run_ok "$EDGEFUSE" detect --model "$yolox" --image "$dog" --json
for text in '"family":"yolox"' '"label":"dog"' '"label":"bicycle"' '"width":' '"box":[' '"inference_ms":'; do
  expect_output "$text"
done
[[ "$(wc -l <"$WORK_DIR/out")" -eq 1 ]] || fail "JSON output is not one line"

run_ok "$EDGEFUSE" detect --model "$yolox" --image "$dog" --threads 2
grep -qE '^dog 0\.[0-9]{3} [0-9]+\.[0-9] [0-9]+\.[0-9] [0-9]+\.[0-9] [0-9]+\.[0-9]$' "$WORK_DIR/out" ||
  fail "no 'dog SCORE X1 Y1 X2 Y2' line: $(cat "$WORK_DIR/out")"
# best first
awk '{ print $(NF - 4) }' "$WORK_DIR/out" | sort -r -n -c || fail "detections not sorted by score"

run_fails "cannot read labels file" "$EDGEFUSE" detect --model "$yolox" --image "$dog" --labels "$WORK_DIR/none.txt"
run_fails "image file '$WORK_DIR/none.jpg' not found" "$EDGEFUSE" detect --model "$yolox" --image "$WORK_DIR/none.jpg"
echo "not an image" >"$WORK_DIR/text.jpg"
run_fails "cannot read image '$WORK_DIR/text.jpg'" "$EDGEFUSE" detect --model "$yolox" --image "$WORK_DIR/text.jpg"
run_fails "BlazeFace input 'images'" "$EDGEFUSE" detect --model "$yolox" --image "$dog" --family blazeface
run_fails "unknown detector family 'ssd'" "$EDGEFUSE" detect --model "$yolox" --image "$dog" --family ssd

# YOLOv5 and YOLOv8 (YOLOX-nano re-dressed as each, tests/models/yolo_redress.h): recognised, and
# the same objects found through their own preprocessing and decoding.
for family in yolov5 yolov8; do
  "$REDRESS_YOLOX" "$yolox" "$family" "$WORK_DIR/$family.onnx" || fail "redress_yolox $family failed"
  run_ok "$EDGEFUSE" detect --model "$WORK_DIR/$family.onnx" --labels "$assets/models/coco.names" --image "$dog" --json
  for text in "\"family\":\"$family\"" '"label":"dog"' '"label":"bicycle"'; do expect_output "$text"; done
done
run_fails "YOLOX output 'output0' is f32[1, 84, 3549]" "$EDGEFUSE" detect --model "$WORK_DIR/yolov8.onnx" --image "$dog" \
  --family yolox

# --input-size sizes a model exported with dynamic axes; a fixed-size model must be given its own size.
run_ok "$EDGEFUSE" detect --model "$yolox" --image "$dog" --input-size 416x416 --json
expect_output '"label":"dog"'
run_fails "input 'images' is fixed at 416x416, not 320x320" "$EDGEFUSE" detect --model "$yolox" --image "$dog" \
  --input-size 320x320
run_fails "--input-size: expected WIDTHxHEIGHT such as 640x640, got '640'" "$EDGEFUSE" detect --model "$yolox" \
  --image "$dog" --input-size 640
"$MAKE_YOLO_MODEL" yolov8n "$WORK_DIR/dynamic.onnx" 128 dynamic || fail "make_yolo_model failed"
run_fails "its size is symbolic: give input-width and input-height, or --input-size" "$EDGEFUSE" detect --model "$WORK_DIR/dynamic.onnx" --image "$dog"
run_ok "$EDGEFUSE" detect --model "$WORK_DIR/dynamic.onnx" --image "$dog" --input-size 128x128 --json
expect_output '"family":"yolov8"'
run_ok "$EDGEFUSE" inspect --model "$WORK_DIR/dynamic.onnx" --input-size 128x128
expect_output "detector family: yolov8"

run_ok "$EDGEFUSE" detect --model "$blazeface" --image "$person" --json --score 0.5
expect_output '"family":"blazeface"'

# TensorFlow-style output names ("Identity:0") become file names with '_'.
"$MAKE_NPY" fill "$WORK_DIR/face.npy" f32 1,128,128,3 0
run_ok "$EDGEFUSE" infer --model "$blazeface" --input "$WORK_DIR/face.npy" --output-dir "$WORK_DIR/face"
for name in Identity_0 Identity_1_0 Identity_2_0 Identity_3_0; do
  [[ -f "$WORK_DIR/face/$name.npy" ]] || fail "infer did not write $name.npy: $(ls "$WORK_DIR/face")"
done

run_ok "$EDGEFUSE" bench --model "$blazeface" --runs 2 --warmup 1 --json
expect_output '"median_ms":'

echo "cli_models: ok"
