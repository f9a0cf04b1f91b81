// cuDNN, loaded at run time (dlopen) as cuBLAS is (cublas_library.h): the runtime starts on a host
// without it, and then runs every Conv with its own kernels. Only the legacy convolution API is
// used, which cuDNN 8 (JetPack 5) and 9 (JetPack 6, CUDA 12 and 13) both have, with the same
// entry points, enumerations and structures.
//
// Built where cudnn.h is (a CUDA toolkit with cuDNN, JetPack): EDGEFUSE_HAVE_CUDNN_HEADERS is then
// 1. Elsewhere (Debian's CUDA 11.8 packages have no cuDNN) it is 0, nothing here is declared, and
// CudnnConv::create reports that cuDNN was not built in.
#pragma once

#if __has_include(<cudnn.h>)
#define EDGEFUSE_HAVE_CUDNN_HEADERS 1

#include <memory>
#include <string>

#include <cudnn.h>

#include "runtime/status.h"

namespace edgefuse::gpu {

struct CudnnLibrary {
  std::string path;     // the name dlopen found it by
  std::string version;  // "major.minor.patch"
  decltype(&cudnnGetErrorString) get_error_string = nullptr;
  decltype(&cudnnCreate) create = nullptr;
  decltype(&cudnnDestroy) destroy = nullptr;
  decltype(&cudnnSetStream) set_stream = nullptr;
  decltype(&cudnnCreateTensorDescriptor) create_tensor = nullptr;
  decltype(&cudnnSetTensor4dDescriptorEx) set_tensor_4d = nullptr;
  decltype(&cudnnDestroyTensorDescriptor) destroy_tensor = nullptr;
  decltype(&cudnnCreateFilterDescriptor) create_filter = nullptr;
  decltype(&cudnnSetFilter4dDescriptor) set_filter_4d = nullptr;
  decltype(&cudnnDestroyFilterDescriptor) destroy_filter = nullptr;
  decltype(&cudnnCreateConvolutionDescriptor) create_convolution = nullptr;
  decltype(&cudnnSetConvolution2dDescriptor) set_convolution_2d = nullptr;
  decltype(&cudnnSetConvolutionMathType) set_math_type = nullptr;
  decltype(&cudnnDestroyConvolutionDescriptor) destroy_convolution = nullptr;
  decltype(&cudnnFindConvolutionForwardAlgorithmEx) find_forward = nullptr;
  decltype(&cudnnGetConvolutionForwardWorkspaceSize) forward_workspace_size = nullptr;
  decltype(&cudnnConvolutionForward) forward = nullptr;

  CudnnLibrary() = default;
  CudnnLibrary(const CudnnLibrary&) = delete;
  CudnnLibrary& operator=(const CudnnLibrary&) = delete;
  ~CudnnLibrary();

  // The first of cuDNN 9's, 8's, the loader's default and the CUDA toolkit's copies that loads
  // with every entry point; kUnsupported naming what was tried when none does. Loaded once per
  // process (the first call's result, failure included, is every later call's).
  static Result<std::shared_ptr<const CudnnLibrary>> load();

  // OK, or kInternal naming `what` and cuDNN's message for `status`.
  Status check(cudnnStatus_t status, const char* what) const;

 private:
  static Result<std::shared_ptr<const CudnnLibrary>> open_first();

  void* handle_ = nullptr;  // dlopen's
};

}  // namespace edgefuse::gpu

#else
#define EDGEFUSE_HAVE_CUDNN_HEADERS 0
#endif
