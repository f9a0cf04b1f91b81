// Optimised f32 Conv for 1-D and 2-D inputs (3-D falls back to the reference): plans the work and
// splits it into tasks on the thread pool; each task runs one single-threaded inner kernel of
// the active CPU ISA level (conv_kernels.cpp through cpu_kernel_table.h):
//   depthwise (group == C == M): tasks over the (n, c) planes, or on large planes one stripe of
//     output rows per thread;
//   pointwise (1x1, stride 1, no padding): GEMM tasks over blocks of output channels and columns,
//     or on large planes one stripe of columns per thread;
//   3x3 stride 1 with enough channels (conv_winograd_tile): Winograd F(2x2, 3x3) or F(4x4, 3x3),
//     tasks over bands of tiles (run_winograd);
//   everything else: tasks over bands of output rows, each filling the band's phase planes, then
//     GEMMs with the taps as B's rows (conv_dense_band: per output row into Y, or over the
//     flattened outputs, compacted into Y after).
#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <vector>

#include "runtime/ops/conv2d_setup.h"
#include "runtime/ops/conv_epilogue.h"
#include "runtime/ops/conv_problem.h"
#include "runtime/ops/conv_winograd.h"
#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/thread_scratch.h"

namespace edgefuse {

namespace {

// Columns of a GEMM task at most: its share of B stays in L2.
constexpr int64_t kMaxGemmColumns = 4032;

// How a GEMM is cut into tasks for `threads`: column_blocks blocks of output columns (of `width`)
// times row_blocks blocks of `rows` output channels (of `height`), per image and group (`planes`
// of them).
struct GemmTasks {
  int64_t width = 0, column_units = 0, column_blocks = 0;
  int64_t height = 0, row_units = 0, row_blocks = 0;
  int64_t per_plane() const { return column_blocks * row_blocks; }
  // Block j's first column and row: blocks differ by at most one unit, so that tasks take about
  // equal time.
  int64_t column_begin(int64_t j) const { return std::min(width, column_units * j / column_blocks * kColumnUnit); }
  int64_t row_begin(int64_t j) const { return std::min(height, row_units * j / row_blocks * kRowUnit); }

  // Every level's GEMM tile width divides kColumnUnit, so only the last block has a partial tile;
  // row blocks start on a packed tile.
  static constexpr int64_t kColumnUnit = 48;
  static constexpr int64_t kRowUnit = kGemmRowBlockUnit;

