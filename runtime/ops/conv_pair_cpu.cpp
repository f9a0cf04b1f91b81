// Two Convs run as one CPU kernel (conv_pair.h), in bands of output rows, so that the tensor
// between them lives only as a band buffer in the running thread's cache:
//   depthwise -> 1x1: the depthwise rows of every channel, then the 1x1 GEMM reading them; when
//     the memory plan put the output over the input (cpu_conv_pair_in_place), the rows each band
//     reads from its neighbours' input rows come first (run_in_place);
//   dense -> depthwise: the dense Conv's rows (phase planes, GEMM, compaction as in conv_cpu.cpp)
//     into a buffer, then the depthwise rows reading it as a small image of its own. Consecutive
//     bands of a thread overlap by the depthwise window's extra rows, which move to the top of
//     the buffer instead of being computed again;
//   dense -> strided dense: the same rows, then the second dense Conv's band over them.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "runtime/ops/conv2d_setup.h"
#include "runtime/ops/conv_pair.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/thread_scratch.h"

namespace edgefuse {

namespace {

// Bands are handed to the threads in contiguous shares (ThreadPool::parallel_for): each thread then
// runs the same rows in every pair of a stack of same-sized blocks and finds its rows of the block's
// input, written by its previous pair, in its own L2 (BlazeFace-256 on 2 threads 2.16 -> 2.04 ms).
constexpr bool kContiguousBands = true;

// The two Convs of a pair on raw pointers, or nullopt when either is not 1-D or 2-D, or has a
// residual where the pair's kind takes none (never on the first: its output is never whole).
struct Conv2dPair {
  Conv2d first, second;
};
Result<std::optional<Conv2dPair>> conv2d_pair(const KernelArgs& first, const KernelArgs& second, bool second_residual) {
  std::optional<ConvSetup> first_uncached, second_uncached;
  EF_ASSIGN_OR_RETURN(const ConvSetup* first_setup, conv_setup(first, first_uncached));
  EF_ASSIGN_OR_RETURN(const ConvSetup* second_setup, conv_setup(second, second_uncached));
  const auto has_residual = [](const KernelArgs& a) { return a.inputs.size() > 3 && a.inputs[3] != nullptr; };
  if (!first_setup->planar || !second_setup->planar || has_residual(first) ||
      (has_residual(second) && !second_residual)) {
    return std::optional<Conv2dPair>();
  }
  return std::optional<Conv2dPair>(
      Conv2dPair{bind_conv2d(first_setup->shape, first), bind_conv2d(second_setup->shape, second)});
}

// What pair_kind is asked: to run the pair, whether it would (the arguments may be meta tensors),
// whether it would and could write its output over its input (run_in_place), or over the second's
// residual (cpu_conv_pair_over_residual).
enum class PairQuery { kRun, kQualifies, kInPlace, kOverResidual };

// Which pairs qualify: only those whose tensors exceed kConvPairMinBytes, or any size (a pair the
// memory plan takes for the bytes it saves: cpu_conv_pair_in_place_any_size).
enum class PairSize { kAboveL2, kAny };

// Whether depthwise `d` and pointwise `p` (a qualifying pair) can write p's output over d's
// input: planes of the input's size, and each output row reading only the input rows around it
// (stride 1, no dilation, a window that covers the row itself). The output may have more channels
// than the input (a BlazeBlock that widens): its first planes then lie over the input's and the
// rest past its end, which with one image is nobody's input.
bool in_place_capable(const Conv2d& d, const Conv2d& p) {
  return !p.residual_pooled && d.sh == 1 && d.sw == 1 && d.dh == 1 && d.ph >= 0 && d.ph < d.kh && d.oh == d.ih &&
         d.ow == d.iw && (p.out_channels == d.channels || (p.out_channels > d.channels && d.batch == 1));
}

// The pair with p.y == d.x. Each image's output rows are split evenly into runs, one per thread
// (each boundary between runs costs edge rows computed alone: two runs per thread measured
// slower on BlazeFace-256), and each run into bands of about `band` rows (at least d.ph), which
// one task runs in order, one band behind: band b's depthwise rows, then band b - 1's 1x1 rows
// over band b - 1's input rows, which band b has read by then and later bands never read. A
// residual that is the input is read element by element before that element is written. Only the
// rows at the ends of a run read input rows of another run, which another thread may have
// overwritten: those edge rows (d.ph at the top, kh - 1 - d.ph at the bottom, none at the image's
// edges) are computed first, from the untouched input, into a side buffer. On one thread there is
// one run and no edge row.
Result<bool> run_in_place(const Conv2d& d, const Conv2d& p, int64_t band, ThreadPool* pool) {
  const CpuKernelTable& kernels = cpu_kernel_table();
  band = std::max<int64_t>({band, d.ph, 1});
  const int64_t threads = pool != nullptr ? pool->size() : 1;
  const int64_t runs =
      threads <= 1 ? 1 : std::clamp<int64_t>((threads + d.batch - 1) / d.batch, 1, std::max<int64_t>(1, d.oh / band));
  const int64_t tasks = d.batch * runs, edge_rows = d.kh - 1;
  // A run's output rows [begin, end) in `bands` bands; [begin, top) and [bottom, end) are its edge rows.
  struct RunRows {
    int64_t begin, end, bands, top, bottom;
    int64_t band_begin(int64_t b) const { return begin + b * (end - begin) / bands; }
  };
  const auto rows_of = [&](int64_t run) {
    const int64_t begin = run * d.oh / runs, end = (run + 1) * d.oh / runs;
    const int64_t top = begin > 0 ? std::min(end, begin + d.ph) : begin;
    const int64_t bottom = end < d.oh ? std::max(top, end - (edge_rows - d.ph)) : end;
    return RunRows{begin, end, std::max<int64_t>(1, (end - begin) / band), top, bottom};
  };
  int64_t max_band = 0;  // rows of the longest band
  for (int64_t run = 0; run < runs; ++run) {
    const RunRows r = rows_of(run);
    for (int64_t b = 0; b < r.bands; ++b) max_band = std::max(max_band, r.band_begin(b + 1) - r.band_begin(b));
  }
  const int64_t edge_plane = edge_rows * d.ow;  // per channel of a task's edge rows
  // The calling thread's, kept between runs: a fresh one per pair costs page faults and zeroing.
  // (The workers see it through `edges`: a thread_local named in the lambdas would be theirs.)
  thread_local std::vector<float> edge_buffer;
  float* const edges = grown_to(edge_buffer, runs > 1 ? tasks * d.channels * edge_plane : 0);
  if (runs > 1) {
    // A few rows per run boundary: in the calling thread, cheaper than waking the pool for them.
    thread_local std::vector<float> scratch_buffer;
    float* const scratch = grown_to(scratch_buffer, d.depthwise_scratch_floats);
    for (int64_t task = 0; task < tasks; ++task) {
      const RunRows r = rows_of(task % runs);
      const int64_t n = task / runs;
      float* out = edges + task * d.channels * edge_plane;
      if (r.top > r.begin) kernels.conv_depthwise_band(d, n, r.begin, r.top, out, edge_plane, scratch);
      if (r.end > r.bottom) {
        kernels.conv_depthwise_band(d, n, r.bottom, r.end, out + (r.top - r.begin) * d.ow, edge_plane, scratch);
      }
    }
  }
  parallel_for(
      pool, tasks, 1,
      [&](int64_t begin, int64_t end) {
        thread_local std::vector<float> scratch_buffer, rows_buffers[2], panel_buffer;
        float* const scratch = grown_to(scratch_buffer, d.depthwise_scratch_floats);
        float* const rows[2] = {grown_to(rows_buffers[0], d.channels * max_band * d.ow),
                                grown_to(rows_buffers[1], d.channels * max_band * d.ow)};
        float* const panel = grown_to(panel_buffer, p.kernel_columns * kGemmPanelColumns);
        for (int64_t task = begin; task < end; ++task) {
          const RunRows r = rows_of(task % runs);
          const int64_t n = task / runs;
          const float* edge = runs > 1 ? edges + task * d.channels * edge_plane : nullptr;  // none on one run
          // Band [o0, o1)'s depthwise rows into `out` (channel planes of (o1 - o0) * ow floats).
          const auto depthwise_rows = [&](int64_t o0, int64_t o1, float* out) {
            const int64_t plane = (o1 - o0) * d.ow;
            const int64_t inner0 = std::max(o0, r.top), inner1 = std::min(o1, r.bottom);
            if (inner1 > inner0) {
              kernels.conv_depthwise_band(d, n, inner0, inner1, out + (inner0 - o0) * d.ow, plane, scratch);
            }
            // Edge rows [e0, e1) of the run, in this band, from the side buffer's row edge_row on.
            const auto take = [&](int64_t e0, int64_t e1, int64_t edge_row) {
              if (e1 <= e0) return;
              for (int64_t ch = 0; ch < d.channels; ++ch) {
                std::copy_n(edge + ch * edge_plane + edge_row * d.ow, static_cast<size_t>((e1 - e0) * d.ow),
                            out + ch * plane + (e0 - o0) * d.ow);
              }
            };
            take(std::max(o0, r.begin), std::min(o1, r.top), std::max(o0, r.begin) - r.begin);
            take(std::max(o0, r.bottom), std::min(o1, r.end), (r.top - r.begin) + std::max(o0, r.bottom) - r.bottom);
          };
          // Band b's depthwise rows into rows[b % 2], then band b - 1's 1x1 rows from the other.
          const auto pointwise_rows = [&](int64_t b) {
            const int64_t o0 = r.band_begin(b), o1 = r.band_begin(b + 1);
            kernels.conv_pointwise_from(p, n, rows[b % 2], (o1 - o0) * d.ow, o0 * d.ow, o1 * d.ow, panel);
          };
          for (int64_t b = 0; b < r.bands; ++b) {
            depthwise_rows(r.band_begin(b), r.band_begin(b + 1), rows[b % 2]);
            if (b > 0) pointwise_rows(b - 1);
          }
          pointwise_rows(r.bands - 1);
        }
      },
      kContiguousBands);
  return true;
}

Result<bool> depthwise_then_pointwise(const KernelArgs& depthwise, const KernelArgs& pointwise, PairQuery query,
                                      PairSize size) {
  EF_ASSIGN_OR_RETURN(const std::optional<Conv2dPair> convs, conv2d_pair(depthwise, pointwise, true));
  if (!convs) return false;
  const Conv2d& d = convs->first;
  Conv2d p = convs->second;
  const bool depthwise_ok = d.group == d.channels && d.group == d.out_channels && !d.channels_last &&
                            d.sh <= kConvPhaseMaxStride && d.sw <= kConvPhaseMaxStride;
  const bool pointwise_ok = p.pointwise && !p.channels_last && p.group == 1 && p.channels == d.out_channels &&
                            p.batch == d.batch && p.ih == d.oh && p.iw == d.ow;
  if (!depthwise_ok || !pointwise_ok || d.output_plane == 0 || d.batch == 0 || p.out_channels == 0) return false;
  const int64_t working_bytes =
      static_cast<int64_t>(sizeof(float)) * d.batch *
      (d.channels * d.input_plane + d.out_channels * d.output_plane + p.out_channels * p.output_plane);
  if (working_bytes < kConvPairMinBytes && size == PairSize::kAboveL2) return false;
  if (query == PairQuery::kQualifies) return true;
  if (query == PairQuery::kInPlace) return in_place_capable(d, p);
  if (query == PairQuery::kOverResidual) {
    // Each element's residual is read by the task that writes that element, just before: the
    // output may take the residual's bytes when the residual's planes are its first ones.
    const bool has_residual = pointwise.inputs.size() > 3 && pointwise.inputs[3] != nullptr;
    return has_residual && !p.residual_pooled && (p.residual_channels == p.out_channels || p.batch == 1);
  }

  const CpuKernelTable& kernels = cpu_kernel_table();
  p.packed_w = packed_conv_weights(p, kernels, pointwise);
  // Bands of about 128 KiB of depthwise output (every channel), of at least kMinBandColumns
  // outputs, and with several threads enough bands for all of them. A GEMM over fewer columns runs
  // partial tiles, and each band repeats the depthwise rows' setup: with every block of
  // BlazeFace-128 paired on 1 thread, bands of 4 rows of 8 x 8 planes took 0.65 ms a frame, whole
  // planes 0.61 (two kernels per block: 0.60).
  constexpr int64_t kBandFloats = 32 * 1024;
  constexpr int64_t kMinBandColumns = 256;
  const int64_t threads = depthwise.pool != nullptr ? depthwise.pool->size() : 1;
  int64_t band = std::max(kBandFloats / (d.channels * d.ow), (kMinBandColumns + d.ow - 1) / d.ow);
  if (threads > 1) band = std::min(band, (d.oh * d.batch + 2 * threads - 1) / (2 * threads));
  band = std::clamp<int64_t>(band, 1, d.oh);
  const int64_t bands = (d.oh + band - 1) / band;
  band = (d.oh + bands - 1) / bands;  // as even as the count allows
  if (p.y == d.x) {
    if (!in_place_capable(d, p)) return Status(StatusCode::kInternal, "a depthwise -> 1x1 pair cannot run in place");
    return run_in_place(d, p, band, depthwise.pool);
  }
  const auto address = [](const float* f) { return reinterpret_cast<std::uintptr_t>(f); };
  const auto input_end = address(d.x + d.batch * d.channels * d.input_plane);
  const auto output_end = address(p.y + p.batch * p.out_channels * p.output_plane);
  if (address(p.y) < input_end && address(d.x) < output_end) {
    return Status(StatusCode::kInternal, "a depthwise -> 1x1 pair's output overlaps its input without being it");
  }
  parallel_for(
      depthwise.pool, d.batch * bands, 1,
      [&](int64_t begin, int64_t end) {
        thread_local std::vector<float> scratch_buffer, rows_buffer, panel_buffer, pooled_buffer;
        float* const scratch = grown_to(scratch_buffer, d.depthwise_scratch_floats);
        float* const rows = grown_to(rows_buffer, d.channels * band * d.ow);
        float* const panel = grown_to(panel_buffer, p.kernel_columns * kGemmPanelColumns);
        for (int64_t task = begin; task < end; ++task) {
          const int64_t n = task / bands;
          const int64_t oy = task % bands * band, oy_end = std::min(d.oh, oy + band);
          const int64_t columns = (oy_end - oy) * d.ow;
          kernels.conv_depthwise_band(d, n, oy, oy_end, rows, (oy_end - oy) * d.ow, scratch);
          // A pooled residual (BlazeFace's downsampling blocks pool the block's input, which the
          // depthwise rows have just read): the band's rows pooled beside them.
          const Conv2d q = p.residual_pooled
                               ? with_pooled_residual_rows(p, kernels, n, 0, p.out_channels, oy, oy_end, pooled_buffer)
                               : p;
          kernels.conv_pointwise_from(q, n, rows, columns, oy * d.ow, oy * d.ow + columns, panel);
        }
      },
      kContiguousBands);
  return true;
}

// The Conv `c` restricted to its output rows [o0, o1), reading input rows [r0, r1) from `rows`
// (channel ch's from rows + ch * plane on) as one image: the same taps, with the rows above r0 as
// padding when r0 is the image's first row and never read otherwise. Its output is written through
// the band kernels' `out`.
Conv2d rows_view(const Conv2d& c, int64_t o0, int64_t o1, int64_t r0, int64_t r1, const float* rows, int64_t plane) {
  Conv2d b = c;
  b.batch = 1;
  b.ih = r1 - r0;
  b.ph = c.ph + r0 - o0 * c.sh;
  b.oh = o1 - o0;
  b.input_plane = plane;
  b.output_plane = b.oh * b.ow;
  b.phase_rows = b.oh + (b.kh - 1) * b.dh / b.sh;
  b.x = rows;
  b.y = nullptr;
  return b;
}

// rows_view of the depthwise Conv `d`, with its scratch for conv_depthwise_band.
Conv2d depthwise_band_view(const Conv2d& d, int64_t o0, int64_t o1, int64_t r0, int64_t r1, const float* rows,
                           int64_t plane) {
  Conv2d b = rows_view(d, o0, o1, r0, r1, rows, plane);
  b.phase_plane_floats = b.phase_rows * b.phase_cols + b.phase_cols + kConvPhaseSlack;
  b.depthwise_scratch_floats = b.sh * b.sw * b.phase_plane_floats + b.oh * b.phase_cols + kConvPhaseSlack;
  return b;
}

// What the second Conv of a pair with a dense first needs of the first's output rows: its stride,
// padding and window on the rows, its input and output heights, and the floats of its own band
// buffers per output row (for the band size).
struct SecondRows {
  int64_t sh = 1, ph = 0, kh = 1, dh = 1, ih = 0, oh = 0;
  int64_t floats_per_row = 0;
};

SecondRows second_rows(const Conv2d& c, int64_t floats_per_row) {
  return SecondRows{c.sh, c.ph, c.kh, c.dh, c.ih, c.oh, floats_per_row};
}

// Whether every output row of the second Conv reads at least one real input row (else a band's
// view of the rows has none).
bool reads_real_rows(const SecondRows& s) {
  return s.oh > 0 && (s.kh - 1) * s.dh >= s.ph && (s.oh - 1) * s.sh - s.ph < s.ih;
}

// The dense Conv `f` in bands of the second Conv's output rows, each band's rows of f's output
// into a buffer (channel ch's from rows + ch * plane on), then second_band(n, o0, o1, r0, r1, rows,
// plane): the second Conv's output rows [o0, o1) of image n from f's rows [r0, r1). Bands of about
// 1 MiB of buffers: the dense rows' phase planes, GEMM output and compacted rows, s.sh dense rows
// per output row, and the second's own. Each band fills its phase planes' extra rows again, so
// smaller bands cost more (YOLOX-nano's stem pair: 1.56 ms with 512 KiB, 1.77 with 192 KiB, 1.51
// with 1 MiB; 2 MiB, all of L2, 3 % slower again). A thread runs a run of consecutive bands; more
// runs than threads balance the load, each computing its first band's overlap rows again, while
// consecutive bands of a run move their overlap rows to the top of the buffer.
template <typename SecondBand>
void dense_rows_in_bands(Conv2d f, const SecondRows& s, int64_t batch, const KernelArgs& dense,
                         SecondBand second_band) {
  // Output rows [o0, o1) read dense output rows [first_row(o0), end_row(o1)).
  const auto first_row = [&](int64_t o0) { return std::max<int64_t>(0, o0 * s.sh - s.ph); };
  const auto end_row = [&](int64_t o1) { return std::min(s.ih, (o1 - 1) * s.sh - s.ph + (s.kh - 1) * s.dh + 1); };
  constexpr int64_t kBandFloats = 256 * 1024;
  const int64_t per_dense_row = f.cg * f.sh * f.sw * f.phase_cols + f.mg * (f.phase_cols + f.ow);
  int64_t band = std::clamp<int64_t>(kBandFloats / (per_dense_row * s.sh + s.floats_per_row), 1, s.oh);
  const int64_t bands = (s.oh + band - 1) / band;
  band = (s.oh + bands - 1) / bands;  // as even as the count allows
  const int64_t threads = dense.pool != nullptr ? dense.pool->size() : 1;
  const int64_t runs = threads <= 1 ? 1 : std::min(bands, std::max<int64_t>(1, (2 * threads + batch - 1) / batch));
  int64_t max_rows = 0;  // dense rows a band needs, at most
  for (int64_t o0 = 0; o0 < s.oh; o0 += band) {
    max_rows = std::max(max_rows, end_row(std::min(s.oh, o0 + band)) - first_row(o0));
  }
  f.band_rows = max_rows;
  f.band_plane_floats = (max_rows + f.phase_rows - f.oh) * f.phase_cols + f.phase_cols + kConvPhaseSlack;
  const int64_t ldf = max_rows * f.phase_cols;
  const int64_t plane = max_rows * f.ow;  // per channel of the buffer of dense rows

  const CpuKernelTable& kernels = cpu_kernel_table();
  f.packed_w = packed_conv_weights(f, kernels, dense);
  parallel_for(
      dense.pool, batch * runs, 1,
      [&](int64_t begin, int64_t end) {
        thread_local std::vector<float> planes_buffer, flat_buffer, panel_buffer, rows_buffer;
        thread_local std::vector<const float*> b_rows_buffer;
        float* const planes = grown_to(planes_buffer, dense_band_floats(f));
        float* const flat = grown_to(flat_buffer, f.mg * ldf);
        float* const panel = grown_to(panel_buffer, f.kernel_columns * kGemmPanelColumns);
        float* const rows = grown_to(rows_buffer, f.mg * plane);
        const float** const b_rows = grown_to(b_rows_buffer, f.kernel_columns);
        dense_tap_rows(f, planes, b_rows);
        for (int64_t task = begin; task < end; ++task) {
          const int64_t n = task / runs, run = task % runs;
          int64_t held_begin = 0, held_end = 0;  // dense rows in `rows` from the run's previous band
          for (int64_t b = run * bands / runs; b < (run + 1) * bands / runs; ++b) {
            const int64_t o0 = b * band, o1 = std::min(s.oh, o0 + band);
            const int64_t r0 = first_row(o0), r1 = end_row(o1);
            int64_t kept = 0;  // rows [r0, r0 + kept) are already held
            if (held_end > r0 && held_begin <= r0) {
              kept = std::min(held_end, r1) - r0;
              for (int64_t ch = 0; ch < f.mg; ++ch) {
                float* channel = rows + ch * plane;
                std::memmove(channel, channel + (r0 - held_begin) * f.ow,
                             static_cast<size_t>(kept * f.ow) * sizeof(float));
              }
            }
            if (r0 + kept < r1) {
              Conv2d part = f;
              part.band_rows = r1 - r0 - kept;
              kernels.conv_phase_band(part, n, 0, r0 + kept, planes);
              kernels.conv_dense_band(part, b_rows, n, 0, r0 + kept, r1, rows + kept * f.ow, plane, flat, ldf, panel);
            }
            held_begin = r0, held_end = r1;
            second_band(n, o0, o1, r0, r1, rows, plane);
          }
        }
      },
      kContiguousBands);
}

bool dense_first_ok(const Conv2d& f) {
  return f.group == 1 && !f.pointwise && f.sh <= kConvPhaseMaxStride && f.sw <= kConvPhaseMaxStride && f.oh > 0;
}

Result<bool> dense_then_depthwise(const KernelArgs& dense, const KernelArgs& depthwise, PairQuery query,
                                  PairSize size) {
  EF_ASSIGN_OR_RETURN(const std::optional<Conv2dPair> convs, conv2d_pair(dense, depthwise, false));
  if (!convs) return false;
  const Conv2d& f = convs->first;
  const Conv2d& d = convs->second;
  const SecondRows s = second_rows(d, 0);
  const bool depthwise_ok = d.group == d.channels && d.group == d.out_channels && d.channels == f.out_channels &&
                            !d.channels_last && d.batch == f.batch && d.ih == f.oh && d.iw == f.ow &&
                            d.sh <= kConvPhaseMaxStride && d.sw <= kConvPhaseMaxStride && d.ow > 0 &&
                            reads_real_rows(s);
  if (!dense_first_ok(f) || !depthwise_ok || d.batch == 0) return false;
  const int64_t working_bytes =
      static_cast<int64_t>(sizeof(float)) * d.batch *
      (f.channels * f.input_plane + d.channels * d.input_plane + d.out_channels * d.output_plane);
  if (working_bytes < kConvPairMinBytes && size == PairSize::kAboveL2) return false;
  if (query != PairQuery::kRun) return query == PairQuery::kQualifies;  // never in place: the shapes differ

  const CpuKernelTable& kernels = cpu_kernel_table();
  dense_rows_in_bands(f, s, d.batch, dense,
                      [&](int64_t n, int64_t o0, int64_t o1, int64_t r0, int64_t r1, const float* rows, int64_t plane) {
                        thread_local std::vector<float> scratch_buffer;
                        const Conv2d view = depthwise_band_view(d, o0, o1, r0, r1, rows, plane);
                        kernels.conv_depthwise_band(view, 0, 0, o1 - o0,
                                                    d.y + n * d.channels * d.output_plane + o0 * d.ow, d.output_plane,
                                                    grown_to(scratch_buffer, view.depthwise_scratch_floats));
                      });
  return true;
}

// rows_view of the dense Conv `c` as one band of conv_phase_band and conv_dense_band.
Conv2d dense_band_view(const Conv2d& c, int64_t o0, int64_t o1, int64_t r0, int64_t r1, const float* rows,
                       int64_t plane) {
  Conv2d b = rows_view(c, o0, o1, r0, r1, rows, plane);
  b.band_rows = b.oh;
  b.band_plane_floats = b.phase_rows * b.phase_cols + b.phase_cols + kConvPhaseSlack;
  return b;
}

// dense -> dense (YOLOv5's and YOLOv8's stems: a 6x6 or 3x3 stride-2 Conv on the image, then a 3x3
// stride-2 Conv): the second Conv's phase planes are filled from the band of the first's rows.
Result<bool> dense_then_dense(const KernelArgs& first, const KernelArgs& second, PairQuery query, PairSize size) {
  EF_ASSIGN_OR_RETURN(const std::optional<Conv2dPair> convs, conv2d_pair(first, second, false));
  if (!convs) return false;
  const Conv2d& f = convs->first;
  const Conv2d& c = convs->second;
  const bool second_ok = dense_first_ok(c) && !c.channels_last && c.channels == f.out_channels && c.batch == f.batch &&
                         c.ih == f.oh && c.iw == f.ow && c.ow > 0;
  if (!dense_first_ok(f) || !second_ok || c.batch == 0) return false;
  // Only a strided second Conv (the stems), whose input, the first's output, is the pair's largest
  // tensor; pairs of stride-1 dense Convs are left to run one by one (not measured as pairs).
  const SecondRows s = second_rows(c, c.cg * c.sh * c.sw * c.phase_cols + c.mg * c.phase_cols);
  if (c.sh < 2 || !reads_real_rows(s)) return false;
  const int64_t working_bytes =
      static_cast<int64_t>(sizeof(float)) * c.batch *
      (f.channels * f.input_plane + c.channels * c.input_plane + c.out_channels * c.output_plane);
  if (working_bytes < kConvPairMinBytes && size == PairSize::kAboveL2) return false;
  if (query != PairQuery::kRun) return query == PairQuery::kQualifies;

  const CpuKernelTable& kernels = cpu_kernel_table();
  Conv2d packed = c;
  packed.packed_w = packed_conv_weights(c, kernels, second);
  dense_rows_in_bands(f, s, c.batch, first,
                      [&](int64_t n, int64_t o0, int64_t o1, int64_t r0, int64_t r1, const float* rows, int64_t plane) {
                        thread_local std::vector<float> planes_buffer, flat_buffer, panel_buffer;
                        thread_local std::vector<const float*> b_rows_buffer;
                        const Conv2d view = dense_band_view(packed, o0, o1, r0, r1, rows, plane);
                        float* const planes = grown_to(planes_buffer, dense_band_floats(view));
                        float* const flat = grown_to(flat_buffer, view.mg * view.band_rows * view.phase_cols);
                        float* const panel = grown_to(panel_buffer, view.kernel_columns * kGemmPanelColumns);
                        const float** const b_rows = grown_to(b_rows_buffer, view.kernel_columns);
                        dense_tap_rows(view, planes, b_rows);
                        kernels.conv_phase_band(view, 0, 0, 0, planes);
                        kernels.conv_dense_band(view, b_rows, 0, 0, 0, o1 - o0,
                                                c.y + n * c.out_channels * c.output_plane + o0 * c.ow, c.output_plane,
                                                flat, view.band_rows * view.phase_cols, panel);
                      });
  return true;
}

Result<bool> pair_kind(const KernelArgs& first, const KernelArgs& second, PairQuery query, PairSize size) {
  if (first.node.op != OpKind::kConv || second.node.op != OpKind::kConv) return false;
  // The pair kernels write NCHW outputs only.
  for (const KernelArgs* args : {&first, &second}) {
    if (args->node.attrs.get_int(kConvOutputChannelsLast, 0) != 0) return false;
  }
  if (first.inputs.empty() || first.outputs.size() != 1 || second.inputs.empty() || second.outputs.empty()) {
    return false;
  }
  // bind_conv2d reads every tensor as f32.
  for (const KernelArgs* args : {&first, &second}) {
    for (const Tensor* t : args->inputs) {
      if (t != nullptr && t->dtype() != DType::kF32) return false;
    }
    for (const Tensor* t : args->outputs) {
      if (t == nullptr || t->dtype() != DType::kF32) return false;
    }
  }
  if (first.node.attrs.get_int("group", 1) > 1) return depthwise_then_pointwise(first, second, query, size);
  if (second.node.attrs.get_int("group", 1) > 1) return dense_then_depthwise(first, second, query, size);
  return dense_then_dense(first, second, query, size);
}

}  // namespace

Result<bool> cpu_conv_pair(const KernelArgs& first, const KernelArgs& second, bool any_size) {
  return pair_kind(first, second, PairQuery::kRun, any_size ? PairSize::kAny : PairSize::kAboveL2);
}

namespace {

// pair_kind asked of the nodes with meta tensors of the values' descriptions.
bool ask_planned(const Node& first, const Node& second, std::span<const TensorDesc> descs, PairQuery query,
                 PairSize size) {
  const auto meta = [&](const std::vector<ValueId>& values, std::vector<Tensor>& tensors) {
    tensors.clear();
    tensors.reserve(values.size());
    for (ValueId v : values) {
      const TensorDesc desc = v == kNoValue ? TensorDesc{} : descs[static_cast<size_t>(v)];
      tensors.push_back(Tensor::meta(desc.dtype, desc.shape));
    }
  };
  std::vector<Tensor> tensors[4];
  meta(first.inputs, tensors[0]);
  meta(first.outputs, tensors[1]);
  meta(second.inputs, tensors[2]);
  meta(second.outputs, tensors[3]);
  std::vector<const Tensor*> first_inputs, second_inputs;
  std::vector<Tensor*> first_outputs, second_outputs;
  for (size_t i = 0; i < first.inputs.size(); ++i) {
    first_inputs.push_back(first.inputs[i] == kNoValue ? nullptr : &tensors[0][i]);
  }
  for (Tensor& t : tensors[1]) first_outputs.push_back(&t);
  for (size_t i = 0; i < second.inputs.size(); ++i) {
    second_inputs.push_back(second.inputs[i] == kNoValue ? nullptr : &tensors[2][i]);
  }
  for (Tensor& t : tensors[3]) second_outputs.push_back(&t);
  const KernelArgs first_args{first, first_inputs, first_outputs, nullptr};
  const KernelArgs second_args{second, second_inputs, second_outputs, nullptr};
  const Result<bool> applies = pair_kind(first_args, second_args, query, size);
  return applies.is_ok() && *applies;
}

}  // namespace

bool cpu_conv_pair_planned(const Node& first, const Node& second, std::span<const TensorDesc> descs) {
  return ask_planned(first, second, descs, PairQuery::kQualifies, PairSize::kAboveL2);
}

bool cpu_conv_pair_in_place(const Node& first, const Node& second, std::span<const TensorDesc> descs) {
  return ask_planned(first, second, descs, PairQuery::kInPlace, PairSize::kAboveL2);
}

bool cpu_conv_pair_in_place_any_size(const Node& first, const Node& second, std::span<const TensorDesc> descs) {
  return ask_planned(first, second, descs, PairQuery::kInPlace, PairSize::kAny);
}

bool cpu_conv_pair_over_residual_any_size(const Node& first, const Node& second, std::span<const TensorDesc> descs) {
  return ask_planned(first, second, descs, PairQuery::kOverResidual, PairSize::kAny);
}

bool cpu_conv_pair_pooling_input_any_size(const Node& first, const Node& second, std::span<const TensorDesc> descs) {
  const bool pools_input = second.inputs.size() > 3 && !first.inputs.empty() && second.inputs[3] == first.inputs[0] &&
                           second.attrs.get_int(kConvResidualMaxPool, 0) == 2;
  return pools_input && ask_planned(first, second, descs, PairQuery::kQualifies, PairSize::kAny);
}

}  // namespace edgefuse
