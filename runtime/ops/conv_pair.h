// Two consecutive Convs run on the CPU as one kernel, in bands of output rows: the tensor between
// them lives only as a band buffer that stays in cache, never written out nor read back.
//   depthwise -> 1x1 (MobileNet/BlazeFace/YOLOX-style separable blocks): the depthwise rows of
//     every channel, then the 1x1 GEMM reading them; a residual that is the block's input is read
//     while its rows are still in cache. On BlazeFace's 128 x 128 x 24 blocks, whose tensors do
//     not fit in L2, that is most of their memory traffic.
//   dense -> depthwise (a stem Conv and the downsampling depthwise Conv after it, as in YOLOX):
//     the dense Conv's rows, then the depthwise rows reading them. On YOLOX-nano the stem's
//     208 x 208 x 16 output (2.8 MB) is the largest tensor of the model.
//   dense -> strided dense (YOLOv5's and YOLOv8's stem and the 3x3 stride-2 Conv after it): the
//     same, the second Conv's phase planes filled from the band of rows. At 640 the stem's
//     320 x 320 x 16 output (6.5 MB) is those models' largest tensor.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/graph.h"
#include "runtime/op_table.h"
#include "runtime/tensor.h"

namespace edgefuse {

// Worth one kernel only when the first Conv's input, the tensor between and the second's output
// together exceed this (about L2): below it they stay in cache between two kernels anyway, and
// each band's extra halo rows and setup cost more than the traffic saved (measured: BlazeFace-256's
// 128 x 128 x 24 blocks 16 % faster paired, its 64 x 64 ones and YOLOX-nano's 52 x 52 ones slower).
inline constexpr int64_t kConvPairMinBytes = int64_t{2} << 20;

// Runs `first` and then `second` (a Conv reading first's output as its input 0) as one kernel
// when the pair qualifies, and returns true; second's input 0 is then neither read nor written.
// Qualifying pairs, both 2-D f32 with kConvPairMinBytes of tensors (any size with `any_size`: a
// pair the memory plan took for the bytes it saves, cpu_conv_pair_in_place_any_size):
//   - first depthwise (group == channels == out_channels) without residual, second 1x1 (stride 1,
//     no padding, group 1);
//   - first dense (group 1, not 1x1 stride 1) and second depthwise, neither with a residual;
//   - both dense, the second of stride 2 or more (the stems: its input is the pair's largest
//     tensor), neither with a residual.
// Returns false, having run nothing, otherwise: the caller runs the two nodes one by one (the
// executor asks cpu_conv_pair_planned while planning instead, and stores no tensor between the
// pairs it finds, so false there is an error). The caller guarantees that nothing else reads
// first's output and that second's output either does not share bytes with first's input or
// starts at its first byte (cpu_conv_pair_in_place); it may also start at second's residual
// (cpu_conv_pair_over_residual_any_size).
Result<bool> cpu_conv_pair(const KernelArgs& first, const KernelArgs& second, bool any_size = false);

// Whether cpu_conv_pair would run the pair, from the graph's nodes and every value's description
// (MemoryPlan::descs) alone: the CPU executor's PlanOptions::kernel_pair, so that the memory plan
// never stores the tensor between a pair's Convs and counts neither its write nor its read.
bool cpu_conv_pair_planned(const Node& first, const Node& second, std::span<const TensorDesc> descs);

// Whether cpu_conv_pair would run the pair and could run it with second's output in the bytes of
// first's input (PlanOptions::kernel_pair_in_place): a depthwise -> 1x1 pair whose output has the
// input's planes, its depthwise Conv of stride 1 without dilation, and as many channels as the
// input or (one image) more. It then computes every band's depthwise rows that read a neighbour
// band's input rows first, so that each band can overwrite its own input rows; cpu_conv_pair runs
// that way when second's output starts at first's input.
bool cpu_conv_pair_in_place(const Node& first, const Node& second, std::span<const TensorDesc> descs);

// The same, at any size: PlanOptions::memory_pair with MemoryPairTarget::kInput, for the pairs
// below kConvPairMinBytes that the memory plan runs as one kernel in place where the largest
// tensors live (BlazeFace-128's 64 x 64 blocks: three tensors of a block become one buffer).
bool cpu_conv_pair_in_place_any_size(const Node& first, const Node& second, std::span<const TensorDesc> descs);

// Whether cpu_conv_pair runs the pair at any size with second's output in the bytes of second's
// residual (PlanOptions::memory_pair with MemoryPairTarget::kResidual): a depthwise -> 1x1 pair
// whose 1x1 adds a residual (its planes the output's first ones), which each output element's
// task reads just before it writes that element. BlazeFace's downsampling blocks add their
// max-pooled input so: the pair's output then takes the pooled tensor's bytes.
bool cpu_conv_pair_over_residual_any_size(const Node& first, const Node& second, std::span<const TensorDesc> descs);

// Whether cpu_conv_pair runs the pair at any size with second's output in bytes of its own
// (PlanOptions::memory_pair with MemoryPairTarget::kOwnBytes): a depthwise -> 1x1 pair whose 1x1
// reads first's input again as its pooled residual (kConvResidualMaxPool; BlazeFace's
// downsampling blocks). The input stays alive through the pair anyway, so one kernel saves the
// value between at no cost in liveness.
bool cpu_conv_pair_pooling_input_any_size(const Node& first, const Node& second, std::span<const TensorDesc> descs);

}  // namespace edgefuse
