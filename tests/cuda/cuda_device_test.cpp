#include "runtime/cuda/cuda_device.h"

#include <doctest/doctest.h>

using namespace edgefuse;

TEST_CASE("every visible CUDA device runs a kernel and returns exact sums") {
  const std::vector<CudaDeviceInfo> devices = cuda_devices();
  if (devices.empty()) {
    MESSAGE("SKIPPED: no CUDA device visible (the cuda tests run on a machine with a GPU)");
    return;
  }
  for (const CudaDeviceInfo& device : devices) {
    INFO("device ", device.index, ": ", device.name, " sm_", device.compute_major, device.compute_minor);
    CHECK(device.total_memory_bytes > 0);
    CHECK(device.multiprocessors > 0);
    for (int n : {1, 255, 257, 1 << 20}) {
      const Status status = cuda_smoke_test(device.index, n);
      CHECK_MESSAGE(status.is_ok(), status.to_string());
    }
  }
}

TEST_CASE("the smoke test rejects a bad size before touching a device") {
  CHECK(cuda_smoke_test(0, 0).code() == StatusCode::kInvalidArgument);
}
