// PLACEHOLDER: being written; every function reports "not implemented yet".
#include "runtime/ops/ops.h"

namespace edgefuse {

Status infer_matmul(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_matmul not implemented yet"); }
Status reference_matmul(const KernelArgs&) { return unsupported("reference_matmul not implemented yet"); }
Status cpu_matmul(const KernelArgs&) { return unsupported("cpu_matmul not implemented yet"); }
Status infer_gemm(const Node&, std::span<const Tensor* const>, std::vector<TensorDesc>&) { return unsupported("infer_gemm not implemented yet"); }
Status reference_gemm(const KernelArgs&) { return unsupported("reference_gemm not implemented yet"); }
Status cpu_gemm(const KernelArgs&) { return unsupported("cpu_gemm not implemented yet"); }

}  // namespace edgefuse
