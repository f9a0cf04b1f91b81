// Every CUDA runtime call is checked: EF_CUDA_RETURN_IF_ERROR turns a failure into a Status that
// names the call and CUDA's own message.
#pragma once

#include <cuda_runtime.h>

#include "runtime/status.h"

#define EF_CUDA_RETURN_IF_ERROR(call)                                                                                \
  do {                                                                                                               \
    const cudaError_t ef_cuda_error_ = (call);                                                                       \
    if (ef_cuda_error_ != cudaSuccess) {                                                                             \
      return ::edgefuse::Status(::edgefuse::StatusCode::kInternal,                                                   \
                                ::edgefuse::make_message(#call, " failed: ", cudaGetErrorName(ef_cuda_error_), " (", \
                                                         cudaGetErrorString(ef_cuda_error_), ")"));                  \
    }                                                                                                                \
  } while (0)
