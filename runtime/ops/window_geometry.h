// Sliding-window geometry shared by Conv, ConvTranspose and the pooling ops: kernel sizes,
// strides, dilations and begin/end pads per spatial axis, and the output sizes that follow from
// them under ONNX's auto_pad and ceil_mode rules.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "runtime/graph.h"
#include "runtime/status.h"

namespace edgefuse {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

// One entry per spatial axis (the dims after N and C), in axis order.
struct WindowGeometry {
  std::vector<int64_t> input;
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pad_begin;
  std::vector<int64_t> pad_end;
  std::vector<int64_t> output;

  int rank() const { return static_cast<int>(input.size()); }
  // (kernel - 1) * dilation + 1: the extent of one window on the input.
  int64_t extent(int axis) const { return (kernel[axis] - 1) * dilations[axis] + 1; }
  // The same geometry with unit axes prepended up to `rank` axes (input 1, kernel 1, stride 1,
  // no padding), so kernels can treat 1-D and 2-D as 3-D.
  WindowGeometry padded_to(int rank) const;
};

Result<AutoPad> read_auto_pad(const Node& node);

// Output sizes of Conv (ceil_mode false) and MaxPool/AveragePool from the node's auto_pad, pads,
// strides and dilations attributes. `kernel` comes from the weight or kernel_shape.
Result<WindowGeometry> window_geometry(const Node& node, std::span<const int64_t> input,
                                       std::span<const int64_t> kernel, bool ceil_mode);

// Output sizes of ConvTranspose, honouring output_padding and output_shape.
Result<WindowGeometry> transposed_window_geometry(const Node& node, std::span<const int64_t> input,
                                                  std::span<const int64_t> kernel);

}  // namespace edgefuse
