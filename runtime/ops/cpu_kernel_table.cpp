#include "runtime/ops/cpu_kernel_table.h"

#include "runtime/status.h"

EF_DECLARE_CPU_KERNELS(isa_portable)
#if EF_CPU_DISPATCH_X86
EF_DECLARE_CPU_KERNELS(isa_avx2)
EF_DECLARE_CPU_KERNELS(isa_avx512)
#endif

namespace edgefuse {

namespace {

// Positional, so that a kernel added to CpuKernelTable but not here fails to compile.
#define EF_KERNEL_TABLE(level, isa)                                                                        \
  CpuKernelTable {                                                                                         \
    level, isa::conv_depthwise_planes, isa::conv_depthwise_band, isa::conv_packed_weight_floats,           \
        isa::conv_pack_weights, isa::conv_pointwise_block, isa::conv_pointwise_from, isa::conv_phase_band, \
        isa::conv_dense_band, isa::conv_winograd_weight_floats, isa::conv_winograd_pack_weights,           \
        isa::conv_winograd_tiles, isa::conv_winograd4x4_weight_floats, isa::conv_winograd4x4_pack_weights, \
        isa::conv_winograd4x4_tiles, isa::unary_f32, isa::binary_f32, isa::gemm_f32, isa::transpose_f32,   \
        isa::max_pool_plane, isa::upsample2x_f32, isa::softmax_f32, isa::softmax_expectation_f32           \
  }

#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wmissing-field-initializers"
// Indexed by CpuIsa.
constexpr CpuKernelTable kTables[] = {
    EF_KERNEL_TABLE(CpuIsa::kPortable, isa_portable),
#if EF_CPU_DISPATCH_X86
    EF_KERNEL_TABLE(CpuIsa::kAvx2, isa_avx2),
    EF_KERNEL_TABLE(CpuIsa::kAvx512, isa_avx512),
#endif
};
#pragma GCC diagnostic pop

#undef EF_KERNEL_TABLE

}  // namespace

const CpuKernelTable& cpu_kernel_table(CpuIsa isa) {
  const auto index = static_cast<size_t>(isa);
  EF_ASSERT(index < std::size(kTables) && kTables[index].isa == isa, "no CPU kernels compiled for ", cpu_isa_name(isa));
  return kTables[index];
}

const CpuKernelTable& cpu_kernel_table() {
  return cpu_kernel_table(active_cpu_isa());
}

}  // namespace edgefuse
