#include "runtime/cuda/cuda_executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <type_traits>

#include "runtime/cuda/conv_gemm.h"
#include "runtime/cuda/conv_libraries.h"
#include "runtime/cuda/cuda_buffers.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/host_runner.h"
#include "runtime/cuda/plan_cache.h"
#include "runtime/cuda/step_launch.h"
#include "runtime/memory_plan.h"

namespace edgefuse {

namespace {

template <typename Step>
Status launch_step(const Step& step, cudaStream_t stream) {
  EF_CUDA_RETURN_IF_ERROR(static_cast<cudaError_t>(gpu::launch_on_stream(step, stream)));
  return Status::ok();
}

// Calls visit(step, params) for each step of `lowered` the tiled Conv GEMM runs (conv_gemm.h),
// params being its PointwiseConvStep or ConvGemmStep.
template <typename Visit>
void for_each_gemm_step(gpu::LoweredPlan& lowered, const Visit& visit) {
  for (gpu::LoweredStep& step : lowered.steps) {
    if (auto* p = std::get_if<gpu::PointwiseConvStep>(&step.params)) visit(step, *p);
    if (auto* p = std::get_if<gpu::ConvGemmStep>(&step.params)) visit(step, *p);
  }
}

// Everything one input-shape signature needs on the device.
struct ShapeState {
  gpu::LoweredPlan lowered;
  DeviceBytes arena;
  DeviceBytes constants;
  DeviceBytes scratch;              // the row filter's index and compact buffers
  PinnedBytes pinned_index;         // the row filter's index buffer, downloaded every frame
  std::vector<float> compact;       // host copy of the passing rows
  std::vector<DeviceBytes> inputs;  // per graph input
  std::vector<DeviceBytes> outputs;
  std::vector<PinnedBytes> pinned_inputs;
  std::vector<PinnedBytes> pinned_outputs;
  gpu::Bindings bindings;  // device addresses
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t graph_exec = nullptr;
  // The same frame without the input uploads, for inputs the caller writes on the device.
  cudaGraph_t filled_graph = nullptr;
  cudaGraphExec_t filled_graph_exec = nullptr;
  bool capture_failed = false;  // frames of this shape launch step by step
  size_t device_bytes = 0;
  gpu::LibrarySteps library_steps;  // steps that run through cuBLAS and cuDNN
  std::optional<gpu::Fp16Calibration> calibration;
  bool calibration_cached = false;

  ~ShapeState() {
    if (graph_exec != nullptr) cudaGraphExecDestroy(graph_exec);
    if (graph != nullptr) cudaGraphDestroy(graph);
    if (filled_graph_exec != nullptr) cudaGraphExecDestroy(filled_graph_exec);
    if (filled_graph != nullptr) cudaGraphDestroy(filled_graph);
  }
};

}  // namespace

struct CudaExecutor::Impl {
  std::shared_ptr<const Graph> graph;
  CudaExecutorOptions options;
  cudaStream_t stream = nullptr;
  std::map<std::vector<Shape>, std::unique_ptr<ShapeState>> states;
  ShapeState* last = nullptr;
  bool last_used_graph = false;
  std::string device_key;                         // the device, driver and runtime, for plan cache keys
  std::unique_ptr<gpu::ConvLibraries> libraries;  // cuBLAS and cuDNN, bound to `stream`
  bool tensor_cores = false;  // options.fp16 and options.tensor_cores, on a device of sm_70 or later

  cudaEvent_t frame_start = nullptr;  // time_frames
  cudaEvent_t frame_stop = nullptr;
  double last_device_ms = 0;

  ~Impl() {
    states.clear();
    libraries.reset();  // their handles are bound to `stream`
    if (frame_start != nullptr) cudaEventDestroy(frame_start);
    if (frame_stop != nullptr) cudaEventDestroy(frame_stop);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }

  // Writes the current frame's inputs into a state's device buffers, enqueued on `stream`.
  using InputLoader = std::function<Status(ShapeState& state)>;

