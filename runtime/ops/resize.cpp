// Resize (ONNX opsets 11-13): nearest, linear and cubic over any number of axes, every coordinate
// transform. The sampling along each axis comes from resize_taps; this file computes the output
// shape and runs the separable product of the per-axis taps. Nearest moves bytes (every dtype);
// linear and cubic accumulate in double and round integer outputs to nearest.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

#include "runtime/ops/axes.h"
#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/ops/kernel_setup.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/resize_taps.h"

namespace edgefuse {

namespace {

struct ResizePlan {
  ResizeAttributes attrs;
  Shape shape;
  std::vector<double> scales;           // per axis, as the coordinate transforms use them
  std::vector<double> resized_lengths;  // per axis: in * scale before flooring, or the sizes input
};

bool present(const Tensor* t) {
  return t != nullptr && t->numel() > 0;
}

constexpr double kMaxOutputDim = 1e12;  // far beyond any real tensor; validate_shape then rejects it cleanly

Result<ResizePlan> plan_resize(const Node& node, std::span<const Tensor* const> inputs) {
  if (inputs.empty() || inputs[0] == nullptr) return invalid_argument("input 'X' is required");
  const Tensor& x = *inputs[0];
  const auto rank = static_cast<size_t>(x.rank());
  const Tensor* scales = inputs.size() > 2 ? inputs[2] : nullptr;
  const Tensor* sizes = inputs.size() > 3 ? inputs[3] : nullptr;
  ResizePlan plan;
  EF_ASSIGN_OR_RETURN(plan.attrs, read_resize_attributes(node));
  if (plan.attrs.mode != ResizeMode::kNearest && x.dtype() == DType::kBool) {
    return unsupported("Resize: linear and cubic modes need a numeric input, got bool");
  }
  if (present(scales) == present(sizes)) {
    return invalid_argument("Resize needs exactly one of 'scales' and 'sizes' (non-empty), got ",
                            present(scales) ? "both" : "neither");
  }
  plan.shape = x.shape();
  plan.scales.assign(rank, 1.0);
  plan.resized_lengths.assign(rank, 0.0);
  if (present(scales)) {
    if (!dtype_is_float(scales->dtype())) {
      return invalid_argument("scales must be a float tensor, got ", dtype_name(scales->dtype()));
    }
    if (static_cast<size_t>(scales->numel()) != rank) {
      return invalid_argument("scales has ", scales->numel(), " values for an input of rank ", rank);
    }
    if (!scales->has_data()) return unsupported("scales must be a constant to infer Resize's output shape");
    for (size_t d = 0; d < rank; ++d) {
      const double scale = scales->double_at(static_cast<int64_t>(d));
      const double dim = std::floor(static_cast<double>(x.shape()[d]) * scale);
      if (!(scale > 0) || !(dim <= kMaxOutputDim)) {
        return invalid_argument("scale ", scale, " for axis ", d, " (size ", x.shape()[d], ") is out of range");
      }
      plan.scales[d] = scale;
      plan.resized_lengths[d] = static_cast<double>(x.shape()[d]) * scale;
      plan.shape[d] = static_cast<int64_t>(dim);
    }
  } else {
    if (static_cast<size_t>(sizes->numel()) != rank) {
      return invalid_argument("sizes has ", sizes->numel(), " values for an input of rank ", rank);
    }
    EF_ASSIGN_OR_RETURN(const std::vector<int64_t> values, read_constant_ints(*sizes, "sizes"));
    for (size_t d = 0; d < rank; ++d) {
      const int64_t in_dim = x.shape()[d];
      if (values[d] < 0 || static_cast<double>(values[d]) > kMaxOutputDim) {
        return invalid_argument("size ", values[d], " for axis ", d, " is out of range");
      }
      if (in_dim == 0 && values[d] != 0) {
        return invalid_argument("cannot resize axis ", d, " of size 0 to ", values[d]);
      }
      plan.shape[d] = values[d];
      plan.resized_lengths[d] = static_cast<double>(values[d]);
      plan.scales[d] = in_dim == 0 ? 1.0 : static_cast<double>(values[d]) / static_cast<double>(in_dim);
    }
  }
  if (plan.attrs.transform == CoordinateTransform::kTfCropAndResize) {
    const Tensor* roi = inputs.size() > 1 ? inputs[1] : nullptr;
    if (roi == nullptr || !dtype_is_float(roi->dtype()) || static_cast<size_t>(roi->numel()) != 2 * rank) {
      return invalid_argument("tf_crop_and_resize needs a float roi of ", 2 * rank, " values, got ",
                              roi ? roi->desc().to_string() : "none");
    }
  }
  return plan;
}

// ---- element access ---------------------------------------------------------------------------

template <typename T>
double load(const unsigned char* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  if constexpr (std::is_same_v<T, Half>) {
    return half_to_float(value);
  } else {
    return static_cast<double>(value);
  }
}

template <typename T>
void store(double value, unsigned char* p) {
  T out;
  if constexpr (std::is_same_v<T, Half>) {
    out = float_to_half(static_cast<float>(value));
  } else if constexpr (std::is_floating_point_v<T>) {
    out = static_cast<T>(value);
  } else if constexpr (std::is_same_v<T, bool>) {
    out = value != 0.0;
  } else {  // integers: round to nearest, saturate
    const double rounded = std::nearbyint(value);
    out = static_cast<T>(std::clamp(rounded, static_cast<double>(std::numeric_limits<T>::lowest()),
                                    static_cast<double>(std::numeric_limits<T>::max())));
  }
  std::memcpy(p, &out, sizeof(T));
}

// The output's outer dims (all but the last), as the multi-index of row `row`.
void row_index(int64_t row, std::span<const int64_t> shape, std::vector<int64_t>& index) {
  for (size_t d = index.size(); d-- > 0;) {
    index[d] = row % shape[d];
    row /= shape[d];
  }
}

// ---- nearest ----------------------------------------------------------------------------------

// The common upsample: outer axes unchanged, output index o of each of the last two axes reads o / k.
bool integer_upsample_factor(const std::vector<AxisTaps>& taps, const Shape& in, const Shape& out, size_t axis,
                             int64_t& factor) {
  if (in[axis] == 0 || out[axis] % in[axis] != 0) return false;
  factor = out[axis] / in[axis];
  const AxisTaps& t = taps[axis];
  for (int64_t o = 0; o < out[axis]; ++o) {
    if (t.outside[static_cast<size_t>(o)] || t.index[static_cast<size_t>(o)] != o / factor) return false;
  }
  return true;
}

// Element copies below use a compile-time size (every dtype is 1, 2, 4 or 8 bytes) so they compile
// to plain loads and stores.
template <size_t kSize>
void upsample_integer(const unsigned char* src, unsigned char* dst, int64_t in_rows, int64_t in_w, int64_t factor_h,
                      int64_t factor_w, ThreadPool* pool) {
  const int64_t out_w = in_w * factor_w;
  const auto out_row_bytes = static_cast<size_t>(out_w) * kSize;
  parallel_for(pool, in_rows, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const unsigned char* from = src + static_cast<size_t>(r * in_w) * kSize;
      unsigned char* to = dst + static_cast<size_t>(r * factor_h) * out_row_bytes;
      if (factor_w == 2) {  // the usual 2x: a loop the compiler turns into vector unpacks
        for (int64_t i = 0; i < in_w; ++i) {
          std::memcpy(to + static_cast<size_t>(2 * i) * kSize, from + static_cast<size_t>(i) * kSize, kSize);
          std::memcpy(to + static_cast<size_t>(2 * i + 1) * kSize, from + static_cast<size_t>(i) * kSize, kSize);
        }
      } else {
        for (int64_t i = 0; i < in_w; ++i) {
          for (int64_t j = 0; j < factor_w; ++j) {
            std::memcpy(to + static_cast<size_t>(i * factor_w + j) * kSize, from + static_cast<size_t>(i) * kSize,
                        kSize);
          }
        }
      }
      for (int64_t k = 1; k < factor_h; ++k) {
        std::memcpy(to + static_cast<size_t>(k) * out_row_bytes, to, out_row_bytes);
      }
    }
  });
}

