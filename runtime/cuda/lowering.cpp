#include "runtime/cuda/lowering.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <type_traits>

#include "runtime/cuda/lowering_params.h"
#include "runtime/op_table.h"
#include "runtime/ops/axes.h"
#include "runtime/ops/broadcast.h"
#include "runtime/ops/conv_epilogue.h"
#include "runtime/ops/conv_problem.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/pointwise_chain.h"
#include "runtime/ops/pool_problem.h"

namespace edgefuse::gpu {

namespace {

// Thrown-free "this node stays on the CPU": carries the reason into the fallback step.
struct NotLowered {
  std::string reason;
};

template <typename... Parts>
NotLowered not_lowered(const Parts&... parts) {
  return NotLowered{make_message(parts...)};
}

using StepsOrFallback = std::variant<std::vector<LoweredStep>, NotLowered>;

class Lowerer {
 public:
  Lowerer(const Graph& graph, LoweredPlan& out)
      : graph_(graph), out_(out), plan_(out.plan), fp16_(out.options.fp16_storage) {}

  Status lower() {
    place_values();
    for (size_t n = 0; n < graph_.nodes().size(); ++n) {
      if (plan_.node_skipped[n]) continue;
      const Node& node = graph_.nodes()[n];
      EF_ASSIGN_OR_RETURN(StepsOrFallback lowered, lower_node(node));
      if (auto* steps = std::get_if<std::vector<LoweredStep>>(&lowered)) {
        for (LoweredStep& step : *steps) {
          step.node = static_cast<NodeId>(n);
          out_.steps.push_back(std::move(step));
        }
      } else {
        LoweredStep step;
        step.node = static_cast<NodeId>(n);
        step.params = CpuFallbackStep{std::get<NotLowered>(lowered).reason};
        out_.steps.push_back(std::move(step));
      }
    }
    copy_remaining_outputs();
    if (out_.options.row_filter) EF_RETURN_IF_ERROR(add_row_filter(*out_.options.row_filter));
    for (LoweredStep& step : out_.steps) mark_half_operands(step);
    return Status::ok();
  }

 private:
  const TensorDesc& desc(ValueId v) const { return plan_.descs[static_cast<size_t>(v)]; }
  bool known(ValueId v) const { return plan_.known[static_cast<size_t>(v)].has_data(); }
  const Tensor& known_tensor(ValueId v) const { return plan_.known[static_cast<size_t>(v)]; }

  bool kept_f32(ValueId v) const {
    const std::vector<uint8_t>& keep = out_.options.f32_values;
    return static_cast<size_t>(v) < keep.size() && keep[static_cast<size_t>(v)] != 0;
  }
  // The value whose bytes v shares, so that both are stored alike (f32 or f16): following v's
  // chain of in-place outputs and views back to its first value, and the value that one lies in
  // (an aliased Concat output, a sliced input), as far as they go; else v.
  ValueId alias_root(ValueId v) const {
    for (;;) {
      const auto i = static_cast<size_t>(v);
      if (plan_.in_place_of[i] != kNoValue) {
        v = plan_.in_place_of[i];
      } else if (plan_.alias_of[i] != kNoValue) {
        v = plan_.alias_of[i];
      } else {
        return v;
      }
    }
  }

  // Graph inputs and outputs, then arena values; known values get a constant block on first use.
  void place_values() {
    const size_t count = graph_.values().size();
    out_.value_refs.assign(count, BufferRef{});
    for (size_t i = 0; i < graph_.inputs().size(); ++i) {
      out_.value_refs[static_cast<size_t>(graph_.inputs()[i])] = {Region::kInput, static_cast<int32_t>(i), 0};
    }
    // Values sharing bytes (a Concat output and its aliased blocks, in-place chains and views) share
    // one storage type: f32 when any of them is kept.
    std::vector<bool> root_kept(count, false);
    for (size_t v = 0; v < count; ++v) {
      if (kept_f32(static_cast<ValueId>(v))) root_kept[static_cast<size_t>(alias_root(static_cast<ValueId>(v)))] = true;
    }
    for (size_t v = 0; v < count; ++v) {
      if (!plan_.in_arena(static_cast<ValueId>(v))) continue;
      const bool half = fp16_ && plan_.descs[v].dtype == DType::kF32 &&
                        !root_kept[static_cast<size_t>(alias_root(static_cast<ValueId>(v)))];
      int64_t offset = plan_.offset[v];
      // A value inside another (a Concat's block, a piece view) sits at its f32 byte position in
      // the value it lies in; stored as f16 that is half as long, so the value moves to half its
      // distance from the start. (In-place values start where their root does.)
      const ValueId root = alias_root(static_cast<ValueId>(v));
      if (half && root != static_cast<ValueId>(v)) {
        const int64_t start = plan_.offset[static_cast<size_t>(root)];
        offset = start + (offset - start) / 2;
      }
      out_.value_refs[v] = {Region::kArena, 0, offset, half};
    }
    for (size_t j = 0; j < graph_.outputs().size(); ++j) {
      const auto v = static_cast<size_t>(graph_.outputs()[j]);
      out_.output_descs.push_back(plan_.descs[v]);
      if (out_.value_refs[v].region == Region::kNone && !known(static_cast<ValueId>(v))) {
        out_.value_refs[v] = {Region::kOutput, static_cast<int32_t>(j), 0};
      }
    }
  }

  BufferRef add_constant(const void* data, size_t bytes) {
    const size_t offset = (out_.constants.size() + kPlanAlignment - 1) / kPlanAlignment * kPlanAlignment;
    out_.constants.resize(offset + bytes);
    if (bytes > 0) std::memcpy(out_.constants.data() + offset, data, bytes);
    return {Region::kConstants, 0, static_cast<int64_t>(offset)};
  }

  // Where a kernel reads value v from: its place, or (known values) its constant block, in f32.
  BufferRef operand(ValueId v) {
    if (v == kNoValue) return {};
    BufferRef& ref = out_.value_refs[static_cast<size_t>(v)];
    if (ref.region == Region::kNone && known(v)) {
      const Tensor& t = known_tensor(v);
      ref = add_constant(t.raw_data(), t.nbytes());
    }
    return ref;
  }

