#include "fusion/pass_manager.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "fusion/passes.h"

namespace edgefuse {

namespace {

struct PassEntry {
  const char* name;
  Status (*run)(Graph& graph, PassReport& report);
  bool FusionOptions::*enabled_by = nullptr;  // the option that must be on for it to run, if any
};

// The order matters: identities go first so patterns see producers directly; constants are
// folded before the Focus-stem fold reads Slice bounds and BatchNorm folding needs constant
// weights; BatchNorm is folded before the activation is fused, since the activation follows the
// BatchNorm, not the Conv, and so are a scale and shift by constants (after BatchNorm, so that
// Conv -> BatchNorm -> Mul folds both; before the pointwise chains, which would take them); the residual Add is fused
// before the activation, which the Conv epilogue applies after the residual; an Add after an activation that is fused
// already is then fused as a residual after the activation. Transposes are folded once constants are (a Transpose of a
// constant is folded away there), and merged with each other before one takes a Concat. Pointwise chains are fused
// after the Conv epilogues, so they take only what those leave. A MaxPool is folded into a Conv's residual once the
// residual is fused and trimmed of its zero padding (BlazeFace pads its pooled shortcut with zero channels). A
// Transpose is folded into a Conv's output once every epilogue is on the Conv (the Transpose follows the activation);
// an activation that follows the Transpose (YOLOv5's Sigmoid) is fused after it.
// The SPP MaxPool cascade is independent of the rest.
constexpr PassEntry kPasses[] = {
    {"eliminate_identity", fusion::eliminate_identity},
    {"fold_constants", fusion::fold_constants},
    {"fold_transposes", fusion::fold_transposes},
    {"fold_split_into_concat", fusion::fold_split_into_concat},
    {"fold_concat_into_transpose", fusion::fold_concat_into_transpose},
    {"fold_space_to_depth_into_conv", fusion::fold_space_to_depth_into_conv},
    {"fold_batchnorm_into_conv", fusion::fold_batchnorm_into_conv},
    {"fold_scale_shift_into_conv", fusion::fold_scale_shift_into_conv},
    {"fuse_conv_add", fusion::fuse_conv_add},
    {"push_slices_into_concat_inputs", fusion::push_slices_into_concat_inputs},
    {"push_activations_into_concat_inputs", fusion::push_activations_into_concat_inputs},
    {"fuse_softmax_expectation", fusion::fuse_softmax_expectation},
    {"push_expectations_into_concat_inputs", fusion::push_expectations_into_concat_inputs},
    {"fuse_conv_activation", fusion::fuse_conv_activation},
    {"fuse_conv_activation_add", fusion::fuse_conv_activation_add},
    {"trim_zero_padded_residuals", fusion::trim_zero_padded_residuals},
    {"fold_max_pool_into_conv_residual", fusion::fold_max_pool_into_conv_residual, &FusionOptions::pooled_residuals},
    {"fold_transpose_into_conv_output", fusion::fold_transpose_into_conv_output, &FusionOptions::output_transposes},
    {"fuse_conv_activation_after_transposes", fusion::fuse_conv_activation_after_transposes,
     &FusionOptions::output_transposes},
    {"fold_slices_into_windowed_chains", fusion::fold_slices_into_windowed_chains},
    {"fuse_pointwise_chains", fusion::fuse_pointwise_chains},
    {"cascade_spp_maxpools", fusion::cascade_spp_maxpools},
};

}  // namespace

std::vector<std::string> fusion_pass_names() {
  std::vector<std::string> names;
  for (const PassEntry& entry : kPasses) names.emplace_back(entry.name);
  return names;
}

Result<std::vector<PassReport>> optimize_graph(Graph& graph, const FusionOptions& options) {
  std::vector<PassReport> reports;
  if (!options.enabled) return reports;
  const std::vector<std::string> names = fusion_pass_names();
  for (const std::string& skipped : options.skipped_passes) {
    if (std::find(names.begin(), names.end(), skipped) == names.end()) {
      return Status(StatusCode::kInvalidArgument, make_message("no fusion pass is named '", skipped, "'"));
    }
  }
  EF_RETURN_IF_ERROR(graph.verify().with_context("before fusion"));
  for (const PassEntry& entry : kPasses) {
    PassReport report;
    report.pass = entry.name;
    if (entry.enabled_by != nullptr && !(options.*entry.enabled_by)) {
      report.details.push_back("off for this backend");
      reports.push_back(std::move(report));
      continue;
    }
    if (std::find(options.skipped_passes.begin(), options.skipped_passes.end(), entry.name) !=
        options.skipped_passes.end()) {
      report.details.push_back("skipped on request");
      reports.push_back(std::move(report));
      continue;
    }
    Status ran = entry.run(graph, report);
    if (!ran.is_ok()) return ran.with_context(make_message("fusion pass ", entry.name));
    Status verified = graph.verify();
    if (!verified.is_ok()) {
      return Status(StatusCode::kInternal,
                    make_message("fusion pass ", entry.name, " left an invalid graph: ", verified.message()));
    }
    reports.push_back(std::move(report));
  }
  return reports;
}

bool fusion_disabled_by_env() {
  const char* value = std::getenv("EDGEFUSE_NO_FUSION");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

std::string format_pass_reports(const std::vector<PassReport>& reports, bool with_details) {
  std::string text;
  for (const PassReport& report : reports) {
    text += make_message(report.pass, ": ", report.changes, " change", report.changes == 1 ? "" : "s", "\n");
    if (!with_details) continue;
    for (const std::string& line : report.details) text += "  " + line + "\n";
  }
  return text;
}

}  // namespace edgefuse
