// Group-1 Convs with a window (YOLOX's 3x3 stem, strided 3x3 Convs) on the device: an implicit
// GEMM, out_channels x (in_channels * kernel volume) weights by (in_channels * kernel volume) x
// positions of input windows gathered as they are staged (conv_gemm.h), instead of ConvStep's one
// work item per output position, which reloads every weight for every position. The parameters
// are ConvStep's; the host emulation runs ConvStep's work items.
#pragma once

#include "runtime/cuda/step_kernels.h"

namespace edgefuse::gpu {

struct ConvGemmStep : ConvStep {
  int32_t gemm_tiling = -1;   // the kGemmTilings index to launch (conv_gemm.h), -1: the cost model's
  bool tensor_cores = false;  // X is binary16 and W fits it: the tensor-core tilings may run the step
  // On a device: the convolution through cuDNN in this algorithm (a cudnnConvolutionFwdAlgo_t),
  // then PointwiseEpilogueStep (cudnn_conv.h); -1: our tilings. gemm_tiling still says how to run
  // it without cuDNN.
  int32_t cudnn_algorithm = -1;
};

}  // namespace edgefuse::gpu