  // Sets each kernel step's half bits from its operands' storage. Copies of f32 data move two
  // bytes per element when both sides are f16, and convert when only one side is.
  static void mark_half_operands(LoweredStep& step) {
    std::visit(
        [&](auto& p) {
          using Step = std::decay_t<decltype(p)>;
          if constexpr (std::is_base_of_v<Operands, Step>) {
            p.half = 0;
            for (int k = 0; k < kMaxStepInputs; ++k) p.half |= step.inputs[k].half ? uint8_t(1u << k) : uint8_t{0};
            if (step.output.half) p.half |= kHalfOutput;
          }
          // Tensor cores take X as binary16 (conv_gemm.h): only where it is stored so.
          if constexpr (std::is_same_v<Step, PointwiseConvStep> || std::is_same_v<Step, ConvGemmStep>) {
            p.tensor_cores = p.tensor_cores && step.inputs[0].half;
          }
          if constexpr (std::is_same_v<Step, BlockCopyStep> || std::is_same_v<Step, GatherStep>) {
            const bool in_half = step.inputs[0].half;
            const bool out_half = step.output.half;
            if (in_half && out_half) {
              p.element_bytes = 2;
              if constexpr (std::is_same_v<Step, GatherStep>) {
                float fill = 0;
                std::memcpy(&fill, &p.fill, sizeof(fill));
                p.fill = float_to_half_bits(fill);
              }
            } else if (in_half != out_half) {
              p.element_bytes = 0;
            }
          }
        },
        step.params);
  }

  // Graph outputs whose value is not produced in place (a graph input, a constant, or an output
  // listed twice) are copied into their buffer after the last step.
  void copy_remaining_outputs() {
    for (size_t j = 0; j < graph_.outputs().size(); ++j) {
      const ValueId v = graph_.outputs()[j];
      const BufferRef source = operand(v);
      if (source.region == Region::kOutput && source.index == static_cast<int32_t>(j)) continue;
      const TensorDesc& d = desc(v);
      LoweredStep step;
      step.node = -1;  // no node: a copy after the last one
      BlockCopyStep copy;
      copy.element_bytes = static_cast<int>(dtype_size(d.dtype));
      copy.rows = 1;
      copy.length = d.numel();
      step.params = copy;
      step.inputs[0] = source;
      step.output = {Region::kOutput, static_cast<int32_t>(j), 0};
      out_.steps.push_back(std::move(step));
    }
  }

  // Steps that zero the counts, select the passing rows and pack them (step_kernels.h).
  Status add_row_filter(const RowFilter& filter) {
    if (filter.output < 0 || filter.output >= static_cast<int>(out_.output_descs.size())) {
      return invalid_argument("row filter: output ", filter.output, " does not exist");
    }
    const TensorDesc& desc = out_.output_descs[static_cast<size_t>(filter.output)];
    if (desc.dtype != DType::kF32 || desc.shape.size() < 2) {
      return invalid_argument("row filter: output ", filter.output, " is ", desc.to_string(),
                              ", expected f32 [..., rows, channels]");
    }
    if (int{filter.nms.has_value()} + int{filter.anchor_nms.has_value()} + int{filter.box_nms.has_value()} > 1) {
      return invalid_argument("row filter: more than one of grid, anchor and box NMS set");
    }
    if (!(filter.threshold > filter.fill)) {
      return invalid_argument("row filter: threshold ", filter.threshold, " is not above the fill ", filter.fill);
    }
    RowFilterLayout layout;
    layout.filter = filter;
    const int64_t inner = desc.shape.back(), outer = desc.shape[desc.shape.size() - 2];
    layout.rows = filter.channel_major ? inner : outer;
    layout.channels = filter.channel_major ? outer : inner;
    if (filter.column < 0 || filter.column >= layout.channels) {
      return invalid_argument("row filter: column ", filter.column, " is outside the ", layout.channels, " channels");
    }
    if (filter.column_end == 0) layout.filter.column_end = filter.column + 1;
    if (filter.column_end == RowFilter::kThroughLastColumn) layout.filter.column_end = layout.channels;
    if (layout.filter.column_end <= filter.column || layout.filter.column_end > layout.channels) {
      return invalid_argument("row filter: columns ", filter.column, " to ", layout.filter.column_end, " of ",
                              layout.channels, " channels");
    }
    if (filter.channel_major && (filter.nms || filter.anchor_nms)) {
      return invalid_argument("row filter: grid and anchor NMS read rows, not a channel-major output");
    }
    layout.batch = layout.rows * layout.channels == 0 ? 0 : desc.numel() / (layout.rows * layout.channels);
    layout.index = scratch_block(layout.index_bytes());
    layout.compact = scratch_block(static_cast<size_t>(desc.numel()) * sizeof(float));
    const BufferRef output = {Region::kOutput, filter.output, 0};

    LoweredStep reset;
    reset.params = RowCountResetStep{{}, layout.batch, layout.rows + 1};
    reset.output = layout.index;
    LoweredStep select;
    select.params = RowSelectStep{{},
                                  layout.batch,
                                  layout.rows,
                                  layout.channels,
                                  filter.column,
                                  filter.threshold,
                                  layout.filter.column_end,
                                  layout.row_stride(),
                                  layout.channel_stride()};
    select.inputs[0] = output;
    select.output = layout.index;
    LoweredStep gather;
    gather.params =
        RowGatherStep{{}, layout.batch, layout.rows, layout.channels, layout.row_stride(), layout.channel_stride()};
    gather.inputs[0] = output;
    gather.inputs[1] = layout.index;
    gather.output = layout.compact;
    out_.steps.push_back(std::move(reset));
    out_.steps.push_back(std::move(select));
    if (filter.nms) EF_RETURN_IF_ERROR(add_grid_nms(*filter.nms, output, layout));
    if (filter.anchor_nms) EF_RETURN_IF_ERROR(add_anchor_nms(*filter.anchor_nms, output, layout));
    if (filter.box_nms) EF_RETURN_IF_ERROR(add_box_nms(*filter.box_nms, output, layout));
    out_.steps.push_back(std::move(gather));
    out_.row_filter = layout;
    return Status::ok();
  }

  // A block of `bytes` at the end of the scratch region, kPlanAlignment-aligned.
  BufferRef scratch_block(size_t bytes) {
    const size_t offset = (out_.scratch_bytes + kPlanAlignment - 1) / kPlanAlignment * kPlanAlignment;
    out_.scratch_bytes = offset + bytes;
    return BufferRef{Region::kScratch, 0, static_cast<int64_t>(offset)};
  }

