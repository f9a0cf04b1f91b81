// fold_concat_into_transpose: a Concat read only by a Transpose becomes part of it: the Transpose
// reads the Concat's inputs and permutes their concatenation (kTransposeConcatAxis, ops.h), each
// input straight into its block of the output, so the concatenated tensor is never written.
// Detector heads end this way: YOLOX concatenates its three levels' [1, 85, cells] on the cells
// and transposes the result to [1, cells, 85], a copy of the whole output for nothing.
//
// Legality: the Concat's output has one reader, that Transpose's data input, and is not a graph
// output; its shape is static; the Transpose's permutation is known (perm, or the reversal) and
// moves the concatenated axis after dims that are all 1, so each input's part of the output is one
// contiguous block (the kernels also take one block per image, for a batch made dynamic after
// fusion); the Transpose does not fuse a Concat already.
#include <optional>
#include <vector>

#include "fusion/graph_edit.h"
#include "fusion/passes.h"
#include "runtime/ops/axes.h"
#include "runtime/ops/ops.h"

namespace edgefuse::fusion {

Status fold_concat_into_transpose(Graph& graph, PassReport& report) {
  std::vector<bool> dead(graph.nodes().size(), false);
  const std::vector<std::vector<NodeId>> consumers = value_consumers(graph);
  const std::vector<std::optional<TensorDesc>> descs = static_value_descs(graph);
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& concat = graph.nodes()[n];
    if (concat.op != OpKind::kConcat || concat.outputs.size() != 1 || !concat.attrs.has("axis")) continue;
    const ValueId joined = concat.outputs[0];
    const std::vector<NodeId>& readers = consumers[static_cast<size_t>(joined)];
    const std::optional<TensorDesc>& desc = descs[static_cast<size_t>(joined)];
    if (readers.size() != 1 || is_graph_output(graph, joined) || !desc) continue;
    Node& transpose = graph.nodes()[static_cast<size_t>(readers.front())];
    if (transpose.op != OpKind::kTranspose || transpose.inputs.size() != 1 || transpose.inputs[0] != joined ||
        transpose.attrs.has(kTransposeConcatAxis)) {
      continue;
    }
    const auto rank = static_cast<int>(desc->shape.size());
    const Result<std::vector<int64_t>> perm = transpose_permutation(transpose.attrs, rank);
    const Result<int> axis = normalize_axis(concat.attrs.get_int("axis", 0), rank, "axis");
    if (!perm.is_ok() || !axis.is_ok()) continue;
    const size_t moved_to = transposed_position(*perm, *axis);
    bool block_per_input = true;
    for (size_t d = 0; d < moved_to; ++d) {
      block_per_input = block_per_input && desc->shape[static_cast<size_t>((*perm)[d])] == 1;
    }
    if (!block_per_input) continue;

    transpose.inputs = concat.inputs;
    transpose.attrs.set(kTransposeConcatAxis, int64_t{*axis});
    dead[n] = true;
    ++report.changes;
    report.details.push_back(make_message("folded ", graph.describe_node(static_cast<NodeId>(n)), " into ",
                                          graph.describe_node(readers.front()), " (", concat.inputs.size(),
                                          " inputs, each permuted into its block)"));
  }
  if (report.changes > 0) compact(graph, dead);
  return Status::ok();
}

}  // namespace edgefuse::fusion
