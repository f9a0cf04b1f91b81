// Optimised f32 kernel of PointwiseChain. The output is walked as rows of one contiguous inner
// run (MultiBroadcastLoop): long rows cut into tiles of kTile elements, short rows packed several
// to a tile (broadcast operands expanded for it); each tile runs every step through
// the active ISA level's unary and binary loops (cpu_kernel_table.h) on a stack buffer that stays
// in L1, and only the last step writes the output. So each input is read once and the output
// written once, whatever the chain's length. Every read of a tile's elements comes before the
// tile's output is written, so the output may take the bytes of a same-shaped input (the memory
// planner's in-place reuse).
//
// A windowed chain walks its window the same way, as if it were a contiguous tensor: each tile's
// X0 elements are gathered from the window's runs (one run of (end - start) x inner elements per
// index before the axis) and its results scattered back. In place, nothing outside the window is
// touched; otherwise X0 is first copied to the output whole.
#include <algorithm>
#include <optional>

#include "runtime/ops/broadcast.h"
#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/pointwise_chain.h"
#include "runtime/thread_pool.h"

namespace edgefuse {

namespace {

constexpr int64_t kTile = 1024;                // floats: 4 KiB, L1-resident between steps
constexpr int64_t kGrainElements = 16 * 1024;  // per parallel chunk: enough work to amortise a wake-up

UnaryF32 unary_of(const PointwiseChainStep& step) {
  UnaryF32 u;
  u.op = step.op;
  u.alpha = step.alpha;
  u.beta = step.beta;
  u.lo = step.lo;
  u.hi = step.hi;
  return u;
}

struct ChainOperand {
  const float* data;
  int64_t inner_stride;  // 0 or 1
};

// Runs the chain on `count` elements whose inputs start at ins[k].data (+ i * inner_stride) into out.
void run_tile(const PointwiseChain& chain, const ChainOperand* ins, float* out, int64_t count, float* tile) {
  const CpuKernelTable& kernels = cpu_kernel_table();
  const float* value = ins[0].data;
  int64_t value_stride = ins[0].inner_stride;
  for (size_t s = 0; s < chain.steps.size(); ++s) {
    const PointwiseChainStep& step = chain.steps[s];
    float* dst = s + 1 == chain.steps.size() ? out : tile;
    if (is_pointwise_unary(step.op)) {
      if (value_stride == 0) {  // a broadcast head: expand it first
        std::fill(dst, dst + count, *value);
        value = dst;
      }
      kernels.unary_f32(unary_of(step), value, dst, count);
    } else {
      const ChainOperand other = step.operand < 0 ? ChainOperand{&step.alpha, 0} : ins[step.operand];
      if (step.chain_on_right) {
        kernels.binary_f32(step.op, other.data, other.inner_stride, value, value_stride, dst, count);
      } else {
        kernels.binary_f32(step.op, value, value_stride, other.data, other.inner_stride, dst, count);
      }
    }
    value = dst;
    value_stride = 1;
  }
}

// Where a window's elements lie in the whole tensor: element w of the window (counted as in a
// contiguous tensor of the window's shape) is at run w / run_length, offset w % run_length, and
// run r starts at r * run_stride + first.
struct WindowRuns {
  int64_t run_length = 0;
  int64_t run_stride = 0;
  int64_t first = 0;

  WindowRuns(const Shape& full, const ChainWindow& window) {
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(window.axis) + 1; d < full.size(); ++d) inner *= full[d];
    run_length = (window.end - window.start) * inner;
    run_stride = full[static_cast<size_t>(window.axis)] * inner;
    first = window.start * inner;
  }

  // Calls visit(whole_offset, window_offset, length) for each piece of window elements [w, w + count).
  template <typename Visit>
  void for_each_piece(int64_t w, int64_t count, Visit&& visit) const {
    int64_t whole = w / run_length * run_stride + first + w % run_length;
    int64_t length = std::min(run_length - w % run_length, count);
    for (int64_t done = 0; done < count;) {
      visit(whole, done, length);
      whole += length - run_length + run_stride;  // the next run's start
      done += length;
      length = std::min(run_length, count - done);
    }
  }

  // Gathers window elements [w, w + count) of `whole` into `window`. Short runs far apart (YOLOv5's
  // xy and wh, 2 of every 85 floats) touch a cache line each, which the hardware prefetchers do not
  // bring in time: each run asks for the one kPrefetchRuns runs ahead.
  void gather(const float* whole, float* window, int64_t w, int64_t count) const {
    constexpr int64_t kPrefetchRuns = 16;
    const bool far_apart = run_stride - run_length >= 16;
    for_each_piece(w, count, [&](int64_t at_whole, int64_t at_window, int64_t length) {
      if (far_apart) __builtin_prefetch(whole + at_whole + kPrefetchRuns * run_stride, 1);
      for (int64_t i = 0; i < length; ++i) window[at_window + i] = whole[at_whole + i];  // short runs: no call
    });
  }

