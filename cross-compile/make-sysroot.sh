#!/usr/bin/env bash
# Prepares an arm64 (aarch64) sysroot folder with the -dev packages the CPU-only tree needs, without
# root chroots or touching the host's dpkg: apt resolves the arm64 dependency closure against an empty,
# private package state, downloads the .debs, and dpkg -x unpacks them into the folder.
# Usage: cross-compile/make-sysroot.sh [SYSROOT]   (default ~/.cache/edgefuse/sysroot-arm64)
# Idempotent: a sysroot whose stamp lists the same packages is reused as is (the warm path).
set -euo pipefail

sysroot=${1:-${EDGEFUSE_SYSROOT:-$HOME/.cache/edgefuse/sysroot-arm64}}
# Everything find_package/pkg_check_modules reaches for (OpenCV is required at the top level;
# GStreamer, mosquitto, httplib, systemd and ssl are for the pipeline and the daemon).
packages=(
  libc6-dev libstdc++-12-dev
  libprotobuf-dev libonnx-dev libeigen3-dev doctest-dev nlohmann-json3-dev libyaml-cpp-dev
  libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev libopencv-dnn-dev libopencv-dev
  libmosquitto-dev libcpp-httplib-dev libssl-dev libsystemd-dev
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev  # the daemon (`edgefuse run`) and overlay
)
stamp="$sysroot/.edgefuse-sysroot"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${packages[*]}" ]; then
  echo "make-sysroot: $sysroot is up to date"
  exit 0
fi

# The host's protoc generates the code compiled against the arm64 libprotobuf: versions must match.
host_protobuf=$(dpkg-query -W -f='${Version}' protobuf-compiler 2>/dev/null || true)

apt_state="$sysroot.apt"  # private apt lists/cache/status, beside the sysroot so reruns reuse downloads
mkdir -p "$apt_state"/{lists/partial,archives/partial,cache} "$sysroot"
: >"$apt_state/status"
apt_opts=(
  -o APT::Architecture=arm64 -o APT::Architectures::=arm64
  -o Dir::State::Lists="$apt_state/lists" -o Dir::State::status="$apt_state/status"
  -o Dir::Cache="$apt_state/cache" -o Dir::Cache::archives="$apt_state/archives"
  -o APT::Install-Recommends=0 -o Debug::NoLocking=1 -o APT::Sandbox::User=root -qq
)
echo "make-sysroot: resolving and downloading the arm64 closure of ${#packages[@]} packages"
apt-get "${apt_opts[@]}" update
apt-get "${apt_opts[@]}" install -y --download-only "${packages[@]}" >/dev/null

arm_protobuf=$(dpkg-deb -f "$(ls "$apt_state"/archives/libprotobuf-dev_*_arm64.deb | head -1)" Version)
if [ -n "$host_protobuf" ] && [ "$host_protobuf" != "$arm_protobuf" ]; then
  echo "make-sysroot: host protoc $host_protobuf != arm64 libprotobuf-dev $arm_protobuf" >&2
  exit 1
fi

echo "make-sysroot: unpacking $(ls "$apt_state"/archives/*.deb | wc -l) packages into $sysroot"
for deb in "$apt_state"/archives/*.deb; do
  dpkg-deb -x "$deb" "$sysroot"
done
# Debian 12 is /usr-merged (debootstrap makes these links; dpkg -x does not): the dynamic loader and
# linker scripts name /lib/aarch64-linux-gnu/..., so /lib must lead to usr/lib.
for d in lib bin sbin; do
  if [ -d "$sysroot/$d" ] && [ ! -L "$sysroot/$d" ]; then
    mkdir -p "$sysroot/usr/$d"
    cp -a "$sysroot/$d/." "$sysroot/usr/$d/"
    rm -rf "${sysroot:?}/$d"
  fi
  [ -e "$sysroot/$d" ] || ln -s "usr/$d" "$sysroot/$d"
done
# Absolute symlinks would point into the host when followed from outside the sysroot: make them relative.
find "$sysroot" -type l -lname '/*' | while read -r link; do
  target=$(readlink "$link")
  ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$sysroot$target")" "$link"
done
# libblas.so.3 / liblapack.so.3 (NEEDED by OpenCV, armadillo) are links made by update-alternatives
# in the packages' postinst, which dpkg -x does not run: make them point at the reference builds.
multiarch="$sysroot/usr/lib/aarch64-linux-gnu"
for lib in blas/libblas.so.3 lapack/liblapack.so.3; do
  [ -e "$multiarch/$lib" ] && [ ! -e "$multiarch/$(basename "$lib")" ] && ln -s "$lib" "$multiarch/$(basename "$lib")"
done
echo "${packages[*]}" >"$stamp"
echo "make-sysroot: done ($(du -sh "$sysroot" | cut -f1))"
