// The hot inner loops of the optimised CPU kernels, compiled once per CPU ISA level and called
// through a table of function pointers for the level active_cpu_isa() chose.
//
// Split: the op kernels (conv_cpu.cpp, unary_cpu.cpp, binary_cpu.cpp, matmul_cpu.cpp,
// pool_cpu.cpp) are compiled once, with the build's baseline flags; they validate, plan and
// thread, then call this table. The per-ISA sources (conv_kernels.cpp, pointwise_kernels.cpp,
// matmul_kernels.cpp, pool_kernels.cpp) hold only the loops, on raw pointers and the plain
// structs below, so that nothing but the loops is compiled with wider instructions (see
// isa_namespace.h). One source per kernel; runtime/CMakeLists.txt compiles it once per level:
//   portable: the baseline flags; avx2: -mavx2 -mfma; avx512: -mavx512f -mavx512bw -mavx512dq
//   -mavx512vl -mfma (x86-64 only; elsewhere the portable level alone is built).
// Structs here are plain data: an inline member function would be compiled at each level under
// one symbol.
#pragma once

#include <algorithm>
#include <cstdint>

#include "runtime/cpu_features.h"
#include "runtime/op_kind.h"
#include "runtime/ops/conv_epilogue.h"

namespace edgefuse {

// A 2-D Conv on raw pointers (1-D convs are 2-D convs of height 1); row-major NCHW buffers.
struct Conv2d {
  int64_t batch, channels, out_channels, group, cg, mg;
  int64_t ih, iw, kh, kw, sh, sw, dh, dw, ph, pw, oh, ow;
  int64_t kernel_columns;  // cg * kh * kw: the GEMM's depth (one row of B per tap)
  int64_t input_plane;     // ih * iw
  int64_t output_plane;    // oh * ow
  bool pointwise;          // 1x1 kernel, stride 1, no padding: the input planes are B's rows
  // Phase planes (conv_phase_planes.h), for depthwise and dense convs: each input plane as sh x sw
  // planes of phase_rows x phase_cols (oh + (kh - 1) * dh / sh, ow + (kw - 1) * dw / sw), each
  // phase_plane_floats long with its slack (phase_rows * phase_cols + phase_cols + kConvPhaseSlack).
  // Depthwise needs depthwise_scratch_floats per thread: one plane's phase planes, then its
  // oh x phase_cols outputs (+ slack).
  int64_t phase_rows, phase_cols, phase_plane_floats, depthwise_scratch_floats;
  // Dense convs run in bands of band_rows output rows (the last may be shorter): a band's phase
  // planes hold band_rows + (kh - 1) * dh / sh rows, band_plane_floats each with their slack.
  int64_t band_rows, band_plane_floats;
  // X channels-last ([N, H, W, C], ConvProblem::channels_last): only the dense path reads it (its
  // phase planes are filled from it); x is then NHWC data.
  bool channels_last;
  const float* x;
  const float* w;
  const float* packed_w;  // GEMM paths: w as conv_pack_weights packed it
  const float* bias;      // nullptr when absent
  const float* residual;  // fused residual with y's layout, added before or after the epilogue; nullptr when absent
  // Channels of the residual: out_channels, or with group 1 fewer (the rest take no residual).
  int64_t residual_channels;
  // Where the GEMM paths read residual channel ch of image n: from residual + n * residual_image +
  // ch * residual_plane on, holding the outputs from flattened position residual_begin (y's
  // layout: residual_channels * output_plane, output_plane, 0). The other paths take y's layout.
  int64_t residual_image, residual_plane, residual_begin;
  // The residual is [N, residual_channels, 2 oh, 2 ow], read through a 2 x 2 max pool
  // (kConvResidualMaxPool): only the 1x1 GEMM paths take it, each pooling the rows it needs
  // into a buffer it points `residual` at (with_pooled_residual_rows).
  bool residual_pooled;
  // Y channels-last ([N, H, W, M], ConvProblem::output_channels_last), or by groups of channels
  // ([N, A, H, W, M / A], A = output_channel_groups): only the 1x1 path writes it (each task's block
  // computed channels-first into a buffer, then transposed into y a group at a time).
  bool output_channels_last;
  int64_t output_channel_groups;
  float* y;
  ConvEpilogue epilogue;  // applied to each output block while it is still in cache
};

// A pointwise unary f32 op: one of Relu, LeakyRelu, Sigmoid, Tanh, HardSigmoid, HardSwish, Clip,
// Sqrt, Exp, with its parameters (alpha, beta: LeakyRelu, HardSigmoid; lo, hi: Clip).
struct UnaryF32 {
  OpKind op = OpKind::kRelu;
  float alpha = 0;
  float beta = 0;
  float lo = 0;
  float hi = 0;
};

// Rows [row, row + count) of Y [m, n] = alpha * op(A) * op(B), all row-major: A stored [m, k]
// ([k, m] when trans_a), B stored [k, n] ([n, k] when trans_b), Y dense.
struct GemmF32 {
  const float* a;
  const float* b;
  float* y;
  int64_t m, k, n;
  bool trans_a, trans_b;
  float alpha;
};

// One (n, c) plane of a 2-D MaxPool without dilation (1-D pools have height 1).
struct MaxPool2d {
  int64_t ih, iw, kh, kw, sh, sw, ph, pw, oh, ow;
};

// Scratch max_pool_plane needs: the separable passes' rows, or for stride 1 a padded copy of the
// plane, its reduction along x and the output rows, each (oh + kh - 1) x (ow + kw - 1) at most.
inline int64_t max_pool_scratch_floats(const MaxPool2d& p) {
  // Stride 1: two planes of oh + kh - 1 rows of whole vectors plus kw - 1 floats, up to 16-float
  // vectors (pool_kernels.cpp).
  const int64_t row = p.ow + p.kw + 32;
  return std::max(p.ih * p.ow, 2 * (p.oh + p.kh - 1) * row);
}

// Floats a depthwise kernel of any level may read or write past the end of a phase plane's
// flattened outputs (it steps 4 vectors at a time, 64 floats with AVX-512).
inline constexpr int64_t kConvPhaseSlack = 64;
// Convs with a larger stride (sh x sw phase planes per input plane) take the reference kernel.
inline constexpr int64_t kConvPhaseMaxStride = 4;

// At least the widest GEMM tile of any level (48 columns with AVX-512, packed_gemm.h).
inline constexpr int64_t kGemmPanelColumns = 64;
// GEMM row blocks start at multiples of this (every level's tile height divides it).
inline constexpr int64_t kGemmRowBlockUnit = 16;

struct CpuKernelTable {
  CpuIsa isa;
  // Depthwise Conv (group == channels == out_channels): the (n, c) planes [begin, end);
  // `scratch` holds c.depthwise_scratch_floats.
  void (*conv_depthwise_planes)(const Conv2d& c, int64_t begin, int64_t end, float* scratch);
  // The same for output rows [oy_begin, oy_end) of every channel of image n (no residual), into
  // `out`: channel ch's rows from out + ch * out_plane on, ow apart.
  void (*conv_depthwise_band)(const Conv2d& c, int64_t n, int64_t oy_begin, int64_t oy_end, float* out,
                              int64_t out_plane, float* scratch);
  // Floats conv_pack_weights writes: the weights in this level's GEMM tile layout (packed_gemm.h).
  int64_t (*conv_packed_weight_floats)(const Conv2d& c);
  void (*conv_pack_weights)(const Conv2d& c, float* packed);
  // Pointwise Conv (c.pointwise), with c.packed_w set: output channels [row_begin, row_end) of
  // group g (row_begin a multiple of kGemmRowBlockUnit) and columns [begin, end) of image n, bias,
  // residual and epilogue included, into `out`: channel row_begin + r's columns from out + r * ldo
  // on (Y itself, or a buffer). `panel` holds kernel_columns * kGemmPanelColumns floats.
  void (*conv_pointwise_block)(const Conv2d& c, int64_t n, int64_t g, int64_t row_begin, int64_t row_end, int64_t begin,
                               int64_t end, float* out, int64_t ldo, float* panel);
  // The same (one group) for every output channel and columns [begin, end) of image n, with the
  // input read from `b` instead of c.x: B's row kk (input channel kk of those columns) at b + kk * ldb.
  void (*conv_pointwise_from)(const Conv2d& c, int64_t n, const float* b, int64_t ldb, int64_t begin, int64_t end,
                              float* panel);
  // Dense Conv (any other), per band of output rows [oy_begin, oy_begin + band_rows) of (n, g):
  // the input channels of the group into the band's phase planes, channel ch at
  // planes + ch * sh * sw * band_plane_floats (`planes` holds dense_band_floats(c), conv2d_setup.h);
  void (*conv_phase_band)(const Conv2d& c, int64_t n, int64_t g, int64_t oy_begin, float* planes);
  // then the band's output rows [oy_begin, oy_end) of every output channel of the group into
  // `out` (channel m's rows from out + m * out_plane on, ow apart: Y itself, or a buffer), bias,
  // residual (from c.residual, laid out like Y) and activation included, B's row kk being
  // b_rows[kk] (tap kk's run in the planes). `flat` (mg x ldf floats, ldf >= band rows x
  // phase_cols) holds the flattened product where rows end mid-vector.
  void (*conv_dense_band)(const Conv2d& c, const float* const* b_rows, int64_t n, int64_t g, int64_t oy_begin,
                          int64_t oy_end, float* out, int64_t out_plane, float* flat, int64_t ldf, float* panel);
  // Winograd F(2x2, 3x3) (conv_winograd.h), for Convs conv_winograd_tile gives 2: the transformed
  // weights in this level's GEMM tile layout, 16 matrices of out x in channels;
  int64_t (*conv_winograd_weight_floats)(const Conv2d& c);
  void (*conv_winograd_pack_weights)(const Conv2d& c, float* packed);
  // then tiles [tile_begin, tile_end) of image n into Y, bias, residual and activation included,
  // with c.packed_w the transformed weights; at least 16 tiles (a vector of the widest level).
  // `scratch` holds winograd_scratch_floats(c, tile_end - tile_begin), `panel` kernel_columns *
  // kGemmPanelColumns.
  void (*conv_winograd_tiles)(const Conv2d& c, int64_t n, int64_t tile_begin, int64_t tile_end, float* scratch,
                              float* panel);
  // The same for F(4x4, 3x3): 36 matrices; scratch of winograd4x4_scratch_floats.
  int64_t (*conv_winograd4x4_weight_floats)(const Conv2d& c);
  void (*conv_winograd4x4_pack_weights)(const Conv2d& c, float* packed);
  void (*conv_winograd4x4_tiles)(const Conv2d& c, int64_t n, int64_t tile_begin, int64_t tile_end, float* scratch,
                                 float* panel);
  // out[i] = op(in[i]) for i < count; in == out is allowed.
  void (*unary_f32)(const UnaryF32& op, const float* in, float* out, int64_t count);
  // out[i] = op(a[i * stride_a], b[i * stride_b]) for i < count, strides 0 or 1; op is one of
  // Add, Sub, Mul, Div, Pow, PRelu (b is the slope).
  void (*binary_f32)(OpKind op, const float* a, int64_t stride_a, const float* b, int64_t stride_b, float* out,
                     int64_t count);
  // See GemmF32 (MatMul and Gemm; Gemm's C term is added by the caller).
  void (*gemm_f32)(const GemmF32& g, int64_t row, int64_t count);
  // dst[r * dst_stride + c] = src[c * src_stride + r] for r < rows, c < cols (a 2-D transpose).
  void (*transpose_f32)(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int64_t rows,
                        int64_t cols);
  // `scratch` holds max_pool_scratch_floats(p) floats.
  void (*max_pool_plane)(const MaxPool2d& p, const float* in, float* out, float* scratch);
  // Nearest 2x upsampling of `rows` rows of `width` floats: dst row 2r and 2r + 1 are src row r
  // with each value twice.
  void (*upsample2x_f32)(const float* src, float* dst, int64_t rows, int64_t width);
  // Softmax of `columns` adjacent groups of `length` values spaced `inner` apart (group c:
  // in[c + k * inner], k < length); with inner == 1, one contiguous group (columns == 1).
  // Columns at a time keep every loop contiguous: YOLOv8's DFL normalises 16 bins 4 x 8400 apart.
  void (*softmax_f32)(const float* in, float* out, int64_t length, int64_t inner, int64_t columns);
  // The same groups' expectation of `weights` (length floats) under their softmax, plus `bias`:
  // out[c] = sum_k softmax_k * weights[k] + bias, one float per group.
  void (*softmax_expectation_f32)(const float* in, const float* weights, float bias, float* out, int64_t length,
                                  int64_t inner, int64_t columns);
};

// The table of the active level (active_cpu_isa()), and of a compiled one.
const CpuKernelTable& cpu_kernel_table();
const CpuKernelTable& cpu_kernel_table(CpuIsa isa);

}  // namespace edgefuse

