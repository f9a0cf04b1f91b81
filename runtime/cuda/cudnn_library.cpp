#include "runtime/cuda/cudnn_library.h"

#if EDGEFUSE_HAVE_CUDNN_HEADERS

#include <type_traits>

#include <dlfcn.h>

namespace edgefuse::gpu {

CudnnLibrary::~CudnnLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

Result<std::shared_ptr<const CudnnLibrary>> CudnnLibrary::open_first() {
  constexpr const char* kNames[] = {"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so",
                                    "/usr/local/cuda/lib64/libcudnn.so.9", "/usr/local/cuda/lib64/libcudnn.so.8"};
  std::string tried;
  for (const char* name : kNames) {
    auto library = std::make_shared<CudnnLibrary>();
    library->handle_ = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library->handle_ == nullptr) {
      tried += (tried.empty() ? "" : ", ") + std::string(name);
      continue;
    }
    bool complete = true;
    const auto resolve = [&](auto& function, const char* symbol) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(library->handle_, symbol));
      complete = complete && function != nullptr;
    };
    decltype(&cudnnGetVersion) get_version = nullptr;
    resolve(get_version, "cudnnGetVersion");
    resolve(library->get_error_string, "cudnnGetErrorString");
    resolve(library->create, "cudnnCreate");
    resolve(library->destroy, "cudnnDestroy");
    resolve(library->set_stream, "cudnnSetStream");
    resolve(library->create_tensor, "cudnnCreateTensorDescriptor");
    resolve(library->set_tensor_4d, "cudnnSetTensor4dDescriptorEx");
    resolve(library->destroy_tensor, "cudnnDestroyTensorDescriptor");
    resolve(library->create_filter, "cudnnCreateFilterDescriptor");
    resolve(library->set_filter_4d, "cudnnSetFilter4dDescriptor");
    resolve(library->destroy_filter, "cudnnDestroyFilterDescriptor");
    resolve(library->create_convolution, "cudnnCreateConvolutionDescriptor");
    resolve(library->set_convolution_2d, "cudnnSetConvolution2dDescriptor");
    resolve(library->set_math_type, "cudnnSetConvolutionMathType");
    resolve(library->destroy_convolution, "cudnnDestroyConvolutionDescriptor");
    resolve(library->find_forward, "cudnnFindConvolutionForwardAlgorithmEx");
    resolve(library->forward_workspace_size, "cudnnGetConvolutionForwardWorkspaceSize");
    resolve(library->forward, "cudnnConvolutionForward");
    if (!complete) {
      tried += (tried.empty() ? "" : ", ") + std::string(name) + " (an entry point is missing)";
      continue;
    }
    // cudnnGetVersion: major * 1000 + minor * 100 + patch before cuDNN 9, major * 10000 + minor *
    // 100 + patch since.
    const size_t v = get_version();
    const size_t major_unit = v >= 90000 ? 10000 : 1000;
    library->path = name;
    library->version =
        std::to_string(v / major_unit) + "." + std::to_string(v % major_unit / 100) + "." + std::to_string(v % 100);
    return std::shared_ptr<const CudnnLibrary>(std::move(library));
  }
  return unsupported("cuDNN not found (tried ", tried, ")");
}

Result<std::shared_ptr<const CudnnLibrary>> CudnnLibrary::load() {
  // Once per process and kept, as cuBLAS is (cublas_library.cpp): loading it again per executor
  // costs far more than the memory it holds. Deliberately never freed.
  static const auto* const loaded = new Result<std::shared_ptr<const CudnnLibrary>>(open_first());
  return *loaded;
}

Status CudnnLibrary::check(cudnnStatus_t status, const char* what) const {
  if (status == CUDNN_STATUS_SUCCESS) return Status::ok();
  return Status(StatusCode::kInternal, make_message(what, " failed: ", get_error_string(status)));
}

}  // namespace edgefuse::gpu

#endif  // EDGEFUSE_HAVE_CUDNN_HEADERS
