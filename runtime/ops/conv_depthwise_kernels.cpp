// Depthwise Conv (group == channels == out_channels), compiled once per CPU ISA level.
//
// Each (n, c) plane is first rearranged into stride_h x stride_w zero-padded phase planes:
//   Q[py][px][i][j] = padded input[i * stride_h + py][j * stride_w + px]
// in which output (oy, ox) reads tap (ky, kx) at Q[ky*dh % sh][kx*dw % sw][oy + ky*dh / sh][ox + kx*dw / sw].
// Flattening (oy, ox) as oy * cols + ox over phase-plane rows of `cols` floats makes every tap one
// contiguous, unit-stride stream at a fixed offset, whatever the stride, dilation or padding: the
// whole plane is one vector loop of kh * kw FMAs per output with no border cases. The cols - ow
// extra outputs per row are computed and dropped when the rows are compacted into the output,
// which is also where the epilogue runs, on data still in cache.
#include <algorithm>
#include <array>
#include <type_traits>
#include <utility>

#include "runtime/ops/conv_epilogue_rows.h"
#include "runtime/ops/conv_phase_planes.h"
#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/ops/isa_eigen.h"  // first: Eigen under this level's namespace
#include "runtime/ops/simd_activation.h"
#include "runtime/ops/simd_packet.h"

EF_DECLARE_CPU_KERNELS(EF_ISA_NAMESPACE)

