// Optimised f32 kernel of the pointwise binary ops. The output is walked as rows of one
// contiguous inner run (see BroadcastLoop), which covers the fast paths at once: equal shapes
// collapse to a single flat run, a scalar operand to a run with stride 0, and per-channel
// broadcasting ([N,C,H,W] op [C,1,1]) to rows of H*W elements with a scalar per row. Work is
// split over rows, or over the run itself when there is only one. Other dtypes, and Pow with
// a non-f32 exponent, run the reference kernel.
#include <algorithm>
#include <cmath>

#include "runtime/ops/broadcast.h"
#include "runtime/ops/ops.h"
#include "runtime/thread_pool.h"

namespace edgefuse {

namespace {

constexpr int64_t kGrain = 16 * 1024;  // output elements per chunk

// One run of n outputs; each operand's stride is 1 (contiguous) or 0 (one element repeated).
// Separate loops per stride pattern keep each one a plain vectorisable loop.
template <typename Op>
void run_inner(const float* a, int64_t stride_a, const float* b, int64_t stride_b, float* out, int64_t n, Op op) {
  if (stride_a == 1 && stride_b == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], b[i]);
  } else if (stride_a == 1) {
    const float scalar_b = *b;
    for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], scalar_b);
  } else if (stride_b == 1) {
    const float scalar_a = *a;
    for (int64_t i = 0; i < n; ++i) out[i] = op(scalar_a, b[i]);
  } else {
    std::fill(out, out + n, op(*a, *b));
  }
}

template <typename Op>
Status broadcast_f32(const KernelArgs& args, Op op) {
  const Tensor& a = *args.inputs[0];
  const Tensor& b = *args.inputs[1];
  Tensor& out = *args.outputs[0];
  if (out.numel() == 0) return Status::ok();
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* po = out.data<float>();
  const BroadcastLoop loop = plan_broadcast_loop(a.shape(), b.shape(), out.shape());
  const int64_t inner_a = loop.strides_a.back();
  const int64_t inner_b = loop.strides_b.back();
  if (loop.dims.size() == 1) {
    parallel_for(args.pool, loop.inner(), kGrain, [&](int64_t begin, int64_t end) {
      run_inner(pa + begin * inner_a, inner_a, pb + begin * inner_b, inner_b, po + begin, end - begin, op);
    });
    return Status::ok();
  }
  const int64_t rows_per_chunk = std::max<int64_t>(1, kGrain / loop.inner());
  parallel_for(args.pool, loop.rows(), rows_per_chunk, [&](int64_t row_begin, int64_t row_end) {
    for_each_row(loop, row_begin, row_end, [&](int64_t offset_a, int64_t offset_b, int64_t offset_out) {
      run_inner(pa + offset_a, inner_a, pb + offset_b, inner_b, po + offset_out, loop.inner(), op);
    });
  });
  return Status::ok();
}

}  // namespace

Status cpu_binary(const KernelArgs& args) {
  if (args.inputs[0]->dtype() != DType::kF32 || args.inputs[1]->dtype() != DType::kF32) {
    return op_def(args.node.op).reference(args);
  }
  switch (args.node.op) {
    case OpKind::kAdd:
      return broadcast_f32(args, [](float x, float y) { return x + y; });
    case OpKind::kSub:
      return broadcast_f32(args, [](float x, float y) { return x - y; });
    case OpKind::kMul:
      return broadcast_f32(args, [](float x, float y) { return x * y; });
    case OpKind::kDiv:
      return broadcast_f32(args, [](float x, float y) { return x / y; });
    case OpKind::kPow:
      return broadcast_f32(args, [](float x, float y) { return std::pow(x, y); });
    case OpKind::kPRelu:
      return broadcast_f32(args, [](float x, float slope) { return x < 0.0f ? slope * x : x; });
    default:
      break;
  }
  EF_ASSERT(false, "cpu_binary called for ", op_name(args.node.op));
  return Status::ok();
}

}  // namespace edgefuse
