// Softmax, opset-13 semantics: normalise along the single axis `axis` (default -1); and the
// fuser's SoftmaxExpectation, the weighted sum of such a softmax (ops.h).
//
// Opsets before 13 coerced the input to 2-D instead: [prod(dims[:axis]), prod(dims[axis:])],
// normalising each row over all trailing dims together (default axis 1). The importer marks
// such nodes with the int attribute legacy_flatten = 1 and sets axis explicitly; this file
// applies the old semantics then. Both are the same computation on a [outer, length, inner]
// view: opset 13 has length = dims[axis], legacy has inner = 1.
#include <algorithm>
#include <cmath>

#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/ops/numeric.h"
#include "runtime/ops/ops.h"
#include "runtime/thread_pool.h"

namespace edgefuse {

namespace {

struct SoftmaxView {
  int64_t outer = 1;
  int64_t length = 1;  // elements normalised together
  int64_t inner = 1;   // stride between them
};

bool is_legacy(const Node& node) {
  return node.attrs.get_int("legacy_flatten", 0) == 1;
}

Result<SoftmaxView> softmax_view(const Node& node, const Shape& shape) {
  const bool legacy = is_legacy(node);
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t axis = node.attrs.get_int("axis", legacy ? 1 : -1);
  if (axis < -rank || axis >= rank) {
    return invalid_argument("axis ", axis, " is out of range for rank ", rank, " input ", shape_to_string(shape));
  }
  if (axis < 0) axis += rank;
  const auto dims = std::span<const int64_t>(shape);
  SoftmaxView view;
  view.outer = shape_numel(dims.first(static_cast<size_t>(axis)));
  if (legacy) {
    view.length = shape_numel(dims.subspan(static_cast<size_t>(axis)));
  } else {
    view.length = shape[static_cast<size_t>(axis)];
    view.inner = shape_numel(dims.subspan(static_cast<size_t>(axis) + 1));
  }
  return view;
}

// SoftmaxExpectation's operands: X, weights of X.dim(axis) f32 values, an optional one-element f32 bias.
struct ExpectationOperands {
  SoftmaxView view;
  const float* weights = nullptr;
  float bias = 0.0f;
};

Result<ExpectationOperands> expectation_operands(const Node& node, std::span<const Tensor* const> inputs) {
  const Tensor& x = *inputs[0];
  if (!dtype_is_float(x.dtype())) {
    return unsupported("SoftmaxExpectation needs a float input, got ", x.desc().to_string());
  }
  if (!node.attrs.has("axis")) return invalid_argument("SoftmaxExpectation needs its axis attribute");
  ExpectationOperands operands;
  EF_ASSIGN_OR_RETURN(operands.view, softmax_view(node, x.shape()));
  const Tensor& w = *inputs[1];
  if (w.dtype() != DType::kF32 || w.shape() != Shape{operands.view.length}) {
    return invalid_argument("SoftmaxExpectation weights are ", w.desc().to_string(), ", expected f32[",
                            operands.view.length, "] (one per element along the axis)");
  }
  operands.weights = w.has_data() ? w.data<float>() : nullptr;
  if (inputs.size() > 2 && inputs[2] != nullptr) {
    const Tensor& b = *inputs[2];
    if (b.dtype() != DType::kF32 || b.numel() != 1) {
      return invalid_argument("SoftmaxExpectation bias is ", b.desc().to_string(), ", expected one f32 value");
    }
    operands.bias = b.has_data() ? b.data<float>()[0] : 0.0f;
  }
  return operands;
}

// exp(x_k - max) of the group x_k = in[base + k * view.inner], k < view.length, into `exps`, in
// double (the max subtracted first, so exp never overflows); returns their sum. A group whose max
// is +inf or that is all -inf gives NaN, as the formula does.
template <typename T>
double group_exponentials(const T* in, int64_t base, const SoftmaxView& view, std::vector<double>& exps) {
  double max_value = -INFINITY;
  for (int64_t k = 0; k < view.length; ++k) max_value = std::max(max_value, as_double(in[base + k * view.inner]));
  double sum = 0;
  for (int64_t k = 0; k < view.length; ++k) {
    exps[static_cast<size_t>(k)] = std::exp(as_double(in[base + k * view.inner]) - max_value);
    sum += exps[static_cast<size_t>(k)];
  }
  return sum;
}

// Runs fn(o, c0, columns) over the work items (outer index, a block of up to 1024 groups side by
// side) on the pool: the per-ISA loops' unit. Contiguous groups (inner 1) are one column each.
template <typename Fn>
void for_column_blocks(const SoftmaxView& view, ThreadPool* pool, Fn fn) {
  constexpr int64_t kColumns = 1024;
  const int64_t blocks = (view.inner + kColumns - 1) / kColumns;
  const int64_t grain =
      std::max<int64_t>(1, 16 * 1024 / std::max<int64_t>(1, view.length * std::min(view.inner, kColumns)));
  parallel_for(pool, view.outer * blocks, grain, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / blocks, c0 = (item % blocks) * kColumns;
      fn(o, c0, std::min(kColumns, view.inner - c0));
    }
  });
}

}  // namespace

