// Small graph-editing helpers the passes share. The IR has no removal API, so a pass marks
// nodes dead and rewires uses; compact() then rebuilds the graph without the dead nodes and
// without values nothing refers to (graph inputs are always kept, so the executor's input list
// does not change).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runtime/graph.h"

namespace edgefuse::fusion {

// Who reads each value: per value id, the consumer node ids (one entry per input slot, so a node
// reading a value twice appears twice), in node order.
std::vector<std::vector<NodeId>> value_consumers(const Graph& graph);

bool is_graph_output(const Graph& graph, ValueId value);
bool is_graph_input(const Graph& graph, ValueId value);
bool is_initializer(const Graph& graph, ValueId value);

// The constant data of `value` when it is an initializer, else nullptr.
const Tensor* constant_data(const Graph& graph, ValueId value);

// The integers of node input `index` when it is a constant integer initializer, else nothing.
std::optional<std::vector<int64_t>> constant_ints(const Graph& graph, const Node& node, int index);

// A Slice's constant operands, all of one length: starts, ends, axes (0, 1, ... when absent; as
// given, negative ones included) and steps (1 when absent). Nothing when one is not constant or
// the lengths disagree.
struct ConstantSlice {
  std::vector<int64_t> starts, ends, axes, steps;
};
std::optional<ConstantSlice> constant_slice(const Graph& graph, const Node& slice);

// Per value: what is known before any node runs: initializers with their data, and graph inputs of
// fully static shape as meta tensors (the start of shape propagation and constant folding).
std::vector<std::optional<Tensor>> initially_known_values(const Graph& graph);

// Per value: its description when it is fully static (no -1 dim), inferred from static graph
// inputs and initializers through the shape rules; nullopt where a shape is dynamic or unknown.
std::vector<std::optional<TensorDesc>> static_value_descs(const Graph& graph);

// Replaces every node input that reads `from` with `to` (graph outputs are left alone).
void replace_uses(Graph& graph, ValueId from, ValueId to);

// Rebuilds `graph` without the nodes flagged in `dead` and without values that are then
// unreferenced (neither a graph input or output, nor read or written by a live node). Value and
// node ids change; names, order and contents are kept.
void compact(Graph& graph, const std::vector<bool>& dead);

// Rebuilds the node list with inserted[n] placed just before node n (inserted[nodes().size()], if
// present, after the last), then compacts it without the nodes flagged in `dead`: how a pass puts
// new nodes where their inputs exist and drops the ones they replace.
void insert_nodes_and_compact(Graph& graph, std::vector<std::vector<Node>> inserted, const std::vector<bool>& dead);

// Whether `node`'s integer-list `attribute` is absent, or holds `count` values all equal to `value`.
bool attribute_absent_or_all(const Node& node, const char* attribute, int64_t value, size_t count);

// Whether `desc` is f32 of rank 4 with every dim known and positive.
bool static_rank4_f32(const TensorDesc& desc);

// A Conv with one output, group 1, a 1x1 kernel, stride 1, no padding (auto_pad NOTSET) and no
// dilation, reading its input channels-first, with a static f32 rank-4 output: the 1x1 Convs the
// CPU runs as a GEMM on the input planes. Residual and epilogue attributes are the caller's to check.
bool is_pointwise_conv(const Graph& graph, const Node& conv);
// The same without looking at the output's description (for callers holding static_value_descs).
bool has_pointwise_conv_window(const Graph& graph, const Node& conv);

// A value name not yet used in the graph, derived from `base`.
std::string unique_value_name(const Graph& graph, const std::string& base);

}  // namespace edgefuse::fusion
