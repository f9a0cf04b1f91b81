#include "runtime/ops/window_geometry.h"

#include <algorithm>
#include <string>

namespace edgefuse {

namespace {

// Floor division for possibly negative numerators (ConvTranspose's total padding can be
// negative when output_shape asks for more than the windows cover).
int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Reads an ints attribute with one entry per spatial axis (or `fallback` for each when absent);
// every entry must be >= `min_value`.
Result<std::vector<int64_t>> read_axis_ints(const Node& node, const char* name, size_t count, int64_t fallback,
                                            int64_t min_value) {
  if (!node.attrs.has(name)) return std::vector<int64_t>(count, fallback);
  std::vector<int64_t> values = node.attrs.get_ints(name);
  if (values.size() != count) {
    return invalid_model(name, " has ", values.size(), " entries, expected ", count, " (one per spatial axis)");
  }
  for (size_t i = 0; i < count; ++i) {
    if (values[i] < min_value) {
      return invalid_model(name, "[", i, "] is ", values[i], ", expected >= ", min_value);
    }
  }
  return values;
}

// Reads the common attributes (kernel comes from the caller) into a geometry with no output yet.
Result<WindowGeometry> read_window_attrs(const Node& node, std::span<const int64_t> input,
                                         std::span<const int64_t> kernel) {
  const size_t rank = input.size();
  if (kernel.size() != rank) {
    return invalid_model("kernel has ", kernel.size(), " spatial dims, input has ", rank);
  }
  WindowGeometry g;
  g.input.assign(input.begin(), input.end());
  g.kernel.assign(kernel.begin(), kernel.end());
  for (size_t i = 0; i < rank; ++i) {
    if (g.kernel[i] < 1)
      return invalid_model("kernel size on spatial axis ", i, " is ", g.kernel[i], ", expected >= 1");
  }
  EF_ASSIGN_OR_RETURN(g.strides, read_axis_ints(node, "strides", rank, 1, 1));
  EF_ASSIGN_OR_RETURN(g.dilations, read_axis_ints(node, "dilations", rank, 1, 1));
  EF_ASSIGN_OR_RETURN(std::vector<int64_t> pads, read_axis_ints(node, "pads", 2 * rank, 0, 0));
  g.pad_begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(rank));
  g.pad_end.assign(pads.begin() + static_cast<std::ptrdiff_t>(rank), pads.end());
  return g;
}

}  // namespace

WindowGeometry WindowGeometry::padded_to(int target_rank) const {
  WindowGeometry g = *this;
  const auto missing = static_cast<std::ptrdiff_t>(target_rank - rank());
  EF_ASSERT(missing >= 0, "cannot pad rank ", rank(), " down to ", target_rank);
  auto prepend = [missing](std::vector<int64_t>& v, int64_t value) { v.insert(v.begin(), missing, value); };
  prepend(g.input, 1);
  prepend(g.kernel, 1);
  prepend(g.strides, 1);
  prepend(g.dilations, 1);
  prepend(g.pad_begin, 0);
  prepend(g.pad_end, 0);
  prepend(g.output, 1);
  return g;
}