namespace edgefuse::EF_ISA_NAMESPACE {

namespace {

constexpr int kLanes = simd::kLanes;
// Output vectors computed together: each is a chain of one FMA per tap, and a single chain runs
// at the FMA's latency (4 cycles), not its throughput (2 per cycle); 8 chains keep both FMA units
// busy and fit any level's register file with the weight being broadcast.
constexpr int kGroup = 8;
static_assert(kLanes <= kConvPhaseSlack, "reads past a plane's last vector must stay within its slack");
constexpr int kMaxTapsPerPass = 32;
constexpr int kUnrolledTaps = 9;  // 3 x 3, by far the most common depthwise kernel

// One group: acc[g] = init or acc (not first pass) + sum over taps of weight[t] * source[t][src[g]],
// then activation K, stored at dst[g]. kTaps > 0: the tap loop fully unrolled for that count.
template <ConvEpilogue::Kind K, int kTaps>
inline void group_taps(const float* const* sources, const simd::Vec* w, int64_t taps, simd::Vec init,
                       const float* acc_in, const int64_t* src, float* out, const int64_t* dst,
                       const ConvEpilogue& activation) {
  simd::Vec acc[kGroup];
#pragma GCC unroll 8
  for (int g = 0; g < kGroup; ++g) acc[g] = acc_in != nullptr ? simd::load(acc_in + dst[g]) : init;
  const int64_t count = kTaps > 0 ? kTaps : taps;
#pragma GCC unroll 9
  for (int64_t t = 0; t < count; ++t) {
    const float* s = sources[t];
    const simd::Vec wt = w[t];
#pragma GCC unroll 8
    for (int g = 0; g < kGroup; ++g) acc[g] = simd::fma(wt, simd::load(s + src[g]), acc[g]);
  }
#pragma GCC unroll 8
  for (int g = 0; g < kGroup; ++g) simd::store(out + dst[g], simd::activate<K>(acc[g], activation));
}

// Output vectors p = 0 .. total - 1 in groups of kGroup; position(p, src, dst) gives vector p's
// source and destination offsets. The last group repeats the last vector where it runs short:
// recomputing an output stores the same value (also in later passes, as every read of a group
// comes before its stores).
template <ConvEpilogue::Kind K, typename Position>
void run_groups(const float* const* sources, const float* weights, int64_t taps, float init, bool first_pass,
                float* out, int64_t total, const ConvEpilogue& activation, Position position) {
  simd::Vec w[kMaxTapsPerPass];
  for (int64_t t = 0; t < taps; ++t) w[t] = simd::broadcast(weights[t]);
  const simd::Vec init_vec = simd::broadcast(init);
  const float* acc_in = first_pass ? nullptr : out;
  int64_t src[kGroup], dst[kGroup];
  for (int64_t p = 0; p < total; p += kGroup) {
    for (int g = 0; g < kGroup; ++g) position(std::min(p + g, total - 1), src[g], dst[g]);
    if (taps == kUnrolledTaps) {
      group_taps<K, kUnrolledTaps>(sources, w, taps, init_vec, acc_in, src, out, dst, activation);
    } else {
      group_taps<K, 0>(sources, w, taps, init_vec, acc_in, src, out, dst, activation);
    }
  }
}

// acc[f] (+)= sum over taps of weight[t] * source[t][f] for f in [0, count), count rounded up to
// whole vectors; the last pass applies activation K before storing.
template <ConvEpilogue::Kind K>
void accumulate_taps(const float* const* sources, const float* weights, int64_t taps, float init, bool first_pass,
                     const ConvEpilogue& activation, float* acc, int64_t count) {
  run_groups<K>(sources, weights, taps, init, first_pass, acc, (count + kLanes - 1) / kLanes, activation,
                [](int64_t p, int64_t& src, int64_t& dst) { src = dst = p * kLanes; });
}

// Single pass straight into the output rows (out, `rows` rows of ow >= kLanes): row oy reads each tap
// from source[t] + oy * cols. The last vector of a row overlaps the one before it instead of
// running past the row; recomputing those outputs stores the same values. This skips the
// flattened buffer and the compaction copy of the multi-pass path.
template <ConvEpilogue::Kind K>
void accumulate_rows(const Conv2d& c, int64_t rows, const float* const* sources, const float* weights, int64_t taps,
                     float init, float* out) {
  const int64_t cols = c.phase_cols, ow = c.ow;
  const int64_t per_row = (ow + kLanes - 1) / kLanes;
  run_groups<K>(sources, weights, taps, init, true, out, rows * per_row, c.epilogue,
                [&](int64_t p, int64_t& src, int64_t& dst) {
                  const int64_t oy = p / per_row;
                  const int64_t x = std::min((p - oy * per_row) * kLanes, ow - kLanes);
                  src = oy * cols + x;
                  dst = oy * ow + x;
                });
}

// Stride 1, dilation 1, KS x KS: blocks of kBlockRows output rows x one or two vectors. Input row
// i of the block feeds output rows i - KS + 1 .. i, so each vector loaded serves up to kBlockRows
// outputs instead of one: about (kBlockRows + KS - 1) * KS loads per kBlockRows * KS * KS FMAs,
// which keeps the kernel on the FMA units rather than on (mostly cache-line-splitting) loads. The
// last row block and the last vector of a row overlap their neighbours instead of running past
// the plane; recomputed outputs store the same values. Needs rows >= kBlockRows, and ow >= kLanes
// unless the taps store through a mask. `Taps` says where the inputs come from:
//   column(j)          output vector j's first column;
//   edge(j)            which of its tap columns read outside the input row (RowEdge);
//   start_block(oy)    the block's first output row (relative to the first of `rows`);
//   load(i, j, kx, masked)  the input vector that tap column kx of the block's input row i
//                      brings to vector j, through a mask if `masked` (the tap may leave the row);
//   store(p, value)    an output vector (rows narrower than a vector: only the row's columns).
constexpr int kBlockRows = 4;
constexpr int kBlockVectors = simd::kRegisters >= 32 ? 2 : 1;
constexpr int kBlockInputRows = kBlockRows + 4;  // for kernels up to 5 x 5

// Which tap columns of an output vector read past the ends of its input row, and so load through
// a mask: none; the low ones (the row's first vector); the high ones (its last); any (a row not
// much wider than a vector). A masked load costs markedly more than a plain one here (a
// stand-alone 3 x 3 over 64 x 52 x 52 without activation: 49 GFLOP/s with every tap masked, 78
// with only the edge vectors' outer taps), so the mask is spent only where a tap can leave the row.
enum class RowEdge { kInside, kLeft, kRight, kAny };

// Whether tap column kx of a KS-wide window on a vector of class `edge` loads through its mask
// (constant once the callers' loops are unrolled).
constexpr bool masked_tap(RowEdge edge, int ks, int kx) {
  switch (edge) {
    case RowEdge::kInside:
      return false;
    case RowEdge::kLeft:
      return kx < ks / 2;
    case RowEdge::kRight:
      return kx > ks / 2;
    case RowEdge::kAny:
      break;
  }
  return true;
}

// fn(std::integral_constant<RowEdge, edge>{}): a run-time class as a template argument.
template <typename Fn>
inline void dispatch_edge(RowEdge edge, Fn&& fn) {
  using E = RowEdge;
  switch (edge) {
    case E::kInside:
      return fn(std::integral_constant<E, E::kInside>{});
    case E::kLeft:
      return fn(std::integral_constant<E, E::kLeft>{});
    case E::kRight:
      return fn(std::integral_constant<E, E::kRight>{});
    case E::kAny:
      return fn(std::integral_constant<E, E::kAny>{});
  }
}

// Makes `v` opaque to the optimiser, so that a vector loaded once stays in its register. Without
// it GCC folds each load into every FMA that uses it as a memory operand: the block's input rows
// are then loaded once per output row they feed, not once, and most of those loads split cache
// lines (a stand-alone 3 x 3 without activation over 16 x 104 x 104: 63 us folded, 45 kept).
inline void keep_in_register(simd::Vec& v) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  __asm__("" : "+v"(v));
#else  // measured on x86 only
  (void)v;
#endif
}

// Output rows oy .. oy + kBlockRows - 1 of vectors j, j + 1, ..., one per class in E.
template <ConvEpilogue::Kind K, int KS, RowEdge... E, typename Taps>
inline void row_block(const Conv2d& c, const Taps& taps, int64_t oy, int64_t j, const simd::Vec* w, simd::Vec init,
                      float* out) {
  constexpr int R = kBlockRows;
  constexpr int V = sizeof...(E);
  constexpr RowEdge kEdges[V] = {E...};
  static_assert(R + KS - 1 <= kBlockInputRows && V <= kBlockVectors);
  simd::Vec acc[R][V];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc[r][v] = init;
  }
#pragma GCC unroll 16
  for (int i = 0; i < R + KS - 1; ++i) {
#pragma GCC unroll 8
    for (int kx = 0; kx < KS; ++kx) {
      simd::Vec value[V];
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) {
        value[v] = taps.load(i, j + v, kx, masked_tap(kEdges[v], KS, kx));
        keep_in_register(value[v]);
      }
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const int ky = i - r;  // constant once unrolled
        if (ky < 0 || ky >= KS) continue;
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) acc[r][v] = simd::fma(w[ky * KS + kx], value[v], acc[r][v]);
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      taps.store(out + (oy + r) * c.ow + taps.column(j + v), simd::activate<K>(acc[r][v], c.epilogue));
    }
  }
}

