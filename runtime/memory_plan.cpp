#include "runtime/memory_plan.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "runtime/op_table.h"
#include "runtime/ops/axes.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/pointwise_chain.h"

namespace edgefuse {

namespace {

size_t align_up(size_t bytes) {
  return (bytes + kPlanAlignment - 1) / kPlanAlignment * kPlanAlignment;
}

bool lifetimes_overlap(NodeId first_a, NodeId last_a, NodeId first_b, NodeId last_b) {
  return first_a <= last_b && first_b <= last_a;
}

// Runs `node` on known inputs at plan time, filling `outputs` with fresh tensors of `descs`.
Status fold_node(const Graph& graph, NodeId id, std::span<const Tensor* const> inputs,
                 std::span<const TensorDesc> descs, const PlanOptions& options, std::vector<Tensor>& outputs) {
  const Node& node = graph.node(id);
  outputs.clear();
  for (const TensorDesc& desc : descs) outputs.push_back(Tensor::empty(desc.dtype, desc.shape));
  std::vector<Tensor*> output_ptrs;
  for (Tensor& out : outputs) output_ptrs.push_back(&out);
  const OpDef& def = op_def(node.op);
  KernelFn kernel = (options.reference_kernels || def.cpu == nullptr) ? def.reference : def.cpu;
  Status ran = kernel(KernelArgs{node, inputs, output_ptrs, nullptr});
  if (!ran.is_ok()) return ran.with_context(graph.describe_node(id));
  return Status::ok();
}

// A node may be folded when every input it reads is known, or when it is Shape (which reads only
// its input's description), and its outputs are small.
bool can_fold(const Node& node, const std::vector<bool>& is_known, std::span<const TensorDesc> output_descs,
              const PlanOptions& options) {
  for (const TensorDesc& desc : output_descs) {
    if (desc.numel() > options.max_folded_elements) return false;
  }
  if (node.op == OpKind::kShape) return true;
  for (ValueId input : node.inputs) {
    if (input != kNoValue && !is_known[static_cast<size_t>(input)]) return false;
  }
  return true;
}

}  // namespace

Result<ValueShapes> infer_value_shapes(const Graph& graph, std::span<const TensorDesc> input_descs,
                                       const PlanOptions& options) {
  if (input_descs.size() != graph.inputs().size()) {
    return invalid_argument("model takes ", graph.inputs().size(), " inputs, got ", input_descs.size(), " shapes");
  }
  const size_t value_count = graph.values().size();
  ValueShapes shapes;
  shapes.descs.resize(value_count);
  shapes.known.resize(value_count);
  shapes.node_folded.assign(graph.nodes().size(), false);
  std::vector<bool> is_known(value_count, false);
  std::vector<Tensor> tensors(value_count);  // what shape rules see: data where known, else meta
  for (size_t v = 0; v < value_count; ++v) {
    if (const auto& initializer = graph.values()[v].initializer) {
      shapes.descs[v] = initializer->desc();
      tensors[v] = *initializer;
      is_known[v] = true;
    }
  }
  for (size_t i = 0; i < input_descs.size(); ++i) {
    const auto v = static_cast<size_t>(graph.inputs()[i]);
    shapes.descs[v] = input_descs[i];
    tensors[v] = Tensor::meta(input_descs[i].dtype, input_descs[i].shape);
  }

  std::vector<const Tensor*> node_inputs;
  std::vector<TensorDesc> output_descs;
  std::vector<Tensor> folded;
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& node = graph.nodes()[n];
    const auto id = static_cast<NodeId>(n);
    node_inputs.clear();
    for (ValueId input : node.inputs) {
      node_inputs.push_back(input == kNoValue ? nullptr : &tensors[static_cast<size_t>(input)]);
    }
    output_descs.clear();
    Status inferred = op_def(node.op).infer(node, node_inputs, output_descs);
    if (!inferred.is_ok()) return inferred.with_context(graph.describe_node(id));
    if (output_descs.size() != node.outputs.size()) {
      return Status(StatusCode::kInternal, make_message(graph.describe_node(id), ": shape rule gave ",
                                                        output_descs.size(), " outputs for ", node.outputs.size()));
    }
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      Status valid = validate_shape(output_descs[o].shape, dtype_size(output_descs[o].dtype));
      if (!valid.is_ok()) {
        return valid.with_context(
            make_message(graph.describe_node(id), " output '", graph.value(node.outputs[o]).name, "'"));
      }
    }
    const bool fold = can_fold(node, is_known, output_descs, options);
    if (fold) EF_RETURN_IF_ERROR(fold_node(graph, id, node_inputs, output_descs, options, folded));
    shapes.node_folded[n] = fold;
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const auto v = static_cast<size_t>(node.outputs[o]);
      shapes.descs[v] = output_descs[o];
      tensors[v] = fold ? folded[o] : Tensor::meta(output_descs[o].dtype, output_descs[o].shape);
      is_known[v] = fold;
    }
  }
  for (size_t v = 0; v < value_count; ++v) {
    if (is_known[v]) shapes.known[v] = std::move(tensors[v]);
  }
  return shapes;
}