  // YOLOX's candidates, then the NMS steps (row_nms_steps.h).
  Status add_grid_nms(const RowFilter::GridNms& nms, const BufferRef& output, const RowFilterLayout& layout) {
    if (layout.filter.column != 4 || layout.channels <= kGridBoxChannels) {
      return invalid_argument("row filter NMS: needs YOLOX rows (objectness in column 4, then classes), got column ",
                              layout.filter.column, " of ", layout.channels, " channels");
    }
    if (nms.strides.empty() || nms.strides.size() > static_cast<size_t>(kMaxGridLevels)) {
      return invalid_argument("row filter NMS: ", nms.strides.size(), " grid levels, expected 1 to ", kMaxGridLevels);
    }
    GridCandidateStep decode{};
    decode.levels = static_cast<int32_t>(nms.strides.size());
    int64_t cells = 0;
    for (size_t l = 0; l < nms.strides.size(); ++l) {
      const int stride = nms.strides[l];
      if (stride <= 0) return invalid_argument("row filter NMS: stride ", stride, " is not positive");
      decode.level[l] = GridLevel{cells, nms.input_width / stride, static_cast<float>(stride)};
      cells += static_cast<int64_t>(nms.input_width / stride) * (nms.input_height / stride);
    }
    if (cells != layout.rows) {
      return invalid_argument("row filter NMS: a ", nms.input_width, "x", nms.input_height, " input has ", cells,
                              " grid cells, the output has ", layout.rows, " rows");
    }
    decode.channels = layout.channels;
    decode.score_threshold = layout.filter.threshold;
    return add_row_nms(decode, nms.iou_threshold, nms.max_detections, nms.per_class, output, layout);
  }

  // BlazeFace's candidates, then the NMS steps (row_nms_steps.h).
  Status add_anchor_nms(const RowFilter::AnchorNms& nms, const BufferRef& output, const RowFilterLayout& layout) {
    if (layout.filter.column != 0 || layout.channels < kAnchorBoxColumn + 4) {
      return invalid_argument(
          "row filter NMS: needs anchor rows (the score logit in column 0, then the box), got column ",
          layout.filter.column, " of ", layout.channels, " channels");
    }
    if (nms.grids.empty() || nms.grids.size() > static_cast<size_t>(kMaxGridLevels)) {
      return invalid_argument("row filter NMS: ", nms.grids.size(), " anchor grids, expected 1 to ", kMaxGridLevels);
    }
    if (nms.input_size <= 0) return invalid_argument("row filter NMS: input size ", nms.input_size, " is not positive");
    if (!(nms.score_threshold >= 0 && nms.score_threshold <= 1)) {
      return invalid_argument("row filter NMS: score threshold ", nms.score_threshold, " is outside [0, 1]");
    }
    AnchorCandidateStep decode{};
    decode.levels = static_cast<int32_t>(nms.grids.size());
    int64_t anchors = 0;
    for (size_t l = 0; l < nms.grids.size(); ++l) {
      const RowFilter::AnchorNms::Grid& grid = nms.grids[l];
      if (grid.cells <= 0 || grid.anchors_per_cell <= 0) {
        return invalid_argument("row filter NMS: an anchor grid of ", grid.cells, " cells with ", grid.anchors_per_cell,
                                " anchors each");
      }
      decode.level[l] = AnchorLevel{anchors, grid.cells, grid.anchors_per_cell};
      anchors += int64_t{grid.cells} * grid.cells * grid.anchors_per_cell;
    }
    if (anchors != layout.rows) {
      return invalid_argument("row filter NMS: the anchor grids have ", anchors, " anchors, the output has ",
                              layout.rows, " rows");
    }
    decode.channels = layout.channels;
    decode.input_size = static_cast<float>(nms.input_size);
    decode.score_threshold = nms.score_threshold;
    return add_row_nms(decode, nms.iou_threshold, nms.max_detections, false, output, layout);
  }

  // YOLOv5's and YOLOv8's candidates, then the NMS steps (row_nms_steps.h). The filter must select
  // what the decoders keep: YOLOv5's rows by their objectness (an upper bound of the score),
  // YOLOv8's by their best class score.
  Status add_box_nms(const RowFilter::BoxNms& nms, const BufferRef& output, const RowFilterLayout& layout) {
    const int64_t first_class = nms.objectness ? 5 : 4;
    const int64_t column_end = nms.objectness ? 5 : layout.channels;
    if (layout.filter.column != 4 || layout.filter.column_end != column_end || layout.channels <= first_class) {
      return invalid_argument("row filter NMS: needs decoded boxes in columns 0-3, then ",
                              nms.objectness ? "objectness in column 4 (the filter's)"
                                             : "class scores (the filter's columns, 4 to the last)",
                              ", got columns ", layout.filter.column, " to ", layout.filter.column_end, " of ",
                              layout.channels, " channels");
    }
    BoxCandidateStep decode{};
    decode.channels = layout.channels;
    decode.row_stride = layout.row_stride();
    decode.channel_stride = layout.channel_stride();
    decode.objectness = nms.objectness;
    decode.score_threshold = layout.filter.threshold;
    return add_row_nms(decode, nms.iou_threshold, nms.max_detections, nms.per_class, output, layout);
  }

  // The NMS steps between the row filter's selection and its gather, after `decode` (a candidate
  // step with its row layout set) made the candidates.
  template <typename CandidateStep>
  Status add_row_nms(CandidateStep decode, float iou_threshold, int max_detections, bool per_class,
                     const BufferRef& output, const RowFilterLayout& layout) {
    if (!(iou_threshold >= 0 && iou_threshold <= 1)) {
      return invalid_argument("row filter NMS: IoU threshold ", iou_threshold, " is outside [0, 1]");
    }
    const int64_t capacity = std::min<int64_t>((layout.rows + 31) / 32 * 32, kMaxNmsCandidates);
    const auto per_batch = [&](int64_t bytes) { return scratch_block(static_cast<size_t>(layout.batch * bytes)); };
    const BufferRef candidates = per_batch(capacity * static_cast<int64_t>(sizeof(NmsCandidate)));
    const BufferRef order = per_batch(capacity * static_cast<int64_t>(sizeof(uint32_t)));
    const BufferRef mask = per_batch(capacity * (capacity / 32) * static_cast<int64_t>(sizeof(uint32_t)));
    const BufferRef result = per_batch(nms_result_words(capacity) * static_cast<int64_t>(sizeof(uint32_t)));

    const NmsStepShape shape{{}, layout.batch, layout.rows, capacity};
    static_cast<NmsStepShape&>(decode) = shape;
    LoweredStep candidate_step;
    candidate_step.params = decode;
    candidate_step.inputs[0] = output;
    candidate_step.inputs[1] = layout.index;
    candidate_step.output = candidates;
    LoweredStep rank;
    rank.params = NmsRankStep{shape};
    rank.inputs[0] = layout.index;
    rank.inputs[1] = candidates;
    rank.output = order;
    LoweredStep overlap;
    overlap.params = NmsMaskStep{shape, iou_threshold, per_class};
    overlap.inputs[0] = layout.index;
    overlap.inputs[1] = candidates;
    overlap.inputs[2] = order;
    overlap.output = mask;
    LoweredStep sweep;
    sweep.params = NmsSweepStep{shape, max_detections};
    sweep.inputs[0] = layout.index;
    sweep.inputs[1] = candidates;
    sweep.inputs[2] = order;
    sweep.inputs[3] = mask;
    sweep.output = result;
    LoweredStep kept_rows;
    kept_rows.params = NmsIndexStep{shape};
    kept_rows.inputs[0] = result;
    kept_rows.inputs[1] = candidates;
    kept_rows.inputs[2] = order;
    kept_rows.output = layout.index;
    for (LoweredStep* step : {&candidate_step, &rank, &overlap, &sweep, &kept_rows}) {
      out_.steps.push_back(std::move(*step));
    }
    return Status::ok();
  }

