// Concat, Split, Slice, Transpose, Gather and Pad: ops that move elements without arithmetic.
// Every kernel works on raw bytes of dtype_size() elements, so all dtypes share one code path.
#include <algorithm>
#include <climits>
#include <cstring>
#include <numeric>
#include <optional>

#include "runtime/ops/axes.h"
#include "runtime/ops/kernel_setup.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/strided_copy.h"

namespace edgefuse {

namespace {

int64_t product(std::span<const int64_t> dims, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t d = begin; d < end; ++d) n *= dims[d];
  return n;
}

unsigned char* bytes(Tensor& t) {
  return static_cast<unsigned char*>(t.raw_data());
}
const unsigned char* bytes(const Tensor& t) {
  return static_cast<const unsigned char*>(t.raw_data());
}

}  // namespace

// ---- Concat ---------------------------------------------------------------------------------

namespace {

// The description of `inputs` concatenated on `axis_attribute` (Concat, and a Transpose that
// fuses one).
Result<TensorDesc> concatenation(std::span<const Tensor* const> inputs, int64_t axis_attribute) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == nullptr) return invalid_argument("input ", i, " is missing");
  }
  const Tensor& first = *inputs[0];
  EF_ASSIGN_OR_RETURN(int axis, normalize_axis(axis_attribute, first.rank(), "axis"));
  Shape shape = first.shape();
  shape[static_cast<size_t>(axis)] = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& in = *inputs[i];
    if (in.dtype() != first.dtype()) {
      return invalid_argument("input ", i, " is ", dtype_name(in.dtype()), ", input 0 is ", dtype_name(first.dtype()));
    }
    bool same = in.rank() == first.rank();
    for (int d = 0; same && d < first.rank(); ++d) same = d == axis || in.dim(d) == first.dim(d);
    if (!same) {
      return invalid_argument("input ", i, " has shape ", shape_to_string(in.shape()), ", incompatible with input 0 ",
                              shape_to_string(first.shape()), " for concatenation on axis ", axis);
    }
    shape[static_cast<size_t>(axis)] += in.dim(axis);
  }
  return TensorDesc{first.dtype(), std::move(shape)};
}

}  // namespace

Status infer_concat(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  if (!node.attrs.has("axis")) return invalid_model("attribute 'axis' is required");
  EF_ASSIGN_OR_RETURN(TensorDesc desc, concatenation(inputs, node.attrs.get_int("axis", 0)));
  outputs = {std::move(desc)};
  return Status::ok();
}

Status reference_concat(const KernelArgs& args) {
  Tensor& out = *args.outputs[0];
  const int axis = normalize_axis(args.node.attrs.get_int("axis", 0), out.rank(), "axis").value();
  const size_t element_size = dtype_size(out.dtype());
  // Each input contributes one block of dims[axis:] per index of the outer dims[:axis].
  const int64_t outer = product(out.shape(), 0, static_cast<size_t>(axis));
  const int64_t out_block =
      product(out.shape(), static_cast<size_t>(axis), out.shape().size()) * static_cast<int64_t>(element_size);
  int64_t column = 0;
  for (const Tensor* in : args.inputs) {
    const int64_t block =
        product(in->shape(), static_cast<size_t>(axis), in->shape().size()) * static_cast<int64_t>(element_size);
    for (int64_t o = 0; o < outer && block > 0; ++o) {
      std::memcpy(bytes(out) + o * out_block + column, bytes(*in) + o * block, static_cast<size_t>(block));
    }
    column += block;
  }
  return Status::ok();
}

// ---- Split ----------------------------------------------------------------------------------

