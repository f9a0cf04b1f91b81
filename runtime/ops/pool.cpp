// MaxPool, AveragePool and GlobalAveragePool: shape rules and naive reference kernels (1-3
// spatial axes, every dtype ONNX allows). The optimised MaxPool is in pool_cpu.cpp.
#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "runtime/ops/numeric.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/pool_problem.h"

namespace edgefuse {

namespace {

bool is_pool_float(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF64 || dtype == DType::kF16;
}

// Calls visit(plane, output_index, window, padded_taps) for every output position of every (n, c)
// plane: `window` lists the input positions (row-major spatial index within the plane) the window
// covers, `padded_taps` how many of its taps fall inside the padded input (for count_include_pad).
template <typename Visit>
void for_each_window(const PoolProblem& p, Visit visit) {
  const WindowGeometry g = p.geometry.padded_to(3);
  std::vector<int64_t> window;
  int64_t out_index = 0;
  for (int64_t plane = 0; plane < p.batch * p.channels; ++plane) {
    for (int64_t oz = 0; oz < g.output[0]; ++oz) {
      for (int64_t oy = 0; oy < g.output[1]; ++oy) {
        for (int64_t ox = 0; ox < g.output[2]; ++ox) {
          window.clear();
          int64_t padded_taps = 1;
          const int64_t out_pos[3] = {oz, oy, ox};
          int64_t start[3];
          for (int axis = 0; axis < 3; ++axis) {
            start[axis] = out_pos[axis] * g.strides[axis] - g.pad_begin[axis];
            int64_t taps = 0;
            for (int64_t k = 0; k < g.kernel[axis]; ++k) {
              const int64_t i = start[axis] + k * g.dilations[axis];
              if (i >= -g.pad_begin[axis] && i < g.input[axis] + g.pad_end[axis]) ++taps;
            }
            padded_taps *= taps;
          }
          for (int64_t kz = 0; kz < g.kernel[0]; ++kz) {
            const int64_t iz = start[0] + kz * g.dilations[0];
            if (iz < 0 || iz >= g.input[0]) continue;
            for (int64_t ky = 0; ky < g.kernel[1]; ++ky) {
              const int64_t iy = start[1] + ky * g.dilations[1];
              if (iy < 0 || iy >= g.input[1]) continue;
              for (int64_t kx = 0; kx < g.kernel[2]; ++kx) {
                const int64_t ix = start[2] + kx * g.dilations[2];
                if (ix < 0 || ix >= g.input[2]) continue;
                window.push_back((iz * g.input[1] + iy) * g.input[2] + ix);
              }
            }
          }
          visit(plane, out_index++, window, padded_taps);
        }
      }
    }
  }
}

// Converts a row-major flattened spatial index to the column-major one (MaxPool storage_order 1).
int64_t column_major_index(const WindowGeometry& g, int64_t row_major) {
  std::vector<int64_t> coordinate(static_cast<size_t>(g.rank()));
  for (int axis = g.rank() - 1; axis >= 0; --axis) {
    coordinate[axis] = row_major % g.input[axis];
    row_major /= g.input[axis];
  }
  int64_t result = 0;
  int64_t stride = 1;
  for (int axis = 0; axis < g.rank(); ++axis) {
    result += coordinate[axis] * stride;
    stride *= g.input[axis];
  }
  return result;
}

}  // namespace

Result<PoolProblem> pool_problem(const Node& node, const Tensor& x) {
  if (x.rank() < 3 || x.rank() > 5) {
    return unsupported("input has rank ", x.rank(), ", expected 3 to 5 (N, C and 1-3 spatial axes)");
  }
  if (!node.attrs.has("kernel_shape")) return invalid_model("kernel_shape attribute is required");
  const std::vector<int64_t> kernel = node.attrs.get_ints("kernel_shape");
  const std::span<const int64_t> spatial = std::span(x.shape()).subspan(2);
  if (kernel.size() != spatial.size()) {
    return invalid_model("kernel_shape has ", kernel.size(), " entries, input ", x.desc().to_string(), " has ",
                         spatial.size(), " spatial axes");
  }
  const int64_t ceil_mode = node.attrs.get_int("ceil_mode", 0);
  if (ceil_mode != 0 && ceil_mode != 1) return invalid_model("ceil_mode is ", ceil_mode, ", expected 0 or 1");
  PoolProblem p;
  p.batch = x.dim(0);
  p.channels = x.dim(1);
  EF_ASSIGN_OR_RETURN(p.geometry, window_geometry(node, spatial, kernel, ceil_mode == 1));
  return p;
}

Status infer_pool(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  const Tensor& x = *inputs[0];
  const bool is_max = node.op == OpKind::kMaxPool;
  if (is_max) {
    if (x.dtype() == DType::kBool) return unsupported("MaxPool does not support bool inputs");
    const int64_t storage_order = node.attrs.get_int("storage_order", 0);
    if (storage_order != 0 && storage_order != 1) {
      return invalid_model("storage_order is ", storage_order, ", expected 0 or 1");
    }
  } else if (!is_pool_float(x.dtype())) {
    return unsupported(op_name(node.op), " does not support ", dtype_name(x.dtype()), " inputs");
  }
  EF_ASSIGN_OR_RETURN(PoolProblem p, pool_problem(node, x));
  Shape shape = {p.batch, p.channels};
  shape.insert(shape.end(), p.geometry.output.begin(), p.geometry.output.end());
  outputs.assign(1, TensorDesc{x.dtype(), shape});
  if (is_max && node.outputs.size() > 1) outputs.push_back(TensorDesc{DType::kI64, shape});
  return Status::ok();
}

Status reference_max_pool(const KernelArgs& args) {
  const Tensor& x = *args.inputs[0];
  EF_ASSIGN_OR_RETURN(PoolProblem p, pool_problem(args.node, x));
  int64_t* indices = args.outputs.size() > 1 && args.outputs[1] != nullptr ? args.outputs[1]->data<int64_t>() : nullptr;
  const bool column_major = args.node.attrs.get_int("storage_order", 0) == 1;
  const int64_t in_plane = shape_numel(p.geometry.input);
  return visit_dtype(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      return unsupported("MaxPool does not support bool inputs");
    } else {
      const T* in = x.data<T>();
      T* out = args.outputs[0]->data<T>();
      for_each_window(p, [&](int64_t plane, int64_t out_index, const std::vector<int64_t>& window, int64_t) {
        // A window entirely in the padding has no element: it yields the lowest value, index -1.
        double best = -std::numeric_limits<double>::infinity();
        int64_t best_position = -1;
        for (int64_t position : window) {
          const double v = as_double(in[plane * in_plane + position]);
          if (best_position < 0 || v > best) best = v, best_position = position;
        }
        if (best_position >= 0) {
          out[out_index] = in[plane * in_plane + best_position];
        } else if constexpr (kIsFloatLike<T>) {
          out[out_index] = from_double<T>(-std::numeric_limits<double>::infinity());
        } else {
          out[out_index] = std::numeric_limits<T>::lowest();
        }
        if (indices != nullptr) {
          const int64_t spatial = column_major ? column_major_index(p.geometry, best_position) : best_position;
          indices[out_index] = best_position < 0 ? -1 : plane * in_plane + spatial;
        }
      });
      return Status::ok();
    }
  });
}