template <ConvEpilogue::Kind K, int KS, typename Taps>
void stride1_row_blocks(const Conv2d& c, int64_t rows, Taps& taps, const float* kernel, float init, float* out) {
  simd::Vec w[KS * KS];
  for (int t = 0; t < KS * KS; ++t) w[t] = simd::broadcast(kernel[t]);
  const simd::Vec init_vec = simd::broadcast(init);
  const int64_t per_row = (c.ow + kLanes - 1) / kLanes;
  for (int64_t block = 0; block < rows; block += kBlockRows) {
    const int64_t oy = std::min(block, rows - kBlockRows);
    taps.start_block(oy);
    for (int64_t j = 0; j < per_row;) {
      // Two vectors at once where the row has them (both inside, or a row of exactly two): the
      // block's row pointers and loop then serve twice the FMAs.
      const RowEdge first = taps.edge(j), second = j + 1 < per_row ? taps.edge(j + 1) : RowEdge::kAny;
      if constexpr (kBlockVectors > 1) {
        if (first == RowEdge::kInside && second == RowEdge::kInside) {
          row_block<K, KS, RowEdge::kInside, RowEdge::kInside>(c, taps, oy, j, w, init_vec, out);
          j += 2;
          continue;
        }
        if (first == RowEdge::kLeft && second == RowEdge::kRight) {
          row_block<K, KS, RowEdge::kLeft, RowEdge::kRight>(c, taps, oy, j, w, init_vec, out);
          j += 2;
          continue;
        }
      }
      dispatch_edge(first,
                    [&](auto edge) { row_block<K, KS, decltype(edge)::value>(c, taps, oy, j, w, init_vec, out); });
      ++j;
    }
  }
}

// The first column of output vector j of a row of `ow` (>= kLanes, or one masked vector): the last
// vector of a row overlaps the one before it.
inline int64_t row_vector_column(int64_t j, int64_t ow) {
  return std::max<int64_t>(0, std::min(j * kLanes, ow - kLanes));
}

// Taps from the zero-padded plane (phase_cols floats per row, padding stored): never outside.
struct PaddedPlaneTaps {
  const float* plane;
  int64_t cols;
  int64_t ow;
  const float* block = nullptr;

  int64_t column(int64_t j) const { return row_vector_column(j, ow); }
  static RowEdge edge(int64_t /*j*/) { return RowEdge::kInside; }
  void start_block(int64_t oy) { block = plane + oy * cols; }
  simd::Vec load(int i, int64_t j, int kx, bool /*masked*/) const {
    return simd::load(block + i * cols + column(j) + kx);
  }
  static void store(float* p, simd::Vec value) { simd::store(p, value); }
};

#if defined(__AVX512F__)
// The lanes of a `lanes`-wide load starting at column `first` that fall inside a row of `width`.
inline __mmask16 lanes_inside(int64_t first, int64_t width, int64_t lanes = kLanes) {
  const int64_t lo = std::clamp<int64_t>(-first, 0, lanes), hi = std::clamp<int64_t>(width - first, 0, lanes);
  return hi <= lo ? __mmask16{0} : static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

// Taps straight from the input plane, without its padded copy (which costs about half as much as
// the taps themselves on YOLOX's 3 x 3 layers): a tap that may leave the row is a masked load
// whose mask drops the lanes left or right of the image (masked-off lanes are never touched, so a
// load may start before its row), and rows above or below the image read a zero row. Output rows
// from oy_begin on. Each vector's column, masks and edge class are worked out once per plane.
template <int KS>
struct MaskedInputTaps {
  static constexpr int64_t kMaxWidth = 2048;  // the zero row's length
  static constexpr int64_t kMaxVectors = (kMaxWidth + 2 * KS) / kLanes + 1;
  const Conv2d& c;
  const float* in;
  int64_t oy_begin;
  const float* row[kBlockInputRows] = {};
  // Per vector of a row, set by the constructor for the row's vectors only (zeroing the whole
  // arrays per plane cost more than the taps of a 13 x 13 plane):
  int64_t offset[kMaxVectors];  // the input column of its tap column 0, lane 0
  int64_t first_column[kMaxVectors];
  __mmask16 mask[kMaxVectors][KS];
  RowEdge edges[kMaxVectors];

  MaskedInputTaps(const Conv2d& conv, const float* input, int64_t first_row) : c(conv), in(input), oy_begin(first_row) {
    const int64_t per_row = (c.ow + kLanes - 1) / kLanes;
    for (int64_t j = 0; j < per_row; ++j) {
      first_column[j] = row_vector_column(j, c.ow);
      offset[j] = first_column[j] - c.pw;
      bool low = false, high = false;
      for (int kx = 0; kx < KS; ++kx) {
        mask[j][kx] = lanes_inside(offset[j] + kx, c.iw);
        if (mask[j][kx] != 0xFFFF) (kx < KS / 2 ? low : high) = true;
        if (mask[j][kx] != 0xFFFF && kx == KS / 2) low = high = true;
      }
      edges[j] = low && high ? RowEdge::kAny : low ? RowEdge::kLeft : high ? RowEdge::kRight : RowEdge::kInside;
    }
  }
  int64_t column(int64_t j) const { return first_column[j]; }
  RowEdge edge(int64_t j) const { return edges[j]; }
  void start_block(int64_t oy) {
    alignas(64) static const float kZeros[kLanes + kMaxWidth] = {};
    for (int i = 0; i < kBlockRows + KS - 1; ++i) {
      const int64_t iy = oy_begin + oy + i - c.ph;
      row[i] = iy >= 0 && iy < c.ih ? in + iy * c.iw : kZeros + kLanes;
    }
  }
  // `masked` is a constant once row_block's loops are unrolled.
  simd::Vec load(int i, int64_t j, int kx, bool masked) const {
    if (masked) {
      return _mm512_maskz_loadu_ps(mask[j][kx], row[i] + offset[j] + kx);
    } else {
      return _mm512_loadu_ps(row[i] + offset[j] + kx);
    }
  }
  void store(float* p, simd::Vec value) const {
    _mm512_mask_storeu_ps(p, c.ow >= kLanes ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << c.ow) - 1u), value);
  }
};
#endif

