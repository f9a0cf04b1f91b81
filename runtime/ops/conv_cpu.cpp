// Optimised f32 Conv for 1-D and 2-D inputs (3-D falls back to the reference): plans the work and
// splits it into tasks on the thread pool; each task runs one single-threaded inner kernel of
// the active CPU ISA level (conv_kernels.cpp through cpu_kernel_table.h):
//   depthwise (group == C == M): tasks over the (n, c) planes;
//   everything else: a GEMM per (n, g) and block of output columns (H_out * W_out, row-major).
#include <algorithm>
#include <vector>

#include "runtime/ops/conv_epilogue.h"
#include "runtime/ops/conv_problem.h"
#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/ops/ops.h"

namespace edgefuse {

namespace {

Conv2d make_conv2d(const ConvProblem& p, const ConvEpilogue& epilogue, const KernelArgs& args) {
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
  c.dw_rows = c.oh + (c.kh - 1) * c.dh / c.sh;
  c.dw_cols = c.ow + (c.kw - 1) * c.dw / c.sw;
  c.dw_plane_floats = c.dw_rows * c.dw_cols + c.dw_cols + kConvDepthwiseSlack;
  c.dw_scratch_floats = c.sh * c.sw * c.dw_plane_floats + c.oh * c.dw_cols + kConvDepthwiseSlack;
  c.x = args.inputs[0]->data<float>();
  c.w = args.inputs[1]->data<float>();
  c.bias = args.inputs.size() > 2 && args.inputs[2] != nullptr ? args.inputs[2]->data<float>() : nullptr;
  c.residual = args.inputs.size() > 3 && args.inputs[3] != nullptr ? args.inputs[3]->data<float>() : nullptr;
  c.y = args.outputs[0]->data<float>();
  c.epilogue = epilogue;
  return c;
}

// The weights in the GEMM tile layout of the active ISA level: packed once and kept in the node's
// cache when they are constant, else packed on every call (a copy of the weights, small next to
// the GEMM, but for YOLOX-nano about 3.5 MB per frame that a cache avoids).
const float* packed_weights(const Conv2d& c, const CpuKernelTable& kernels, const KernelArgs& args) {
  const auto floats = static_cast<size_t>(kernels.conv_packed_weight_floats(c));
  if (args.cache != nullptr && (args.constant_inputs & 2u) != 0) {
    // Which tensor and level it came from: constant data keeps its address for the executor's lifetime.
    const uint64_t key = reinterpret_cast<uintptr_t>(c.w) ^ (static_cast<uint64_t>(kernels.isa) << 60) ^
                         (static_cast<uint64_t>(floats) << 32);
    if (args.cache->key != key || args.cache->data.size() != floats) {
      args.cache->data.resize(floats);
      kernels.conv_pack_weights(c, args.cache->data.data());
      args.cache->key = key;
    }
    return args.cache->data.data();
  }
  thread_local std::vector<float> packed;
  packed.resize(floats);
  kernels.conv_pack_weights(c, packed.data());
  return packed.data();
}

// How a GEMM-path Conv is cut into tasks: per (image, group), blocks of output columns and, for
// pointwise convs, blocks of output channels (rows of the GEMM; an im2col block is built once per
// task, so other convs split columns only).
struct GemmTasks {
  int64_t columns = 0, column_blocks = 0;
  int64_t rows = 0, row_blocks = 0;
  int64_t count(const Conv2d& c) const { return c.batch * c.group * column_blocks * row_blocks; }
};

GemmTasks split_gemm(const Conv2d& c, int64_t threads) {
  // Multiples of 192 columns and 16 rows: every level's GEMM tile divides them, so only a plane's
  // last block has partial tiles.
  constexpr int64_t kColumnUnit = 192, kRowUnit = kGemmRowBlockUnit;
  const auto round_up = [](int64_t x, int64_t unit) { return (x + unit - 1) / unit * unit; };
  const auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  // An im2col block of about 512 KiB at most; large enough for the GEMM to stream.
  const int64_t max_columns = std::clamp<int64_t>(131072 / std::max<int64_t>(1, c.kernel_columns), kColumnUnit, 4096) /
                              kColumnUnit * kColumnUnit;
  // Four tasks per thread balance uneven progress; small planes (13 x 13 = 169 columns) need the
  // rows split too, or a single task would hold the whole conv.
  const int64_t wanted = threads > 1 ? 4 * threads : 1;
  const int64_t planes = c.batch * c.group;
  GemmTasks t;
  t.columns =
      std::clamp(round_up(ceil_div(c.output_plane, ceil_div(wanted, planes)), kColumnUnit), kColumnUnit, max_columns);
  t.column_blocks = ceil_div(c.output_plane, t.columns);
  const int64_t row_blocks = c.pointwise ? ceil_div(wanted, planes * t.column_blocks) : 1;
  t.rows = round_up(ceil_div(c.mg, std::max<int64_t>(row_blocks, 1)), kRowUnit);
  t.row_blocks = ceil_div(c.mg, t.rows);
  return t;
}

}  // namespace

Status cpu_conv(const KernelArgs& args) {
  EF_ASSIGN_OR_RETURN(ConvProblem p, conv_problem(args.node, args.inputs));
  EF_ASSIGN_OR_RETURN(const ConvEpilogue epilogue, conv_epilogue(args.node.attrs));
  if (p.geometry.rank() > 2) return reference_conv(args);
  Conv2d c = make_conv2d(p, epilogue, args);
  if (c.output_plane == 0 || c.batch == 0 || c.out_channels == 0) return Status::ok();
  const CpuKernelTable& kernels = cpu_kernel_table();

  if (c.group == c.channels && c.group == c.out_channels && c.sh <= kConvDepthwiseMaxStride &&
      c.sw <= kConvDepthwiseMaxStride) {
    parallel_for(args.pool, c.batch * c.channels, 1, [&](int64_t begin, int64_t end) {
      thread_local std::vector<float> scratch;
      if (scratch.size() < static_cast<size_t>(c.dw_scratch_floats))
        scratch.resize(static_cast<size_t>(c.dw_scratch_floats));
      kernels.conv_depthwise_planes(c, begin, end, scratch.data());
    });
    return Status::ok();
  }

  c.packed_w = packed_weights(c, kernels, args);

  const GemmTasks t = split_gemm(c, args.pool != nullptr ? args.pool->size() : 1);
  parallel_for(args.pool, t.count(c), 1, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> scratch;
    // The im2col block, room for a row split into even and odd columns (stride-2 im2col), the
    // GEMM's edge panel.
    const int64_t floats = c.kernel_columns * (std::min(t.columns, c.output_plane) + kGemmPanelColumns) + c.iw + 1;
    if (scratch.size() < static_cast<size_t>(floats)) scratch.resize(static_cast<size_t>(floats));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t row = (task % t.row_blocks) * t.rows;
      const int64_t column = (task / t.row_blocks % t.column_blocks) * t.columns;
      const int64_t image_group = task / t.row_blocks / t.column_blocks;
      kernels.conv_gemm_block(c, image_group / c.group, image_group % c.group, row, std::min(c.mg, row + t.rows),
                              column, std::min(c.output_plane, column + t.columns), scratch.data());
    }
  });
  return Status::ok();
}

}  // namespace edgefuse
