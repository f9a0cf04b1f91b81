// The shared-memory tile kernel of depthwise Convs on the device (depthwise_conv.cu), for the
// steps depthwise_tile_fits (depthwise_conv_step.h) accepts. Other DepthwiseConvSteps run their
// work items.
#pragma once

namespace edgefuse::gpu {

struct DepthwiseConvStep;

// Enqueues a step that fits on `stream` (a cudaStream_t); returns the launch's cudaError_t as an int.
int launch_depthwise_tile(const DepthwiseConvStep& step, void* stream);

}  // namespace edgefuse::gpu
