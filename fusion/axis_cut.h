// Pieces of a tensor cut along one axis: the outputs of a Slice that cuts one axis alone with step
// 1 and constant bounds, or of a Split. The passes that look through such cuts (windowed chains,
// slices moved into a Concat's inputs) read them here, in the source's coordinates.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/graph.h"

namespace edgefuse::fusion {

// One output of the cut: [start, end) of the source on the cut's axis.
struct AxisPiece {
  ValueId value = kNoValue;
  int64_t start = 0;
  int64_t end = 0;
};

struct AxisCut {
  NodeId cutter = -1;
  ValueId source = kNoValue;
  int axis = 0;
  std::vector<AxisPiece> pieces;  // a Split's in its output order
};

// The cut `node` makes of its input, when it is a Slice or Split whose input and outputs have
// static descriptions in `descs` (static_value_descs). A Slice that cuts no axis, or several, is
// not a cut; `axis` names the axis to read it on when given (a Slice of a dim of 1, say, cuts any
// axis of extent 1 in the same way), otherwise the one axis it shortens or starts inside.
std::optional<AxisCut> axis_cut(const Graph& graph, NodeId node, const std::vector<std::optional<TensorDesc>>& descs,
                                std::optional<int> axis = std::nullopt);

}  // namespace edgefuse::fusion
