#!/usr/bin/env bash
# edgefuse bench on a tiny ONNX node-test model: text and JSON reports. Expects EDGEFUSE, ONNX_NODE_TESTS.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

relu="$ONNX_NODE_TESTS/test_relu/model.onnx"
require_file "$relu"

run_ok "$EDGEFUSE" bench --model "$relu" --runs 3 --warmup 1 --threads 1
expect_output "median"
expect_output "(3 runs after 1 warm-up, 1 thread)"

run_ok "$EDGEFUSE" bench --model "$relu" --runs 4 --warmup 0 --threads 2 --json
for key in '"model":' '"median_ms":' '"min_ms":' '"max_ms":' '"runs":4' '"threads":2'; do expect_output "$key"; done
# min <= median <= max
awk -F'[:,}]' '{ for (i = 1; i < NF; ++i) v[$i] = $(i + 1) }
  END { exit !(v["\"min_ms\""] + 0 <= v["\"median_ms\""] + 0 && v["\"median_ms\""] + 0 <= v["\"max_ms\""] + 0) }' \
  "$WORK_DIR/out" || fail "latencies out of order: $(cat "$WORK_DIR/out")"

# Fusion is on by default; --no-fuse and EDGEFUSE_NO_FUSION=1 turn it off.
expect_output '"fused":true'
expect_output '"nodes":1'
run_ok "$EDGEFUSE" bench --model "$relu" --runs 1 --warmup 0 --json --no-fuse
expect_output '"fused":false'
EDGEFUSE_NO_FUSION=1 run_ok "$EDGEFUSE" bench --model "$relu" --runs 1 --warmup 0 --json
expect_output '"fused":false'

# --profile --top N: time per op type, then the N slowest nodes with their first input and output shapes.
run_ok "$EDGEFUSE" bench --model "$relu" --runs 3 --warmup 1 --threads 1 --profile --top 5
expect_output "slowest nodes:"
grep -qE '^ +[0-9]+\.[0-9]{4} ms +[0-9.]+ GFLOP/s +Relu +\[3, 4, 5\] -> \[3, 4, 5\]' "$WORK_DIR/out" ||
  fail "no Relu slowest-node line: $(cat "$WORK_DIR/out")"
run_ok "$EDGEFUSE" bench --model "$relu" --runs 2 --warmup 0 --profile --top 1 --json
expect_output '"slowest_nodes":[{"name":'
expect_output '"kernel":"Relu","shapes":"[3, 4, 5] -> [3, 4, 5]"'

# --batch N: the model's batch of one made dynamic, N images a run (in lanes on 2 threads), and the
# time per image; a model whose input does not lead with a batch of one is refused, naming it.
maxpool="$ONNX_NODE_TESTS/test_maxpool_2d_default/model.onnx"
require_file "$maxpool"
run_ok "$EDGEFUSE" bench --model "$maxpool" --runs 3 --warmup 1 --threads 2 --batch 3 --json
expect_output '"batch":3'
awk -F'[:,}]' '{ for (i = 1; i < NF; ++i) v[$i] = $(i + 1) }
  END { d = v["\"median_ms_per_image\""] * 3 - v["\"median_ms\""]; exit !(d < 0.002 && d > -0.002) }' \
  "$WORK_DIR/out" || fail "time per image is not the median over 3: $(cat "$WORK_DIR/out")"
run_ok "$EDGEFUSE" bench --model "$maxpool" --runs 1 --warmup 0 --batch 2
expect_output "batch of 2: median"
run_fails "input 'x' has shape [3, 4, 5]: a batch needs a first dimension of 1" \
  "$EDGEFUSE" bench --model "$relu" --runs 1 --batch 2

# --interval MS: runs on a frame clock, the caller busy --preprocess-us before each with the threads
# woken (or not, --no-prewake); 4 runs 40 ms apart take at least 120 ms.
start_ns=$(date +%s%N)
run_ok "$EDGEFUSE" bench --model "$relu" --runs 4 --warmup 0 --threads 2 --interval 40 --json
elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
((elapsed_ms >= 120)) || fail "4 runs 40 ms apart took only ${elapsed_ms} ms"
for key in '"interval_ms":40' '"preprocess_us":300' '"prewake":true'; do expect_output "$key"; done
run_ok "$EDGEFUSE" bench --model "$relu" --runs 2 --warmup 0 --interval 5 --preprocess-us 1000 --no-prewake
expect_output "a run every 5 ms after 1000 us busy, threads not woken first"
run_ok "$EDGEFUSE" bench --model "$relu" --runs 2 --warmup 0 --json
expect_output '"interval_ms":0'

echo "cli_bench: ok"