  // The state of these input shapes, built on first use (`load` gives the frame, for calibration).
  Result<ShapeState*> state_for(std::span<const TensorDesc> inputs, const InputLoader& load);
  Status build(ShapeState& state, std::span<const TensorDesc> inputs, const gpu::LoweringOptions& lowering);
  // fp16 calibration on the current frame: the f32 plan's outputs, then candidate plans
  // (fp16_calibration.h), each built, run once and freed.
  Result<gpu::Fp16Calibration> calibrate(std::span<const TensorDesc> inputs, const InputLoader& load);
  // The calibration from the plan cache, else calibrate() and store it there.
  Status calibrate_or_load(ShapeState& state, std::span<const TensorDesc> inputs, const InputLoader& load);
  void report(const std::string& message) const {
    if (options.progress) options.progress(message);
  }
  // Loads the inputs, runs every step once without a CUDA graph and returns all outputs (no row
  // filter).
  Result<std::vector<Tensor>> run_once(ShapeState& state, const InputLoader& load);
  // Times each GEMM step of a built state in every tiling and keeps the fastest in its parameters
  // (before the first frame: the timed launches scribble over the arena).
  Status tune_gemm(ShapeState& state);
  // The tilings the plan cache holds for this plan, else tune_gemm and store its choice there.
  Status tune_or_load_gemm(ShapeState& state, std::span<const TensorDesc> inputs);
  // Captures the frame (with or without the input uploads) as a CUDA graph.
  Status capture(ShapeState& state, bool upload_inputs, cudaGraph_t& graph, cudaGraphExec_t& exec);
  // Uploads the inputs (unless the caller wrote them on the device), runs every step and
  // downloads the outputs, all on `stream`.
  Status enqueue_frame(ShapeState& state, bool upload_inputs = true);
  // Runs the frame of `state` (graph or launches) and returns its outputs on the host.
  Result<std::vector<Tensor>> finish_frame(ShapeState& state, bool upload_inputs);
  Status run_fallback(ShapeState& state, const gpu::LoweredStep& step);
  // After a frame: each batch element's passing rows (as many as its count), scattered into `output`.
  Status download_filtered_rows(ShapeState& state, Tensor& output);
};

Status CudaExecutor::Impl::download_filtered_rows(ShapeState& state, Tensor& output) {
  const gpu::RowFilterLayout& filter = *state.lowered.row_filter;
  const auto* index = static_cast<const uint32_t*>(state.pinned_index.get());
  const auto* compact = static_cast<const std::byte*>(gpu::resolve(state.bindings, filter.compact));
  const size_t element_bytes = static_cast<size_t>(filter.rows) * filter.row_bytes();
  for (int64_t b = 0; b < filter.batch; ++b) {
    const auto count = std::min<int64_t>(index[b * (filter.rows + 1)], filter.rows);
    if (count == 0) continue;
    const size_t offset = static_cast<size_t>(b) * element_bytes;
    EF_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(reinterpret_cast<std::byte*>(state.compact.data()) + offset,
                                            compact + offset, static_cast<size_t>(count) * filter.row_bytes(),
                                            cudaMemcpyDeviceToHost, stream));
  }
  EF_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  gpu::scatter_filtered_rows(filter, index, state.compact.data(), output);
  return Status::ok();
}

Result<ShapeState*> CudaExecutor::Impl::state_for(std::span<const TensorDesc> inputs, const InputLoader& load) {
  std::vector<Shape> signature;
  for (const TensorDesc& input : inputs) signature.push_back(input.shape);
  auto found = states.find(signature);
  if (found != states.end()) return found->second.get();
  auto state = std::make_unique<ShapeState>();
  gpu::LoweringOptions lowering{.fp16_storage = options.fp16,
                                .tensor_cores = tensor_cores,
                                .row_filter = options.row_filter,
                                .generic_conv = options.generic_conv};
  if (options.fp16 && options.fp16_calibration) {
    EF_RETURN_IF_ERROR(calibrate_or_load(*state, inputs, load));
    lowering.f32_values = state->calibration->f32_values;
  }
  EF_RETURN_IF_ERROR(build(*state, inputs, lowering));
  libraries->load_for(state->lowered, state->bindings, options.tune_gemm && options.gemm_tiling < 0);
  if (options.gemm_tiling >= 0) {
    // Where the forced tiling is not allowed (tensor cores on an f32 input), the cost model's.
    const gpu::GemmTiling& forced = gpu::kGemmTilings[options.gemm_tiling];
    for_each_gemm_step(state->lowered, [&](gpu::LoweredStep&, auto& params) {
      params.gemm_tiling = gpu::gemm_tiling_allowed(forced, params.tensor_cores) ? options.gemm_tiling : -1;
    });
  } else if (options.tune_gemm) {
    EF_RETURN_IF_ERROR(tune_or_load_gemm(*state, inputs));
  }
  // Tuning and the plan cache chose libraries for some steps, kAlways for all: each keeps its
  // library only where this executor can run it (a cached choice may come from another build).
  EF_RETURN_IF_ERROR(libraries->settle(state->lowered, state->bindings));
  state->library_steps = gpu::ConvLibraries::count(state->lowered);
  return states.emplace(std::move(signature), std::move(state)).first->second.get();
}

