// fold_scale_shift_into_conv: Conv -> Mul / Add / Sub / Div by a per-channel (or scalar) constant
// becomes one Conv with scaled weights and a shifted bias, as exporters emit for a BatchNorm or a
// bias they did not fold (tf2onnx's BiasAdd, a normalisation's scale). Each op is y = a[m] * conv + b[m]:
//   Mul(conv, c), Mul(c, conv): a = c       Add(conv, c), Add(c, conv): b = c
//   Sub(conv, c): b = -c                     Sub(c, conv): a = -1, b = c
//   Div(conv, c): a = 1 / c
// and with a[m], b[m] (float64): W'[m, ...] = W[m, ...] * a[m], B'[m] = B[m] * a[m] + b[m] (B = 0
// when absent). A chain (Conv -> Mul -> Add) folds link by link in one run.
//
// Legality: the op reads the Conv output y once and a constant c; y is read by this op only and is
// not a graph output; the Conv has constant f32 weights (and bias, one per output channel), no
// residual, activation or channels-last output yet; c is f32, finite (Div: non-zero), of rank at
// most the output's, and constant over every axis but the channels: once aligned to the output's
// trailing axes, each of its dims is 1 except the channel axis, which is 1 or the channel count
// (so the op's output is shaped like y). The folded weights and bias must be finite.
// W' and B' are new initializers (the originals may be shared).
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "fusion/graph_edit.h"
#include "fusion/passes.h"
#include "runtime/ops/conv_problem.h"

