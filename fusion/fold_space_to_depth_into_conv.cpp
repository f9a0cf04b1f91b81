// fold_space_to_depth_into_conv: the Focus stem (YOLOX, YOLOv5) — four strided Slices of X that
// take every second row and column at the four phases (dy, dx), a Concat of them on channels, and
// a Conv — becomes one Conv on X. The space-to-depth is a re-indexing of the Conv's window:
// with phase i = (dy, dx) at concat position i, C channels in X, and the Conv's kernel kh x kw,
// strides sh, sw and pads p,
//   W'[o, c, 2*ky + dy, 2*kx + dx] = W[o, i*C + c, ky, kx]
// on a kernel 2kh x 2kw with strides 2sh, 2sw and pads 2p (each side). Exact: output row y of the
// original reads stacked row h = sh*y + ky - p_top, which is X row 2h + dy; the new Conv reads X
// row 2sh*y + (2ky + dy) - 2p_top, the same row, and h lies in the padding exactly when that X row
// does (H is even and dy is 0 or 1). The bias, epilogue and residual stay as they were.
//
// Legality: the Conv is 2-D, group 1, dilations 1, auto_pad NOTSET, with an f32 constant weight
// [M, 4C, kh, kw]; its input is written by a Concat on axis 1 of exactly four values, read only by
// this Conv and not a graph output. Each Concat input is produced by a chain of Slices (one Slice
// slicing both axes, or one per axis) from one common f32 X [N, C, H, W] with C, H, W known (N may
// be dynamic) and H, W even; every Slice output is read only by Slices of the stem or by the Concat
// (chains may share a link) and is not a graph output; each chain slices axes 2 and 3 exactly once each (no other axis)
// with constant step 2, start 0 or 1 and end >= the dim (to the end); the four chains cover the four phases once each.
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "fusion/graph_edit.h"
#include "fusion/passes.h"
#include "runtime/ops/axes.h"

namespace edgefuse::fusion {

namespace {

constexpr int kPhases = 4;

struct Phase {
  ValueId source = kNoValue;   // X
  int64_t dy = -1, dx = -1;    // start on H and W
  std::vector<NodeId> slices;  // the chain, output end first
};

// [N, C, H, W] f32 with C, H, W known and H, W even (the batch may be dynamic: -1).
bool known_even_nchw(const TensorDesc& desc) {
  if (desc.dtype != DType::kF32 || desc.shape.size() != 4 || desc.shape[0] == 0) return false;
  for (size_t axis = 1; axis < 4; ++axis) {
    if (desc.shape[axis] <= 0) return false;
  }
  return desc.shape[2] % 2 == 0 && desc.shape[3] % 2 == 0;
}

// Applies one Slice's (start, end, axis, step) entries to `phase`; false when not a phase slice.
bool apply_slice(const Graph& graph, const Node& slice, const Shape& x_shape, Phase& phase) {
  const std::optional<ConstantSlice> bounds = constant_slice(graph, slice);
  if (!bounds) return false;
  const auto& [starts, ends, axes, steps] = *bounds;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + 4 : axes[i];
    if (axis != 2 && axis != 3) return false;
    const int64_t start = starts[i];
    if (steps[i] != 2 || (start != 0 && start != 1) || ends[i] < x_shape[static_cast<size_t>(axis)]) return false;
    int64_t& phase_start = axis == 2 ? phase.dy : phase.dx;
    if (phase_start != -1) return false;  // the axis is sliced twice
    phase_start = start;
  }
  return true;
}

// Follows the Slice chain that produces `value` back to its source; nullopt when not a phase.
std::optional<Phase> trace_phase(const Graph& graph, ValueId value) {
  Phase phase;
  ValueId current = value;
  std::vector<const Node*> chain;
  while (true) {
    const NodeId producer = graph.value(current).producer;
    if (producer < 0 || graph.node(producer).op != OpKind::kSlice || !graph.node(producer).has_input(0)) break;
    if (chain.size() == 2) return std::nullopt;  // two axes: at most two links
    phase.slices.push_back(producer);
    chain.push_back(&graph.node(producer));
    current = graph.node(producer).inputs[0];
  }
  if (chain.empty()) return std::nullopt;
  phase.source = current;
  const TensorDesc& x = graph.value(current).desc;
  if (!known_even_nchw(x)) return std::nullopt;
  for (const Node* slice : chain) {
    if (!apply_slice(graph, *slice, x.shape, phase)) return std::nullopt;
  }
  if (phase.dy < 0 || phase.dx < 0) return std::nullopt;
  return phase;
}

bool conv_geometry_foldable(const Node& conv) {
  if (conv.attrs.get_int("group", 1) != 1 || conv.attrs.get_string("auto_pad", "NOTSET") != "NOTSET") return false;
  for (int64_t d : conv.attrs.get_ints("dilations", {1, 1})) {
    if (d != 1) return false;
  }
  return conv.attrs.get_ints("strides", {1, 1}).size() == 2 && conv.attrs.get_ints("pads", {0, 0, 0, 0}).size() == 4;
}

// W'[o, c, 2*ky + dy, 2*kx + dx] = W[o, position(dy, dx)*C + c, ky, kx].
Tensor gathered_weight(const Tensor& w, const std::array<int64_t, kPhases>& position_of_phase, int64_t channels) {
  const int64_t m = w.dim(0), kh = w.dim(2), kw = w.dim(3);
  Tensor out = Tensor::empty(DType::kF32, {m, channels, 2 * kh, 2 * kw});
  const float* src = w.data<float>();
  float* dst = out.data<float>();
  for (int64_t o = 0; o < m; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t y = 0; y < 2 * kh; ++y) {
        for (int64_t x = 0; x < 2 * kw; ++x) {
          const int64_t position = position_of_phase[static_cast<size_t>((y % 2) * 2 + x % 2)];
          const int64_t in_channel = position * channels + c;
          dst[((o * channels + c) * 2 * kh + y) * 2 * kw + x] =
              src[((o * 4 * channels + in_channel) * kh + y / 2) * kw + x / 2];
        }
      }
    }
  }
  return out;
}