namespace {

struct Placement {
  ValueId value;
  size_t bytes;  // aligned size
  NodeId first;
  NodeId last;
  size_t offset = 0;
};

// Best-fit: the smallest gap between placed, lifetime-overlapping buffers that holds `item`, else
// the end of the highest of them.
size_t choose_offset(const Placement& item, const std::vector<Placement>& placed) {
  std::vector<const Placement*> conflicts;
  for (const Placement& other : placed) {
    if (lifetimes_overlap(item.first, item.last, other.first, other.last)) conflicts.push_back(&other);
  }
  std::sort(conflicts.begin(), conflicts.end(),
            [](const Placement* a, const Placement* b) { return a->offset < b->offset; });
  size_t covered_to = 0;  // every byte below this is taken by some conflict (or is a gap already seen)
  size_t best_offset = 0;
  size_t best_gap = SIZE_MAX;
  for (const Placement* other : conflicts) {
    if (other->offset > covered_to) {
      const size_t gap = other->offset - covered_to;
      if (gap >= item.bytes && gap < best_gap) {
        best_gap = gap;
        best_offset = covered_to;
      }
    }
    covered_to = std::max(covered_to, other->offset + other->bytes);
  }
  return best_gap == SIZE_MAX ? covered_to : best_offset;
}

// Places each input of eligible Concats inside the Concat's output (see the header) and marks
// the Concat skipped. Runs after lifetimes are known; widens each output's lifetime to its inputs'.
void alias_concat_inputs(const Graph& graph, MemoryPlan& plan) {
  const auto block_alignment = [&](ValueId concat) {
    return plan.concat_blocks_element_aligned ? dtype_size(plan.descs[static_cast<size_t>(concat)].dtype)
                                              : kPlanAlignment;
  };
  std::vector<bool> is_alias_target(plan.descs.size(), false);
  const auto in_arena = [&](ValueId v) { return v != kNoValue && plan.first_node[static_cast<size_t>(v)] >= 0; };
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& node = graph.nodes()[n];
    if (node.op != OpKind::kConcat || plan.node_skipped[n] || !in_arena(node.outputs[0])) continue;
    const auto out = static_cast<size_t>(node.outputs[0]);
    const Shape& shape = plan.descs[out].shape;
    const Result<int> axis = normalize_axis(node.attrs.get_int("axis", 0), static_cast<int>(shape.size()), "axis");
    if (!axis.is_ok() || shape_numel(std::span(shape).first(static_cast<size_t>(*axis))) != 1) continue;
    std::vector<int64_t> block_offsets;
    size_t next_offset = 0;
    for (ValueId input : node.inputs) {
      // Concat(a, a) would need a in two places.
      const bool repeated = std::count(node.inputs.begin(), node.inputs.end(), input) > 1;
      if (!in_arena(input) || repeated || plan.alias_of[static_cast<size_t>(input)] != kNoValue ||
          is_alias_target[static_cast<size_t>(input)] || next_offset % block_alignment(node.outputs[0]) != 0) {
        block_offsets.clear();
        break;
      }
      block_offsets.push_back(static_cast<int64_t>(next_offset));
      next_offset += plan.descs[static_cast<size_t>(input)].nbytes();
    }
    if (block_offsets.empty()) continue;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const auto v = static_cast<size_t>(node.inputs[i]);
      plan.alias_of[v] = node.outputs[0];
      plan.offset[v] = block_offsets[i];  // relative to the output until the output is placed
      plan.first_node[out] = std::min(plan.first_node[out], plan.first_node[v]);
      plan.last_node[out] = std::max(plan.last_node[out], plan.last_node[v]);
    }
    is_alias_target[out] = true;
    plan.node_skipped[n] = true;
    ++plan.concats_aliased;
  }
}

// Extends the lifetime of `v`'s alias ancestors (the values it lies in) to `last`.
void extend_alias_ancestors(MemoryPlan& plan, ValueId v, NodeId last) {
  for (ValueId a = plan.alias_of[static_cast<size_t>(v)]; a != kNoValue; a = plan.alias_of[static_cast<size_t>(a)]) {
    plan.last_node[static_cast<size_t>(a)] = std::max(plan.last_node[static_cast<size_t>(a)], last);
  }
}

// Where output `o` of a Slice or Split node starts along `axis` of its input, or nothing when the
// node is not a one-axis, step-1 Slice with known bounds or a Split on that axis.
std::optional<int64_t> piece_start(const Node& node, ValueId o, int axis, const MemoryPlan& plan) {
  const Shape& whole = plan.descs[static_cast<size_t>(node.inputs[0])].shape;
  const auto rank = static_cast<int>(whole.size());
  if (node.op == OpKind::kSplit) {
    const Result<int> split_axis = normalize_axis(node.attrs.get_int("axis", 0), rank, "axis");
    if (!split_axis.is_ok() || *split_axis != axis) return std::nullopt;
    int64_t start = 0;
    for (ValueId output : node.outputs) {
      if (output == o) return start;
      if (output == kNoValue) return std::nullopt;
      start += plan.descs[static_cast<size_t>(output)].shape[static_cast<size_t>(axis)];
    }
    return std::nullopt;
  }
  // A Slice's operands must be known at plan time; its data only needs a description.
  const Tensor data = Tensor::meta(plan.descs[static_cast<size_t>(node.inputs[0])].dtype, whole);
  std::vector<const Tensor*> inputs = {&data};
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    const ValueId v = node.inputs[i];
    if (v != kNoValue && !plan.known[static_cast<size_t>(v)].has_data()) return std::nullopt;
    inputs.push_back(v == kNoValue ? nullptr : &plan.known[static_cast<size_t>(v)]);
  }
  const Result<SliceGeometry> slice = slice_geometry(inputs);
  if (!slice.is_ok()) return std::nullopt;
  return slice_start_on_axis(*slice, whole, axis);
}