Status CudaExecutor::Impl::tune_gemm(ShapeState& state) {
  constexpr int kLaunches = 10;  // per tiling, after one warm-up: a few microseconds each
  const auto start = std::chrono::steady_clock::now();
  int tuned = 0;
  Status failure = Status::ok();
  libraries->begin_tuning(state.constants.get(), state.lowered.constants.size());
  for_each_gemm_step(state.lowered, [&](gpu::LoweredStep& step, auto& params) {
    using Step = std::decay_t<decltype(params)>;
    if (!failure.is_ok()) return;
    float ms[gpu::kGemmTilingCount] = {};
    const Step bound = std::get<Step>(gpu::bind_step(step, state.bindings));
    if (const int error = gpu::time_gemm_tilings(bound, stream, kLaunches, ms); error != 0) {
      failure = Status(StatusCode::kInternal,
                       make_message("timing GEMM tilings: ", cudaGetErrorString(static_cast<cudaError_t>(error))));
      return;
    }
    const auto best = std::min_element(std::begin(ms), std::end(ms));
    params.gemm_tiling = static_cast<int32_t>(best - std::begin(ms));
    ++tuned;
    failure = libraries->tune(bound, *best, params, graph->describe_node(step.node)).with_context("timing libraries");
  });
  EF_RETURN_IF_ERROR(failure);
  report(make_message("tuned the tiling of ", tuned, " GEMM steps in ",
                      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(),
                      " ms", libraries->tuning_summary()));
  return Status::ok();
}

Status CudaExecutor::Impl::tune_or_load_gemm(ShapeState& state, std::span<const TensorDesc> inputs) {
  std::optional<gpu::PlanCache> cache;
  std::string key;
  if (!options.plan_cache_dir.empty()) {
    cache.emplace(options.plan_cache_dir);
    key = gpu::gemm_plan_key(*graph, inputs, device_key, options.fp16, state.lowered.options.f32_values,
                             state.lowered.options.tensor_cores, libraries->timed_cublas_version(),
                             libraries->timed_cudnn_version());
    if (std::optional<std::vector<gpu::NodeTiling>> hit = cache->load_gemm_tilings(key, *graph)) {
      std::map<NodeId, int> index;
      std::map<NodeId, const gpu::NodeTiling*> stored;
      for (const gpu::NodeTiling& t : *hit) {
        index[t.node] = gpu::gemm_tiling_index(t.tiling);
        stored[t.node] = &t;
      }
      bool complete = true;
      for_each_gemm_step(state.lowered, [&](gpu::LoweredStep& step, auto&) {
        complete = complete && index.count(step.node) == 1 && index[step.node] >= 0;
      });
      if (complete) {
        for_each_gemm_step(state.lowered, [&](gpu::LoweredStep& step, auto& params) {
          params.gemm_tiling = index[step.node];
          if constexpr (std::is_same_v<std::decay_t<decltype(params)>, gpu::PointwiseConvStep>) {
            params.cublas = stored[step.node]->cublas;
          } else {
            params.cudnn_algorithm = stored[step.node]->cudnn_algorithm;
          }
        });
        report(make_message("GEMM tilings loaded from ", cache->entry_path(key).string()));
        return Status::ok();
      }
    }
  }
  EF_RETURN_IF_ERROR(tune_gemm(state));
  if (cache) {
    std::vector<gpu::NodeTiling> chosen;
    for_each_gemm_step(state.lowered, [&](gpu::LoweredStep& step, auto& params) {
      gpu::NodeTiling tiling{step.node, gpu::kGemmTilings[params.gemm_tiling]};
      if constexpr (std::is_same_v<std::decay_t<decltype(params)>, gpu::PointwiseConvStep>) {
        tiling.cublas = params.cublas;
      } else {
        tiling.cudnn_algorithm = params.cudnn_algorithm;
      }
      chosen.push_back(tiling);
    });
    const Status stored = cache->store_gemm_tilings(key, *graph, chosen);
    report(stored.is_ok() ? make_message("GEMM tilings stored in ", cache->entry_path(key).string())
                          : make_message("GEMM tilings not cached: ", stored.message()));
  }
  return Status::ok();
}