#if defined(__AVX512F__)
// Stride 1, dilation 1, KS x KS, straight from the input: strips of V output vectors slide down
// the plane one input row at a time. Each input row is loaded once per strip (KS shifted vectors
// per output vector) and feeds the KS output rows that read it, whose accumulators stay in
// registers; an output row is stored, activated, as soon as its last input row is in. That is
// KS * KS FMAs per KS loads and no per-block set-up (row blocks of R output rows reload KS - 1
// input rows per block and spent as much on addressing as on FMAs: a stand-alone 3 x 3 over
// 64 x 52 x 52 without activation took 43 us that way, 26 us streamed, on a 254 GFLOP/s core).
//
// Each slot's accumulator takes KS dependent FMAs per input row, which at the FMA's latency (4
// cycles) would leave the units idle with fewer than three vectors in a strip: narrower strips
// split each output into S partial sums, tap column kx going to partial kx % S.
// One strip's geometry, for kernels up to 5 x 5 and strips up to four vectors.
struct StreamStrip {
  static constexpr int kMaxSize = 5, kMaxVectors = 4;
  int64_t offset[kMaxVectors];            // input column of tap column 0, lane 0
  int64_t column[kMaxVectors];            // output column
  __mmask16 mask[kMaxVectors][kMaxSize];  // lanes inside the input row, per tap column
  __mmask16 store_mask;                   // lanes inside the output row (a single vector may be narrower)
  int vectors;                            // 1 to 4
  bool first_masked, last_masked;         // whether its first and last vector load through masks
};

// The stepping lambdas below must be inlined for the accumulators to live in registers.
#define EF_ALWAYS_INLINE __attribute__((always_inline))

// Output rows [oy_begin, oy_begin + rows) of the strip's vectors; only its first and last vector
// may load through masks (kFirstMasked, kLastMasked).
template <ConvEpilogue::Kind K, int KS, int V, int S, bool kFirstMasked, bool kLastMasked>
void stream_strip(const Conv2d& c, const float* in, int64_t oy_begin, int64_t rows, const simd::Vec* weights,
                  const float* kernel, simd::Vec init, const StreamStrip& strip_in, float* out) {
  // The activations with many constants need the registers the weights would take: the weights
  // are then broadcast from memory in each FMA.
  constexpr bool kWeightsInRegisters = K != ConvEpilogue::Kind::kSilu && K != ConvEpilogue::Kind::kSigmoid;
  // Local copies, which the stores through `out` cannot alias: they stay in registers.
  const StreamStrip strip = strip_in;
  simd::Vec w[KS * KS];
#pragma GCC unroll 25
  for (int t = 0; t < KS * KS; ++t) w[t] = weights[t];
  simd::Vec acc[KS][V][S];
  const int64_t steps = rows + KS - 1;  // step t reads input row oy_begin - ph + t
  const int64_t iy0 = oy_begin - c.ph;
  // Step t with t % KS == P: output row t starts in slot P, input row iy0 + t adds to the outputs
  // t - ky (slot (P - ky) mod KS), and output t - KS + 1 (slot (P + 1) mod KS) is complete.
  // Outputs before the first or after the last take adds that are never stored.
  const auto step = [&](auto phase, int64_t t) EF_ALWAYS_INLINE {
    constexpr int P = decltype(phase)::value;
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      acc[P][v][0] = init;
#pragma GCC unroll 4
      for (int p = 1; p < S; ++p) acc[P][v][p] = simd::zero();
    }
    const int64_t iy = iy0 + t;
    if (iy >= 0 && iy < c.ih) {
      const float* row = in + iy * c.iw;
#pragma GCC unroll 8
      for (int kx = 0; kx < KS; ++kx) {
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) {
          const bool masked = (v == 0 && kFirstMasked) || (v == V - 1 && kLastMasked);
          simd::Vec value = masked ? _mm512_maskz_loadu_ps(strip.mask[v][kx], row + strip.offset[v] + kx)
                                   : _mm512_loadu_ps(row + strip.offset[v] + kx);
          keep_in_register(value);
#pragma GCC unroll 8
          for (int ky = 0; ky < KS; ++ky) {
            simd::Vec& a = acc[(P - ky + KS) % KS][v][kx % S];
            if constexpr (kWeightsInRegisters) {
              a = simd::fma(w[ky * KS + kx], value, a);
            } else {
              a = simd::fma(_mm512_set1_ps(kernel[ky * KS + kx]), value, a);
            }
          }
        }
      }
    }
    if (t >= KS - 1) {
      constexpr int kDone = (P + 1) % KS;
      float* dst = out + (t - KS + 1) * c.ow;
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) {
        simd::Vec sum = acc[kDone][v][0];
#pragma GCC unroll 4
        for (int p = 1; p < S; ++p) sum = simd::add(sum, acc[kDone][v][p]);
        sum = simd::activate<K>(sum, c.epilogue);
        if constexpr (V == 1) {
          _mm512_mask_storeu_ps(dst + strip.column[v], strip.store_mask, sum);
        } else {
          _mm512_storeu_ps(dst + strip.column[v], sum);
        }
      }
    }
  };
  const auto round = [&]<int... P>(std::integer_sequence<int, P...>, int64_t t, int64_t end) EF_ALWAYS_INLINE {
    ((t + P < end ? step(std::integral_constant<int, P>{}, t + P) : void()), ...);
  };
  int64_t t = 0;
  for (; t + KS <= steps; t += KS) round(std::make_integer_sequence<int, KS>{}, t, t + KS);
  round(std::make_integer_sequence<int, KS>{}, t, steps);
}

