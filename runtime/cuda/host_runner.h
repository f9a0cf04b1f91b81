// Runs a lowered GPU plan on the host: every kernel step's work items through the same bodies
// the device runs (step_kernels.h), fallback steps through their CPU kernels. It is the GPU
// backend's emulation: tests compare it with the CPU executor on machines without a GPU, so
// lowering, operand placement and kernel arithmetic are checked everywhere, and a device run
// only adds the launches (cuda_executor.h).
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "runtime/cuda/lowering.h"
#include "runtime/graph.h"
#include "runtime/status.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"

namespace edgefuse::gpu {

// One tensor per graph input (the shapes `lowered` was planned for); returns the graph outputs.
// Work items of a step are spread over `pool` when given.
Result<std::vector<Tensor>> run_lowered_on_host(const Graph& graph, const LoweredPlan& lowered,
                                                std::span<const Tensor> inputs, ThreadPool* pool = nullptr);

// Runs fallback step `step` with the node's CPU kernel. `read(v, tensor)` fills a host tensor of
// value v's description (called for every input that is not a known constant); `write(v, tensor)`
// stores each output. Shared by the host emulation and the device executor.
Status run_cpu_fallback(const Graph& graph, const LoweredPlan& lowered, const LoweredStep& step,
                        const std::function<Status(ValueId, Tensor&)>& read,
                        const std::function<Status(ValueId, const Tensor&)>& write);

}  // namespace edgefuse::gpu
