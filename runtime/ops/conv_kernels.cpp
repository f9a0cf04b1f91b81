// Conv's inner loops on one CPU ISA level (compiled once per level, see cpu_kernel_table.h);
// conv_cpu.cpp plans the work and threads it.
//   depthwise: a direct loop per (n, c) plane, vectorisable over output x;
//   pointwise (1x1, stride 1, no padding): Y[n, g] = W[g] (Mg x Cg) * X[n, g] (Cg x H*W), a GEMM;
//   otherwise: im2col of a block of output columns into scratch, then W[g] (Mg x Cg*kh*kw) * col.
// Eigen runs single-threaded here (the runtime is built without OpenMP).
#include <algorithm>

#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/ops/isa_eigen.h"  // first: Eigen under this level's namespace
#include "runtime/ops/unary_math.h"
#include "runtime/ops/vector_math.h"

EF_DECLARE_CPU_KERNELS(EF_ISA_NAMESPACE)

namespace edgefuse::EF_ISA_NAMESPACE {

namespace {

using RowMajorMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixView = Eigen::Map<const RowMajorMatrix, 0, Eigen::OuterStride<>>;
using MatrixView = Eigen::Map<RowMajorMatrix, 0, Eigen::OuterStride<>>;

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

// Applies the epilogue in place to `count` values: one branch-free loop per kind, so each
// vectorises (sigmoid through vector_math's f32 exp, as the standalone Sigmoid kernel does);
// the same formulas as ConvEpilogue::apply, the reference.
void apply_epilogue(const ConvEpilogue& e, float* data, int64_t count) {
  using Kind = ConvEpilogue::Kind;
  switch (e.kind) {
    case Kind::kNone:
      return;
    case Kind::kRelu:
      for (int64_t i = 0; i < count; ++i) data[i] = unary_math::relu(data[i]);
      return;
    case Kind::kLeakyRelu: {
      const float a = e.alpha;
      for (int64_t i = 0; i < count; ++i) data[i] = unary_math::leaky_relu(data[i], a);
      return;
    }
    case Kind::kClip: {
      const float lo = e.min, hi = e.max;
      for (int64_t i = 0; i < count; ++i) data[i] = unary_math::clip(data[i], lo, hi);
      return;
    }
    case Kind::kSigmoid:
      for (int64_t i = 0; i < count; ++i) data[i] = vector_math::sigmoid_f32(data[i]);
      return;
    case Kind::kHardSwish:
      for (int64_t i = 0; i < count; ++i) data[i] = unary_math::hard_swish(data[i]);
      return;
    case Kind::kHardSigmoid: {
      const float a = e.alpha, b = e.beta;
      for (int64_t i = 0; i < count; ++i) data[i] = unary_math::hard_sigmoid(data[i], a, b);
      return;
    }
    case Kind::kSilu:
      for (int64_t i = 0; i < count; ++i) data[i] = data[i] * vector_math::sigmoid_f32(data[i]);
      return;
  }
}

// One (n, c) plane of a depthwise conv.
void depthwise_plane(const Conv2d& c, int64_t plane) {
  const int64_t channel = plane % c.channels;
  const float* in = c.x + plane * c.input_plane;
  const float* kernel = c.w + channel * c.kh * c.kw;
  float* out = c.y + plane * c.output_plane;
  const float* residual = c.residual != nullptr ? c.residual + plane * c.output_plane : nullptr;
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
    apply_epilogue(c.epilogue, row, c.ow);
    if (residual_row != nullptr && c.epilogue.residual_after_activation) add_row(row, residual_row, c.ow);
  }
}

// Writes rows (channel, ky, kx) x output columns [begin, end) of group `g`'s im2col matrix of image
// `n` into `col` (row-major, end - begin columns); out-of-image taps are zero.
void im2col(const Conv2d& c, int64_t n, int64_t g, int64_t begin, int64_t end, float* col) {
  const int64_t width = end - begin;
  for (int64_t ch = 0; ch < c.cg; ++ch) {
    const float* in = c.x + (n * c.channels + g * c.cg + ch) * c.input_plane;
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

// im2col for stride 2 without dilation along x (the folded space-to-depth stem, downsampling
// convolutions). A strided gather per tap would read each input row kw times, one float at a time;
// instead each input row is split once into its even and odd columns, after which every tap is a
// contiguous copy from one of the two: input column 2*ox + offset is phase (offset & 1) at
// ox + (offset - phase) / 2.
// `col` is followed by room for the two phases of a row (iw + 1 floats).
void im2col_stride2(const Conv2d& c, int64_t n, int64_t g, int64_t begin, int64_t end, float* col) {
  const int64_t width = end - begin;
  const int64_t half = (c.iw + 1) / 2;
  float* const even = col + c.kernel_columns * width;
  float* const odd = even + half;
  for (int64_t ch = 0; ch < c.cg; ++ch) {
    const float* in = c.x + (n * c.channels + g * c.cg + ch) * c.input_plane;
    for (int64_t ky = 0; ky < c.kh; ++ky) {
      for (int64_t p = begin; p < end;) {
        const int64_t oy = p / c.ow;
        const int64_t ox_begin = p % c.ow;
        const int64_t ox_end = std::min(c.ow, ox_begin + (end - p));
        const int64_t iy = oy * c.sh + ky * c.dh - c.ph;
        const bool row_inside = iy >= 0 && iy < c.ih;
        if (row_inside) {
          const float* in_row = in + iy * c.iw;
          for (int64_t i = 0; i < c.iw / 2; ++i) {
            even[i] = in_row[2 * i];
            odd[i] = in_row[2 * i + 1];
          }
          if (c.iw % 2 != 0) even[half - 1] = in_row[c.iw - 1];
        }
        for (int64_t kx = 0; kx < c.kw; ++kx) {
          float* out = col + ((ch * c.kh + ky) * c.kw + kx) * width + (p - begin) - ox_begin;  // indexed by ox
          if (!row_inside) {
            std::fill(out + ox_begin, out + ox_end, 0.0f);
            continue;
          }
          const int64_t offset = kx - c.pw;
          int64_t lo = 0, hi = 0;
          valid_output_range(offset, 2, c.iw, c.ow, lo, hi);
          const int64_t valid_begin = std::clamp(lo, ox_begin, ox_end);
          const int64_t valid_end = std::clamp(hi, valid_begin, ox_end);
          const int64_t phase = offset & 1;
          const float* src = (phase != 0 ? odd : even) + (offset - phase) / 2;
          std::fill(out + ox_begin, out + valid_begin, 0.0f);
          std::copy(src + valid_begin, src + valid_end, out + valid_begin);
          std::fill(out + valid_end, out + ox_end, 0.0f);
        }
        p += ox_end - ox_begin;
      }
    }
  }
}

}  // namespace

void conv_depthwise_planes(const Conv2d& c, int64_t begin, int64_t end) {
  for (int64_t plane = begin; plane < end; ++plane) depthwise_plane(c, plane);
}

void conv_gemm_block(const Conv2d& c, int64_t n, int64_t g, int64_t begin, int64_t end, float* scratch) {
  const int64_t k = c.kernel_columns;
  const int64_t width = end - begin;
  const ConstMatrixView weights(c.w + g * c.mg * k, c.mg, k, Eigen::OuterStride<>(k));
  MatrixView out(c.y + (n * c.out_channels + g * c.mg) * c.output_plane + begin, c.mg, width,
                 Eigen::OuterStride<>(c.output_plane));
  if (c.pointwise) {
    const ConstMatrixView in(c.x + (n * c.channels + g * c.cg) * c.input_plane + begin, c.cg, width,
                             Eigen::OuterStride<>(c.input_plane));
    out.noalias() = weights * in;
  } else {
    if (c.sw == 2 && c.dw == 1) {
      im2col_stride2(c, n, g, begin, end, scratch);
    } else {
      im2col(c, n, g, begin, end, scratch);
    }
    out.noalias() = weights * ConstMatrixView(scratch, k, width, Eigen::OuterStride<>(width));
  }
  if (c.bias != nullptr) {
    out.colwise() += Eigen::Map<const Eigen::VectorXf>(c.bias + g * c.mg, c.mg);
  }
  const auto add_residual = [&] {
    out += ConstMatrixView(c.residual + (n * c.out_channels + g * c.mg) * c.output_plane + begin, c.mg, width,
                           Eigen::OuterStride<>(c.output_plane));
  };
  if (c.residual != nullptr && !c.epilogue.residual_after_activation) add_residual();
  if (c.epilogue.kind != ConvEpilogue::Kind::kNone) {
    for (int64_t row = 0; row < c.mg; ++row) apply_epilogue(c.epilogue, out.data() + row * c.output_plane, width);
  }
  if (c.residual != nullptr && c.epilogue.residual_after_activation) add_residual();
}

}  // namespace edgefuse::EF_ISA_NAMESPACE
