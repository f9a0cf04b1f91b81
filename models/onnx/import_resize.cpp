// Resize (opsets 10..18) and Upsample (opsets 7..9), both to the opset-13 Resize form:
// inputs (X, roi, scales, sizes) with omitted ones as kNoValue, ONNX's attribute names.
#include <cmath>

#include "models/onnx/op_importers.h"

namespace edgefuse {

namespace {

constexpr int kRoi = 1;
constexpr int kScales = 2;
constexpr int kSizes = 3;

bool is_one_of(const std::string& value, std::initializer_list<const char*> allowed) {
  for (const char* a : allowed) {
    if (value == a) return true;
  }
  return false;
}

Status check_mode(NodeImportContext& ctx, const std::string& mode, bool cubic_allowed) {
  if (mode == "nearest" || mode == "linear" || (cubic_allowed && mode == "cubic")) return Status::ok();
  return ctx.invalid("attribute 'mode' must be nearest, linear", cubic_allowed ? " or cubic" : "", ", got '", mode,
                     "'");
}

// Constant scales must be positive, finite, bounded, one per input axis.
Status check_scales(NodeImportContext& ctx, const Tensor& scales) {
  if (scales.rank() != 1 || !dtype_is_float(scales.dtype())) {
    return ctx.invalid("input 'scales' must be a 1-D float tensor, got ", scales.desc().to_string());
  }
  const int rank = ctx.input_rank(0);
  if (rank >= 0 && scales.numel() != rank) {
    return ctx.invalid("input 'scales' has ", scales.numel(), " values for an input of rank ", rank);
  }
  for (int64_t i = 0; i < scales.numel(); ++i) {
    const double s = scales.double_at(i);
    if (!(s > 0.0) || !std::isfinite(s) || s > static_cast<double>(kMaxSpatialAttribute)) {
      return ctx.invalid("input 'scales' value ", s, " must be positive, finite and at most ", kMaxSpatialAttribute);
    }
  }
  return Status::ok();
}

Status check_sizes(NodeImportContext& ctx, const Tensor& sizes) {
  if (sizes.rank() != 1 || sizes.dtype() != DType::kI64) {
    return ctx.invalid("input 'sizes' must be a 1-D int64 tensor, got ", sizes.desc().to_string());
  }
  const int rank = ctx.input_rank(0);
  if (rank >= 0 && sizes.numel() != rank) {
    return ctx.invalid("input 'sizes' has ", sizes.numel(), " values for an input of rank ", rank);
  }
  for (int64_t v : sizes.to_int64_vector()) {
    if (v < 0 || v > kMaxSpatialAttribute) return ctx.invalid("input 'sizes' value ", v, " is out of range");
  }
  return Status::ok();
}

// Drops an input given as a constant with no elements (opset 11 had to pass empty tensors).
void drop_if_empty_constant(NodeImportContext& ctx, int index) {
  const Tensor* constant = ctx.constant_input(index);
  if (constant != nullptr && constant->numel() == 0) ctx.node().inputs[static_cast<size_t>(index)] = kNoValue;
}

// The older forms behave as asymmetric coordinates with floor rounding for nearest.
void set_legacy_coordinates(NodeImportContext& ctx, const std::string& mode) {
  ctx.node().attrs.set("mode", mode);
  ctx.node().attrs.set("coordinate_transformation_mode", std::string("asymmetric"));
  if (mode == "nearest") ctx.node().attrs.set("nearest_mode", std::string("floor"));
}

Status import_resize_10(NodeImportContext& ctx) {
  EF_ASSIGN_OR_RETURN(std::string mode, ctx.attrs().get_string("mode", "nearest"));
  EF_RETURN_IF_ERROR(check_mode(ctx, mode, false));
  if (const Tensor* scales = ctx.constant_input(1)) EF_RETURN_IF_ERROR(check_scales(ctx, *scales));
  const ValueId scales = ctx.node().inputs.at(1);
  ctx.node().inputs = {ctx.node().inputs[0], kNoValue, scales};
  set_legacy_coordinates(ctx, mode);
  return Status::ok();
}

}  // namespace

Status import_resize(NodeImportContext& ctx) {
  if (ctx.input_count() < 2) return ctx.invalid("Resize needs at least 2 inputs, got ", ctx.input_count());
  if (ctx.opset() < 11) return import_resize_10(ctx);
  AttributeReader& attrs = ctx.attrs();
  Attributes& out = ctx.node().attrs;

  EF_ASSIGN_OR_RETURN(std::string mode, attrs.get_string("mode", "nearest"));
  EF_RETURN_IF_ERROR(check_mode(ctx, mode, true));
  EF_ASSIGN_OR_RETURN(std::string coordinates, attrs.get_string("coordinate_transformation_mode", "half_pixel"));
  if (!is_one_of(coordinates, {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                               "tf_half_pixel_for_nn", "tf_crop_and_resize"})) {
    return ctx.invalid("attribute 'coordinate_transformation_mode' value '", coordinates, "' is not known");
  }
  EF_ASSIGN_OR_RETURN(std::string nearest_mode, attrs.get_string("nearest_mode", "round_prefer_floor"));
  if (!is_one_of(nearest_mode, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})) {
    return ctx.invalid("attribute 'nearest_mode' value '", nearest_mode, "' is not known");
  }
  EF_ASSIGN_OR_RETURN(std::optional<float> cubic_coeff_a, attrs.find_float("cubic_coeff_a"));
  EF_ASSIGN_OR_RETURN(bool exclude_outside, attrs.get_flag("exclude_outside", false));
  EF_ASSIGN_OR_RETURN(std::optional<float> extrapolation_value, attrs.find_float("extrapolation_value"));
  EF_ASSIGN_OR_RETURN(bool antialias, attrs.get_flag("antialias", false));
  if (antialias) return ctx.not_supported("antialias=1 is not supported");
  if (attrs.has("axes")) return ctx.not_supported("attribute 'axes' is not supported");
  EF_ASSIGN_OR_RETURN(std::string policy, attrs.get_string("keep_aspect_ratio_policy", "stretch"));
  if (policy != "stretch") return ctx.not_supported("keep_aspect_ratio_policy='", policy, "' is not supported");