Result<std::vector<Tensor>> CudaExecutor::Impl::run_once(ShapeState& state, const InputLoader& load) {
  EF_RETURN_IF_ERROR(load(state));
  EF_RETURN_IF_ERROR(enqueue_frame(state, false));
  EF_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  std::vector<Tensor> outputs;
  for (size_t j = 0; j < state.outputs.size(); ++j) {
    const TensorDesc& desc = state.lowered.output_descs[j];
    outputs.push_back(Tensor::empty(desc.dtype, desc.shape));
    if (desc.nbytes() > 0) std::memcpy(outputs.back().raw_data(), state.pinned_outputs[j].get(), desc.nbytes());
  }
  return outputs;
}

Result<gpu::Fp16Calibration> CudaExecutor::Impl::calibrate(std::span<const TensorDesc> inputs,
                                                           const InputLoader& load) {
  std::vector<Tensor> reference;
  {
    ShapeState f32;
    EF_RETURN_IF_ERROR(build(f32, inputs, gpu::LoweringOptions{.generic_conv = options.generic_conv}));
    EF_ASSIGN_OR_RETURN(reference, run_once(f32, load));
  }
  const auto evaluate = [&](const std::vector<uint8_t>& f32_values) -> Result<std::vector<Tensor>> {
    ShapeState candidate;
    EF_RETURN_IF_ERROR(build(candidate, inputs,
                             gpu::LoweringOptions{.fp16_storage = true,
                                                  .f32_values = f32_values,
                                                  .tensor_cores = tensor_cores,
                                                  .generic_conv = options.generic_conv}));
    return run_once(candidate, load);
  };
  return gpu::calibrate_fp16(*graph, reference, evaluate, options.calibration);
}

Status CudaExecutor::Impl::calibrate_or_load(ShapeState& state, std::span<const TensorDesc> inputs,
                                             const InputLoader& load) {
  std::string shapes;
  for (const TensorDesc& input : inputs) shapes += (shapes.empty() ? "" : ", ") + input.to_string();
  std::optional<gpu::PlanCache> cache;
  std::string key;
  if (!options.plan_cache_dir.empty()) {
    cache.emplace(options.plan_cache_dir);
    key = gpu::fp16_plan_key(*graph, inputs, device_key, options.calibration);
    if (std::optional<gpu::Fp16Calibration> hit = cache->load_fp16(key, *graph)) {
      state.calibration = std::move(*hit);
      state.calibration_cached = true;
      report(make_message("fp16 calibration for ", shapes, " loaded from ", cache->entry_path(key).string()));
      return Status::ok();
    }
  }
  report(make_message("fp16 calibration for ", shapes, ": first run on ", device_key,
                      ", running candidate plans on this frame (about ten runs of the model)"));
  EF_ASSIGN_OR_RETURN(state.calibration, calibrate(inputs, load));
  report(make_message("fp16 calibration done: ", state.calibration->kept_nodes.size(), " layer(s) kept f32, ",
                      state.calibration->evaluations, " runs"));
  if (cache) {
    const Status stored = cache->store_fp16(key, *graph, *state.calibration);
    report(stored.is_ok() ? make_message("fp16 calibration stored in ", cache->entry_path(key).string())
                          : make_message("fp16 calibration not cached: ", stored.message()));
  }
  return Status::ok();
}

