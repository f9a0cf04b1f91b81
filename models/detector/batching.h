// Batch size for detectors exported with a fixed batch of one. Detection graphs keep the batch
// as the first dimension of every activation, so the batch can be freed by making the input's
// first dimension dynamic and turning the literal batch (1) that Reshape shape constants carry
// into 0 ("copy the input's first dimension"). That reasoning holds for the families edgefuse
// knows but is not proved for an arbitrary graph, so check_batch_equivalence runs the result on
// a batch of distinct inputs and compares it with one-by-one runs before anyone relies on it.
#pragma once

#include <memory>

#include "runtime/executor.h"
#include "runtime/graph.h"

namespace edgefuse {

// A copy of `graph` whose first input dimension and batch-leading Reshape shapes are dynamic.
// Errors when the graph has several inputs or an input whose first dimension is not 1.
Result<std::shared_ptr<Graph>> make_batch_dynamic(const Graph& graph);

// Runs `batched` on `batch` random inputs and `original` on each of them alone; every output
// element of the batch must match its lone run within relative L2 `tolerance`.
Status check_batch_equivalence(const std::shared_ptr<const Graph>& original,
                               const std::shared_ptr<const Graph>& batched, int batch, const ExecutorOptions& options,
                               double tolerance = 1e-5);

}  // namespace edgefuse
