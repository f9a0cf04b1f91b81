// fold_batchnorm_into_conv: Conv -> BatchNormalization becomes one Conv with scaled weights.
//
// With k[m] = scale[m] / sqrt(var[m] + epsilon), computed in float64, the channel affine
// (conv_channel_affine.h) of scale k[m] and shift bias[m] - mean[m] * k[m]:
//   W'[m, ...] = W[m, ...] * k[m]        B'[m] = B[m] * k[m] + bias[m] - mean[m] * k[m]   (B = 0 when absent)
// Legality: the BatchNormalization's input is produced by a Conv that may take a channel affine
// (affine_foldable_conv: constant f32 weight and bias, no epilogue yet, its output read by this
// BatchNormalization only and not a graph output); all four BatchNormalization parameters are
// f32 initializers with one entry per output channel; W' and B' are finite. W' and B' are new
// initializers (the originals may be shared).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "fusion/conv_channel_affine.h"
#include "fusion/graph_edit.h"
#include "fusion/passes.h"

namespace edgefuse::fusion {

namespace {

// The four BatchNormalization parameters (scale, B, mean, var) as f32 [channels] constants.
bool batchnorm_parameters(const Graph& graph, const Node& bn, int64_t channels, const float* out[4]) {
  for (int i = 0; i < 4; ++i) {
    const Tensor* t = bn.has_input(i + 1) ? constant_data(graph, bn.inputs[static_cast<size_t>(i + 1)]) : nullptr;
    if (t == nullptr || t->dtype() != DType::kF32 || t->rank() != 1 || t->dim(0) != channels) return false;
    out[i] = t->data<float>();
  }
  return true;
}

}  // namespace

Status fold_batchnorm_into_conv(Graph& graph, PassReport& report) {
  const std::vector<std::vector<NodeId>> consumers = value_consumers(graph);
  std::vector<bool> dead(graph.nodes().size(), false);
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& bn = graph.nodes()[n];
    if (bn.op != OpKind::kBatchNormalization || !bn.has_input(0)) continue;
    const std::optional<NodeId> conv = affine_foldable_conv(graph, consumers, bn.inputs[0], dead);
    if (!conv) continue;
    const int64_t channels = conv_weight(graph, *conv).dim(0);
    const float* params[4] = {};
    if (!batchnorm_parameters(graph, bn, channels, params)) continue;

    const double epsilon = bn.attrs.get_float("epsilon", 1e-5f);
    ChannelAffine affine{std::vector<double>(static_cast<size_t>(channels)),
                         std::vector<double>(static_cast<size_t>(channels))};
    for (size_t m = 0; m < static_cast<size_t>(channels); ++m) {
      const double k = static_cast<double>(params[0][m]) / std::sqrt(static_cast<double>(params[3][m]) + epsilon);
      affine.scale[m] = k;
      affine.shift[m] = params[1][m] - params[2][m] * k;
    }
    if (!fold_channel_affine_into_conv(graph, *conv, affine, graph.nodes()[n].outputs[0], "bn_folded")) continue;
    dead[n] = true;
    ++report.changes;
    report.details.push_back(
        make_message("folded ", graph.describe_node(static_cast<NodeId>(n)), " into ", graph.describe_node(*conv)));
  }
  if (report.changes > 0) compact(graph, dead);
  return Status::ok();
}

}  // namespace edgefuse::fusion
