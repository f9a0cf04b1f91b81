#!/usr/bin/env bash
# edgefuse inspect on YOLOX-nano from the assets folder (skips when absent): the detector family,
# node and kernel counts before and after fusion, memory plan bytes, per-op profile, --no-fuse, errors.
# Expects EDGEFUSE, and EDGEFUSE_ASSETS_DIR or EDGEFUSE_DEFAULT_ASSETS_DIR (the CMake cache entry).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

assets="${EDGEFUSE_ASSETS_DIR:-$EDGEFUSE_DEFAULT_ASSETS_DIR}"
yolox="$assets/models/yolox_nano.onnx"
require_file "$yolox"

# json_int KEY: the integer value of "KEY" in the last command's one-line JSON output.
json_int() {
  local value
  value="$(grep -oE "\"$1\":[0-9]+" "$WORK_DIR/out" | head -n 1 | cut -d: -f2)"
  [[ -n "$value" ]] || fail "no integer \"$1\" in: $(head -c 2000 "$WORK_DIR/out")"
  echo "$value"
}

run_ok "$EDGEFUSE" inspect --help
for text in "--model FILE" "--json" "--profile" "--runs N" "--no-fuse"; do expect_output "$text"; done

run_ok "$EDGEFUSE" inspect --model "$yolox" --json
[[ "$(wc -l <"$WORK_DIR/out")" -eq 1 ]] || fail "JSON output is not one line"
for text in '"ops_before":{' '"ops_after":{' '"passes":[{"name":' '"details":[' '"weight_bytes":' '"peak_live_bytes":' \
  '"family":"yolox"'; do
  expect_output "$text"
done
nodes_before="$(json_int nodes_before)"
nodes_after="$(json_int nodes_after)"
kernels_fused="$(json_int kernels_fused)"
moved_fused="$(json_int activation_bytes_moved_fused)"
moved_unfused="$(json_int activation_bytes_moved_unfused)"
arena="$(json_int arena_bytes)"
unplanned="$(json_int unplanned_bytes)"
[[ "$nodes_before" -eq 369 ]] || fail "nodes_before $nodes_before, expected 369"
[[ "$(json_int kernels_unfused)" -eq 369 ]] || fail "kernels_unfused is not the imported node count"
# 110 activations fused into their Convs, the 7 residual Adds after them, the Focus stem's
# 8 Slices and Concat folded into the first Conv, and the head's last Concat into its Transpose
# (369 - 214 - 7 - 9 - 1).
[[ "$nodes_after" -eq 138 ]] || fail "nodes_after $nodes_after, expected 138"
# Kernels: less the 14 aliased Concats and 3 views the plan skips, and one per Conv pair run as one
# kernel (runtime/ops/conv_pair.h): the stem with its stride-2 depthwise Conv, and the 104 x 104
# stride-2 depthwise Conv with its 1x1 Conv, the pairs whose tensors exceed L2.
[[ "$(json_int kernel_pairs)" -eq 2 ]] || fail "kernel_pairs $(json_int kernel_pairs), expected 2"
# Neither runs in place: the stem changes the shape, the other has stride 2.
[[ "$(json_int kernel_pairs_in_place)" -eq 0 ]] || fail "kernel_pairs_in_place $(json_int kernel_pairs_in_place), expected 0"
[[ "$kernels_fused" -eq $((nodes_after - 17 - 2)) ]] || fail "kernels_fused $kernels_fused, expected 119"
# Per-op counts after fusion add up to nodes_after.
ops_after_sum="$(grep -oE '"ops_after":\{[^}]*\}' "$WORK_DIR/out" | grep -oE ':[0-9]+' | tr -d : | awk '{ sum += $1 } END { print sum }')"
[[ "$ops_after_sum" -eq "$nodes_after" ]] || fail "ops_after sums to $ops_after_sum, nodes_after is $nodes_after"
[[ "$moved_fused" -lt "$moved_unfused" ]] || fail "fused moves $moved_fused bytes, unfused $moved_unfused"
[[ $((arena * 15)) -le "$unplanned" ]] || fail "arena $arena bytes is not 15x below one buffer per tensor ($unplanned)"
# The same graph lowered for the CUDA executor (no GPU needed): every node on the device, its 113
# Convs as 83 tiled GEMMs (82 1x1 and the stem) and 30 depthwise kernels; 119 kernels in all, one
# per node the plan runs (no CPU pairs there; all 16 Concats aliased, the head's odd-sized blocks
# too, 3 Reshapes as views, and the head's Transpose one gather over its three levels).
[[ "$(json_int gpu_fallbacks)" -eq 0 ]] || fail "gpu_fallbacks $(json_int gpu_fallbacks), expected 0"
[[ "$(json_int gpu_conv_gemm_kernels)" -eq 83 ]] || fail "gpu_conv_gemm_kernels $(json_int gpu_conv_gemm_kernels), expected 83"
[[ "$(json_int gpu_depthwise_kernels)" -eq 30 ]] || fail "gpu_depthwise_kernels $(json_int gpu_depthwise_kernels), expected 30"
# In fp16 every Conv GEMM but the stem (it reads the f32 image) may run on tensor cores.
[[ "$(json_int gpu_tensor_core_kernels_fp16)" -eq 82 ]] ||
  fail "gpu_tensor_core_kernels_fp16 $(json_int gpu_tensor_core_kernels_fp16), expected 82"
[[ "$(json_int gpu_kernels)" -eq $((nodes_after - 19)) ]] || fail "gpu_kernels $(json_int gpu_kernels), expected 119"