  // Scatters `window`'s count elements back to window elements [w, w + count) of `whole`.
  void scatter(const float* window, float* whole, int64_t w, int64_t count) const {
    for_each_piece(w, count, [&](int64_t at_whole, int64_t at_window, int64_t length) {
      for (int64_t i = 0; i < length; ++i) whole[at_whole + i] = window[at_window + i];
    });
  }
};

// Copies X0 to a distinct output, so that a windowed chain then only writes its window.
void copy_whole(const float* from, float* to, int64_t count, ThreadPool* pool) {
  parallel_for(pool, (count + kTile - 1) / kTile, kGrainElements / kTile, [&](int64_t begin, int64_t end) {
    std::copy(from + begin * kTile, from + std::min(count, end * kTile), to + begin * kTile);
  });
}

}  // namespace

Status cpu_pointwise_chain(const KernelArgs& args) {
  EF_ASSIGN_OR_RETURN(const PointwiseChain chain, pointwise_chain(args.node));
  Tensor& out = *args.outputs[0];
  if (out.numel() == 0) return Status::ok();
  // The shape the steps run over: the output's, or the window's.
  const Shape computed = chain.window ? chain_window_shape(out.shape(), *chain.window) : out.shape();
  std::optional<WindowRuns> window;
  if (chain.window) {
    window.emplace(out.shape(), *chain.window);
    const float* x0 = args.inputs[0]->data<float>();
    if (x0 != out.data<float>()) copy_whole(x0, out.data<float>(), out.numel(), args.pool);
  }
  std::vector<Shape> shapes;
  for (const Tensor* input : args.inputs) shapes.push_back(input->shape());
  if (window) shapes[0] = computed;
  const MultiBroadcastLoop loop = plan_multi_broadcast_loop(shapes, computed);
  const int64_t computed_numel = shape_numel(computed);
  const size_t input_count = args.inputs.size();
  const int64_t inner = loop.inner();
  const int64_t rows = loop.rows();
  // Long rows are cut into tiles; short ones are packed whole into one tile, so a chain on
  // [.., 85]-element rows does not pay its per-step calls every 85 elements.
  const bool packed = inner < kTile / 2;
  const int64_t tile_rows = packed ? kTile / inner : 1;
  const int64_t tiles_per_row = packed ? 1 : (inner + kTile - 1) / kTile;
  const int64_t units = (rows + tile_rows - 1) / tile_rows * tiles_per_row;
  const int64_t grain = std::max<int64_t>(1, kGrainElements / std::min(inner * tile_rows, kTile));
  float* po = out.data<float>();
  parallel_for(args.pool, units, grain, [&](int64_t begin, int64_t end) {
    float tile[kTile];
    float gathered[kMaxChainInputs][kTile];
    float result[kTile];
    ChainOperand ins[kMaxChainInputs];
    for (int64_t unit = begin; unit < end; ++unit) {
      const int64_t row = unit / tiles_per_row * tile_rows;
      const int64_t row_count = std::min(tile_rows, rows - row);
      const int64_t first = (unit % tiles_per_row) * kTile;
      const int64_t count = packed ? row_count * inner : std::min(kTile, inner - first);
      const int64_t computed_first = row * inner + first;  // the tile's first element of `computed`
      for (size_t k = 0; k < input_count; ++k) {
        const float* data = args.inputs[k]->data<float>();
        const int64_t stride = loop.strides[k].back();
        if (k == 0 && window) {
          window->gather(data, gathered[0], computed_first, count);
          ins[0] = {gathered[0], 1};
        } else if (row_count == 1 || shape_numel(shapes[k]) == computed_numel) {  // one row, or laid out as computed
          ins[k] = {data + loop.row_offset(k, row) + first * stride, row_count == 1 ? stride : 1};
        } else if (args.inputs[k]->numel() == 1) {
          ins[k] = {data, 0};
        } else {  // a broadcast operand: its rows as they lie when consecutive, else expanded into one run
          const int64_t base = loop.row_offset(k, row);
          bool consecutive = stride == 1;
          for (int64_t r = 1; consecutive && r < row_count; ++r)
            consecutive = loop.row_offset(k, row + r) == base + r * inner;
          if (consecutive) {
            ins[k] = {data + base, 1};
            continue;
          }
          for (int64_t r = 0; r < row_count; ++r) {
            const float* from = data + loop.row_offset(k, row + r);
            float* to = gathered[k] + r * inner;
            if (stride == 1) {
              std::copy(from, from + inner, to);
            } else {
              std::fill(to, to + inner, *from);
            }
          }
          ins[k] = {gathered[k], 1};
        }
      }
      if (!window) {
        run_tile(chain, ins, po + computed_first, count, tile);
        continue;
      }
      run_tile(chain, ins, result, count, tile);
      window->scatter(result, po, computed_first, count);
    }
  });
  return Status::ok();
}

}  // namespace edgefuse