namespace {

// Sizes of the parts along `axis`: the `split` input, else equal parts (opset 13), or with the
// opset-18 attribute num_outputs, parts of ceil(dim / n) with a smaller last one.
Result<std::vector<int64_t>> split_sizes(const Node& node, std::span<const Tensor* const> inputs, int64_t dim) {
  const auto parts = static_cast<int64_t>(node.outputs.size());
  if (inputs.size() > 1 && inputs[1] != nullptr && inputs[1]->numel() > 0) {
    EF_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, read_constant_ints(*inputs[1], "split"));
    if (static_cast<int64_t>(sizes.size()) != parts) {
      return invalid_argument("split has ", sizes.size(), " sizes for ", parts, " outputs");
    }
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0 || s > dim) return invalid_argument("split size ", s, " out of range for an axis of size ", dim);
      total += s;
    }
    if (total != dim) return invalid_argument("split sizes sum to ", total, ", the axis has size ", dim);
    return sizes;
  }
  if (node.attrs.has("num_outputs")) {
    if (node.attrs.get_int("num_outputs", 0) != parts) {
      return invalid_model("num_outputs is ", node.attrs.get_int("num_outputs", 0), " but the node has ", parts,
                           " outputs");
    }
    const int64_t chunk = (dim + parts - 1) / parts;
    std::vector<int64_t> sizes;
    for (int64_t i = 0; i < parts; ++i) sizes.push_back(std::clamp<int64_t>(dim - i * chunk, 0, chunk));
    return sizes;
  }
  if (dim % parts != 0) {
    return invalid_argument("cannot split an axis of size ", dim, " into ", parts, " equal parts");
  }
  return std::vector<int64_t>(static_cast<size_t>(parts), dim / parts);
}

}  // namespace

Status infer_split(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  EF_RETURN_IF_ERROR(require_input(inputs, 0, "input"));
  const Tensor& in = *inputs[0];
  EF_ASSIGN_OR_RETURN(int axis, normalize_axis(node.attrs.get_int("axis", 0), in.rank(), "axis"));
  EF_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, split_sizes(node, inputs, in.dim(axis)));
  outputs.clear();
  for (int64_t size : sizes) {
    Shape shape = in.shape();
    shape[static_cast<size_t>(axis)] = size;
    outputs.push_back({in.dtype(), std::move(shape)});
  }
  return Status::ok();
}

Status reference_split(const KernelArgs& args) {
  const Tensor& in = *args.inputs[0];
  const int axis = normalize_axis(args.node.attrs.get_int("axis", 0), in.rank(), "axis").value();
  const size_t element_size = dtype_size(in.dtype());
  const int64_t outer = product(in.shape(), 0, static_cast<size_t>(axis));
  const int64_t in_block =
      product(in.shape(), static_cast<size_t>(axis), in.shape().size()) * static_cast<int64_t>(element_size);
  int64_t column = 0;
  for (Tensor* out : args.outputs) {
    const int64_t block =
        product(out->shape(), static_cast<size_t>(axis), out->shape().size()) * static_cast<int64_t>(element_size);
    for (int64_t o = 0; o < outer && block > 0; ++o) {
      std::memcpy(bytes(*out) + o * block, bytes(in) + o * in_block + column, static_cast<size_t>(block));
    }
    column += block;
  }
  return Status::ok();
}

// ---- Slice ----------------------------------------------------------------------------------

namespace {

// Clamps start/end as the ONNX spec states: negatives count from the end, then for a positive step
// start and end clamp to [0, dim]; for a negative step start clamps to [0, dim - 1], end to [-1, dim - 1].
void clamp_slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t& first, int64_t& count) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    count = end > start ? (end - start - 1) / step + 1 : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, std::max<int64_t>(dim - 1, 0));
    end = std::clamp<int64_t>(end, -1, std::max<int64_t>(dim - 1, -1));
    count = (start > end && dim > 0) ? (start - end - 1) / -step + 1 : 0;
  }
  first = count > 0 ? start : 0;
}

}  // namespace

