// Optimised f32 MatMul and Gemm: the output rows split into tasks on the thread pool, each task
// one single-threaded GEMM of the active CPU ISA level (matmul_kernels.cpp through
// cpu_kernel_table.h). Other dtypes use the reference.
#include <algorithm>

#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/ops/matmul_problem.h"
#include "runtime/ops/ops.h"

namespace edgefuse {

namespace {

// Rows per task: whole matrices when there are enough of them to share out, else row blocks
// (at least 16 rows, so each GEMM stays worth its overhead).
int64_t rows_per_task(ThreadPool* pool, int64_t batches, int64_t rows) {
  const int64_t threads = pool != nullptr ? pool->size() : 1;
  if (batches >= threads || rows == 0) return std::max<int64_t>(1, rows);
  const int64_t splits = (threads + batches - 1) / batches;
  return std::max<int64_t>(16, (rows + splits - 1) / splits);
}

}  // namespace

Status cpu_matmul(const KernelArgs& args) {
  if (args.inputs[0]->dtype() != DType::kF32) return reference_matmul(args);
  EF_ASSIGN_OR_RETURN(MatMulProblem p, matmul_problem(*args.inputs[0], *args.inputs[1]));
  const float* a = args.inputs[0]->data<float>();
  const float* b = args.inputs[1]->data<float>();
  float* y = args.outputs[0]->data<float>();
  const CpuKernelTable& kernels = cpu_kernel_table();
  const auto batches = static_cast<int64_t>(p.a_offsets.size());
  const int64_t rows = rows_per_task(args.pool, batches, p.m);
  const int64_t blocks = std::max<int64_t>(1, (p.m + rows - 1) / rows);
  parallel_for(args.pool, batches * blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t batch = task / blocks;
      const int64_t row = (task % blocks) * rows;
      const int64_t count = std::min(rows, p.m - row);
      if (count <= 0) continue;
      const GemmF32 g{
          a + p.a_offsets[batch], b + p.b_offsets[batch], y + batch * p.m * p.n, p.m, p.k, p.n, false, false, 1.0f};
      kernels.gemm_f32(g, row, count);
    }
  });
  return Status::ok();
}

Status cpu_gemm(const KernelArgs& args) {
  if (args.inputs[0]->dtype() != DType::kF32) return reference_gemm(args);
  EF_ASSIGN_OR_RETURN(GemmProblem p, gemm_problem(args.node, args.inputs));
  const float* c = args.inputs.size() > 2 && args.inputs[2] != nullptr ? args.inputs[2]->data<float>() : nullptr;
  float* y = args.outputs[0]->data<float>();
  const GemmF32 g{
      args.inputs[0]->data<float>(), args.inputs[1]->data<float>(), y, p.m, p.k, p.n, p.trans_a, p.trans_b, p.alpha};
  const CpuKernelTable& kernels = cpu_kernel_table();
  const int64_t rows = rows_per_task(args.pool, 1, p.m);
  const int64_t blocks = std::max<int64_t>(1, (p.m + rows - 1) / rows);
  parallel_for(args.pool, blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t block = begin; block < end; ++block) {
      const int64_t row = block * rows;
      const int64_t count = std::min(rows, p.m - row);
      if (count <= 0) continue;
      kernels.gemm_f32(g, row, count);
      if (c != nullptr) {
        for (int64_t i = 0; i < count; ++i) {
          const float* c_row = c + (row + i) * p.c_row_stride;
          float* y_row = y + (row + i) * p.n;
          for (int64_t j = 0; j < p.n; ++j) y_row[j] += p.beta * c_row[j * p.c_column_stride];
        }
      }
    }
  });
  return Status::ok();
}

}  // namespace edgefuse
