// Every operator the runtime knows. Adding one: an entry here, a row in op_table.cpp (the
// build fails on a missing row), shape inference and a reference kernel in runtime/ops/, an
// ONNX import function in models/onnx/, and a case in tests/ops/.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace edgefuse {

enum class OpKind : uint16_t {
  // Convolution and dense algebra
  kConv,
  kConvTranspose,
  kMatMul,
  kGemm,
  // Normalisation and pooling
  kBatchNormalization,
  kMaxPool,
  kAveragePool,
  kGlobalAveragePool,
  // Pointwise unary
  kRelu,
  kLeakyRelu,
  kSigmoid,
  kTanh,
  kHardSigmoid,
  kHardSwish,
  kClip,
  kSqrt,
  kExp,
  // Pointwise binary with broadcasting
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kPRelu,
  // Reductions
  kSoftmax,
  kReduceMean,
  // Type conversion
  kCast,
  // Shape and data movement
  kConcat,
  kSplit,
  kSlice,
  kResize,
  kReshape,
  kFlatten,
  kSqueeze,
  kUnsqueeze,
  kTranspose,
  kGather,
  kPad,
  // Shape computation and constants
  kShape,
  kConstantOfShape,
  kConstant,
  kIdentity,
  // Internal, made by the fuser (never imported): a chain of the pointwise ops above in one pass
  kPointwiseChain,
  // Internal, made by the fuser: the expectation of constant weights under a Softmax along one
  // axis (a detector's distribution head: Softmax over bins, then a 1x1 Conv summing bin * index)
  kSoftmaxExpectation,
  kCount
};

inline constexpr int kOpCount = static_cast<int>(OpKind::kCount);

std::string_view op_name(OpKind kind);

// Pointwise unary and broadcasting binary ops: output element i comes from input element i (and
// a broadcast operand) alone, one arithmetic operation or so per element.
bool is_elementwise(OpKind kind);
bool is_pointwise_unary(OpKind kind);   // Relu .. Exp above (Clip's bounds are scalars)
bool is_pointwise_binary(OpKind kind);  // Add .. PRelu above
// Ops whose output element i is computed from the inputs' elements at i (broadcast) before it is
// written: the elementwise ops and PointwiseChain. The output may take a same-shaped input's bytes.
bool writes_elementwise(OpKind kind);
// Ops whose output is their input 0's bytes under another description (Reshape, Flatten, Squeeze,
// Unsqueeze, Identity): the memory planner may make the output a view of a dying input.
bool keeps_input_bytes(OpKind kind);
std::optional<OpKind> op_from_name(std::string_view name);

}  // namespace edgefuse
