#include "runtime/cuda/inference_backend.h"

#if defined(EDGEFUSE_HAVE_CUDA)
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_executor.h"
#endif

namespace edgefuse {

namespace {

class CpuBackend final : public InferenceBackend {
 public:
  CpuBackend(Executor executor, std::string note) : executor_(std::move(executor)), note_(std::move(note)) {}
  Result<std::vector<Tensor>> run(std::span<const Tensor> inputs) override { return executor_.run(inputs); }
  std::string description() const override {
    return make_message("cpu (", executor_.threads(), executor_.threads() == 1 ? " thread" : " threads",
                        note_.empty() ? "" : "; ", note_, ")");
  }
  bool on_gpu() const override { return false; }

 private:
  Executor executor_;
  std::string note_;
};

#if defined(EDGEFUSE_HAVE_CUDA)
class CudaBackend final : public InferenceBackend {
 public:
  CudaBackend(std::unique_ptr<CudaExecutor> executor, std::string device_name)
      : executor_(std::move(executor)), device_name_(std::move(device_name)) {}
  Result<std::vector<Tensor>> run(std::span<const Tensor> inputs) override { return executor_->run(inputs); }
  std::string description() const override { return make_message("cuda:0 ", device_name_); }
  bool on_gpu() const override { return true; }

 private:
  std::unique_ptr<CudaExecutor> executor_;
  std::string device_name_;
};

// The CUDA backend on device 0, or why there is none.
Result<std::unique_ptr<InferenceBackend>> create_cuda_backend(std::shared_ptr<const Graph> graph) {
  const std::vector<CudaDeviceInfo> devices = cuda_devices();
  if (devices.empty()) return unsupported("no CUDA device is visible");
  EF_ASSIGN_OR_RETURN(std::unique_ptr<CudaExecutor> executor, CudaExecutor::create(std::move(graph)));
  return std::unique_ptr<InferenceBackend>(std::make_unique<CudaBackend>(std::move(executor), devices[0].name));
}
#else
Result<std::unique_ptr<InferenceBackend>> create_cuda_backend(std::shared_ptr<const Graph>) {
  return unsupported("this build has no CUDA backend (built without nvcc)");
}
#endif

}  // namespace

Result<InferenceDevice> parse_inference_device(std::string_view name) {
  if (name == "cpu") return InferenceDevice::kCpu;
  if (name == "cuda") return InferenceDevice::kCuda;
  if (name == "auto") return InferenceDevice::kAuto;
  return invalid_argument("device '", name, "' is not one of cpu, cuda, auto");
}

std::string_view inference_device_name(InferenceDevice device) {
  switch (device) {
    case InferenceDevice::kCpu:
      return "cpu";
    case InferenceDevice::kCuda:
      return "cuda";
    case InferenceDevice::kAuto:
      return "auto";
  }
  return "?";
}

Result<std::unique_ptr<InferenceBackend>> create_inference_backend(std::shared_ptr<const Graph> graph,
                                                                   InferenceDevice device,
                                                                   const ExecutorOptions& cpu_options) {
  std::string note;
  if (device != InferenceDevice::kCpu) {
    Result<std::unique_ptr<InferenceBackend>> gpu = create_cuda_backend(graph);
    if (gpu.is_ok()) return gpu;
    if (device == InferenceDevice::kCuda) return gpu.status().with_context("device cuda");
    note = make_message("auto: ", gpu.status().message());
  }
  EF_ASSIGN_OR_RETURN(Executor executor, Executor::create(std::move(graph), cpu_options));
  return std::unique_ptr<InferenceBackend>(std::make_unique<CpuBackend>(std::move(executor), std::move(note)));
}

}  // namespace edgefuse
