// Small graphs that exercise every GPU kernel step on awkward shapes (odd sizes, strides,
// dilations, asymmetric pads, groups, broadcasting, fused epilogues and residuals, aliased and
// copied Concats, every movement op through its gather map) plus one op without a GPU kernel.
// Shared by the host-emulation tests (tests/gpu) and the device tests (tests/cuda).
#pragma once

#include <cstddef>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "runtime/cuda/lowering.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace edgefuse::test {

struct GpuOpCase {
  std::string name;
  std::shared_ptr<const Graph> graph;
  std::vector<Tensor> inputs;
  bool exact = false;  // only moves elements: the outputs must equal the reference bit for bit
  int fallbacks = 0;   // CPU fallback steps the lowering must produce
};

std::vector<GpuOpCase> gpu_op_cases();

// One Conv GEMM each (1x1 and windowed, edge tiles, splits, epilogues) whose input is a Relu's
// output: in fp16 storage that input is binary16, so tensor cores may run the Conv.
std::vector<GpuOpCase> tensor_core_cases();

}  // namespace edgefuse::test

namespace edgefuse::test {

// Plans memory for `graph` at the inputs' shapes and lowers it; fails the current test on error.
gpu::LoweredPlan lower_for_inputs(const Graph& graph, const std::vector<Tensor>& inputs,
                                  const gpu::LoweringOptions& options = {});

// A lowered plan bound as the device executor binds it, here to host buffers of the same sizes
// (the inputs' own bytes for the graph inputs): for checks of bound steps without a device.
struct HostBoundPlan {
  HostBoundPlan(const gpu::LoweredPlan& lowered, const std::vector<Tensor>& inputs);
  std::vector<std::byte> arena, scratch;
  std::vector<std::vector<std::byte>> outputs;
  gpu::Bindings bindings;
};

// Checks `actual` (a GPU or emulated run) against `expected` (the CPU): equal bit for bit when
// `exact`, else relative L2 error <= `tolerance` per output.
void check_gpu_outputs(const std::vector<Tensor>& actual, const std::vector<Tensor>& expected, bool exact,
                       double tolerance);

}  // namespace edgefuse::test
