// Lowering of a memory-planned graph to the GPU backend's steps: per node, in order, the kernel
// parameter blocks (step_kernels.h) that compute it, with operands named by where they live
// (the plan's arena, the packed constants, a graph input or output) rather than by address, so
// one lowered plan binds to device memory (cuda_executor.cpp) or to host memory (host_runner.h,
// the emulation the tests run without a GPU).
//
// A node the GPU kernels do not cover (an op without a kernel, a dtype other than f32 where the
// kernel needs it, a shape beyond kMaxRank, an operand only known at run time that the kernel
// needs at lowering time) becomes a CPU fallback step: its CPU kernel runs on copies of its
// operands. Fallbacks are listed, so the executor can log each one and never falls back silently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "runtime/cuda/conv_gemm_step.h"
#include "runtime/cuda/depthwise_conv_step.h"
#include "runtime/cuda/pointwise_conv_step.h"
#include "runtime/cuda/row_nms_steps.h"
#include "runtime/cuda/step_kernels.h"
#include "runtime/graph.h"
#include "runtime/memory_plan.h"
#include "runtime/status.h"

namespace edgefuse::gpu {

enum class Region : uint8_t { kNone, kArena, kConstants, kInput, kOutput, kScratch };

// Where a value's bytes are: `offset` bytes into the arena, the constants or the scratch (the row
// filter's buffers), or into graph input or output number `index`; `half`: f32 values stored as
// binary16 (fp16 storage mode).
struct BufferRef {
  Region region = Region::kNone;
  int32_t index = 0;
  int64_t offset = 0;
  bool half = false;
};

// Only the rows of graph output `output` ([..., rows, channels], f32) whose column `column` is at
// least `threshold` are brought back; the others read as zeros, but for `fill` in that column. For
// detector heads whose rows are skipped below a threshold anyway (YOLOX: objectness bounds the
// score; BlazeFace: the score is the logit's sigmoid), so decoding is unchanged.
struct RowFilter {
  int output = 0;
  int64_t column = 0;
  float threshold = 0;  // > fill, so a row not brought back never passes
  // Non-maximum suppression among the passing rows on the device (row_nms_steps.h), so that only
  // the rows of kept detections come back, best first.
  // YOLOX's rows, objectness in column 4: boxes on grids of these strides, NMS per class or not.
  struct GridNms {
    int input_width = 0;
    int input_height = 0;
    std::vector<int> strides;  // one grid level per stride, in output order (YOLOX: 8, 16, 32)
    float iou_threshold = 0.45f;
    int max_detections = 0;  // <= 0: all
    bool per_class = true;
  };
  // BlazeFace's merged rows, the logit in column 0: boxes around anchors on square grids of a
  // square input; a box is a candidate when the logit's sigmoid is at least score_threshold (the
  // filter's threshold is a logit at or below that); NMS class-agnostic.
  struct AnchorNms {
    struct Grid {
      int cells = 1;  // per side
      int anchors_per_cell = 1;
    };
    int input_size = 0;
    std::vector<Grid> grids;  // in output order (BlazeFace: 16 x 16 with 2, 8 x 8 with 6)
    float score_threshold = 0.5f;
    float iou_threshold = 0.3f;
    int max_detections = 0;  // <= 0: all
  };
  // Boxes the graph decoded already (YOLOv5's rows, YOLOv8's columns): cx, cy, w, h in input
  // pixels in columns 0-3, then YOLOv5's objectness in column 4 (the filter's column) or none
  // (YOLOv8, whose filter takes the best of the class columns), then the class scores.
  struct BoxNms {
    bool objectness = true;
    float iou_threshold = 0.45f;
    int max_detections = 0;  // <= 0: all
    bool per_class = true;
  };
  // At most one of nms, anchor_nms and box_nms. (Optionals rather than a variant: GCC 12 at -O1
  // with sanitizers warns of uninitialised GridNms fields when such a variant is moved.)
  std::optional<GridNms> nms;
  std::optional<AnchorNms> anchor_nms;
  float fill = 0;  // the filter's columns of the rows not brought back
  std::optional<BoxNms> box_nms;
  // The output is [..., channels, rows] instead (YOLOv8's [84, 8400]: one channel of every row
  // contiguous); what comes back is the same rows, scattered into that layout.
  bool channel_major = false;
  // A row passes when the largest of its columns [column, column_end) reaches the threshold
  // (YOLOv8: its best class score, which decode_yolov8 keeps it by); 0: column alone;
  // kThroughLastColumn: every column from `column` on.
  static constexpr int64_t kThroughLastColumn = -1;
  int64_t column_end = 0;
};

struct LoweringOptions {
  // fp16 storage: every f32 activation in the arena is stored as binary16 (half the bytes moved);
  // kernels compute in f32. Constants (weights) stay f32: on YOLOX-nano they are 7 % of the bytes
  // a frame then moves, and rounding them alone cost 1.2 % relative L2 on its outputs. Graph inputs
  // and outputs stay f32.
  bool fp16_storage = false;
  // Mixed precision (fp16 storage only): activations, by ValueId (1: kept), that stay f32
  // (fp16_calibration.h picks them). One that is a block of an aliased Concat is kept with the
  // whole Concat output, as the blocks' offsets follow the output's storage.
  std::vector<uint8_t> f32_values;
  // fp16 storage only: 1x1 and group-1 Conv steps whose input is binary16 and whose weights are
  // constants within binary16's range may run on tensor cores (conv_gemm.h; the steps'
  // tensor_cores). The executor allows them where the device has them (sm_70 and later).
  bool tensor_cores = false;
  std::optional<RowFilter> row_filter;
  // Every Conv through the general ConvStep, 1x1 and depthwise ones included (else
  // PointwiseConvStep, DepthwiseConvStep, ConvGemmStep): for measuring the kernels against it on a
  // device.
  bool generic_conv = false;
};

// Where a row filter's buffers are (in the scratch region) and the filtered output's geometry.
struct RowFilterLayout {
  RowFilter filter;
  int64_t batch = 0;
  int64_t rows = 0;
  int64_t channels = 0;
  BufferRef index;    // u32 [batch, rows + 1]: count, then passing (with NMS: kept) row numbers
  BufferRef compact;  // f32 [batch, rows, channels]: passing rows first