Result<AutoPad> read_auto_pad(const Node& node) {
  const std::string mode = node.attrs.get_string("auto_pad", "NOTSET");
  if (mode == "NOTSET") return AutoPad::kNotSet;
  if (mode == "SAME_UPPER") return AutoPad::kSameUpper;
  if (mode == "SAME_LOWER") return AutoPad::kSameLower;
  if (mode == "VALID") return AutoPad::kValid;
  return invalid_model("auto_pad '", mode, "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
}

Result<WindowGeometry> window_geometry(const Node& node, std::span<const int64_t> input,
                                       std::span<const int64_t> kernel, bool ceil_mode) {
  EF_ASSIGN_OR_RETURN(AutoPad auto_pad, read_auto_pad(node));
  EF_ASSIGN_OR_RETURN(WindowGeometry g, read_window_attrs(node, input, kernel));
  g.output.resize(input.size());
  for (int i = 0; i < g.rank(); ++i) {
    const int64_t in = g.input[i];
    const int64_t stride = g.strides[i];
    const int64_t extent = g.extent(i);
    if (auto_pad == AutoPad::kSameUpper || auto_pad == AutoPad::kSameLower) {
      // Output covers ceil(in / stride) windows; the padding needed for that is split evenly,
      // the odd element going to the end (SAME_UPPER) or the beginning (SAME_LOWER).
      g.output[i] = (in + stride - 1) / stride;
      const int64_t total = std::max<int64_t>(0, (g.output[i] - 1) * stride + extent - in);
      g.pad_begin[i] = auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
      g.pad_end[i] = total - g.pad_begin[i];
      continue;
    }
    if (auto_pad == AutoPad::kValid) {
      g.pad_begin[i] = 0;
      g.pad_end[i] = 0;
    }
    const int64_t span = in + g.pad_begin[i] + g.pad_end[i] - extent;
    if (span < 0) {
      return invalid_argument("window extent ", extent, " exceeds the padded input size ",
                              in + g.pad_begin[i] + g.pad_end[i], " on spatial axis ", i);
    }
    // ceil_mode only applies to explicit padding, as in ONNX; a last window that would start in
    // the end padding is dropped.
    const bool use_ceil = ceil_mode && auto_pad == AutoPad::kNotSet;
    g.output[i] = (use_ceil ? (span + stride - 1) / stride : span / stride) + 1;
    if (use_ceil && (g.output[i] - 1) * stride >= in + g.pad_begin[i]) --g.output[i];
  }
  return g;
}

Result<WindowGeometry> transposed_window_geometry(const Node& node, std::span<const int64_t> input,
                                                  std::span<const int64_t> kernel) {
  EF_ASSIGN_OR_RETURN(AutoPad auto_pad, read_auto_pad(node));
  EF_ASSIGN_OR_RETURN(WindowGeometry g, read_window_attrs(node, input, kernel));
  const size_t rank = input.size();
  EF_ASSIGN_OR_RETURN(std::vector<int64_t> output_padding, read_axis_ints(node, "output_padding", rank, 0, 0));
  std::vector<int64_t> output_shape = node.attrs.get_ints("output_shape");
  // output_shape may list all dims (N, C, spatial...) or only the spatial ones.
  if (output_shape.size() == rank + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (!output_shape.empty() && output_shape.size() != rank) {
    return invalid_model("output_shape has ", output_shape.size(), " entries, expected ", rank);
  }
  g.output.resize(rank);
  for (int i = 0; i < g.rank(); ++i) {
    const int64_t full = g.strides[i] * (g.input[i] - 1) + output_padding[i] + g.extent(i);
    if (output_padding[i] >= std::max(g.strides[i], g.dilations[i])) {
      return invalid_model("output_padding[", i, "] is ", output_padding[i], ", expected < max(stride, dilation)");
    }
    int64_t target = -1;
    if (!output_shape.empty()) {
      target = output_shape[static_cast<size_t>(i)];
    } else if (auto_pad == AutoPad::kSameUpper || auto_pad == AutoPad::kSameLower) {
      target = g.input[i] * g.strides[i];
    }
    if (target >= 0) {
      // Derive the pads that produce `target` outputs; the odd element goes to the begin pad
      // except for SAME_UPPER. A negative total means extra zero-contribution outputs at the end.
      const int64_t total = full - target;
      const int64_t half = floor_div(total, 2);
      g.pad_begin[i] = auto_pad == AutoPad::kSameUpper ? half : total - half;
      g.pad_end[i] = total - g.pad_begin[i];
      g.output[i] = target;
    } else {
      if (auto_pad == AutoPad::kValid) {
        g.pad_begin[i] = 0;
        g.pad_end[i] = 0;
      }
      g.output[i] = full - g.pad_begin[i] - g.pad_end[i];
    }
    if (g.output[i] < 1) {
      return invalid_argument("output size on spatial axis ", i, " is ", g.output[i], ", expected >= 1");
    }
  }
  return g;
}

}  // namespace edgefuse
