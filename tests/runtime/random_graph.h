// Random small graphs in the IR for property tests of the planner and executor: pointwise unary
// and binary ops, Concat, Transpose, Slices and Splits of channels, and Shape -> Reshape chains
// (which the planner folds), over
// one f32 input [batch, 4, 4, 8], with a few intermediates also listed as graph outputs.
#pragma once

#include <memory>
#include <random>

#include "runtime/graph.h"

namespace edgefuse::test {

// `node_count` ops (Shape -> Reshape counts as one). With `dynamic_batch` the input's declared
// batch dim (and every value's) is -1, so the graph runs at any batch size.
std::shared_ptr<Graph> make_random_graph(std::mt19937& rng, int node_count, bool dynamic_batch);

}  // namespace edgefuse::test
