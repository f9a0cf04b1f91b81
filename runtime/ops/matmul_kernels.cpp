// The f32 GEMM of MatMul and Gemm on one CPU ISA level (compiled once per level, see
// cpu_kernel_table.h): Eigen on row-major maps of the raw buffers, single-threaded;
// matmul_cpu.cpp splits the rows into tasks on the thread pool.
#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/ops/isa_eigen.h"  // first: Eigen under this level's namespace

EF_DECLARE_CPU_KERNELS(EF_ISA_NAMESPACE)

namespace edgefuse::EF_ISA_NAMESPACE {

namespace {

using RowMajorMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixView = Eigen::Map<const RowMajorMatrix>;
using MatrixView = Eigen::Map<RowMajorMatrix>;

}  // namespace

void gemm_f32(const GemmF32& g, int64_t row, int64_t count) {
  const ConstMatrixView a_stored(g.a, g.trans_a ? g.k : g.m, g.trans_a ? g.m : g.k);
  const ConstMatrixView b_stored(g.b, g.trans_b ? g.n : g.k, g.trans_b ? g.k : g.n);
  MatrixView y_block(g.y + row * g.n, count, g.n);
  if (g.trans_a && g.trans_b) {
    y_block.noalias() = g.alpha * a_stored.middleCols(row, count).transpose() * b_stored.transpose();
  } else if (g.trans_a) {
    y_block.noalias() = g.alpha * a_stored.middleCols(row, count).transpose() * b_stored;
  } else if (g.trans_b) {
    y_block.noalias() = g.alpha * a_stored.middleRows(row, count) * b_stored.transpose();
  } else {
    y_block.noalias() = g.alpha * a_stored.middleRows(row, count) * b_stored;
  }
}

}  // namespace edgefuse::EF_ISA_NAMESPACE
