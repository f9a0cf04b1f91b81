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
constexpr int kBlock = 4 * kLanes;  // outputs per step: four independent accumulators
static_assert(kBlock <= kConvPhaseSlack, "reads and writes past a plane must stay within its slack");
constexpr int kMaxTapsPerPass = 32;

// acc[f] (+)= sum over taps of weight[t] * source[t][f] for f in [0, count), count rounded up to
// whole vectors; the last pass applies activation K before storing.
template <ConvEpilogue::Kind K>
void accumulate_taps(const float* const* sources, const float* weights, int64_t taps, float init, bool first_pass,
                     const ConvEpilogue& activation, float* acc, int64_t count) {
  simd::Vec w[kMaxTapsPerPass];
  for (int64_t t = 0; t < taps; ++t) w[t] = simd::broadcast(weights[t]);
  const simd::Vec init_vec = simd::broadcast(init);
  int64_t f = 0;
  for (; f + kBlock <= count; f += kBlock) {
    simd::Vec a0 = first_pass ? init_vec : simd::load(acc + f);
    simd::Vec a1 = first_pass ? init_vec : simd::load(acc + f + kLanes);
    simd::Vec a2 = first_pass ? init_vec : simd::load(acc + f + 2 * kLanes);
    simd::Vec a3 = first_pass ? init_vec : simd::load(acc + f + 3 * kLanes);
    for (int64_t t = 0; t < taps; ++t) {
      const float* s = sources[t] + f;
      const simd::Vec wt = w[t];
      a0 = simd::fma(wt, simd::load(s), a0);
      a1 = simd::fma(wt, simd::load(s + kLanes), a1);
      a2 = simd::fma(wt, simd::load(s + 2 * kLanes), a2);
      a3 = simd::fma(wt, simd::load(s + 3 * kLanes), a3);
    }
    simd::store(acc + f, simd::activate<K>(a0, activation));
    simd::store(acc + f + kLanes, simd::activate<K>(a1, activation));
    simd::store(acc + f + 2 * kLanes, simd::activate<K>(a2, activation));
    simd::store(acc + f + 3 * kLanes, simd::activate<K>(a3, activation));
  }
  // The rest one vector at a time: small planes (8 x 8 outputs are 80 flattened) would otherwise
  // compute up to a whole block of dropped outputs.
  for (; f < count; f += kLanes) {
    simd::Vec a = first_pass ? init_vec : simd::load(acc + f);
    for (int64_t t = 0; t < taps; ++t) a = simd::fma(w[t], simd::load(sources[t] + f), a);
    simd::store(acc + f, simd::activate<K>(a, activation));
  }
}

// Single pass straight into the output rows (out, oh rows of ow >= kLanes): row oy reads each tap
// from source[t] + oy * cols. The last vector of a row overlaps the one before it instead of
// running past the row; recomputing those outputs stores the same values. This skips the
// flattened buffer and the compaction copy of the multi-pass path.
template <ConvEpilogue::Kind K>
void accumulate_rows(const Conv2d& c, const float* const* sources, const float* weights, int64_t taps, float init,
                     float* out) {
  simd::Vec w[kMaxTapsPerPass];
  for (int64_t t = 0; t < taps; ++t) w[t] = simd::broadcast(weights[t]);
  const simd::Vec init_vec = simd::broadcast(init);
  const int64_t cols = c.phase_cols, ow = c.ow;
  for (int64_t oy = 0; oy < c.oh; ++oy) {
    float* row = out + oy * ow;
    const int64_t base = oy * cols;
    int64_t f = 0;
    for (; f + 2 * kLanes <= ow; f += 2 * kLanes) {
      simd::Vec a0 = init_vec, a1 = init_vec;
      for (int64_t t = 0; t < taps; ++t) {
        const float* s = sources[t] + base + f;
        a0 = simd::fma(w[t], simd::load(s), a0);
        a1 = simd::fma(w[t], simd::load(s + kLanes), a1);
      }
      simd::store(row + f, simd::activate<K>(a0, c.epilogue));
      simd::store(row + f + kLanes, simd::activate<K>(a1, c.epilogue));
    }
    for (; f < ow; f += kLanes) {
      const int64_t x = std::min(f, ow - kLanes);
      simd::Vec a = init_vec;
      for (int64_t t = 0; t < taps; ++t) a = simd::fma(w[t], simd::load(sources[t] + base + x), a);
      simd::store(row + x, simd::activate<K>(a, c.epilogue));
    }
  }
}

