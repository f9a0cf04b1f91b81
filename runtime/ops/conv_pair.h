// A depthwise Conv and the 1x1 Conv that alone reads its output (MobileNet/BlazeFace/YOLOX-style
// separable blocks), run on the CPU as one kernel: in bands of output rows, the depthwise rows of
// every channel go into a buffer that stays in cache and the 1x1 GEMM reads them from there. The
// depthwise output is never written out nor read back, and a residual that is the block's input is
// read while its rows are still in cache: on BlazeFace's 128 x 128 x 24 blocks, whose tensors do
// not fit in L2, that is most of their memory traffic.
#pragma once

#include <cstdint>

#include "runtime/op_table.h"

namespace edgefuse {

// Worth one kernel only when the depthwise input, its output and the 1x1's output together exceed
// this (about L2): below it they stay in cache between two kernels anyway, and each band's extra
// halo rows and setup cost more than the traffic saved (measured: BlazeFace-256's 128 x 128 x 24
// blocks 16 % faster paired, its 64 x 64 ones and YOLOX-nano's 52 x 52 ones slower).
inline constexpr int64_t kConvPairMinBytes = int64_t{2} << 20;

// Runs `depthwise` (group == channels == out_channels, no residual) and then `pointwise` (1x1,
// stride 1, no padding, group 1, f32, reading depthwise's output as its input 0) when the pair
// qualifies (kConvPairMinBytes included), and returns true;
// `pointwise`'s input 0 is then neither read nor written. Returns false, having run nothing, when
// it does not qualify: the caller runs the two nodes one by one. The caller guarantees that
// nothing else reads depthwise's output and that pointwise's output does not share bytes with
// depthwise's input.
Result<bool> cpu_conv_depthwise_pointwise(const KernelArgs& depthwise, const KernelArgs& pointwise);

}  // namespace edgefuse