  // Input tensors as the CPU shape code sees them: known data, or a description only.
  std::vector<Tensor> meta_inputs(const Node& node) const {
    std::vector<Tensor> tensors;
    for (ValueId v : node.inputs) {
      if (v == kNoValue) {
        tensors.emplace_back();
      } else if (known(v)) {
        tensors.push_back(known_tensor(v));
      } else {
        tensors.push_back(Tensor::meta(desc(v).dtype, desc(v).shape));
      }
    }
    return tensors;
  }
  static std::vector<const Tensor*> pointers(const std::vector<Tensor>& tensors, const Node& node) {
    std::vector<const Tensor*> out;
    for (size_t i = 0; i < tensors.size(); ++i) out.push_back(node.inputs[i] == kNoValue ? nullptr : &tensors[i]);
    return out;
  }

  bool all_f32(const Node& node) const {
    for (ValueId v : node.inputs) {
      if (v != kNoValue && desc(v).dtype != DType::kF32) return false;
    }
    for (ValueId v : node.outputs) {
      if (desc(v).dtype != DType::kF32) return false;
    }
    return true;
  }

  template <typename Params>
  LoweredStep step_for(const Node& node, const Params& params, std::initializer_list<ValueId> inputs) {
    LoweredStep step;
    step.params = params;
    int slot = 0;
    for (ValueId v : inputs) step.inputs[slot++] = operand(v);
    step.output = operand(node.outputs[0]);
    return step;
  }

  ValueId input_or_none(const Node& node, size_t i) const { return i < node.inputs.size() ? node.inputs[i] : kNoValue; }

  Result<StepsOrFallback> lower_node(const Node& node) {
    if (is_pointwise_unary(node.op)) return lower_unary(node);
    switch (node.op) {
      case OpKind::kConv:
        return lower_conv(node);
      case OpKind::kAdd:
      case OpKind::kSub:
      case OpKind::kMul:
      case OpKind::kDiv:
      case OpKind::kPow:
      case OpKind::kPRelu:
        return lower_binary(node);
      case OpKind::kPointwiseChain:
        return lower_pointwise_chain(node);
      case OpKind::kMaxPool:
      case OpKind::kAveragePool:
        return lower_pool(node);
      case OpKind::kGlobalAveragePool:
        return lower_global_average_pool(node);
      case OpKind::kSoftmax:
        return lower_softmax(node);
      case OpKind::kSoftmaxExpectation:
        return lower_softmax_expectation(node);
      case OpKind::kBatchNormalization:
        return lower_batch_normalization(node);
      case OpKind::kConcat:
        return lower_concat(node);
      case OpKind::kSplit:
        return lower_split(node);
      case OpKind::kReshape:
      case OpKind::kFlatten:
      case OpKind::kSqueeze:
      case OpKind::kUnsqueeze:
      case OpKind::kIdentity:
        return lower_contiguous_copy(node);
      case OpKind::kTranspose:
      case OpKind::kSlice:
      case OpKind::kGather:
      case OpKind::kPad:
      case OpKind::kResize:
        return lower_gather(node);
      default:
        return StepsOrFallback{not_lowered("no GPU kernel for ", op_name(node.op))};
    }
  }

  // Depthwise, 1x1 and other group-1 Convs take their own kernels (unless generic_conv), the rest
  // ConvStep; all with the fuser's epilogue.
  Result<StepsOrFallback> lower_conv(const Node& node) {
    if (!all_f32(node)) return StepsOrFallback{not_lowered("Conv on a dtype other than f32")};
    const std::vector<Tensor> tensors = meta_inputs(node);
    const std::vector<const Tensor*> inputs = pointers(tensors, node);
    EF_ASSIGN_OR_RETURN(const ConvProblem p, conv_problem(node, inputs));
    // The fuser folds a MaxPool into a Conv's residual only for the CPU (FusionOptions::pooled_residuals).
    if (p.residual_pooled) return StepsOrFallback{not_lowered("Conv reading its residual through a max pool")};
    // Nor a Transpose into its output (FusionOptions::output_transposes).
    if (p.output_channels_last) return StepsOrFallback{not_lowered("Conv writing its output channels-last")};
    EF_ASSIGN_OR_RETURN(const ActivationParams activation, epilogue_activation(node));
    EF_ASSIGN_OR_RETURN(const ConvEpilogue epilogue, conv_epilogue(node.attrs));
    const WindowGeometry g = p.geometry.padded_to(3);
    const ValueId residual = input_or_none(node, 3);
    const int64_t residual_channels = residual != kNoValue ? desc(residual).shape[1] : p.out_channels;
    const auto with_epilogue = [&](auto s) {
      s.activation = activation;
      s.residual_after_activation = epilogue.residual_after_activation;
      if constexpr (std::is_same_v<decltype(s), DepthwiseConvStep>) {
        s.has_residual = residual != kNoValue;
      } else {
        s.residual_channels = residual_channels;
      }
      if constexpr (std::is_same_v<decltype(s), PointwiseConvStep> || std::is_same_v<decltype(s), ConvGemmStep>) {
        s.tensor_cores = out_.options.tensor_cores && weights_fit_half(node.inputs[1]);  // and X half: see below
      }
      return StepsOrFallback{
          std::vector{step_for(node, s, {node.inputs[0], node.inputs[1], input_or_none(node, 2), residual})}};
    };
    if (!out_.options.generic_conv) {
      if (std::optional<DepthwiseConvStep> s = depthwise_conv_step(p, g, residual_channels)) return with_epilogue(*s);
      if (std::optional<PointwiseConvStep> s = pointwise_conv_step(p, g)) return with_epilogue(*s);
      if (p.group == 1) return with_epilogue(ConvGemmStep{general_conv_step(p, g)});
    }
    return with_epilogue(general_conv_step(p, g));
  }