// Makes the outputs of each Slice (one axis, step 1, known bounds) and Split whose input has every
// dim before the axis 1 views of that input (PlanOptions::piece_views; see the header): each is
// one contiguous run of its input's bytes, placed there as an alias, and the node is skipped.
// Runs after Concat aliasing (the input may be a Concat's output or one of its blocks) and before
// in-place choices, which then leave the input and the views be.
void view_contiguous_pieces(const Graph& graph, MemoryPlan& plan) {
  std::vector<bool> is_alias_target(plan.descs.size(), false);
  for (ValueId target : plan.alias_of) {
    if (target != kNoValue) is_alias_target[static_cast<size_t>(target)] = true;
  }
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& node = graph.nodes()[n];
    if (plan.node_skipped[n] || (node.op != OpKind::kSlice && node.op != OpKind::kSplit) || !node.has_input(0)) {
      continue;
    }
    const ValueId whole = node.inputs[0];
    const auto w = static_cast<size_t>(whole);
    if (plan.first_node[w] < 0) continue;
    const Shape& shape = plan.descs[w].shape;
    const TensorDesc& first_out = plan.descs[static_cast<size_t>(node.outputs[0])];
    // The axis: the one dim where the first output differs, else (a full-size piece) the Split's.
    int axis = -1;
    for (size_t d = 0; d < shape.size() && d < first_out.shape.size(); ++d) {
      if (shape[d] != first_out.shape[d]) axis = static_cast<int>(d);
    }
    if (axis < 0 || shape_numel(std::span(shape).first(static_cast<size_t>(axis))) != 1) continue;
    const int64_t inner = shape_numel(std::span(shape).subspan(static_cast<size_t>(axis) + 1));
    const size_t element = dtype_size(plan.descs[w].dtype);
    const size_t alignment = plan.concat_blocks_element_aligned ? element : kPlanAlignment;
    std::vector<int64_t> offsets;
    for (ValueId o : node.outputs) {
      const auto i = static_cast<size_t>(o);
      const std::optional<int64_t> start = o == kNoValue ? std::nullopt : piece_start(node, o, axis, plan);
      if (!start || plan.first_node[i] < 0 || plan.alias_of[i] != kNoValue || is_alias_target[i] ||
          plan.descs[i].dtype != plan.descs[w].dtype || plan.descs[i].shape.size() != shape.size() ||
          (*start * inner * static_cast<int64_t>(element)) % static_cast<int64_t>(alignment) != 0) {
        offsets.clear();
        break;
      }
      offsets.push_back(*start * inner * static_cast<int64_t>(element));
    }
    if (offsets.empty()) continue;
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const auto o = static_cast<size_t>(node.outputs[k]);
      plan.alias_of[o] = whole;
      plan.offset[o] = offsets[k];  // relative to the input until that is placed
      plan.read_only_view[o] = true;
      extend_alias_ancestors(plan, node.outputs[k], plan.last_node[o]);
    }
    is_alias_target[w] = true;
    plan.node_skipped[n] = true;
    ++plan.piece_views;
  }
}

// Elementwise kernels (reference and optimised; writes_elementwise) compute output element i from
// the inputs' elements at i (broadcast operands included) before writing it, so the output may
// take a same-description input's bytes. Copy ops (Reshape, Identity) are not elementwise (memcpy
// onto itself is undefined): they become views instead, and do not run.
// Lets the output of each pointwise node reuse the bytes of an input that dies at that node and
// has the same description, and makes the output of each Reshape-like node a view of an input
// that dies there (see the header). Runs after Concat aliasing and leaves its blocks and outputs
// be, except as the input of a view.
void reuse_dying_inputs(const Graph& graph, MemoryPlan& plan, bool piece_views) {
  std::vector<bool> is_alias_target(plan.descs.size(), false);
  for (ValueId target : plan.alias_of) {
    if (target != kNoValue) is_alias_target[static_cast<size_t>(target)] = true;
  }
  const auto eligible = [&](ValueId v) {
    if (v == kNoValue) return false;
    const auto i = static_cast<size_t>(v);
    return plan.first_node[i] >= 0 && plan.alias_of[i] == kNoValue && !is_alias_target[i];
  };
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& node = graph.nodes()[n];
    if (plan.node_skipped[n] || node.outputs.empty() || node.outputs[0] == kNoValue) continue;
    const auto out = static_cast<size_t>(node.outputs[0]);
    // A view's output may have piece views of its own (the only aliases a Reshape's output can hold).
    const bool view_eligible = plan.first_node[out] >= 0 && plan.alias_of[out] == kNoValue;
    if (!(keeps_input_bytes(node.op) ? view_eligible : eligible(node.outputs[0]))) continue;
    if (keeps_input_bytes(node.op)) {
      // A view: the output is the input's bytes, so the node has nothing to do. The input may be
      // an aliased Concat's output (its blocks die before it, at the Concat). With piece views, it
      // may also lie in another value (a piece view, or a Concat's block): the output then lies
      // there too, at the same place, as a read-only view.
      const ValueId input = node.inputs.empty() ? kNoValue : node.inputs[0];
      if (input == kNoValue) continue;
      const auto in = static_cast<size_t>(input);
      if (plan.first_node[in] < 0 || plan.last_node[in] != static_cast<NodeId>(n) ||
          plan.descs[in].dtype != plan.descs[out].dtype || plan.descs[in].nbytes() != plan.descs[out].nbytes()) {
        continue;
      }
      if (plan.alias_of[in] == kNoValue) {
        plan.in_place_of[out] = input;
      } else if (piece_views) {
        plan.alias_of[out] = plan.alias_of[in];
        plan.offset[out] = plan.offset[in];
        plan.read_only_view[out] = true;
        extend_alias_ancestors(plan, node.outputs[0], plan.last_node[out]);
      } else {
        continue;
      }
      plan.node_skipped[n] = true;
      ++plan.views;
      continue;
    }
    if (!writes_elementwise(node.op)) continue;
    // Only data inputs 0 and 1; Clip's bounds are scalars.
    const size_t data_inputs = node.op == OpKind::kClip ? 1 : std::min<size_t>(node.inputs.size(), 2);
    for (size_t i = 0; i < data_inputs; ++i) {
      const ValueId input = node.inputs[i];
      if (eligible(input) && plan.last_node[static_cast<size_t>(input)] == static_cast<NodeId>(n) &&
          plan.descs[static_cast<size_t>(input)] == plan.descs[out]) {
        plan.in_place_of[out] = input;
        break;
      }
    }
  }
}