// Declares the kernels of one ISA namespace (edgefuse::<isa>), as each per-ISA source defines them.
#define EF_DECLARE_CPU_KERNELS(isa)                                                                                   \
  namespace edgefuse::isa {                                                                                           \
  void conv_depthwise_planes(const Conv2d& c, int64_t begin, int64_t end, float* scratch);                            \
  void conv_depthwise_band(const Conv2d& c, int64_t n, int64_t oy_begin, int64_t oy_end, float* out,                  \
                           int64_t out_plane, float* scratch);                                                        \
  int64_t conv_packed_weight_floats(const Conv2d& c);                                                                 \
  void conv_pack_weights(const Conv2d& c, float* packed);                                                             \
  void conv_pointwise_block(const Conv2d& c, int64_t n, int64_t g, int64_t row_begin, int64_t row_end, int64_t begin, \
                            int64_t end, float* out, int64_t ldo, float* panel);                                      \
  void conv_pointwise_from(const Conv2d& c, int64_t n, const float* b, int64_t ldb, int64_t begin, int64_t end,       \
                           float* panel);                                                                             \
  void conv_phase_band(const Conv2d& c, int64_t n, int64_t g, int64_t oy_begin, float* planes);                       \
  void conv_dense_band(const Conv2d& c, const float* const* b_rows, int64_t n, int64_t g, int64_t oy_begin,           \
                       int64_t oy_end, float* out, int64_t out_plane, float* flat, int64_t ldf, float* panel);        \
  int64_t conv_winograd_weight_floats(const Conv2d& c);                                                               \
  void conv_winograd_pack_weights(const Conv2d& c, float* packed);                                                    \
  void conv_winograd_tiles(const Conv2d& c, int64_t n, int64_t tile_begin, int64_t tile_end, float* scratch,          \
                           float* panel);                                                                             \
  int64_t conv_winograd4x4_weight_floats(const Conv2d& c);                                                            \
  void conv_winograd4x4_pack_weights(const Conv2d& c, float* packed);                                                 \
  void conv_winograd4x4_tiles(const Conv2d& c, int64_t n, int64_t tile_begin, int64_t tile_end, float* scratch,       \
                              float* panel);                                                                          \
  void unary_f32(const UnaryF32& op, const float* in, float* out, int64_t count);                                     \
  void binary_f32(OpKind op, const float* a, int64_t stride_a, const float* b, int64_t stride_b, float* out,          \
                  int64_t count);                                                                                     \
  void gemm_f32(const GemmF32& g, int64_t row, int64_t count);                                                        \
  void transpose_f32(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int64_t rows,              \
                     int64_t cols);                                                                                   \
  void max_pool_plane(const MaxPool2d& p, const float* in, float* out, float* scratch);                               \
  void upsample2x_f32(const float* src, float* dst, int64_t rows, int64_t width);                                     \
  void softmax_f32(const float* in, float* out, int64_t length, int64_t inner, int64_t columns);                      \
  void softmax_expectation_f32(const float* in, const float* weights, float bias, float* out, int64_t length,         \
                               int64_t inner, int64_t columns);                                                       \
  }
