# CMake toolchain file: cross-compile edgefuse for 64-bit ARM Linux (generic aarch64 boards, Jetson)
# with Debian's g++-aarch64-linux-gnu, against an arm64 sysroot folder (cross-compile/make-sysroot.sh,
# or a copy of a Jetson's rootfs), and run tests under qemu-aarch64-static.
#
#   cmake -S . -B build-aarch64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cross-compile/aarch64-linux-gnu.cmake \
#         -DEDGEFUSE_SYSROOT=$HOME/.cache/edgefuse/sysroot-arm64 -DEDGEFUSE_BOARD=generic
#
# The CPU is always named (never -march=native: the build host is not the box). EDGEFUSE_BOARD picks a
# preset for EDGEFUSE_CPU_ARCH (the top-level CMakeLists turns it into -march=...); set
# EDGEFUSE_CPU_ARCH yourself to override:
#   generic : armv8-a                       any aarch64 (Raspberry Pi 3/4, Graviton, Ampere, ...)
#   nano    : armv8-a+crc                   Jetson Nano / TX1 (Cortex-A57)
#   xavier  : armv8.2-a                     Jetson Xavier NX / AGX (Carmel); CUDA arch 72 (JetPack 5)
#   orin    : armv8.2-a+fp16+dotprod+rcpc   Jetson Orin Nano / NX / AGX (Cortex-A78AE); CUDA arch 87
# NEON is part of armv8-a, so every preset gets the vectorised portable kernels; the x86 ISA
# dispatch (EDGEFUSE_CPU_DISPATCH) is off for aarch64 (runtime/CMakeLists.txt decides by processor).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Try-compiles see only the toolchain file: pass the sysroot and board on to them.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES EDGEFUSE_SYSROOT EDGEFUSE_BOARD)

if(NOT EDGEFUSE_SYSROOT)
  if(DEFINED ENV{EDGEFUSE_SYSROOT})
    set(EDGEFUSE_SYSROOT "$ENV{EDGEFUSE_SYSROOT}")
  else()
    set(EDGEFUSE_SYSROOT "$ENV{HOME}/.cache/edgefuse/sysroot-arm64")
  endif()
endif()
set(EDGEFUSE_SYSROOT "${EDGEFUSE_SYSROOT}" CACHE PATH "arm64 root folder with the target's -dev packages")
if(NOT IS_DIRECTORY "${EDGEFUSE_SYSROOT}/usr/include")
  message(FATAL_ERROR "No arm64 sysroot at ${EDGEFUSE_SYSROOT}: run cross-compile/make-sysroot.sh "
                      "or point -DEDGEFUSE_SYSROOT at a copy of the device's root filesystem")
endif()
set(CMAKE_SYSROOT "${EDGEFUSE_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH "${EDGEFUSE_SYSROOT}")
# Programs (protoc, pkg-config) come from the host; headers, libraries and package configs only
# from the sysroot, so nothing of the x86 system leaks into the arm64 link.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config (GStreamer, mosquitto, systemd, httplib): the sysroot's .pc files, paths prefixed with it.
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${EDGEFUSE_SYSROOT}")
set(ENV{PKG_CONFIG_LIBDIR}
    "${EDGEFUSE_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${EDGEFUSE_SYSROOT}/usr/lib/pkgconfig:${EDGEFUSE_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

set(EDGEFUSE_BOARD "generic" CACHE STRING "Target board preset: generic, nano, xavier, orin")
set_property(CACHE EDGEFUSE_BOARD PROPERTY STRINGS generic nano xavier orin)
set(edgefuse_board_march_generic "armv8-a")
set(edgefuse_board_march_nano "armv8-a+crc")
set(edgefuse_board_march_xavier "armv8.2-a")
set(edgefuse_board_march_orin "armv8.2-a+fp16+dotprod+rcpc")
set(edgefuse_board_cuda_xavier "72")
set(edgefuse_board_cuda_orin "87")
if(NOT DEFINED edgefuse_board_march_${EDGEFUSE_BOARD})
  message(FATAL_ERROR "EDGEFUSE_BOARD='${EDGEFUSE_BOARD}': use generic, nano, xavier or orin")
endif()
set(EDGEFUSE_CPU_ARCH "${edgefuse_board_march_${EDGEFUSE_BOARD}}" CACHE STRING "Target CPU for -march")
if(DEFINED edgefuse_board_cuda_${EDGEFUSE_BOARD} AND NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES "${edgefuse_board_cuda_${EDGEFUSE_BOARD}}")
endif()
set(EDGEFUSE_CPU_DISPATCH OFF CACHE BOOL "x86-64 only")

# ctest and add_test run the arm64 binaries through qemu, which loads them with the sysroot's
# dynamic loader and libraries.
find_program(EDGEFUSE_QEMU_AARCH64 qemu-aarch64-static NO_CMAKE_FIND_ROOT_PATH)
if(EDGEFUSE_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${EDGEFUSE_QEMU_AARCH64};-L;${EDGEFUSE_SYSROOT}")
endif()