  // Whether Conv weights `w` are known and each splits into binary16 parts (conv_gemm.h): finite
  // and no larger in magnitude than binary16's largest value.
  bool weights_fit_half(ValueId w) const {
    if (!known(w) || known_tensor(w).dtype() != DType::kF32) return false;
    const Tensor& t = known_tensor(w);
    return std::all_of(t.data<float>(), t.data<float>() + t.numel(),
                       [](float x) { return std::isfinite(x) && std::fabs(x) <= kLargestHalf; });
  }

  // A known scalar bound of Clip (input 1: min, 2: max), or the default when absent.
  std::optional<float> clip_bound(const Node& node, size_t index, float absent) const {
    const ValueId v = input_or_none(node, index);
    if (v == kNoValue) return absent;
    if (!known(v) || known_tensor(v).numel() != 1) return std::nullopt;
    return static_cast<float>(known_tensor(v).double_at(0));
  }

  Result<StepsOrFallback> lower_unary(const Node& node) {
    if (!all_f32(node)) return StepsOrFallback{not_lowered(op_name(node.op), " on a dtype other than f32")};
    UnaryStep s;
    s.elements = desc(node.outputs[0]).numel();
    const std::optional<float> lo = clip_bound(node, 1, std::numeric_limits<float>::lowest());
    const std::optional<float> hi = clip_bound(node, 2, std::numeric_limits<float>::max());
    if (node.op == OpKind::kClip && (!lo || !hi)) {
      return StepsOrFallback{not_lowered("Clip bounds only known at run time")};
    }
    const bool leaky = node.op == OpKind::kLeakyRelu;
    const float alpha = node.attrs.get_float("alpha", leaky ? 0.01f : 0.2f);
    s.activation =
        unary_activation(node.op, alpha, node.attrs.get_float("beta", 0.5f), lo.value_or(0.0f), hi.value_or(0.0f));
    return StepsOrFallback{std::vector{step_for(node, s, {node.inputs[0]})}};
  }

  // One ChainStep: the output's broadcast strides per input, and a link per chain step.
  Result<StepsOrFallback> lower_pointwise_chain(const Node& node) {
    static_assert(kMaxChainLinks >= kMaxChainSteps && kMaxStepInputs >= kMaxChainInputs,
                  "a GPU ChainStep holds every chain the fuser makes");
    if (!all_f32(node)) return StepsOrFallback{not_lowered("PointwiseChain on a dtype other than f32")};
    const Shape& out_shape = desc(node.outputs[0]).shape;
    if (out_shape.size() > static_cast<size_t>(kMaxRank)) {
      return StepsOrFallback{not_lowered("output rank ", out_shape.size(), " exceeds ", kMaxRank)};
    }
    EF_ASSIGN_OR_RETURN(const PointwiseChain chain, pointwise_chain(node));
    // The items: the output's elements, or a window's (which X0 and the output hold alike).
    const Shape computed = chain.window ? chain_window_shape(out_shape, *chain.window) : out_shape;
    ChainStep s;
    s.rank = static_cast<int>(out_shape.size());
    s.inputs = static_cast<int>(node.inputs.size());
    s.links = static_cast<int>(chain.steps.size());
    s.windowed = chain.window.has_value();
    for (int d = 0; d < s.rank; ++d) s.dims[d] = computed[static_cast<size_t>(d)];
    for (int k = 0; k < s.inputs; ++k) {
      const std::vector<int64_t> strides =
          k == 0 && s.windowed ? broadcast_strides(out_shape, out_shape)
                               : broadcast_strides(desc(node.inputs[static_cast<size_t>(k)]).shape, computed);
      for (int d = 0; d < s.rank; ++d) s.strides[k][d] = strides[static_cast<size_t>(d)];
    }
    if (s.windowed) s.window_base = chain.window->start * s.strides[0][chain.window->axis];
    for (int l = 0; l < s.links; ++l) {
      const PointwiseChainStep& step = chain.steps[static_cast<size_t>(l)];
      ChainLink& link = s.link[l];
      link.binary = is_pointwise_binary(step.op);
      if (link.binary) {
        link.op = binary_op(step.op);
        link.operand = static_cast<int8_t>(step.operand);
        link.chain_on_right = step.chain_on_right;
        link.constant = step.alpha;
      } else {
        link.activation = unary_activation(step.op, step.alpha, step.beta, step.lo, step.hi);
      }
    }
    LoweredStep lowered;
    lowered.params = s;
    for (int k = 0; k < s.inputs; ++k) lowered.inputs[k] = operand(node.inputs[static_cast<size_t>(k)]);
    lowered.output = operand(node.outputs[0]);
    std::vector<LoweredStep> steps;
    const BufferRef& x0 = lowered.inputs[0];
    if (s.windowed && (x0.region != lowered.output.region || x0.index != lowered.output.index ||
                       x0.offset != lowered.output.offset)) {
      // Not in X0's bytes: X0 is copied whole first, the window then overwritten.
      BlockCopyStep copy;
      copy.rows = 1;
      copy.length = shape_numel(out_shape);
      steps.push_back(step_for(node, copy, {node.inputs[0]}));
    }
    steps.push_back(std::move(lowered));
    return StepsOrFallback{std::move(steps)};
  }

  Result<StepsOrFallback> lower_binary(const Node& node) {
    if (!all_f32(node)) return StepsOrFallback{not_lowered(op_name(node.op), " on a dtype other than f32")};
    const Shape& out_shape = desc(node.outputs[0]).shape;
    if (out_shape.size() > static_cast<size_t>(kMaxRank)) {
      return StepsOrFallback{not_lowered("output rank ", out_shape.size(), " exceeds ", kMaxRank)};
    }
    BinaryStep s;
    s.op = binary_op(node.op);
    const std::vector<int64_t> a = broadcast_strides(desc(node.inputs[0]).shape, out_shape);
    const std::vector<int64_t> b = broadcast_strides(desc(node.inputs[1]).shape, out_shape);
    s.rank = static_cast<int>(out_shape.size());
    for (int d = 0; d < s.rank; ++d) {
      s.dims[d] = out_shape[static_cast<size_t>(d)];
      s.strides_a[d] = a[static_cast<size_t>(d)];
      s.strides_b[d] = b[static_cast<size_t>(d)];
    }
    return StepsOrFallback{std::vector{step_for(node, s, {node.inputs[0], node.inputs[1]})}};
  }