// stream_strip's strips over a row of a KS x KS stride-1 Conv: rows of one or two vectors as one
// strip, wider ones in strips of three or four. They are the same for every plane and band of the
// Conv, so they are worked out once per kernel call rather than once per plane (on BlazeFace-256's
// paired bands of 10 rows x 24 channels, per plane, they took 4 % of the model's time). No strips
// (count 0) where the Conv is not of that kind, or where an inner vector of a strip would need a
// mask (padding wider than these kernels assume).
struct StreamRowPlan {
  // Rows up to MaskedInputTaps' width, in strips of three vectors or more.
  static constexpr int kMaxStrips = (MaskedInputTaps<3>::kMaxWidth / kLanes + 1) / 3 + 1;
  int count = 0;
  StreamStrip strips[kMaxStrips];

  explicit StreamRowPlan(const Conv2d& c) {
    const int ks = static_cast<int>(c.kh);
    if (c.sh != 1 || c.sw != 1 || c.dh != 1 || c.dw != 1 || c.kh != c.kw || (ks != 3 && ks != 5) || c.ph >= ks ||
        c.pw >= ks || c.ow < 1 || c.iw > MaskedInputTaps<3>::kMaxWidth) {
      return;
    }
    const int64_t per_row = (c.ow + kLanes - 1) / kLanes;
    if (per_row <= 2) {
      add(c, ks, static_cast<int>(per_row), 0);
      return;
    }
    const int64_t total = (per_row + 3) / 4;
    for (int64_t s = 0, j = 0; s < total; ++s) {
      // 3 or 4 vectors; five make two strips of three sharing one (it is stored twice, the same).
      const int64_t width = std::max<int64_t>(3, (per_row - j + (total - s) - 1) / (total - s));
      j = std::min(j, per_row - width);
      if (!add(c, ks, static_cast<int>(width), j)) return;
      j += width;
    }
  }

 private:
  // The strip of `vectors` vectors from vector j; false, and no strips, if an inner one needs a mask.
  bool add(const Conv2d& c, int ks, int vectors, int64_t j) {
    StreamStrip& strip = strips[count];
    strip.vectors = vectors;
    strip.store_mask = lanes_inside(0, c.ow);
    bool masked[StreamStrip::kMaxVectors] = {};
    for (int v = 0; v < vectors; ++v) {
      strip.column[v] = row_vector_column(j + v, c.ow);
      strip.offset[v] = strip.column[v] - c.pw;
      for (int kx = 0; kx < ks; ++kx) {
        strip.mask[v][kx] = lanes_inside(strip.offset[v] + kx, c.iw);
        masked[v] = masked[v] || strip.mask[v][kx] != 0xFFFF;
      }
    }
    for (int v = 1; v + 1 < vectors; ++v) {
      if (masked[v]) {
        count = 0;
        return false;
      }
    }
    // Narrow rows have both ends at the edges.
    strip.first_masked = vectors <= 2 || masked[0];
    strip.last_masked = vectors <= 2 || masked[vectors - 1];
    ++count;
    return true;
  }
};

// Output rows [oy_begin, oy_begin + rows) by stream_strip over the plan's strips; false (nothing
// run) where the plan has none.
template <ConvEpilogue::Kind K, int KS>
bool stride1_stream(const Conv2d& c, const StreamRowPlan& plan, const float* in, int64_t oy_begin, int64_t rows,
                    const float* kernel, float init, float* out) {
  if (plan.count == 0) return false;
  simd::Vec w[KS * KS];
  for (int t = 0; t < KS * KS; ++t) w[t] = simd::broadcast(kernel[t]);
  const simd::Vec init_vec = simd::broadcast(init);
  using T = std::true_type;
  using F = std::false_type;
  for (int s = 0; s < plan.count; ++s) {
    const StreamStrip& strip = plan.strips[s];
    const auto go = [&](auto v_count, auto first, auto last) {
      constexpr int V = decltype(v_count)::value;
      constexpr int S = V == 1 ? 3 : V == 2 ? 2 : 1;
      stream_strip<K, KS, V, S, decltype(first)::value, decltype(last)::value>(c, in, oy_begin, rows, w, kernel,
                                                                               init_vec, strip, out);
    };
    // Every (first, last) combination of 3- and 4-vector strips; 1 and 2 vectors are masked at both ends.
    const auto wide = [&](auto v_count) {
      if (strip.first_masked && strip.last_masked) {
        go(v_count, T{}, T{});
      } else if (strip.first_masked) {
        go(v_count, T{}, F{});
      } else if (strip.last_masked) {
        go(v_count, F{}, T{});
      } else {
        go(v_count, F{}, F{});
      }
    };
    switch (strip.vectors) {
      case 1:
        go(std::integral_constant<int, 1>{}, T{}, T{});
        break;
      case 2:
        go(std::integral_constant<int, 2>{}, T{}, T{});
        break;
      case 3:
        wide(std::integral_constant<int, 3>{});
        break;
      default:
        wide(std::integral_constant<int, 4>{});
        break;
    }
  }
  return true;
}
#endif

