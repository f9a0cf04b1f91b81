// How the device computes 1x1 Convs (PointwiseConvStep) and other group-1 Convs (ConvGemmStep): a
// block-tiled GEMM Y = W X per image, X being the input (1x1) or its windows gathered as they are
// staged (implicit GEMM), through shared memory (conv_gemm.cu). A block of kGemmThreads threads
// owns a tile of `rows` output channels by `columns` positions and splits the input channels among
// `k_splits` groups of threads; each group accumulates the whole tile over its share of the
// channels, and the groups' partial tiles are summed in shared memory before the epilogue.
// Splitting the channels is what gives the deep layers of a detector at batch 1 (13x13 positions,
// 256 channels: a dozen tiles) enough blocks to fill the device; the shallow ones (208x208
// positions, 32 channels) have tiles to spare and split little or not at all.
//
// In fp16 storage a step whose input is binary16 may also run on tensor cores (tilings with
// tensor_cores set): each warp multiplies 16 x 16 x 16 half blocks with f32 accumulation
// (nvcuda::wmma, sm_70 and later). Its input is already binary16, so products are exact; its f32
// weights are split into a binary16 high part and the binary16 rounding of the rest times 2^11
// (a normal binary16 whatever the weight's magnitude), two products per block into two
// accumulators, so they keep about 22 bits: the sums are the f32 tilings' up to order and a
// relative 2^-22 of each weight, not fp16 arithmetic's 2^-11.
//
// The choice is plain host arithmetic, so it is tested without a GPU.
#pragma once

#include <cstdint>