namespace edgefuse::fusion {

namespace {

// y = scale[m] * conv + shift[m] over the output channels m.
struct ChannelAffine {
  std::vector<double> scale, shift;
};

// The Conv writing `value` when it may take a scale and shift, else nullopt.
std::optional<NodeId> foldable_conv(const Graph& graph, ValueId value, const std::vector<bool>& dead) {
  const NodeId producer = graph.value(value).producer;
  if (producer < 0 || dead[static_cast<size_t>(producer)]) return std::nullopt;
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

// c's value per output channel (of `channels`, on axis 1 of an output of rank `output_rank`), when
// c is a finite f32 constant that broadcasts along every other axis; else nullopt.
std::optional<std::vector<double>> per_channel_values(const Tensor& c, int64_t channels, int64_t output_rank) {
  if (c.dtype() != DType::kF32 || c.rank() > output_rank) return std::nullopt;
  const int64_t channel_axis = 1 - (output_rank - c.rank());  // c's axis aligned to the output's axis 1
  for (int64_t axis = 0; axis < c.rank(); ++axis) {
    const int64_t dim = c.dim(axis);
    if (dim != 1 && !(axis == channel_axis && dim == channels)) return std::nullopt;
  }
  const float* data = c.data<float>();
  std::vector<double> values(static_cast<size_t>(channels));
  for (int64_t m = 0; m < channels; ++m) {
    const float v = data[c.numel() == 1 ? 0 : m];
    if (!std::isfinite(v)) return std::nullopt;
    values[static_cast<size_t>(m)] = v;
  }
  return values;
}

// What `op` does to the Conv output as a channel affine, c being its other operand (its input
// `constant_slot`); nullopt when that is no scale and shift (Div(c, conv)) or c is illegal.
std::optional<ChannelAffine> affine_of(OpKind op, const Tensor& c, size_t constant_slot, int64_t channels,
                                       int64_t output_rank) {
  std::optional<std::vector<double>> values = per_channel_values(c, channels, output_rank);
  if (!values) return std::nullopt;
  ChannelAffine affine{std::vector<double>(static_cast<size_t>(channels), 1.0),
                       std::vector<double>(static_cast<size_t>(channels), 0.0)};
  for (size_t m = 0; m < values->size(); ++m) {
    const double v = (*values)[m];
    switch (op) {
      case OpKind::kMul:
        affine.scale[m] = v;
        break;
      case OpKind::kAdd:
        affine.shift[m] = v;
        break;
      case OpKind::kSub:
        if (constant_slot == 1) {
          affine.shift[m] = -v;
        } else {
          affine.scale[m] = -1.0;
          affine.shift[m] = v;
        }
        break;
      case OpKind::kDiv:
        if (constant_slot != 1 || v == 0.0) return std::nullopt;
        affine.scale[m] = 1.0 / v;
        break;
      default:
        return std::nullopt;
    }
  }
  return affine;
}

// W' and B' of `conv` under `affine`, or nullopt when one would not be finite.
std::optional<std::pair<Tensor, Tensor>> folded_parameters(const Graph& graph, const Node& conv,
                                                           const ChannelAffine& affine) {
  const Tensor& weight = *constant_data(graph, conv.inputs[1]);
  const Tensor* bias = conv.has_input(2) ? constant_data(graph, conv.inputs[2]) : nullptr;
  const int64_t channels = weight.dim(0);
  const int64_t per_channel = weight.numel() / std::max<int64_t>(channels, 1);
  Tensor new_weight = Tensor::empty(DType::kF32, weight.shape());
  Tensor new_bias = Tensor::empty(DType::kF32, {channels});
  const float* w = weight.data<float>();
  float* w_out = new_weight.data<float>();
  float* b_out = new_bias.data<float>();
  for (int64_t m = 0; m < channels; ++m) {
    const double a = affine.scale[static_cast<size_t>(m)];
    for (int64_t i = m * per_channel; i < (m + 1) * per_channel; ++i) {
      w_out[i] = static_cast<float>(static_cast<double>(w[i]) * a);
      if (!std::isfinite(w_out[i])) return std::nullopt;
    }
    const double b = bias != nullptr ? static_cast<double>(bias->data<float>()[m]) : 0.0;
    b_out[m] = static_cast<float>(b * a + affine.shift[static_cast<size_t>(m)]);
    if (!std::isfinite(b_out[m])) return std::nullopt;
  }
  return std::pair{std::move(new_weight), std::move(new_bias)};
}

}  // namespace

Status fold_scale_shift_into_conv(Graph& graph, PassReport& report) {
  const std::vector<std::vector<NodeId>> consumers = value_consumers(graph);
  std::vector<bool> dead(graph.nodes().size(), false);
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& op = graph.nodes()[n];
    if (op.op != OpKind::kMul && op.op != OpKind::kAdd && op.op != OpKind::kSub && op.op != OpKind::kDiv) continue;
    if (op.input_count() != 2 || op.outputs.size() != 1 || !op.has_input(0) || !op.has_input(1)) continue;
    // Which input is the Conv's output, and which the constant.
    std::optional<NodeId> producer;
    size_t conv_slot = 0;
    for (size_t slot : {size_t{0}, size_t{1}}) {
      if (constant_data(graph, op.inputs[slot]) != nullptr) continue;
      producer = foldable_conv(graph, op.inputs[slot], dead);
      conv_slot = slot;
      break;
    }
    if (!producer) continue;
    const ValueId conv_out = op.inputs[conv_slot];
    const Tensor* constant = constant_data(graph, op.inputs[1 - conv_slot]);
    if (constant == nullptr) continue;
    if (consumers[static_cast<size_t>(conv_out)].size() != 1 || is_graph_output(graph, conv_out)) continue;
    const Node& conv = graph.node(*producer);
    const Tensor& weight = *constant_data(graph, conv.inputs[1]);
    const std::optional<ChannelAffine> affine =
        affine_of(op.op, *constant, 1 - conv_slot, weight.dim(0), weight.rank());
    if (!affine) continue;
    std::optional<std::pair<Tensor, Tensor>> folded = folded_parameters(graph, conv, *affine);
    if (!folded) continue;

    const std::string conv_name = conv.name;
    const ValueId weight_id = graph.add_initializer(
        unique_value_name(graph, graph.value(conv.inputs[1]).name + "_scaled"), std::move(folded->first));
    const ValueId bias_id =
        graph.add_initializer(unique_value_name(graph, conv_name + "_bias_shifted"), std::move(folded->second));
    Node& fused = graph.nodes()[static_cast<size_t>(*producer)];
    fused.inputs.resize(3, kNoValue);
    fused.inputs[1] = weight_id;
    fused.inputs[2] = bias_id;
    const ValueId op_out = graph.nodes()[n].outputs[0];
    fused.outputs[0] = op_out;
    graph.value(op_out).producer = *producer;
    graph.value(conv_out).producer = -1;
    dead[n] = true;
    ++report.changes;
    report.details.push_back(
        make_message("folded ", graph.describe_node(static_cast<NodeId>(n)), " into ", graph.describe_node(*producer)));
  }
  if (report.changes > 0) compact(graph, dead);
  return Status::ok();
}

}  // namespace edgefuse::fusion