template <size_t kSize>
void resize_nearest_sized(const Tensor& in, Tensor& out, const std::vector<AxisTaps>& taps, const unsigned char* fill,
                          ThreadPool* pool) {
  const size_t rank = taps.size();
  const auto* src = static_cast<const unsigned char*>(in.raw_data());
  auto* dst = static_cast<unsigned char*>(out.raw_data());
  if (rank >= 2 && std::all_of(taps.begin(), taps.end() - 2, [](const AxisTaps& t) { return t.identity; })) {
    int64_t factor_h = 0;
    int64_t factor_w = 0;
    if (integer_upsample_factor(taps, in.shape(), out.shape(), rank - 2, factor_h) &&
        integer_upsample_factor(taps, in.shape(), out.shape(), rank - 1, factor_w)) {
      if (kSize == sizeof(float) && factor_h == 2 && factor_w == 2) {
        // The usual 2x of f32 (and i32) feature maps: vector duplicates of the active CPU level.
        const int64_t rows = in.numel() / in.shape().back(), width = in.shape().back();
        const auto* from = reinterpret_cast<const float*>(src);
        auto* to = reinterpret_cast<float*>(dst);
        const CpuKernelTable& kernels = cpu_kernel_table();
        parallel_for(pool, rows, 16, [&](int64_t begin, int64_t end) {
          kernels.upsample2x_f32(from + begin * width, to + begin * 4 * width, end - begin, width);
        });
        return;
      }
      upsample_integer<kSize>(src, dst, in.numel() / in.shape().back(), in.shape().back(), factor_h, factor_w, pool);
      return;
    }
  }
  const std::vector<int64_t> strides = contiguous_strides(in.shape());
  const int64_t inner = out.shape().back();
  const AxisTaps& last = taps.back();
  parallel_for(pool, out.numel() / inner, 16, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> index(rank - 1);
    for (int64_t row = begin; row < end; ++row) {
      row_index(row, out.shape(), index);
      int64_t offset = 0;
      bool outside = false;
      for (size_t d = 0; d + 1 < rank; ++d) {
        const auto o = static_cast<size_t>(index[d]);
        outside = outside || taps[d].outside[o];
        offset += taps[d].index[o] * strides[d];
      }
      unsigned char* to = dst + static_cast<size_t>(row * inner) * kSize;
      for (int64_t i = 0; i < inner; ++i) {
        const auto o = static_cast<size_t>(i);
        const bool fill_here = outside || last.outside[o];
        std::memcpy(to + o * kSize, fill_here ? fill : src + static_cast<size_t>(offset + last.index[o]) * kSize,
                    kSize);
      }
    }
  });
}