  size_t index_bytes() const { return static_cast<size_t>(batch * (rows + 1)) * sizeof(uint32_t); }
  size_t row_bytes() const { return static_cast<size_t>(channels) * sizeof(float); }
  // Floats between a row's consecutive channels, and between consecutive rows' same channel, in
  // the output (each batch element rows * channels floats).
  int64_t channel_stride() const { return filter.channel_major ? rows : 1; }
  int64_t row_stride() const { return filter.channel_major ? 1 : channels; }
};

// Not a kernel: the node's CPU kernel runs on host copies of its operands.
struct CpuFallbackStep {
  std::string reason;  // why the GPU kernels do not cover it
};

using StepParams =
    std::variant<ConvStep, ConvGemmStep, PointwiseConvStep, DepthwiseConvStep, UnaryStep, BinaryStep, ChainStep,
                 PoolStep, PlaneMeanStep, SoftmaxStep, SoftmaxExpectationStep, ChannelAffineStep, BlockCopyStep,
                 GatherStep, RowCountResetStep, RowSelectStep, RowGatherStep, GridCandidateStep, AnchorCandidateStep,
                 BoxCandidateStep, NmsRankStep, NmsMaskStep, NmsSweepStep, NmsIndexStep, CpuFallbackStep>;

struct LoweredStep {
  NodeId node = -1;  // the node it computes (part of), -1 for the final output copies
  StepParams params;
  BufferRef inputs[kMaxStepInputs];  // kernel steps: operand slots in step_kernels.h order
  BufferRef output;

  bool is_fallback() const { return std::holds_alternative<CpuFallbackStep>(params); }
};

struct LoweredPlan {
  MemoryPlan plan;
  LoweringOptions options;
  std::vector<LoweredStep> steps;
  std::vector<BufferRef> value_refs;  // per value: where it lives (kNone: empty, or only in plan.known)
  // Packed bytes of every constant a kernel step reads (initializers, folded values, and tables
  // made while lowering: gather maps, folded BatchNormalization), each block kPlanAlignment-aligned.
  std::vector<std::byte> constants;
  std::vector<TensorDesc> output_descs;  // per graph output
  size_t scratch_bytes = 0;              // buffers of the row filter
  std::optional<RowFilterLayout> row_filter;

  int fallback_count() const;
  // "node 'name' (Op): reason" per fallback step, for logs.
  std::vector<std::string> describe_fallbacks(const Graph& graph) const;
};

// How a plan for the GPU is made (plan_memory): the device's kernels address any element, so
// Concat blocks and piece views (Slice and Split outputs) alias at any element offset.
inline PlanOptions gpu_plan_options() {
  return PlanOptions{.concat_blocks_element_aligned = true, .piece_views = true};
}

// Lowers `plan` (made by plan_memory for this graph, with gpu_plan_options) to steps.
Result<LoweredPlan> lower_plan(const Graph& graph, MemoryPlan plan, const LoweringOptions& options = {});

// Value v's bytes as stored (binary16 for a half ref) to and from a host tensor of its
// description (f32 for a half ref), for CPU fallbacks.
size_t stored_bytes(const TensorDesc& desc, const BufferRef& ref);
void decode_stored(const void* stored, const BufferRef& ref, Tensor& tensor);
void encode_stored(const Tensor& tensor, const BufferRef& ref, void* stored);

// Rebuilds a row-filtered output on the host, in its layout (channel-major too): zeros (the fill in
// the filter's columns), then for each batch element the rows listed in `index_words`
// (layout.index's contents) from `compact` ([batch, rows, channels] f32, at least each element's
// passing rows at the start of its part).
void scatter_filtered_rows(const RowFilterLayout& layout, const uint32_t* index_words, const float* compact,
                           Tensor& output);

// Addresses of the regions a lowered plan's steps refer to, in one memory space.
struct Bindings {
  void* arena = nullptr;
  const void* constants = nullptr;
  void* scratch = nullptr;
  std::vector<const void*> inputs;  // per graph input
  std::vector<void*> outputs;       // per graph output
};

void* resolve(const Bindings& bindings, const BufferRef& ref);

// The step's kernel parameters with its operand slots set to addresses in `bindings`.
StepParams bind_step(const LoweredStep& step, const Bindings& bindings);

}  // namespace edgefuse::gpu
