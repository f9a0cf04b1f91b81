// Conv's GEMM paths on one CPU ISA level (compiled once per level, see cpu_kernel_table.h);
// conv_cpu.cpp plans the work and threads it, conv_depthwise_kernels.cpp has the depthwise path.
//   pointwise (1x1, stride 1, no padding): Y[n, g] = W[g] (Mg x Cg) * X[n, g] (Cg x H*W), a GEMM
//     straight on the input planes;
//   otherwise: im2col of a block of output columns into scratch, then W[g] (Mg x Cg*kh*kw) * col.
// Both run the packed micro-kernel of packed_gemm.h, epilogue included.
#include <algorithm>

#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/ops/isa_eigen.h"  // first: Eigen under this level's namespace
#include "runtime/ops/packed_gemm.h"

EF_DECLARE_CPU_KERNELS(EF_ISA_NAMESPACE)

namespace edgefuse::EF_ISA_NAMESPACE {

static_assert(kGemmTileColumns <= kGemmPanelColumns, "the callers' scratch holds a panel of kGemmPanelColumns");
static_assert(kGemmRowBlockUnit % kGemmTileRows == 0, "row blocks start on a packed tile");

namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

// The output x range [lo, hi) whose input x = ox * stride + offset lies in [0, width).
void valid_output_range(int64_t offset, int64_t stride, int64_t width, int64_t out_width, int64_t& lo, int64_t& hi) {
  lo = std::clamp<int64_t>(ceil_div(-offset, stride), 0, out_width);
  hi = std::clamp<int64_t>(ceil_div(width - offset, stride), lo, out_width);
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

int64_t conv_packed_weight_floats(const Conv2d& c) {
  return c.group * packed_gemm_a_floats(c.mg, c.kernel_columns);
}

void conv_pack_weights(const Conv2d& c, float* packed) {
  const int64_t k = c.kernel_columns;
  for (int64_t g = 0; g < c.group; ++g) {
    pack_gemm_a(c.w + g * c.mg * k, c.mg, k, k, packed + g * packed_gemm_a_floats(c.mg, k));
  }
}

void conv_gemm_block(const Conv2d& c, int64_t n, int64_t g, int64_t row_begin, int64_t row_end, int64_t begin,
                     int64_t end, float* scratch) {
  const int64_t k = c.kernel_columns;
  const int64_t width = end - begin;
  const int64_t rows = row_end - row_begin;
  const int64_t output_offset = (n * c.out_channels + g * c.mg + row_begin) * c.output_plane + begin;
  GemmRowEpilogue epilogue;
  epilogue.bias = c.bias != nullptr ? c.bias + g * c.mg + row_begin : nullptr;
  epilogue.residual = c.residual != nullptr ? c.residual + output_offset : nullptr;
  epilogue.ldr = c.output_plane;
  epilogue.activation = c.epilogue;
  // Packed tiles are kGemmTileRows rows each and row_begin is a multiple of it (cpu_kernel_table.h).
  const float* packed = c.packed_w + g * packed_gemm_a_floats(c.mg, k) + row_begin * k;
  if (c.pointwise) {
    packed_gemm(packed, rows, k, c.x + (n * c.channels + g * c.cg) * c.input_plane + begin, c.input_plane,
                c.y + output_offset, c.output_plane, width, epilogue, scratch);
    return;
  }
  if (c.sw == 2 && c.dw == 1) {
    im2col_stride2(c, n, g, begin, end, scratch);
  } else {
    im2col(c, n, g, begin, end, scratch);
  }
  float* const panel = scratch + k * width + c.iw + 1;
  packed_gemm(packed, rows, k, scratch, width, c.y + output_offset, c.output_plane, width, epilogue, panel);
}

}  // namespace edgefuse::EF_ISA_NAMESPACE
