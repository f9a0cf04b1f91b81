// Conv: shape rule and the naive reference kernel (any of 1-3 spatial axes, computed in double).
// The optimised kernel is in conv_cpu.cpp.
#include <algorithm>
#include <limits>
#include <vector>

#include "runtime/ops/conv_epilogue.h"
#include "runtime/ops/conv_problem.h"
#include "runtime/ops/ops.h"

namespace edgefuse {

Status check_conv_operands(const Tensor& x, const Tensor& w) {
  if (x.rank() < 3 || x.rank() > 5) {
    return unsupported("input has rank ", x.rank(), ", expected 3 to 5 (N, C and 1-3 spatial axes)");
  }
  if (x.dtype() != DType::kF32) return unsupported("input is ", dtype_name(x.dtype()), ", only f32 is supported");
  if (w.dtype() != x.dtype()) return invalid_model("weight is ", dtype_name(w.dtype()), ", input is f32");
  if (w.rank() != x.rank())
    return invalid_model("weight has rank ", w.rank(), ", expected ", x.rank(), " (same as input)");
  return Status::ok();
}

Result<ConvProblem> conv_problem(const Node& node, std::span<const Tensor* const> inputs) {
  const Tensor& x = *inputs[0];
  const Tensor& w = *inputs[1];
  const Tensor* b = inputs.size() > 2 ? inputs[2] : nullptr;
  EF_RETURN_IF_ERROR(check_conv_operands(x, w));
  ConvProblem p;
  const int64_t channels_last = node.attrs.get_int(kConvInputChannelsLast, 0);
  if (channels_last != 0 && channels_last != 1) {
    return invalid_model(kConvInputChannelsLast, " is ", channels_last, ", expected 0 or 1");
  }
  p.channels_last = channels_last == 1;
  const int64_t residual_pool = node.attrs.get_int(kConvResidualMaxPool, 0);
  if (residual_pool != 0 && (residual_pool != 2 || x.rank() != 4)) {
    return invalid_model(kConvResidualMaxPool, " is ", residual_pool, " on a Conv of rank ", x.rank(),
                         ", expected 2 on a 2-D Conv (or absent)");
  }
  p.residual_pooled = residual_pool == 2;
  const int64_t output_channels_last = node.attrs.get_int(kConvOutputChannelsLast, 0);
  if (output_channels_last != 0 && output_channels_last != 1) {
    return invalid_model(kConvOutputChannelsLast, " is ", output_channels_last, ", expected 0 or 1");
  }
  p.output_channels_last = output_channels_last == 1;
  if (p.output_channels_last && inputs.size() > 3 && inputs[3] != nullptr) {
    return invalid_model(kConvOutputChannelsLast, " is set with a fused residual (input 3); not supported");
  }
  p.output_channel_groups = node.attrs.get_int(kConvOutputChannelGroups, 1);
  if (p.output_channel_groups < 1 || (p.output_channel_groups > 1 && !p.output_channels_last) ||
      w.dim(0) % p.output_channel_groups != 0) {
    return invalid_model(kConvOutputChannelGroups, " is ", p.output_channel_groups, ", expected a divisor of the ",
                         w.dim(0), " output channels, and above 1 only with ", kConvOutputChannelsLast);
  }
  const int64_t channel_axis = p.channels_last ? x.rank() - 1 : 1;
  p.batch = x.dim(0);
  p.in_channels = x.dim(channel_axis);
  p.out_channels = w.dim(0);
  p.group = node.attrs.get_int("group", 1);
  if (p.group < 1) return invalid_model("group is ", p.group, ", expected >= 1");
  if (p.in_channels != w.dim(1) * p.group) {
    return invalid_model("input has ", p.in_channels, " channels, but weight ", w.desc().to_string(), " with group ",
                         p.group, " expects ", w.dim(1) * p.group);
  }
  if (p.out_channels % p.group != 0) {
    return invalid_model("weight has ", p.out_channels, " output channels, not divisible by group ", p.group);
  }
  const std::span<const int64_t> kernel = std::span(w.shape()).subspan(2);
  if (node.attrs.has("kernel_shape")) {
    const std::vector<int64_t> kernel_shape = node.attrs.get_ints("kernel_shape");
    if (!std::equal(kernel_shape.begin(), kernel_shape.end(), kernel.begin(), kernel.end())) {
      return invalid_model("kernel_shape ", shape_to_string(kernel_shape), " does not match weight ",
                           w.desc().to_string());
    }
  }
  if (b != nullptr) {
    if (b->dtype() != x.dtype()) return invalid_model("bias is ", dtype_name(b->dtype()), ", input is f32");
    if (b->rank() != 1 || b->dim(0) != p.out_channels) {
      return invalid_model("bias is ", b->desc().to_string(), ", expected [", p.out_channels, "]");
    }
  }
  const std::span<const int64_t> spatial = std::span(x.shape()).subspan(p.channels_last ? 1 : 2, x.shape().size() - 2);
  EF_ASSIGN_OR_RETURN(p.geometry, window_geometry(node, spatial, kernel, false));
  return p;
}

Status infer_conv(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  EF_ASSIGN_OR_RETURN(ConvProblem p, conv_problem(node, inputs));
  EF_RETURN_IF_ERROR(conv_epilogue(node.attrs).status());
  Shape shape = {p.batch, p.out_channels};
  shape.insert(shape.end(), p.geometry.output.begin(), p.geometry.output.end());
  if (p.output_channels_last) {
    // [N, output..., M], or [N, A, output..., M / A] (conv_problem refused a residual with it).
    Shape last = {p.batch};
    if (p.output_channel_groups > 1) last.push_back(p.output_channel_groups);
    for (int64_t d : p.geometry.output) last.push_back(d);
    last.push_back(p.out_channels / p.output_channel_groups);
    outputs.assign(1, TensorDesc{inputs[0]->dtype(), std::move(last)});
    return Status::ok();
  }
  // Input 3, the fused residual (set by the fuser's fuse_conv_add or fuse_conv_activation_add):
  // added to the output before or after the activation epilogue, so it has the output's shape, or
  // with group 1 fewer channels (trim_zero_padded_residuals), the rest taking no residual.
  // With a pooled residual (kConvResidualMaxPool), twice the output's height and width.
  const bool residual = inputs.size() > 3 && inputs[3] != nullptr;
  if (residual) {
    const Tensor& r = *inputs[3];
    Shape expected = shape;
    if (p.residual_pooled) {
      expected[2] *= 2;
      expected[3] *= 2;
    }
    if (p.group == 1 && r.rank() == static_cast<int64_t>(shape.size()) && r.rank() > 1 && r.dim(1) >= 1 &&
        r.dim(1) <= p.out_channels) {
      expected[1] = r.dim(1);
    }
    if (r.dtype() != DType::kF32 || r.shape() != expected) {
      return invalid_model(
          "fused residual is ", r.desc().to_string(), ", expected f32", shape_to_string(expected),
          p.residual_pooled ? " (twice the output's height and width, for its 2 x 2 max pool" : " (the output's shape",
          "; with group 1, up to as many channels)");
    }
  } else if (p.residual_pooled) {
    return invalid_model(kConvResidualMaxPool, " is set, but there is no fused residual (input 3)");
  }
  outputs.assign(1, TensorDesc{inputs[0]->dtype(), std::move(shape)});
  return Status::ok();
}

Status reference_conv(const KernelArgs& args) {
  EF_ASSIGN_OR_RETURN(ConvProblem p, conv_problem(args.node, args.inputs));
  EF_ASSIGN_OR_RETURN(const ConvEpilogue epilogue, conv_epilogue(args.node.attrs));
  const WindowGeometry g = p.geometry.padded_to(3);
  const float* x = args.inputs[0]->data<float>();
  const float* w = args.inputs[1]->data<float>();
  const float* bias = args.inputs.size() > 2 && args.inputs[2] != nullptr ? args.inputs[2]->data<float>() : nullptr;
  const float* residual_data =
      args.inputs.size() > 3 && args.inputs[3] != nullptr ? args.inputs[3]->data<float>() : nullptr;
  const int64_t residual_channels = residual_data != nullptr ? args.inputs[3]->dim(1) : 0;
  // A pooled residual (2-D only): the max over its 2 x 2 window, in MaxPool's order (x taps, then
  // rows, each from -inf), so that NaNs come out as the MaxPool node's would.
  const int64_t residual_width = p.residual_pooled ? 2 * g.output[2] : g.output[2];
  const int64_t residual_plane =
      p.residual_pooled ? 4 * g.output[1] * g.output[2] : g.output[0] * g.output[1] * g.output[2];
  const auto residual_at = [&](const float* plane, int64_t oz, int64_t oy, int64_t ox) {
    if (!p.residual_pooled) return plane[(oz * g.output[1] + oy) * g.output[2] + ox];
    constexpr float kLowest = -std::numeric_limits<float>::infinity();
    const float* top = plane + 2 * oy * residual_width + 2 * ox;
    const float* bottom = top + residual_width;
    const float upper = std::max(std::max(kLowest, top[0]), top[1]);
    const float lower = std::max(std::max(kLowest, bottom[0]), bottom[1]);
    return std::max(std::max(kLowest, upper), lower);
  };
  float* const y = args.outputs[0]->data<float>();
  const int64_t cg = p.in_channels_per_group();
  const int64_t mg = p.out_channels_per_group();
  const int64_t in_image = p.in_channels * g.input[0] * g.input[1] * g.input[2];
  const int64_t channel_stride = p.input_channel_stride(), position_stride = p.input_position_stride();
  const int64_t kernel_volume = g.kernel[0] * g.kernel[1] * g.kernel[2];
  // Output (n, m, position): NCHW, or channels-last (kConvOutputChannelsLast) within each of the
  // groups of channels (kConvOutputChannelGroups; one group: [N, output..., M]).
  const int64_t output_positions = g.output[0] * g.output[1] * g.output[2];
  const int64_t group_channels = p.out_channels / p.output_channel_groups;
  const auto out_channel_offset = [&](int64_t m) {
    if (!p.output_channels_last) return m * output_positions;
    return m / group_channels * output_positions * group_channels + m % group_channels;
  };
  const int64_t out_position_stride = p.output_channels_last ? group_channels : 1;
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t m = 0; m < p.out_channels; ++m) {
      const int64_t first_channel = (m / mg) * cg;
      // Channels past the residual's take none.
      const float* residual =
          m < residual_channels ? residual_data + (n * residual_channels + m) * residual_plane : nullptr;
      float* y_channel = y + n * p.out_channels * output_positions + out_channel_offset(m);
      for (int64_t oz = 0; oz < g.output[0]; ++oz) {
        for (int64_t oy = 0; oy < g.output[1]; ++oy) {
          for (int64_t ox = 0; ox < g.output[2]; ++ox) {
            float* out = y_channel + ((oz * g.output[1] + oy) * g.output[2] + ox) * out_position_stride;
            double acc = bias != nullptr ? bias[m] : 0.0;
            for (int64_t c = 0; c < cg; ++c) {
              const float* plane = x + n * in_image + (first_channel + c) * channel_stride;
              const float* kernel = w + (m * cg + c) * kernel_volume;
              for (int64_t kz = 0; kz < g.kernel[0]; ++kz) {
                const int64_t iz = oz * g.strides[0] + kz * g.dilations[0] - g.pad_begin[0];
                if (iz < 0 || iz >= g.input[0]) continue;
                for (int64_t ky = 0; ky < g.kernel[1]; ++ky) {
                  const int64_t iy = oy * g.strides[1] + ky * g.dilations[1] - g.pad_begin[1];
                  if (iy < 0 || iy >= g.input[1]) continue;
                  for (int64_t kx = 0; kx < g.kernel[2]; ++kx) {
                    const int64_t ix = ox * g.strides[2] + kx * g.dilations[2] - g.pad_begin[2];
                    if (ix < 0 || ix >= g.input[2]) continue;
                    acc += static_cast<double>(plane[((iz * g.input[1] + iy) * g.input[2] + ix) * position_stride]) *
                           kernel[(kz * g.kernel[1] + ky) * g.kernel[2] + kx];
                  }
                }
              }
            }
            if (residual == nullptr) {
              *out = static_cast<float>(epilogue.apply(acc));
            } else if (epilogue.residual_after_activation) {
              *out = static_cast<float>(epilogue.apply(acc) + static_cast<double>(residual_at(residual, oz, oy, ox)));
            } else {
              acc += residual_at(residual, oz, oy, ox);
              *out = static_cast<float>(epilogue.apply(acc));
            }
          }
        }
      }
    }
  }
  return Status::ok();
}

}  // namespace edgefuse
