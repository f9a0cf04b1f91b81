#!/usr/bin/env bash
# edgefuse run and edgefuse config as a user meets them: the reference, --check, bad configs (exit
# non-zero, key path and line in the message), and SIGINT draining a live stream cleanly with the
# accounting identity in the summary; a model exported with dynamic axes. Needs the YOLOX model
# (skips when absent).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

assets="${EDGEFUSE_ASSETS_DIR:-$EDGEFUSE_DEFAULT_ASSETS_DIR}"
yolox="$assets/models/yolox_nano.onnx"
require_file "$yolox"
"$EDGEFUSE" run --help >/dev/null 2>&1 || { echo "SKIPPED: built without GStreamer"; exit 77; }

# run_fails_with PATTERN CMD...: CMD exits non-zero and stderr contains PATTERN.
run_fails_with() {
  local pattern="$1"
  shift
  if "$@" >"$WORK_DIR/out" 2>"$WORK_DIR/err"; then fail "expected failure: $*"; fi
  grep -qF -- "$pattern" "$WORK_DIR/err" || fail "stderr of '$*' lacks '$pattern': $(cat "$WORK_DIR/err")"
}

run_ok "$EDGEFUSE" config --reference
for key in "inference-interval" "max-batch" "batch-timeout-ms" "queue-size" "rtsp-transport" "empty-frames"; do
  expect_output "$key"
done

cat >"$WORK_DIR/live.yaml" <<YAML
models:
  - name: people
    path: $yolox
    threads: 1
    device: auto
    precision: fp16
streams:
  - name: pattern
    uri: test://ball
    model: people
    width: 640
    height: 360
events:
  path: $WORK_DIR/events.jsonl
  empty-frames: true
stats-interval-s: 1
YAML
run_ok "$EDGEFUSE" run --config "$WORK_DIR/live.yaml" --check
expect_output "OK (1 model(s), 1 stream(s))"

# A model exported with dynamic axes (its image size symbolic) loads at input-width x input-height,
# and without them is refused with what to do.
"$MAKE_YOLO_MODEL" yolov8n "$WORK_DIR/dynamic.onnx" 128 dynamic || fail "make_yolo_model failed"
dynamic_yaml() {
  printf 'models:\n  - name: people\n    path: %s\n%bstreams:\n  - {name: ball, uri: "test://ball", model: people}\n' \
    "$WORK_DIR/dynamic.onnx" "$1" >"$WORK_DIR/dynamic.yaml"
}
dynamic_yaml "    input-width: 128\n    input-height: 128\n"
run_ok "$EDGEFUSE" run --config "$WORK_DIR/dynamic.yaml" --check
expect_output "OK (1 model(s), 1 stream(s))"
dynamic_yaml ""
run_fails_with "its size is symbolic: give input-width and input-height" "$EDGEFUSE" run --config "$WORK_DIR/dynamic.yaml" --check

# A live stream until SIGINT: drains, prints the summary, exits 0, and frames in = dropped + processed.
"$EDGEFUSE" run --config "$WORK_DIR/live.yaml" --report "$WORK_DIR/report.json" 2>"$WORK_DIR/log" &
daemon=$!
# Stop it once it has logged periodic statistics twice (seconds normally; much longer under sanitizers).
for _ in $(seq 1 600); do
  [[ "$(grep -c "stream 'pattern': .* fps in" "$WORK_DIR/log" || true)" -ge 2 ]] && break
  kill -0 "$daemon" 2>/dev/null || break
  sleep 0.1
done
kill -INT "$daemon"
wait "$daemon" || fail "daemon exited $? after SIGINT: $(tail -5 "$WORK_DIR/log")"
grep -q "stream 'pattern' summary:" "$WORK_DIR/log" || fail "no summary line: $(cat "$WORK_DIR/log")"
# device: auto says where the model runs, and why not on the GPU when it is not.
grep -Eq "model 'people': .*, on (cpu \(1 thread; auto: .+\)|cuda:0 .+, fp16 storage)$" "$WORK_DIR/log" ||
  fail "no device in the model line: $(grep "model 'people'" "$WORK_DIR/log")"
