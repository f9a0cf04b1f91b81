// PLACEHOLDER: being written; every function reports "not implemented yet".
#include "runtime/ops/ops.h"

namespace edgefuse {

Status infer_same_as_input(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_same_as_input not implemented yet"); }
Status reference_relu(const KernelArgs&) { return unsupported("reference_relu not implemented yet"); }
Status reference_leaky_relu(const KernelArgs&) { return unsupported("reference_leaky_relu not implemented yet"); }
Status reference_sigmoid(const KernelArgs&) { return unsupported("reference_sigmoid not implemented yet"); }
Status reference_tanh(const KernelArgs&) { return unsupported("reference_tanh not implemented yet"); }
Status reference_hard_sigmoid(const KernelArgs&) { return unsupported("reference_hard_sigmoid not implemented yet"); }
Status reference_hard_swish(const KernelArgs&) { return unsupported("reference_hard_swish not implemented yet"); }
Status reference_clip(const KernelArgs&) { return unsupported("reference_clip not implemented yet"); }
Status reference_sqrt(const KernelArgs&) { return unsupported("reference_sqrt not implemented yet"); }
Status reference_exp(const KernelArgs&) { return unsupported("reference_exp not implemented yet"); }
Status cpu_unary(const KernelArgs&) { return unsupported("cpu_unary not implemented yet"); }

}  // namespace edgefuse