void resize_nearest(const Tensor& in, Tensor& out, const std::vector<AxisTaps>& taps, const unsigned char* fill,
                    ThreadPool* pool) {
  switch (dtype_size(in.dtype())) {
    case 1:
      return resize_nearest_sized<1>(in, out, taps, fill, pool);
    case 2:
      return resize_nearest_sized<2>(in, out, taps, fill, pool);
    case 4:
      return resize_nearest_sized<4>(in, out, taps, fill, pool);
    case 8:
      return resize_nearest_sized<8>(in, out, taps, fill, pool);
    default:
      EF_ASSERT(false, "no nearest resize for elements of ", dtype_size(in.dtype()), " bytes");
  }
}

// ---- linear and cubic -------------------------------------------------------------------------

struct Term {
  int64_t offset;  // in elements
  double weight;
};

template <typename T>
void resize_interpolate(const Tensor& in, Tensor& out, const std::vector<AxisTaps>& taps, double extrapolation,
                        ThreadPool* pool) {
  constexpr size_t kSize = sizeof(T);
  const size_t rank = taps.size();
  const auto* src = static_cast<const unsigned char*>(in.raw_data());
  auto* dst = static_cast<unsigned char*>(out.raw_data());
  const std::vector<int64_t> strides = contiguous_strides(in.shape());
  const int64_t inner = out.shape().back();
  const AxisTaps& last = taps.back();
  const auto last_taps = static_cast<size_t>(last.taps);
  parallel_for(pool, out.numel() / inner, 4, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> index(rank - 1);
    std::vector<Term> terms;
    std::vector<Term> expanded;
    for (int64_t row = begin; row < end; ++row) {
      row_index(row, out.shape(), index);
      // The weighted input rows whose combination is this output row: the product of the outer axes' taps.
      terms.assign(1, Term{0, 1.0});
      bool outside = false;
      for (size_t d = 0; d + 1 < rank; ++d) {
        const auto o = static_cast<size_t>(index[d]);
        const AxisTaps& axis = taps[d];
        outside = outside || axis.outside[o];
        expanded.clear();
        for (size_t k = 0; k < static_cast<size_t>(axis.taps); ++k) {
          const double w = axis.weight[o * static_cast<size_t>(axis.taps) + k];
          if (w == 0.0) continue;
          const int64_t step = axis.index[o * static_cast<size_t>(axis.taps) + k] * strides[d];
          for (const Term& t : terms) expanded.push_back({t.offset + step, t.weight * w});
        }
        terms.swap(expanded);
      }
      unsigned char* to = dst + static_cast<size_t>(row * inner) * kSize;
      for (int64_t i = 0; i < inner; ++i) {
        const auto o = static_cast<size_t>(i);
        double sum = 0.0;
        if (outside || last.outside[o]) {
          sum = extrapolation;
        } else {
          for (size_t k = 0; k < last_taps; ++k) {
            const double w = last.weight[o * last_taps + k];
            if (w == 0.0) continue;
            const int64_t column = last.index[o * last_taps + k];
            for (const Term& t : terms)
              sum += t.weight * w * load<T>(src + static_cast<size_t>(t.offset + column) * kSize);
          }
        }
        store<T>(sum, to + o * kSize);
      }
    }
  });
}

}  // namespace

