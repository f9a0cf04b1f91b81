// PLACEHOLDER: being written; every function reports "not implemented yet".
#include "runtime/ops/ops.h"

namespace edgefuse {

Status infer_batch_normalization(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_batch_normalization not implemented yet"); }
Status reference_batch_normalization(const KernelArgs&) { return unsupported("reference_batch_normalization not implemented yet"); }

}  // namespace edgefuse