grep -q "stream 'pattern': .* fps in" "$WORK_DIR/log" || fail "no periodic statistics: $(cat "$WORK_DIR/log")"
report=$(cat "$WORK_DIR/report.json")
field() { grep -oE "\"$1\":[0-9]+" <<<"$report" | cut -d: -f2; }
frames_in=$(field frames_in) processed=$(field processed) dropped=$(field dropped) skipped=$(field skipped)
[[ "$frames_in" -gt 0 && "$processed" -gt 0 ]] || fail "nothing processed: $report"
[[ $((processed + dropped + skipped)) -eq "$frames_in" ]] || fail "accounting broken: $report"
detections=$(grep -c '"type":"detections"' "$WORK_DIR/events.jsonl" || true)
[[ "$detections" -eq "$processed" ]] || fail "detection events ($detections) != processed frames: $report"
grep -q '"type":"state","id":"[0-9a-f]*-[0-9]*","stream":"pattern","state":"streaming"' "$WORK_DIR/events.jsonl" ||
  fail "no streaming state event: $(head -3 "$WORK_DIR/events.jsonl")"

# SIGHUP: a changed stream restarts; a config that no longer parses is rejected and the old one runs on.
"$EDGEFUSE" run --config "$WORK_DIR/live.yaml" 2>"$WORK_DIR/reload.log" &
daemon=$!
wait_for_log() {  # wait_for_log PATTERN: up to 60 s
  for _ in $(seq 1 600); do
    grep -q -- "$1" "$WORK_DIR/reload.log" && return 0
    kill -0 "$daemon" 2>/dev/null || break
    sleep 0.1
  done
  fail "no '$1' in the log: $(tail -5 "$WORK_DIR/reload.log")"
}
wait_for_log "stream 'pattern': streaming"
sed -i 's/width: 640/width: 320/' "$WORK_DIR/live.yaml"
kill -HUP "$daemon"
wait_for_log "reload applied: streams restarted: pattern"
echo "streams: [" >>"$WORK_DIR/live.yaml"
kill -HUP "$daemon"
wait_for_log "reload rejected, the running configuration stays"
kill -0 "$daemon" || fail "the daemon died on a bad reload"
kill -TERM "$daemon"
wait "$daemon" || fail "daemon exited $? after SIGTERM: $(tail -5 "$WORK_DIR/reload.log")"

# Bad configs: exit non-zero, say which key, where, and what was expected.
printf 'models:\n  - name: m\n    path: %s\nstreams:\n  - name: s\n    uri: test://\n    model: m\n    inference-interval: two\n' \
  "$yolox" >"$WORK_DIR/bad.yaml"
run_fails_with 'streams[0].inference-interval: expected integer' "$EDGEFUSE" run --config "$WORK_DIR/bad.yaml"
run_fails_with '(line 8)' "$EDGEFUSE" run --config "$WORK_DIR/bad.yaml"
printf 'models:\n  - name: m\n    path: %s\n    scor-threshold: 0.5\nstreams:\n  - name: s\n    uri: test://\n    model: m\n' \
  "$yolox" >"$WORK_DIR/typo.yaml"
run_fails_with 'did you mean "score-threshold"' "$EDGEFUSE" run --check --config "$WORK_DIR/typo.yaml"
printf 'models:\n  - name: m\n    path: /nonexistent/model.onnx\nstreams:\n  - name: s\n    uri: test://\n    model: m\n' \
  >"$WORK_DIR/missing.yaml"
run_fails_with '/nonexistent/model.onnx' "$EDGEFUSE" config --validate "$WORK_DIR/missing.yaml"
run_fails_with 'not found' "$EDGEFUSE" run --config "$WORK_DIR/nonexistent.yaml"
echo "cli_daemon: ok"
