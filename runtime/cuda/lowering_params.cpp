#include "runtime/cuda/lowering_params.h"

#include "runtime/op_kind.h"
#include "runtime/ops/conv_epilogue.h"

namespace edgefuse::gpu {

Result<ActivationParams> epilogue_activation(const Node& node) {
  EF_ASSIGN_OR_RETURN(const ConvEpilogue e, conv_epilogue(node.attrs));
  using Kind = ConvEpilogue::Kind;
  ActivationParams a;
  a.alpha = e.alpha;
  a.beta = e.beta;
  a.min = e.min;
  a.max = e.max;
  switch (e.kind) {
    case Kind::kNone:
      a.kind = Activation::kNone;
      break;
    case Kind::kRelu:
      a.kind = Activation::kRelu;
      break;
    case Kind::kLeakyRelu:
      a.kind = Activation::kLeakyRelu;
      break;
    case Kind::kClip:
      a.kind = Activation::kClip;
      break;
    case Kind::kSigmoid:
      a.kind = Activation::kSigmoid;
      break;
    case Kind::kHardSwish:
      a.kind = Activation::kHardSwish;
      break;
    case Kind::kHardSigmoid:
      a.kind = Activation::kHardSigmoid;
      break;
    case Kind::kSilu:
      a.kind = Activation::kSilu;
      break;
  }
  return a;
}

std::optional<DepthwiseConvStep> depthwise_conv_step(const ConvProblem& p, const WindowGeometry& g,
                                                     int64_t residual_channels) {
  if (p.group != p.in_channels || p.out_channels != p.in_channels || p.channels_last ||
      residual_channels != p.out_channels || g.input[0] != 1 || g.kernel[0] != 1 || g.strides[0] != 1 ||
      g.pad_begin[0] != 0) {
    return std::nullopt;
  }
  DepthwiseConvStep s;
  s.batch = p.batch;
  s.channels = p.out_channels;
  for (int a = 0; a < 2; ++a) {
    const int axis = a + 1;
    if (g.kernel[axis] > kDepthwiseMaxKernel || g.strides[axis] > kDepthwiseMaxStride || g.dilations[axis] != 1) {
      return std::nullopt;
    }
    s.input[a] = g.input[axis];
    s.output[a] = g.output[axis];
    s.kernel[a] = static_cast<int32_t>(g.kernel[axis]);
    s.stride[a] = static_cast<int32_t>(g.strides[axis]);
    s.pad_begin[a] = static_cast<int32_t>(g.pad_begin[axis]);
  }
  return s;
}

std::optional<PointwiseConvStep> pointwise_conv_step(const ConvProblem& p, const WindowGeometry& g) {
  if (p.group != 1 || p.channels_last) return std::nullopt;
  PointwiseConvStep s;
  s.batch = p.batch;
  s.in_channels = p.in_channels;
  s.out_channels = p.out_channels;
  s.positions = 1;
  for (int a = 0; a < 3; ++a) {
    if (g.kernel[a] != 1 || g.strides[a] != 1 || g.pad_begin[a] != 0 || g.output[a] != g.input[a]) return std::nullopt;
    s.positions *= g.output[a];
  }
  return s;
}

ConvStep general_conv_step(const ConvProblem& p, const WindowGeometry& g) {
  ConvStep s;
  s.batch = p.batch;
  s.in_channels = p.in_channels;
  s.out_channels = p.out_channels;
  s.group = p.group;
  s.input_channels_last = p.channels_last;
  // The most channels per work item that tile each group's output channels exactly.
  for (int64_t per_item = kMaxConvChannelsPerItem; per_item >= 1; --per_item) {
    if (p.out_channels_per_group() % per_item == 0) {
      s.channels_per_item = per_item;
      break;
    }
  }
  copy_window(g, s);
  return s;
}

ActivationParams unary_activation(OpKind op, float alpha, float beta, float lo, float hi) {
  ActivationParams a;
  switch (op) {
    case OpKind::kRelu:
      a.kind = Activation::kRelu;
      break;
    case OpKind::kLeakyRelu:
      a.kind = Activation::kLeakyRelu;
      a.alpha = alpha;
      break;
    case OpKind::kSigmoid:
      a.kind = Activation::kSigmoid;
      break;
    case OpKind::kTanh:
      a.kind = Activation::kTanh;
      break;
    case OpKind::kHardSigmoid:
      a.kind = Activation::kHardSigmoid;
      a.alpha = alpha;
      a.beta = beta;
      break;
    case OpKind::kHardSwish:
      a.kind = Activation::kHardSwish;
      break;
    case OpKind::kClip:
      a.kind = Activation::kClip;
      a.min = lo;
      a.max = hi;
      break;
    case OpKind::kSqrt:
      a.kind = Activation::kSqrt;
      break;
    default:
      a.kind = Activation::kExp;
      break;
  }
  return a;
}

BinaryOp binary_op(OpKind op) {
  switch (op) {
    case OpKind::kAdd:
      return BinaryOp::kAdd;
    case OpKind::kSub:
      return BinaryOp::kSub;
    case OpKind::kMul:
      return BinaryOp::kMul;
    case OpKind::kDiv:
      return BinaryOp::kDiv;
    case OpKind::kPow:
      return BinaryOp::kPow;
    default:
      return BinaryOp::kPRelu;
  }
}

BlockCopyStep part_copy(const TensorDesc& whole, int64_t axis, int64_t part, int64_t at, bool into_whole) {
  const std::span<const int64_t> dims(whole.shape);
  const int64_t inner = shape_numel(dims.subspan(static_cast<size_t>(axis) + 1));
  const int64_t whole_row = whole.shape[static_cast<size_t>(axis)] * inner;
  BlockCopyStep s;
  s.element_bytes = static_cast<int>(dtype_size(whole.dtype));
  s.rows = shape_numel(dims.first(static_cast<size_t>(axis)));
  s.length = part * inner;
  s.src_stride = into_whole ? s.length : whole_row;
  s.src_offset = into_whole ? 0 : at * inner;
  s.dst_stride = into_whole ? whole_row : s.length;
  s.dst_offset = into_whole ? at * inner : 0;
  return s;
}

int64_t normalized_axis(const Node& node, size_t rank) {
  int64_t axis = node.attrs.get_int("axis", 0);
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

}  // namespace edgefuse::gpu