// Makes the input of each Reshape-like node whose output is a graph output a view of that output
// (PlanOptions::output_views; see the header): an arena value that dies at that node and shares
// no bytes with another (no Concat block or output, nothing in place) leaves the arena and is
// written into the output's storage, and the node is skipped. Runs after reuse_dying_inputs.
void write_views_into_outputs(const Graph& graph, MemoryPlan& plan) {
  std::vector<bool> is_graph_output(plan.descs.size(), false), shares_bytes(plan.descs.size(), false);
  for (ValueId output : graph.outputs()) is_graph_output[static_cast<size_t>(output)] = true;
  for (size_t v = 0; v < plan.descs.size(); ++v) {
    if (plan.alias_of[v] != kNoValue) {
      shares_bytes[v] = shares_bytes[static_cast<size_t>(plan.alias_of[v])] = true;
    }
    if (plan.in_place_of[v] != kNoValue) {
      shares_bytes[v] = shares_bytes[static_cast<size_t>(plan.in_place_of[v])] = true;
    }
  }
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& node = graph.nodes()[n];
    if (plan.node_skipped[n] || !keeps_input_bytes(node.op) || node.inputs.empty() || node.outputs.size() != 1) {
      continue;
    }
    const ValueId input = node.inputs[0];
    const auto out = static_cast<size_t>(node.outputs[0]);
    if (input == kNoValue || !is_graph_output[out]) continue;
    const auto in = static_cast<size_t>(input);
    if (plan.first_node[in] < 0 || shares_bytes[in] || plan.last_node[in] != static_cast<NodeId>(n) ||
        plan.descs[in].dtype != plan.descs[out].dtype || plan.descs[in].nbytes() != plan.descs[out].nbytes()) {
      continue;
    }
    plan.written_into_output[in] = node.outputs[0];
    plan.first_node[in] = plan.last_node[in] = -1;
    plan.node_skipped[n] = true;
    ++plan.views;
    ++plan.output_views;
  }
}

// Lets the inputs of each Concat whose output is a graph output be written straight into their
// blocks of it (PlanOptions::output_views; see the header): every dim before the axis is 1, and
// each input, with every value sharing its bytes in place (a chain of in-place outputs and views
// ending in it), is an arena value that shares bytes with nothing else and is read by no node after
// the Concat. Such groups leave the arena; the Concat is skipped. Runs after write_views_into_outputs.
void write_concat_blocks_into_outputs(const Graph& graph, MemoryPlan& plan) {
  const size_t value_count = plan.descs.size();
  std::vector<bool> is_graph_output(value_count, false), shares_bytes(value_count, false);
  for (ValueId output : graph.outputs()) is_graph_output[static_cast<size_t>(output)] = true;
  for (size_t v = 0; v < value_count; ++v) {
    if (plan.alias_of[v] != kNoValue) shares_bytes[v] = shares_bytes[static_cast<size_t>(plan.alias_of[v])] = true;
    if (plan.written_into_output[v] != kNoValue) shares_bytes[v] = true;
  }
  // Each value's in-place root, and each root's members (itself included).
  std::vector<ValueId> root(value_count);
  std::vector<std::vector<ValueId>> members(value_count);
  for (size_t v = 0; v < value_count; ++v) {
    ValueId r = static_cast<ValueId>(v);
    while (plan.in_place_of[static_cast<size_t>(r)] != kNoValue) r = plan.in_place_of[static_cast<size_t>(r)];
    root[v] = r;
    members[static_cast<size_t>(r)].push_back(static_cast<ValueId>(v));
  }
  const size_t alignment = plan.concat_blocks_element_aligned ? 0 : kPlanAlignment;
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& node = graph.nodes()[n];
    if (node.op != OpKind::kConcat || plan.node_skipped[n] || node.outputs.size() != 1) continue;
    const auto out = static_cast<size_t>(node.outputs[0]);
    if (!is_graph_output[out]) continue;
    const Shape& shape = plan.descs[out].shape;
    const Result<int> axis = normalize_axis(node.attrs.get_int("axis", 0), static_cast<int>(shape.size()), "axis");
    if (!axis.is_ok() || shape_numel(std::span(shape).first(static_cast<size_t>(*axis))) != 1) continue;
    std::vector<int64_t> block_offsets;
    std::vector<ValueId> roots;
    size_t next_offset = 0;
    bool writable = true;
    for (ValueId input : node.inputs) {
      if (input == kNoValue || plan.descs[static_cast<size_t>(input)].dtype != plan.descs[out].dtype) {
        writable = false;
        break;
      }
      const ValueId r = root[static_cast<size_t>(input)];
      // One block per group (Concat(a, a) would need a in two places), aligned as the arena's.
      writable =
          std::find(roots.begin(), roots.end(), r) == roots.end() && (alignment == 0 || next_offset % alignment == 0);
      for (ValueId m : members[static_cast<size_t>(r)]) {
        const auto i = static_cast<size_t>(m);
        writable =
            writable && plan.first_node[i] >= 0 && !shares_bytes[i] && plan.last_node[i] <= static_cast<NodeId>(n);
      }
      if (!writable) break;
      roots.push_back(r);
      block_offsets.push_back(static_cast<int64_t>(next_offset));
      next_offset += plan.descs[static_cast<size_t>(input)].nbytes();
    }
    if (!writable || next_offset != plan.descs[out].nbytes()) continue;
    for (size_t i = 0; i < roots.size(); ++i) {
      for (ValueId m : members[static_cast<size_t>(roots[i])]) {
        const auto v = static_cast<size_t>(m);
        plan.written_into_output[v] = node.outputs[0];
        plan.output_offset[v] = block_offsets[i];
        plan.first_node[v] = plan.last_node[v] = -1;
      }
    }
    plan.node_skipped[n] = true;
    ++plan.concats_into_outputs;
  }
}

