// The op import table: one import function per ONNX op_type, each turning one ONNX node into one
// IR node in opset-13 form (see graph_builder.h for what a function may do).
#pragma once

#include <span>
#include <string_view>

#include "models/onnx/graph_builder.h"
#include "runtime/op_kind.h"

namespace edgefuse {

using OpImportFn = Status (*)(NodeImportContext& ctx);

struct OpImporter {
  const char* op_type;  // ONNX op_type (default domain)
  OpKind kind;          // the IR op it becomes
  int min_opset;        // oldest default-domain opset this importer converts
  OpImportFn import;
  const char* notes;  // restrictions, as listed in docs/SUPPORTED_OPS.md
};

// nullptr when the op_type has no importer.
const OpImporter* find_op_importer(std::string_view op_type);
std::span<const OpImporter> op_importers();

// Default-domain opsets a model may import; each op also has its own oldest supported version
// (OpImporter::min_opset: the oldest whose semantics the importer converts).
inline constexpr int kMinOpset = 1;
inline constexpr int kMaxOpset = 18;

// Largest kernel size, stride, dilation or pad accepted: far above real models, low enough that
// no product of them overflows.
inline constexpr int64_t kMaxSpatialAttribute = int64_t{1} << 20;

// The value of a Constant node (it becomes an initializer, not a node).
Result<Tensor> constant_node_value(NodeImportContext& ctx);

// import_nn.cpp
Status import_conv(NodeImportContext& ctx);
Status import_conv_transpose(NodeImportContext& ctx);
Status import_matmul(NodeImportContext& ctx);
Status import_gemm(NodeImportContext& ctx);
Status import_batch_normalization(NodeImportContext& ctx);
Status import_max_pool(NodeImportContext& ctx);
Status import_average_pool(NodeImportContext& ctx);
Status import_global_average_pool(NodeImportContext& ctx);
// import_pointwise.cpp
Status import_no_attributes(NodeImportContext& ctx);
Status import_leaky_relu(NodeImportContext& ctx);
Status import_hard_sigmoid(NodeImportContext& ctx);
Status import_clip(NodeImportContext& ctx);
// import_reduce.cpp
Status import_softmax(NodeImportContext& ctx);
Status import_reduce_mean(NodeImportContext& ctx);
// import_resize.cpp
Status import_resize(NodeImportContext& ctx);
Status import_upsample(NodeImportContext& ctx);
// import_shape.cpp
Status import_cast(NodeImportContext& ctx);
Status import_concat(NodeImportContext& ctx);
Status import_split(NodeImportContext& ctx);
Status import_slice(NodeImportContext& ctx);
Status import_reshape(NodeImportContext& ctx);
Status import_flatten(NodeImportContext& ctx);
Status import_squeeze(NodeImportContext& ctx);
Status import_unsqueeze(NodeImportContext& ctx);
Status import_transpose(NodeImportContext& ctx);
Status import_gather(NodeImportContext& ctx);
Status import_pad(NodeImportContext& ctx);
Status import_shape(NodeImportContext& ctx);
Status import_constant_of_shape(NodeImportContext& ctx);
Status import_dropout(NodeImportContext& ctx);

}  // namespace edgefuse