Status infer_softmax(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  const Tensor& x = *inputs[0];
  if (!dtype_is_float(x.dtype())) {
    return unsupported("Softmax needs a float input, got ", x.desc().to_string());
  }
  EF_RETURN_IF_ERROR(softmax_view(node, x.shape()).status());
  outputs.assign(1, x.desc());
  return Status::ok();
}

// In double, group by group (group_exponentials).
Status reference_softmax(const KernelArgs& args) {
  const Tensor& x = *args.inputs[0];
  Tensor& y = *args.outputs[0];
  EF_ASSIGN_OR_RETURN(SoftmaxView view, softmax_view(args.node, x.shape()));
  return visit_dtype(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (kIsFloatLike<T>) {
      const T* in = x.data<T>();
      T* out = y.data<T>();
      std::vector<double> exps(static_cast<size_t>(view.length));
      for (int64_t o = 0; o < view.outer; ++o) {
        for (int64_t i = 0; i < view.inner; ++i) {
          const int64_t base = o * view.length * view.inner + i;
          const double sum = group_exponentials(in, base, view, exps);
          for (int64_t k = 0; k < view.length; ++k) {
            out[base + k * view.inner] = from_double<T>(exps[static_cast<size_t>(k)] / sum);
          }
        }
      }
      return Status::ok();
    } else {
      return unsupported("Softmax needs a float input, got ", x.desc().to_string());
    }
  });
}

// f32: the per-ISA loops of cpu_kernel_table.h in float (exp within 2 ulp, sums in float: within
// 1e-6 relative of the reference on groups of up to thousands), threaded over groups of columns.
Status cpu_softmax(const KernelArgs& args) {
  const Tensor& x = *args.inputs[0];
  if (x.dtype() != DType::kF32) return reference_softmax(args);
  EF_ASSIGN_OR_RETURN(SoftmaxView view, softmax_view(args.node, x.shape()));
  const float* in = x.data<float>();
  float* out = args.outputs[0]->data<float>();
  const CpuKernelTable& kernels = cpu_kernel_table();
  for_column_blocks(view, args.pool, [&](int64_t o, int64_t c0, int64_t columns) {
    const int64_t offset = o * view.length * view.inner + c0;
    kernels.softmax_f32(in + offset, out + offset, view.length, view.inner, columns);
  });
  return Status::ok();
}

Status infer_softmax_expectation(const Node& node, std::span<const Tensor* const> inputs,
                                 std::vector<TensorDesc>& outputs) {
  EF_RETURN_IF_ERROR(expectation_operands(node, inputs).status());
  const Tensor& x = *inputs[0];
  Shape shape = x.shape();
  const auto rank = static_cast<int64_t>(shape.size());
  const int64_t axis = node.attrs.get_int("axis", 0);
  shape[static_cast<size_t>(axis < 0 ? axis + rank : axis)] = 1;
  outputs.assign(1, TensorDesc{x.dtype(), std::move(shape)});
  return Status::ok();
}

// In double, group by group (group_exponentials), as reference_softmax.
Status reference_softmax_expectation(const KernelArgs& args) {
  EF_ASSIGN_OR_RETURN(const ExpectationOperands operands, expectation_operands(args.node, args.inputs));
  const SoftmaxView& view = operands.view;
  const Tensor& x = *args.inputs[0];
  Tensor& y = *args.outputs[0];
  return visit_dtype(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (kIsFloatLike<T>) {
      const T* in = x.data<T>();
      T* out = y.data<T>();
      std::vector<double> exps(static_cast<size_t>(view.length));
      for (int64_t o = 0; o < view.outer; ++o) {
        for (int64_t i = 0; i < view.inner; ++i) {
          const double sum = group_exponentials(in, o * view.length * view.inner + i, view, exps);
          double dot = 0;
          for (int64_t k = 0; k < view.length; ++k) {
            dot += exps[static_cast<size_t>(k)] * static_cast<double>(operands.weights[k]);
          }
          out[o * view.inner + i] = from_double<T>(dot / sum + static_cast<double>(operands.bias));
        }
      }
      return Status::ok();
    } else {
      return unsupported("SoftmaxExpectation needs a float input, got ", x.desc().to_string());
    }
  });
}

// f32: the per-ISA loops (cpu_kernel_table.h), threaded over blocks of columns as cpu_softmax is.
Status cpu_softmax_expectation(const KernelArgs& args) {
  const Tensor& x = *args.inputs[0];
  if (x.dtype() != DType::kF32) return reference_softmax_expectation(args);
  EF_ASSIGN_OR_RETURN(const ExpectationOperands operands, expectation_operands(args.node, args.inputs));
  const SoftmaxView& view = operands.view;
  const float* in = x.data<float>();
  float* out = args.outputs[0]->data<float>();
  const CpuKernelTable& kernels = cpu_kernel_table();
  for_column_blocks(view, args.pool, [&](int64_t o, int64_t c0, int64_t columns) {
    kernels.softmax_expectation_f32(in + o * view.length * view.inner + c0, operands.weights, operands.bias,
                                    out + o * view.inner + c0, view.length, view.inner, columns);
  });
  return Status::ok();
}

}  // namespace edgefuse
