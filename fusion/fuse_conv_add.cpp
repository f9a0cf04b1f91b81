// fuse_conv_add: Add(Conv(...), r) becomes one Conv that adds r as it stores its output (Conv
// input 3, the fused residual; see runtime/ops/conv_problem.h). An activation after the Add is
// fused next by fuse_conv_activation, since the Conv epilogue applies it after the residual.
//
// Legality (fusion/conv_residual.h): the Conv has no residual or activation epilogue yet; its
// output y is read by this Add only (once) and is not a graph output; r is not y; y, r and the
// Add output are f32 with the same fully static shape (no broadcasting).
#include "fusion/conv_residual.h"
#include "fusion/passes.h"

namespace edgefuse::fusion {

Status fuse_conv_add(Graph& graph, PassReport& report) {
  return fuse_adds_into_conv_residual(graph, report, ResidualPlacement::kBeforeActivation);
}

}  // namespace edgefuse::fusion
