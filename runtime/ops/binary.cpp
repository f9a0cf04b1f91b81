// Shape rule and reference kernels of the pointwise binary ops. The optimised f32 path is in
// binary_cpu.cpp.
//
// Element types: Add, Sub, Mul, Div and PRelu take two inputs of one numeric dtype. Floats
// (f16, f32, f64) are computed in double and rounded once. Integers wrap on overflow (two's
// complement) and Div truncates toward zero; integer division by zero gives 0 instead of
// trapping. Pow's exponent may be any numeric dtype; the output has the base's dtype.
#include <cmath>

#include "runtime/ops/broadcast.h"
#include "runtime/ops/numeric.h"
#include "runtime/ops/ops.h"

namespace edgefuse {

namespace {

// Calls fn(out_index, a_index, b_index) for every output element, computing each input index
// from the output's multi-index: slow, and obviously right.
template <typename Fn>
void for_each_broadcast_index(const Tensor& a, const Tensor& b, const Tensor& out, Fn fn) {
  const std::vector<int64_t> strides_a = broadcast_strides(a.shape(), out.shape());
  const std::vector<int64_t> strides_b = broadcast_strides(b.shape(), out.shape());
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t ia = 0;
    int64_t ib = 0;
    for (int64_t rest = i, d = out.rank() - 1; d >= 0; --d) {
      const int64_t coordinate = rest % out.dim(static_cast<int>(d));
      rest /= out.dim(static_cast<int>(d));
      ia += coordinate * strides_a[d];
      ib += coordinate * strides_b[d];
    }
    fn(i, ia, ib);
  }
}

// Runs a same-dtype op: fn(double, double) for float types, fn(T, T) for integer types.
template <typename Fn>
Status map_pairs(const KernelArgs& args, Fn fn) {
  const Tensor& a = *args.inputs[0];
  const Tensor& b = *args.inputs[1];
  Tensor& out = *args.outputs[0];
  return visit_dtype(a.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      return unsupported(op_name(args.node.op), " does not support bool inputs");
    } else {
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* po = out.data<T>();
      for_each_broadcast_index(a, b, out, [&](int64_t i, int64_t ia, int64_t ib) {
        if constexpr (kIsFloatLike<T>) {
          po[i] = from_double<T>(fn(as_double(pa[ia]), as_double(pb[ib])));
        } else {
          po[i] = fn(pa[ia], pb[ib]);
        }
      });
      return Status::ok();
    }
  });
}

// base^exponent for integers, by squaring with wrapping multiplication. A negative exponent
// gives the truncated 1 / base^-exponent: nonzero only for bases 1 and -1 (0^negative is 0).
template <typename T>
T integer_power(T base, int64_t exponent) {
  if (exponent < 0) {
    if (base == 1) return 1;
    if constexpr (std::is_signed_v<T>) {
      if (base == -1) return (exponent % 2 == 0) ? T{1} : T{-1};
    }
    return 0;
  }
  T result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = wrapping_mul(result, base);
    base = wrapping_mul(base, base);
    exponent >>= 1;
  }
  return result;
}

}  // namespace

Status infer_broadcast(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  const Tensor& a = *inputs[0];
  const Tensor& b = *inputs[1];
  if (a.dtype() == DType::kBool || b.dtype() == DType::kBool) {
    return unsupported(op_name(node.op), " does not support bool inputs");
  }
  if (node.op != OpKind::kPow && a.dtype() != b.dtype()) {
    return invalid_model("inputs have different dtypes: ", a.desc().to_string(), " and ", b.desc().to_string());
  }
  if (node.op == OpKind::kPRelu) {
    Status status = check_unidirectional_broadcast(b.shape(), a.shape());
    if (!status.is_ok()) return status.with_context("slope");
    outputs.assign(1, a.desc());
    return Status::ok();
  }
  EF_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(a.shape(), b.shape()));
  outputs.assign(1, TensorDesc{a.dtype(), std::move(shape)});
  return Status::ok();
}

Status reference_add(const KernelArgs& args) {
  return map_pairs(args, [](auto x, auto y) {
    if constexpr (std::is_same_v<decltype(x), double>) {
      return x + y;
    } else {
      return wrapping_add(x, y);
    }
  });
}

Status reference_sub(const KernelArgs& args) {
  return map_pairs(args, [](auto x, auto y) {
    if constexpr (std::is_same_v<decltype(x), double>) {
      return x - y;
    } else {
      return wrapping_sub(x, y);
    }
  });
}

Status reference_mul(const KernelArgs& args) {
  return map_pairs(args, [](auto x, auto y) {
    if constexpr (std::is_same_v<decltype(x), double>) {
      return x * y;
    } else {
      return wrapping_mul(x, y);
    }
  });
}

Status reference_div(const KernelArgs& args) {
  return map_pairs(args, [](auto x, auto y) {
    if constexpr (std::is_same_v<decltype(x), double>) {
      return x / y;
    } else {
      return integer_divide(x, y);
    }
  });
}

Status reference_prelu(const KernelArgs& args) {
  return map_pairs(args, [](auto x, auto slope) {
    using T = decltype(x);
    if constexpr (std::is_same_v<T, double>) {
      return x < 0 ? slope * x : x;
    } else if constexpr (std::is_signed_v<T>) {
      return x < 0 ? wrapping_mul(slope, x) : x;
    } else {
      return slope == 0 ? x : x;  // never negative
    }
  });
}

// Float bases: pow in double. Integer bases: exact wrapping power for integer exponents, and
// pow in double converted back (truncated, saturated) for float exponents.
Status reference_pow(const KernelArgs& args) {
  const Tensor& base = *args.inputs[0];
  const Tensor& exponent = *args.inputs[1];
  Tensor& out = *args.outputs[0];
  return visit_dtype(base.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      return unsupported("Pow does not support bool inputs");
    } else {
      const T* pb = base.data<T>();
      T* po = out.data<T>();
      const bool integer_exponent = !dtype_is_float(exponent.dtype());
      for_each_broadcast_index(base, exponent, out, [&](int64_t i, int64_t ib, int64_t ie) {
        if constexpr (kIsInteger<T>) {
          if (integer_exponent) {
            po[i] = integer_power(pb[ib], exponent.int_at(ie));
            return;
          }
        }
        po[i] = from_double<T>(std::pow(as_double(pb[ib]), exponent.double_at(ie)));
      });
      return Status::ok();
    }
  });
}

}  // namespace edgefuse