// Finds the kernel pairs (see the header) among the nodes left to run: `first`'s only output is
// read only by the next node run, as its input 0, and is an arena value that is no Concat block,
// Concat output or in-place value. Runs after Concat aliasing and in-place choices; takes the value
// out of the arena and keeps first's input 0 alive through the second node.
void find_kernel_pairs(const Graph& graph, const PlanOptions& options, MemoryPlan& plan) {
  const auto& nodes = graph.nodes();
  std::vector<int> readers(plan.descs.size(), 0);
  std::vector<bool> is_alias_target(plan.descs.size(), false), is_in_place_source(plan.descs.size(), false);
  for (const Node& node : nodes) {
    for (ValueId input : node.inputs) {
      if (input != kNoValue) ++readers[static_cast<size_t>(input)];
    }
  }
  for (ValueId output : graph.outputs()) ++readers[static_cast<size_t>(output)];
  size_t largest = 0;  // bytes of the largest arena value
  for (size_t v = 0; v < plan.descs.size(); ++v) {
    if (plan.alias_of[v] != kNoValue) is_alias_target[static_cast<size_t>(plan.alias_of[v])] = true;
    if (plan.in_place_of[v] != kNoValue) is_in_place_source[static_cast<size_t>(plan.in_place_of[v])] = true;
    if (plan.first_node[v] >= 0) largest = std::max(largest, plan.descs[v].nbytes());
  }
  // A value that shares no bytes yet (the input may itself take another value's bytes: a chain of
  // in-place pairs shares them).
  const auto alone = [&](size_t v) {
    return plan.first_node[v] >= 0 && plan.alias_of[v] == kNoValue && !is_alias_target[v] && !is_in_place_source[v];
  };
  for (size_t n = 0; n < nodes.size(); ++n) {
    const Node& first = nodes[n];
    if (plan.node_skipped[n] || first.outputs.size() != 1 || first.inputs.empty()) continue;
    size_t m = n + 1;
    while (m < nodes.size() && plan.node_skipped[m]) ++m;
    if (m == nodes.size()) break;
    const Node& second = nodes[m];
    const ValueId between = first.outputs[0], input = first.inputs[0];
    const auto b = static_cast<size_t>(between);
    // An input whose bytes a later value takes in place must die where it does now.
    const bool input_shared = input != kNoValue && is_in_place_source[static_cast<size_t>(input)];
    if (second.inputs.empty() || second.inputs[0] != between || readers[b] != 1 || plan.first_node[b] < 0 ||
        plan.alias_of[b] != kNoValue || is_alias_target[b] || plan.in_place_of[b] != kNoValue ||
        is_in_place_source[b] || input_shared) {
      continue;
    }
    // Whether second's output may take the bytes of `v` (first's input or second's residual): both
    // share no bytes yet and `v` dies at the pair (judged before the pair extends the input's life).
    const auto y = second.outputs.size() == 1 ? static_cast<size_t>(second.outputs[0]) : size_t{0};
    const auto may_take = [&](ValueId v) {
      if (v == kNoValue || second.outputs.size() != 1) return false;
      const auto i = static_cast<size_t>(v);
      return alone(i) && alone(y) && plan.in_place_of[y] == kNoValue && plan.last_node[i] <= static_cast<NodeId>(m) &&
             plan.descs[i].dtype == plan.descs[y].dtype;
    };
    ValueId takes = kNoValue;  // whose bytes second's output takes
    const bool for_memory = !options.kernel_pair(first, second, plan.descs);
    if (for_memory) {
      const auto x = static_cast<size_t>(input);
      const size_t input_bytes = input != kNoValue && plan.first_node[x] >= 0 ? plan.descs[x].nbytes() : 0;
      if (!options.memory_pair || 2 * std::max(input_bytes, plan.descs[b].nbytes()) < largest) continue;
      const ValueId residual = second.inputs.size() > 3 ? second.inputs[3] : kNoValue;
      if (may_take(input) && options.memory_pair(first, second, plan.descs, MemoryPairTarget::kInput)) {
        takes = input;
      } else if (residual != input && may_take(residual) &&
                 options.memory_pair(first, second, plan.descs, MemoryPairTarget::kResidual)) {
        takes = residual;
      } else if (!options.memory_pair(first, second, plan.descs, MemoryPairTarget::kOwnBytes)) {
        continue;
      }
    } else if (may_take(input) && options.kernel_pair_in_place &&
               options.kernel_pair_in_place(first, second, plan.descs)) {
      takes = input;
    }
    plan.paired_with[n] = static_cast<NodeId>(m);
    plan.between_pair[b] = true;
    plan.first_node[b] = plan.last_node[b] = -1;
    ++plan.kernel_pairs;
    // The pair reads first's input while it writes second's output: keep the input (and the
    // Concat output it is a block of) alive through the second node.
    for (ValueId v = input; v != kNoValue && plan.first_node[static_cast<size_t>(v)] >= 0;
         v = plan.alias_of[static_cast<size_t>(v)]) {
      plan.last_node[static_cast<size_t>(v)] = std::max(plan.last_node[static_cast<size_t>(v)], static_cast<NodeId>(m));
    }
    // Unless the pair writes its output over that input, when nothing reads the input later (or
    // over the residual, which it reads element by element before writing there).
    if (takes != kNoValue) {
      plan.in_place_of[y] = takes;
      is_in_place_source[static_cast<size_t>(takes)] = true;
      ++plan.kernel_pairs_in_place;
    }
    if (for_memory) {
      plan.pair_any_size[n] = true;
      ++plan.memory_pairs;
    }
    n = m;  // the second node runs inside this pair, not as the first of another
  }
}

