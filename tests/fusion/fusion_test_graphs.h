// Helpers for the fusion tests: build small graphs in the IR, run them, compare runs.
#pragma once

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "fusion/pass_manager.h"
#include "runtime/graph.h"
#include "runtime/memory_plan.h"

namespace edgefuse::test {

// Appends values and nodes with generated names; outputs are f32 values of unknown shape.
class GraphMaker {
 public:
  ValueId input(Shape shape);
  ValueId constant(Tensor data);
  ValueId random_constant(Shape shape, std::mt19937& rng, double lo = -1.0, double hi = 1.0);
  // Adds a node with one output and returns that output.
  ValueId node(OpKind op, std::vector<ValueId> inputs, Attributes attrs = {});
  // Adds a node with `outputs` outputs (a Split) and returns them.
  std::vector<ValueId> node_with_outputs(OpKind op, std::vector<ValueId> inputs, int outputs, Attributes attrs = {});
  // A constant int64 vector (Slice bounds, Split sizes, Reshape shapes).
  ValueId ints(const std::vector<int64_t>& values);
  // A Slice of `x` on `axis` alone, [start, end).
  ValueId slice(ValueId x, int64_t start, int64_t end, int64_t axis);
  void output(ValueId value) { graph_.outputs().push_back(value); }
  Graph& graph() { return graph_; }

 private:
  Graph graph_;
  int counter_ = 0;
};

int count_nodes(const Graph& graph, OpKind op);

// Attributes holding one integer `name` (axis), or one integer list (perm, kernel_shape).
Attributes int_attr(const char* name, int64_t value);
Attributes ints_attr(const char* name, std::vector<int64_t> values);
inline Attributes axis_attr(int64_t axis) {
  return int_attr("axis", axis);
}

// Conv attributes of a kernel x kernel window padded to keep the size (kernel / 2 on each side),
// with `group` groups and stride `stride`.
Attributes same_padded_conv_attrs(int64_t kernel, int64_t group = 1, int64_t stride = 1);

// Phase (dy, dx) of a space-to-depth: x[..., dy::2, dx::2].
struct StridePhase {
  int64_t dy = 0, dx = 0;
};
// The YOLOX Focus order: top-left, bottom-left, top-right, bottom-right.
inline constexpr StridePhase kFocusOrder[4] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};

// How the stem's Slices are laid out: two per phase (H, then W, as PyTorch exports x[..., a::2, b::2]),
// one per phase on axes [2, 3], or one H Slice per row phase shared by that row's two W Slices.
enum class StemSlices { kTwoPerPhase, kOnePerPhase, kSharedRows };

// The Focus stem's input: Concat on channels of one strided Slice chain per phase of `x`, in `order`.
ValueId space_to_depth(GraphMaker& m, ValueId x, const StridePhase (&order)[4],
                       StemSlices layout = StemSlices::kTwoPerPhase);

// Random f32 inputs for every graph input (shapes must be static).
std::vector<Tensor> random_inputs_for(const Graph& graph, std::mt19937& rng);

// Runs `graph` on `inputs`; fails the current test on error.
std::vector<Tensor> run_graph(const Graph& graph, const std::vector<Tensor>& inputs, bool reference_kernels);

// Runs `graph` twice on the optimised kernels with `threads` threads (the second run reuses the
// output storage the first handed out); fails the current test on error. The outputs of the
// second run, and its memory plan in `plan`.
std::vector<Tensor> run_planned(const Graph& graph, const std::vector<Tensor>& inputs, int threads, MemoryPlan* plan);

// optimize_graph on `graph` with `options`; fails the current test on error. The reports.
std::vector<PassReport> optimize_checked(Graph& graph, const FusionOptions& options = {});

// Relative L2 error of `fused` on the optimised kernels against `original` on the reference
// kernels, on random inputs drawn with `seed`.
double fused_error(const Graph& fused, const Graph& original, unsigned seed);

// Rewrites the pass named `pass` made in optimize_graph's `reports`; -1 when it did not run.
int pass_changes(const std::vector<PassReport>& reports, const std::string& pass);

// Largest relative L2 error between corresponding outputs (fails on a count or shape mismatch).
double max_relative_l2(const std::vector<Tensor>& actual, const std::vector<Tensor>& expected);

inline constexpr double kFusionTolerance = 1e-5;  // relative L2, fused vs unfused

// Runs `pass` on a copy of `graph`, checks it verifies, made `expected_changes` rewrites (one
// detail line each) and that the outputs agree within kFusionTolerance on random inputs (both
// kernel sets). Returns the rewritten graph.
Graph apply_and_compare(const Graph& graph, Status (*pass)(Graph&, PassReport&), int expected_changes);

}  // namespace edgefuse::test
