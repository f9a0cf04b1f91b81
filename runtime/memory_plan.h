// Static memory planning: for concrete input shapes, infer every value's description, fold the
// values that depend only on input shapes and constants (Shape -> Gather -> Concat chains that
// feed Reshape), and place every intermediate activation at an offset in one arena so that values
// whose lifetimes overlap never share bytes.
//
// Arena layout: intermediate value v occupies [offset[v], offset[v] + descs[v].nbytes()), offsets
// kPlanAlignment-aligned (blocks of an aliased Concat: see PlanOptions). Lifetime of v: [producer
// node, last consumer node], both inclusive, so a node's inputs and outputs never share bytes
// (kernels may read any input element after writing any output element). Graph inputs,
// initializers, graph outputs, folded values and empty values are not in the arena (offset -1):
// the caller keeps graph outputs, so they get their own storage.
//
// Concat aliasing: when a Concat's output is in the arena, every dim before its axis is 1 (so each
// input is one contiguous block of the output) and every input is an arena value, each input is
// placed inside the output at its block's offset, its producer writes it there, and the Concat
// node is skipped. The output's lifetime then spans its inputs' lifetimes. Only done when every
// block offset is aligned (to kPlanAlignment, or with concat_blocks_element_aligned to the
// element), an input aliases into one Concat only, and Concats do not nest.
//
// In place: the output of a pointwise op (Relu, Sigmoid, Add, Mul, ..., PointwiseChain; their
// kernels read element i before writing element i; writes_elementwise in op_kind.h) takes the
// bytes of an input with the same description that dies at that node, when neither is part of a
// Concat alias.
//
// Kernel pairs (PlanOptions::kernel_pair, asked of each run node whose only output is read only
// by the next node run, as its input 0): the backend runs both nodes as one kernel and the value
// between them is never stored. It takes no arena bytes, neither its write nor its read counts as
// moved, and the first node's input 0 stays alive until the second node, since the pair writes
// the second's output while it still reads that input. Asked after Concat aliasing and in-place
// choices, of values that are neither. When the backend can also run the pair in place
// (PlanOptions::kernel_pair_in_place), the second's output takes the bytes of the first's input 0
// if that input dies at the pair, both have the same dtype and neither is part of a Concat alias
// or already shares bytes: the kernel then never reads an element of that input after writing it
// (recorded in in_place_of like an in-place output). The output may be larger than the input: the
// bytes of a chain of values in place are its largest value's.
//
// Memory pairs (PlanOptions::memory_pair): a pair kernel_pair declines but the backend can run in
// place at any size is taken anyway when the first's input or the value between is at least half
// the largest arena value. Such pairs sit where the arena's peak is, and only there: elsewhere
// the backend found two kernels faster. The output takes the bytes of the first's input when that
// dies at the pair (a block's input, the value between and the output become one buffer), else of
// the second's residual (input 3) when that dies there (MemoryPairTarget::kResidual), else, where
// the backend runs the pair with its output in bytes of its own (MemoryPairTarget::kOwnBytes:
// the second reads the first's input again, through a pooled residual), only the value between
// is saved.
//
// Views: the output of a Reshape, Flatten, Squeeze, Unsqueeze or Identity (keeps_input_bytes in
// op_kind.h) is its input's bytes when that input is an arena value dying at that node (it may be
// an aliased Concat's output, but not a block of one) and the output is no part of a Concat
// alias; the node is skipped. Such an output is recorded in in_place_of like an in-place one.
//
// Piece views (PlanOptions::piece_views): the outputs of a Slice (one axis, step 1, known bounds)
// or Split whose input has every dim before the axis 1 are each one contiguous run of that input:
// they become aliases of it (alias_of, at their run's offset; kPlanAlignment-aligned, or to the
// element as Concat blocks are), the node is skipped, and the input lives as long as they do. The
// input may be a Concat's output or block (aliases then nest). Such views are read only
// (read_only_view): no op writes them or their input in place. A Reshape-like node whose input
// lies in another value (a piece view, a Concat block) and dies there is such a view too. YOLOv8's
// C2f halves and its head's split into box bins and class logits copy nothing.
//
// Views of graph outputs (PlanOptions::output_views): when such a node's output is a graph output
// (which has storage of its own, not in the arena) and its input is an arena value dying there
// that shares no bytes, the input leaves the arena and is written straight into the graph
// output's storage (MemoryPlan::written_into_output); the node is skipped. A model's heads end in
// Reshapes of graph outputs (BlazeFace's four), which then copy nothing. Likewise a Concat whose
// output is a graph output, with every dim before its axis 1 and aligned blocks: each input is
// written into its block of the output (MemoryPlan::output_offset) with every value that shares
// its bytes in place (YOLOv5's levels: a Conv's output, the chains that decode it in place, the
// Reshape viewing it as rows), when none of them shares bytes otherwise or is read after the
// Concat; the Concat is skipped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "runtime/graph.h"
#include "runtime/status.h"
#include "runtime/tensor.h"