  Result<StepsOrFallback> lower_pool(const Node& node) {
    if (!all_f32(node)) return StepsOrFallback{not_lowered(op_name(node.op), " on a dtype other than f32")};
    if (node.outputs.size() > 1 && node.outputs[1] != kNoValue) {
      return StepsOrFallback{not_lowered("MaxPool with the Indices output")};
    }
    const Tensor x = Tensor::meta(DType::kF32, desc(node.inputs[0]).shape);
    EF_ASSIGN_OR_RETURN(const PoolProblem p, pool_problem(node, x));
    const WindowGeometry g = p.geometry.padded_to(3);
    PoolStep s;
    s.average = node.op == OpKind::kAveragePool;
    s.count_include_pad = node.attrs.get_int("count_include_pad", 0) != 0;
    s.planes = p.batch * p.channels;
    copy_window(g, s);
    for (int a = 0; a < 3; ++a) s.pad_end[a] = g.pad_end[a];
    return StepsOrFallback{std::vector{step_for(node, s, {node.inputs[0]})}};
  }

  Result<StepsOrFallback> lower_global_average_pool(const Node& node) {
    if (!all_f32(node)) return StepsOrFallback{not_lowered("GlobalAveragePool on a dtype other than f32")};
    const Shape& shape = desc(node.inputs[0]).shape;
    PlaneMeanStep s;
    s.planes = shape[0] * shape[1];
    s.plane_size = s.planes == 0 ? 0 : shape_numel(shape) / s.planes;
    return StepsOrFallback{std::vector{step_for(node, s, {node.inputs[0]})}};
  }

  // The [outer, length, inner] view of runtime/ops/softmax.cpp: opset 13 normalises along `axis`;
  // nodes imported from older opsets (legacy_flatten = 1) normalise over all dims from `axis` on.
  Result<StepsOrFallback> lower_softmax(const Node& node) {
    if (!all_f32(node)) return StepsOrFallback{not_lowered("Softmax on a dtype other than f32")};
    const Shape& shape = desc(node.inputs[0]).shape;
    const bool legacy = node.attrs.get_int("legacy_flatten", 0) == 1;
    const auto rank = static_cast<int64_t>(shape.size());
    int64_t axis = node.attrs.get_int("axis", legacy ? 1 : -1);
    if (axis < -rank || axis >= rank) return invalid_model("Softmax axis ", axis, " is out of range for rank ", rank);
    if (axis < 0) axis += rank;
    const std::span<const int64_t> dims(shape);
    SoftmaxStep s;
    s.outer = shape_numel(dims.first(static_cast<size_t>(axis)));
    s.length = legacy ? shape_numel(dims.subspan(static_cast<size_t>(axis))) : shape[static_cast<size_t>(axis)];
    s.inner = legacy ? 1 : shape_numel(dims.subspan(static_cast<size_t>(axis) + 1));
    if (s.length == 0 || s.inner == 0) s.outer = 0;  // nothing to normalise
    return StepsOrFallback{std::vector{step_for(node, s, {node.inputs[0]})}};
  }

  // The fuser's SoftmaxExpectation with known weights and bias, on the [outer, length, inner] view.
  Result<StepsOrFallback> lower_softmax_expectation(const Node& node) {
    if (!all_f32(node)) return StepsOrFallback{not_lowered("SoftmaxExpectation on a dtype other than f32")};
    const ValueId bias = input_or_none(node, 2);
    if (!known(node.inputs[1]) || (bias != kNoValue && !known(bias))) {
      return StepsOrFallback{not_lowered("SoftmaxExpectation with weights or bias not constant")};
    }
    const Shape& shape = desc(node.inputs[0]).shape;
    const auto rank = static_cast<int64_t>(shape.size());
    int64_t axis = node.attrs.get_int("axis", 0);
    if (axis < -rank || axis >= rank) {
      return invalid_model("SoftmaxExpectation axis ", axis, " is out of range for rank ", rank);
    }
    if (axis < 0) axis += rank;
    const std::span<const int64_t> dims(shape);
    SoftmaxExpectationStep s;
    s.outer = shape_numel(dims.first(static_cast<size_t>(axis)));
    s.length = shape[static_cast<size_t>(axis)];
    s.inner = shape_numel(dims.subspan(static_cast<size_t>(axis) + 1));
    s.bias = bias != kNoValue ? static_cast<float>(known_tensor(bias).double_at(0)) : 0.0f;
    if (s.length == 0 || s.inner == 0) s.outer = 0;
    return StepsOrFallback{std::vector{step_for(node, s, {node.inputs[0], node.inputs[1]})}};
  }

  // Inference-mode BatchNormalization with known statistics: one scale and shift per channel,
  // computed in double as the reference kernel does.
  Result<StepsOrFallback> lower_batch_normalization(const Node& node) {
    if (!all_f32(node) || node.inputs.size() < 5) {
      return StepsOrFallback{not_lowered("BatchNormalization on a dtype other than f32")};
    }
    for (size_t i = 1; i < 5; ++i) {
      if (!known(node.inputs[i])) return StepsOrFallback{not_lowered("BatchNormalization statistics not constant")};
    }
    if (node.attrs.get_int("training_mode", 0) != 0) {
      return StepsOrFallback{not_lowered("BatchNormalization in training mode")};
    }
    const Shape& shape = desc(node.inputs[0]).shape;
    if (shape.size() < 2) return StepsOrFallback{not_lowered("BatchNormalization input of rank < 2")};
    const int64_t channels = shape[1];
    const double epsilon = node.attrs.get_float("epsilon", 1e-5f);
    std::vector<float> scale(static_cast<size_t>(channels));
    std::vector<float> shift(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) {
      const double multiplier =
          known_tensor(node.inputs[1]).double_at(c) / std::sqrt(known_tensor(node.inputs[4]).double_at(c) + epsilon);
      scale[static_cast<size_t>(c)] = static_cast<float>(multiplier);
      shift[static_cast<size_t>(c)] = static_cast<float>(known_tensor(node.inputs[2]).double_at(c) -
                                                         known_tensor(node.inputs[3]).double_at(c) * multiplier);
    }
    ChannelAffineStep s;
    s.elements = shape_numel(shape);
    s.channels = channels;
    s.inner = shape_numel(std::span(shape).subspan(2));
    LoweredStep step = step_for(node, s, {node.inputs[0]});
    step.inputs[1] = add_constant(scale.data(), scale.size() * sizeof(float));
    step.inputs[2] = add_constant(shift.data(), shift.size() * sizeof(float));
    return StepsOrFallback{std::vector{std::move(step)}};
  }

