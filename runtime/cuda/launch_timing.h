// How long a library's launch takes on the device, for the first frame's choice between a library
// (cuBLAS, cuDNN) and our own kernels: `launch` (which enqueues its work on `stream`, a
// cudaStream_t) once to warm up, then `launches` times back to back, queued behind a spin kernel
// so that CUDA events time the device's work rather than the host's enqueueing (a spin that ended
// before the last launch was enqueued is lengthened and the launches timed again).
#pragma once

#include <functional>

#include "runtime/status.h"

namespace edgefuse::gpu {

// Mean milliseconds per launch.
Result<float> time_launches(void* stream, int launches, const std::function<Status()>& launch);

}  // namespace edgefuse::gpu