// The row-blocked kernel on output rows [oy_begin, oy_begin + rows): straight from the input with
// AVX-512 (when `direct_input` is set), else from the padded plane in `plane`. False for the cases
// it does not cover (stride, dilation, kernel sizes other than 3 x 3 and 5 x 5, too few rows or
// columns), which take the grouped-tap loops.
template <ConvEpilogue::Kind K>
bool try_stride1_row_blocks(const Conv2d& c, const float* direct_input, int64_t oy_begin, int64_t rows,
                            const float* plane, const float* kernel, float init, float* out) {
  if (c.sh != 1 || c.sw != 1 || c.dh != 1 || c.dw != 1 || c.kh != c.kw || rows < kBlockRows ||
      (c.kh != 3 && c.kh != 5)) {
    return false;
  }
  const auto run = [&](auto kernel_size) {
    constexpr int KS = decltype(kernel_size)::value;
#if defined(__AVX512F__)
    if (direct_input != nullptr) {
      if (c.ph >= KS || c.pw >= KS || c.iw > MaskedInputTaps<KS>::kMaxWidth) return false;
      MaskedInputTaps<KS> taps(c, direct_input, oy_begin);
      stride1_row_blocks<K, KS>(c, rows, taps, kernel, init, out);
      return true;
    }
#else
    (void)direct_input;
    (void)oy_begin;
#endif
    if (plane == nullptr || c.ow < kLanes) return false;  // narrow rows store through a mask
    PaddedPlaneTaps taps{plane, c.phase_cols, c.ow};
    stride1_row_blocks<K, KS>(c, rows, taps, kernel, init, out);
    return true;
  };
  return c.kh == 3 ? run(std::integral_constant<int, 3>{}) : run(std::integral_constant<int, 5>{});
}

#if defined(__AVX512F__)
// 3 x 3, stride 2, no dilation, straight from the input: each output vector (16 columns from x0)
// reads, per kernel row, the input run from column 2 x0 - pw as three masked loads (32 floats and
// one more; lanes outside the row are zeros) and splits it into the even columns, the odd ones,
// and the even ones one further on: the three taps of every output in two permutes and an align.
// No phase planes, which on small planes (YOLOX's 13 x 13 and 26 x 26, BlazeFace's 8 x 8 and
// 16 x 16) cost more than the taps. Outputs narrower than a vector are stored through a mask; the
// last vector of a wider row overlaps the one before it.
// Output rows [oy_begin, oy_begin + rows) of the vector at output column x0, whose input run
// starts at column `first`: through masks where the run may leave the row (kMasked), else plain
// loads, which cost markedly less. Two rows at a time, so that two chains of nine FMAs overlap.
template <ConvEpilogue::Kind K, bool kMasked>
void stride2_3x3_vector(const Conv2d& c, const float* in, int64_t oy_begin, int64_t rows, const simd::Vec* w,
                        simd::Vec init, int64_t first, const __mmask16* masks, __mmask16 store_mask, float* out) {
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  // Kernel row ky of output row oy, added to acc.
  const auto add_row = [&](int64_t oy, int ky, simd::Vec& acc) {
    const int64_t iy = 2 * oy + ky - c.ph;
    if (iy < 0 || iy >= c.ih) return;
    const float* base = in + iy * c.iw + first;
    __m512 a, b, next;
    if constexpr (kMasked) {
      a = _mm512_maskz_loadu_ps(masks[0], base);
      b = _mm512_maskz_loadu_ps(masks[1], base + kLanes);
      next = _mm512_maskz_loadu_ps(masks[2], base + 2 * kLanes);
    } else {
      a = _mm512_loadu_ps(base);
      b = _mm512_loadu_ps(base + kLanes);
      next = _mm512_zextps128_ps512(_mm_load_ss(base + 2 * kLanes));
    }
    const __m512 e = _mm512_permutex2var_ps(a, even, b);
    const __m512 o = _mm512_permutex2var_ps(a, odd, b);
    const __m512 e2 = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(next), _mm512_castps_si512(e), 1));
    acc = simd::fma(w[ky * 3], e, acc);
    acc = simd::fma(w[ky * 3 + 1], o, acc);
    acc = simd::fma(w[ky * 3 + 2], e2, acc);
  };
  int64_t r = 0;
  for (; r + 2 <= rows; r += 2) {
    simd::Vec acc0 = init, acc1 = init;
#pragma GCC unroll 3
    for (int ky = 0; ky < 3; ++ky) {
      add_row(oy_begin + r, ky, acc0);
      add_row(oy_begin + r + 1, ky, acc1);
    }
    _mm512_mask_storeu_ps(out + r * c.ow, store_mask, simd::activate<K>(acc0, c.epilogue));
    _mm512_mask_storeu_ps(out + (r + 1) * c.ow, store_mask, simd::activate<K>(acc1, c.epilogue));
  }
  if (r < rows) {
    simd::Vec acc = init;
#pragma GCC unroll 3
    for (int ky = 0; ky < 3; ++ky) add_row(oy_begin + r, ky, acc);
    _mm512_mask_storeu_ps(out + r * c.ow, store_mask, simd::activate<K>(acc, c.epilogue));
  }
}

