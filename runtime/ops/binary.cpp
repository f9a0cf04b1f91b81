// PLACEHOLDER: being written; every function reports "not implemented yet".
#include "runtime/ops/ops.h"

namespace edgefuse {

Status infer_broadcast(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_broadcast not implemented yet"); }
Status reference_add(const KernelArgs&) { return unsupported("reference_add not implemented yet"); }
Status reference_sub(const KernelArgs&) { return unsupported("reference_sub not implemented yet"); }
Status reference_mul(const KernelArgs&) { return unsupported("reference_mul not implemented yet"); }
Status reference_div(const KernelArgs&) { return unsupported("reference_div not implemented yet"); }
Status reference_pow(const KernelArgs&) { return unsupported("reference_pow not implemented yet"); }
Status reference_prelu(const KernelArgs&) { return unsupported("reference_prelu not implemented yet"); }
Status cpu_binary(const KernelArgs&) { return unsupported("cpu_binary not implemented yet"); }

}  // namespace edgefuse
