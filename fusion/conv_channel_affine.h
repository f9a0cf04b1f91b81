// A per-output-channel scale and shift after a Conv, folded into its weights and bias: what
// fold_batchnorm_into_conv and fold_scale_shift_into_conv share.
//   y[m] = scale[m] * conv(x)[m] + shift[m]  ->  W'[m, ...] = W[m, ...] * scale[m], B'[m] = B[m] * scale[m] + shift[m]
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runtime/graph.h"

namespace edgefuse::fusion {

// One entry per output channel of the Conv.
struct ChannelAffine {
  std::vector<double> scale, shift;
};

// The Conv writing `value`, when it may take a channel affine: a live Conv (not flagged in `dead`)
// with a constant f32 weight of rank >= 3 and a constant f32 bias of one value per output channel
// or none, and no residual, activation or channels-last output yet, whose output `value` has one
// reader (the caller's node) and is not a graph output. Else nullopt.
std::optional<NodeId> affine_foldable_conv(const Graph& graph, const std::vector<std::vector<NodeId>>& consumers,
                                           ValueId value, const std::vector<bool>& dead);

// The weight of such a Conv ([output channels, ...]).
const Tensor& conv_weight(const Graph& graph, NodeId conv);

// Makes `conv` compute `affine` of its result and write `output` (the value of the node folded in)
// instead of its own output: W' and B' in float64, as new initializers named from the old ones and
// `suffix` (the originals may be shared). Returns false, leaving the graph as it was, when a folded
// value would not be finite.
bool fold_channel_affine_into_conv(Graph& graph, NodeId conv, const ChannelAffine& affine, ValueId output,
                                   const std::string& suffix);

}  // namespace edgefuse::fusion
