// Runs a graph on an NVIDIA GPU: per distinct input-shape signature the graph is memory-planned
// (runtime/memory_plan.h) and lowered (lowering.h) once; the arena and the packed constants live
// in device memory, inputs and outputs move through pinned host buffers with asynchronous
// copies on the executor's own stream, and (when every step has a GPU kernel) the whole frame
// (upload, every kernel, download) is captured once as a CUDA graph and replayed as one launch.
// Steps without a GPU kernel run on the CPU between kernels (see LoweredPlan's fallbacks);
// such plans are launched step by step.
//
// Plain C++ interface: only runtime/cuda/*.cu include CUDA headers. Built when CUDA is enabled
// (EDGEFUSE_HAVE_CUDA); the tests skip when no device is present.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/cuda/fp16_calibration.h"
#include "runtime/cuda/library_use.h"
#include "runtime/cuda/lowering.h"
#include "runtime/graph.h"
#include "runtime/status.h"
#include "runtime/tensor.h"

namespace edgefuse {

struct CudaExecutorOptions {
  int device = 0;
  bool use_cuda_graph = true;  // capture each shape's plan as a CUDA graph and replay it
  bool fp16 = false;           // fp16 storage of activations (gpu::LoweringOptions)
  // fp16: 1x1 and group-1 Convs whose input is fp16 multiply on tensor cores where the device has
  // them (sm_70 and later; conv_gemm.h): binary16 products summed in f32, the f32 weights split
  // into two binary16 parts so that they keep about 22 bits. Off, or on older devices: f32 math.
  bool tensor_cores = true;
  // fp16: the first frame of each input shape picks the layers whose inputs stay f32
  // (gpu::calibrate_fp16), running candidate plans on the device on that frame; off: every
  // activation in fp16.
  bool fp16_calibration = true;
  gpu::Fp16CalibrationOptions calibration;
  // Where calibrations are kept across runs (gpu::PlanCache, keyed by model, shapes, device,
  // driver and settings); empty: calibrate on every start.
  std::filesystem::path plan_cache_dir;
  // Told what first-run work is done or loaded (calibration, cache hits and misses), for logs.
  std::function<void(const std::string&)> progress;
  // Only rows of one output that pass a threshold come back (gpu::RowFilter); the rest read as zeros.
  std::optional<gpu::RowFilter> row_filter;
  bool generic_conv = false;  // 1x1 and depthwise Convs through the general kernel too (gpu::LoweringOptions)
  // CUDA events around each frame's work on the stream (upload, kernels, download), read back by
  // last_device_ms(): what the device spent, apart from the host's staging copies and waiting.
  bool time_frames = false;
  // The first frame of each input shape times every tiling of each Conv GEMM step (conv_gemm.h) on
  // the device and keeps the fastest (YOLOX-nano: 83 steps in about 150 ms on an H200); off: the
  // tiling conv_gemm's cost model picks. Timing can choose differently from one executor (or
  // start) to the next, and another tiling sums in another order: outputs may then differ in the
  // last bits, as they do between TensorRT engines built twice.
  bool tune_gemm = true;
  // Every Conv GEMM step in this kGemmTilings index instead (tests and benchmarks), where allowed
  // (tensor-core tilings only on steps that may use them; the others take the cost model's);
  // -1: as above.
  int gemm_tiling = -1;
  // f32 1x1 Convs through cuBLAS (gpu::CublasGemm), f32 windowed group-1 Convs (the stem, dense
  // 3x3 Convs) through cuDNN (gpu::CudnnConv); see LibraryUse and gpu::ConvLibraries. Both are
  // loaded at run time; without them, or on fp16 operands, every step keeps our tilings.
  LibraryUse cublas = LibraryUse::kWhereFaster;
  LibraryUse cudnn = LibraryUse::kWhereFaster;
};

class CudaExecutor {
 public:
  // Fails (kUnsupported) when the device does not exist. Verifies the graph.
  static Result<std::unique_ptr<CudaExecutor>> create(std::shared_ptr<const Graph> graph,
                                                      CudaExecutorOptions options = {});
  ~CudaExecutor();
  CudaExecutor(const CudaExecutor&) = delete;
  CudaExecutor& operator=(const CudaExecutor&) = delete;

  // One host tensor per graph input, in order; returns the graph outputs as host tensors.
  Result<std::vector<Tensor>> run(std::span<const Tensor> inputs);

  // Host tensors over the executor's pinned staging buffers for inputs of these descriptions, once
  // a frame of their shapes has run (else kInvalidArgument). A producer that writes the next
  // frame there (e.g. preprocessing) and passes these tensors to run() saves run()'s copy into
  // staging (YOLOX-nano at 416: 2 MB a frame). Valid while the executor lives; not while a run is
  // in progress.
  Result<std::vector<Tensor>> staged_inputs(std::span<const TensorDesc> input_descs);

  // Writes the inputs on the device itself (e.g. GPU preprocessing): `fill` gets the device
  // buffers of inputs with these descriptions and the executor's stream (a cudaStream_t) and must
  // enqueue its writes on that stream; the frame then runs without uploading inputs.
  using InputFiller = std::function<Status(std::span<void* const> device_inputs, void* stream)>;
  Result<std::vector<Tensor>> run_filled(std::span<const TensorDesc> input_descs, const InputFiller& fill);

  const Graph& graph() const;
  // The lowered plan of the last run's shapes (steps and CPU fallbacks), or nullptr before a run.
  const gpu::LoweredPlan* last_plan() const;
  // Whether the last run replayed a captured CUDA graph.
  bool last_run_used_cuda_graph() const;
  // Device bytes held for the last run's shapes: arena, constants, inputs and outputs.
  size_t last_device_bytes() const;
  // The fp16 calibration of the last run's shapes, or nullptr (fp32, or calibration off).
  const gpu::Fp16Calibration* last_fp16_calibration() const;
  // Whether that calibration came from the plan cache rather than from runs on the device.
  bool last_fp16_calibration_cached() const;
  // With time_frames: milliseconds between the events around the last frame's work; else 0.
  double last_device_ms() const;
  // How many of the last run's steps ran through cuBLAS and through cuDNN (CudaExecutorOptions).
  int last_cublas_steps() const;
  int last_cudnn_steps() const;

 private:
  struct Impl;
  explicit CudaExecutor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace edgefuse