  // One block copy per input into its part of the output.
  Result<StepsOrFallback> lower_concat(const Node& node) {
    const TensorDesc& out = desc(node.outputs[0]);
    const int64_t axis = normalized_axis(node, out.shape.size());
    std::vector<LoweredStep> steps;
    int64_t at = 0;
    for (ValueId input : node.inputs) {
      const int64_t part = desc(input).shape[static_cast<size_t>(axis)];
      const BlockCopyStep s = part_copy(out, axis, part, at, true);
      at += part;
      if (s.count() > 0) steps.push_back(step_for(node, s, {input}));
    }
    return StepsOrFallback{std::move(steps)};
  }

  // One block copy per output out of its part of the input.
  Result<StepsOrFallback> lower_split(const Node& node) {
    const TensorDesc& in = desc(node.inputs[0]);
    const int64_t axis = normalized_axis(node, in.shape.size());
    std::vector<LoweredStep> steps;
    int64_t at = 0;
    for (ValueId output : node.outputs) {
      if (output == kNoValue) continue;
      const int64_t part = desc(output).shape[static_cast<size_t>(axis)];
      const BlockCopyStep s = part_copy(in, axis, part, at, false);
      at += part;
      LoweredStep step;
      step.params = s;
      step.inputs[0] = operand(node.inputs[0]);
      step.output = operand(output);
      if (s.count() > 0) steps.push_back(std::move(step));
    }
    return StepsOrFallback{std::move(steps)};
  }

  Result<StepsOrFallback> lower_contiguous_copy(const Node& node) {
    const TensorDesc& out = desc(node.outputs[0]);
    BlockCopyStep s;
    s.element_bytes = static_cast<int>(dtype_size(out.dtype));
    s.rows = 1;
    s.length = out.numel();
    std::vector<LoweredStep> steps;
    if (s.count() > 0) steps.push_back(step_for(node, s, {node.inputs[0]}));
    return StepsOrFallback{std::move(steps)};
  }

  // Ops that only move elements: the CPU reference kernel runs once on the element numbers
  // (1-based, so Pad's fill of 0 reads as "no source") and its output is the gather map.
  Result<StepsOrFallback> lower_gather(const Node& node) {
    if (node.op == OpKind::kTranspose && node.attrs.has(kTransposeConcatAxis)) return lower_transpose_of_concat(node);
    const ValueId data = node.inputs[0];
    const TensorDesc& in = desc(data);
    const TensorDesc& out = desc(node.outputs[0]);
    if (node.outputs.size() != 1) return StepsOrFallback{not_lowered(op_name(node.op), " with several outputs")};
    if (node.op == OpKind::kResize && node.attrs.get_string("mode", "nearest") != "nearest") {
      return StepsOrFallback{not_lowered("Resize in mode '", node.attrs.get_string("mode", ""), "'")};
    }
    for (size_t i = 1; i < node.inputs.size(); ++i) {
      if (node.inputs[i] != kNoValue && !known(node.inputs[i])) {
        return StepsOrFallback{not_lowered(op_name(node.op), " input ", i, " only known at run time")};
      }
    }
    std::vector<Tensor> tensors = meta_inputs(node);
    Tensor numbers = Tensor::empty(DType::kI64, in.shape);
    int64_t* number = numbers.data<int64_t>();
    for (int64_t i = 0; i < numbers.numel(); ++i) number[i] = i + 1;
    tensors[0] = numbers;
    uint64_t fill = 0;
    if (node.op == OpKind::kPad && node.inputs.size() > 2 && node.inputs[2] != kNoValue) {
      const Tensor& value = known_tensor(node.inputs[2]);
      if (value.numel() != 1 || value.nbytes() > sizeof(fill)) {
        return StepsOrFallback{not_lowered("Pad constant_value is not one element")};
      }
      std::memcpy(&fill, value.raw_data(), value.nbytes());
      tensors[2] = Tensor::scalar<int64_t>(0);
    }
    Tensor map = Tensor::empty(DType::kI64, out.shape);
    Tensor* map_output = &map;
    const std::vector<const Tensor*> inputs = pointers(tensors, node);
    EF_RETURN_IF_ERROR(op_def(node.op).reference(KernelArgs{node, inputs, std::span(&map_output, 1), nullptr}));
    if (numbers.numel() > INT32_MAX)
      return StepsOrFallback{not_lowered(op_name(node.op), " input beyond 2^31 elements")};
    std::vector<int32_t> from(static_cast<size_t>(map.numel()));
    for (size_t i = 0; i < from.size(); ++i) from[i] = static_cast<int32_t>(map.data<int64_t>()[i] - 1);
    GatherStep s;
    s.element_bytes = static_cast<int>(dtype_size(out.dtype));
    s.elements = out.numel();
    s.fill = fill;
    LoweredStep step = step_for(node, s, {data});
    step.inputs[1] = add_constant(from.data(), from.size() * sizeof(int32_t));
    std::vector<LoweredStep> steps;
    if (s.count() > 0) steps.push_back(std::move(step));
    return StepsOrFallback{std::move(steps)};
  }

