#include <string>
#include <unordered_map>

#include "models/onnx/op_importers.h"

namespace edgefuse {

namespace {

// clang-format off
constexpr OpImporter kImporters[] = {
  // op_type               IR op                         opset  import                      notes
  {"Conv",                 OpKind::kConv,                1, import_conv,                "1-D/2-D/3-D; auto_pad, group, dilations"},
  {"ConvTranspose",        OpKind::kConvTranspose,       1, import_conv_transpose,      "output_padding, output_shape, auto_pad"},
  {"MatMul",               OpKind::kMatMul,              1, import_matmul,              ""},
  {"Gemm",                 OpKind::kGemm,                7, import_gemm,                "alpha, beta, transA, transB"},
  {"BatchNormalization",   OpKind::kBatchNormalization,  7, import_batch_normalization, "inference only: spatial=1, training_mode=0, one output"},
  {"MaxPool",              OpKind::kMaxPool,             1, import_max_pool,            ""},
  {"AveragePool",          OpKind::kAveragePool,         7, import_average_pool,        "count_include_pad, ceil_mode"},
  {"GlobalAveragePool",    OpKind::kGlobalAveragePool,   1, import_global_average_pool, ""},
  {"Relu",                 OpKind::kRelu,                6, import_no_attributes,       ""},
  {"LeakyRelu",            OpKind::kLeakyRelu,           6, import_leaky_relu,          ""},
  {"Sigmoid",              OpKind::kSigmoid,             6, import_no_attributes,       ""},
  {"Tanh",                 OpKind::kTanh,                6, import_no_attributes,       ""},
  {"HardSigmoid",          OpKind::kHardSigmoid,         6, import_hard_sigmoid,        ""},
  {"HardSwish",            OpKind::kHardSwish,           14, import_no_attributes,      ""},
  {"Clip",                 OpKind::kClip,                6, import_clip,                "opset < 11: min/max attributes become inputs"},
  {"Sqrt",                 OpKind::kSqrt,                6, import_no_attributes,       ""},
  {"Exp",                  OpKind::kExp,                 6, import_no_attributes,       ""},
  {"Add",                  OpKind::kAdd,                 7, import_no_attributes,       ""},
  {"Sub",                  OpKind::kSub,                 7, import_no_attributes,       ""},
  {"Mul",                  OpKind::kMul,                 7, import_no_attributes,       ""},
  {"Div",                  OpKind::kDiv,                 7, import_no_attributes,       ""},
  {"Pow",                  OpKind::kPow,                 7, import_no_attributes,       ""},
  {"PRelu",                OpKind::kPRelu,               7, import_no_attributes,       ""},
  {"Softmax",              OpKind::kSoftmax,             1, import_softmax,             "opset < 13: legacy_flatten=1 (2-D coercion at axis)"},
  {"ReduceMean",           OpKind::kReduceMean,          1, import_reduce_mean,         "opset 18: axes input must be constant"},
  {"Cast",                 OpKind::kCast,                6, import_cast,                "to: a supported element type"},
  {"Concat",               OpKind::kConcat,              4, import_concat,              ""},
  {"Split",                OpKind::kSplit,               2, import_split,               "opset < 13: split attribute becomes input; opset 18 num_outputs"},
  {"Slice",                OpKind::kSlice,               1, import_slice,               "opset < 10: starts/ends/axes attributes become inputs"},
  {"Resize",               OpKind::kResize,              10, import_resize,             "opset 18: antialias=0, no axes, keep_aspect_ratio_policy=stretch"},
  {"Upsample",             OpKind::kResize,              7, import_upsample,            "becomes Resize (asymmetric, floor)"},
  {"Reshape",              OpKind::kReshape,             5, import_reshape,             ""},
  {"Flatten",              OpKind::kFlatten,             1, import_flatten,             ""},
  {"Squeeze",              OpKind::kSqueeze,             1, import_squeeze,             "opset < 13: axes attribute becomes input"},
  {"Unsqueeze",            OpKind::kUnsqueeze,           1, import_unsqueeze,           "opset < 13: axes attribute becomes input"},
  {"Transpose",            OpKind::kTranspose,           1, import_transpose,           ""},
  {"Gather",               OpKind::kGather,              1, import_gather,              ""},
  {"Pad",                  OpKind::kPad,                 2, import_pad,                 "opset < 11: pads/value attributes become inputs; no axes input"},
  {"Shape",                OpKind::kShape,               1, import_shape,               ""},
  {"ConstantOfShape",      OpKind::kConstantOfShape,     9, import_constant_of_shape,   ""},
  {"Constant",             OpKind::kConstant,            1, nullptr,                    "becomes an initializer; value, value_float(s), value_int(s)"},
  {"Identity",             OpKind::kIdentity,            1, import_no_attributes,       ""},
  {"Dropout",              OpKind::kIdentity,            7, import_dropout,             "becomes Identity; no mask output, training_mode=0"},
};
// clang-format on

}  // namespace

std::span<const OpImporter> op_importers() {
  return kImporters;
}

const OpImporter* find_op_importer(std::string_view op_type) {
  static const auto* const by_type = [] {
    auto* map = new std::unordered_map<std::string_view, const OpImporter*>();
    for (const OpImporter& importer : kImporters) map->emplace(importer.op_type, &importer);
    return map;
  }();
  auto it = by_type->find(op_type);
  return it == by_type->end() ? nullptr : it->second;
}

}  // namespace edgefuse
