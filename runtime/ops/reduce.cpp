// PLACEHOLDER: being written; every function reports "not implemented yet".
#include "runtime/ops/ops.h"

namespace edgefuse {

Status infer_reduce_mean(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_reduce_mean not implemented yet"); }
Status reference_reduce_mean(const KernelArgs&) { return unsupported("reference_reduce_mean not implemented yet"); }

}  // namespace edgefuse
