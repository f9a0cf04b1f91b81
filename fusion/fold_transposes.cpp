// fold_transposes: Transposes whose consumer can take the permutation itself.
//   - Transpose(Transpose(x, p), q) -> Transpose(x, r), r[i] = p[q[i]] (one pass over the data
//     instead of two); when r is the identity, readers read x and both nodes go.
//   - Transpose with the identity permutation: readers read its input.
//   - Gemm reading Transpose(m, [1, 0]) as A or B: the Gemm reads m with transA / transB flipped.
//
// Legality: the Transpose being folded away has one reader, that one slot of that node, and its
// output is not a graph output (the model's interface keeps its names and layouts); the
// permutation is known (the perm attribute, or the input's rank for the default reversal) and a
// valid permutation. A Transpose that is a graph output is kept even when it is the identity.
#include <numeric>
#include <optional>
#include <vector>

#include "fusion/graph_edit.h"
#include "fusion/passes.h"

namespace edgefuse::fusion {

namespace {

// The node's permutation: its perm attribute, or the reversal of its input's dims (ONNX's
// default), when that input's rank is known; nullopt when it is neither or not a permutation.
std::optional<std::vector<int64_t>> permutation(const Graph& graph, const Node& node) {
  if (node.op != OpKind::kTranspose || !node.has_input(0) || node.outputs.size() != 1) return std::nullopt;
  std::vector<int64_t> perm = node.attrs.get_ints("perm");
  if (perm.empty()) {
    const auto rank = static_cast<int64_t>(graph.value(node.inputs[0]).desc.shape.size());
    if (rank == 0) return std::nullopt;
    perm.resize(static_cast<size_t>(rank));
    std::iota(perm.rbegin(), perm.rend(), int64_t{0});
  }
  std::vector<bool> seen(perm.size(), false);
  for (int64_t axis : perm) {
    if (axis < 0 || axis >= static_cast<int64_t>(perm.size()) || seen[static_cast<size_t>(axis)]) return std::nullopt;
    seen[static_cast<size_t>(axis)] = true;
  }
  return perm;
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