  // All output channels in one block, the columns in as few blocks as L2 allows: one thread's split.
  static GemmTasks whole_rows(int64_t height, int64_t width) {
    GemmTasks t;
    t.width = width;
    t.height = height;
    t.column_units = ceil_div(width, kColumnUnit);
    t.row_units = ceil_div(height, kRowUnit);
    t.column_blocks = ceil_div(width, kMaxGemmColumns);
    t.row_blocks = 1;
    return t;
  }
  static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
};

// The split with the shortest estimated finish: tasks are claimed in order by whichever thread is
// free, each costing its multiply-adds, its share of A and B brought into cache, and a fixed
// overhead; all in multiply-add lanes, the weights rough figures for these kernels (a float from
// L2 about 8 lanes, a task's start about 0.5 us). Narrow column blocks re-stream A and short row
// blocks re-stream B, so neither "columns first" nor "rows first" is right for every shape.
GemmTasks split_gemm(int64_t planes, int64_t height, int64_t width, int64_t depth, int64_t threads) {
  constexpr int64_t kMaxBlocks = 16, kMaxThreads = 64, kMaxTasksPerThread = 8;
  constexpr double kFloatCost = 8, kTaskCost = 60000;
  GemmTasks t = GemmTasks::whole_rows(height, width);
  if (threads <= 1) return t;
  threads = std::min(threads, kMaxThreads);  // beyond that, as many tasks as 64 threads would want
  double best = -1;
  GemmTasks candidate = t;
  for (int64_t cb = t.column_blocks; cb <= std::min(t.column_units, kMaxBlocks); ++cb) {
    for (int64_t rb = 1; rb <= std::min(t.row_units, kMaxBlocks); ++rb) {
      if (planes * cb * rb > kMaxTasksPerThread * threads && !(cb == t.column_blocks && rb == 1)) break;
      candidate.column_blocks = cb;
      candidate.row_blocks = rb;
      double free_at[kMaxThreads] = {};
      for (int64_t task = 0; task < planes * cb * rb; ++task) {
        const int64_t r = task % rb, col = task / rb % cb;
        const auto rows = static_cast<double>(candidate.row_begin(r + 1) - candidate.row_begin(r));
        const auto cols = static_cast<double>(candidate.column_begin(col + 1) - candidate.column_begin(col));
        const double cost = rows * cols * static_cast<double>(depth) +
                            (rows + cols) * static_cast<double>(depth) * kFloatCost + kTaskCost;
        double* next = std::min_element(free_at, free_at + threads);
        *next += cost;
      }
      const double finish = *std::max_element(free_at, free_at + threads);
      if (best < 0 || finish < best) {
        best = finish;
        t = candidate;
      }
    }
  }
  return t;
}

// Planes of at least this many outputs are cut into one stripe per thread on several threads: a
// 1x1 Conv's columns and a depthwise Conv's output rows, each thread taking the same share of the
// image in every such Conv (contiguous claiming), so that it reads mostly what it wrote itself:
// on the development VM a read of what the other core just wrote runs at a fifth of the speed of
// one from the core's own L2. YOLOX-nano on 2 threads 0.977-0.981 of the time (its 104 x 104 and
// 52 x 52 stages), BlazeFace-256 0.966-0.987; cutting 26 x 26 planes too was no gain, 13 x 13 ones
// 3-5 % slower (their Convs split better by output channels and blocks).
constexpr int64_t kStripeMinPlane = 52 * 52;

bool in_stripes(const Conv2d& c, int64_t threads) {
  return threads > 1 && c.batch == 1 && c.output_plane >= kStripeMinPlane && c.oh >= 2 * threads;
}

// A 1x1 Conv's GEMM in stripes: whole columns of output channels, `threads` contiguous shares of
// blocks of at most kMaxGemmColumns columns each.
GemmTasks stripe_gemm(int64_t height, int64_t width, int64_t threads) {
  GemmTasks t = GemmTasks::whole_rows(height, width);
  const int64_t per_thread = GemmTasks::ceil_div(GemmTasks::ceil_div(width, threads), kMaxGemmColumns);
  t.column_blocks = std::min(t.column_units, per_thread * threads);
  return t;
}

// split_gemm's result per shape and thread count, worked out on first use: its search is far
// slower than a small conv.
const GemmTasks& gemm_split_for(int64_t planes, int64_t height, int64_t width, int64_t depth, int64_t threads) {
  thread_local std::map<std::array<int64_t, 5>, GemmTasks> splits;
  const std::array<int64_t, 5> key{planes, height, width, depth, threads};
  auto found = splits.find(key);
  if (found == splits.end()) found = splits.emplace(key, split_gemm(planes, height, width, depth, threads)).first;
  return found->second;
}

// Above this many floats (half of a 1 MiB L2), a channels-last output block is computed and
// transposed a panel of columns at a time: YOLOv5's 80 x 80 head (255 x 6400) 3.97 -> 3.26 ms;
// BlazeFace's small heads are 5 % faster whole.
constexpr int64_t kChannelsLastBlockFloats = 128 * 1024;

void run_pointwise(const Conv2d& c, const CpuKernelTable& kernels, ThreadPool* pool) {
  const int64_t threads = pool != nullptr ? pool->size() : 1;
  // A pooled residual's rows and a channels-last output's transposed blocks want blocks of their own.
  const bool stripes = in_stripes(c, threads) && c.group == 1 && !c.residual_pooled && !c.output_channels_last;
  const GemmTasks striped = stripes ? stripe_gemm(c.mg, c.output_plane, threads) : GemmTasks{};
  const GemmTasks& t =
      stripes ? striped : gemm_split_for(c.batch * c.group, c.mg, c.output_plane, c.kernel_columns, threads);
  const auto run_tasks = [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> panel_buffer, pooled_buffer, block_buffer;
    float* const panel = grown_to(panel_buffer, c.kernel_columns * kGemmPanelColumns);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t row_block = task % t.row_blocks;
      const int64_t column_block = task / t.row_blocks % t.column_blocks;
      const int64_t image_group = task / t.per_plane();
      const int64_t n = image_group / c.group, g = image_group % c.group;
      const int64_t row_begin = t.row_begin(row_block), row_end = t.row_begin(row_block + 1);
      const int64_t column_begin = t.column_begin(column_block), column_end = t.column_begin(column_block + 1);
      float* const y = c.y + (n * c.out_channels + g * c.mg + row_begin) * c.output_plane + column_begin;
      if (c.residual_pooled) {
        // The task's residual rows pooled while its output block is computed: the whole output
        // rows its columns touch.
        const Conv2d pooled =
            with_pooled_residual_rows(c, kernels, n, g * c.mg + row_begin, g * c.mg + row_end, column_begin / c.ow,
                                      (column_end + c.ow - 1) / c.ow, pooled_buffer);
        kernels.conv_pointwise_block(pooled, n, g, row_begin, row_end, column_begin, column_end, y, c.output_plane,
                                     panel);
      } else if (c.output_channels_last) {
        // The block channels-first into a buffer that stays in cache, then transposed into its
        // positions' rows of Y ([N, H, W, M], or [N, A, H, W, K] a group of K channels at a time;
        // Conv group 1). A block larger than kChannelsLastBlockFloats goes a panel of columns at a
        // time, so that what is transposed is still in L1.
        const int64_t rows = row_end - row_begin;
        const int64_t step = rows * (column_end - column_begin) > kChannelsLastBlockFloats ? kGemmPanelColumns
                                                                                           : column_end - column_begin;
        float* const block = grown_to(block_buffer, rows * step);
        const int64_t k = c.out_channels / c.output_channel_groups;
        for (int64_t p0 = column_begin; p0 < column_end; p0 += step) {
          const int64_t columns = std::min(step, column_end - p0);
          kernels.conv_pointwise_block(c, n, g, row_begin, row_end, p0, p0 + columns, block, columns, panel);
          for (int64_t m = row_begin; m < row_end;) {
            const int64_t a = m / k, segment_end = std::min(row_end, (a + 1) * k);
            float* const group_y = c.y + ((n * c.output_channel_groups + a) * c.output_plane + p0) * k;
            kernels.transpose_f32(block + (m - row_begin) * columns, columns, group_y + (m - a * k), k, columns,
                                  segment_end - m);
            m = segment_end;
          }
        }
      } else {
        kernels.conv_pointwise_block(c, n, g, row_begin, row_end, column_begin, column_end, y, c.output_plane, panel);
      }
    }
  };
  parallel_for(pool, c.batch * c.group * t.per_plane(), 1, run_tasks, /*contiguous=*/stripes);
}

// A depthwise Conv in stripes (in_stripes, no residual): one band of output rows of every channel
// per thread.
void run_depthwise_stripes(const Conv2d& c, const CpuKernelTable& kernels, ThreadPool* pool) {
  const int64_t threads = pool->size();
  parallel_for(
      pool, threads, 1,
      [&](int64_t begin, int64_t end) {
        thread_local std::vector<float> scratch;
        float* const buffer = grown_to(scratch, c.depthwise_scratch_floats);
        for (int64_t stripe = begin; stripe < end; ++stripe) {
          const int64_t oy_begin = c.oh * stripe / threads, oy_end = c.oh * (stripe + 1) / threads;
          kernels.conv_depthwise_band(c, 0, oy_begin, oy_end, c.y + oy_begin * c.ow, c.output_plane, buffer);
        }
      },
      /*contiguous=*/true);
}

// Dense convs without im2col (conv_kernels.cpp), one task per band of output rows of an (image,
// group): the band's phase planes, then the GEMMs over taps as B rows (conv_dense_band), all on
// the task's thread with buffers sized to stay in its L2.
void run_dense(Conv2d& c, const CpuKernelTable& kernels, ThreadPool* pool) {
  const int64_t threads = pool != nullptr ? pool->size() : 1;
  const int64_t extra_rows = c.phase_rows - c.oh;
  // Floats per output row of a band: every input channel's phase rows, and the flattened outputs.
  const int64_t per_row = (c.cg * c.sh * c.sw + c.mg) * c.phase_cols;
  constexpr int64_t kBandFloats = 96 * 1024;  // about 384 KiB of planes and outputs
  int64_t band = std::clamp<int64_t>(kBandFloats / std::max<int64_t>(per_row, 1), 1, c.oh);
  // With several threads, enough bands for all of them when the image allows (one thread gains
  // nothing from more bands than L2 asks for, and pays each band's extra rows).
  if (threads > 1) {
    band = std::min(band, std::max<int64_t>(1, (c.oh * c.batch * c.group + 2 * threads - 1) / (2 * threads)));
  }
  c.band_rows = band;
  c.band_plane_floats = (band + extra_rows) * c.phase_cols + c.phase_cols + kConvPhaseSlack;
  const int64_t bands = (c.oh + band - 1) / band;
  const int64_t ldf = band * c.phase_cols;
  parallel_for(pool, c.batch * c.group * bands, 1, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> planes_buffer, flat_buffer, panel_buffer;
    thread_local std::vector<const float*> b_rows_buffer;
    float* const planes = grown_to(planes_buffer, dense_band_floats(c));
    float* const flat = grown_to(flat_buffer, c.mg * ldf);
    float* const panel = grown_to(panel_buffer, c.kernel_columns * kGemmPanelColumns);
    const float** const b_rows = grown_to(b_rows_buffer, c.kernel_columns);
    dense_tap_rows(c, planes, b_rows);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t image_group = task / bands;
      const int64_t n = image_group / c.group, g = image_group % c.group;
      const int64_t oy = task % bands * band;
      const int64_t rows = std::min(band, c.oh - oy);
      kernels.conv_phase_band(c, n, g, oy, planes);
      kernels.conv_dense_band(c, b_rows, n, g, oy, oy + rows,
                              c.y + (n * c.out_channels + g * c.mg) * c.output_plane + oy * c.ow, c.output_plane, flat,
                              ldf, panel);
    }
  });
}