  out.set("mode", mode);
  out.set("coordinate_transformation_mode", coordinates);
  if (attrs.has("nearest_mode")) out.set("nearest_mode", nearest_mode);
  if (cubic_coeff_a) out.set("cubic_coeff_a", *cubic_coeff_a);
  if (attrs.has("exclude_outside")) out.set("exclude_outside", int64_t{exclude_outside});
  if (extrapolation_value) out.set("extrapolation_value", *extrapolation_value);

  // roi only matters for tf_crop_and_resize; empty constants mean "not given".
  if (coordinates != "tf_crop_and_resize" && ctx.has_input(kRoi)) ctx.node().inputs[kRoi] = kNoValue;
  drop_if_empty_constant(ctx, kRoi);
  drop_if_empty_constant(ctx, kScales);
  drop_if_empty_constant(ctx, kSizes);
  if (coordinates == "tf_crop_and_resize" && !ctx.has_input(kRoi)) {
    return ctx.invalid("coordinate_transformation_mode=tf_crop_and_resize needs input 'roi'");
  }
  if (ctx.has_input(kScales) == ctx.has_input(kSizes)) {
    return ctx.invalid("exactly one of inputs 'scales' and 'sizes' must be given");
  }
  if (const Tensor* scales = ctx.constant_input(kScales)) EF_RETURN_IF_ERROR(check_scales(ctx, *scales));
  if (const Tensor* sizes = ctx.constant_input(kSizes)) EF_RETURN_IF_ERROR(check_sizes(ctx, *sizes));
  ctx.keep_inputs(ctx.input_count());
  return Status::ok();
}

// Upsample-7 had scales as an attribute, Upsample-9 as its second input.
Status import_upsample(NodeImportContext& ctx) {
  EF_ASSIGN_OR_RETURN(std::string mode, ctx.attrs().get_string("mode", "nearest"));
  EF_RETURN_IF_ERROR(check_mode(ctx, mode, false));
  const ValueId x = ctx.node().inputs.at(0);
  if (ctx.opset() < 9) {
    EF_ASSIGN_OR_RETURN(std::optional<std::vector<float>> scales, ctx.attrs().find_floats("scales"));
    if (!scales) return ctx.invalid("attribute 'scales' is required");
    Tensor constant = Tensor::from_vector<float>({static_cast<int64_t>(scales->size())}, *scales);
    EF_RETURN_IF_ERROR(check_scales(ctx, constant));
    ctx.node().inputs = {x};
    ctx.set_constant_input(kScales, "scales", std::move(constant));
  } else {
    if (ctx.input_count() != 2) return ctx.invalid("Upsample-9 takes 2 inputs (X, scales), got ", ctx.input_count());
    if (const Tensor* scales = ctx.constant_input(1)) EF_RETURN_IF_ERROR(check_scales(ctx, *scales));
    const ValueId scales = ctx.node().inputs[1];
    ctx.node().inputs = {x, kNoValue, scales};
  }
  set_legacy_coordinates(ctx, mode);
  return Status::ok();
}

}  // namespace edgefuse
