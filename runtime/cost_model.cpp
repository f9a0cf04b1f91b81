#include "runtime/cost_model.h"

#include <algorithm>

#include "runtime/ops/pointwise_chain.h"

namespace edgefuse {

namespace {

int64_t numel_of(const MemoryPlan& plan, ValueId v) {
  return v == kNoValue ? 0 : plan.descs[static_cast<size_t>(v)].numel();
}

const Shape& shape_of(const MemoryPlan& plan, ValueId v) {
  return plan.descs[static_cast<size_t>(v)].shape;
}

int64_t product_from(const Shape& shape, size_t first) {
  int64_t product = 1;
  for (size_t d = first; d < shape.size(); ++d) product *= shape[d];
  return product;
}

}  // namespace

int64_t node_flops(const Graph& graph, const MemoryPlan& plan, NodeId id) {
  const Node& node = graph.node(id);
  const int64_t out = node.outputs.empty() ? 0 : numel_of(plan, node.outputs[0]);
  switch (node.op) {
    case OpKind::kConv: {
      // Y [N, M, out...], W [M, C / group, kernel...]: each output sums C / group x kernel taps.
      const int64_t epilogue = (node.attrs.has("fused_activation") ? out : 0) + (node.has_input(3) ? out : 0);
      return 2 * out * product_from(shape_of(plan, node.inputs[1]), 1) + epilogue;
    }
    case OpKind::kConvTranspose:  // every input element scatters into (M / group) x kernel outputs
      return 2 * numel_of(plan, node.inputs[0]) * product_from(shape_of(plan, node.inputs[1]), 1);
    case OpKind::kMatMul: {
      const Shape& a = shape_of(plan, node.inputs[0]);
      return 2 * out * (a.empty() ? 1 : a.back());
    }
    case OpKind::kGemm: {
      const Shape& a = shape_of(plan, node.inputs[0]);
      const int64_t k = a.size() < 2 ? 1 : (node.attrs.get_int("transA", 0) != 0 ? a[0] : a[1]);
      return 2 * out * k + (node.has_input(2) ? out : 0);
    }
    case OpKind::kMaxPool:
    case OpKind::kAveragePool: {
      const std::vector<int64_t> kernel = node.attrs.get_ints("kernel_shape");
      int64_t taps = 1;
      for (int64_t k : kernel) taps *= k;
      return out * taps;
    }
    case OpKind::kGlobalAveragePool:
    case OpKind::kReduceMean:
      return numel_of(plan, node.inputs[0]);
    case OpKind::kBatchNormalization:
      return 2 * out;
    case OpKind::kSoftmax:
      return 4 * out;  // max, exp, sum, divide
    case OpKind::kSoftmaxExpectation:
      return 4 * numel_of(plan, node.inputs[0]);  // max, exp, sum, weighted sum
    case OpKind::kResize:
      return out;
    case OpKind::kPointwiseChain: {
      const Result<PointwiseChain> chain = pointwise_chain(node);
      if (!chain.is_ok()) return 0;
      const int64_t computed =
          chain->window ? shape_numel(chain_window_shape(shape_of(plan, node.outputs[0]), *chain->window)) : out;
      return computed * static_cast<int64_t>(chain->steps.size());
    }
    default:
      return is_elementwise(node.op) ? out : 0;  // else data movement, shapes and constants
  }
}

int64_t graph_flops(const Graph& graph, const MemoryPlan& plan) {
  int64_t flops = 0;
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    if (!plan.node_skipped[n]) flops += node_flops(graph, plan, static_cast<NodeId>(n));
  }
  return flops;
}

std::span<const BoardSpec> board_specs() {
  // Published figures: NVIDIA's module data sheets (CUDA cores, maximum GPU clock, memory bus).
  static constexpr BoardSpec kBoards[] = {
      {"jetson-nano", "Jetson Nano 4GB (128 Maxwell CUDA cores @ 921.6 MHz, LPDDR4 64-bit 25.6 GB/s)", 25.6, 235.9},
      {"xavier-nx", "Jetson Xavier NX (384 Volta CUDA cores @ 1100 MHz, LPDDR4x 128-bit 59.7 GB/s)", 59.7, 844.8},
      {"orin-nano", "Jetson Orin Nano 8GB (1024 Ampere CUDA cores @ 625 MHz, LPDDR5 128-bit 68 GB/s)", 68.0, 1280.0},
      {"orin-nx", "Jetson Orin NX 16GB (1024 Ampere CUDA cores @ 918 MHz, LPDDR5 128-bit 102.4 GB/s)", 102.4, 1880.1},
      {"agx-orin", "Jetson AGX Orin 64GB (2048 Ampere CUDA cores @ 1300 MHz, LPDDR5 256-bit 204.8 GB/s)", 204.8,
       5324.8},
  };
  return kBoards;
}

const BoardSpec* find_board(std::string_view name) {
  for (const BoardSpec& board : board_specs()) {
    if (board.name == name) return &board;
  }
  return nullptr;
}

RooflineEstimate roofline(const BoardSpec& board, double bytes, double flops) {
  RooflineEstimate e;
  e.memory_ms = bytes / (board.bandwidth_gb_s * 1e9) * 1e3;
  e.compute_ms = flops / (board.fp32_gflops * 1e9) * 1e3;
  e.estimate_ms = std::max(e.memory_ms, e.compute_ms);
  e.intensity = bytes > 0 ? flops / bytes : 0;
  e.ridge_intensity = board.fp32_gflops / board.bandwidth_gb_s;
  e.memory_bound = e.memory_ms >= e.compute_ms;
  return e;
}

}  // namespace edgefuse
