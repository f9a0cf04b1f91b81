#include "runtime/cuda/inference_backend.h"

#include <chrono>

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
  Result<std::vector<Tensor>> run_filled(std::span<const TensorDesc> input_descs, const InputFiller& fill) override {
    std::vector<Tensor> inputs;
    std::vector<void*> buffers;
    for (const TensorDesc& desc : input_descs) {
      inputs.push_back(Tensor::empty(desc.dtype, desc.shape));
      buffers.push_back(inputs.back().raw_data());
    }
    EF_RETURN_IF_ERROR(fill(buffers, nullptr));
    return executor_.run(inputs);
  }
  std::string description() const override {
    return make_message("cpu (", executor_.threads(), executor_.threads() == 1 ? " thread" : " threads",
                        executor_.batch_lanes() ? ", a batch as whole images per thread" : "",
                        note_.empty() ? "" : "; ", note_, ")");
  }
  bool on_gpu() const override { return false; }
  // Preprocessing a 1080p frame takes about 0.3 ms; the hold only bounds the spinning should the
  // run not follow.
  void prepare() override { executor_.wake_threads(std::chrono::milliseconds(5)); }

 private:
  Executor executor_;
  std::string note_;
};

#if defined(EDGEFUSE_HAVE_CUDA)
class CudaBackend final : public InferenceBackend {
 public:
  CudaBackend(std::unique_ptr<CudaExecutor> executor, std::string device_name, bool fp16)
      : executor_(std::move(executor)), device_name_(std::move(device_name)), fp16_(fp16) {}
  Result<std::vector<Tensor>> run(std::span<const Tensor> inputs) override { return executor_->run(inputs); }
  Result<std::vector<Tensor>> run_filled(std::span<const TensorDesc> input_descs, const InputFiller& fill) override {
    return executor_->run_filled(input_descs, fill);
  }
  // After the first frame in fp16, what its calibration kept in f32 and the error it measured.
  std::string description() const override {
    std::string text = make_message("cuda:0 ", device_name_, fp16_ ? ", fp16 storage" : ", fp32");
    if (const gpu::Fp16Calibration* c = executor_->last_fp16_calibration(); c != nullptr) {
      text += make_message(" (calibrated: ", c->kept_nodes.size(), " layer(s) kept f32, outputs within ", c->error,
                           " of f32)");
    }
    return text;
  }
  bool on_gpu() const override { return true; }

 private:
  std::unique_ptr<CudaExecutor> executor_;
  std::string device_name_;
  bool fp16_;
};

// The CUDA backend on device 0, or why there is none.
Result<std::unique_ptr<InferenceBackend>> create_cuda_backend(std::shared_ptr<const Graph> graph,
                                                              const GpuBackendOptions& options) {
  const std::vector<CudaDeviceInfo> devices = cuda_devices();
  if (devices.empty()) return unsupported("no CUDA device is visible");
  EF_ASSIGN_OR_RETURN(
      std::unique_ptr<CudaExecutor> executor,
      CudaExecutor::create(std::move(graph), CudaExecutorOptions{.device = 0,
                                                                 .use_cuda_graph = options.use_cuda_graph,
                                                                 .fp16 = options.fp16,
                                                                 .plan_cache_dir = options.plan_cache_dir,
                                                                 .progress = options.progress,
                                                                 .row_filter = options.row_filter}));
  return std::unique_ptr<InferenceBackend>(
      std::make_unique<CudaBackend>(std::move(executor), devices[0].name, options.fp16));
}
#else
Result<std::unique_ptr<InferenceBackend>> create_cuda_backend(std::shared_ptr<const Graph>, const GpuBackendOptions&) {
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

bool runs_on_gpu(InferenceDevice device) {
#if defined(EDGEFUSE_HAVE_CUDA)
  return device == InferenceDevice::kCuda || (device == InferenceDevice::kAuto && !cuda_devices().empty());
#else
  (void)device;
  return false;  // no CUDA backend built: every model runs on the CPU (cuda fails to start)
#endif
}

Result<std::unique_ptr<InferenceBackend>> create_inference_backend(std::shared_ptr<const Graph> graph,
                                                                   InferenceDevice device,
                                                                   const ExecutorOptions& cpu_options,
                                                                   const GpuBackendOptions& gpu_options) {
  std::string note;
  if (device != InferenceDevice::kCpu) {
    Result<std::unique_ptr<InferenceBackend>> gpu = create_cuda_backend(graph, gpu_options);
    if (gpu.is_ok()) return gpu;
    if (device == InferenceDevice::kCuda) return gpu.status().with_context("device cuda");
    note = make_message("auto: ", gpu.status().message());
  }
  EF_ASSIGN_OR_RETURN(Executor executor, Executor::create(std::move(graph), cpu_options));
  return std::unique_ptr<InferenceBackend>(std::make_unique<CpuBackend>(std::move(executor), std::move(note)));
}

}  // namespace edgefuse