template <ConvEpilogue::Kind K>
void stride2_3x3_direct(const Conv2d& c, const float* in, int64_t oy_begin, int64_t rows, const float* kernel,
                        float init, float* out) {
  simd::Vec w[9];
  for (int t = 0; t < 9; ++t) w[t] = simd::broadcast(kernel[t]);
  const simd::Vec init_vec = simd::broadcast(init);
  const int64_t ow = c.ow;
  const int64_t per_row = (ow + kLanes - 1) / kLanes;
  const __mmask16 store_mask = lanes_inside(0, ow);
  for (int64_t j = 0; j < per_row; ++j) {
    const int64_t x0 = ow >= kLanes ? std::min(j * kLanes, ow - kLanes) : 0;
    const int64_t first = 2 * x0 - c.pw;
    const __mmask16 masks[3] = {lanes_inside(first, c.iw), lanes_inside(first + kLanes, c.iw),
                                lanes_inside(first + 2 * kLanes, c.iw, 1)};
    if (masks[0] == 0xFFFF && masks[1] == 0xFFFF && masks[2] == 1) {
      stride2_3x3_vector<K, false>(c, in, oy_begin, rows, w, init_vec, first, masks, store_mask, out + x0);
    } else {
      stride2_3x3_vector<K, true>(c, in, oy_begin, rows, w, init_vec, first, masks, store_mask, out + x0);
    }
  }
}
#endif

#if !defined(__AVX512F__)
// Without AVX-512 there are no streamed kernels, and no strips to plan.
struct StreamRowPlan {
  explicit StreamRowPlan(const Conv2d& /*c*/) {}
};
#endif

// The input-direct kernels with AVX-512 (streamed stride 1 by `stream`'s strips, else stride 1
// row blocks; 3 x 3 stride 2); false where none applies, or without AVX-512.
template <ConvEpilogue::Kind K>
bool try_direct(const Conv2d& c, [[maybe_unused]] const StreamRowPlan& stream, const float* in, int64_t oy_begin,
                int64_t rows, const float* kernel, float init, float* out) {
#if defined(__AVX512F__)
  if (c.sh == 2 && c.sw == 2 && c.kh == 3 && c.kw == 3 && c.dh == 1 && c.dw == 1) {
    stride2_3x3_direct<K>(c, in, oy_begin, rows, kernel, init, out);
    return true;
  }
  if (stream.count > 0) {
    return c.kh == 3 ? stride1_stream<K, 3>(c, stream, in, oy_begin, rows, kernel, init, out)
                     : stride1_stream<K, 5>(c, stream, in, oy_begin, rows, kernel, init, out);
  }
#endif
  return try_stride1_row_blocks<K>(c, in, oy_begin, rows, nullptr, kernel, init, out);
}

// The activations the kernels above are compiled with: those that detectors put after a depthwise
// Conv (none: BlazeFace; SiLU: YOLOX; ReLU and ReLU6 as Clip: MobileNets). Each kind instantiates
// every streamed strip shape: with all eight kinds this file took 79 s to compile with AVX-512
// (231 s under ASan), with these four 42 s (133 s). The others (sigmoid, LeakyRelu, HardSwish,
// HardSigmoid) run as a pass over each finished row, still in L1.
constexpr bool has_kernel_activation(ConvEpilogue::Kind kind) {
  using Kind = ConvEpilogue::Kind;
  return kind == Kind::kNone || kind == Kind::kRelu || kind == Kind::kClip || kind == Kind::kSilu;
}

// fn(std::integral_constant<Kind, kind>{}) for a kind has_kernel_activation accepts; fn is not
// instantiated for the others.
template <typename Fn>
void dispatch_kernel_activation(ConvEpilogue::Kind kind, Fn&& fn) {
  simd::dispatch_activation(kind, [&](auto constant) {
    if constexpr (has_kernel_activation(decltype(constant)::value)) fn(constant);
  });
}

