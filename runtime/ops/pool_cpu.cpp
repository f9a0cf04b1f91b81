// Optimised f32 MaxPool for 1-D and 2-D inputs without dilation and without the Indices output
// (other cases use the reference): threaded over the N * C planes, each plane reduced by the
// active CPU ISA level's kernel (pool_kernels.cpp through cpu_kernel_table.h).
#include <algorithm>
#include <optional>
#include <vector>

#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/ops/kernel_setup.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/pool_problem.h"
#include "runtime/ops/thread_scratch.h"

namespace edgefuse {

namespace {

// What cpu_max_pool derives from the node and its input's description (kernel_setup.h): whether
// the optimised kernel applies, and its plane geometry.
struct MaxPoolSetup {
  bool optimised = false;
  int64_t planes = 0;
  MaxPool2d plane{};
};

Result<MaxPoolSetup> max_pool_setup(const KernelArgs& args) {
  const Tensor& x = *args.inputs[0];
  EF_ASSIGN_OR_RETURN(const PoolProblem problem, pool_problem(args.node, x));
  const bool wants_indices = args.outputs.size() > 1 && args.outputs[1] != nullptr;
  const bool dilated = std::any_of(problem.geometry.dilations.begin(), problem.geometry.dilations.end(),
                                   [](int64_t d) { return d != 1; });
  MaxPoolSetup s;
  s.optimised = x.dtype() == DType::kF32 && problem.geometry.rank() <= 2 && !wants_indices && !dilated;
  if (!s.optimised) return s;
  const WindowGeometry g = problem.geometry.padded_to(2);
  s.planes = problem.batch * problem.channels;
  s.plane = MaxPool2d{g.input[0],   g.input[1],     g.kernel[0],    g.kernel[1], g.strides[0],
                      g.strides[1], g.pad_begin[0], g.pad_begin[1], g.output[0], g.output[1]};
  return s;
}

}  // namespace

Status cpu_max_pool(const KernelArgs& args) {
  const Tensor& x = *args.inputs[0];
  std::optional<MaxPoolSetup> uncached;
  EF_ASSIGN_OR_RETURN(const MaxPoolSetup* setup, kernel_setup(args, uncached, [&] { return max_pool_setup(args); }));
  if (!setup->optimised) return reference_max_pool(args);
  const MaxPool2d& p = setup->plane;
  const float* in = x.data<float>();
  float* out = args.outputs[0]->data<float>();
  const CpuKernelTable& kernels = cpu_kernel_table();
  parallel_for(args.pool, setup->planes, 1, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> scratch_buffer;
    float* const scratch = grown_to(scratch_buffer, max_pool_scratch_floats(p));
    for (int64_t plane = begin; plane < end; ++plane) {
      kernels.max_pool_plane(p, in + plane * p.ih * p.iw, out + plane * p.oh * p.ow, scratch);
    }
  });
  return Status::ok();
}

}  // namespace edgefuse
