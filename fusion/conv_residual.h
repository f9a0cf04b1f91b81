// The shared rewrite of fuse_conv_add and fuse_conv_activation_add: Add(y, r), with y a Conv's
// output, becomes that Conv with r as its fused residual (Conv input 3; runtime/ops/conv_problem.h),
// added before or after the Conv's activation epilogue (runtime/ops/conv_epilogue.h).
//
// Legality (both placements): the Conv has no residual yet; kBeforeActivation needs a Conv with no
// activation epilogue, kAfterActivation one with an epilogue (the Add follows the activation);
// y is read by this Add only (once) and is not a graph output; r is not y; y, r and the Add output
// are f32 with the same fully static shape (no broadcasting). The fused Conv takes the Add's place
// in the node order, where r and all of the Conv's inputs are already computed, and writes the
// Add's output value. A Conv is not a pointwise op, so the memory planner never lets its output
// share r's buffer (the kernels read r while they write the output).
#pragma once

#include "fusion/pass_manager.h"
#include "runtime/graph.h"

namespace edgefuse::fusion {

enum class ResidualPlacement { kBeforeActivation, kAfterActivation };

Status fuse_adds_into_conv_residual(Graph& graph, PassReport& report, ResidualPlacement placement);

}  // namespace edgefuse::fusion
