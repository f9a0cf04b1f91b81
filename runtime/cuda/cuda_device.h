// CUDA devices visible to this process, and a smoke test that a kernel runs on one. The CUDA
// backend (its own issue) builds on this; today it tells `edgefuse --version` and the `cuda`
// tests what hardware is there. Only runtime/cuda/ includes CUDA headers.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "runtime/status.h"

namespace edgefuse {

struct CudaDeviceInfo {
  int index = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  size_t total_memory_bytes = 0;
  int multiprocessors = 0;
};

// Empty when there is no driver or no device (not an error: hosts without a GPU use the CPU).
std::vector<CudaDeviceInfo> cuda_devices();

// Adds two vectors of `n` floats on `device` and checks every element against the host sum.
Status cuda_smoke_test(int device, int n);

}  // namespace edgefuse
