// Softmax and reductions.
#include "models/onnx/op_importers.h"

namespace edgefuse {

// Before opset 13 Softmax coerced its input to 2-D at `axis` (default 1); the IR marks that form
// with legacy_flatten=1. Opset 13 normalises along one axis (default -1).
Status import_softmax(NodeImportContext& ctx) {
  const bool legacy = ctx.opset() < 13;
  EF_ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().get_int("axis", legacy ? 1 : -1));
  EF_RETURN_IF_ERROR(ctx.check_axis("axis", axis, ctx.input_rank(0)));
  ctx.node().attrs.set("axis", axis);
  if (legacy) ctx.node().attrs.set("legacy_flatten", int64_t{1});
  return Status::ok();
}

// The IR keeps opset-13 form: axes as an attribute. Opset 18 moved axes to an input, which must
// then be a constant.
Status import_reduce_mean(NodeImportContext& ctx) {
  const int rank = ctx.input_rank(0);
  EF_ASSIGN_OR_RETURN(bool keepdims, ctx.attrs().get_flag("keepdims", true));
  std::optional<std::vector<int64_t>> axes;
  bool noop_with_empty_axes = false;
  if (ctx.opset() < 18) {
    EF_ASSIGN_OR_RETURN(axes, ctx.attrs().find_ints("axes"));
  } else {
    EF_ASSIGN_OR_RETURN(noop_with_empty_axes, ctx.attrs().get_flag("noop_with_empty_axes", false));
    if (ctx.has_input(1)) {
      const Tensor* constant = ctx.constant_input(1);
      if (constant == nullptr) return ctx.not_supported("input 'axes' must be a constant");
      if (constant->rank() != 1 || (constant->dtype() != DType::kI64 && constant->numel() > 0)) {
        return ctx.invalid("input 'axes' must be a 1-D int64 tensor, got ", constant->desc().to_string());
      }
      if (constant->numel() > 0) axes = constant->to_int64_vector();
    }
    ctx.keep_inputs(1);
  }
  if (axes && axes->empty()) axes.reset();
  if (!axes && noop_with_empty_axes) {  // reduces nothing: the input itself
    ctx.node().op = OpKind::kIdentity;
    return Status::ok();
  }
  if (axes) {
    EF_RETURN_IF_ERROR(ctx.check_axes("axes", *axes, rank));
    ctx.node().attrs.set("axes", std::move(*axes));
  }
  if (ctx.attrs().has("keepdims")) ctx.node().attrs.set("keepdims", int64_t{keepdims});
  return Status::ok();
}

}  // namespace edgefuse