Status reference_average_pool(const KernelArgs& args) {
  const Tensor& x = *args.inputs[0];
  EF_ASSIGN_OR_RETURN(PoolProblem p, pool_problem(args.node, x));
  const bool count_include_pad = args.node.attrs.get_int("count_include_pad", 0) != 0;
  const int64_t in_plane = shape_numel(p.geometry.input);
  return visit_dtype(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (kIsFloatLike<T>) {
      const T* in = x.data<T>();
      T* out = args.outputs[0]->data<T>();
      for_each_window(p, [&](int64_t plane, int64_t out_index, const std::vector<int64_t>& window,
                             int64_t padded_taps) {
        double sum = 0;
        for (int64_t position : window) sum += as_double(in[plane * in_plane + position]);
        const auto count = static_cast<double>(count_include_pad ? padded_taps : static_cast<int64_t>(window.size()));
        out[out_index] = from_double<T>(count > 0 ? sum / count : 0.0);
      });
      return Status::ok();
    } else {
      return unsupported("AveragePool does not support ", dtype_name(x.dtype()), " inputs");
    }
  });
}

Status infer_global_average_pool(const Node&, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  const Tensor& x = *inputs[0];
  if (x.rank() < 3) return invalid_argument("input has rank ", x.rank(), ", expected >= 3 (N, C, spatial...)");
  if (!is_pool_float(x.dtype()))
    return unsupported("GlobalAveragePool does not support ", dtype_name(x.dtype()), " inputs");
  Shape shape = x.shape();
  std::fill(shape.begin() + 2, shape.end(), 1);
  outputs.assign(1, TensorDesc{x.dtype(), shape});
  return Status::ok();
}

Status reference_global_average_pool(const KernelArgs& args) {
  const Tensor& x = *args.inputs[0];
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t plane_size = planes == 0 ? 0 : x.numel() / planes;
  return visit_dtype(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (kIsFloatLike<T>) {
      const T* in = x.data<T>();
      T* out = args.outputs[0]->data<T>();
      for (int64_t plane = 0; plane < planes; ++plane) {
        double sum = 0;
        for (int64_t i = 0; i < plane_size; ++i) sum += as_double(in[plane * plane_size + i]);
        out[plane] = from_double<T>(plane_size > 0 ? sum / static_cast<double>(plane_size) : 0.0);
      }
      return Status::ok();
    } else {
      return unsupported("GlobalAveragePool does not support ", dtype_name(x.dtype()), " inputs");
    }
  });
}

}  // namespace edgefuse
