// fold_transposes: Transposes whose consumer can take the permutation itself.
//   - Transpose(Transpose(x, p), q) -> Transpose(x, r), r[i] = p[q[i]] (one pass over the data
//     instead of two); when r is the identity, readers read x and both nodes go.
//   - Transpose with the identity permutation: readers read its input.
//   - Gemm reading Transpose(m, [1, 0]) as A or B: the Gemm reads m with transA / transB flipped.
//   - Conv reading Transpose(x, [0, 3, 1, 2]) (or [0, 2, 1] in 1-D) as its input, as models
//     exported from NHWC frameworks start: the Conv reads x channels-last
//     (fused_input_channels_last, conv_problem.h), the full-frame copy is gone. Only for the Convs
//     whose CPU kernel fills its phase planes from that layout directly: group 1, and a kernel
//     other than 1x1 (known from an initializer weight).
//
// Legality: the Transpose being folded away has one reader, that one slot of that node, and its
// output is not a graph output (the model's interface keeps its names and layouts); the
// permutation is known (the perm attribute, or the input's rank for the default reversal) and a
// valid permutation. A Transpose that is a graph output is kept even when it is the identity.
#include <algorithm>
#include <optional>
#include <vector>

#include "fusion/graph_edit.h"
#include "fusion/passes.h"
#include "runtime/ops/conv_problem.h"
#include "runtime/ops/ops.h"

namespace edgefuse::fusion {

namespace {

// The node's permutation: its perm attribute, or the reversal of its input's dims (ONNX's
// default), when that input's rank is known; nullopt when it is neither or not a permutation.
std::optional<std::vector<int64_t>> permutation(const Graph& graph, const Node& node) {
  if (node.op != OpKind::kTranspose || node.inputs.size() != 1 || !node.has_input(0) || node.outputs.size() != 1) {
    return std::nullopt;  // one that transposes a fused Concat (several inputs) stays as it is
  }
  const size_t rank =
      node.attrs.has("perm") ? node.attrs.get_ints("perm").size() : graph.value(node.inputs[0]).desc.shape.size();
  if (rank == 0) return std::nullopt;
  Result<std::vector<int64_t>> perm = transpose_permutation(node.attrs, static_cast<int>(rank));
  if (!perm.is_ok()) return std::nullopt;
  return std::move(*perm);
}

// [0, r - 1, 1, ..., r - 2]: channels-last to channels-first.
bool moves_last_axis_to_channels(const std::vector<int64_t>& perm) {
  if (perm.size() < 3 || perm[0] != 0 || perm[1] != static_cast<int64_t>(perm.size()) - 1) return false;
  for (size_t i = 2; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i) - 1) return false;
  }
  return true;
}

// A Conv whose CPU kernel can read its input channels-last (see the header): 1-D or 2-D, group 1,
// a known weight whose kernel is not 1x1, not already reading channels-last.
bool reads_channels_last_well(const Graph& graph, const Node& conv) {
  if (conv.op != OpKind::kConv || conv.inputs.size() < 2 || conv.attrs.get_int("group", 1) != 1 ||
      conv.attrs.get_int(kConvInputChannelsLast, 0) != 0) {
    return false;
  }
  const Value& weight = graph.value(conv.inputs[1]);
  if (!weight.initializer) return false;
  const Shape& w = weight.initializer->shape();
  if (w.size() < 3 || w.size() > 4) return false;
  return !std::all_of(w.begin() + 2, w.end(), [](int64_t k) { return k == 1; });
}

bool is_identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// The only reader of `value` (a single input slot, and not a graph output), else -1.
NodeId sole_reader(const Graph& graph, const std::vector<std::vector<NodeId>>& consumers, ValueId value) {
  const std::vector<NodeId>& readers = consumers[static_cast<size_t>(value)];
  if (readers.size() != 1 || is_graph_output(graph, value)) return -1;
  return readers.front();
}

}  // namespace

Status fold_transposes(Graph& graph, PassReport& report) {
  std::vector<bool> dead(graph.nodes().size(), false);
  const std::vector<std::vector<NodeId>> consumers = value_consumers(graph);
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    Node& node = graph.nodes()[n];
    const std::optional<std::vector<int64_t>> perm = permutation(graph, node);
    if (!perm || dead[n]) continue;
    const ValueId out = node.outputs[0];
    const NodeId reader = sole_reader(graph, consumers, out);
    const std::string described = graph.describe_node(static_cast<NodeId>(n));

    if (is_identity(*perm) && !is_graph_output(graph, out)) {
      replace_uses(graph, out, node.inputs[0]);
      dead[n] = true;
      ++report.changes;
      report.details.push_back(make_message("removed ", described, " (identity permutation)"));
      continue;
    }
    if (reader < 0) continue;
    Node& next = graph.nodes()[static_cast<size_t>(reader)];

    if (const std::optional<std::vector<int64_t>> outer = permutation(graph, next);
        outer && outer->size() == perm->size()) {
      // out[i] = in[p[i]]; then outer reads out[q[i]] = in[p[q[i]]].
      std::vector<int64_t> composed(perm->size());
      for (size_t i = 0; i < composed.size(); ++i) composed[i] = (*perm)[static_cast<size_t>((*outer)[i])];
      next.inputs[0] = node.inputs[0];
      next.attrs.set("perm", composed);
      dead[n] = true;
      ++report.changes;
      report.details.push_back(make_message("merged ", described, " into ", graph.describe_node(reader)));
      continue;
    }
    if (moves_last_axis_to_channels(*perm) && next.inputs[0] == out && reads_channels_last_well(graph, next) &&
        graph.value(next.inputs[1]).initializer->shape().size() == perm->size()) {
      next.inputs[0] = node.inputs[0];
      next.attrs.set(kConvInputChannelsLast, int64_t{1});
      dead[n] = true;
      ++report.changes;
      report.details.push_back(
          make_message("folded ", described, " into ", graph.describe_node(reader), " (input read channels-last)"));
      continue;
    }
    if (next.op == OpKind::kGemm && *perm == std::vector<int64_t>{1, 0}) {
      for (size_t slot = 0; slot < 2 && slot < next.inputs.size(); ++slot) {
        if (next.inputs[slot] != out) continue;
        const char* attribute = slot == 0 ? "transA" : "transB";
        next.attrs.set(attribute, int64_t{next.attrs.get_int(attribute, 0) != 0 ? 0 : 1});
        next.inputs[slot] = node.inputs[0];
        dead[n] = true;
        ++report.changes;
        report.details.push_back(
            make_message("folded ", described, " into ", graph.describe_node(reader), " as ", attribute));
      }
    }
  }
  if (report.changes > 0) compact(graph, dead);
  return Status::ok();
}

}  // namespace edgefuse::fusion
