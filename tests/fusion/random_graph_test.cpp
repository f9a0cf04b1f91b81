// Property test: random small graphs (chains of Conv, BatchNormalization or a channel scale and shift, activations,
// SiLU, Add (also after an activated Conv, YOLOX's shortcut), runs of pointwise ops, Concat, MaxPool, Identity,
// constant subexpressions, Focus stems (space-to-depth + Conv), SPP blocks, channels-last heads, and tensors cut into
// pieces, some changed, and joined again, with random shapes and constant weights; intermediate values sometimes
// graph outputs) give the same outputs after optimize_graph as before, with both kernel sets. Seeded, so a failure
// names its case.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <random>
#include <vector>

#include "fusion/pass_manager.h"
#include "tests/fusion/fusion_test_graphs.h"

namespace edgefuse::test {
namespace {

struct Current {
  ValueId value;
  Shape shape;  // [1, C, H, W]
};

int64_t pick(std::mt19937& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

ValueId add_activation(GraphMaker& m, ValueId x, std::mt19937& rng) {
  switch (pick(rng, 0, 7)) {
    case 0:
      return m.node(OpKind::kRelu, {x});
    case 7: {  // HardSwish as PyTorch exports it before opset 14, or spelt out with Clip
      if (pick(rng, 0, 1) == 0) {
        Attributes sixth;
        sixth.set("alpha", 1.0f / 6.0f);
        return m.node(OpKind::kMul, {x, m.node(OpKind::kHardSigmoid, {x}, sixth)});
      }
      const ValueId shifted = m.node(OpKind::kAdd, {x, m.constant(Tensor::scalar<float>(3.0f))});
      const ValueId c = m.node(
          OpKind::kClip, {shifted, m.constant(Tensor::scalar<float>(0.0f)), m.constant(Tensor::scalar<float>(6.0f))});
      return m.node(OpKind::kDiv, {m.node(OpKind::kMul, {x, c}), m.constant(Tensor::scalar<float>(6.0f))});
    }
    case 1: {
      Attributes a;
      a.set("alpha", 0.1f);
      return m.node(OpKind::kLeakyRelu, {x}, a);
    }
    case 2:
      return m.node(OpKind::kSigmoid, {x});
    case 3:
      return m.node(OpKind::kHardSwish, {x});
    case 4:
      return m.node(OpKind::kHardSigmoid, {x});
    case 5:
      return m.node(OpKind::kClip,
                    {x, m.constant(Tensor::scalar<float>(-0.5f)), m.constant(Tensor::scalar<float>(0.8f))});
    default:
      return m.node(OpKind::kMul, {x, m.node(OpKind::kSigmoid, {x})});  // SiLU
  }
}

// One pointwise op on `cur` that keeps values bounded: unary ops, and binary ones whose other
// operand is a per-channel or scalar constant (divisors and factors in [0.5, 1.5]) or an earlier
// value of the same shape.
ValueId add_pointwise(GraphMaker& m, const Current& cur, const std::vector<Current>& history, std::mt19937& rng) {
  const int64_t c = cur.shape[1];
  const auto per_channel = [&] { return m.random_constant({c, 1, 1}, rng, 0.5, 1.5); };
  switch (pick(rng, 0, 8)) {
    case 0:
      return m.node(OpKind::kTanh, {cur.value});
    case 1:
      return m.node(OpKind::kMul, {per_channel(), cur.value});
    case 2:
      return m.node(OpKind::kAdd, {cur.value, m.constant(Tensor::scalar<float>(0.25f))});
    case 3:
      return m.node(OpKind::kSub, {m.constant(Tensor::scalar<float>(0.5f)), cur.value});
    case 4:
      return m.node(OpKind::kDiv, {cur.value, per_channel()});
    case 5:
      return m.node(OpKind::kPRelu, {cur.value, m.random_constant({c, 1, 1}, rng, 0.0, 0.5)});
    case 6:
      for (const Current& h : history) {
        if (h.shape == cur.shape && h.value != cur.value) return m.node(OpKind::kMul, {cur.value, h.value});
      }
      return m.node(OpKind::kMul, {cur.value, cur.value});
    default:
      return add_activation(m, cur.value, rng);
  }
}

Current add_conv(GraphMaker& m, const Current& in, std::mt19937& rng) {
  const int64_t channels = in.shape[1];
  const bool depthwise = channels > 1 && pick(rng, 0, 3) == 0;
  const int64_t out_channels = depthwise ? channels : pick(rng, 1, 8);
  const int64_t kernel = pick(rng, 0, 1) == 0 ? 1 : 3;
  const int64_t stride = in.shape[2] >= 4 && in.shape[3] >= 4 && pick(rng, 0, 3) == 0 ? 2 : 1;
  const int64_t pad = kernel / 2;
  const int64_t group = depthwise ? channels : 1;
  const double bound = 1.5 / std::sqrt(static_cast<double>(channels / group * kernel * kernel));
  std::vector<ValueId> inputs = {
      in.value, m.random_constant({out_channels, channels / group, kernel, kernel}, rng, -bound, bound)};
  if (pick(rng, 0, 1) == 1) inputs.push_back(m.random_constant({out_channels}, rng, -0.5, 0.5));
  Attributes attrs;
  attrs.set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  attrs.set("strides", std::vector<int64_t>{stride, stride});
  attrs.set("group", group);
  const int64_t h = (in.shape[2] + 2 * pad - kernel) / stride + 1;
  const int64_t w = (in.shape[3] + 2 * pad - kernel) / stride + 1;
  return {m.node(OpKind::kConv, inputs, attrs), {1, out_channels, h, w}};
}

// One random graph; `history` holds every value so far for Add/Concat partners.
Graph random_graph(std::mt19937& rng) {
  GraphMaker m;
  Current cur{kNoValue, {1, pick(rng, 1, 6), pick(rng, 3, 10), pick(rng, 3, 10)}};
  cur.value = m.input(cur.shape);
  std::vector<Current> history = {cur};
  const int64_t steps = pick(rng, 2, 7);
  for (int64_t step = 0; step < steps; ++step) {
    const int64_t c = cur.shape[1];
    switch (pick(rng, 0, 19)) {
      case 0:
      case 1:
      case 2:
        cur = add_conv(m, cur, rng);
        break;
      case 3:  // a BatchNormalization after the Conv, or the scale and shift an exporter left of one
        cur = add_conv(m, cur, rng);
        if (pick(rng, 0, 1) == 0) {
          cur.value = m.node(
              OpKind::kBatchNormalization,
              {cur.value, m.random_constant({cur.shape[1]}, rng, 0.5, 1.5), m.random_constant({cur.shape[1]}, rng),
               m.random_constant({cur.shape[1]}, rng), m.random_constant({cur.shape[1]}, rng, 0.2, 2.0)});
        } else {
          cur.value = m.node(OpKind::kMul, {cur.value, m.random_constant({1, cur.shape[1], 1, 1}, rng, 0.5, 1.5)});
          cur.value = m.node(OpKind::kAdd, {m.random_constant({cur.shape[1], 1, 1}, rng), cur.value});
        }
        break;
      case 4:
        cur.value = add_activation(m, cur.value, rng);
        break;
      case 5: {  // residual Add with an earlier value of the same shape, or a folded constant
        ValueId partner = kNoValue;
        for (const Current& h : history) {
          if (h.shape == cur.shape && h.value != cur.value) partner = h.value;
        }
        if (partner == kNoValue) {
          partner = m.node(OpKind::kMul, {m.random_constant({c, 1, 1}, rng), m.random_constant({c, 1, 1}, rng)});
        }
        cur.value = m.node(OpKind::kAdd, {cur.value, partner});
        break;
      }
      case 6: {  // Concat on channels with an earlier value of the same spatial size (or itself)
        Current partner = cur;
        for (const Current& h : history) {
          if (h.shape[2] == cur.shape[2] && h.shape[3] == cur.shape[3]) partner = h;
        }
        Attributes axis;
        axis.set("axis", int64_t{1});
        cur.value = m.node(OpKind::kConcat, {cur.value, partner.value}, axis);
        cur.shape[1] += partner.shape[1];
        break;
      }
      case 7: {
        Attributes attrs;
        const bool halve = cur.shape[2] >= 2 && cur.shape[3] >= 2 && pick(rng, 0, 1) == 0;
        attrs.set("kernel_shape", std::vector<int64_t>{halve ? 2 : 3, halve ? 2 : 3});
        attrs.set("strides", std::vector<int64_t>{halve ? 2 : 1, halve ? 2 : 1});
        attrs.set("pads", std::vector<int64_t>(4, halve ? 0 : 1));
        cur.value = m.node(OpKind::kMaxPool, {cur.value}, attrs);
        if (halve) cur.shape = {1, c, cur.shape[2] / 2, cur.shape[3] / 2};
        break;
      }
      case 8:
        cur.value = m.node(OpKind::kIdentity, {cur.value});
        break;
      case 15: {  // BlazeFace's downsampling block: depthwise 3x3 / 2, a 1x1 Conv, plus the block's
                  // input max-pooled 2 x 2 as the shortcut
        if (cur.shape[2] % 2 != 0 || cur.shape[3] % 2 != 0) break;
        Attributes depthwise;
        depthwise.set("pads", std::vector<int64_t>{1, 1, 1, 1});
        depthwise.set("strides", std::vector<int64_t>{2, 2});
        depthwise.set("group", c);
        const ValueId taps = m.node(OpKind::kConv, {cur.value, m.random_constant({c, 1, 3, 3}, rng)}, depthwise);
        const ValueId mixed = m.node(
            OpKind::kConv, {taps, m.random_constant({c, c, 1, 1}, rng), m.random_constant({c}, rng)}, Attributes{});
        Attributes pool;
        pool.set("kernel_shape", std::vector<int64_t>{2, 2});
        pool.set("strides", std::vector<int64_t>{2, 2});
        cur.value = m.node(OpKind::kAdd, {mixed, m.node(OpKind::kMaxPool, {cur.value}, pool)});
        cur.shape = {1, c, cur.shape[2] / 2, cur.shape[3] / 2};
        break;
      }
      case 9:
        cur = add_conv(m, cur, rng);
        cur.value = add_activation(m, cur.value, rng);
        break;
      case 13: {  // a run of pointwise ops with per-channel, scalar and earlier same-shaped operands
        for (int64_t op = pick(rng, 2, 5); op > 0; --op) cur.value = add_pointwise(m, cur, history, rng);
        break;
      }
      case 11: {  // Focus stem: space-to-depth (phases in a random order) and a Conv
        if (cur.shape[2] % 2 != 0 || cur.shape[3] % 2 != 0) break;
        StridePhase order[4] = {kFocusOrder[0], kFocusOrder[1], kFocusOrder[2], kFocusOrder[3]};
        std::shuffle(std::begin(order), std::end(order), rng);
        const ValueId stacked = space_to_depth(m, cur.value, order, static_cast<StemSlices>(pick(rng, 0, 2)));
        cur = add_conv(m, {stacked, {1, 4 * c, cur.shape[2] / 2, cur.shape[3] / 2}}, rng);
        break;
      }
      case 14: {  // a detector head's tail, as an extra output: levels flattened, joined on the cells,
                  // transposed (to [1, cells, c], which the fuser folds, or to [c, cells, 1], which
                  // it must not)
        std::vector<ValueId> levels;
        for (const Current& h : history) {
          if (h.shape[1] != c || (levels.size() >= 1 && pick(rng, 0, 1) == 0)) continue;
          const int64_t plane = h.shape[2] * h.shape[3];
          levels.push_back(
              m.node(OpKind::kReshape, {h.value, m.constant(Tensor::from_vector<int64_t>({3}, {1, c, plane}))}));
        }
        if (levels.size() < 2) levels.push_back(levels.front());
        Attributes on_cells;
        on_cells.set("axis", int64_t{2});
        Attributes perm;
        perm.set("perm", pick(rng, 0, 1) == 0 ? std::vector<int64_t>{0, 2, 1} : std::vector<int64_t>{1, 2, 0});
        m.output(m.node(OpKind::kTranspose, {m.node(OpKind::kConcat, levels, on_cells)}, perm));
        break;
      }
      case 16: {  // a BlazeFace-style head, as an extra output: a 1x1 Conv (activated or not),
                  // transposed channels-last and flattened to [1, cells, m], which the fuser makes
                  // one Conv writing into the output
        const int64_t out_channels = pick(rng, 1, 20), cells = cur.shape[2] * cur.shape[3];
        ValueId head = m.node(OpKind::kConv, {cur.value, m.random_constant({out_channels, c, 1, 1}, rng),
                                              m.random_constant({out_channels}, rng)});
        if (pick(rng, 0, 1) == 0) head = add_activation(m, head, rng);
        Attributes perm;
        perm.set("perm", std::vector<int64_t>{0, 2, 3, 1});
        m.output(m.node(OpKind::kReshape, {m.node(OpKind::kTranspose, {head}, perm),
                                           m.constant(Tensor::from_vector<int64_t>({3}, {1, cells, out_channels}))}));
        break;
      }
      case 17: {  // cut into pieces on channels or columns (Slices or a Split), pointwise ops on some
                  // pieces, joined again on that axis: in order (windowed chains), or not
        const size_t axis = pick(rng, 0, 1) == 0 ? 1 : 3;
        const int64_t dim = cur.shape[axis];
        if (dim < 2) break;
        std::vector<int64_t> cuts = {0, pick(rng, 1, dim - 1), dim};
        if (cuts[1] + 1 < dim && pick(rng, 0, 1) == 0) cuts.insert(cuts.begin() + 2, pick(rng, cuts[1] + 1, dim - 1));
        std::vector<ValueId> pieces;
        const auto ints = [&](std::vector<int64_t> v) {
          const auto n = static_cast<int64_t>(v.size());
          return m.constant(Tensor::from_vector<int64_t>({n}, v));
        };
        Attributes on_axis;
        on_axis.set("axis", static_cast<int64_t>(axis));
        if (pick(rng, 0, 1) == 0) {
          std::vector<int64_t> sizes;
          for (size_t i = 1; i < cuts.size(); ++i) sizes.push_back(cuts[i] - cuts[i - 1]);
          pieces =
              m.node_with_outputs(OpKind::kSplit, {cur.value, ints(sizes)}, static_cast<int>(sizes.size()), on_axis);
        } else {
          for (size_t i = 1; i < cuts.size(); ++i) {
            pieces.push_back(m.node(
                OpKind::kSlice, {cur.value, ints({cuts[i - 1]}), ints({cuts[i]}), ints({static_cast<int64_t>(axis)})}));
          }
        }
        const bool untouched = pick(rng, 0, 4) == 0;  // pieces joined again as cut
        for (size_t i = 0; i < pieces.size(); ++i) {
          if (untouched || pick(rng, 0, 2) == 0) continue;
          Current piece{pieces[i], cur.shape};
          piece.shape[axis] = cuts[i + 1] - cuts[i];
          for (int64_t op = pick(rng, 1, 3); op > 0; --op) piece.value = add_pointwise(m, piece, {}, rng);
          pieces[i] = piece.value;
        }
        if (pick(rng, 0, 4) == 0) std::reverse(pieces.begin(), pieces.end());
        cur.value = m.node(OpKind::kConcat, pieces, on_axis);
        break;
      }
      case 18: {  // a YOLOv8-style head, as extra outputs: per level two 1x1 Convs joined on channels and
                  // flattened, the levels joined on the cells, cut on channels (where the Convs meet
                  // or not), an activation on each piece
        const int64_t box = pick(rng, 1, 6), cls = pick(rng, 1, 6), rows = box + cls;
        std::vector<ValueId> levels;
        for (const Current& h : history) {
          if (h.shape[1] != c || (!levels.empty() && pick(rng, 0, 1) == 0)) continue;
          const auto head_conv = [&](int64_t out) {
            return m.node(OpKind::kConv,
                          {h.value, m.random_constant({out, c, 1, 1}, rng), m.random_constant({out}, rng)});
          };
          Attributes on_channels;
          on_channels.set("axis", int64_t{1});
          const ValueId joined = m.node(OpKind::kConcat, {head_conv(box), head_conv(cls)}, on_channels);
          levels.push_back(m.node(OpKind::kReshape, {joined, m.constant(Tensor::from_vector<int64_t>(
                                                                 {3}, {1, rows, h.shape[2] * h.shape[3]}))}));
        }
        Attributes on_cells;
        on_cells.set("axis", int64_t{2});
        const ValueId predictions = m.node(OpKind::kConcat, levels, on_cells);
        const int64_t cut = pick(rng, 0, 2) == 0 ? pick(rng, 1, rows - 1) : box;
        if (cut <= 0 || cut >= rows) break;
        Attributes on_axis;
        on_axis.set("axis", int64_t{1});
        const std::vector<ValueId> pieces = m.node_with_outputs(
            OpKind::kSplit, {predictions, m.constant(Tensor::from_vector<int64_t>({2}, {cut, rows - cut}))}, 2,
            on_axis);
        for (ValueId piece : pieces) m.output(add_activation(m, piece, rng));
        break;
      }
      case 19: {  // a distribution head, as an extra output: Softmax over channels (or over rows moved
                  // onto channels), then a 1x1 Conv to one channel
        ValueId bins = cur.value;
        int64_t length = c;
        if (pick(rng, 0, 2) == 0) {
          Attributes perm;
          perm.set("perm", std::vector<int64_t>{0, 2, 1, 3});
          bins = m.node(OpKind::kTranspose, {bins}, perm);
          length = cur.shape[2];
        } else if (pick(rng, 0, 1) == 0) {  // two pieces joined on the columns first
          Attributes on_columns;
          on_columns.set("axis", int64_t{3});
          bins = m.node(OpKind::kConcat, {bins, m.node(OpKind::kRelu, {bins})}, on_columns);
        }
        Attributes on_channels;
        on_channels.set("axis", int64_t{1});
        std::vector<ValueId> conv = {m.node(OpKind::kSoftmax, {bins}, on_channels),
                                     m.random_constant({1, length, 1, 1}, rng, 0, 16)};
        if (pick(rng, 0, 1) == 0) conv.push_back(m.random_constant({1}, rng));
        m.output(m.node(OpKind::kConv, conv));
        break;
      }
      case 12: {  // SPP: Concat of the input and same-padded stride-1 pools of growing odd kernels
        Attributes axis;
        axis.set("axis", int64_t{1});
        std::vector<ValueId> parts = {cur.value};
        for (int64_t k = 1 + 2 * pick(rng, 1, 2); k <= 9; k += 2 * pick(rng, 1, 3)) {
          Attributes pool;
          pool.set("kernel_shape", std::vector<int64_t>{k, k});
          pool.set("pads", std::vector<int64_t>(4, k / 2));
          parts.push_back(m.node(OpKind::kMaxPool, {cur.value}, pool));
        }
        cur.value = m.node(OpKind::kConcat, parts, axis);
        cur.shape[1] *= static_cast<int64_t>(parts.size());
        break;
      }
      default: {  // Add(act(Conv(cur)), skip) with skip an earlier value of the same shape, if any
        cur = add_conv(m, cur, rng);
        cur.value = add_activation(m, cur.value, rng);
        for (const Current& h : history) {
          if (h.shape == cur.shape) {
            cur.value = m.node(OpKind::kAdd, {cur.value, h.value});
            break;
          }
        }
        break;
      }
    }
    history.push_back(cur);
    if (pick(rng, 0, 7) == 0) m.output(cur.value);  // an intermediate graph output
  }
  m.output(cur.value);
  return m.graph();
}

TEST_CASE("random graphs: fused equals unfused") {
  constexpr int kCases = 240;
  int changes = 0;
  int fewer_nodes = 0;
  int residuals_after_activation = 0;
  int stems_folded = 0;
  int pools_chained = 0;
  int pointwise_chains = 0;
  int windowed_chains = 0;
  int splits_into_concats = 0;
  int concats_into_transposes = 0;
  int pools_into_residuals = 0;
  int transposes_into_convs = 0;
  int scale_shifts_into_convs = 0;
  int slices_into_concat_inputs = 0;
  int activations_into_concat_inputs = 0;
  int softmax_expectations = 0;
  int expectations_into_concat_inputs = 0;
  for (int seed = 0; seed < kCases; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(static_cast<unsigned>(seed));
    const Graph original = random_graph(rng);
    REQUIRE_MESSAGE(original.verify().is_ok(), original.verify().to_string());
    Graph fused = original;
    Result<std::vector<PassReport>> reports = optimize_graph(fused);
    REQUIRE_MESSAGE(reports.is_ok(), reports.status().to_string());
    for (const PassReport& report : *reports) {
      changes += report.changes;
      if (report.pass == "fuse_conv_activation_add") residuals_after_activation += report.changes;
      if (report.pass == "fold_space_to_depth_into_conv") stems_folded += report.changes;
      if (report.pass == "cascade_spp_maxpools") pools_chained += report.changes;
      if (report.pass == "fuse_pointwise_chains") pointwise_chains += report.changes;
      if (report.pass == "fold_slices_into_windowed_chains") windowed_chains += report.changes;
      if (report.pass == "fold_split_into_concat") splits_into_concats += report.changes;
      if (report.pass == "fold_concat_into_transpose") concats_into_transposes += report.changes;
      if (report.pass == "fold_max_pool_into_conv_residual") pools_into_residuals += report.changes;
      if (report.pass == "fold_transpose_into_conv_output") transposes_into_convs += report.changes;
      if (report.pass == "fold_scale_shift_into_conv") scale_shifts_into_convs += report.changes;
      if (report.pass == "push_slices_into_concat_inputs") slices_into_concat_inputs += report.changes;
      if (report.pass == "push_activations_into_concat_inputs") activations_into_concat_inputs += report.changes;
      if (report.pass == "fuse_softmax_expectation") softmax_expectations += report.changes;
      if (report.pass == "push_expectations_into_concat_inputs") expectations_into_concat_inputs += report.changes;
    }
    fewer_nodes += fused.nodes().size() < original.nodes().size() ? 1 : 0;
    const std::vector<Tensor> inputs = random_inputs_for(original, rng);
    const std::vector<Tensor> expected = run_graph(original, inputs, true);
    for (bool reference : {false, true}) {
      CAPTURE(reference);
      CHECK(max_relative_l2(run_graph(fused, inputs, reference), expected) <= 1e-5);
    }
  }
  MESSAGE("random graphs: ", changes, " rewrites (", residuals_after_activation, " residuals after an activation, ",
          stems_folded, " Focus stems, ", pools_chained, " pools chained, ", pointwise_chains, " pointwise chains, ",
          windowed_chains, " Concats of pieces into windowed chains, ", splits_into_concats,
          " Splits' pieces concatenated whole, ", concats_into_transposes, " Concats into Transposes, ",
          pools_into_residuals, " pools read through by Convs, ", transposes_into_convs,
          " Transposes written by Convs, ", scale_shifts_into_convs, " scales and shifts into Convs, ",
          slices_into_concat_inputs, " cuts moved into Concats' inputs, ", activations_into_concat_inputs,
          " activations moved onto Convs, ", softmax_expectations, " softmax expectations, ",
          expectations_into_concat_inputs, " of them on joined pieces), ", fewer_nodes, " of ", kCases,
          " graphs shrank");
  CHECK(fewer_nodes > kCases / 2);  // the generator must exercise the passes, not just pass through
  CHECK(residuals_after_activation > 0);
  CHECK(stems_folded > 0);
  CHECK(pools_chained > 0);
  CHECK(pointwise_chains > 0);
  CHECK(windowed_chains > 0);
  CHECK(splits_into_concats > 0);
  CHECK(concats_into_transposes > 0);
  CHECK(pools_into_residuals > 0);
  CHECK(transposes_into_convs > 0);
  CHECK(scale_shifts_into_convs > 0);
  CHECK(slices_into_concat_inputs > 0);
  CHECK(activations_into_concat_inputs > 0);
  CHECK(softmax_expectations > 0);
  CHECK(expectations_into_concat_inputs > 0);
}

}  // namespace
}  // namespace edgefuse::test
