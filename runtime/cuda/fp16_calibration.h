// Mixed precision for fp16 storage: which values to keep in f32 so that a model's outputs stay
// close to f32.
//
// Rounding every activation to binary16 perturbs each by up to 2^-11 relative; most layers pass
// that on unchanged, but a layer whose output is a small difference of large products amplifies
// it many times, and everything after it inherits the error. On YOLOX-nano that is the 1x1 conv
// right after the first stride-2 depthwise one: with every activation in fp16 the raw outputs are
// 0.2-1.4 % (relative L2) from f32 on the shared photos, and with that layer's input kept in f32,
// 0.16-0.33 %. Which layers matter depends on the weights and on the data, and a local measure (a
// layer's own cancellation, sum |w x| / |sum w x|) does not single them out, so the choice is made
// end to end on a calibration input: errors from independent roundings add about in squares, so
// the layer that dominates is found by bisection over the candidates (keep the inputs of half of
// them in f32, go on with the half whose error is lower), and layers are added until the error is
// within target. The evaluator runs the real plan (the GPU, or its host emulation in tests), so the
// choice is made for exactly the arithmetic that will run.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "runtime/graph.h"
#include "runtime/status.h"
#include "runtime/tensor.h"

namespace edgefuse::gpu {

struct Fp16CalibrationOptions {
  // Largest relative L2 (of each output, vs f32) accepted on the calibration input: half the
  // 1e-2 that fp16 storage is held to, leaving a margin for other inputs.
  double target = 5e-3;
  int max_kept_nodes = 8;  // stop after this many layers even above target
};

struct Fp16Calibration {
  std::vector<uint8_t> f32_values;  // for LoweringOptions::f32_values (by ValueId, 1: kept)
  std::vector<NodeId> kept_nodes;   // layers whose activation inputs stay f32, in the order chosen
  double all_half_error = 0;        // every value in fp16 (largest relative L2 over the outputs)
  double error = 0;                 // with f32_values kept
  std::vector<double> errors;       // after each kept node, in order
  int evaluations = 0;              // runs of the evaluator
};

// Runs the plan in fp16 storage with `f32_values` kept in f32 on the calibration input and returns
// its outputs.
using Fp16Evaluator = std::function<Result<std::vector<Tensor>>(const std::vector<uint8_t>& f32_values)>;

// Picks the activations to keep (the inputs of whole layers) for `reference_outputs`, the f32
// outputs on the same input.
Result<Fp16Calibration> calibrate_fp16(const Graph& graph, std::span<const Tensor> reference_outputs,
                                       const Fp16Evaluator& evaluate, const Fp16CalibrationOptions& options = {});

// The largest relative L2 distance, over the f32 outputs, of `actual` from `expected`
// (sqrt(sum (a - e)^2 / sum e^2); the absolute distance where `expected` is all zeros); infinity
// where one is not finite (a NaN or infinite output).
double largest_relative_l2(std::span<const Tensor> actual, std::span<const Tensor> expected);

}  // namespace edgefuse::gpu