Result<SliceGeometry> slice_geometry(std::span<const Tensor* const> inputs) {
  EF_RETURN_IF_ERROR(require_input(inputs, 0, "data"));
  EF_RETURN_IF_ERROR(require_input(inputs, 1, "starts"));
  EF_RETURN_IF_ERROR(require_input(inputs, 2, "ends"));
  const Tensor& data = *inputs[0];
  const int rank = data.rank();
  EF_ASSIGN_OR_RETURN(std::vector<int64_t> starts, read_constant_ints(*inputs[1], "starts"));
  EF_ASSIGN_OR_RETURN(std::vector<int64_t> ends, read_constant_ints(*inputs[2], "ends"));
  if (starts.size() != ends.size()) {
    return invalid_argument("starts has ", starts.size(), " values, ends has ", ends.size());
  }
  std::vector<int64_t> axes(starts.size());
  std::iota(axes.begin(), axes.end(), 0);
  if (inputs.size() > 3 && inputs[3] != nullptr) {
    EF_ASSIGN_OR_RETURN(axes, read_constant_ints(*inputs[3], "axes"));
  }
  std::vector<int64_t> steps(starts.size(), 1);
  if (inputs.size() > 4 && inputs[4] != nullptr) {
    EF_ASSIGN_OR_RETURN(steps, read_constant_ints(*inputs[4], "steps"));
  }
  if (axes.size() != starts.size() || steps.size() != starts.size()) {
    return invalid_argument("starts, ends, axes and steps must have the same length, got ", starts.size(), ", ",
                            ends.size(), ", ", axes.size(), ", ", steps.size());
  }
  EF_ASSIGN_OR_RETURN(std::vector<int> normalized, normalize_axes(axes, rank, "slice axis"));
  SliceGeometry plan{data.shape(), std::vector<int64_t>(static_cast<size_t>(rank), 0),
                     std::vector<int64_t>(static_cast<size_t>(rank), 1)};
  for (size_t i = 0; i < normalized.size(); ++i) {
    const auto axis = static_cast<size_t>(normalized[i]);
    if (steps[i] == 0) return invalid_argument("slice step for axis ", axis, " is 0");
    // Any |step| beyond the dim selects one element; bounding it keeps -step from overflowing.
    const int64_t step = std::clamp<int64_t>(steps[i], -INT64_MAX, INT64_MAX);
    clamp_slice_axis(data.shape()[axis], starts[i], ends[i], step, plan.start[axis], plan.shape[axis]);
    // With one element picked the step is irrelevant; with more, |step| < dim keeps strides in range.
    plan.step[axis] = plan.shape[axis] > 1 ? step : 1;
  }
  return plan;
}

std::optional<int64_t> slice_start_on_axis(const SliceGeometry& slice, const Shape& whole, int axis) {
  for (size_t d = 0; d < whole.size(); ++d) {
    if (static_cast<int>(d) == axis) continue;
    if (slice.start[d] != 0 || slice.shape[d] != whole[d]) return std::nullopt;
  }
  if (slice.step[static_cast<size_t>(axis)] != 1) return std::nullopt;
  return slice.start[static_cast<size_t>(axis)];
}

Status infer_slice(const Node&, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  EF_ASSIGN_OR_RETURN(SliceGeometry plan, slice_geometry(inputs));
  outputs = {TensorDesc{inputs[0]->dtype(), std::move(plan.shape)}};
  return Status::ok();
}

Status reference_slice(const KernelArgs& args) {
  EF_ASSIGN_OR_RETURN(SliceGeometry plan, slice_geometry(args.inputs));
  const Tensor& data = *args.inputs[0];
  std::vector<int64_t> strides = contiguous_strides(data.shape());
  int64_t offset = 0;
  for (size_t d = 0; d < strides.size(); ++d) {
    offset += plan.start[d] * strides[d];
    strides[d] *= plan.step[d];
  }
  copy_strided(data.raw_data(), offset, plan.shape, strides, args.outputs[0]->raw_data(), dtype_size(data.dtype()),
               args.pool);
  return Status::ok();
}

