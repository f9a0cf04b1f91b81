#!/usr/bin/env bash
# Runs `edgefuse detect` (YOLOX nano on dog.jpg) with the x86 build and with the arm64 build under
# qemu, and fails unless both find the same labels in the same order, boxes within 1 px and scores
# within 1e-3: the NEON/portable kernels must give the x86 kernels' detections.
# Usage: cross-compile/compare-detect.sh X86_EDGEFUSE ARM64_EDGEFUSE SYSROOT ASSETS_DIR
set -euo pipefail
x86_bin=$1 arm_bin=$2 sysroot=$3 assets=$4
model="$assets/models/yolox_nano.onnx" image="$assets/data/images/dog.jpg"
for f in "$x86_bin" "$arm_bin" "$model" "$image"; do
  [ -e "$f" ] || { echo "compare-detect: $f is missing" >&2; exit 1; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$x86_bin" detect --model "$model" --image "$image" --json >"$out/x86.json"
qemu-aarch64-static -L "$sysroot" "$arm_bin" detect --model "$model" --image "$image" --json >"$out/arm64.json"
python3 - "$out/x86.json" "$out/arm64.json" <<'PY'
import json, sys
x86, arm = (json.load(open(p))["detections"] for p in sys.argv[1:3])
def show(d): return f'{d["label"]:10s} {d["score"]:.4f} ' + ' '.join(f'{v:7.2f}' for v in d["box"])
ok = len(x86) == len(arm)
for i in range(max(len(x86), len(arm))):
    a = x86[i] if i < len(x86) else None
    b = arm[i] if i < len(arm) else None
    same = (a and b and a["label"] == b["label"] and abs(a["score"] - b["score"]) <= 1e-3
            and all(abs(p - q) <= 1.0 for p, q in zip(a["box"], b["box"])))
    ok = ok and bool(same)
    print(f'{"ok  " if same else "DIFF"} x86: {show(a) if a else "-":52s} arm64: {show(b) if b else "-"}')
print("compare-detect:", "same detections" if ok else "detections differ")
sys.exit(0 if ok else 1)
PY