  // A Transpose of a fused Concat (kTransposeConcatAxis): a gather of each input's own
  // permutation into its blocks of the output: one block per input, as the fuser folds it, or one
  // per input and outer index (the output's dims before the concatenated axis) once a batch was
  // made dynamic (models/detector/batching.h). When the inputs all live in the arena, stored alike,
  // one gather reads them all (its indices count from the first of them in the arena): one kernel
  // for YOLOX's head instead of one per level and image.
  Result<StepsOrFallback> lower_transpose_of_concat(const Node& node) {
    const TensorDesc& out = desc(node.outputs[0]);
    const size_t rank = out.shape.size();
    EF_ASSIGN_OR_RETURN(const std::vector<int64_t> perm, transpose_permutation(node.attrs, static_cast<int>(rank)));
    EF_ASSIGN_OR_RETURN(const int axis, normalize_axis(node.attrs.get_int(kTransposeConcatAxis, 0),
                                                       static_cast<int>(rank), kTransposeConcatAxis));
    const size_t moved_to = transposed_position(perm, axis);  // the outer dims are the output's [0, moved_to)
    int64_t block = 1;                                        // output elements per index of the concatenated axis
    for (size_t d = moved_to + 1; d < rank; ++d) block *= out.shape[d];
    int64_t outer = 1;
    for (size_t d = 0; d < moved_to; ++d) outer *= out.shape[d];
    const int64_t outer_stride = out.shape[moved_to] * block;  // output elements per outer index
    const BufferRef output = operand(node.outputs[0]);
    const int64_t stored_bytes = output.half ? 2 : static_cast<int64_t>(dtype_size(out.dtype));
    // Per input, by odometers over its dims permuted with its strides: the input element at each
    // position of one block (the dims from moved_to on), and each outer index's first element.
    struct Blocks {
      std::vector<int32_t> inner;
      std::vector<int64_t> starts;
    };
    const auto odometer = [](std::span<const int64_t> dims, std::span<const int64_t> strides, auto&& visit) {
      std::vector<int64_t> index(dims.size(), 0);
      int64_t offset = 0;
      const int64_t count = shape_numel(Shape(dims.begin(), dims.end()));
      for (int64_t i = 0; i < count; ++i) {
        visit(offset);
        for (size_t d = dims.size(); d-- > 0;) {
          offset += strides[d];
          if (++index[d] < dims[d]) break;
          offset -= index[d] * strides[d];
          index[d] = 0;
        }
      }
    };
    std::vector<Blocks> blocks;
    for (ValueId input : node.inputs) {
      const Shape& in = desc(input).shape;
      if (shape_numel(in) > INT32_MAX) return StepsOrFallback{not_lowered("Transpose input beyond 2^31 elements")};
      Shape part(rank);
      std::vector<int64_t> strides(rank), in_strides(rank, 1);
      for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * in[d];
      for (size_t d = 0; d < rank; ++d) {
        part[d] = in[static_cast<size_t>(perm[d])];
        strides[d] = in_strides[static_cast<size_t>(perm[d])];
      }
      Blocks b;
      odometer(std::span(part).subspan(moved_to), std::span(strides).subspan(moved_to),
               [&](int64_t offset) { b.inner.push_back(static_cast<int32_t>(offset)); });
      odometer(std::span(part).first(moved_to), std::span(strides).first(moved_to),
               [&](int64_t offset) { b.starts.push_back(offset); });
      blocks.push_back(std::move(b));
    }
    // Outer index first, then input: each part's block follows the previous one in the output.
    std::vector<Part> parts;
    for (int64_t o = 0; o < outer; ++o) {
      int64_t at = 0;
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        const ValueId input = node.inputs[i];
        std::vector<int32_t> from = blocks[i].inner;
        const int64_t start = blocks[i].starts[static_cast<size_t>(o)];
        for (int32_t& f : from) f = static_cast<int32_t>(f + start);
        GatherStep s;
        s.element_bytes = static_cast<int>(dtype_size(out.dtype));
        s.elements = static_cast<int64_t>(from.size());
        LoweredStep step = step_for(node, s, {input});
        step.output.offset += (o * outer_stride + at * block) * stored_bytes;
        at += desc(input).shape[static_cast<size_t>(axis)];
        if (s.count() > 0) parts.push_back(Part{std::move(step), std::move(from)});
      }
    }
    std::vector<LoweredStep> steps;
    if (std::optional<LoweredStep> joined = one_gather(parts)) {
      steps.push_back(std::move(*joined));
    } else {
      for (Part& part : parts) {
        part.step.inputs[1] = add_constant(part.from.data(), part.from.size() * sizeof(int32_t));
        steps.push_back(std::move(part.step));
      }
    }
    return StepsOrFallback{std::move(steps)};
  }

  // The gathers of a Transpose of a Concat as one, where their inputs are arena values stored
  // alike (their offsets then differ by whole elements) and their blocks follow one another in the
  // output; nullopt otherwise.
  struct Part {
    LoweredStep step;
    std::vector<int32_t> from;  // per output element of the block: the input element (its map, not yet a constant)
  };
  std::optional<LoweredStep> one_gather(const std::vector<Part>& parts) {
    if (parts.size() < 2) return std::nullopt;
    const BufferRef& first = parts.front().step.inputs[0];
    const int64_t value_bytes = std::get<GatherStep>(parts.front().step.params).element_bytes;
    const int64_t element = first.half ? 2 : value_bytes;  // as the inputs are stored
    int64_t base = first.offset;
    for (const Part& part : parts) {
      const BufferRef& in = part.step.inputs[0];
      if (in.region != Region::kArena || in.half != first.half || (in.offset - first.offset) % element != 0) {
        return std::nullopt;
      }
      base = std::min(base, in.offset);
    }
    std::vector<int32_t> from;
    int64_t expected_output = parts.front().step.output.offset;
    for (const Part& part : parts) {
      if (part.step.output.offset != expected_output) return std::nullopt;
      const int64_t shift = (part.step.inputs[0].offset - base) / element;
      for (int32_t f : part.from) {
        if (f + shift > INT32_MAX) return std::nullopt;
        from.push_back(static_cast<int32_t>(f + shift));
      }
      expected_output += static_cast<int64_t>(part.from.size()) * (part.step.output.half ? 2 : value_bytes);
    }
    LoweredStep joined = parts.front().step;
    joined.inputs[0].offset = base;
    std::get<GatherStep>(joined.params).elements = static_cast<int64_t>(from.size());
    joined.inputs[1] = add_constant(from.data(), from.size() * sizeof(int32_t));
    return joined;
  }

  const Graph& graph_;
  LoweredPlan& out_;
  const MemoryPlan& plan_;
  bool fp16_;
};

}  // namespace

int LoweredPlan::fallback_count() const {
  int count = 0;
  for (const LoweredStep& step : steps) count += step.is_fallback() ? 1 : 0;
  return count;
}

std::vector<std::string> LoweredPlan::describe_fallbacks(const Graph& graph) const {
  std::vector<std::string> lines;
  for (const LoweredStep& step : steps) {
    if (const auto* fallback = std::get_if<CpuFallbackStep>(&step.params)) {
      lines.push_back(make_message(graph.describe_node(step.node), ": ", fallback->reason));
    }
  }
  return lines;
}

Result<LoweredPlan> lower_plan(const Graph& graph, MemoryPlan plan, const LoweringOptions& options) {
  LoweredPlan lowered;
  lowered.plan = std::move(plan);
  lowered.options = options;
  EF_RETURN_IF_ERROR(Lowerer(graph, lowered).lower());
  return lowered;
}

}  // namespace edgefuse::gpu
