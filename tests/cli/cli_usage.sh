#!/usr/bin/env bash
# Usage, help and argument errors of the edgefuse tool; needs no model files. Each run of the
# binary costs a noticeable start-up (OpenCV's image codecs load many libraries), so checks are few.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

run_ok "$EDGEFUSE" --help
for command in infer detect bench; do expect_output "$command"; done
run_ok "$EDGEFUSE" --version
expect_output "edgefuse 0."

run_ok "$EDGEFUSE" infer --help
for flag in --model --input --output-dir --threads --reference; do expect_output "$flag"; done
run_ok "$EDGEFUSE" detect --help
for flag in --model --image --family --labels --score --iou --threads --json; do expect_output "$flag"; done
expect_output "default 0.3"
run_ok "$EDGEFUSE" bench --help
for flag in --model --threads --runs --warmup --reference --json; do expect_output "$flag"; done
expect_output "default 50"

run_fails "no command given" "$EDGEFUSE"
run_fails "unknown command 'frobnicate'" "$EDGEFUSE" frobnicate
# Each parser error is checked in args_test.cpp; here only that they reach the user as one line.
run_fails "unknown option --bogus" "$EDGEFUSE" infer --bogus
run_fails "missing required option --model" "$EDGEFUSE" bench
run_fails "--runs: 0 is outside the allowed range 1..1000000" "$EDGEFUSE" bench --model m.onnx --runs 0

missing="$WORK_DIR/no_such_model.onnx"
run_fails "model file '$missing' not found" "$EDGEFUSE" infer --model "$missing" --input x.npy --output-dir "$WORK_DIR/o"
run_fails "model file '$missing' not found" "$EDGEFUSE" detect --model "$missing" --image x.jpg
run_fails "model file '$missing' not found" "$EDGEFUSE" bench --model "$missing"

echo "cli_usage: ok"
