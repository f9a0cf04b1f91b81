// Kernel launches of the GPU backend, the only code nvcc compiles besides device discovery.
// C++17 (JetPack 5's CUDA 11.4 has no C++20), so it sees only the step parameter blocks.
#pragma once

#include "runtime/cuda/conv_gemm_step.h"
#include "runtime/cuda/depthwise_conv_step.h"
#include "runtime/cuda/pointwise_conv_step.h"
#include "runtime/cuda/row_nms_steps.h"

namespace edgefuse::gpu {

// Enqueues all work items of `step` on `stream` (a cudaStream_t) and returns the launch's
// cudaError_t as an int (0: success). A step with no work items enqueues nothing. Instantiated
// in step_launch.cu for every step type (step_kernels.h, pointwise_conv_step.h,
// depthwise_conv_step.h, conv_gemm_step.h, row_nms_steps.h).
template <typename Step>
int launch_on_stream(const Step& step, void* stream);

}  // namespace edgefuse::gpu
