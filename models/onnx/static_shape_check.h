// Best-effort shape pass at import: when every graph input dim is known, runs each node's shape
// rule (runtime/op_table.h) over meta tensors, with initializer data for constants, so shape
// errors (a rank-2 Conv weight, mismatched broadcasts) surface at import naming the node.
// A rule that needs values it does not have (kUnsupported) makes that node's outputs unknown,
// and the pass goes on with the nodes that do not depend on them.
#pragma once

#include <optional>
#include <vector>

#include "runtime/graph.h"

namespace edgefuse {

// The description of each value (by ValueId) where the pass could infer it.
Result<std::vector<std::optional<TensorDesc>>> infer_static_shapes(const Graph& graph);

}  // namespace edgefuse
