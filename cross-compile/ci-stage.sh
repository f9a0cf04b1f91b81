#!/usr/bin/env bash
# CI stage: aarch64 cross build + tests under qemu + detect comparison with x86, then the amd64 and
# arm64 .deb packages (dpkg-deb --info/--contents into the log) and an install/--help/remove check
# of the amd64 package. Writes per-step timings to $EDGEFUSE_CROSS_TIMINGS (build-cross-ci/timings.txt).
# Budget (measured, 2 shared cores): cold (no sysroot, no build dirs, CCACHE_DISABLE=1) 565 s; warm 166 s;
# fails if the whole stage exceeds EDGEFUSE_CROSS_BUDGET_S (default 2400 s).
# Usage: cross-compile/ci-stage.sh        (root or sudo; installs g++-aarch64-linux-gnu and qemu-user-static)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
assets=$(cd "${EDGEFUSE_ASSETS_DIR:-$repo/../shared}" && pwd)
x86_build=${EDGEFUSE_X86_BUILD_DIR:-$repo/build-cross-ci}
arm_build=${EDGEFUSE_AARCH64_BUILD_DIR:-$repo/build-aarch64}
budget=${EDGEFUSE_CROSS_BUDGET_S:-2400}
timings=${EDGEFUSE_CROSS_TIMINGS:-$x86_build/timings.txt}
jobs=${JOBS:-2}
export EDGEFUSE_ASSETS_DIR="$assets" EDGEFUSE_AARCH64_BUILD_DIR="$arm_build" EDGEFUSE_X86_BUILD_DIR="$x86_build" JOBS="$jobs"
mkdir -p "$x86_build"
: >"$timings"
start=$(date +%s) last=$start
step() {  # step NAME: closes the previous step's timing, opens this one
  local now; now=$(date +%s)
  [ -z "${current:-}" ] || echo "$current $((now - last))s" | tee -a "$timings"
  current=$1 last=$now
  echo; echo "== [cross $((now - start))s] $1"
  if [ $((now - start)) -gt "$budget" ]; then echo "cross stage: over its ${budget}s budget" >&2; exit 1; fi
}
sudo_cmd=(); [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)

step "install-deps"
scripts/install-deps.sh --cross

step "sysroot"
cross-compile/make-sysroot.sh

step "x86-build"  # the reference for the detect comparison and the amd64 package
cmake -S "$repo" -B "$x86_build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEDGEFUSE_WARNINGS_AS_ERRORS=ON \
  -DEDGEFUSE_BUILD_TESTS=OFF -DEDGEFUSE_BUILD_BENCH=OFF -DEDGEFUSE_WITH_CUDA=OFF \
  -DEDGEFUSE_ASSETS_DIR="$assets" -DEDGEFUSE_PACKAGE_MODELS_DIR="$assets/models" >/dev/null
cmake --build "$x86_build" -j "$jobs" --target edgefuse

step "aarch64-build-and-qemu-tests"
cross-compile/build-aarch64.sh
cmake "$arm_build" -DEDGEFUSE_PACKAGE_MODELS_DIR="$assets/models" >/dev/null

step "packages"
for b in "$x86_build" "$arm_build"; do
  (cd "$b" && cpack -G DEB >/dev/null)
  deb=$(ls -t "$b"/edgefuse_*.deb | head -1)
  echo "--- $deb"; dpkg-deb --info "$deb"; dpkg-deb --contents "$deb"
done

step "install-amd64"  # apt resolves the shlibdeps Depends; then the installed tool must run
deb=$(ls -t "$x86_build"/edgefuse_*_amd64.deb | head -1)
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$deb" >/dev/null
/usr/bin/edgefuse --help | head -5
systemd-analyze verify /lib/systemd/system/edgefuse.service 2>&1 | grep -v '^$' || true
"${sudo_cmd[@]}" dpkg -r edgefuse >/dev/null

step "done"
echo "cross stage: total $(($(date +%s) - start))s" | tee -a "$timings"
