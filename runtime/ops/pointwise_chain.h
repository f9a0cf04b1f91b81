// PointwiseChain: an internal op the fuser makes (fusion/fuse_pointwise_chains.cpp), never the
// importer. It computes a chain of pointwise ops in one pass over its output instead of one pass
// (and one stored intermediate) per op.
//
// Inputs X0..Xk-1 (f32, 1 <= k <= kMaxChainInputs) broadcast to the output, whose shape is their
// multidirectional broadcast. For each output element i: v = X0[i], then for each step in order
//   unary step:   v = op(v)                                  (operand -1)
//   binary step:  v = op(v, Xj[i]), or op(Xj[i], v) when the chain value is the right operand;
//                 with operand -1 the other operand is the step's constant `alpha` (a scalar
//                 initializer folded into the step, so it takes no input slot)
// and the output is v. The steps are node attributes, one entry per step:
//   chain_ops       ints: the OpKind of each step (Relu, LeakyRelu, Sigmoid, Tanh, HardSigmoid,
//                   HardSwish, Clip, Sqrt, Exp; Add, Sub, Mul, Div, Pow, PRelu)
//   chain_operands  ints: the input index j of a binary step, -1 for a unary one or a constant
//   chain_on_right  ints: 1 when the chain value is the right operand (PRelu's slope, Sub's subtrahend)
//   chain_params    floats, 4 per step: alpha, beta, lo, hi (LeakyRelu alpha; HardSigmoid alpha,
//                   beta; Clip lo, hi; a binary step's constant operand in alpha; 0 otherwise)
// Each step follows the formula of the op it replaces (unary_math.h and the binary references).
//
// A windowed chain (attribute chain_window = [axis, start, end], 0 <= start < end) computes only
// the elements of X0 whose index along `axis` lies in [start, end): the window, shaped as X0 with
// that dim end - start. The other inputs broadcast to the window without widening it; every output
// element outside the window is X0's, and the output has X0's shape. A binary step reading X0 as
// its operand reads the window's element. The fuser makes these from a
// Slice or Split into pieces, pointwise ops on some and a Concat of all along the same axis
// (fusion/fold_slices_into_windowed_chains.cpp): YOLOv5's head decodes its boxes' xy and wh this
// way, and with the output in X0's bytes the kernel touches the window alone.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/attributes.h"
#include "runtime/graph.h"
#include "runtime/op_kind.h"
#include "runtime/status.h"

namespace edgefuse {

// Limits shared by the fuser, the kernels and the GPU lowering (one GPU step has 4 operand slots).
inline constexpr int kMaxChainInputs = 4;
inline constexpr int kMaxChainSteps = 8;
inline constexpr int kMaxChainWindowRank = 8;  // a window's axis is below this

struct PointwiseChainStep {
  OpKind op = OpKind::kRelu;
  int operand = -1;  // input index of a binary step's other operand; -1: unary, or the constant alpha
  bool chain_on_right = false;
  float alpha = 0;  // a binary step's constant operand when operand is -1
  float beta = 0;
  float lo = 0;
  float hi = 0;
};

struct ChainWindow {
  int axis = 0;  // counted from the first dim
  int64_t start = 0;
  int64_t end = 0;
};

struct PointwiseChain {
  std::vector<PointwiseChainStep> steps;
  std::optional<ChainWindow> window;  // see the header; nullopt: the chain computes every element
};

// X0's shape with the window's dim cut to its width: the shape the chain computes and the other
// inputs broadcast to.
Shape chain_window_shape(const Shape& full, const ChainWindow& window);

// Reads and checks the chain_* attributes against the node's input count; a malformed chain is
// an invalid model naming the step (or the window) and what is wrong.
Result<PointwiseChain> pointwise_chain(const Node& node);

// Writes `chain` as the chain_* attributes (replacing any present; chain_window only when windowed).
void set_pointwise_chain(Attributes& attrs, const PointwiseChain& chain);

}  // namespace edgefuse