Status CudaExecutor::Impl::build(ShapeState& state, std::span<const TensorDesc> inputs,
                                 const gpu::LoweringOptions& lowering) {
  EF_ASSIGN_OR_RETURN(MemoryPlan plan, plan_memory(*graph, inputs, gpu::gpu_plan_options()));
  EF_ASSIGN_OR_RETURN(state.lowered, gpu::lower_plan(*graph, std::move(plan), lowering));
  const gpu::LoweredPlan& lowered = state.lowered;

  EF_RETURN_IF_ERROR(device_alloc(state.arena, lowered.plan.arena_bytes));
  EF_RETURN_IF_ERROR(device_alloc(state.constants, lowered.constants.size()));
  EF_RETURN_IF_ERROR(device_alloc(state.scratch, lowered.scratch_bytes));
  state.device_bytes = lowered.plan.arena_bytes + lowered.constants.size() + lowered.scratch_bytes;
  if (lowered.row_filter) {
    EF_RETURN_IF_ERROR(pinned_alloc(state.pinned_index, lowered.row_filter->index_bytes()));
    state.compact.resize(
        static_cast<size_t>(lowered.row_filter->batch * lowered.row_filter->rows * lowered.row_filter->channels));
  }
  // Copies from pageable memory go through the executor's stream and are waited for: a plain
  // cudaMemcpy may return before its DMA lands, and our non-blocking stream does not wait for it.
  if (!lowered.constants.empty()) {
    EF_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(state.constants.get(), lowered.constants.data(), lowered.constants.size(),
                                            cudaMemcpyHostToDevice, stream));
    EF_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  }
  state.bindings.arena = state.arena.get();
  state.bindings.constants = state.constants.get();
  state.bindings.scratch = state.scratch.get();
  for (const TensorDesc& input : inputs) {
    state.inputs.emplace_back();
    state.pinned_inputs.emplace_back();
    EF_RETURN_IF_ERROR(device_alloc(state.inputs.back(), input.nbytes()));
    EF_RETURN_IF_ERROR(pinned_alloc(state.pinned_inputs.back(), input.nbytes()));
    state.bindings.inputs.push_back(state.inputs.back().get());
    state.device_bytes += input.nbytes();
  }
  for (const TensorDesc& desc : lowered.output_descs) {
    state.outputs.emplace_back();
    state.pinned_outputs.emplace_back();
    EF_RETURN_IF_ERROR(device_alloc(state.outputs.back(), desc.nbytes()));
    EF_RETURN_IF_ERROR(pinned_alloc(state.pinned_outputs.back(), desc.nbytes()));
    state.bindings.outputs.push_back(state.outputs.back().get());
    state.device_bytes += desc.nbytes();
  }

  return Status::ok();
}

Status CudaExecutor::Impl::capture(ShapeState& state, bool upload_inputs, cudaGraph_t& captured,
                                   cudaGraphExec_t& exec) {
  EF_CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const Status enqueued = enqueue_frame(state, upload_inputs);
  const cudaError_t ended = cudaStreamEndCapture(stream, &captured);
  EF_RETURN_IF_ERROR(enqueued);
  EF_CUDA_RETURN_IF_ERROR(ended);
  EF_CUDA_RETURN_IF_ERROR(cudaGraphInstantiateWithFlags(&exec, captured, 0));
  return Status::ok();
}

Status CudaExecutor::Impl::run_fallback(ShapeState& state, const gpu::LoweredStep& step) {
  EF_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  const gpu::LoweredPlan& lowered = state.lowered;
  // Values move as stored (f16 in fp16 storage mode) and convert on the host.
  std::vector<std::byte> staging;
  const auto read = [&](ValueId v, Tensor& tensor) -> Status {
    const gpu::BufferRef& ref = lowered.value_refs[static_cast<size_t>(v)];
    const void* from = gpu::resolve(state.bindings, ref);
    if (from == nullptr) return Status(StatusCode::kInternal, make_message("value ", v, " has no device storage"));
    staging.resize(gpu::stored_bytes(tensor.desc(), ref));
    EF_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(staging.data(), from, staging.size(), cudaMemcpyDeviceToHost, stream));
    EF_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
    gpu::decode_stored(staging.data(), ref, tensor);
    return Status::ok();
  };
  const auto write = [&](ValueId v, const Tensor& tensor) -> Status {
    const gpu::BufferRef& ref = lowered.value_refs[static_cast<size_t>(v)];
    void* to = gpu::resolve(state.bindings, ref);
    if (to == nullptr) return Status::ok();
    staging.resize(gpu::stored_bytes(tensor.desc(), ref));
    gpu::encode_stored(tensor, ref, staging.data());
    // On the stream, waited for: the next kernels on our non-blocking stream read it, and
    // `staging` is reused (build() says why not a plain cudaMemcpy).
    EF_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(to, staging.data(), staging.size(), cudaMemcpyHostToDevice, stream));
    EF_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
    return Status::ok();
  };
  return gpu::run_cpu_fallback(*graph, lowered, step, read, write);
}

