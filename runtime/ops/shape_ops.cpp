// PLACEHOLDER: being written; every function reports "not implemented yet".
#include "runtime/ops/ops.h"

namespace edgefuse {

Status infer_reshape(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_reshape not implemented yet"); }
Status infer_flatten(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_flatten not implemented yet"); }
Status infer_squeeze(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_squeeze not implemented yet"); }
Status infer_unsqueeze(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_unsqueeze not implemented yet"); }
Status reference_copy_input(const KernelArgs&) { return unsupported("reference_copy_input not implemented yet"); }
Status infer_shape(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_shape not implemented yet"); }
Status reference_shape(const KernelArgs&) { return unsupported("reference_shape not implemented yet"); }
Status infer_constant_of_shape(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_constant_of_shape not implemented yet"); }
Status reference_constant_of_shape(const KernelArgs&) { return unsupported("reference_constant_of_shape not implemented yet"); }
Status infer_constant(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_constant not implemented yet"); }
Status reference_constant(const KernelArgs&) { return unsupported("reference_constant not implemented yet"); }

}  // namespace edgefuse
