// ConvTranspose: shape rule and the naive reference kernel (1-3 spatial axes, computed in double).
//
// X [N, C, in...], W [C, M / group, kernel...], optional B [M] -> Y [N, M, out...]. Input position i
// with kernel tap k contributes to full output position i * stride + k * dilation; Y is that full
// output shifted by pad_begin (negative end pads leave zero-contribution positions at the end).
#include <vector>

#include "runtime/ops/conv_problem.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/window_geometry.h"

namespace edgefuse {

namespace {

struct ConvTransposeProblem {
  int64_t batch = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t group = 1;
  WindowGeometry geometry;
};

Result<ConvTransposeProblem> conv_transpose_problem(const Node& node, std::span<const Tensor* const> inputs) {
  const Tensor& x = *inputs[0];
  const Tensor& w = *inputs[1];
  const Tensor* b = inputs.size() > 2 ? inputs[2] : nullptr;
  EF_RETURN_IF_ERROR(check_conv_operands(x, w));
  ConvTransposeProblem p;
  p.batch = x.dim(0);
  p.in_channels = x.dim(1);
  p.group = node.attrs.get_int("group", 1);
  if (p.group < 1) return invalid_model("group is ", p.group, ", expected >= 1");
  if (w.dim(0) != p.in_channels) {
    return invalid_model("input has ", p.in_channels, " channels, but weight ", w.desc().to_string(), " expects ",
                         w.dim(0));
  }
  if (p.in_channels % p.group != 0) {
    return invalid_model("input has ", p.in_channels, " channels, not divisible by group ", p.group);
  }
  p.out_channels = w.dim(1) * p.group;
  const std::span<const int64_t> kernel = std::span(w.shape()).subspan(2);
  if (node.attrs.has("kernel_shape")) {
    const std::vector<int64_t> kernel_shape = node.attrs.get_ints("kernel_shape");
    if (kernel_shape != std::vector<int64_t>(kernel.begin(), kernel.end())) {
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
  EF_ASSIGN_OR_RETURN(p.geometry, transposed_window_geometry(node, std::span(x.shape()).subspan(2), kernel));
  return p;
}

// The input index that reaches output `out` through tap `k` on one axis, or -1 when none does.
int64_t source_index(const WindowGeometry& g, int axis, int64_t out, int64_t k) {
  const int64_t full = out + g.pad_begin[axis] - k * g.dilations[axis];
  if (full < 0 || full % g.strides[axis] != 0) return -1;
  const int64_t in = full / g.strides[axis];
  return in < g.input[axis] ? in : -1;
}

}  // namespace

Status infer_conv_transpose(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  EF_ASSIGN_OR_RETURN(ConvTransposeProblem p, conv_transpose_problem(node, inputs));
  Shape shape = {p.batch, p.out_channels};
  shape.insert(shape.end(), p.geometry.output.begin(), p.geometry.output.end());
  outputs.assign(1, TensorDesc{inputs[0]->dtype(), std::move(shape)});
  return Status::ok();
}

Status reference_conv_transpose(const KernelArgs& args) {
  EF_ASSIGN_OR_RETURN(ConvTransposeProblem p, conv_transpose_problem(args.node, args.inputs));
  const WindowGeometry g = p.geometry.padded_to(3);
  const float* x = args.inputs[0]->data<float>();
  const float* w = args.inputs[1]->data<float>();
  const float* bias = args.inputs.size() > 2 && args.inputs[2] != nullptr ? args.inputs[2]->data<float>() : nullptr;
  float* y = args.outputs[0]->data<float>();
  const int64_t cg = p.in_channels / p.group;
  const int64_t mg = p.out_channels / p.group;
  const int64_t in_plane = g.input[0] * g.input[1] * g.input[2];
  const int64_t kernel_volume = g.kernel[0] * g.kernel[1] * g.kernel[2];
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t m = 0; m < p.out_channels; ++m) {
      const int64_t group = m / mg;
      for (int64_t oz = 0; oz < g.output[0]; ++oz) {
        for (int64_t oy = 0; oy < g.output[1]; ++oy) {
          for (int64_t ox = 0; ox < g.output[2]; ++ox) {
            double acc = bias != nullptr ? bias[m] : 0.0;
            for (int64_t kz = 0; kz < g.kernel[0]; ++kz) {
              const int64_t iz = source_index(g, 0, oz, kz);
              if (iz < 0) continue;
              for (int64_t ky = 0; ky < g.kernel[1]; ++ky) {
                const int64_t iy = source_index(g, 1, oy, ky);
                if (iy < 0) continue;
                for (int64_t kx = 0; kx < g.kernel[2]; ++kx) {
                  const int64_t ix = source_index(g, 2, ox, kx);
                  if (ix < 0) continue;
                  for (int64_t c = group * cg; c < (group + 1) * cg; ++c) {
                    const double xv = x[(n * p.in_channels + c) * in_plane + (iz * g.input[1] + iy) * g.input[2] + ix];
                    const double wv = w[(c * mg + m % mg) * kernel_volume + (kz * g.kernel[1] + ky) * g.kernel[2] + kx];
                    acc += xv * wv;
                  }
                }
              }
            }
            *y++ = static_cast<float>(acc);
          }
        }
      }
    }
  }
  return Status::ok();
}

}  // namespace edgefuse
