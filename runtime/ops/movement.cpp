// PLACEHOLDER: being written; every function reports "not implemented yet".
#include "runtime/ops/ops.h"

namespace edgefuse {

Status infer_concat(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_concat not implemented yet"); }
Status reference_concat(const KernelArgs&) { return unsupported("reference_concat not implemented yet"); }
Status infer_split(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_split not implemented yet"); }
Status reference_split(const KernelArgs&) { return unsupported("reference_split not implemented yet"); }
Status infer_slice(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_slice not implemented yet"); }
Status reference_slice(const KernelArgs&) { return unsupported("reference_slice not implemented yet"); }
Status infer_transpose(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_transpose not implemented yet"); }
Status reference_transpose(const KernelArgs&) { return unsupported("reference_transpose not implemented yet"); }
Status infer_gather(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_gather not implemented yet"); }
Status reference_gather(const KernelArgs&) { return unsupported("reference_gather not implemented yet"); }
Status infer_pad(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_pad not implemented yet"); }
Status reference_pad(const KernelArgs&) { return unsupported("reference_pad not implemented yet"); }

}  // namespace edgefuse
