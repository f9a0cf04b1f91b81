// The shared-memory tile kernel of depthwise Convs on the device (depthwise_conv.cu): square 3x3
// and 5x5 windows with equal strides of 1 or 2. Other DepthwiseConvSteps run their work items.
#pragma once

namespace edgefuse::gpu {

struct DepthwiseConvStep;

// Whether the tile kernel takes `step`.
bool depthwise_tile_fits(const DepthwiseConvStep& step);

// Enqueues a step that fits on `stream` (a cudaStream_t); returns the launch's cudaError_t as an int.
int launch_depthwise_tile(const DepthwiseConvStep& step, void* stream);

}  // namespace edgefuse::gpu
