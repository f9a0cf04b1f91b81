// How much arithmetic a planned graph does, and a roofline estimate of its time on a board from
// that board's published memory bandwidth and fp32 peak: an estimate for sizing hardware, never a
// measurement (bench/ measures).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "runtime/graph.h"
#include "runtime/memory_plan.h"

namespace edgefuse {

// Floating-point operations of one node at the plan's shapes, a multiply-add counting 2:
// Conv/ConvTranspose/MatMul/Gemm by their multiply-adds (plus one per output for a fused
// epilogue), pools by window taps, pointwise ops one per output element, data movement 0.
int64_t node_flops(const Graph& graph, const MemoryPlan& plan, NodeId node);
// Sum over the nodes the plan runs (skipped nodes, folded or aliased, cost nothing).
int64_t graph_flops(const Graph& graph, const MemoryPlan& plan);

struct BoardSpec {
  std::string_view name;         // --device value: "orin-nano"
  std::string_view description;  // "Jetson Orin Nano 8GB (1024 CUDA cores @ 625 MHz, LPDDR5 128-bit)"
  double bandwidth_gb_s;         // published DRAM bandwidth, GB/s
  double fp32_gflops;            // CUDA cores x 2 x GPU clock: the peak our f32-math kernels can reach
};

std::span<const BoardSpec> board_specs();
const BoardSpec* find_board(std::string_view name);  // nullptr when unknown

struct RooflineEstimate {
  double memory_ms = 0;        // bytes / bandwidth
  double compute_ms = 0;       // flops / peak
  double estimate_ms = 0;      // the larger: time if perfectly overlapped at the roof
  double intensity = 0;        // flops per byte of this workload
  double ridge_intensity = 0;  // flops per byte where the board turns compute bound
  bool memory_bound = false;
};

RooflineEstimate roofline(const BoardSpec& board, double bytes, double flops);

}  // namespace edgefuse
