#include "fusion/conv_channel_affine.h"

#include <algorithm>
#include <cmath>

#include "fusion/graph_edit.h"
#include "runtime/ops/conv_problem.h"

namespace edgefuse::fusion {

std::optional<NodeId> affine_foldable_conv(const Graph& graph, const std::vector<std::vector<NodeId>>& consumers,
                                           ValueId value, const std::vector<bool>& dead) {
  const NodeId producer = graph.value(value).producer;
  if (producer < 0 || dead[static_cast<size_t>(producer)]) return std::nullopt;
  if (consumers[static_cast<size_t>(value)].size() != 1 || is_graph_output(graph, value)) return std::nullopt;
  const Node& conv = graph.node(producer);
  if (conv.op != OpKind::kConv || conv.outputs.size() != 1 || conv.input_count() > 3) return std::nullopt;
  if (conv.attrs.has("fused_activation") || conv.attrs.has(kConvOutputChannelsLast)) return std::nullopt;
  const Tensor* weight = constant_data(graph, conv.inputs[1]);
  if (weight == nullptr || weight->dtype() != DType::kF32 || weight->rank() < 3) return std::nullopt;
  if (conv.has_input(2)) {
    const Tensor* bias = constant_data(graph, conv.inputs[2]);
    if (bias == nullptr || bias->dtype() != DType::kF32 || bias->numel() != weight->dim(0)) return std::nullopt;
  }
  return producer;
}

const Tensor& conv_weight(const Graph& graph, NodeId conv) {
  return *constant_data(graph, graph.node(conv).inputs[1]);
}

bool fold_channel_affine_into_conv(Graph& graph, NodeId conv, const ChannelAffine& affine, ValueId output,
                                   const std::string& suffix) {
  const Node& node = graph.node(conv);
  const Tensor& weight = conv_weight(graph, conv);
  const Tensor* bias = node.has_input(2) ? constant_data(graph, node.inputs[2]) : nullptr;
  const int64_t channels = weight.dim(0);
  const int64_t per_channel = weight.numel() / std::max<int64_t>(channels, 1);
  Tensor new_weight = Tensor::empty(DType::kF32, weight.shape());
  Tensor new_bias = Tensor::empty(DType::kF32, {channels});
  const float* w = weight.data<float>();
  float* w_out = new_weight.data<float>();
  float* b_out = new_bias.data<float>();
  for (int64_t m = 0; m < channels; ++m) {
    const double scale = affine.scale[static_cast<size_t>(m)];
    for (int64_t i = m * per_channel; i < (m + 1) * per_channel; ++i) {
      w_out[i] = static_cast<float>(static_cast<double>(w[i]) * scale);
      if (!std::isfinite(w_out[i])) return false;
    }
    const double b = bias != nullptr ? static_cast<double>(bias->data<float>()[m]) : 0.0;
    b_out[m] = static_cast<float>(b * scale + affine.shift[static_cast<size_t>(m)]);
    if (!std::isfinite(b_out[m])) return false;
  }

  const std::string weight_name = graph.value(node.inputs[1]).name + "_" + suffix;
  const std::string bias_name = node.name + "_bias_" + suffix;
  const ValueId own_output = node.outputs[0];
  const ValueId weight_id = graph.add_initializer(unique_value_name(graph, weight_name), std::move(new_weight));
  const ValueId bias_id = graph.add_initializer(unique_value_name(graph, bias_name), std::move(new_bias));
  Node& fused = graph.nodes()[static_cast<size_t>(conv)];
  fused.inputs.resize(3, kNoValue);
  fused.inputs[1] = weight_id;
  fused.inputs[2] = bias_id;
  fused.outputs[0] = output;
  graph.value(output).producer = conv;
  graph.value(own_output).producer = -1;
  return true;
}

}  // namespace edgefuse::fusion
