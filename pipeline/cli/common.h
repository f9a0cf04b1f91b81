// Pieces every command shares: the options they all declare (model, threads, reference kernels),
// model loading with errors that name the file, and the executor options those flags select.
#pragma once

#include <memory>
#include <string>

#include "pipeline/cli/args.h"
#include "runtime/cuda/inference_backend.h"
#include "runtime/executor.h"
#include "runtime/graph.h"

namespace edgefuse::cli {

OptionSpec model_option();       // --model FILE, required
OptionSpec threads_option();     // --threads N, 0 = one per core
OptionSpec reference_option();   // --reference: naive reference kernels
OptionSpec no_fuse_option();     // --no-fuse: run the graph as imported (also EDGEFUSE_NO_FUSION=1)
OptionSpec device_option();      // --device cpu|cuda|auto, default cpu
OptionSpec precision_option();   // --precision fp32|fp16, default fp32 (GPU storage)
OptionSpec input_size_option();  // --input-size WxH: the image size of a model exported with dynamic axes

// The device --device names; errors name the option.
Result<InferenceDevice> device_from_args(const ParsedArgs& args);
// The GPU options --precision selects; errors name the option.
Result<GpuBackendOptions> gpu_options_from_args(const ParsedArgs& args);

// Reads and imports an ONNX model; errors name the file.
Result<std::shared_ptr<Graph>> load_model(const std::string& path);
// The same for a detector, its image input sized by --input-size when the command declares it and
// it is given (models/detector/model_loading.h).
Result<std::shared_ptr<Graph>> load_detector_model(const std::string& path, const ParsedArgs& args);

// Runs the fuser's passes on `graph` unless --no-fuse or EDGEFUSE_NO_FUSION=1; returns whether
// it ran. Call after import and before building an executor or detector on the graph.
Result<bool> optimize_model(Graph& graph, const ParsedArgs& args);

// The executor options selected by --threads, --no-fuse (or EDGEFUSE_NO_FUSION=1: one buffer per
// tensor instead of the planned arena) and (when the command declares it) --reference. Every
// caller declares --no-fuse.
ExecutorOptions executor_options(const ParsedArgs& args, bool has_reference_option);

}  // namespace edgefuse::cli
