// The fuser on the real models: node counts before and after (measured, asserted exactly so a
// change in any pass shows up here), and fused == unfused outputs on random inputs.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "fusion/pass_manager.h"
#include "models/onnx/onnx_importer.h"
#include "runtime/ops/conv_problem.h"
#include "tests/fusion/fusion_test_graphs.h"
#include "tests/support/assets.h"

namespace edgefuse::test {
namespace {

struct Fused {
  Graph original;
  Graph fused;
  std::map<std::string, int> changes;  // per pass
};

Fused import_and_fuse(const std::filesystem::path& path) {
  Result<std::shared_ptr<Graph>> graph = import_onnx_file(path.string());
  REQUIRE_MESSAGE(graph.is_ok(), graph.status().to_string());
  Fused result{**graph, **graph, {}};
  Result<std::vector<PassReport>> reports = optimize_graph(result.fused);
  REQUIRE_MESSAGE(reports.is_ok(), reports.status().to_string());
  for (const PassReport& report : *reports) result.changes[report.pass] = report.changes;
  MESSAGE(path.filename().string(), ": ", result.original.nodes().size(), " -> ", result.fused.nodes().size(),
          " nodes\n", format_pass_reports(*reports));
  return result;
}

void check_outputs_match(const Fused& model) {
  std::mt19937 rng(21);
  const std::vector<Tensor> inputs = random_inputs_for(model.original, rng);
  const std::vector<Tensor> expected = run_graph(model.original, inputs, false);
  CHECK(max_relative_l2(run_graph(model.fused, inputs, false), expected) <= 1e-5);
}

TEST_CASE("YOLOX-nano: Focus stem, SiLU, shortcut Adds fused into the convs, SPP chained, outputs unchanged") {
  ASSET_OR_SKIP(path, "models/yolox_nano.onnx");
  const Fused model = import_and_fuse(path);
  MESSAGE("Sigmoid ", count_nodes(model.original, OpKind::kSigmoid), " -> ", count_nodes(model.fused, OpKind::kSigmoid),
          ", Mul ", count_nodes(model.original, OpKind::kMul), " -> ", count_nodes(model.fused, OpKind::kMul),
          ", Conv ", count_nodes(model.original, OpKind::kConv), " -> ", count_nodes(model.fused, OpKind::kConv));
  CHECK(count_nodes(model.original, OpKind::kSigmoid) == 110);
  CHECK(count_nodes(model.original, OpKind::kMul) == 104);
  // The export has BatchNorm folded already and no identities; every Sigmoid follows a Conv
  // (104 SiLU pairs, and the 6 objectness/class Sigmoids of the head), so all of them fuse.
  // The 7 Adds are the bottleneck shortcuts Add(SiLU(Conv(x)), skip): each becomes the residual
  // of its (already activated) Conv, added after the activation.
  CHECK(count_nodes(model.original, OpKind::kAdd) == 7);
  CHECK(model.original.nodes().size() == 369);
  // The Focus stem (8 Slices: rows then columns per phase, and a Concat) folds into the first
  // Conv, which then reads the image with a 6x6 stride-2 kernel; the SPP pools 9 and 13 chain onto
  // the 5 as two more 5x5 pools.
  CHECK(count_nodes(model.original, OpKind::kSlice) == 8);
  CHECK(count_nodes(model.fused, OpKind::kSlice) == 0);
  CHECK(model.changes.at("fold_space_to_depth_into_conv") == 1);
  CHECK(model.changes.at("cascade_spp_maxpools") == 2);
  int five_by_five = 0;
  for (const Node& node : model.fused.nodes()) {
    if (node.op == OpKind::kMaxPool && node.attrs.get_ints("kernel_shape") == std::vector<int64_t>{5, 5})
      ++five_by_five;
  }
  CHECK(five_by_five == 3);
  // The head's last Concat (its three levels, on the cells) is read by the Transpose to
  // [1, cells, 85] alone, which takes its inputs.
  CHECK(count_nodes(model.fused, OpKind::kConcat) == 16);
  CHECK(model.changes.at("fold_concat_into_transpose") == 1);
  CHECK(model.fused.nodes().size() == 138);
  CHECK(model.changes.at("fuse_conv_activation") == 110);
  CHECK(model.changes.at("fuse_conv_add") == 0);
  CHECK(model.changes.at("fuse_conv_activation_add") == 7);
  CHECK(count_nodes(model.fused, OpKind::kAdd) == 0);
  CHECK(model.changes.at("fold_batchnorm_into_conv") == 0);
  CHECK(count_nodes(model.fused, OpKind::kSigmoid) == 0);
  CHECK(count_nodes(model.fused, OpKind::kMul) == 0);
  CHECK(count_nodes(model.fused, OpKind::kConv) == 113);
  check_outputs_match(model);
}

TEST_CASE("BlazeFace front and back: fused outputs unchanged") {
  struct Expected {
    std::string name;
    size_t nodes_before, nodes_after;
    int folded, residuals, activations;  // no Add follows an activation: none fuses after one
    int trimmed;                         // residuals that were their input padded with zero channels
    int pooled;                          // residuals read through their MaxPool
  };
  // BlazeBlocks end in Relu(Add(Conv(...), skip)): the Add becomes the Conv's residual, then the
  // Relu its epilogue. The front model's 11 folds are its constant Reshape targets. Blocks that
  // widen pad the skip with zero channels (Concat(skip, zeros)): the residual reads the skip alone.
  // The NHWC image's Transpose to NCHW goes into the first Conv, which reads it channels-last.
  // The three downsampling blocks' shortcuts are 2 x 2 MaxPools: their Convs pool the block's input.
  // The four head Convs write their Transposes' outputs channels-last, read by the outputs' Reshapes.
  const Expected models[] = {{"models/blazeface_front_128.onnx", 104, 41, 11, 16, 17, 11, 3},
                             {"models/blazeface_back_256.onnx", 149, 73, 2, 31, 33, 2, 3}};
  for (const Expected& expected : models) {
    CAPTURE(expected.name);
    ASSET_OR_SKIP(path, expected.name);
    const Fused model = import_and_fuse(path);
    CHECK(model.original.nodes().size() == expected.nodes_before);
    CHECK(model.fused.nodes().size() == expected.nodes_after);
    CHECK(model.changes.at("fold_constants") == expected.folded);
    CHECK(model.changes.at("fuse_conv_add") == expected.residuals);
    CHECK(model.changes.at("fuse_conv_activation") == expected.activations);
    CHECK(model.changes.at("fuse_conv_activation_add") == 0);
    CHECK(model.changes.at("fold_space_to_depth_into_conv") == 0);
    CHECK(model.changes.at("cascade_spp_maxpools") == 0);
    CHECK(model.changes.at("trim_zero_padded_residuals") == expected.trimmed);
    CHECK(model.changes.at("fold_max_pool_into_conv_residual") == expected.pooled);
    CHECK(std::none_of(model.fused.nodes().begin(), model.fused.nodes().end(),
                       [](const Node& node) { return node.op == OpKind::kMaxPool; }));
    CHECK(model.changes.at("fold_transposes") == 1);
    CHECK(model.changes.at("fold_transpose_into_conv_output") == 4);
    CHECK(count_nodes(model.fused, OpKind::kTranspose) == 0);
    const Node& stem = *std::find_if(model.fused.nodes().begin(), model.fused.nodes().end(),
                                     [](const Node& node) { return node.op == OpKind::kConv; });
    CHECK(stem.attrs.get_int(kConvInputChannelsLast, 0) == 1);
    CHECK(stem.inputs[0] == model.fused.inputs()[0]);
    check_outputs_match(model);
  }
}

}  // namespace
}  // namespace edgefuse::test