Status CudaExecutor::Impl::enqueue_frame(ShapeState& state, bool upload_inputs) {
  const gpu::LoweredPlan& lowered = state.lowered;
  for (size_t i = 0; upload_inputs && i < state.inputs.size(); ++i) {
    const size_t bytes = lowered.plan.descs[static_cast<size_t>(graph->inputs()[i])].nbytes();
    if (bytes > 0) {
      EF_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(state.inputs[i].get(), state.pinned_inputs[i].get(), bytes, cudaMemcpyHostToDevice, stream));
    }
  }
  for (const gpu::LoweredStep& step : lowered.steps) {
    if (step.is_fallback()) {
      EF_RETURN_IF_ERROR(run_fallback(state, step));
      continue;
    }
    const gpu::StepParams params = gpu::bind_step(step, state.bindings);
    Status launched = Status::ok();
    std::visit(
        [&](const auto& p) {
          using Step = std::decay_t<decltype(p)>;
          if constexpr (std::is_same_v<Step, gpu::PointwiseConvStep> || std::is_same_v<Step, gpu::ConvGemmStep>) {
            // Through a library where state_for settled it (loaded, the step eligible).
            launched = libraries->launch(p);
          } else if constexpr (!std::is_same_v<Step, gpu::CpuFallbackStep>) {
            launched = launch_step(p, stream);
          }
        },
        params);
    if (!launched.is_ok()) return launched.with_context(step.node >= 0 ? graph->describe_node(step.node) : "output");
  }
  const std::optional<gpu::RowFilterLayout>& filter = lowered.row_filter;
  if (filter) {  // the index buffer comes back now; the passing rows once its counts are known (run)
    EF_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(state.pinned_index.get(), gpu::resolve(state.bindings, filter->index),
                                            filter->index_bytes(), cudaMemcpyDeviceToHost, stream));
  }
  for (size_t j = 0; j < state.outputs.size(); ++j) {
    const size_t bytes = lowered.output_descs[j].nbytes();
    if (filter && static_cast<int>(j) == filter->filter.output) continue;
    if (bytes > 0) {
      EF_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(state.pinned_outputs[j].get(), state.outputs[j].get(), bytes,
                                              cudaMemcpyDeviceToHost, stream));
    }
  }
  return Status::ok();
}

CudaExecutor::CudaExecutor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaExecutor::~CudaExecutor() = default;

Result<std::unique_ptr<CudaExecutor>> CudaExecutor::create(std::shared_ptr<const Graph> graph,
                                                           CudaExecutorOptions options) {
  EF_ASSERT(graph != nullptr);
  EF_RETURN_IF_ERROR(graph->verify());
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || options.device < 0 || options.device >= count) {
    cudaGetLastError();  // clear the sticky error of a missing driver
    return unsupported("CUDA device ", options.device, " is not present (", count, " device(s) found)");
  }
  if (options.gemm_tiling >= gpu::kGemmTilingCount) {
    return invalid_argument("GEMM tiling ", options.gemm_tiling, " is not one of the ", gpu::kGemmTilingCount);
  }
  auto impl = std::make_unique<Impl>();
  impl->graph = std::move(graph);
  impl->options = options;
  EF_CUDA_RETURN_IF_ERROR(cudaSetDevice(options.device));
  EF_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&impl->stream, cudaStreamNonBlocking));
  impl->libraries = std::make_unique<gpu::ConvLibraries>(impl->stream, options.cublas, options.cudnn, options.progress);
  if (options.time_frames) {
    EF_CUDA_RETURN_IF_ERROR(cudaEventCreate(&impl->frame_start));
    EF_CUDA_RETURN_IF_ERROR(cudaEventCreate(&impl->frame_stop));
  }
  cudaDeviceProp properties{};
  int driver = 0, runtime = 0;
  EF_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&properties, options.device));
  EF_CUDA_RETURN_IF_ERROR(cudaDriverGetVersion(&driver));
  EF_CUDA_RETURN_IF_ERROR(cudaRuntimeGetVersion(&runtime));
  impl->device_key = make_message(properties.name, " sm_", properties.major, properties.minor, " driver ", driver,
                                  " runtime ", runtime);
  constexpr int kTensorCoreMajor = 7;  // wmma on binary16 (conv_gemm_tensor_cores.cuh)
  impl->tensor_cores = options.fp16 && options.tensor_cores && properties.major >= kTensorCoreMajor;
  if (options.fp16 && options.tensor_cores && !impl->tensor_cores) {
    impl->report(make_message(properties.name, " (sm_", properties.major, properties.minor,
                              ") has no tensor cores: fp16 Convs multiply in f32"));
  }
  return std::unique_ptr<CudaExecutor>(new CudaExecutor(std::move(impl)));
}

