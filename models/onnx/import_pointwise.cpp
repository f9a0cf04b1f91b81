// Pointwise ops: activations, Clip, and the broadcasting binary ops.
#include <cmath>

#include "models/onnx/op_importers.h"

namespace edgefuse {

namespace {

Status copy_float(NodeImportContext& ctx, const char* name) {
  EF_ASSIGN_OR_RETURN(std::optional<float> value, ctx.attrs().find_float(name));
  if (!value) return Status::ok();
  if (!std::isfinite(*value)) return ctx.invalid("attribute '", name, "' must be finite, got ", *value);
  ctx.node().attrs.set(name, *value);
  return Status::ok();
}

}  // namespace

Status import_no_attributes(NodeImportContext&) {
  return Status::ok();
}

Status import_leaky_relu(NodeImportContext& ctx) {
  return copy_float(ctx, "alpha");
}

Status import_hard_sigmoid(NodeImportContext& ctx) {
  EF_RETURN_IF_ERROR(copy_float(ctx, "alpha"));
  return copy_float(ctx, "beta");
}

// Clip-6 had min/max attributes; from opset 11 they are optional scalar inputs.
Status import_clip(NodeImportContext& ctx) {
  if (ctx.opset() >= 11) return Status::ok();
  ctx.keep_inputs(1);
  EF_ASSIGN_OR_RETURN(std::optional<float> min, ctx.attrs().find_float("min"));
  EF_ASSIGN_OR_RETURN(std::optional<float> max, ctx.attrs().find_float("max"));
  if (min) ctx.set_scalar_input_like(1, "min", *min, 0);
  if (max) ctx.set_scalar_input_like(2, "max", *max, 0);
  return Status::ok();
}

}  // namespace edgefuse
