// fuse_conv_activation_add (run after fuse_conv_activation): Add(Conv with an activation
// epilogue, r), e.g. YOLOX's bottleneck shortcut Add(SiLU(Conv(x)), skip), becomes one Conv with
// r as input 3 and fused_residual_after_activation = 1: Y = act(conv(X, W) + B) + r.
//
// Legality (fusion/conv_residual.h): the Conv has an activation epilogue and no residual yet; its
// output y is read by this Add only (once) and is not a graph output; r is not y; y, r and the
// Add output are f32 with the same fully static shape (no broadcasting).
#include "fusion/conv_residual.h"
#include "fusion/passes.h"

namespace edgefuse::fusion {

Status fuse_conv_activation_add(Graph& graph, PassReport& report) {
  return fuse_adds_into_conv_residual(graph, report, ResidualPlacement::kAfterActivation);
}

}  // namespace edgefuse::fusion
