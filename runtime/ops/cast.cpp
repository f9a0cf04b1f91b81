// PLACEHOLDER: being written; every function reports "not implemented yet".
#include "runtime/ops/ops.h"

namespace edgefuse {

Status infer_cast(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_cast not implemented yet"); }
Status reference_cast(const KernelArgs&) { return unsupported("reference_cast not implemented yet"); }

}  // namespace edgefuse
