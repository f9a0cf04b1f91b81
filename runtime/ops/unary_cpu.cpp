// Optimised f32 kernel of the pointwise unary ops: one flat loop per op over chunks of the
// tensor, threaded. Loops are branch-free so GCC vectorises them; sigmoid and exp use the
// vectorisable f32 exp of vector_math.h (within 2 ulp), tanh calls std::tanh.
// Other dtypes run the reference kernel.
#include <cmath>
#include <limits>

#include "runtime/ops/ops.h"
#include "runtime/ops/unary_math.h"
#include "runtime/ops/vector_math.h"
#include "runtime/thread_pool.h"

namespace edgefuse {

namespace {

constexpr int64_t kGrain = 16 * 1024;  // elements per chunk: enough work to amortise a wake-up

template <typename Fn>
Status map_f32(const KernelArgs& args, Fn fn) {
  const float* in = args.inputs[0]->data<float>();
  float* out = args.outputs[0]->data<float>();
  parallel_for(args.pool, args.inputs[0]->numel(), kGrain, [&](int64_t begin, int64_t end) {
    const Fn local_fn = fn;  // a local copy: its parameters cannot alias `out`, so the loop vectorises
    for (int64_t i = begin; i < end; ++i) out[i] = local_fn(in[i]);
  });
  return Status::ok();
}

float optional_bound(const KernelArgs& args, size_t index, float fallback) {
  if (args.inputs.size() <= index || args.inputs[index] == nullptr) return fallback;
  return args.inputs[index]->data<float>()[0];
}

}  // namespace

Status cpu_unary(const KernelArgs& args) {
  if (args.inputs[0]->dtype() != DType::kF32) return op_def(args.node.op).reference(args);
  const Attributes& attrs = args.node.attrs;
  switch (args.node.op) {
    case OpKind::kRelu:
      return map_f32(args, [](float x) { return unary_math::relu(x); });
    case OpKind::kLeakyRelu: {
      const float alpha = attrs.get_float("alpha", 0.01f);
      return map_f32(args, [=](float x) { return unary_math::leaky_relu(x, alpha); });
    }
    case OpKind::kSigmoid:
      return map_f32(args, [](float x) { return vector_math::sigmoid_f32(x); });
    case OpKind::kTanh:
      return map_f32(args, [](float x) { return std::tanh(x); });
    case OpKind::kHardSigmoid: {
      const float alpha = attrs.get_float("alpha", 0.2f);
      const float beta = attrs.get_float("beta", 0.5f);
      return map_f32(args, [=](float x) { return unary_math::hard_sigmoid(x, alpha, beta); });
    }
    case OpKind::kHardSwish:
      return map_f32(args, [](float x) { return unary_math::hard_swish(x); });
    case OpKind::kClip: {
      const float lo = optional_bound(args, 1, std::numeric_limits<float>::lowest());
      const float hi = optional_bound(args, 2, std::numeric_limits<float>::max());
      return map_f32(args, [=](float x) { return unary_math::clip(x, lo, hi); });
    }
    case OpKind::kSqrt:
      return map_f32(args, [](float x) { return std::sqrt(x); });
    case OpKind::kExp:
      return map_f32(args, [](float x) { return vector_math::exp_f32(x); });
    default:
      break;
  }
  EF_ASSERT(false, "cpu_unary called for ", op_name(args.node.op));
  return Status::ok();
}

}  // namespace edgefuse