// ---- Transpose ------------------------------------------------------------------------------

Result<std::vector<int64_t>> transpose_permutation(const Attributes& attrs, int rank) {
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  std::iota(perm.rbegin(), perm.rend(), 0);
  if (!attrs.has("perm")) return perm;
  perm = attrs.get_ints("perm");
  if (static_cast<int>(perm.size()) != rank) {
    return invalid_argument("perm has ", perm.size(), " entries for an input of rank ", rank);
  }
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[static_cast<size_t>(p)]) {
      return invalid_argument("perm ", shape_to_string(perm), " is not a permutation of 0..", rank - 1);
    }
    seen[static_cast<size_t>(p)] = true;
  }
  return perm;
}

size_t transposed_position(std::span<const int64_t> perm, int64_t axis) {
  return static_cast<size_t>(std::find(perm.begin(), perm.end(), axis) - perm.begin());
}

Status infer_transpose(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  EF_RETURN_IF_ERROR(require_input(inputs, 0, "data"));
  const bool fused_concat = node.attrs.has(kTransposeConcatAxis);
  if (inputs.size() > 1 && !fused_concat) {
    return invalid_model("Transpose has ", inputs.size(), " inputs without attribute '", kTransposeConcatAxis, "'");
  }
  TensorDesc in{inputs[0]->dtype(), inputs[0]->shape()};
  if (fused_concat) {
    EF_ASSIGN_OR_RETURN(in, concatenation(inputs, node.attrs.get_int(kTransposeConcatAxis, 0)));
  }
  EF_ASSIGN_OR_RETURN(std::vector<int64_t> perm, transpose_permutation(node.attrs, static_cast<int>(in.shape.size())));
  Shape shape(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) shape[d] = in.shape[static_cast<size_t>(perm[d])];
  outputs = {TensorDesc{in.dtype, std::move(shape)}};
  return Status::ok();
}

// Each input permuted into its blocks of the output. With a fused Concat the output's dims before
// the concatenated axis (after the permutation) are its outer dims: per outer index, input i's
// block starts after the earlier inputs' parts of the concatenated axis. The fuser folds only
// Concats whose outer dims are all 1 (one block per input); a batch made dynamic afterwards
// (models/detector/batching.h) gives one block per image. Worked out once per node and input
// shapes (kernel_setup.h).
struct TransposeSetup {
  struct Part {
    StridedCopy copy;  // one block: the input's dims from the concatenated axis on, permuted
    // Per outer index: the block's first element in the input, and its first byte in the output.
    std::vector<int64_t> source_offsets;
    std::vector<int64_t> byte_offsets;
  };
  std::vector<Part> parts;
};

