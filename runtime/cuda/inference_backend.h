// Where a model runs: the CPU executor or the CUDA executor behind one interface, chosen per model
// by `device: cpu | cuda | auto` (config and CLI). auto takes the GPU when this build has CUDA and
// a device is visible, and otherwise the CPU, saying why; cuda fails when no GPU can be used.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/cuda/lowering.h"
#include "runtime/cuda/plan_cache.h"
#include "runtime/executor.h"
#include "runtime/graph.h"
#include "runtime/status.h"
#include "runtime/tensor.h"

namespace edgefuse {

enum class InferenceDevice { kCpu, kCuda, kAuto };

Result<InferenceDevice> parse_inference_device(std::string_view name);  // "cpu" | "cuda" | "auto"
std::string_view inference_device_name(InferenceDevice device);

// Whether create_inference_backend would try the GPU first for `device` here: cuda, or auto with a
// CUDA device visible. Callers fuse the graph for that backend (cuda_fusion_options); should the
// CUDA executor then fail to start under auto, the CPU runs that graph as well. False in a build
// without the CUDA backend.
bool runs_on_gpu(InferenceDevice device);

// Writes a run's inputs where the backend keeps them: on the GPU the device buffers and the stream
// (a cudaStream_t) to enqueue the writes on, on the CPU host buffers and nullptr.
using InputFiller = std::function<Status(std::span<void* const> inputs, void* stream)>;

class InferenceBackend {
 public:
  virtual ~InferenceBackend() = default;
  // One tensor per graph input, in order; the graph outputs, as host tensors.
  virtual Result<std::vector<Tensor>> run(std::span<const Tensor> inputs) = 0;
  // The same with inputs of these descriptions written in place by `fill`.
  virtual Result<std::vector<Tensor>> run_filled(std::span<const TensorDesc> input_descs, const InputFiller& fill) = 0;
  // What runs the model, for logs: "cpu (4 threads)", "cuda:0 NVIDIA H200", and for auto the
  // reason it is not on the GPU.
  virtual std::string description() const = 0;
  virtual bool on_gpu() const = 0;
  // A run is about to start, its input being prepared meanwhile: the CPU wakes its worker threads
  // (Executor::wake_threads) so that they are ready for the first kernels. Safe from any thread,
  // a run included.
  virtual void prepare() {}
};

struct GpuBackendOptions {
  bool fp16 = false;           // fp16 activation storage, calibrated (CudaExecutorOptions); the CPU ignores it
  bool use_cuda_graph = true;  // replay each input shape's captured CUDA graph
  // Only an output's rows that pass a threshold are downloaded, the rest read as zeros
  // (gpu::RowFilter); the CPU returns every row, which decodes the same.
  std::optional<gpu::RowFilter> row_filter;
  // Where the fp16 calibration is kept between starts (gpu::PlanCache); empty: calibrate each start.
  std::filesystem::path plan_cache_dir = gpu::default_plan_cache_directory();
  // Told about first-run work (calibrating, or loading it from the cache), for logs; may be empty.
  std::function<void(const std::string&)> progress;
};

// `cpu_options` configure the CPU executor (threads, kernels, planning); the CUDA executor runs
// on device 0 with `gpu_options`. kUnsupported for cuda when the build has no CUDA or no device is
// visible.
Result<std::unique_ptr<InferenceBackend>> create_inference_backend(std::shared_ptr<const Graph> graph,
                                                                   InferenceDevice device,
                                                                   const ExecutorOptions& cpu_options = {},
                                                                   const GpuBackendOptions& gpu_options = {});

}  // namespace edgefuse