namespace edgefuse::gpu {

struct PointwiseConvStep;
struct ConvGemmStep;

inline constexpr int kGemmThreads = 256;
inline constexpr int kGemmThreadRows = 4;  // each thread's accumulators: 4 x 4
inline constexpr int kGemmThreadColumns = 4;

struct GemmTiling {
  int rows = 64;
  int columns = 64;
  int k_splits = 1;
  int stage_channels = 8;     // input channels each group stages per step (a multiple of 8; of 16 on tensor cores)
  bool tensor_cores = false;  // warps of wmma blocks (16 x 32 outputs per warp) instead of 4x4 per thread
};

// The tensor-core tilings' warp tile: two 16 x 16 accumulator blocks side by side.
inline constexpr int kTensorCoreWarpRows = 16;
inline constexpr int kTensorCoreWarpColumns = 32;
// Padding of each staged row, in halves: rows 16 bytes apart in the banks, and every wmma
// pointer stays 32-byte aligned.
inline constexpr int kTensorCoreRowPadding = 8;

// Shared memory a tensor-core tiling's block uses: two buffers per group of W's high and low
// parts [rows][stage] and X [stage][columns] in halves, or (after the last stage) each group's
// f32 partial tile for the epilogue, whichever is more. Static shared memory stops at 48 KiB.
inline constexpr int tensor_core_shared_bytes(const GemmTiling& t) {
  const int weights = t.rows * (t.stage_channels + kTensorCoreRowPadding);
  const int inputs = t.stage_channels * (t.columns + kTensorCoreRowPadding);
  const int staging = 2 * t.k_splits * (2 * weights + inputs) * 2;
  const int partials = t.k_splits * t.rows * t.columns * 4;
  return staging > partials ? staging : partials;
}

// The tilings conv_gemm.cu instantiates: rows x columns / 16 threads per group times k_splits
// groups is kGemmThreads in each. Those staging 16 or 32 channels at a time have more
// multiply-adds per stage to hide the next stage's loads behind, at the price of registers and
// of padding when the channels are few; only timing (CudaExecutorOptions::tune_gemm) picks them.
// The tensor-core tilings follow: the same shapes and splits, 8 warps per block.
inline constexpr GemmTiling kGemmTilings[] = {
    {64, 64, 1, 8},        {32, 64, 2, 8},        {32, 32, 4, 8},        {16, 64, 4, 8},        {16, 32, 8, 8},
    {64, 64, 1, 32},       {32, 64, 2, 16},       {32, 32, 4, 16},       {64, 64, 1, 32, true}, {32, 64, 2, 32, true},
    {32, 32, 4, 16, true}, {16, 64, 4, 16, true}, {16, 32, 8, 16, true},
};
inline constexpr int kGemmTilingCount = static_cast<int>(sizeof(kGemmTilings) / sizeof(kGemmTilings[0]));

// Where `t` is in kGemmTilings, or -1.
inline int gemm_tiling_index(const GemmTiling& t) {
  for (int i = 0; i < kGemmTilingCount; ++i) {
    const GemmTiling& k = kGemmTilings[i];
    if (k.rows == t.rows && k.columns == t.columns && k.k_splits == t.k_splits &&
        k.stage_channels == t.stage_channels && k.tensor_cores == t.tensor_cores) {
      return i;
    }
  }
  return -1;
}

// Whether a step may run in tiling `t`: tensor-core tilings only where the lowering allowed them
// (PointwiseConvStep::tensor_cores).
inline bool gemm_tiling_allowed(const GemmTiling& t, bool tensor_cores) {
  return tensor_cores || !t.tensor_cores;
}

// The tiling with the least estimated time for an [M x K] by [K x P] product per image on
// `multiprocessors` multiprocessors, among those allowed: waves of blocks (4 resident per
// multiprocessor) times the work of each block's stages, plus one 8-channel f32 stage's worth for
// summing split partial tiles. On tensor cores a channel's multiply-adds are a few instructions
// per warp instead of 16 per thread, so a channel there counts a quarter of an f32 one. Ties go
// to the earlier (less split, f32) tiling.
inline GemmTiling choose_gemm_tiling(int64_t batch, int64_t out_channels, int64_t in_channels, int64_t positions,
                                     int multiprocessors, bool tensor_cores = false) {
  constexpr int64_t kResidentBlocks = 4;
  constexpr int64_t kF32StageCost = 4;  // per 8 channels staged
  const int64_t slots = (multiprocessors > 0 ? multiprocessors : 1) * kResidentBlocks;
  GemmTiling best = kGemmTilings[0];
  int64_t best_cost = -1;
  for (const GemmTiling& t : kGemmTilings) {
    if (!gemm_tiling_allowed(t, tensor_cores)) continue;
    const int64_t blocks = batch * ((out_channels + t.rows - 1) / t.rows) * ((positions + t.columns - 1) / t.columns);
    const int64_t waves = (blocks + slots - 1) / slots;
    const int64_t per_stage = static_cast<int64_t>(t.k_splits) * t.stage_channels;
    const int64_t stage_cost = t.stage_channels * kF32StageCost / 8 / (t.tensor_cores ? 4 : 1);
    const int64_t block_cost =
        (in_channels + per_stage - 1) / per_stage * stage_cost + (t.k_splits > 1 ? kF32StageCost : 0);
    const int64_t cost = waves * block_cost;
    if (best_cost < 0 || cost < best_cost) {
      best = t;
      best_cost = cost;
    }
  }
  return best;
}

// Enqueue `step` on `stream` (a cudaStream_t) with the tiling chosen for the current device and
// return the launch's cudaError_t as an int. Defined in conv_gemm.cu.
// The step's gemm_tiling when set and allowed, else choose_gemm_tiling's.
int launch_conv_gemm(const PointwiseConvStep& step, void* stream);
int launch_conv_gemm(const ConvGemmStep& step, void* stream);

// Times `step` (bound to device memory) in each of kGemmTilings on `stream`: one warm-up launch,
// then `launches` back to back between two events, queued behind a short spin so that they run
// back to back; ms[i] gets the mean milliseconds per launch of tiling i, or infinity for a tiling
// the step may not run in. Not while `stream` is being captured. Returns the first cudaError_t as an int. The
// step's output (and, in place, its residual) is overwritten.
int time_gemm_tilings(const PointwiseConvStep& step, void* stream, int launches, float (&ms)[kGemmTilingCount]);
int time_gemm_tilings(const ConvGemmStep& step, void* stream, int launches, float (&ms)[kGemmTilingCount]);

// Keeps `stream` busy for about `cycles` clock cycles of one multiprocessor (200000: ~100 us), so
// that short kernels the host queues meanwhile then run back to back and are timed rather than
// their launches. Returns the launch's cudaError_t as an int.
int spin_stream(void* stream, long long cycles);

}  // namespace edgefuse::gpu
