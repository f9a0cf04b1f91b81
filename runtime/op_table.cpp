#include "runtime/op_table.h"

#include <array>
#include <climits>
#include <unordered_map>

#include "runtime/ops/ops.h"

namespace edgefuse {

namespace {

constexpr int kMany = 4096;  // variadic inputs/outputs (Concat, Split)

// clang-format off
constexpr OpDef kOpTable[] = {
  // kind                         name                  in      out    infer                       reference                    cpu
  {OpKind::kConv,               "Conv",                2, 4,    1, 1, infer_conv,               reference_conv,               cpu_conv},
  {OpKind::kConvTranspose,      "ConvTranspose",       2, 3,    1, 1, infer_conv_transpose,     reference_conv_transpose,     nullptr},
  {OpKind::kMatMul,             "MatMul",              2, 2,    1, 1, infer_matmul,             reference_matmul,             cpu_matmul},
  {OpKind::kGemm,               "Gemm",                2, 3,    1, 1, infer_gemm,               reference_gemm,               cpu_gemm},
  {OpKind::kBatchNormalization, "BatchNormalization",  5, 5,    1, 1, infer_batch_normalization, reference_batch_normalization, nullptr},
  {OpKind::kMaxPool,            "MaxPool",             1, 1,    1, 2, infer_pool,               reference_max_pool,           cpu_max_pool},
  {OpKind::kAveragePool,        "AveragePool",         1, 1,    1, 1, infer_pool,               reference_average_pool,       nullptr},
  {OpKind::kGlobalAveragePool,  "GlobalAveragePool",   1, 1,    1, 1, infer_global_average_pool, reference_global_average_pool, nullptr},
  {OpKind::kRelu,               "Relu",                1, 1,    1, 1, infer_same_as_input,      reference_relu,               cpu_unary},
  {OpKind::kLeakyRelu,          "LeakyRelu",           1, 1,    1, 1, infer_same_as_input,      reference_leaky_relu,         cpu_unary},
  {OpKind::kSigmoid,            "Sigmoid",             1, 1,    1, 1, infer_same_as_input,      reference_sigmoid,            cpu_unary},
  {OpKind::kTanh,               "Tanh",                1, 1,    1, 1, infer_same_as_input,      reference_tanh,               cpu_unary},
  {OpKind::kHardSigmoid,        "HardSigmoid",         1, 1,    1, 1, infer_same_as_input,      reference_hard_sigmoid,       cpu_unary},
  {OpKind::kHardSwish,          "HardSwish",           1, 1,    1, 1, infer_same_as_input,      reference_hard_swish,         cpu_unary},
  {OpKind::kClip,               "Clip",                1, 3,    1, 1, infer_same_as_input,      reference_clip,               cpu_unary},
  {OpKind::kSqrt,               "Sqrt",                1, 1,    1, 1, infer_same_as_input,      reference_sqrt,               cpu_unary},
  {OpKind::kExp,                "Exp",                 1, 1,    1, 1, infer_same_as_input,      reference_exp,                cpu_unary},
  {OpKind::kAdd,                "Add",                 2, 2,    1, 1, infer_broadcast,          reference_add,                cpu_binary},
  {OpKind::kSub,                "Sub",                 2, 2,    1, 1, infer_broadcast,          reference_sub,                cpu_binary},
  {OpKind::kMul,                "Mul",                 2, 2,    1, 1, infer_broadcast,          reference_mul,                cpu_binary},
  {OpKind::kDiv,                "Div",                 2, 2,    1, 1, infer_broadcast,          reference_div,                cpu_binary},
  {OpKind::kPow,                "Pow",                 2, 2,    1, 1, infer_broadcast,          reference_pow,                cpu_binary},
  {OpKind::kPRelu,              "PRelu",               2, 2,    1, 1, infer_broadcast,          reference_prelu,              cpu_binary},
  {OpKind::kSoftmax,            "Softmax",             1, 1,    1, 1, infer_softmax,            reference_softmax,            cpu_softmax},
  {OpKind::kReduceMean,         "ReduceMean",          1, 1,    1, 1, infer_reduce_mean,        reference_reduce_mean,        nullptr},
  {OpKind::kCast,               "Cast",                1, 1,    1, 1, infer_cast,               reference_cast,               nullptr},
  {OpKind::kConcat,             "Concat",              1, kMany, 1, 1, infer_concat,            reference_concat,             nullptr},
  {OpKind::kSplit,              "Split",               1, 2,    1, kMany, infer_split,          reference_split,              nullptr},
  {OpKind::kSlice,              "Slice",               3, 5,    1, 1, infer_slice,              reference_slice,              nullptr},
  {OpKind::kResize,             "Resize",              1, 4,    1, 1, infer_resize,             reference_resize,             nullptr},
  {OpKind::kReshape,            "Reshape",             2, 2,    1, 1, infer_reshape,            reference_copy_input,         nullptr},
  {OpKind::kFlatten,            "Flatten",             1, 1,    1, 1, infer_flatten,            reference_copy_input,         nullptr},
  {OpKind::kSqueeze,            "Squeeze",             1, 2,    1, 1, infer_squeeze,            reference_copy_input,         nullptr},
  {OpKind::kUnsqueeze,          "Unsqueeze",           2, 2,    1, 1, infer_unsqueeze,          reference_copy_input,         nullptr},
  {OpKind::kTranspose,          "Transpose",           1, kMany, 1, 1, infer_transpose,          reference_transpose,          nullptr},
  {OpKind::kGather,             "Gather",              2, 2,    1, 1, infer_gather,             reference_gather,             nullptr},
  {OpKind::kPad,                "Pad",                 2, 3,    1, 1, infer_pad,                reference_pad,                nullptr},
  {OpKind::kShape,              "Shape",               1, 1,    1, 1, infer_shape,              reference_shape,              nullptr},
  {OpKind::kConstantOfShape,    "ConstantOfShape",     1, 1,    1, 1, infer_constant_of_shape,  reference_constant_of_shape,  nullptr},
  {OpKind::kConstant,           "Constant",            0, 0,    1, 1, infer_constant,           reference_constant,           nullptr},
  {OpKind::kIdentity,           "Identity",            1, 1,    1, 1, infer_same_as_input,      reference_copy_input,         nullptr},
  {OpKind::kPointwiseChain,     "PointwiseChain",      1, 4,    1, 1, infer_pointwise_chain,    reference_pointwise_chain,    cpu_pointwise_chain},
  {OpKind::kSoftmaxExpectation, "SoftmaxExpectation",  2, 3,    1, 1, infer_softmax_expectation, reference_softmax_expectation, cpu_softmax_expectation},
};
// clang-format on

static_assert(std::size(kOpTable) == kOpCount, "every OpKind needs exactly one row in kOpTable");

constexpr bool rows_in_enum_order() {
  for (int i = 0; i < kOpCount; ++i) {
    if (static_cast<int>(kOpTable[i].kind) != i) return false;
  }
  return true;
}
static_assert(rows_in_enum_order(), "kOpTable rows must follow the OpKind order");

}  // namespace

const OpDef& op_def(OpKind kind) {
  EF_ASSERT(static_cast<int>(kind) < kOpCount, "bad OpKind ", static_cast<int>(kind));
  return kOpTable[static_cast<int>(kind)];
}

std::span<const OpDef> op_table() {
  return kOpTable;
}

bool is_pointwise_unary(OpKind kind) {
  switch (kind) {
    case OpKind::kRelu:
    case OpKind::kLeakyRelu:
    case OpKind::kSigmoid:
    case OpKind::kTanh:
    case OpKind::kHardSigmoid:
    case OpKind::kHardSwish:
    case OpKind::kClip:
    case OpKind::kSqrt:
    case OpKind::kExp:
      return true;
    default:
      return false;
  }
}

bool is_pointwise_binary(OpKind kind) {
  switch (kind) {
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv:
    case OpKind::kPow:
    case OpKind::kPRelu:
      return true;
    default:
      return false;
  }
}

bool is_elementwise(OpKind kind) {
  return is_pointwise_unary(kind) || is_pointwise_binary(kind);
}

bool writes_elementwise(OpKind kind) {
  return is_elementwise(kind) || kind == OpKind::kPointwiseChain;
}

bool keeps_input_bytes(OpKind kind) {
  return kind == OpKind::kReshape || kind == OpKind::kFlatten || kind == OpKind::kSqueeze ||
         kind == OpKind::kUnsqueeze || kind == OpKind::kIdentity;
}

std::string_view op_name(OpKind kind) {
  return op_def(kind).name;
}

std::optional<OpKind> op_from_name(std::string_view name) {
  static const auto* const by_name = [] {
    auto* map = new std::unordered_map<std::string_view, OpKind>();
    for (const OpDef& def : kOpTable) map->emplace(def.name, def.kind);
    return map;
  }();
  auto it = by_name->find(name);
  if (it == by_name->end()) return std::nullopt;
  return it->second;
}

Status infer_node(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  outputs.clear();
  Status status = op_def(node.op).infer(node, inputs, outputs);
  if (!status.is_ok()) return status.with_context(std::string(op_name(node.op)) + " '" + node.name + "'");
  return Status::ok();
}

}  // namespace edgefuse
