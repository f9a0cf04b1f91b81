// MatMul and Gemm: shape rules and naive reference kernels (float types in double, integer types
// wrapping in their own type). The optimised f32 kernels are in matmul_cpu.cpp.
#include <type_traits>
#include <vector>

#include "runtime/ops/broadcast.h"
#include "runtime/ops/matmul_problem.h"
#include "runtime/ops/numeric.h"
#include "runtime/ops/ops.h"

namespace edgefuse {

namespace {

bool is_matmul_dtype(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF64 || dtype == DType::kF16 || dtype == DType::kI32 ||
         dtype == DType::kI64;
}

// Multiply-accumulate in the reference's accumulator type: double for floats, T for integers.
template <typename T>
using Accumulator = std::conditional_t<kIsFloatLike<T>, double, T>;

template <typename T>
Accumulator<T> widen(T value) {
  if constexpr (kIsFloatLike<T>) {
    return as_double(value);
  } else {
    return value;
  }
}

template <typename T>
Accumulator<T> multiply_add(Accumulator<T> acc, T a, T b) {
  if constexpr (kIsFloatLike<T>) {
    return acc + as_double(a) * as_double(b);
  } else {
    return wrapping_add(acc, wrapping_mul(a, b));
  }
}

template <typename T>
T narrow(Accumulator<T> value) {
  if constexpr (kIsFloatLike<T>) {
    return from_double<T>(value);
  } else {
    return value;
  }
}

}  // namespace

Result<MatMulProblem> matmul_problem(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    return invalid_model("A is ", dtype_name(a.dtype()), " but B is ", dtype_name(b.dtype()));
  }
  if (!is_matmul_dtype(a.dtype())) return unsupported("MatMul does not support ", dtype_name(a.dtype()), " inputs");
  if (a.rank() < 1 || b.rank() < 1) {
    return invalid_argument("MatMul needs inputs of rank >= 1, got A ", a.desc().to_string(), " and B ",
                            b.desc().to_string());
  }
  Shape a_shape = a.shape();
  Shape b_shape = b.shape();
  if (a.rank() == 1) a_shape = {1, a.dim(0)};
  if (b.rank() == 1) b_shape = {b.dim(0), 1};
  MatMulProblem p;
  p.m = a_shape[a_shape.size() - 2];
  p.k = a_shape.back();
  p.n = b_shape.back();
  if (b_shape[b_shape.size() - 2] != p.k) {
    return invalid_argument("inner dims differ: A ", a.desc().to_string(), " has ", p.k, " columns, B ",
                            b.desc().to_string(), " has ", b_shape[b_shape.size() - 2], " rows");
  }
  const std::span<const int64_t> a_batch(a_shape.data(), a_shape.size() - 2);
  const std::span<const int64_t> b_batch(b_shape.data(), b_shape.size() - 2);
  EF_ASSIGN_OR_RETURN(Shape batch, broadcast_shapes(a_batch, b_batch));
  const std::vector<int64_t> a_strides = broadcast_strides(a_batch, batch);
  const std::vector<int64_t> b_strides = broadcast_strides(b_batch, batch);
  const int64_t batches = shape_numel(batch);
  p.a_offsets.resize(static_cast<size_t>(batches));
  p.b_offsets.resize(static_cast<size_t>(batches));
  for (int64_t flat = 0; flat < batches; ++flat) {
    int64_t a_offset = 0, b_offset = 0;
    for (int64_t rest = flat, d = static_cast<int64_t>(batch.size()) - 1; d >= 0; --d) {
      const int64_t i = rest % batch[d];
      rest /= batch[d];
      a_offset += i * a_strides[d];
      b_offset += i * b_strides[d];
    }
    p.a_offsets[static_cast<size_t>(flat)] = a_offset * p.m * p.k;
    p.b_offsets[static_cast<size_t>(flat)] = b_offset * p.k * p.n;
  }
  p.output = batch;
  if (a.rank() > 1) p.output.push_back(p.m);
  if (b.rank() > 1) p.output.push_back(p.n);
  return p;
}

Status infer_matmul(const Node&, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  EF_ASSIGN_OR_RETURN(MatMulProblem p, matmul_problem(*inputs[0], *inputs[1]));
  outputs.assign(1, TensorDesc{inputs[0]->dtype(), p.output});
  return Status::ok();
}

