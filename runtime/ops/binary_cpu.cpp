// Optimised f32 kernel of the pointwise binary ops. The output is walked as rows of one
// contiguous inner run (see BroadcastLoop), which covers the fast paths at once: equal shapes
// collapse to a single flat run, a scalar operand to a run with stride 0, and per-channel
// broadcasting ([N,C,H,W] op [C,1,1]) to rows of H*W elements with a scalar per row. Work is
// split over rows, or over the run itself when there is only one; each run is one loop of the
// active CPU ISA level (pointwise_kernels.cpp through cpu_kernel_table.h). Other dtypes, and Pow
// with a non-f32 exponent, run the reference kernel.
#include <algorithm>

#include "runtime/ops/broadcast.h"
#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/ops/ops.h"
#include "runtime/thread_pool.h"

namespace edgefuse {

namespace {

constexpr int64_t kGrain = 16 * 1024;  // output elements per chunk

}  // namespace

Status cpu_binary(const KernelArgs& args) {
  if (args.inputs[0]->dtype() != DType::kF32 || args.inputs[1]->dtype() != DType::kF32) {
    return op_def(args.node.op).reference(args);
  }
  const OpKind op = args.node.op;
  EF_ASSERT(op == OpKind::kAdd || op == OpKind::kSub || op == OpKind::kMul || op == OpKind::kDiv ||
                op == OpKind::kPow || op == OpKind::kPRelu,
            "cpu_binary called for ", op_name(op));
  const Tensor& a = *args.inputs[0];
  const Tensor& b = *args.inputs[1];
  Tensor& out = *args.outputs[0];
  if (out.numel() == 0) return Status::ok();
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* po = out.data<float>();
  const CpuKernelTable& kernels = cpu_kernel_table();
  const BroadcastLoop loop = plan_broadcast_loop(a.shape(), b.shape(), out.shape());
  const int64_t inner_a = loop.strides_a.back();
  const int64_t inner_b = loop.strides_b.back();
  if (loop.dims.size() == 1) {
    parallel_for(args.pool, loop.inner(), kGrain, [&](int64_t begin, int64_t end) {
      kernels.binary_f32(op, pa + begin * inner_a, inner_a, pb + begin * inner_b, inner_b, po + begin, end - begin);
    });
    return Status::ok();
  }
  const int64_t rows_per_chunk = std::max<int64_t>(1, kGrain / loop.inner());
  parallel_for(args.pool, loop.rows(), rows_per_chunk, [&](int64_t row_begin, int64_t row_end) {
    for_each_row(loop, row_begin, row_end, [&](int64_t offset_a, int64_t offset_b, int64_t offset_out) {
      kernels.binary_f32(op, pa + offset_a, inner_a, pb + offset_b, inner_b, po + offset_out, loop.inner());
    });
  });
  return Status::ok();
}

}  // namespace edgefuse
