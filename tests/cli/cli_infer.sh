#!/usr/bin/env bash
# edgefuse infer on official ONNX node-test models (Debian's libonnx-testdata): outputs checked
# against values computed here, and the input errors. Expects EDGEFUSE, MAKE_NPY, ONNX_NODE_TESTS.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

relu="$ONNX_NODE_TESTS/test_relu/model.onnx"  # x f32[3,4,5] -> y
add="$ONNX_NODE_TESTS/test_add/model.onnx"    # x, y f32[3,4,5] -> sum
require_file "$relu"
require_file "$add"

# x = -30, -29, ..., 29; relu(x) and x + 0.5 computed independently by seq/awk.
ramp=$(seq -30 29)
relu_expected=$(for v in $ramp; do echo $((v > 0 ? v : 0)); done)
add_expected=$(awk '{ print $1 + 0.5 }' <<<"$ramp")
"$MAKE_NPY" write "$WORK_DIR/x.npy" f32 3,4,5 $ramp
"$MAKE_NPY" fill "$WORK_DIR/half.npy" f32 3,4,5 0.5
"$MAKE_NPY" write "$WORK_DIR/relu_expected.npy" f32 3,4,5 $relu_expected
"$MAKE_NPY" write "$WORK_DIR/add_expected.npy" f32 3,4,5 $add_expected

run_ok "$EDGEFUSE" infer --model "$relu" --input "$WORK_DIR/x.npy" --output-dir "$WORK_DIR/relu"
expect_output "y f32[3, 4, 5] -> $WORK_DIR/relu/y.npy"
"$MAKE_NPY" compare "$WORK_DIR/relu/y.npy" "$WORK_DIR/relu_expected.npy" 0

run_ok "$EDGEFUSE" infer --model "$relu" --input "x=$WORK_DIR/x.npy" --output-dir "$WORK_DIR/relu_ref" --reference \
  --threads 2
"$MAKE_NPY" compare "$WORK_DIR/relu_ref/y.npy" "$WORK_DIR/relu_expected.npy" 0

run_ok "$EDGEFUSE" infer --model "$add" --input "y=$WORK_DIR/half.npy" --input "x=$WORK_DIR/x.npy" \
  --output-dir "$WORK_DIR/nested/add"
"$MAKE_NPY" compare "$WORK_DIR/nested/add/sum.npy" "$WORK_DIR/add_expected.npy" 0

# --device: auto runs wherever it can and gives the same values; cuda fails clearly without a GPU.
run_ok "$EDGEFUSE" infer --model "$relu" --input "$WORK_DIR/x.npy" --output-dir "$WORK_DIR/relu_auto" --device auto
"$MAKE_NPY" compare "$WORK_DIR/relu_auto/y.npy" "$WORK_DIR/relu_expected.npy" 0
if "$EDGEFUSE" --version | grep -Eq "CUDA: not built in| 0 device\(s\) visible"; then
  # fp16 is GPU storage: without a GPU the CPU runs fp32 and the integers stay exact.
  run_ok "$EDGEFUSE" infer --model "$relu" --input "$WORK_DIR/x.npy" --output-dir "$WORK_DIR/relu_fp16" --device auto \
    --precision fp16
  "$MAKE_NPY" compare "$WORK_DIR/relu_fp16/y.npy" "$WORK_DIR/relu_expected.npy" 0
  run_fails "device cuda: " "$EDGEFUSE" infer --model "$relu" --input "$WORK_DIR/x.npy" --output-dir "$WORK_DIR/no_gpu" \
    --device cuda
else
  run_ok "$EDGEFUSE" infer --model "$relu" --input "$WORK_DIR/x.npy" --output-dir "$WORK_DIR/relu_cuda" --device cuda
  "$MAKE_NPY" compare "$WORK_DIR/relu_cuda/y.npy" "$WORK_DIR/relu_expected.npy" 0
fi

out="$WORK_DIR/errors"
run_fails "--precision: 'fp8' is not one of fp32, fp16" \
  "$EDGEFUSE" infer --model "$relu" --input "$WORK_DIR/x.npy" --output-dir "$out" --precision fp8
run_fails "--device: device 'gpu' is not one of cpu, cuda, auto" \
  "$EDGEFUSE" infer --model "$relu" --input "$WORK_DIR/x.npy" --output-dir "$out" --device gpu
run_fails "needs the form NAME=FILE" "$EDGEFUSE" infer --model "$add" --input "$WORK_DIR/x.npy" --output-dir "$out"
run_fails "missing --input for model input 'y' f32[3, 4, 5]" \
  "$EDGEFUSE" infer --model "$add" --input "x=$WORK_DIR/x.npy" --output-dir "$out"
run_fails "the model has no input named 'z'" \
  "$EDGEFUSE" infer --model "$add" --input "z=$WORK_DIR/x.npy" --input "x=$WORK_DIR/x.npy" --output-dir "$out"
run_fails "input 'x' is given more than once" \
  "$EDGEFUSE" infer --model "$relu" --input "$WORK_DIR/x.npy" --input "x=$WORK_DIR/x.npy" --output-dir "$out"
run_fails "$WORK_DIR/absent.npy" "$EDGEFUSE" infer --model "$relu" --input "$WORK_DIR/absent.npy" --output-dir "$out"

"$MAKE_NPY" fill "$WORK_DIR/x64.npy" f64 3,4,5 1
run_fails "input 'x' is f64, the model expects f32" \
  "$EDGEFUSE" infer --model "$relu" --input "$WORK_DIR/x64.npy" --output-dir "$out"
"$MAKE_NPY" fill "$WORK_DIR/x22.npy" f32 2,2 1
run_fails "input 'x' has shape [2, 2]" "$EDGEFUSE" infer --model "$relu" --input "$WORK_DIR/x22.npy" --output-dir "$out"
[[ ! -e "$out" ]] || fail "a failed infer created its output folder"

echo "cli_infer: ok"
