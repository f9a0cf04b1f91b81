// PLACEHOLDER: being written; every function reports "not implemented yet".
#include "runtime/ops/ops.h"

namespace edgefuse {

Status infer_softmax(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_softmax not implemented yet"); }
Status reference_softmax(const KernelArgs&) { return unsupported("reference_softmax not implemented yet"); }

}  // namespace edgefuse
