// Owning handles for device and pinned host memory, with allocation checked into a Status.
// Host C++ against the CUDA runtime API (only runtime/cuda/ and the GPU parts of pipeline/ use it).
#pragma once

#include <cstddef>
#include <memory>

#include "runtime/cuda/cuda_check.h"

namespace edgefuse {

struct CudaDeviceFree {
  void operator()(void* p) const { cudaFree(p); }
};
struct CudaPinnedFree {
  void operator()(void* p) const { cudaFreeHost(p); }
};
using DeviceBytes = std::unique_ptr<void, CudaDeviceFree>;
using PinnedBytes = std::unique_ptr<void, CudaPinnedFree>;

// size 0 leaves the handle empty.
inline Status device_alloc(DeviceBytes& bytes, size_t size) {
  void* p = nullptr;
  if (size > 0) EF_CUDA_RETURN_IF_ERROR(cudaMalloc(&p, size));
  bytes.reset(p);
  return Status::ok();
}

inline Status pinned_alloc(PinnedBytes& bytes, size_t size) {
  void* p = nullptr;
  if (size > 0) EF_CUDA_RETURN_IF_ERROR(cudaMallocHost(&p, size));
  bytes.reset(p);
  return Status::ok();
}

}  // namespace edgefuse
