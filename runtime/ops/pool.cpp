// PLACEHOLDER: being written; every function reports "not implemented yet".
#include "runtime/ops/ops.h"

namespace edgefuse {

Status infer_pool(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_pool not implemented yet"); }
Status reference_max_pool(const KernelArgs&) { return unsupported("reference_max_pool not implemented yet"); }
Status cpu_max_pool(const KernelArgs&) { return unsupported("cpu_max_pool not implemented yet"); }
Status reference_average_pool(const KernelArgs&) { return unsupported("reference_average_pool not implemented yet"); }
Status infer_global_average_pool(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_global_average_pool not implemented yet"); }
Status reference_global_average_pool(const KernelArgs&) { return unsupported("reference_global_average_pool not implemented yet"); }

}  // namespace edgefuse
