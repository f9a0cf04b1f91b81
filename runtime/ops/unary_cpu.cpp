// Optimised f32 kernel of the pointwise unary ops: the tensor split into chunks on the thread
// pool, each chunk one flat loop of the active CPU ISA level (pointwise_kernels.cpp through
// cpu_kernel_table.h). Other dtypes run the reference kernel.
#include <limits>

#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/ops/ops.h"
#include "runtime/thread_pool.h"

namespace edgefuse {

namespace {

constexpr int64_t kGrain = 16 * 1024;  // elements per chunk: enough work to amortise a wake-up

float optional_bound(const KernelArgs& args, size_t index, float fallback) {
  if (args.inputs.size() <= index || args.inputs[index] == nullptr) return fallback;
  return args.inputs[index]->data<float>()[0];
}

UnaryF32 unary_f32_op(const KernelArgs& args) {
  const Attributes& attrs = args.node.attrs;
  UnaryF32 op;
  op.op = args.node.op;
  switch (args.node.op) {
    case OpKind::kRelu:
    case OpKind::kSigmoid:
    case OpKind::kTanh:
    case OpKind::kHardSwish:
    case OpKind::kSqrt:
    case OpKind::kExp:
      break;
    case OpKind::kLeakyRelu:
      op.alpha = attrs.get_float("alpha", 0.01f);
      break;
    case OpKind::kHardSigmoid:
      op.alpha = attrs.get_float("alpha", 0.2f);
      op.beta = attrs.get_float("beta", 0.5f);
      break;
    case OpKind::kClip:
      op.lo = optional_bound(args, 1, std::numeric_limits<float>::lowest());
      op.hi = optional_bound(args, 2, std::numeric_limits<float>::max());
      break;
    default:
      EF_ASSERT(false, "cpu_unary called for ", op_name(args.node.op));
  }
  return op;
}

}  // namespace

Status cpu_unary(const KernelArgs& args) {
  if (args.inputs[0]->dtype() != DType::kF32) return op_def(args.node.op).reference(args);
  const UnaryF32 op = unary_f32_op(args);
  const float* in = args.inputs[0]->data<float>();
  float* out = args.outputs[0]->data<float>();
  const CpuKernelTable& kernels = cpu_kernel_table();
  parallel_for(args.pool, args.inputs[0]->numel(), kGrain,
               [&](int64_t begin, int64_t end) { kernels.unary_f32(op, in + begin, out + begin, end - begin); });
  return Status::ok();
}

}  // namespace edgefuse
