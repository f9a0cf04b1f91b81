// Optimised f32 Conv for 1-D and 2-D inputs (3-D falls back to the reference).
//
// Three paths, each split into tasks that run one single-threaded kernel on the thread pool:
//   depthwise (group == C == M): a direct loop per (n, c) plane, vectorisable over output x;
//   1x1, stride 1, no padding:   Y[n, g] = W[g] (Mg x Cg) * X[n, g] (Cg x H*W), a plain GEMM;
//   everything else:             im2col of a block of output columns into a scratch buffer,
//                                then W[g] (Mg x Cg*kh*kw) * col (Cg*kh*kw x block).
// The GEMM paths split the output columns (H_out * W_out, row-major) of each (n, g) into blocks.
// Eigen runs single-threaded here (the runtime is built without OpenMP); the pool does the threading.
#include <algorithm>
#include <vector>

#include <Eigen/Core>

#include "runtime/ops/conv_epilogue.h"
#include "runtime/ops/conv_problem.h"
#include "runtime/ops/ops.h"

namespace edgefuse {

namespace {

using RowMajorMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixView = Eigen::Map<const RowMajorMatrix, 0, Eigen::OuterStride<>>;
using MatrixView = Eigen::Map<RowMajorMatrix, 0, Eigen::OuterStride<>>;

// A 2-D conv with raw pointers; 1-D convs are 2-D convs of height 1.
struct Conv2d {
  int64_t batch, channels, out_channels, group, cg, mg;
  int64_t ih, iw, kh, kw, sh, sw, dh, dw, ph, pw, oh, ow;
  bool pointwise;  // 1x1 kernel, stride 1, no padding: the input is already the im2col matrix
  const float* x;
  const float* w;
  const float* bias;      // nullptr when absent
  const float* residual;  // fused residual with y's layout, added before or after the epilogue; nullptr when absent
  float* y;
  ConvEpilogue epilogue;  // applied to each output block while it is still in cache