Result<TransposeSetup> transpose_setup(const KernelArgs& args) {
  const Tensor& out = *args.outputs[0];
  EF_ASSIGN_OR_RETURN(std::vector<int64_t> perm, transpose_permutation(args.node.attrs, out.rank()));
  const auto element_size = static_cast<int64_t>(dtype_size(out.dtype()));
  const bool fused_concat = args.node.attrs.has(kTransposeConcatAxis);
  int axis = 0;
  size_t moved_to = 0;  // the outer dims are the output's [0, moved_to)
  int64_t block = 0;    // output elements per index of the concatenated axis
  if (fused_concat) {
    axis = normalize_axis(args.node.attrs.get_int(kTransposeConcatAxis, 0), out.rank(), "axis").value();
    moved_to = transposed_position(perm, axis);
    block = product(out.shape(), moved_to + 1, out.shape().size());
  }
  const int64_t outer = product(out.shape(), 0, moved_to);
  const int64_t outer_stride = fused_concat ? out.dim(static_cast<int>(moved_to)) * block : 0;  // output elements
  TransposeSetup setup;
  int64_t at = 0;
  for (const Tensor* in : args.inputs) {
    const std::vector<int64_t> in_strides = contiguous_strides(in->shape());
    Shape shape(perm.size());
    std::vector<int64_t> strides(perm.size());
    for (size_t d = 0; d < perm.size(); ++d) {
      shape[d] = in->dim(static_cast<int>(perm[d]));
      strides[d] = in_strides[static_cast<size_t>(perm[d])];
    }
    const auto outer_dims = static_cast<std::ptrdiff_t>(moved_to);
    TransposeSetup::Part part{StridedCopy(std::span(shape).subspan(moved_to), std::span(strides).subspan(moved_to),
                                          static_cast<size_t>(element_size)),
                              {},
                              {}};
    // An odometer over the outer dims, in output order, accumulating the input's strides.
    std::vector<int64_t> index(moved_to, 0);
    int64_t source = 0;
    for (int64_t o = 0; o < outer; ++o) {
      part.source_offsets.push_back(source);
      part.byte_offsets.push_back((o * outer_stride + at * block) * element_size);
      for (std::ptrdiff_t d = outer_dims; d-- > 0;) {
        const auto u = static_cast<size_t>(d);
        source += strides[u];
        if (++index[u] < shape[u]) break;
        source -= index[u] * strides[u];
        index[u] = 0;
      }
    }
    setup.parts.push_back(std::move(part));
    if (fused_concat) at += in->dim(axis);
  }
  return setup;
}

Status reference_transpose(const KernelArgs& args) {
  std::optional<TransposeSetup> uncached;
  EF_ASSIGN_OR_RETURN(const TransposeSetup* setup, kernel_setup(args, uncached, [&] { return transpose_setup(args); }));
  for (size_t i = 0; i < setup->parts.size(); ++i) {
    const TransposeSetup::Part& part = setup->parts[i];
    for (size_t o = 0; o < part.byte_offsets.size(); ++o) {
      part.copy.run(args.inputs[i]->raw_data(), part.source_offsets[o], bytes(*args.outputs[0]) + part.byte_offsets[o],
                    args.pool);
    }
  }
  return Status::ok();
}

// ---- Gather ---------------------------------------------------------------------------------

Status infer_gather(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  EF_RETURN_IF_ERROR(require_input(inputs, 0, "data"));
  EF_RETURN_IF_ERROR(require_input(inputs, 1, "indices"));
  const Tensor& data = *inputs[0];
  const Tensor& indices = *inputs[1];
  if (indices.dtype() != DType::kI64 && indices.dtype() != DType::kI32) {
    return invalid_argument("indices must be i32 or i64, got ", dtype_name(indices.dtype()));
  }
  EF_ASSIGN_OR_RETURN(int axis, normalize_axis(node.attrs.get_int("axis", 0), data.rank(), "axis"));
  Shape shape(data.shape().begin(), data.shape().begin() + axis);
  shape.insert(shape.end(), indices.shape().begin(), indices.shape().end());
  shape.insert(shape.end(), data.shape().begin() + axis + 1, data.shape().end());
  outputs = {TensorDesc{data.dtype(), std::move(shape)}};
  return Status::ok();
}

Status reference_gather(const KernelArgs& args) {
  const Tensor& data = *args.inputs[0];
  const Tensor& indices = *args.inputs[1];
  Tensor& out = *args.outputs[0];
  const int axis = normalize_axis(args.node.attrs.get_int("axis", 0), data.rank(), "axis").value();
  const int64_t dim = data.dim(axis);
  // Negative indices wrap once; anything still outside [0, dim) is an error.
  std::vector<int64_t> rows(static_cast<size_t>(indices.numel()));
  for (int64_t i = 0; i < indices.numel(); ++i) {
    const int64_t index = indices.int_at(i);
    const int64_t wrapped = index < 0 ? index + dim : index;
    if (wrapped < 0 || wrapped >= dim) {
      return invalid_argument("index ", index, " out of range for axis ", axis, " of size ", dim);
    }
    rows[static_cast<size_t>(i)] = wrapped;
  }
  const auto size = static_cast<int64_t>(dtype_size(data.dtype()));
  const int64_t outer = product(data.shape(), 0, static_cast<size_t>(axis));
  const int64_t row_bytes = product(data.shape(), static_cast<size_t>(axis) + 1, data.shape().size()) * size;
  if (row_bytes == 0) return Status::ok();
  unsigned char* dst = bytes(out);
  for (int64_t o = 0; o < outer; ++o) {
    const unsigned char* src = bytes(data) + o * dim * row_bytes;
    for (int64_t row : rows) {
      std::memcpy(dst, src + row * row_bytes, static_cast<size_t>(row_bytes));
      dst += row_bytes;
    }
  }
  return Status::ok();
}