// The bytes a windowed PointwiseChain whose output is in place of its input 0 reads of that input
// and writes: its window's, as the rest stays where it is. Nothing for other nodes.
std::optional<size_t> in_place_window_bytes(const Node& node, const MemoryPlan& plan) {
  if (node.op != OpKind::kPointwiseChain) return std::nullopt;
  const auto out = static_cast<size_t>(node.outputs[0]);
  if (plan.in_place_of[out] != node.inputs[0]) return std::nullopt;
  const Result<PointwiseChain> chain = pointwise_chain(node);
  if (!chain.is_ok() || !chain->window) return std::nullopt;
  const TensorDesc& desc = plan.descs[out];
  return static_cast<size_t>(shape_numel(chain_window_shape(desc.shape, *chain->window))) * dtype_size(desc.dtype);
}

// Activation bytes the kernels move per run: each kernel reads each distinct non-constant value it
// takes once and writes its outputs. A kernel pair is one kernel: the value between its nodes is
// neither written nor read, and a value both nodes read (a block's input, read by the first node's
// taps and then, a few rows later and still in cache, as the second's residual) counts once. A
// windowed chain in place reads and writes its window alone.
size_t count_activation_bytes_moved(const Graph& graph, const MemoryPlan& plan) {
  const auto& nodes = graph.nodes();
  size_t moved = 0;
  std::vector<ValueId> read;
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (plan.node_skipped[n]) continue;
    if (const std::optional<size_t> window = in_place_window_bytes(nodes[n], plan)) {
      moved += 2 * *window;
      for (size_t i = 1; i < nodes[n].inputs.size(); ++i) {
        const auto v = static_cast<size_t>(nodes[n].inputs[i]);
        if (!plan.known[v].has_data() && nodes[n].inputs[i] != nodes[n].inputs[0]) moved += plan.descs[v].nbytes();
      }
      continue;
    }
    const NodeId second = plan.paired_with[n];
    read.clear();
    const auto add_reads = [&](const Node& node) {
      for (ValueId input : node.inputs) {
        const auto v = static_cast<size_t>(input);
        if (input != kNoValue && !plan.known[v].has_data() && !plan.between_pair[v] &&
            std::find(read.begin(), read.end(), input) == read.end()) {
          read.push_back(input);
          moved += plan.descs[v].nbytes();
        }
      }
    };
    const auto add_writes = [&](const Node& node) {
      for (ValueId output : node.outputs) {
        if (!plan.between_pair[static_cast<size_t>(output)]) moved += plan.descs[static_cast<size_t>(output)].nbytes();
      }
    };
    add_reads(nodes[n]);
    add_writes(nodes[n]);
    if (second >= 0) {
      add_reads(nodes[static_cast<size_t>(second)]);
      add_writes(nodes[static_cast<size_t>(second)]);
      n = static_cast<size_t>(second);
    }
  }
  return moved;
}

// Places `items` in their order, each by choose_offset. Returns the arena size.
size_t place_in_order(std::vector<Placement>& items) {
  std::vector<Placement> placed;
  placed.reserve(items.size());
  size_t arena = 0;
  for (Placement& item : items) {
    item.offset = choose_offset(item, placed);
    arena = std::max(arena, item.offset + item.bytes);
    placed.push_back(item);
  }
  return arena;
}

