#include "runtime/cuda/cublas_library.h"

#include <type_traits>

#include <dlfcn.h>

namespace edgefuse::gpu {

CublasLibrary::~CublasLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

Result<std::shared_ptr<const CublasLibrary>> CublasLibrary::open_first() {
  // The toolkit's runtime files last, for a runtime-only install (JetPack, a container) whose
  // lib64 is not on the loader's path.
  constexpr const char* kNames[] = {"libcublas.so.13",
                                    "libcublas.so.12",
                                    "libcublas.so.11",
                                    "libcublas.so",
                                    "/usr/local/cuda/lib64/libcublas.so.13",
                                    "/usr/local/cuda/lib64/libcublas.so.12",
                                    "/usr/local/cuda/lib64/libcublas.so.11",
                                    "/usr/local/cuda/lib64/libcublas.so"};
  std::string tried;
  for (const char* name : kNames) {
    auto library = std::make_shared<CublasLibrary>();
    library->handle_ = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library->handle_ == nullptr) {
      tried += (tried.empty() ? "" : ", ") + std::string(name);
      continue;
    }
    const auto resolve = [&](auto& function, const char* symbol) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(library->handle_, symbol));
      return function != nullptr;
    };
    GetProperty get_property = nullptr;
    if (!resolve(library->create, "cublasCreate_v2") || !resolve(library->destroy, "cublasDestroy_v2") ||
        !resolve(library->set_stream, "cublasSetStream_v2") ||
        !resolve(library->set_workspace, "cublasSetWorkspace_v2") || !resolve(library->sgemm, "cublasSgemm_v2") ||
        !resolve(library->sgemm_strided_batched, "cublasSgemmStridedBatched") ||
        !resolve(library->gemm_ex, "cublasGemmEx") || !resolve(get_property, "cublasGetProperty")) {
      tried += (tried.empty() ? "" : ", ") + std::string(name) + " (an entry point is missing)";
      continue;
    }
    int major = 0, minor = 0, patch = 0;
    get_property(MAJOR_VERSION, &major);
    get_property(MINOR_VERSION, &minor);
    get_property(PATCH_LEVEL, &patch);
    library->path = name;
    library->version = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
    return std::shared_ptr<const CublasLibrary>(std::move(library));
  }
  return unsupported("cuBLAS not found (tried ", tried, ")");
}

Result<std::shared_ptr<const CublasLibrary>> CublasLibrary::load() {
  // Once per process, and kept: cuBLAS (with cuBLASLt, over 500 MB) really unloads on dlclose,
  // and loading it again took 0.4-1 s, once for every executor. Deliberately never freed, so that
  // it is not unloaded during exit either.
  static const auto* const loaded = new Result<std::shared_ptr<const CublasLibrary>>(open_first());
  return *loaded;
}

Status cublas_status(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status::ok();
  return Status(StatusCode::kInternal, make_message(what, " failed: cuBLAS status ", static_cast<int>(status)));
}

}  // namespace edgefuse::gpu