// Winograd F(tile x tile, 3x3) (conv_winograd.h): per image, bands of tiles (threads by band), each
// band's transformed patches and products about kWinogradBandFloats (in L2), its tiles a whole
// number of the GEMM's column blocks (48) but in the last band: 64 channels each way at 40 x 40
// (F(2x2)), 0.92 ms direct, took 0.88 ms in bands of 45 tiles, 0.72 in bands of 48; bands of 96 to
// 160 K floats measured best.
void run_winograd(Conv2d& c, int tile, const CpuKernelTable& kernels, ThreadPool* pool) {
  const WinogradGeometry g = winograd_geometry(c, tile);
  const int64_t positions = (tile + 2) * (tile + 2);
  constexpr int64_t kWinogradBandFloats = 160 * 1024;
  const int64_t tiles = g.tiles(), threads = pool != nullptr ? pool->size() : 1;
  const int64_t band = std::max<int64_t>(48, kWinogradBandFloats / (positions * (c.cg + c.mg)) / 48 * 48);
  // The last band takes the rest (up to 2 band - 1 tiles): a band of a few tiles costs nearly a
  // whole block's products. An image of fewer bands than twice the threads is split evenly
  // instead, at least 16 tiles a band, so that every thread has a share (20 x 20 outputs are
  // 100 tiles of F(2x2)).
  int64_t bands = std::max<int64_t>(1, tiles / band);
  const bool even = threads > 1 && bands < 2 * threads;
  if (even) bands = std::clamp<int64_t>(tiles / 16, 1, 2 * threads);
  const auto band_begin = [&](int64_t b) {
    if (b >= bands) return tiles;
    return even ? tiles * b / bands : b * band;
  };
  int64_t largest = 0, smallest = tiles;
  for (int64_t b = 0; b < bands; ++b) {
    largest = std::max(largest, band_begin(b + 1) - band_begin(b));
    smallest = std::min(smallest, band_begin(b + 1) - band_begin(b));
  }
  // The kernels' transforms run whole vectors (cpu_kernel_table.h): conv_winograd_tile takes
  // planes of 25 tiles or more, and the bands above split them no finer than 16.
  EF_ASSERT(smallest >= 16, "Winograd band of ", smallest, " tiles");
  const auto run_tiles = tile == 4 ? kernels.conv_winograd4x4_tiles : kernels.conv_winograd_tiles;
  const int64_t scratch_floats =
      tile == 4 ? winograd4x4_scratch_floats(c, largest) : winograd_scratch_floats(c, largest);
  parallel_for(pool, c.batch * bands, 1, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> scratch_buffer, panel_buffer;
    float* const scratch = grown_to(scratch_buffer, scratch_floats);
    float* const panel = grown_to(panel_buffer, c.cg * kGemmPanelColumns);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t n = task / bands, b = task % bands;
      run_tiles(c, n, band_begin(b), band_begin(b + 1), scratch, panel);
    }
  });
}

}  // namespace

