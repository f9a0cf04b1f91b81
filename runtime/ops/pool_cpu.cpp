// Optimised f32 MaxPool for 1-D and 2-D inputs without dilation and without the Indices output
// (other cases use the reference). Max is separable: each (n, c) plane is reduced along x into a
// scratch of input rows x output columns, then along y; both passes run vectorisable loops over
// whole rows, which keeps large same-padded windows (YOLOX's SPP: 5, 9, 13) cheap. Threaded over
// the N * C planes.
#include <algorithm>
#include <limits>
#include <vector>

#include "runtime/ops/ops.h"
#include "runtime/ops/pool_problem.h"

namespace edgefuse {

namespace {

struct Pool2d {
  int64_t ih, iw, kh, kw, sh, sw, ph, pw, oh, ow;
};

int64_t ceil_div(int64_t a, int64_t b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

void max_pool_plane(const Pool2d& p, const float* in, float* out, std::vector<float>& rows) {
  constexpr float kLowest = -std::numeric_limits<float>::infinity();
  rows.assign(static_cast<size_t>(p.ih * p.ow), kLowest);
  for (int64_t kx = 0; kx < p.kw; ++kx) {
    // Output columns whose tap kx reads input column ox * sw + offset inside [0, iw).
    const int64_t offset = kx - p.pw;
    const int64_t lo = std::clamp<int64_t>(ceil_div(-offset, p.sw), 0, p.ow);
    const int64_t hi = std::clamp<int64_t>(ceil_div(p.iw - offset, p.sw), lo, p.ow);
    for (int64_t iy = 0; iy < p.ih; ++iy) {
      const float* src = in + iy * p.iw + offset;
      float* dst = rows.data() + iy * p.ow;
      if (p.sw == 1) {
        for (int64_t ox = lo; ox < hi; ++ox) dst[ox] = std::max(dst[ox], src[ox]);
      } else {
        for (int64_t ox = lo; ox < hi; ++ox) dst[ox] = std::max(dst[ox], src[ox * p.sw]);
      }
    }
  }
  for (int64_t oy = 0; oy < p.oh; ++oy) {
    float* dst = out + oy * p.ow;
    std::fill(dst, dst + p.ow, kLowest);
    const int64_t first = std::max<int64_t>(0, oy * p.sh - p.ph);
    const int64_t last = std::min<int64_t>(p.ih, oy * p.sh - p.ph + p.kh);
    for (int64_t iy = first; iy < last; ++iy) {
      const float* src = rows.data() + iy * p.ow;
      for (int64_t ox = 0; ox < p.ow; ++ox) dst[ox] = std::max(dst[ox], src[ox]);
    }
  }
}

}  // namespace

Status cpu_max_pool(const KernelArgs& args) {
  const Tensor& x = *args.inputs[0];
  EF_ASSIGN_OR_RETURN(PoolProblem problem, pool_problem(args.node, x));
  const bool wants_indices = args.outputs.size() > 1 && args.outputs[1] != nullptr;
  const bool dilated = std::any_of(problem.geometry.dilations.begin(), problem.geometry.dilations.end(),
                                   [](int64_t d) { return d != 1; });
  if (x.dtype() != DType::kF32 || problem.geometry.rank() > 2 || wants_indices || dilated) {
    return reference_max_pool(args);
  }
  const WindowGeometry g = problem.geometry.padded_to(2);
  const Pool2d p{g.input[0],   g.input[1],     g.kernel[0],    g.kernel[1], g.strides[0],
                 g.strides[1], g.pad_begin[0], g.pad_begin[1], g.output[0], g.output[1]};
  const float* in = x.data<float>();
  float* out = args.outputs[0]->data<float>();
  parallel_for(args.pool, problem.batch * problem.channels, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> rows;
    for (int64_t plane = begin; plane < end; ++plane) {
      max_pool_plane(p, in + plane * p.ih * p.iw, out + plane * p.oh * p.ow, rows);
    }
  });
  return Status::ok();
}

}  // namespace edgefuse
