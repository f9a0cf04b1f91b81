#!/usr/bin/env bash
# Pipeline benchmark: N copies of the 1080p30 clip, played in real time (looping), YOLOX-nano on
# every frame, CPU only, for a fixed time; reports what the box sustained per stream count.
# Beside it, the decode-only rate of the same clip (GStreamer + avdec, no inference) as the ceiling.
#   bench/bench_pipeline.sh [BUILD_DIR] [SECONDS] [COUNTS...]     default: build 20 1 2 4
# Environment: BENCH_THREADS (model threads, default 0 = one per core), BENCH_MAX_BATCH (default 1).
# Needs: the built edgefuse, assets (EDGEFUSE_ASSETS_DIR or ../shared), gst-launch-1.0, python3.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
seconds=${2:-20}
shift $(( $# > 2 ? 2 : $# )) || true
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1 2 4)
assets=${EDGEFUSE_ASSETS_DIR:-$root/../shared}
clip=$assets/data/vtest_1080p30.mp4
model=$assets/models/yolox_nano.onnx
for f in "$clip" "$model" "$build/edgefuse"; do
  [ -e "$f" ] || { echo "bench_pipeline: missing $f" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Decode ceiling: frames per second one pipeline decodes with no sink sync and no inference.
start=$(date +%s%N)
gst-launch-1.0 -q filesrc location="$clip" ! decodebin ! fakesink sync=false
decode_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "decode only (1 pipeline, 795 frames in $decode_ms ms): $(( 795000 / decode_ms )) fps"

cat >"$work/bench.yaml" <<YAML
models:
  - name: people
    path: $model
    threads: ${BENCH_THREADS:-0}
    max-batch: ${BENCH_MAX_BATCH:-1}
streams:
  - name: cam
    uri: $clip
    model: people
    loop: true
    queue-size: 1
events:
  path: $work/events.jsonl
stats-interval-s: 0
YAML

echo
echo "model threads ${BENCH_THREADS:-0}, max batch ${BENCH_MAX_BATCH:-1}, CPU ISA $("$build/edgefuse" --version | sed -n 's/^CPU ISA: //p')"
echo "| streams | seconds | frames in/s per stream | processed/s per stream | dropped | latency p50 | latency p99 |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for n in "${counts[@]}"; do
  "$build/edgefuse" run --config "$work/bench.yaml" --replicate "$n" --duration "$seconds" \
    --report "$work/report-$n.json" 2>"$work/log-$n.txt" || { cat "$work/log-$n.txt" >&2; exit 1; }
  python3 - "$work/report-$n.json" "$n" <<'PY'
import json, statistics, sys
report = json.load(open(sys.argv[1]))
streams, seconds = report["streams"], report["duration_s"]
frames_in = sum(s["frames_in"] for s in streams)
processed = sum(s["processed"] for s in streams)
dropped = sum(s["dropped"] for s in streams)
p50 = statistics.median(s["latency_p50_ms"] for s in streams)
p99 = max(s["latency_p99_ms"] for s in streams)
n = len(streams)
print(f"| {n} | {seconds:.1f} | {frames_in / n / seconds:.1f} | {processed / n / seconds:.1f} | "
      f"{100.0 * dropped / max(frames_in, 1):.1f}% | {p50:.1f} ms | {p99:.1f} ms |")
PY
done
