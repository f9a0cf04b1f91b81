// Shape rule and reference kernels of the pointwise unary ops. The optimised f32 path is in
// unary_cpu.cpp.
#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/ops/numeric.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/unary_math.h"

namespace edgefuse {

namespace {

// Clip's optional bound `index` (1: min, 2: max): a scalar or one-element tensor of X's dtype.
Status check_clip_bound(std::span<const Tensor* const> inputs, size_t index, const char* name) {
  if (inputs.size() <= index || inputs[index] == nullptr) return Status::ok();
  const Tensor& bound = *inputs[index];
  if (bound.dtype() != inputs[0]->dtype()) {
    return invalid_model("Clip ", name, " is ", dtype_name(bound.dtype()), " but the input is ",
                         dtype_name(inputs[0]->dtype()));
  }
  if (bound.numel() != 1) {
    return invalid_model("Clip ", name, " must be a scalar or a 1-element tensor, got ", bound.desc().to_string());
  }
  return Status::ok();
}

// Applies `fn` to every element of input 0. Float types (f16, f32, f64) are computed in double;
// integer types, when kIntegers, in int64_t; other dtypes are rejected.
template <bool kIntegers, typename Fn>
Status map_elements(const KernelArgs& args, Fn fn) {
  const Tensor& x = *args.inputs[0];
  Tensor& y = *args.outputs[0];
  return visit_dtype(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* in = x.data<T>();
    T* out = y.data<T>();
    if constexpr (kIsFloatLike<T>) {
      for (int64_t i = 0; i < x.numel(); ++i) out[i] = from_double<T>(fn(as_double(in[i])));
      return Status::ok();
    } else if constexpr (kIntegers && kIsInteger<T>) {
      for (int64_t i = 0; i < x.numel(); ++i) out[i] = static_cast<T>(fn(static_cast<int64_t>(in[i])));
      return Status::ok();
    } else {
      return unsupported(op_name(args.node.op), " does not support ", dtype_name(x.dtype()), " inputs");
    }
  });
}

}  // namespace

Status infer_same_as_input(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  if (node.op == OpKind::kClip) {
    EF_RETURN_IF_ERROR(check_clip_bound(inputs, 1, "min"));
    EF_RETURN_IF_ERROR(check_clip_bound(inputs, 2, "max"));
  }
  outputs.assign(1, inputs[0]->desc());
  return Status::ok();
}

Status reference_relu(const KernelArgs& args) {
  return map_elements<true>(args, [](auto x) { return unary_math::relu(x); });
}

Status reference_leaky_relu(const KernelArgs& args) {
  const double alpha = args.node.attrs.get_float("alpha", 0.01f);
  return map_elements<false>(args, [=](double x) { return unary_math::leaky_relu(x, alpha); });
}

Status reference_sigmoid(const KernelArgs& args) {
  return map_elements<false>(args, [](double x) { return unary_math::sigmoid(x); });
}

Status reference_tanh(const KernelArgs& args) {
  return map_elements<false>(args, [](double x) { return std::tanh(x); });
}

Status reference_hard_sigmoid(const KernelArgs& args) {
  const double alpha = args.node.attrs.get_float("alpha", 0.2f);
  const double beta = args.node.attrs.get_float("beta", 0.5f);
  return map_elements<false>(args, [=](double x) { return unary_math::hard_sigmoid(x, alpha, beta); });
}

Status reference_hard_swish(const KernelArgs& args) {
  return map_elements<false>(args, [](double x) { return unary_math::hard_swish(x); });
}

Status reference_clip(const KernelArgs& args) {
  const auto has_bound = [&](size_t index) { return args.inputs.size() > index && args.inputs[index] != nullptr; };
  if (args.inputs[0]->dtype() == DType::kBool) return unsupported("Clip does not support bool inputs");
  if (dtype_is_float(args.inputs[0]->dtype())) {
    // ONNX's defaults are the type's lowest and highest finite values, so +-inf are clipped too.
    const double highest = visit_dtype(args.inputs[0]->dtype(), [](auto tag) -> double {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, Half>) {
        return 65504.0;
      } else {
        return static_cast<double>(std::numeric_limits<T>::max());
      }
    });
    const double lo = has_bound(1) ? args.inputs[1]->double_at(0) : -highest;
    const double hi = has_bound(2) ? args.inputs[2]->double_at(0) : highest;
    return map_elements<false>(args, [=](double x) { return unary_math::clip(x, lo, hi); });
  }
  // Integer bounds stay exact in int64; the input's own range is the default.
  const int64_t lo = has_bound(1) ? args.inputs[1]->int_at(0) : std::numeric_limits<int64_t>::min();
  const int64_t hi = has_bound(2) ? args.inputs[2]->int_at(0) : std::numeric_limits<int64_t>::max();
  return map_elements<true>(args, [=](auto x) { return unary_math::clip<decltype(x)>(x, lo, hi); });
}

Status reference_sqrt(const KernelArgs& args) {
  return map_elements<false>(args, [](double x) { return std::sqrt(x); });
}

Status reference_exp(const KernelArgs& args) {
  return map_elements<false>(args, [](double x) { return std::exp(x); });
}

}  // namespace edgefuse