void depthwise_plane(const Conv2d& c, int64_t plane, float* scratch) {
  const int64_t channel = plane % c.channels;
  const float* in = c.x + plane * c.input_plane;
  const float* kernel = c.w + channel * c.kh * c.kw;
  const int64_t cols = c.phase_cols;
  fill_phase_planes(c, in, scratch);
  float* acc = scratch + c.sh * c.sw * c.phase_plane_floats;  // oh * cols outputs, rounded up to a vector

  std::array<const float*, kMaxTapsPerPass> sources{};
  std::array<float, kMaxTapsPerPass> weights{};
  const float init = c.bias != nullptr ? c.bias[channel] : 0.0f;
  const int64_t count = c.oh * cols;
  // The activation runs in the last pass unless a residual must be added before it.
  const bool residual_first = c.residual != nullptr && !c.epilogue.residual_after_activation;
  const ConvEpilogue::Kind fused_kind = residual_first ? ConvEpilogue::Kind::kNone : c.epilogue.kind;
  const ConvEpilogue none;
  const auto run_pass = [&](int64_t taps, bool first_pass, bool last_pass) {
    if (!last_pass) {
      accumulate_taps<ConvEpilogue::Kind::kNone>(sources.data(), weights.data(), taps, init, first_pass, none, acc,
                                                 count);
      return;
    }
    simd::dispatch_activation(fused_kind, [&](auto kind) {
      accumulate_taps<decltype(kind)::value>(sources.data(), weights.data(), taps, init, first_pass, c.epilogue, acc,
                                             count);
    });
  };
  const int64_t total_taps = c.kh * c.kw;
  float* out = c.y + plane * c.output_plane;
  const float* residual = c.residual != nullptr ? c.residual + plane * c.output_plane : nullptr;
  if (total_taps <= kMaxTapsPerPass && c.ow >= kLanes) {
    for (int64_t ky = 0; ky < c.kh; ++ky) {
      for (int64_t kx = 0; kx < c.kw; ++kx) {
        const int64_t y_offset = ky * c.dh, x_offset = kx * c.dw, t = ky * c.kw + kx;
        const float* phase = scratch + ((y_offset % c.sh) * c.sw + x_offset % c.sw) * c.phase_plane_floats;
        sources[static_cast<size_t>(t)] = phase + (y_offset / c.sh) * cols + x_offset / c.sw;
        weights[static_cast<size_t>(t)] = kernel[t];
      }
    }
    simd::dispatch_activation(fused_kind, [&](auto kind) {
      accumulate_rows<decltype(kind)::value>(c, sources.data(), weights.data(), total_taps, init, out);
    });
    for (int64_t oy = 0; oy < c.oh && residual != nullptr; ++oy) {
      if (residual_first) {
        finish_row(c.epilogue, out + oy * c.ow, residual + oy * c.ow, c.ow);
      } else {
        add_row(out + oy * c.ow, residual + oy * c.ow, c.ow);
      }
    }
    return;
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

  for (int64_t oy = 0; oy < c.oh; ++oy) {
    float* row = out + oy * c.ow;
    simd::copy(row, acc + oy * cols, c.ow);
    const float* residual_row = residual != nullptr ? residual + oy * c.ow : nullptr;
    if (residual_first) {
      finish_row(c.epilogue, row, residual_row, c.ow);
    } else if (residual_row != nullptr) {
      add_row(row, residual_row, c.ow);
    }
  }
}

}  // namespace

void conv_depthwise_planes(const Conv2d& c, int64_t begin, int64_t end, float* scratch) {
  for (int64_t plane = begin; plane < end; ++plane) depthwise_plane(c, plane, scratch);
}

}  // namespace edgefuse::EF_ISA_NAMESPACE