namespace edgefuse {

inline constexpr size_t kPlanAlignment = kTensorAlignment;

// Whose bytes a memory pair's output takes (see the header).
enum class MemoryPairTarget { kInput, kResidual, kOwnBytes };

struct PlanOptions {
  bool reference_kernels = false;  // fold with the reference kernels (as the executor would run them)
  bool in_place = true;            // pointwise outputs may take a dying input's bytes (see above)
  bool alias_concat = true;        // Concat inputs written straight into their block of the output
  // Blocks of an aliased Concat start at any element (offsets aligned to the dtype only) instead of
  // at kPlanAlignment bytes: for backends whose kernels take any element offset (the GPU's), so
  // that blocks of odd sizes (YOLOX's 1- and 4-channel head outputs at 26 x 26 and 13 x 13) alias too.
  bool concat_blocks_element_aligned = false;
  // Largest value folded at plan time; bigger constant-only results stay computed at run time.
  int64_t max_folded_elements = 1 << 16;
  // Whether the backend runs `first` and `second` as one kernel (see the header); null: never.
  // `descs` holds every value's description.
  std::function<bool(const Node& first, const Node& second, std::span<const TensorDesc> descs)> kernel_pair;
  // Whether the backend runs a pair kernel_pair accepted with the second's output in the bytes of
  // the first's input 0 (see the header); null: never.
  std::function<bool(const Node& first, const Node& second, std::span<const TensorDesc> descs)> kernel_pair_in_place;
  // Whether the backend runs `first` and `second` as one kernel whatever their size with the
  // second's output over `target` (see the header); null: never. The plan marks such pairs in
  // MemoryPlan::pair_any_size.
  std::function<bool(const Node& first, const Node& second, std::span<const TensorDesc> descs, MemoryPairTarget target)>
      memory_pair;
  // Reshape-like nodes whose output is a graph output make their input a view of it (see the
  // header): for backends that run on the graph outputs' storage (the CPU executor).
  bool output_views = false;
  // Slice and Split outputs that are contiguous runs of their input, and Reshapes of them, become
  // read-only views (see the header): for backends that bind every value by offset (both).
  bool piece_views = false;
};

// Every value's description for given input descriptions, plus the values known before running.
struct ValueShapes {
  std::vector<TensorDesc> descs;  // per value
  // Per value: data known at plan time (initializers, and folded values), else a tensor without data.
  std::vector<Tensor> known;
  std::vector<bool> node_folded;  // per node: all its outputs are folded; running it is not needed
};

// Runs each node's shape rule in order over meta tensors (initializer data for constants). A node
// whose inputs are all known (or a Shape node, which needs only its input's description) is run
// at plan time and its outputs become known. kUnsupported when a rule needs values of an input
// that is only known at run time: then no static plan exists for this graph. Errors name the node.
Result<ValueShapes> infer_value_shapes(const Graph& graph, std::span<const TensorDesc> input_descs,
                                       const PlanOptions& options = {});

struct MemoryPlan {
  std::vector<TensorDesc> descs;   // per value
  std::vector<Tensor> known;       // per value: see ValueShapes::known
  std::vector<bool> node_folded;   // per node: see ValueShapes::node_folded
  std::vector<bool> node_skipped;  // per node: nothing to run (folded, a Concat made of aliases, a view)
  std::vector<int64_t> offset;     // per value: byte offset in the arena, -1 = not in the arena
  std::vector<ValueId> alias_of;  // per value: the Concat output it is a block of, or the value it views, else kNoValue
  std::vector<bool> read_only_view;  // per value: a piece view or a view lying in another value (see the header)
  std::vector<ValueId> in_place_of;  // per value: the dying input whose bytes it takes, else kNoValue
  // Per value: the graph output whose storage it is written into (it is that output's input,
  // through a skipped Reshape-like node; PlanOptions::output_views), else kNoValue.
  std::vector<ValueId> written_into_output;
  std::vector<int64_t> output_offset;  // per value written into a graph output: its byte offset there
  std::vector<NodeId> paired_with;     // per node: the node run inside its kernel (PlanOptions::kernel_pair), else -1
  std::vector<bool> between_pair;      // per value: lives only inside a kernel pair, never stored
  std::vector<bool> pair_any_size;     // per node: first of a memory pair (PlanOptions::memory_pair)
  // Lifetime per arena value (-1 for others): from its producer (for a Concat output with aliased
  // inputs, its first input's producer) to the last node that reads it (or its block's Concat output).
  std::vector<NodeId> first_node;
  std::vector<NodeId> last_node;
  size_t arena_bytes = 0;
  size_t unplanned_bytes = 0;                  // sum of the arena values' sizes: one buffer per tensor
  size_t peak_live_bytes = 0;                  // most bytes (aligned sizes) of arena values alive at one node
  size_t activation_bytes_moved = 0;           // per kernel run: bytes of its distinct non-constant inputs + outputs
  int concats_aliased = 0;                     // Concat nodes skipped because their inputs are written in place
  int views = 0;                               // Reshape-like nodes skipped because their output is a view
  int output_views = 0;                        // of those, nodes whose input is written into a graph output
  int piece_views = 0;                         // Slice and Split nodes skipped because their outputs are views
  int concats_into_outputs = 0;                // Concats skipped because their inputs are written into their output
  int kernel_pairs = 0;                        // pairs of nodes run as one kernel
  int kernel_pairs_in_place = 0;               // of those, pairs whose output takes their input's bytes
  int memory_pairs = 0;                        // of those, pairs taken for memory (all in place)
  bool concat_blocks_element_aligned = false;  // PlanOptions's, for verify_memory_plan

  bool in_arena(ValueId v) const { return offset[static_cast<size_t>(v)] >= 0; }
};

// Plans memory for the graph at the given input descriptions (one per graph input, in order).
// Placement is greedy best-fit: in a given order, each value goes into the smallest gap between
// placed values whose lifetimes overlap its own (or above them all). Three orders are tried
// (largest first, longest-lived first, earliest first); the smallest arena wins.
Result<MemoryPlan> plan_memory(const Graph& graph, std::span<const TensorDesc> input_descs,
                               const PlanOptions& options = {});

// Checks the plan's invariants (for tests): every arena value's bytes lie within the arena at an
// aligned offset, and no two arena values with overlapping lifetimes share a byte unless one is
// an aliased block of the other or takes the other's bytes in place.
Status verify_memory_plan(const Graph& graph, const MemoryPlan& plan);

}  // namespace edgefuse
