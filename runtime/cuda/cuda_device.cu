#include <memory>
#include <vector>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_device.h"

namespace edgefuse {

namespace {

// One thread per element; the grid covers n.
__global__ void add_vectors(const float* a, const float* b, float* sum, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) sum[i] = a[i] + b[i];
}

struct DeviceFree {
  void operator()(float* p) const { cudaFree(p); }
};
using DeviceBuffer = std::unique_ptr<float, DeviceFree>;

Status device_alloc(DeviceBuffer& buffer, int n) {
  float* p = nullptr;
  EF_CUDA_RETURN_IF_ERROR(cudaMalloc(&p, sizeof(float) * static_cast<size_t>(n)));
  buffer.reset(p);
  return Status::ok();
}

}  // namespace

std::vector<CudaDeviceInfo> cuda_devices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // no driver or no device: clear the sticky error, report none
    return {};
  }
  std::vector<CudaDeviceInfo> devices;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp props{};
    if (cudaGetDeviceProperties(&props, i) != cudaSuccess) continue;
    devices.push_back(
        CudaDeviceInfo{i, props.name, props.major, props.minor, props.totalGlobalMem, props.multiProcessorCount});
  }
  return devices;
}

Status cuda_smoke_test(int device, int n) {
  if (n <= 0) return invalid_argument("cuda_smoke_test: n must be positive, got ", n);
  EF_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  std::vector<float> a(static_cast<size_t>(n));
  std::vector<float> b(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    a[static_cast<size_t>(i)] = 0.5f * static_cast<float>(i);
    b[static_cast<size_t>(i)] = 3.0f - static_cast<float>(i % 7);
  }
  DeviceBuffer da, db, dsum;
  EF_RETURN_IF_ERROR(device_alloc(da, n));
  EF_RETURN_IF_ERROR(device_alloc(db, n));
  EF_RETURN_IF_ERROR(device_alloc(dsum, n));
  const size_t bytes = sizeof(float) * static_cast<size_t>(n);
  EF_CUDA_RETURN_IF_ERROR(cudaMemcpy(da.get(), a.data(), bytes, cudaMemcpyHostToDevice));
  EF_CUDA_RETURN_IF_ERROR(cudaMemcpy(db.get(), b.data(), bytes, cudaMemcpyHostToDevice));
  constexpr int kBlock = 256;
  add_vectors<<<(n + kBlock - 1) / kBlock, kBlock>>>(da.get(), db.get(), dsum.get(), n);
  EF_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  std::vector<float> sum(static_cast<size_t>(n));
  EF_CUDA_RETURN_IF_ERROR(cudaMemcpy(sum.data(), dsum.get(), bytes, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    const size_t k = static_cast<size_t>(i);
    if (sum[k] != a[k] + b[k]) {
      return Status(StatusCode::kInternal,
                    make_message("device ", device, " computed ", sum[k], " at ", i, ", expected ", a[k] + b[k]));
    }
  }
  return Status::ok();
}

}  // namespace edgefuse
