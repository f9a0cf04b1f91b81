// conv_setup, bind_conv2d and packed_conv_weights (conv2d_setup.h).
#include "runtime/ops/conv2d_setup.h"

#include <algorithm>
#include <vector>

#include "runtime/ops/kernel_setup.h"
#include "runtime/ops/thread_scratch.h"

namespace edgefuse {

namespace {

Conv2d conv2d_shape(const ConvProblem& p, const ConvEpilogue& epilogue, std::span<const Tensor* const> inputs) {
  const WindowGeometry g = p.geometry.padded_to(2);
  Conv2d c{};
  c.batch = p.batch;
  c.channels = p.in_channels;
  c.out_channels = p.out_channels;
  c.group = p.group;
  c.cg = p.in_channels_per_group();
  c.mg = p.out_channels_per_group();
  c.ih = g.input[0], c.iw = g.input[1];
  c.kh = g.kernel[0], c.kw = g.kernel[1];
  c.sh = g.strides[0], c.sw = g.strides[1];
  c.dh = g.dilations[0], c.dw = g.dilations[1];
  c.ph = g.pad_begin[0], c.pw = g.pad_begin[1];
  c.oh = g.output[0], c.ow = g.output[1];
  c.kernel_columns = c.cg * c.kh * c.kw;
  c.input_plane = c.ih * c.iw;
  c.output_plane = c.oh * c.ow;
  c.pointwise = c.kh == 1 && c.kw == 1 && c.sh == 1 && c.sw == 1 && c.ph == 0 && c.pw == 0 && g.pad_end[0] == 0 &&
                g.pad_end[1] == 0;
  c.phase_rows = c.oh + (c.kh - 1) * c.dh / c.sh;
  c.phase_cols = c.ow + (c.kw - 1) * c.dw / c.sw;
  c.phase_plane_floats = c.phase_rows * c.phase_cols + c.phase_cols + kConvPhaseSlack;
  c.depthwise_scratch_floats = c.sh * c.sw * c.phase_plane_floats + c.oh * c.phase_cols + kConvPhaseSlack;
  c.channels_last = p.channels_last;
  const bool residual = inputs.size() > 3 && inputs[3] != nullptr;
  c.residual_channels = residual ? inputs[3]->dim(1) : c.out_channels;
  c.residual_image = c.residual_channels * c.output_plane;
  c.residual_plane = c.output_plane;
  c.residual_begin = 0;
  c.residual_pooled = p.residual_pooled;
  c.output_channels_last = p.output_channels_last;
  c.output_channel_groups = p.output_channel_groups;
  c.epilogue = epilogue;
  return c;
}

}  // namespace

Result<const ConvSetup*> conv_setup(const KernelArgs& args, std::optional<ConvSetup>& uncached) {
  return kernel_setup(args, uncached, [&]() -> Result<ConvSetup> {
    EF_ASSIGN_OR_RETURN(const ConvProblem p, conv_problem(args.node, args.inputs));
    EF_ASSIGN_OR_RETURN(const ConvEpilogue epilogue, conv_epilogue(args.node.attrs));
    ConvSetup setup;
    setup.planar = p.geometry.rank() <= 2;
    if (setup.planar) setup.shape = conv2d_shape(p, epilogue, args.inputs);
    return setup;
  });
}

Conv2d bind_conv2d(const Conv2d& shape, const KernelArgs& args) {
  Conv2d c = shape;
  c.x = args.inputs[0]->data<float>();
  c.w = args.inputs[1]->data<float>();
  c.bias = args.inputs.size() > 2 && args.inputs[2] != nullptr ? args.inputs[2]->data<float>() : nullptr;
  c.residual = args.inputs.size() > 3 && args.inputs[3] != nullptr ? args.inputs[3]->data<float>() : nullptr;
  c.y = args.outputs[0]->data<float>();
  return c;
}

Conv2d with_pooled_residual_rows(const Conv2d& c, const CpuKernelTable& kernels, int64_t n, int64_t first_channel,
                                 int64_t end_channel, int64_t oy_begin, int64_t oy_end, std::vector<float>& buffer) {
  const int64_t rows = oy_end - oy_begin, plane = rows * c.ow;
  const MaxPool2d pool{
      .ih = 2 * rows, .iw = 2 * c.ow, .kh = 2, .kw = 2, .sh = 2, .sw = 2, .ph = 0, .pw = 0, .oh = rows, .ow = c.ow};
  end_channel = std::min(end_channel, c.residual_channels);
  // Channel ch at ch * plane, so that the epilogue's channel arithmetic holds; channels below
  // first_channel are never read.
  if (buffer.size() < static_cast<size_t>(std::max<int64_t>(end_channel, 1) * plane)) {
    buffer.resize(static_cast<size_t>(std::max<int64_t>(end_channel, 1) * plane));
  }
  for (int64_t ch = first_channel; ch < end_channel; ++ch) {
    // Source planes of 2 oh rows of 2 ow floats.
    const float* source = c.residual + ((n * c.residual_channels + ch) * 2 * c.oh + 2 * oy_begin) * 2 * c.ow;
    kernels.max_pool_plane(pool, source, buffer.data() + ch * plane, nullptr);  // 2 x 2 / 2: no scratch
  }
  Conv2d pooled = c;
  pooled.residual = buffer.data();
  pooled.residual_image = 0;
  pooled.residual_plane = plane;
  pooled.residual_begin = oy_begin * c.ow;
  pooled.residual_pooled = false;
  return pooled;
}

namespace {

// Weights packed by `pack` (`floats` of them, a layout tagged `variant`): once into the node's
// cache when they are constant (their data keeps its address for the executor's lifetime), else
// on every call into `buffer`, the calling thread's.
const float* cached_weights(const Conv2d& c, const KernelArgs& args, int64_t floats, int64_t variant,
                            void (*pack)(const Conv2d&, float*), std::vector<float>& buffer) {
  const auto size = static_cast<size_t>(floats);
  if (args.cache != nullptr && (args.constant_inputs & 2u) != 0) {
    KernelCache& cache = *args.cache;
    if (cache.source != c.w || cache.variant != variant || cache.data.size() != size) {
      cache.data.resize(size);
      pack(c, cache.data.data());
      cache.source = c.w;
      cache.variant = variant;
    }
    return cache.data.data();
  }
  float* const packed = grown_to(buffer, floats);
  pack(c, packed);
  return packed;
}

// Winograd layouts are tagged apart from the plain GEMM's of the same level.
constexpr int64_t kWinogradVariant = 1 << 8;

}  // namespace

const float* packed_conv_weights(const Conv2d& c, const CpuKernelTable& kernels, const KernelArgs& args) {
  // Per thread: a pair of Convs (conv_pair_cpu.cpp) packs the weights of one of them only.
  thread_local std::vector<float> packed_buffer;
  return cached_weights(c, args, kernels.conv_packed_weight_floats(c), static_cast<int64_t>(kernels.isa),
                        kernels.conv_pack_weights, packed_buffer);
}

const float* winograd_conv_weights(const Conv2d& c, int tile, const CpuKernelTable& kernels, const KernelArgs& args) {
  thread_local std::vector<float> packed_buffer;
  const bool large = tile == 4;
  return cached_weights(
      c, args, large ? kernels.conv_winograd4x4_weight_floats(c) : kernels.conv_winograd_weight_floats(c),
      kWinogradVariant * (large ? 2 : 1) + static_cast<int64_t>(kernels.isa),
      large ? kernels.conv_winograd4x4_pack_weights : kernels.conv_winograd_pack_weights, packed_buffer);
}

void dense_tap_rows(const Conv2d& c, const float* planes, const float** b_rows) {
  const int64_t per_channel = c.sh * c.sw * c.band_plane_floats;
  for (int64_t ch = 0; ch < c.cg; ++ch) {
    for (int64_t ky = 0; ky < c.kh; ++ky) {
      for (int64_t kx = 0; kx < c.kw; ++kx) {
        const int64_t y = ky * c.dh, x = kx * c.dw;
        const float* phase = planes + ch * per_channel + ((y % c.sh) * c.sw + x % c.sw) * c.band_plane_floats;
        b_rows[(ch * c.kh + ky) * c.kw + kx] = phase + (y / c.sh) * c.phase_cols + x / c.sw;
      }
    }
  }
}

}  // namespace edgefuse
