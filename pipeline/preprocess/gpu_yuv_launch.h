// The launch of YuvTensorStep on the device (gpu_yuv_launch.cu, C++17 for CUDA 11.4).
#pragma once

#include "pipeline/preprocess/yuv_tensor_step.h"

namespace edgefuse {

// Enqueues every pixel of `step` on `stream` (a cudaStream_t); returns the launch's cudaError_t.
int launch_yuv_tensor_step(const YuvTensorStep& step, void* stream);

}  // namespace edgefuse
