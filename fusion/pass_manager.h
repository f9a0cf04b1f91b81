// The fuser's entry point: runs the graph passes in one fixed order, verifies the graph after
// each one, and reports what each changed. One switch turns fusion off for bisecting and for
// the fused-versus-eager benchmark (FusionOptions::enabled, or EDGEFUSE_NO_FUSION=1 in callers).
#pragma once

#include <string>
#include <vector>

#include "runtime/graph.h"
#include "runtime/status.h"

namespace edgefuse {

struct PassReport {
  std::string pass;                  // the pass's name, e.g. "fold_batchnorm_into_conv"
  int changes = 0;                   // rewrites applied (folded nodes, fused patterns, ...)
  std::vector<std::string> details;  // one line per rewrite, naming the nodes involved
};

struct FusionOptions {
  bool enabled = true;  // false: optimize_graph leaves the graph untouched and reports nothing
  // Whether fold_max_pool_into_conv_residual runs: for backends whose Conv kernels read a
  // residual through a max pool (the CPU's). The CUDA backend's do not: a graph for it is fused
  // with this off, or such Convs would run on the CPU.
  bool pooled_residuals = true;
  // Whether fold_transpose_into_conv_output runs: for backends whose 1x1 Convs write a
  // channels-last output (the CPU's; not the CUDA backend's, like pooled_residuals).
  bool output_transposes = true;
  // Passes not to run, by name (to measure what one is worth: bench/bench_passes.cpp). A name
  // that is no pass is an invalid argument.
  std::vector<std::string> skipped_passes;
};

// The options for a graph the CUDA executor runs.
inline FusionOptions cuda_fusion_options() {
  FusionOptions options;
  options.pooled_residuals = false;
  options.output_transposes = false;
  return options;
}

// Runs every pass in order. After each pass the graph is verified; a failure is an internal
// error naming the pass (a bug in the pass, not bad input). Errors from evaluating constants
// (a malformed model) are returned with the pass named as context.
Result<std::vector<PassReport>> optimize_graph(Graph& graph, const FusionOptions& options = {});

// The passes' names, in the order optimize_graph runs them.
std::vector<std::string> fusion_pass_names();

// True when the environment sets EDGEFUSE_NO_FUSION=1.
bool fusion_disabled_by_env();

// "fold_constants: 12 changes" lines, one per pass, for logs.
std::string format_pass_reports(const std::vector<PassReport>& reports, bool with_details = false);

}  // namespace edgefuse
