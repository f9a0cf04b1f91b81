#include "runtime/cuda/fp16_calibration.h"

#include <cmath>
#include <limits>

namespace edgefuse::gpu {

namespace {

// A candidate: one layer's activation inputs. Layers are the nodes with constant f32 operands
// (weights: Conv, Gemm, MatMul, scaling by constants), where errors get amplified; the others
// (Concat, pooling, resizing, activations) pass them on.
struct Candidate {
  NodeId node = -1;
  std::vector<ValueId> values;
};

std::vector<Candidate> candidates_of(const Graph& graph) {
  std::vector<Candidate> candidates;
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    Candidate candidate{static_cast<NodeId>(n), {}};
    bool has_constant = false;
    for (ValueId v : graph.nodes()[n].inputs) {
      if (v == kNoValue || graph.value(v).desc.dtype != DType::kF32) continue;
      if (graph.value(v).initializer.has_value()) {
        has_constant = true;
      } else {
        candidate.values.push_back(v);
      }
    }
    if (has_constant && !candidate.values.empty()) candidates.push_back(std::move(candidate));
  }
  return candidates;
}

}  // namespace

double largest_relative_l2(std::span<const Tensor> actual, std::span<const Tensor> expected) {
  double largest = 0;
  for (size_t i = 0; i < actual.size() && i < expected.size(); ++i) {
    const Tensor& a = actual[i];
    const Tensor& e = expected[i];
    if (a.dtype() != DType::kF32 || e.dtype() != DType::kF32 || a.numel() != e.numel()) continue;
    double difference = 0, norm = 0;
    for (int64_t k = 0; k < e.numel(); ++k) {
      const double d = static_cast<double>(a.data<float>()[k]) - e.data<float>()[k];
      difference += d * d;
      norm += static_cast<double>(e.data<float>()[k]) * e.data<float>()[k];
    }
    const double error = norm > 0 ? std::sqrt(difference / norm) : std::sqrt(difference);
    // A NaN or infinite output (an fp16 overflow, then inf - inf) is the worst error, not one that
    // std::max and the comparisons below would pass over.
    if (!std::isfinite(error)) return std::numeric_limits<double>::infinity();
    largest = std::max(largest, error);
  }
  return largest;
}

Result<Fp16Calibration> calibrate_fp16(const Graph& graph, std::span<const Tensor> reference_outputs,
                                       const Fp16Evaluator& evaluate, const Fp16CalibrationOptions& options) {
  Fp16Calibration result;
  result.f32_values.assign(graph.values().size(), 0);
  const std::vector<Candidate> candidates = candidates_of(graph);

  // The error with the kept values plus the candidates listed in `extra`.
  const auto error_with = [&](std::span<const size_t> extra) -> Result<double> {
    std::vector<uint8_t> keep = result.f32_values;
    for (size_t c : extra) {
      for (ValueId v : candidates[c].values) keep[static_cast<size_t>(v)] = 1;
    }
    EF_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, evaluate(keep));
    ++result.evaluations;
    return largest_relative_l2(outputs, reference_outputs);
  };

  EF_ASSIGN_OR_RETURN(result.all_half_error, error_with({}));
  result.error = result.all_half_error;
  std::vector<size_t> remaining(candidates.size());
  for (size_t c = 0; c < candidates.size(); ++c) remaining[c] = c;
  while (result.error > options.target && !remaining.empty() &&
         static_cast<int>(result.kept_nodes.size()) < options.max_kept_nodes) {
    // Bisection for the candidate whose f32 storage lowers the error most.
    std::vector<size_t> pool = remaining;
    double pool_error = -1;  // the error with `pool` kept, once measured
    while (pool.size() > 1) {
      const std::span<const size_t> all(pool);
      const std::span<const size_t> first = all.first(pool.size() / 2), second = all.subspan(pool.size() / 2);
      EF_ASSIGN_OR_RETURN(const double first_error, error_with(first));
      EF_ASSIGN_OR_RETURN(const double second_error, error_with(second));
      const bool take_first = first_error <= second_error;
      pool_error = take_first ? first_error : second_error;
      pool = take_first ? std::vector<size_t>(first.begin(), first.end())
                        : std::vector<size_t>(second.begin(), second.end());
    }
    if (pool_error < 0) {
      EF_ASSIGN_OR_RETURN(pool_error, error_with(pool));
    }
    const Candidate& chosen = candidates[pool.front()];
    for (ValueId v : chosen.values) result.f32_values[static_cast<size_t>(v)] = 1;
    result.kept_nodes.push_back(chosen.node);
    result.error = pool_error;
    result.errors.push_back(pool_error);
    std::erase(remaining, pool.front());
  }
  return result;
}

}  // namespace edgefuse::gpu