  int64_t kernel_columns() const { return cg * kh * kw; }
  int64_t output_plane() const { return oh * ow; }
  int64_t input_plane() const { return ih * iw; }
};

int64_t ceil_div(int64_t a, int64_t b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

// The output x range [lo, hi) whose input x = ox * stride + offset lies in [0, width).
void valid_output_range(int64_t offset, int64_t stride, int64_t width, int64_t out_width, int64_t& lo, int64_t& hi) {
  lo = std::clamp<int64_t>(ceil_div(-offset, stride), 0, out_width);
  hi = std::clamp<int64_t>(ceil_div(width - offset, stride), lo, out_width);
}

void add_row(float* row, const float* addend, int64_t count) {
  for (int64_t i = 0; i < count; ++i) row[i] += addend[i];
}

// One (n, c) plane of a depthwise conv.
void depthwise_plane(const Conv2d& c, int64_t plane) {
  const int64_t channel = plane % c.channels;
  const float* in = c.x + plane * c.input_plane();
  const float* kernel = c.w + channel * c.kh * c.kw;
  float* out = c.y + plane * c.output_plane();
  const float* residual = c.residual != nullptr ? c.residual + plane * c.output_plane() : nullptr;
  const float init = c.bias != nullptr ? c.bias[channel] : 0.0f;
  for (int64_t oy = 0; oy < c.oh; ++oy) {
    float* row = out + oy * c.ow;
    std::fill(row, row + c.ow, init);
    for (int64_t ky = 0; ky < c.kh; ++ky) {
      const int64_t iy = oy * c.sh + ky * c.dh - c.ph;
      if (iy < 0 || iy >= c.ih) continue;
      const float* in_row = in + iy * c.iw;
      for (int64_t kx = 0; kx < c.kw; ++kx) {
        const float weight = kernel[ky * c.kw + kx];
        const int64_t offset = kx * c.dw - c.pw;
        int64_t lo = 0, hi = 0;
        valid_output_range(offset, c.sw, c.iw, c.ow, lo, hi);
        if (c.sw == 1) {
          const float* src = in_row + offset;
          for (int64_t ox = lo; ox < hi; ++ox) row[ox] += weight * src[ox];
        } else {
          for (int64_t ox = lo; ox < hi; ++ox) row[ox] += weight * in_row[ox * c.sw + offset];
        }
      }
    }
    const float* residual_row = residual != nullptr ? residual + oy * c.ow : nullptr;
    if (residual_row != nullptr && !c.epilogue.residual_after_activation) add_row(row, residual_row, c.ow);
    c.epilogue.apply_f32(row, c.ow);
    if (residual_row != nullptr && c.epilogue.residual_after_activation) add_row(row, residual_row, c.ow);
  }
}

// Writes rows (channel, ky, kx) x output columns [begin, end) of group `g`'s im2col matrix of image
// `n` into `col` (row-major, end - begin columns); out-of-image taps are zero.
void im2col(const Conv2d& c, int64_t n, int64_t g, int64_t begin, int64_t end, float* col) {
  const int64_t width = end - begin;
  for (int64_t ch = 0; ch < c.cg; ++ch) {
    const float* in = c.x + (n * c.channels + g * c.cg + ch) * c.input_plane();
    for (int64_t ky = 0; ky < c.kh; ++ky) {
      for (int64_t kx = 0; kx < c.kw; ++kx) {
        float* dst = col + ((ch * c.kh + ky) * c.kw + kx) * width;
        const int64_t offset = kx * c.dw - c.pw;
        int64_t lo = 0, hi = 0;
        valid_output_range(offset, c.sw, c.iw, c.ow, lo, hi);
        for (int64_t p = begin; p < end;) {
          const int64_t oy = p / c.ow;
          const int64_t ox_begin = p % c.ow;
          const int64_t ox_end = std::min(c.ow, ox_begin + (end - p));
          float* out = dst + (p - begin) - ox_begin;  // indexed by ox
          const int64_t iy = oy * c.sh + ky * c.dh - c.ph;
          if (iy < 0 || iy >= c.ih) {
            std::fill(out + ox_begin, out + ox_end, 0.0f);
          } else {
            const float* in_row = in + iy * c.iw;
            const int64_t valid_begin = std::clamp(lo, ox_begin, ox_end);
            const int64_t valid_end = std::clamp(hi, valid_begin, ox_end);
            std::fill(out + ox_begin, out + valid_begin, 0.0f);
            if (c.sw == 1) {
              std::copy(in_row + valid_begin + offset, in_row + valid_end + offset, out + valid_begin);
            } else {
              for (int64_t ox = valid_begin; ox < valid_end; ++ox) out[ox] = in_row[ox * c.sw + offset];
            }
            std::fill(out + valid_end, out + ox_end, 0.0f);
          }
          p += ox_end - ox_begin;
        }
      }
    }
  }
}

// Output columns [begin, end) of group g of image n: GEMM against the input or an im2col block.
void gemm_block(const Conv2d& c, int64_t n, int64_t g, int64_t begin, int64_t end) {
  const int64_t k = c.kernel_columns();
  const int64_t width = end - begin;
  const ConstMatrixView weights(c.w + g * c.mg * k, c.mg, k, Eigen::OuterStride<>(k));
  MatrixView out(c.y + (n * c.out_channels + g * c.mg) * c.output_plane() + begin, c.mg, width,
                 Eigen::OuterStride<>(c.output_plane()));
  if (c.pointwise) {
    const ConstMatrixView in(c.x + (n * c.channels + g * c.cg) * c.input_plane() + begin, c.cg, width,
                             Eigen::OuterStride<>(c.input_plane()));
    out.noalias() = weights * in;
  } else {
    thread_local std::vector<float> scratch;
    scratch.resize(static_cast<size_t>(k * width));
    im2col(c, n, g, begin, end, scratch.data());
    out.noalias() = weights * ConstMatrixView(scratch.data(), k, width, Eigen::OuterStride<>(width));
  }
  if (c.bias != nullptr) {
    out.colwise() += Eigen::Map<const Eigen::VectorXf>(c.bias + g * c.mg, c.mg);
  }
  const auto add_residual = [&] {
    out += ConstMatrixView(c.residual + (n * c.out_channels + g * c.mg) * c.output_plane() + begin, c.mg, width,
                           Eigen::OuterStride<>(c.output_plane()));
  };
  if (c.residual != nullptr && !c.epilogue.residual_after_activation) add_residual();
  if (c.epilogue.kind != ConvEpilogue::Kind::kNone) {
    for (int64_t row = 0; row < c.mg; ++row) c.epilogue.apply_f32(out.data() + row * c.output_plane(), width);
  }
  if (c.residual != nullptr && c.epilogue.residual_after_activation) add_residual();
}

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
  c.pointwise = c.kh == 1 && c.kw == 1 && c.sh == 1 && c.sw == 1 && c.ph == 0 && c.pw == 0 && g.pad_end[0] == 0 &&
                g.pad_end[1] == 0;
  c.x = args.inputs[0]->data<float>();
  c.w = args.inputs[1]->data<float>();
  c.bias = args.inputs.size() > 2 && args.inputs[2] != nullptr ? args.inputs[2]->data<float>() : nullptr;
  c.residual = args.inputs.size() > 3 && args.inputs[3] != nullptr ? args.inputs[3]->data<float>() : nullptr;
  c.y = args.outputs[0]->data<float>();
  c.epilogue = epilogue;
  return c;
}

}  // namespace

Status cpu_conv(const KernelArgs& args) {
  EF_ASSIGN_OR_RETURN(ConvProblem p, conv_problem(args.node, args.inputs));
  EF_ASSIGN_OR_RETURN(const ConvEpilogue epilogue, conv_epilogue(args.node.attrs));
  if (p.geometry.rank() > 2) return reference_conv(args);
  const Conv2d c = make_conv2d(p, epilogue, args);
  if (c.output_plane() == 0 || c.batch == 0 || c.out_channels == 0) return Status::ok();

  if (c.group == c.channels && c.group == c.out_channels) {
    parallel_for(args.pool, c.batch * c.channels, 1, [&](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) depthwise_plane(c, plane);
    });
    return Status::ok();
  }

  // Column blocks small enough that an im2col block stays around 512 KiB, large enough for GEMM.
  const int64_t block = std::clamp<int64_t>(131072 / std::max<int64_t>(1, c.kernel_columns()), 64, 4096);
  const int64_t blocks_per_plane = (c.output_plane() + block - 1) / block;
  const int64_t tasks = c.batch * c.group * blocks_per_plane;
  parallel_for(args.pool, tasks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t image_group = task / blocks_per_plane;
      const int64_t column = (task % blocks_per_plane) * block;
      gemm_block(c, image_group / c.group, image_group % c.group, column, std::min(c.output_plane(), column + block));
    }
  });
  return Status::ok();
}

}  // namespace edgefuse