// Greedy placement is order-dependent: tries largest-first (ties by start), longest-lived-first
// and earliest-first, and keeps the smallest arena. Orders are total, so plans are deterministic.
std::vector<Placement> place_best_of_orders(std::vector<Placement> items) {
  const auto by_size = [](const Placement& a, const Placement& b) {
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    if (a.first != b.first) return a.first < b.first;
    return a.value < b.value;
  };
  const auto by_lifetime = [&](const Placement& a, const Placement& b) {
    if (a.last - a.first != b.last - b.first) return a.last - a.first > b.last - b.first;
    return by_size(a, b);
  };
  const auto by_start = [&](const Placement& a, const Placement& b) {
    if (a.first != b.first) return a.first < b.first;
    return by_size(a, b);
  };
  std::vector<Placement> best;
  size_t best_arena = SIZE_MAX;
  for (int order = 0; order < 3; ++order) {
    if (order == 0) std::sort(items.begin(), items.end(), by_size);
    if (order == 1) std::sort(items.begin(), items.end(), by_lifetime);
    if (order == 2) std::sort(items.begin(), items.end(), by_start);
    const size_t arena = place_in_order(items);
    if (arena < best_arena) {
      best_arena = arena;
      best = items;
    }
  }
  return best;
}

}  // namespace

Result<MemoryPlan> plan_memory(const Graph& graph, std::span<const TensorDesc> input_descs,
                               const PlanOptions& options) {
  EF_ASSIGN_OR_RETURN(ValueShapes shapes, infer_value_shapes(graph, input_descs, options));
  const size_t value_count = graph.values().size();
  MemoryPlan plan;
  plan.descs = std::move(shapes.descs);
  plan.known = std::move(shapes.known);
  plan.node_folded = std::move(shapes.node_folded);
  plan.offset.assign(value_count, -1);
  plan.first_node.assign(value_count, -1);
  plan.last_node.assign(value_count, -1);

  std::vector<bool> is_graph_output(value_count, false);
  for (ValueId output : graph.outputs()) is_graph_output[static_cast<size_t>(output)] = true;
  const auto& nodes = graph.nodes();
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (plan.node_folded[n]) continue;
    for (ValueId output : nodes[n].outputs) {
      const auto v = static_cast<size_t>(output);
      if (is_graph_output[v] || plan.descs[v].nbytes() == 0) continue;
      plan.first_node[v] = plan.last_node[v] = static_cast<NodeId>(n);
    }
  }
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (plan.node_folded[n]) continue;
    for (ValueId input : nodes[n].inputs) {
      if (input == kNoValue) continue;
      const auto v = static_cast<size_t>(input);
      if (plan.first_node[v] >= 0) plan.last_node[v] = std::max(plan.last_node[v], static_cast<NodeId>(n));
    }
  }
  plan.node_skipped = plan.node_folded;
  plan.alias_of.assign(value_count, kNoValue);
  plan.concat_blocks_element_aligned = options.concat_blocks_element_aligned;
  if (options.alias_concat) alias_concat_inputs(graph, plan);
  plan.read_only_view.assign(value_count, false);
  if (options.piece_views) view_contiguous_pieces(graph, plan);
  plan.in_place_of.assign(value_count, kNoValue);
  if (options.in_place) reuse_dying_inputs(graph, plan, options.piece_views);
  plan.written_into_output.assign(value_count, kNoValue);
  plan.output_offset.assign(value_count, 0);
  if (options.output_views) {
    write_views_into_outputs(graph, plan);
    write_concat_blocks_into_outputs(graph, plan);
  }
  plan.paired_with.assign(nodes.size(), -1);
  plan.between_pair.assign(value_count, false);
  plan.pair_any_size.assign(nodes.size(), false);
  if (options.kernel_pair) find_kernel_pairs(graph, options, plan);
  plan.activation_bytes_moved = count_activation_bytes_moved(graph, plan);

  // A chain of in-place values shares its first value's bytes: widen that value's placement
  // lifetime to the chain's end. Values come in node order, so an input's root is known first.
  std::vector<ValueId> root(value_count, kNoValue);
  std::vector<NodeId> group_last = plan.last_node;
  std::vector<size_t> group_bytes(value_count, 0);  // per root: its chain's largest value
  for (size_t v = 0; v < value_count; ++v) {
    root[v] = static_cast<ValueId>(v);
    group_bytes[v] = plan.descs[v].nbytes();
  }
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (ValueId output : nodes[n].outputs) {
      const ValueId source = plan.in_place_of[static_cast<size_t>(output)];
      if (source == kNoValue) continue;
      const ValueId r = root[static_cast<size_t>(source)];
      root[static_cast<size_t>(output)] = r;
      group_last[static_cast<size_t>(r)] =
          std::max(group_last[static_cast<size_t>(r)], plan.last_node[static_cast<size_t>(output)]);
      group_bytes[static_cast<size_t>(r)] =
          std::max(group_bytes[static_cast<size_t>(r)], plan.descs[static_cast<size_t>(output)].nbytes());
    }
  }

  std::vector<Placement> items;
  std::vector<size_t> live_delta(nodes.size() + 1, 0);  // aligned bytes starting / ending per node
  std::vector<size_t> dead_delta(nodes.size() + 1, 0);
  for (size_t v = 0; v < value_count; ++v) {
    if (plan.first_node[v] < 0) continue;
    plan.unplanned_bytes += plan.descs[v].nbytes();
    if (plan.alias_of[v] != kNoValue || plan.in_place_of[v] != kNoValue) continue;  // placed with another
    const Placement item{static_cast<ValueId>(v), align_up(group_bytes[v]), plan.first_node[v], group_last[v]};
    items.push_back(item);
    live_delta[static_cast<size_t>(item.first)] += item.bytes;
    dead_delta[static_cast<size_t>(item.last) + 1] += item.bytes;
  }
  size_t live = 0;
  for (size_t n = 0; n < nodes.size(); ++n) {
    live = live + live_delta[n] - dead_delta[n];
    plan.peak_live_bytes = std::max(plan.peak_live_bytes, live);
  }

  const std::vector<Placement> placed = place_best_of_orders(std::move(items));
  for (const Placement& item : placed) {
    plan.offset[static_cast<size_t>(item.value)] = static_cast<int64_t>(item.offset);
    plan.arena_bytes = std::max(plan.arena_bytes, item.offset + item.bytes);
  }
  // In-place values take their root's offset (a placed value: no root is an alias). Aliases lie
  // in their target at a relative offset, the target maybe in place (a Reshape's output that has
  // piece views) or itself an alias (a piece view of a Concat's block): resolved outermost first.
  for (size_t v = 0; v < value_count; ++v) {
    if (plan.in_place_of[v] != kNoValue) plan.offset[v] = plan.offset[static_cast<size_t>(root[v])];
  }
  std::vector<bool> resolved(value_count, false);
  const auto resolve = [&](size_t v, const auto& self) -> int64_t {
    const ValueId target = plan.alias_of[v];
    if (target != kNoValue && !resolved[v]) plan.offset[v] += self(static_cast<size_t>(target), self);
    resolved[v] = true;
    return plan.offset[v];
  };
  for (size_t v = 0; v < value_count; ++v) resolve(v, resolve);
  return plan;
}