Status cpu_conv(const KernelArgs& args) {
  std::optional<ConvSetup> uncached;
  EF_ASSIGN_OR_RETURN(const ConvSetup* setup, conv_setup(args, uncached));
  if (!setup->planar) return reference_conv(args);
  Conv2d c = bind_conv2d(setup->shape, args);
  if (c.output_plane == 0 || c.batch == 0 || c.out_channels == 0) return Status::ok();
  const CpuKernelTable& kernels = cpu_kernel_table();

  // Phase planes (conv_phase_planes.h) are sh x sw per input plane; wider strides are rare enough
  // for the reference kernel.
  if (c.sh > kConvPhaseMaxStride || c.sw > kConvPhaseMaxStride) return reference_conv(args);
  const bool depthwise = c.group == c.channels && c.group == c.out_channels;
  // A pooled residual is read by the 1x1 GEMM path only (the fuser sets it on such Convs alone);
  // others, hand-made, take the reference kernel.
  if (c.residual_pooled && (depthwise || !c.pointwise || c.channels_last)) return reference_conv(args);
  // A channels-last input is read by the dense path only (the fuser folds the Transpose into such
  // Convs alone); the others, hand-made, take the reference kernel.
  if (c.channels_last && (depthwise || c.pointwise)) return reference_conv(args);
  // Likewise a channels-last output, written by the group-1 1x1 path only.
  if (c.output_channels_last && (!c.pointwise || c.group != 1 || c.channels_last)) return reference_conv(args);
  if (depthwise && c.residual == nullptr && in_stripes(c, args.pool != nullptr ? args.pool->size() : 1)) {
    run_depthwise_stripes(c, kernels, args.pool);
    return Status::ok();
  }
  if (depthwise) {
    // Planes in contiguous shares: each thread takes the same channels in every depthwise Conv of
    // a stack (BlazeFace-128 on 2 threads 0.446 -> 0.436 ms; YOLOX-nano and BlazeFace-256 the same).
    parallel_for(
        args.pool, c.batch * c.channels, 1,
        [&](int64_t begin, int64_t end) {
          thread_local std::vector<float> scratch;
          kernels.conv_depthwise_planes(c, begin, end, grown_to(scratch, c.depthwise_scratch_floats));
        },
        /*contiguous=*/true);
    return Status::ok();
  }

  if (const int tile = conv_winograd_tile(c); tile != 0) {
    c.packed_w = winograd_conv_weights(c, tile, kernels, args);
    run_winograd(c, tile, kernels, args.pool);
    return Status::ok();
  }
  c.packed_w = packed_conv_weights(c, kernels, args);
  if (c.pointwise) {
    run_pointwise(c, kernels, args.pool);
  } else {
    run_dense(c, kernels, args.pool);
  }
  return Status::ok();
}

}  // namespace edgefuse
