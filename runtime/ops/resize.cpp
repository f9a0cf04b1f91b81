// PLACEHOLDER: being written; every function reports "not implemented yet".
#include "runtime/ops/ops.h"

namespace edgefuse {

Status infer_resize(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_resize not implemented yet"); }
Status reference_resize(const KernelArgs&) { return unsupported("reference_resize not implemented yet"); }

}  // namespace edgefuse
