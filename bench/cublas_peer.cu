#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <utility>

#include <cuda_runtime.h>

#include "bench/cublas_peer.h"
#include "runtime/cuda/conv_gemm.h"
#include "runtime/cuda/cublas_library.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/launch_timing.h"
#include "runtime/cuda/pointwise_conv_step.h"

namespace edgefuse::bench {
namespace {

// Device memory freed on scope exit.
struct DeviceBuffer {
  void* data = nullptr;
  ~DeviceBuffer() {
    if (data != nullptr) cudaFree(data);
  }
};

Status allocate(DeviceBuffer& buffer, int64_t bytes) {
  EF_CUDA_RETURN_IF_ERROR(cudaMalloc(&buffer.data, static_cast<size_t>(bytes)));
  // Zeros: a GEMM's time does not depend on its values, and no NaN or subnormal slows a path.
  EF_CUDA_RETURN_IF_ERROR(cudaMemset(buffer.data, 0, static_cast<size_t>(bytes)));
  return Status::ok();
}

// Our fastest allowed tiling's milliseconds, and whether it is a tensor-core one.
Result<std::pair<double, bool>> fastest_tiling(const gpu::PointwiseConvStep& step, cudaStream_t stream, int launches) {
  float ms[gpu::kGemmTilingCount] = {};
  EF_CUDA_RETURN_IF_ERROR(static_cast<cudaError_t>(gpu::time_gemm_tilings(step, stream, launches, ms)));
  const auto best = std::min_element(std::begin(ms), std::end(ms)) - std::begin(ms);
  return std::pair<double, bool>{ms[best], gpu::kGemmTilings[best].tensor_cores};
}

Result<GemmPeerTiming> time_shape(const gpu::CublasLibrary& cublas, cublasHandle_t handle, cudaStream_t stream,
                                  const GemmShape& shape, int launches) {
  const int64_t m = shape.out_channels, k = shape.in_channels, p = shape.positions;
  DeviceBuffer x, w, y, x16, w16, y16;
  EF_RETURN_IF_ERROR(allocate(x, k * p * 4));
  EF_RETURN_IF_ERROR(allocate(w, m * k * 4));
  EF_RETURN_IF_ERROR(allocate(y, m * p * 4));
  EF_RETURN_IF_ERROR(allocate(x16, k * p * 2));
  EF_RETURN_IF_ERROR(allocate(w16, m * k * 2));
  EF_RETURN_IF_ERROR(allocate(y16, m * p * 2));
  GemmPeerTiming timing;
  timing.shape = shape;

  gpu::PointwiseConvStep step;
  step.batch = 1;
  step.in_channels = k;
  step.out_channels = m;
  step.positions = p;
  step.residual_channels = m;
  step.in[0] = x.data;
  step.in[1] = w.data;
  step.out = y.data;
  EF_ASSIGN_OR_RETURN(const auto f32, fastest_tiling(step, stream, launches));
  timing.ours_f32_us = f32.first * 1e3;
  step.in[0] = x16.data;
  step.out = y16.data;
  step.half = 1u | gpu::kHalfOutput;  // X and Y in binary16, W in f32: as an fp16 plan stores them
  // Tensor cores where the device has them (sm_70 and later), as the executor allows them.
  int device = 0, major = 0;
  EF_CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
  EF_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  step.tensor_cores = major >= 7;
  EF_ASSIGN_OR_RETURN(const auto fp16, fastest_tiling(step, stream, launches));
  timing.ours_fp16_us = fp16.first * 1e3;
  timing.ours_fp16_tensor_cores = fp16.second;

  // Row-major Y = W X is column-major Y^T = X^T W^T: cuBLAS's m, n, k are P, M, K.
  const float one = 1.0f, zero = 0.0f;
  const auto mi = static_cast<int>(m), ki = static_cast<int>(k), pi = static_cast<int>(p);
  EF_ASSIGN_OR_RETURN(
      const double sgemm_ms, gpu::time_launches(stream, launches, [&]() {
        return gpu::cublas_status(
            cublas.sgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, pi, mi, ki, &one, static_cast<const float*>(x.data), pi,
                         static_cast<const float*>(w.data), ki, &zero, static_cast<float*>(y.data), pi),
            "cublasSgemm");
      }));
  timing.cublas_f32_us = sgemm_ms * 1e3;
  EF_ASSIGN_OR_RETURN(
      const double half_ms, gpu::time_launches(stream, launches, [&]() {
        return gpu::cublas_status(
            cublas.gemm_ex(handle, CUBLAS_OP_N, CUBLAS_OP_N, pi, mi, ki, &one, x16.data, CUDA_R_16F, pi, w16.data,
                           CUDA_R_16F, ki, &zero, y16.data, CUDA_R_16F, pi, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            "cublasGemmEx");
      }));
  timing.cublas_fp16_us = half_ms * 1e3;
  return timing;
}

}  // namespace

Result<std::vector<GemmPeerTiming>> time_gemm_peers(const std::vector<GemmShape>& shapes, int launches) {
  EF_ASSIGN_OR_RETURN(const std::shared_ptr<const gpu::CublasLibrary> cublas, gpu::CublasLibrary::load());
  cudaStream_t stream = nullptr;
  EF_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::unique_ptr<CUstream_st, decltype(&cudaStreamDestroy)> stream_owner(stream, cudaStreamDestroy);
  cublasHandle_t handle = nullptr;
  EF_RETURN_IF_ERROR(gpu::cublas_status(cublas->create(&handle), "cublasCreate"));
  const auto destroy = [&](cublasContext* h) { cublas->destroy(h); };
  const std::unique_ptr<cublasContext, decltype(destroy)> handle_owner(handle, destroy);
  EF_RETURN_IF_ERROR(gpu::cublas_status(cublas->set_stream(handle, stream), "cublasSetStream"));
  std::vector<GemmPeerTiming> timings;
  for (const GemmShape& shape : shapes) {
    EF_ASSIGN_OR_RETURN(GemmPeerTiming timing, time_shape(*cublas, handle, stream, shape, launches));
    timings.push_back(timing);
  }
  return timings;
}

}  // namespace edgefuse::bench
