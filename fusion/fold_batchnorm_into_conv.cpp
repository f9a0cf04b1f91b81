// fold_batchnorm_into_conv: Conv -> BatchNormalization becomes one Conv with scaled weights.
//
// With k[m] = scale[m] / sqrt(var[m] + epsilon), computed in float64:
//   W'[m, ...] = W[m, ...] * k[m]        B'[m] = (B[m] - mean[m]) * k[m] + bias[m]   (B = 0 when absent)
// Legality: the BatchNormalization's input is produced by a Conv with no fused residual or
// activation yet; that Conv output is read by this BatchNormalization only and is not a graph
// output; the Conv weight, optional bias and all four BatchNormalization parameters are f32
// initializers with one entry per output channel. W' and B' are new initializers (the originals may be shared).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

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
    const ValueId conv_out = bn.inputs[0];
    const NodeId producer = graph.value(conv_out).producer;
    if (producer < 0 || dead[static_cast<size_t>(producer)]) continue;
    const Node& conv = graph.nodes()[static_cast<size_t>(producer)];
    if (conv.op != OpKind::kConv || conv.input_count() > 3 || conv.attrs.has("fused_activation")) continue;
    if (consumers[static_cast<size_t>(conv_out)].size() != 1 || is_graph_output(graph, conv_out)) continue;
    const Tensor* weight = constant_data(graph, conv.inputs[1]);
    if (weight == nullptr || weight->dtype() != DType::kF32 || weight->rank() < 3) continue;
    const int64_t channels = weight->dim(0);
    const Tensor* bias = conv.has_input(2) ? constant_data(graph, conv.inputs[2]) : nullptr;
    if (conv.has_input(2) && (bias == nullptr || bias->dtype() != DType::kF32 || bias->numel() != channels)) continue;
    const float* params[4] = {};
    if (!batchnorm_parameters(graph, bn, channels, params)) continue;

    const double epsilon = bn.attrs.get_float("epsilon", 1e-5f);
    const int64_t per_channel = weight->numel() / std::max<int64_t>(channels, 1);
    Tensor new_weight = Tensor::empty(DType::kF32, weight->shape());
    Tensor new_bias = Tensor::empty(DType::kF32, {channels});
    const float* w = weight->data<float>();
    float* w_out = new_weight.data<float>();
    float* b_out = new_bias.data<float>();
    for (int64_t m = 0; m < channels; ++m) {
      const double k = static_cast<double>(params[0][m]) / std::sqrt(static_cast<double>(params[3][m]) + epsilon);
      for (int64_t i = m * per_channel; i < (m + 1) * per_channel; ++i) {
        w_out[i] = static_cast<float>(static_cast<double>(w[i]) * k);
      }
      const double b = bias != nullptr ? static_cast<double>(bias->data<float>()[m]) : 0.0;
      b_out[m] = static_cast<float>((b - params[2][m]) * k + params[1][m]);
    }

    const std::string conv_name = conv.name;
    const ValueId weight_id = graph.add_initializer(
        unique_value_name(graph, graph.value(conv.inputs[1]).name + "_bn_folded"), std::move(new_weight));
    const ValueId bias_id =
        graph.add_initializer(unique_value_name(graph, conv_name + "_bias_bn_folded"), std::move(new_bias));
    // add_initializer may reallocate the value list; nodes are not touched, but re-fetch anyway.
    Node& fused = graph.nodes()[static_cast<size_t>(producer)];
    fused.inputs.resize(3, kNoValue);
    fused.inputs[1] = weight_id;
    fused.inputs[2] = bias_id;
    const ValueId bn_out = bn.outputs[0];
    fused.outputs[0] = bn_out;
    graph.value(bn_out).producer = producer;
    graph.value(conv_out).producer = -1;
    dead[n] = true;
    ++report.changes;
    report.details.push_back(
        make_message("folded ", graph.describe_node(static_cast<NodeId>(n)), " into ", graph.describe_node(producer)));
  }
  if (report.changes > 0) compact(graph, dead);
  return Status::ok();
}

}  // namespace edgefuse::fusion