# YOLOX-nano at 416 is published as 1.08 GFLOPs (multiply-adds counted twice).
flops="$(json_int flops_fused)"
[[ "$flops" -gt 1000000000 && "$flops" -lt 1100000000 ]] || fail "flops_fused $flops, expected about 1.06e9"

# Roofline estimate on a board: labelled, and the slower of the memory and compute times.
run_ok "$EDGEFUSE" inspect --model "$yolox" --device orin-nano --json
expect_output '"roofline":{"estimate":true,"board":"orin-nano"'
expect_output '"bandwidth_gb_s":68.0'
awk_check='{ m = $0; sub(/.*"memory_ms":/, "", m); sub(/,.*/, "", m); c = $0; sub(/.*"compute_ms":/, "", c);
  sub(/,.*/, "", c); e = $0; sub(/.*"estimate_ms":/, "", e); sub(/,.*/, "", e);
  want = m > c ? m : c; exit (e - want < 0.0002 && want - e < 0.0002 && m > 0 && c > 0) ? 0 : 1 }'
awk "$awk_check" "$WORK_DIR/out" || fail "estimate_ms is not max(memory_ms, compute_ms): $(cat "$WORK_DIR/out")"
run_ok "$EDGEFUSE" inspect --model "$yolox" --device xavier-nx --precision fp16
for text in "roofline ESTIMATE on Jetson Xavier NX" "not a measurement" "(fp16: activations moved"; do
  expect_output "$text"
done
run_fails "--device: unknown board 'tx2' (known: jetson-nano, xavier-nx, orin-nano, orin-nx, agx-orin)" \
  "$EDGEFUSE" inspect --model "$yolox" --device tx2

run_ok "$EDGEFUSE" inspect --model "$yolox" --no-fuse --json
[[ "$(json_int nodes_after)" -eq 369 ]] || fail "--no-fuse changed the graph"
expect_output '"passes":[]'

run_ok "$EDGEFUSE" inspect --model "$yolox" --profile --runs 2 --threads 2
for text in "369 nodes imported" "detector family: yolox" "fuse_conv_activation" "activation bytes moved" \
  "profile (median of 2 runs"; do
  expect_output "$text"
done
# Convs are split by kernel class, with their arithmetic rate: YOLOX-nano's 113 are 82 pointwise,
# 24 + 6 depthwise and the folded 6x6 stride-2 stem; the two pairs are classes of their own.
for class in 'Conv 1x1 +81' 'Conv dw 3x3 +24' 'Conv dw 3x3/2 +4' 'Conv 6x6/2 \+ dw 3x3/2 +1' 'Conv dw 3x3/2 \+ 1x1 +1'; do
  grep -qE "^  $class nodes +[0-9]+\.[0-9]{3} ms +[0-9]+\.[0-9] GFLOP/s$" "$WORK_DIR/out" ||
    fail "no '$class' profile line: $(cat "$WORK_DIR/out")"
done
grep -qE '^  Concat +16 nodes +[0-9]+\.[0-9]{3} ms$' "$WORK_DIR/out" || fail "no Concat profile line: $(cat "$WORK_DIR/out")"

# BlazeFace-256: 8 depthwise -> 1x1 pairs, the 7 stride-1 blocks of its 128 x 128 stage in place
# (their outputs share one buffer, conv_pair.h), which keeps the arena within 1/25 of one buffer
# per tensor; the eighth has stride 2. Its four heads write their graph outputs (the Reshapes are
# views), and the fused kernels move under 1/3 of the unfused kernels' bytes.
blazeface="$assets/models/blazeface_back_256.onnx"
if [[ -f "$blazeface" ]]; then
  run_ok "$EDGEFUSE" inspect --model "$blazeface" --json
  expect_output '"family":"blazeface"'
  [[ "$(json_int kernel_pairs)" -eq 8 ]] || fail "BlazeFace-256 kernel_pairs $(json_int kernel_pairs), expected 8"
  [[ "$(json_int kernel_pairs_in_place)" -eq 7 ]] || fail "BlazeFace-256 kernel_pairs_in_place, expected 7"
  [[ $(($(json_int arena_bytes) * 25)) -le "$(json_int unplanned_bytes)" ]] || fail "BlazeFace-256 arena above 1/25"
  [[ "$(json_int output_views)" -eq 4 ]] || fail "BlazeFace-256 output_views $(json_int output_views), expected 4"
  [[ $(($(json_int activation_bytes_moved_fused) * 3)) -le "$(json_int activation_bytes_moved_unfused)" ]] ||
    fail "BlazeFace-256 bytes moved above 1/3"
  run_ok "$EDGEFUSE" inspect --model "$blazeface"
  expect_output "of them in place               7"
fi

# BlazeFace-128: the same heads; bytes moved under 1/3 of unfused and an arena 15 times smaller
# than one buffer per tensor (the fuser issue's figures).
blazeface="$assets/models/blazeface_front_128.onnx"
if [[ -f "$blazeface" ]]; then
  run_ok "$EDGEFUSE" inspect --model "$blazeface" --json
  [[ "$(json_int output_views)" -eq 4 ]] || fail "BlazeFace-128 output_views $(json_int output_views), expected 4"
  [[ $(($(json_int activation_bytes_moved_fused) * 3)) -le "$(json_int activation_bytes_moved_unfused)" ]] ||
    fail "BlazeFace-128 bytes moved above 1/3"
  [[ $(($(json_int arena_bytes) * 15)) -le "$(json_int unplanned_bytes)" ]] || fail "BlazeFace-128 arena above 1/15"
fi

run_fails "model file '$WORK_DIR/none.onnx' not found" "$EDGEFUSE" inspect --model "$WORK_DIR/none.onnx"
run_fails "missing required option --model" "$EDGEFUSE" inspect --json

echo "cli_inspect: ok"