// Every Slice output is read only inside the stem (by its Slices or the Concat) and is not a graph
// output, so removing the stem loses nothing. Chains may share links (an exporter that merges the
// common x[..., dy::2, :] of two phases).
bool stem_is_private(const Graph& graph, const std::vector<std::vector<NodeId>>& consumers,
                     const std::vector<NodeId>& slices, NodeId concat) {
  for (NodeId slice : slices) {
    const ValueId out = graph.node(slice).outputs[0];
    if (is_graph_output(graph, out)) return false;
    for (NodeId reader : consumers[static_cast<size_t>(out)]) {
      if (reader != concat && std::find(slices.begin(), slices.end(), reader) == slices.end()) return false;
    }
  }
  return true;
}

std::vector<int64_t> doubled(std::vector<int64_t> values) {
  for (int64_t& v : values) v *= 2;
  return values;
}

}  // namespace

Status fold_space_to_depth_into_conv(Graph& graph, PassReport& report) {
  const std::vector<std::vector<NodeId>> consumers = value_consumers(graph);
  std::vector<bool> dead(graph.nodes().size(), false);
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& conv = graph.nodes()[n];
    if (conv.op != OpKind::kConv || !conv.has_input(0) || !conv.has_input(1) || !conv_geometry_foldable(conv)) continue;
    const ValueId stacked = conv.inputs[0];
    const NodeId concat_id = graph.value(stacked).producer;
    if (concat_id < 0 || consumers[static_cast<size_t>(stacked)].size() != 1 || is_graph_output(graph, stacked)) {
      continue;
    }
    const Node& concat = graph.node(concat_id);
    const int64_t axis = concat.attrs.get_int("axis", 0);
    if (concat.op != OpKind::kConcat || concat.input_count() != kPhases || (axis != 1 && axis != -3)) continue;

    std::array<int64_t, kPhases> position_of_phase = {-1, -1, -1, -1};  // index dy*2 + dx
    std::vector<Phase> phases;
    bool foldable = true;
    for (int i = 0; i < kPhases && foldable; ++i) {
      const ValueId part = concat.inputs[static_cast<size_t>(i)];
      std::optional<Phase> phase = trace_phase(graph, part);
      foldable = phase && (phases.empty() || phase->source == phases[0].source);
      if (!foldable) break;
      int64_t& position = position_of_phase[static_cast<size_t>(phase->dy * 2 + phase->dx)];
      foldable = position == -1;
      position = i;
      phases.push_back(std::move(*phase));
    }
    if (!foldable) continue;
    std::vector<NodeId> slices;
    for (const Phase& phase : phases) slices.insert(slices.end(), phase.slices.begin(), phase.slices.end());
    std::sort(slices.begin(), slices.end());
    slices.erase(std::unique(slices.begin(), slices.end()), slices.end());
    if (!stem_is_private(graph, consumers, slices, concat_id)) continue;

    const ValueId x = phases[0].source;
    const int64_t channels = graph.value(x).desc.shape[1];
    const Tensor* weight = constant_data(graph, conv.inputs[1]);
    if (weight == nullptr || weight->dtype() != DType::kF32 || weight->rank() != 4 ||
        weight->dim(1) != kPhases * channels) {
      continue;
    }

    Tensor new_weight = gathered_weight(*weight, position_of_phase, channels);
    const Shape kernel = {new_weight.dim(2), new_weight.dim(3)};
    const ValueId weight_id = graph.add_initializer(
        unique_value_name(graph, graph.value(conv.inputs[1]).name + "_space_to_depth"), std::move(new_weight));
    Node& fused = graph.nodes()[n];
    fused.inputs[0] = x;
    fused.inputs[1] = weight_id;
    fused.attrs.set("kernel_shape", kernel);
    fused.attrs.set("strides", doubled(fused.attrs.get_ints("strides", {1, 1})));
    fused.attrs.set("pads", doubled(fused.attrs.get_ints("pads", {0, 0, 0, 0})));
    fused.attrs.set("dilations", std::vector<int64_t>{1, 1});
    dead[static_cast<size_t>(concat_id)] = true;
    for (NodeId slice : slices) dead[static_cast<size_t>(slice)] = true;
    ++report.changes;
    report.details.push_back(make_message("folded ", slices.size(), " Slices and ", graph.describe_node(concat_id),
                                          " into ", graph.describe_node(static_cast<NodeId>(n)), " (kernel ", kernel[0],
                                          "x", kernel[1], ", reading '", graph.value(x).name, "')"));
  }
  if (report.changes > 0) compact(graph, dead);
  return Status::ok();
}

}  // namespace edgefuse::fusion
