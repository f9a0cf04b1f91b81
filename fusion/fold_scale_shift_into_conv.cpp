// fold_scale_shift_into_conv: Conv -> Mul / Add / Sub / Div by a per-channel (or scalar) constant
// becomes one Conv with scaled weights and a shifted bias, as exporters emit for a BatchNorm or a
// bias they did not fold (tf2onnx's BiasAdd, a normalisation's scale). Each op is y = a[m] * conv + b[m]:
//   Mul(conv, c), Mul(c, conv): a = c       Add(conv, c), Add(c, conv): b = c
//   Sub(conv, c): b = -c                     Sub(c, conv): a = -1, b = c
//   Div(conv, c): a = 1 / c
// folded into the weights and bias in float64 (conv_channel_affine.h). A chain (Conv -> Mul -> Add)
// folds link by link in one run.
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

#include "fusion/conv_channel_affine.h"
#include "fusion/graph_edit.h"
#include "fusion/passes.h"

namespace edgefuse::fusion {

namespace {

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

}  // namespace

Status fold_scale_shift_into_conv(Graph& graph, PassReport& report) {
  const std::vector<std::vector<NodeId>> consumers = value_consumers(graph);
  std::vector<bool> dead(graph.nodes().size(), false);
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& op = graph.nodes()[n];
    if (op.op != OpKind::kMul && op.op != OpKind::kAdd && op.op != OpKind::kSub && op.op != OpKind::kDiv) continue;
    if (op.input_count() != 2 || op.outputs.size() != 1 || !op.has_input(0) || !op.has_input(1)) continue;
    // Which input is the Conv's output, and which the constant.
    const size_t conv_slot = constant_data(graph, op.inputs[0]) != nullptr ? 1 : 0;
    const Tensor* constant = constant_data(graph, op.inputs[1 - conv_slot]);
    if (constant == nullptr) continue;
    const std::optional<NodeId> conv = affine_foldable_conv(graph, consumers, op.inputs[conv_slot], dead);
    if (!conv) continue;
    const Tensor& weight = conv_weight(graph, *conv);
    const std::optional<ChannelAffine> affine =
        affine_of(op.op, *constant, 1 - conv_slot, weight.dim(0), weight.rank());
    if (!affine || !fold_channel_affine_into_conv(graph, *conv, *affine, op.outputs[0], "scaled")) continue;
    dead[n] = true;
    ++report.changes;
    report.details.push_back(
        make_message("folded ", graph.describe_node(static_cast<NodeId>(n)), " into ", graph.describe_node(*conv)));
  }
  if (report.changes > 0) compact(graph, dead);
  return Status::ok();
}

}  // namespace edgefuse::fusion