namespace {

// Whether value `inner` lies in `outer` through a chain of aliases (blocks and views).
bool lies_in(const MemoryPlan& plan, size_t inner, size_t outer) {
  for (ValueId a = plan.alias_of[inner]; a != kNoValue; a = plan.alias_of[static_cast<size_t>(a)]) {
    if (static_cast<size_t>(a) == outer) return true;
  }
  return false;
}

// The value `v` lies in through its aliases, or `v` itself.
size_t outermost(const MemoryPlan& plan, size_t v) {
  while (plan.alias_of[v] != kNoValue) v = static_cast<size_t>(plan.alias_of[v]);
  return v;
}

}  // namespace

Status verify_memory_plan(const Graph& graph, const MemoryPlan& plan) {
  const size_t value_count = graph.values().size();
  if (plan.offset.size() != value_count || plan.descs.size() != value_count || plan.first_node.size() != value_count ||
      plan.last_node.size() != value_count || plan.alias_of.size() != value_count ||
      plan.in_place_of.size() != value_count || plan.read_only_view.size() != value_count) {
    return Status(StatusCode::kInternal, "plan vectors do not match the graph's value count");
  }
  std::vector<size_t> arena_values;
  for (size_t v = 0; v < value_count; ++v) {
    if (plan.offset[v] < 0) continue;
    const auto offset = static_cast<size_t>(plan.offset[v]);
    const std::string& name = graph.values()[v].name;
    const bool element_aligned_block = plan.concat_blocks_element_aligned && plan.alias_of[v] != kNoValue;
    if (offset % (element_aligned_block ? dtype_size(plan.descs[v].dtype) : kPlanAlignment) != 0) {
      return Status(StatusCode::kInternal, make_message("'", name, "' is unaligned"));
    }
    if (offset + plan.descs[v].nbytes() > plan.arena_bytes) {
      return Status(StatusCode::kInternal, make_message("'", name, "' ends past the arena"));
    }
    if (plan.first_node[v] < 0 || plan.first_node[v] > plan.last_node[v]) {
      return Status(StatusCode::kInternal, make_message("'", name, "' has a bad lifetime"));
    }
    arena_values.push_back(v);
  }
  for (size_t i = 0; i < arena_values.size(); ++i) {
    for (size_t j = i + 1; j < arena_values.size(); ++j) {
      const size_t a = arena_values[i];
      const size_t b = arena_values[j];
      if (!lifetimes_overlap(plan.first_node[a], plan.last_node[a], plan.first_node[b], plan.last_node[b])) continue;
      if (lies_in(plan, a, b) || lies_in(plan, b, a)) {
        const size_t block = lies_in(plan, a, b) ? a : b;
        const size_t whole = block == a ? b : a;
        const bool inside = plan.offset[block] >= plan.offset[whole] &&
                            plan.offset[block] + static_cast<int64_t>(plan.descs[block].nbytes()) <=
                                plan.offset[whole] + static_cast<int64_t>(plan.descs[whole].nbytes());
        if (!inside) {
          return Status(StatusCode::kInternal,
                        make_message("'", graph.values()[block].name, "' lies outside its Concat output"));
        }
        continue;
      }
      // A read-only view shares bytes with what else lies in the value it views: the same data.
      if ((plan.read_only_view[a] || plan.read_only_view[b]) && outermost(plan, a) == outermost(plan, b)) continue;
      // An in-place output shares its source's bytes at the one node where both are alive.
      const bool in_place =
          (plan.in_place_of[a] == static_cast<ValueId>(b) && plan.last_node[b] == plan.first_node[a]) ||
          (plan.in_place_of[b] == static_cast<ValueId>(a) && plan.last_node[a] == plan.first_node[b]);
      if (in_place && plan.offset[a] == plan.offset[b]) continue;
      const auto begin_a = static_cast<size_t>(plan.offset[a]);
      const auto begin_b = static_cast<size_t>(plan.offset[b]);
      if (begin_a < begin_b + plan.descs[b].nbytes() && begin_b < begin_a + plan.descs[a].nbytes()) {
        return Status(StatusCode::kInternal,
                      make_message("'", graph.values()[a].name, "' and '", graph.values()[b].name,
                                   "' are alive together and share bytes"));
      }
    }
  }
  return Status::ok();
}

}  // namespace edgefuse