Status infer_resize(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  EF_ASSIGN_OR_RETURN(ResizePlan plan, plan_resize(node, inputs));
  outputs = {TensorDesc{inputs[0]->dtype(), std::move(plan.shape)}};
  return Status::ok();
}

namespace {

// The output shape and every axis' taps, from the node's attributes and its inputs.
struct ResizeSetup {
  ResizePlan plan;
  std::vector<AxisTaps> taps;
};

Result<ResizeSetup> resize_setup(const KernelArgs& args) {
  ResizeSetup setup;
  EF_ASSIGN_OR_RETURN(setup.plan, plan_resize(args.node, args.inputs));
  const ResizePlan& plan = setup.plan;
  const Tensor& in = *args.inputs[0];
  const size_t rank = plan.shape.size();
  const bool crop = plan.attrs.transform == CoordinateTransform::kTfCropAndResize;
  setup.taps.reserve(rank);
  for (size_t d = 0; d < rank; ++d) {
    const double roi_start = crop ? args.inputs[1]->double_at(static_cast<int64_t>(d)) : 0.0;
    const double roi_end = crop ? args.inputs[1]->double_at(static_cast<int64_t>(rank + d)) : 1.0;
    setup.taps.push_back(resize_axis_taps(plan.attrs, in.shape()[d], plan.shape[d], plan.scales[d],
                                          plan.resized_lengths[d], roi_start, roi_end));
  }
  return setup;
}

// Whether the roi, scales and sizes inputs present are all constants: the setup depends on their
// values, which the setup cache (keyed by shapes) does not see.
bool resize_values_constant(const KernelArgs& args) {
  for (size_t i = 1; i < args.inputs.size() && i < 4; ++i) {
    if (args.inputs[i] != nullptr && (args.constant_inputs & (1u << i)) == 0) return false;
  }
  return true;
}

}  // namespace

Status reference_resize(const KernelArgs& args) {
  KernelArgs setup_args = args;
  if (!resize_values_constant(args)) setup_args.cache = nullptr;
  std::optional<ResizeSetup> uncached;
  EF_ASSIGN_OR_RETURN(const ResizeSetup* setup, kernel_setup(setup_args, uncached, [&] { return resize_setup(args); }));
  const ResizePlan& plan = setup->plan;
  const Tensor& in = *args.inputs[0];
  Tensor& out = *args.outputs[0];
  if (out.numel() == 0) return Status::ok();
  if (plan.shape.empty()) {
    std::memcpy(out.raw_data(), in.raw_data(), out.nbytes());
    return Status::ok();
  }
  return visit_dtype(in.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if (plan.attrs.mode == ResizeMode::kNearest) {
      unsigned char fill[sizeof(T)];
      store<T>(plan.attrs.extrapolation_value, fill);
      resize_nearest(in, out, setup->taps, fill, args.pool);
    } else if constexpr (!std::is_same_v<T, bool>) {
      resize_interpolate<T>(in, out, setup->taps, plan.attrs.extrapolation_value, args.pool);
    }
    return Status::ok();
  });
}

}  // namespace edgefuse
