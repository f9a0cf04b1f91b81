// The on-disk cache of what a GPU plan costs to work out once, so that a restarted daemon does not
// pay for it again: the fp16 calibration (fp16_calibration.h), which runs the model about ten times
// on the first frame of each input shape, and the GEMM tilings timing picked for each Conv
// (conv_gemm.h; CudaExecutorOptions::tune_gemm), which also makes a restart compute the same bits.
//
// An entry is keyed by everything its result depends on: the graph (graph_fingerprint: nodes,
// attributes, value descriptions and constant bytes), the input shapes, the device (name and
// compute capability), the CUDA driver and runtime versions, the precision and the calibration
// settings, and the cache format. One file per key, named by the key's hash, holding the key's
// full text, which a load compares line by line: a hash collision, a truncated or foreign file, or
// names the graph no longer has are a miss (the work is redone and the entry rewritten), never an
// error. Entries name values and nodes, not ids. Writes go to a temporary file renamed into place,
// so a reader never sees half an entry.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/cuda/conv_gemm.h"
#include "runtime/cuda/fp16_calibration.h"
#include "runtime/graph.h"
#include "runtime/status.h"

namespace edgefuse::gpu {

// 16 hex digits (64-bit FNV-1a) over the graph's structure and constant data.
std::string graph_fingerprint(const Graph& graph);

// What an fp16 calibration depends on, as "name=value" lines. `device` names the device and the
// driver and runtime (CudaExecutor passes "NVIDIA H200 sm_90 driver 12080 runtime 13000").
std::string fp16_plan_key(const Graph& graph, std::span<const TensorDesc> inputs, const std::string& device,
                          const Fp16CalibrationOptions& options);

// What the GEMM tilings timed for a plan depend on: the graph, the input shapes, the device, driver
// and runtime, the precision, the values an fp16 plan keeps in f32, whether it may use tensor
// cores, the cuBLAS and cuDNN versions timed beside them ("none" when one was not), and the
// tilings compiled in.
std::string gemm_plan_key(const Graph& graph, std::span<const TensorDesc> inputs, const std::string& device, bool fp16,
                          std::span<const uint8_t> f32_values, bool tensor_cores, const std::string& cublas = "none",
                          const std::string& cudnn = "none");

// A Conv node and the tiling its GEMM step runs in, or whether cuBLAS (cublas_gemm.h) or cuDNN in
// one of its algorithms (cudnn_conv.h) runs it; the tiling then serves where the library cannot.
struct NodeTiling {
  NodeId node = -1;
  GemmTiling tiling;
  bool cublas = false;
  int32_t cudnn_algorithm = -1;  // cudnnConvolutionFwdAlgo_t, -1: not through cuDNN
};

class PlanCache {
 public:
  explicit PlanCache(std::filesystem::path directory) : directory_(std::move(directory)) {}

  const std::filesystem::path& directory() const { return directory_; }
  // The file an entry for `key` lives in.
  std::filesystem::path entry_path(const std::string& key) const;

  // The stored calibration for `key`, mapped onto `graph`'s ids; nothing on any kind of miss.
  std::optional<Fp16Calibration> load_fp16(const std::string& key, const Graph& graph) const;
  // Creates the directory when missing. Errors name the file.
  Status store_fp16(const std::string& key, const Graph& graph, const Fp16Calibration& calibration) const;

  // The stored tilings for `key`, by node of `graph`; nothing on any kind of miss, a tiling that
  // is not one of kGemmTilings included.
  std::optional<std::vector<NodeTiling>> load_gemm_tilings(const std::string& key, const Graph& graph) const;
  Status store_gemm_tilings(const std::string& key, const Graph& graph, std::span<const NodeTiling> tilings) const;

 private:
  // The entry's lines after its header and key; nothing when missing or made for another key.
  std::optional<std::vector<std::string>> read_entry(const std::string& key) const;
  // Header, key and `body` (lines ending in "end"), written to a temporary file renamed into place.
  Status write_entry(const std::string& key, const std::string& body) const;

  std::filesystem::path directory_;
};

// The cache directory a daemon uses by default: $EDGEFUSE_PLAN_CACHE, else $XDG_CACHE_HOME/edgefuse/plans,
// else $HOME/.cache/edgefuse/plans; empty when none is set ("off" in $EDGEFUSE_PLAN_CACHE turns it off).
std::filesystem::path default_plan_cache_directory();

}  // namespace edgefuse::gpu