// Output rows [oy_begin, oy_end) of one (n, c) plane into `out` (row oy_begin first, rows ow
// apart): the phase rows they read (their own and (kh - 1) * dh / sh more), then the taps.
void depthwise_plane(const Conv2d& c, const StreamRowPlan& stream, int64_t plane, int64_t oy_begin, int64_t oy_end,
                     float* out, float* scratch) {
  const int64_t channel = plane % c.channels;
  const float* in = c.x + plane * c.input_plane;
  const float* kernel = c.w + channel * c.kh * c.kw;
  const int64_t cols = c.phase_cols;
  const int64_t rows = oy_end - oy_begin;
  const float* residual = c.residual != nullptr ? c.residual + plane * c.output_plane + oy_begin * c.ow : nullptr;
  // The activation runs in the kernels' last pass unless a residual must be added before it, or
  // it is not one of the kinds they are compiled for (dispatch_kernel_activation).
  const bool residual_first = c.residual != nullptr && !c.epilogue.residual_after_activation;
  const bool activation_in_kernel = !residual_first && has_kernel_activation(c.epilogue.kind);
  const ConvEpilogue::Kind fused_kind = activation_in_kernel ? c.epilogue.kind : ConvEpilogue::Kind::kNone;
  // Whatever the kernels left of the epilogue, on rows still in L1.
  const auto finish_output_row = [&](float* row, const float* residual_row) {
    if (!activation_in_kernel) {
      finish_row(c.epilogue, row, residual_row, c.ow);
    } else if (residual_row != nullptr) {
      add_row(row, residual_row, c.ow);
    }
  };
  const auto finish_rows = [&] {
    if (activation_in_kernel && residual == nullptr) return;
    for (int64_t oy = 0; oy < rows; ++oy) {
      finish_output_row(out + oy * c.ow, residual != nullptr ? residual + oy * c.ow : nullptr);
    }
  };
  const float init = c.bias != nullptr ? c.bias[channel] : 0.0f;
  bool direct = false;  // with AVX-512, kernels that read the input without phase planes
  dispatch_kernel_activation(fused_kind, [&](auto kind) {
    direct = try_direct<decltype(kind)::value>(c, stream, in, oy_begin, rows, kernel, init, out);
  });
  if (direct) return finish_rows();
  fill_phase_rows_range(c, in, oy_begin, oy_end + (c.phase_rows - c.oh), scratch, c.phase_plane_floats);
  float* acc = scratch + c.sh * c.sw * c.phase_plane_floats;  // rows * cols outputs, rounded up to a vector

  std::array<const float*, kMaxTapsPerPass> sources{};
  std::array<float, kMaxTapsPerPass> weights{};
  const int64_t count = rows * cols;
  const ConvEpilogue none;
  const auto run_pass = [&](int64_t taps, bool first_pass, bool last_pass) {
    if (!last_pass) {
      accumulate_taps<ConvEpilogue::Kind::kNone>(sources.data(), weights.data(), taps, init, first_pass, none, acc,
                                                 count);
      return;
    }
    dispatch_kernel_activation(fused_kind, [&](auto kind) {
      accumulate_taps<decltype(kind)::value>(sources.data(), weights.data(), taps, init, first_pass, c.epilogue, acc,
                                             count);
    });
  };
  const int64_t total_taps = c.kh * c.kw;
  if (total_taps <= kMaxTapsPerPass && c.ow >= kLanes) {
    for (int64_t ky = 0; ky < c.kh; ++ky) {
      for (int64_t kx = 0; kx < c.kw; ++kx) {
        const int64_t y_offset = ky * c.dh, x_offset = kx * c.dw, t = ky * c.kw + kx;
        const float* phase = scratch + ((y_offset % c.sh) * c.sw + x_offset % c.sw) * c.phase_plane_floats;
        sources[static_cast<size_t>(t)] = phase + (y_offset / c.sh) * cols + x_offset / c.sw;
        weights[static_cast<size_t>(t)] = kernel[t];
      }
    }
    dispatch_kernel_activation(fused_kind, [&](auto kind) {
      constexpr ConvEpilogue::Kind K = decltype(kind)::value;
      if (!try_stride1_row_blocks<K>(c, nullptr, oy_begin, rows, scratch, kernel, init, out)) {
        accumulate_rows<K>(c, rows, sources.data(), weights.data(), total_taps, init, out);
      }
    });
    return finish_rows();
  }
  int64_t taps = 0, done = 0;
  bool first_pass = true;
  for (int64_t ky = 0; ky < c.kh; ++ky) {
    const int64_t y_offset = ky * c.dh;
    for (int64_t kx = 0; kx < c.kw; ++kx) {
      const int64_t x_offset = kx * c.dw;
      const float* phase = scratch + ((y_offset % c.sh) * c.sw + x_offset % c.sw) * c.phase_plane_floats;
      sources[static_cast<size_t>(taps)] = phase + (y_offset / c.sh) * cols + x_offset / c.sw;
      weights[static_cast<size_t>(taps)] = kernel[ky * c.kw + kx];
      ++done;
      if (++taps == kMaxTapsPerPass || done == total_taps) {
        run_pass(taps, first_pass, done == total_taps);
        taps = 0;
        first_pass = false;
      }
    }
  }

  for (int64_t oy = 0; oy < rows; ++oy) {
    float* row = out + oy * c.ow;
    simd::copy(row, acc + oy * cols, c.ow);
    finish_output_row(row, residual != nullptr ? residual + oy * c.ow : nullptr);
  }
}

}  // namespace

void conv_depthwise_planes(const Conv2d& c, int64_t begin, int64_t end, float* scratch) {
  const StreamRowPlan stream(c);
  for (int64_t plane = begin; plane < end; ++plane) {
    depthwise_plane(c, stream, plane, 0, c.oh, c.y + plane * c.output_plane, scratch);
  }
}

void conv_depthwise_band(const Conv2d& c, int64_t n, int64_t oy_begin, int64_t oy_end, float* out, int64_t out_plane,
                         float* scratch) {
  const StreamRowPlan stream(c);
  for (int64_t channel = 0; channel < c.channels; ++channel) {
    depthwise_plane(c, stream, n * c.channels + channel, oy_begin, oy_end, out + channel * out_plane, scratch);
  }
}

}  // namespace edgefuse::EF_ISA_NAMESPACE
