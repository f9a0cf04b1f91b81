// cuBLAS as the peer of the Conv GEMM (runtime/cuda/conv_gemm.h): each 1x1 Conv shape of a model
// timed in our tilings and in cuBLAS's GEMM, fp32 and fp16, on the same device in the same run.
// cuBLAS is loaded at run time (dlopen), so bench_cuda runs on a machine without it and says so.
// Only the product is timed in cuBLAS; our kernel also adds the bias and applies the activation
// (here none) in its store loop, which cuBLAS would need another kernel for.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/status.h"

namespace edgefuse::bench {

// Y [M x P] = W [M x K] X [K x P], as a 1x1 Conv at batch 1; `count`: how many of the model's
// Convs have this shape.
struct GemmShape {
  int64_t out_channels = 0;  // M
  int64_t in_channels = 0;   // K
  int64_t positions = 0;     // P
  int count = 0;
};

// Mean microseconds per launch, back to back; fp16: X and Y in binary16 (ours: W in f32, its
// tensor-core and f32 tilings both timed, the faster kept; cuBLAS: W in binary16, f32 sums on
// tensor cores).
struct GemmPeerTiming {
  GemmShape shape;
  double ours_f32_us = 0;
  double cublas_f32_us = 0;
  double ours_fp16_us = 0;
  bool ours_fp16_tensor_cores = false;  // whether the faster of ours was a tensor-core tiling
  double cublas_fp16_us = 0;
};

// Fails (kUnsupported) when cuBLAS cannot be loaded, naming what was tried.
Result<std::vector<GemmPeerTiming>> time_gemm_peers(const std::vector<GemmShape>& shapes, int launches);

}  // namespace edgefuse::bench