// ---- Pad ------------------------------------------------------------------------------------

namespace {

enum class PadMode { kConstant, kReflect, kEdge };

struct PadPlan {
  PadMode mode = PadMode::kConstant;
  std::vector<int64_t> begin;  // per axis; negative crops
  std::vector<int64_t> end;
  Shape shape;
};

Result<PadPlan> plan_pad(const Node& node, std::span<const Tensor* const> inputs) {
  EF_RETURN_IF_ERROR(require_input(inputs, 0, "data"));
  EF_RETURN_IF_ERROR(require_input(inputs, 1, "pads"));
  const Tensor& data = *inputs[0];
  PadPlan plan;
  const std::string mode = node.attrs.get_string("mode", "constant");
  if (mode == "constant") {
    plan.mode = PadMode::kConstant;
  } else if (mode == "reflect") {
    plan.mode = PadMode::kReflect;
  } else if (mode == "edge") {
    plan.mode = PadMode::kEdge;
  } else {
    return unsupported("pad mode '", mode, "' (supported: constant, reflect, edge)");
  }
  EF_ASSIGN_OR_RETURN(std::vector<int64_t> pads, read_constant_ints(*inputs[1], "pads"));
  const auto rank = static_cast<size_t>(data.rank());
  if (pads.size() != 2 * rank) {
    return invalid_argument("pads has ", pads.size(), " values, expected ", 2 * rank, " for rank ", rank);
  }
  if (inputs.size() > 2 && inputs[2] != nullptr) {
    const Tensor& value = *inputs[2];
    if (value.dtype() != data.dtype() || value.numel() > 1) {
      return invalid_argument("constant_value must be a scalar of the data's dtype ", dtype_name(data.dtype()),
                              ", got ", value.desc().to_string());
    }
  }
  plan.begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(rank));
  plan.end.assign(pads.begin() + static_cast<std::ptrdiff_t>(rank), pads.end());
  plan.shape = data.shape();
  constexpr int64_t kMaxPad = int64_t{1} << 40;  // beyond any real tensor; keeps the sums below from overflowing
  for (size_t d = 0; d < rank; ++d) {
    const int64_t dim = data.shape()[d];
    if (plan.begin[d] < -kMaxPad || plan.begin[d] > kMaxPad || plan.end[d] < -kMaxPad || plan.end[d] > kMaxPad) {
      return invalid_argument("pads ", shape_to_string(pads), " are out of range");
    }
    plan.shape[d] = dim + plan.begin[d] + plan.end[d];
    if (plan.shape[d] < 0) {
      return invalid_argument("pads ", shape_to_string(pads), " crop axis ", d, " of size ", dim, " below zero");
    }
    const int64_t kept = dim + std::min<int64_t>(plan.begin[d], 0) + std::min<int64_t>(plan.end[d], 0);
    const bool grows = plan.begin[d] > 0 || plan.end[d] > 0;
    if (grows && plan.mode != PadMode::kConstant && kept <= 0) {
      return invalid_argument(mode, " padding needs a non-empty axis, axis ", d, " has ", std::max<int64_t>(kept, 0),
                              " elements after cropping");
    }
  }
  return plan;
}

