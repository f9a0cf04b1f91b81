// PLACEHOLDER: being written; every function reports "not implemented yet".
#include "runtime/ops/ops.h"

namespace edgefuse {

Status infer_conv(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_conv not implemented yet"); }
Status reference_conv(const KernelArgs&) { return unsupported("reference_conv not implemented yet"); }
Status cpu_conv(const KernelArgs&) { return unsupported("cpu_conv not implemented yet"); }
Status infer_conv_transpose(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_conv_transpose not implemented yet"); }
Status reference_conv_transpose(const KernelArgs&) { return unsupported("reference_conv_transpose not implemented yet"); }

}  // namespace edgefuse