Result<std::vector<Tensor>> CudaExecutor::run(std::span<const Tensor> inputs) {
  Impl& impl = *impl_;
  const Graph& graph = *impl.graph;
  if (inputs.size() != graph.inputs().size()) {
    return invalid_argument("model takes ", graph.inputs().size(), " inputs, got ", inputs.size());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& value = graph.value(graph.inputs()[i]);
    if (!inputs[i].has_data() || inputs[i].dtype() != value.desc.dtype) {
      return invalid_argument("input '", value.name, "' is ", inputs[i].desc().to_string(), ", the model expects ",
                              value.desc.to_string());
    }
  }
  EF_CUDA_RETURN_IF_ERROR(cudaSetDevice(impl.options.device));
  std::vector<TensorDesc> descs;
  for (const Tensor& input : inputs) descs.push_back(input.desc());
  // Host inputs through a state's pinned buffers (finish_frame uploads them; calibration runs copy
  // them up themselves); inputs already there (staged_inputs) stay.
  const auto stage = [&](ShapeState& state) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      void* pinned = state.pinned_inputs[i].get();
      if (inputs[i].nbytes() > 0 && inputs[i].raw_data() != pinned) {
        std::memcpy(pinned, inputs[i].raw_data(), inputs[i].nbytes());
      }
    }
  };
  const auto load = [&](ShapeState& state) -> Status {
    stage(state);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].nbytes() == 0) continue;
      EF_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(state.inputs[i].get(), state.pinned_inputs[i].get(), inputs[i].nbytes(),
                                              cudaMemcpyHostToDevice, impl.stream));
    }
    return Status::ok();
  };
  EF_ASSIGN_OR_RETURN(ShapeState * state, impl.state_for(descs, load));
  stage(*state);
  return impl.finish_frame(*state, true);
}

Result<std::vector<Tensor>> CudaExecutor::staged_inputs(std::span<const TensorDesc> input_descs) {
  std::vector<Shape> signature;
  for (const TensorDesc& desc : input_descs) signature.push_back(desc.shape);
  const auto found = impl_->states.find(signature);
  if (found == impl_->states.end()) {
    std::string shapes;
    for (const TensorDesc& desc : input_descs) shapes += (shapes.empty() ? "" : ", ") + desc.to_string();
    return invalid_argument("no frame of inputs ", shapes, " has run yet: staging buffers exist once it has");
  }
  const ShapeState& state = *found->second;
  std::vector<Tensor> staged;
  for (size_t i = 0; i < input_descs.size(); ++i) {
    const TensorDesc& planned = state.lowered.plan.descs[static_cast<size_t>(impl_->graph->inputs()[i])];
    if (input_descs[i] != planned) {
      return invalid_argument("input ", i, " is ", input_descs[i].to_string(), ", planned as ", planned.to_string());
    }
    staged.push_back(Tensor::wrap(planned.dtype, planned.shape, state.pinned_inputs[i].get()));
  }
  return staged;
}

