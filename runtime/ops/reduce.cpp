// ReduceMean (opset 13: `axes` is an attribute). Absent or empty axes reduce every dim;
// keepdims (default 1) keeps reduced dims as 1. Float types accumulate in double. Integer
// types accumulate in int64 and the mean truncates toward zero; an empty reduction of integers
// gives 0 (floats give NaN, 0 / 0).
#include <algorithm>

#include "runtime/ops/numeric.h"
#include "runtime/ops/ops.h"

namespace edgefuse {

namespace {

// Which dims are reduced, from the `axes` attribute (negative axes count from the end).
Result<std::vector<bool>> reduced_dims(const Node& node, int rank) {
  const std::vector<int64_t> axes = node.attrs.get_ints("axes");
  std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty());
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank) return invalid_argument("axis ", axis, " is out of range for rank ", rank);
    const size_t d = static_cast<size_t>(axis < 0 ? axis + rank : axis);
    if (reduced[d]) return invalid_argument("axis ", axis, " is listed twice in axes");
    reduced[d] = true;
  }
  return reduced;
}

}  // namespace

Status infer_reduce_mean(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  const Tensor& x = *inputs[0];
  if (x.dtype() == DType::kBool) return unsupported("ReduceMean does not support bool inputs");
  EF_ASSIGN_OR_RETURN(std::vector<bool> reduced, reduced_dims(node, x.rank()));
  const bool keepdims = node.attrs.get_int("keepdims", 1) != 0;
  Shape shape;
  for (size_t d = 0; d < reduced.size(); ++d) {
    if (!reduced[d]) {
      shape.push_back(x.shape()[d]);
    } else if (keepdims) {
      shape.push_back(1);
    }
  }
  outputs.assign(1, TensorDesc{x.dtype(), std::move(shape)});
  return Status::ok();
}

// Walks the input in order with an odometer, adding each element to the output slot whose
// index is the input's with reduced dims dropped.
Status reference_reduce_mean(const KernelArgs& args) {
  const Tensor& x = *args.inputs[0];
  Tensor& y = *args.outputs[0];
  EF_ASSIGN_OR_RETURN(std::vector<bool> reduced, reduced_dims(args.node, x.rank()));
  const Shape& dims = x.shape();
  const size_t rank = dims.size();
  // Output offset step per input dim: 0 along reduced dims.
  std::vector<int64_t> out_strides(rank, 0);
  int64_t count = 1;
  for (size_t d = rank, stride = 1; d-- > 0;) {
    if (reduced[d]) {
      count *= dims[d];
    } else {
      out_strides[d] = static_cast<int64_t>(stride);
      stride *= static_cast<size_t>(dims[d]);
    }
  }
  return visit_dtype(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      return unsupported("ReduceMean does not support bool inputs");
    } else {
      using Sum = std::conditional_t<kIsFloatLike<T>, double, int64_t>;
      std::vector<Sum> sums(static_cast<size_t>(y.numel()), Sum{0});
      const T* in = x.data<T>();
      std::vector<int64_t> index(rank, 0);
      int64_t out_offset = 0;
      for (int64_t i = 0; i < x.numel(); ++i) {
        if constexpr (kIsFloatLike<T>) {
          sums[static_cast<size_t>(out_offset)] += as_double(in[i]);
        } else {
          sums[static_cast<size_t>(out_offset)] += static_cast<int64_t>(in[i]);
        }
        for (size_t d = rank; d-- > 0;) {
          out_offset += out_strides[d];
          if (++index[d] < dims[d]) break;
          out_offset -= index[d] * out_strides[d];
          index[d] = 0;
        }
      }
      T* out = y.data<T>();
      for (size_t o = 0; o < sums.size(); ++o) {
        if constexpr (kIsFloatLike<T>) {
          out[o] = from_double<T>(sums[o] / static_cast<double>(count));
        } else {
          out[o] = count == 0 ? T{0} : static_cast<T>(sums[o] / count);
        }
      }
      return Status::ok();
    }
  });
}

}  // namespace edgefuse
