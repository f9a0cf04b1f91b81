#include "tests/ops/op_test_util.h"

namespace edgefuse::test {

std::vector<CpuIsa> supported_isas() {
  std::vector<CpuIsa> isas;
  for (CpuIsa isa : {CpuIsa::kPortable, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (cpu_isa_supported(isa)) isas.push_back(isa);
  }
  return isas;
}

Node make_node(OpKind op, int input_count, int output_count) {
  Node node;
  node.op = op;
  node.name = std::string(op_name(op)) + "_under_test";
  for (int i = 0; i < input_count; ++i) node.inputs.push_back(i);
  for (int i = 0; i < output_count; ++i) node.outputs.push_back(input_count + i);
  return node;
}

Result<std::vector<Tensor>> run_op(const Node& node, const std::vector<const Tensor*>& inputs, bool reference,
                                   ThreadPool* pool, KernelCache* cache, uint32_t constant_inputs) {
  std::vector<TensorDesc> descs;
  EF_RETURN_IF_ERROR(infer_node(node, inputs, descs));
  std::vector<Tensor> outputs;
  std::vector<Tensor*> output_ptrs;
  outputs.reserve(descs.size());
  for (const TensorDesc& desc : descs) {
    EF_RETURN_IF_ERROR(validate_shape(desc.shape, dtype_size(desc.dtype)));
    outputs.push_back(Tensor::empty(desc.dtype, desc.shape));
  }
  for (Tensor& t : outputs) output_ptrs.push_back(&t);
  const OpDef& def = op_def(node.op);
  KernelFn kernel = (reference || def.cpu == nullptr) ? def.reference : def.cpu;
  EF_RETURN_IF_ERROR(kernel(KernelArgs{node, inputs, output_ptrs, pool, cache, constant_inputs}));
  return outputs;
}

}  // namespace edgefuse::test