// For one axis: the source index of each output index, or -1 where the constant goes. Negative
// pads crop first; reflect and edge then read from the cropped range [lo, lo + kept).
std::vector<int64_t> pad_axis_map(PadMode mode, int64_t dim, int64_t begin, int64_t end, int64_t out_dim) {
  const int64_t lo = std::max<int64_t>(-begin, 0);
  const int64_t kept = dim - lo - std::max<int64_t>(-end, 0);
  const int64_t lead = std::max<int64_t>(begin, 0);
  std::vector<int64_t> map(static_cast<size_t>(out_dim));
  for (int64_t o = 0; o < out_dim; ++o) {
    int64_t c = o - lead;  // coordinate in the cropped range
    if (c < 0 || c >= kept) {
      if (mode == PadMode::kConstant) {
        c = -1;
      } else if (mode == PadMode::kEdge || kept == 1) {
        c = std::clamp<int64_t>(c, 0, kept - 1);
      } else {  // reflect without repeating the edge element, period 2 * (kept - 1)
        const int64_t period = 2 * (kept - 1);
        c = ((c % period) + period) % period;
        if (c >= kept) c = period - c;
      }
    }
    map[static_cast<size_t>(o)] = c < 0 ? -1 : lo + c;
  }
  return map;
}

}  // namespace

Status infer_pad(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  EF_ASSIGN_OR_RETURN(PadPlan plan, plan_pad(node, inputs));
  outputs = {TensorDesc{inputs[0]->dtype(), std::move(plan.shape)}};
  return Status::ok();
}

Status reference_pad(const KernelArgs& args) {
  EF_ASSIGN_OR_RETURN(PadPlan plan, plan_pad(args.node, args.inputs));
  const Tensor& data = *args.inputs[0];
  Tensor& out = *args.outputs[0];
  const size_t size = dtype_size(data.dtype());
  const auto rank = static_cast<size_t>(data.rank());
  std::vector<unsigned char> fill(size, 0);
  if (args.inputs.size() > 2 && args.inputs[2] != nullptr && args.inputs[2]->numel() == 1) {
    std::memcpy(fill.data(), args.inputs[2]->raw_data(), size);
  }
  if (out.numel() == 0) return Status::ok();
  if (rank == 0) {
    std::memcpy(bytes(out), bytes(data), size);
    return Status::ok();
  }
  std::vector<std::vector<int64_t>> maps(rank);
  for (size_t d = 0; d < rank; ++d) {
    maps[d] = pad_axis_map(plan.mode, data.shape()[d], plan.begin[d], plan.end[d], plan.shape[d]);
  }
  const std::vector<int64_t> strides = contiguous_strides(data.shape());
  const std::vector<int64_t>& inner_map = maps.back();
  const int64_t inner = plan.shape.back();
  const int64_t rows = out.numel() / inner;
  std::vector<int64_t> index(rank - 1, 0);  // odometer over the output's outer dims
  unsigned char* dst = bytes(out);
  for (int64_t row = 0; row < rows; ++row) {
    int64_t offset = 0;
    bool constant_row = false;
    for (size_t d = 0; d + 1 < rank; ++d) {
      const int64_t source = maps[d][static_cast<size_t>(index[d])];
      constant_row = constant_row || source < 0;
      offset += source * strides[d];
    }
    for (int64_t i = 0; i < inner; ++i, dst += size) {
      const int64_t source = inner_map[static_cast<size_t>(i)];
      const unsigned char* from =
          (constant_row || source < 0) ? fill.data() : bytes(data) + (offset + source) * static_cast<int64_t>(size);
      std::memcpy(dst, from, size);
    }
    for (size_t d = rank - 1; d-- > 0;) {
      if (++index[d] < plan.shape[d]) break;
      index[d] = 0;
    }
  }
  return Status::ok();
}

}  // namespace edgefuse