Status reference_matmul(const KernelArgs& args) {
  EF_ASSIGN_OR_RETURN(MatMulProblem p, matmul_problem(*args.inputs[0], *args.inputs[1]));
  return visit_dtype(args.inputs[0]->dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (kIsFloatLike<T> || std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
      const T* a = args.inputs[0]->data<T>();
      const T* b = args.inputs[1]->data<T>();
      T* y = args.outputs[0]->data<T>();
      for (size_t batch = 0; batch < p.a_offsets.size(); ++batch) {
        const T* a_batch = a + p.a_offsets[batch];
        const T* b_batch = b + p.b_offsets[batch];
        for (int64_t i = 0; i < p.m; ++i) {
          for (int64_t j = 0; j < p.n; ++j) {
            Accumulator<T> acc{};
            for (int64_t k = 0; k < p.k; ++k) acc = multiply_add<T>(acc, a_batch[i * p.k + k], b_batch[k * p.n + j]);
            *y++ = narrow<T>(acc);
          }
        }
      }
      return Status::ok();
    } else {
      return unsupported("MatMul does not support ", dtype_name(args.inputs[0]->dtype()), " inputs");
    }
  });
}

Result<GemmProblem> gemm_problem(const Node& node, std::span<const Tensor* const> inputs) {
  const Tensor& a = *inputs[0];
  const Tensor& b = *inputs[1];
  const Tensor* c = inputs.size() > 2 ? inputs[2] : nullptr;
  if (a.dtype() != DType::kF32 && a.dtype() != DType::kF64) {
    return unsupported("Gemm does not support ", dtype_name(a.dtype()), " inputs");
  }
  if (b.dtype() != a.dtype() || (c != nullptr && c->dtype() != a.dtype())) {
    return invalid_model("Gemm inputs differ in dtype: A is ", dtype_name(a.dtype()), ", B is ", dtype_name(b.dtype()),
                         (c != nullptr ? ", C is " : ""), (c != nullptr ? dtype_name(c->dtype()) : ""));
  }
  if (a.rank() != 2 || b.rank() != 2) {
    return invalid_argument("Gemm needs rank-2 A and B, got A ", a.desc().to_string(), " and B ", b.desc().to_string());
  }
  GemmProblem p;
  p.trans_a = node.attrs.get_int("transA", 0) != 0;
  p.trans_b = node.attrs.get_int("transB", 0) != 0;
  p.alpha = node.attrs.get_float("alpha", 1.0f);
  p.beta = node.attrs.get_float("beta", 1.0f);
  p.m = p.trans_a ? a.dim(1) : a.dim(0);
  p.k = p.trans_a ? a.dim(0) : a.dim(1);
  const int64_t b_k = p.trans_b ? b.dim(1) : b.dim(0);
  p.n = p.trans_b ? b.dim(0) : b.dim(1);
  if (b_k != p.k) {
    return invalid_argument("inner dims differ: op(A) of ", a.desc().to_string(), " has ", p.k, " columns, op(B) of ",
                            b.desc().to_string(), " has ", b_k, " rows");
  }
  if (c != nullptr) {
    const Shape out = {p.m, p.n};
    EF_RETURN_IF_ERROR(check_unidirectional_broadcast(c->shape(), out).with_context("Gemm C"));
    const std::vector<int64_t> strides = broadcast_strides(c->shape(), out);
    p.c_row_stride = strides[0];
    p.c_column_stride = strides[1];
  }
  return p;
}

Status infer_gemm(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  EF_ASSIGN_OR_RETURN(GemmProblem p, gemm_problem(node, inputs));
  outputs.assign(1, TensorDesc{inputs[0]->dtype(), {p.m, p.n}});
  return Status::ok();
}

Status reference_gemm(const KernelArgs& args) {
  EF_ASSIGN_OR_RETURN(GemmProblem p, gemm_problem(args.node, args.inputs));
  const Tensor* c_tensor = args.inputs.size() > 2 ? args.inputs[2] : nullptr;
  return visit_dtype(args.inputs[0]->dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* a = args.inputs[0]->data<T>();
      const T* b = args.inputs[1]->data<T>();
      const T* c = c_tensor != nullptr ? c_tensor->data<T>() : nullptr;
      T* y = args.outputs[0]->data<T>();
      // op(A)[i, k] and op(B)[k, j] in the stored layouts.
      const int64_t a_row = p.trans_a ? 1 : p.k, a_col = p.trans_a ? p.m : 1;
      const int64_t b_row = p.trans_b ? 1 : p.n, b_col = p.trans_b ? p.k : 1;
      for (int64_t i = 0; i < p.m; ++i) {
        for (int64_t j = 0; j < p.n; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < p.k; ++k) {
            acc += static_cast<double>(a[i * a_row + k * a_col]) * static_cast<double>(b[k * b_row + j * b_col]);
          }
          double result = static_cast<double>(p.alpha) * acc;
          if (c != nullptr) result += static_cast<double>(p.beta) * c[i * p.c_row_stride + j * p.c_column_stride];
          y[i * p.n + j] = static_cast<T>(result);
        }
      }
      return Status::ok();
    } else {
      return unsupported("Gemm does not support ", dtype_name(args.inputs[0]->dtype()), " inputs");
    }
  });
}

}  // namespace edgefuse