Result<std::vector<Tensor>> CudaExecutor::run_filled(std::span<const TensorDesc> input_descs, const InputFiller& fill) {
  Impl& impl = *impl_;
  const Graph& graph = *impl.graph;
  if (input_descs.size() != graph.inputs().size()) {
    return invalid_argument("model takes ", graph.inputs().size(), " inputs, got ", input_descs.size());
  }
  for (size_t i = 0; i < input_descs.size(); ++i) {
    const Value& value = graph.value(graph.inputs()[i]);
    if (input_descs[i].dtype != value.desc.dtype) {
      return invalid_argument("input '", value.name, "' is ", input_descs[i].to_string(), ", the model expects ",
                              value.desc.to_string());
    }
  }
  EF_CUDA_RETURN_IF_ERROR(cudaSetDevice(impl.options.device));
  // Enqueued on our stream: ordered before the frame.
  const auto load = [&](ShapeState& state) -> Status {
    std::vector<void*> device_inputs;
    for (const DeviceBytes& input : state.inputs) device_inputs.push_back(input.get());
    return fill(device_inputs, impl.stream);
  };
  EF_ASSIGN_OR_RETURN(ShapeState * state, impl.state_for(input_descs, load));
  EF_RETURN_IF_ERROR(load(*state));
  return impl.finish_frame(*state, false);
}

Result<std::vector<Tensor>> CudaExecutor::Impl::finish_frame(ShapeState& state, bool upload_inputs) {
  last = &state;
  bool graphs = options.use_cuda_graph && state.lowered.fallback_count() == 0 && !state.capture_failed;
  cudaGraphExec_t& exec = upload_inputs ? state.graph_exec : state.filled_graph_exec;
  if (graphs && exec == nullptr) {
    if (const Status captured = capture(state, upload_inputs, upload_inputs ? state.graph : state.filled_graph, exec);
        !captured.is_ok()) {
      // A step that cannot be captured (a library call a driver or library version refuses in a
      // capture): the same frame, launched step by step, where a real failure shows again.
      (void)cudaGetLastError();  // capture errors do not stick
      state.capture_failed = true;
      graphs = false;
      report(make_message("CUDA graph capture failed, this input shape's frames launch step by step: ",
                          captured.message()));
    }
  }
  last_used_graph = graphs;
  if (options.time_frames) EF_CUDA_RETURN_IF_ERROR(cudaEventRecord(frame_start, stream));
  if (graphs) {
    EF_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(exec, stream));
  } else {
    EF_RETURN_IF_ERROR(enqueue_frame(state, upload_inputs));
  }
  if (options.time_frames) EF_CUDA_RETURN_IF_ERROR(cudaEventRecord(frame_stop, stream));
  EF_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  if (options.time_frames) {
    float ms = 0;
    EF_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, frame_start, frame_stop));
    last_device_ms = ms;
  }
  std::vector<Tensor> outputs;
  const std::optional<gpu::RowFilterLayout>& filter = state.lowered.row_filter;
  for (size_t j = 0; j < state.outputs.size(); ++j) {
    const TensorDesc& desc = state.lowered.output_descs[j];
    outputs.push_back(Tensor::empty(desc.dtype, desc.shape));
    if (filter && static_cast<int>(j) == filter->filter.output) continue;
    if (desc.nbytes() > 0) std::memcpy(outputs.back().raw_data(), state.pinned_outputs[j].get(), desc.nbytes());
  }
  if (filter) EF_RETURN_IF_ERROR(download_filtered_rows(state, outputs[static_cast<size_t>(filter->filter.output)]));
  return outputs;
}

const Graph& CudaExecutor::graph() const {
  return *impl_->graph;
}

const gpu::LoweredPlan* CudaExecutor::last_plan() const {
  return impl_->last != nullptr ? &impl_->last->lowered : nullptr;
}

bool CudaExecutor::last_run_used_cuda_graph() const {
  return impl_->last_used_graph;
}

bool CudaExecutor::last_fp16_calibration_cached() const {
  return impl_->last != nullptr && impl_->last->calibration_cached;
}

const gpu::Fp16Calibration* CudaExecutor::last_fp16_calibration() const {
  return impl_->last != nullptr && impl_->last->calibration ? &*impl_->last->calibration : nullptr;
}

double CudaExecutor::last_device_ms() const {
  return impl_->last_device_ms;
}

int CudaExecutor::last_cublas_steps() const {
  return impl_->last != nullptr ? impl_->last->library_steps.cublas : 0;
}

int CudaExecutor::last_cudnn_steps() const {
  return impl_->last != nullptr ? impl_->last->library_steps.cudnn : 0;
}

size_t CudaExecutor::last_device_bytes() const {
  return impl_->last != nullptr ? impl_->last->device_bytes : 0;
}

}  // namespace edgefuse
