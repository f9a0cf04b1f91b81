// The plan cache: graph fingerprints that follow every input of the result, keys that separate
// shapes and devices, a stored calibration read back onto the graph's ids, and every kind of bad
// entry read as a miss rather than an error.
#include "runtime/cuda/plan_cache.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "tests/fusion/fusion_test_graphs.h"
#include "tests/support/numerics.h"

namespace edgefuse::test {
namespace {

Graph conv_pair(float first_weight = 0.5f, const char* second_name = nullptr) {
  GraphMaker m;
  std::mt19937 rng(3);
  const ValueId x = m.input({1, 4, 6, 6});
  Tensor w = random_tensor(DType::kF32, {4, 4, 1, 1}, rng);
  w.data<float>()[0] = first_weight;
  const ValueId y = m.node(OpKind::kConv, {x, m.constant(std::move(w))});
  m.output(m.node(OpKind::kConv, {y, m.random_constant({4, 4, 1, 1}, rng)}));
  Graph graph = m.graph();
  if (second_name != nullptr) graph.nodes()[1].name = second_name;
  return graph;
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::random_device random;
    path = std::filesystem::temp_directory_path() / ("edgefuse-plan-cache-test-" + std::to_string(random()));
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

gpu::Fp16Calibration sample_calibration(const Graph& graph) {
  gpu::Fp16Calibration c;
  c.f32_values.assign(graph.values().size(), 0);
  c.f32_values[static_cast<size_t>(graph.nodes()[1].inputs[0])] = 1;
  c.kept_nodes = {1};
  c.all_half_error = 0.0123456789012345;
  c.errors = {0.004, 0.0031};
  c.error = 0.0031;
  c.evaluations = 7;
  return c;
}

const std::vector<TensorDesc> kInputs = {TensorDesc{DType::kF32, {1, 4, 6, 6}}};

}  // namespace

TEST_CASE("graph fingerprints change with a weight, an attribute or a name, and not with a copy") {
  const Graph graph = conv_pair();
  const std::string fingerprint = gpu::graph_fingerprint(graph);
  CHECK(fingerprint.size() == 16);
  CHECK(gpu::graph_fingerprint(Graph(graph)) == fingerprint);
  CHECK(gpu::graph_fingerprint(conv_pair(0.5000001f)) != fingerprint);
  CHECK(gpu::graph_fingerprint(conv_pair(0.5f, "renamed")) != fingerprint);
  Graph activated = graph;
  activated.nodes()[0].attrs.set("fused_activation", std::string("silu"));
  CHECK(gpu::graph_fingerprint(activated) != fingerprint);
}

TEST_CASE("a stored fp16 calibration loads back onto the graph; other keys and bad entries miss") {
  const TempDir dir;
  const Graph graph = conv_pair();
  const gpu::PlanCache cache(dir.path / "nested" / "plans");
  const std::string key = gpu::fp16_plan_key(graph, kInputs, "NVIDIA H200 sm_90 driver 13000 runtime 13000", {});
  CHECK(key.find("input0=f32[1, 4, 6, 6]") != std::string::npos);
  CHECK_FALSE(cache.load_fp16(key, graph).has_value());  // empty cache

  const gpu::Fp16Calibration stored = sample_calibration(graph);
  REQUIRE(cache.store_fp16(key, graph, stored).is_ok());
  CHECK(std::filesystem::exists(cache.entry_path(key)));
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cache.directory())) files += entry.is_regular_file();
  CHECK(files == 1);  // no temporary left behind

  const std::optional<gpu::Fp16Calibration> loaded = cache.load_fp16(key, graph);
  REQUIRE(loaded.has_value());
  CHECK(loaded->f32_values == stored.f32_values);
  CHECK(loaded->kept_nodes == stored.kept_nodes);
  CHECK(loaded->all_half_error == stored.all_half_error);
  CHECK(loaded->errors == stored.errors);
  CHECK(loaded->error == stored.error);
  CHECK(loaded->evaluations == stored.evaluations);

  // Another device, other shapes or other settings: other keys, other files.
  const std::string other_device = gpu::fp16_plan_key(graph, kInputs, "Orin sm_87 driver 11040 runtime 11040", {});
  const std::vector<TensorDesc> batch4 = {TensorDesc{DType::kF32, {4, 4, 6, 6}}};
  CHECK_FALSE(cache.load_fp16(other_device, graph).has_value());
  CHECK(cache.entry_path(gpu::fp16_plan_key(graph, batch4, "x", {})) != cache.entry_path(key));
  CHECK(gpu::fp16_plan_key(graph, kInputs, "x", {.target = 1e-3}) != gpu::fp16_plan_key(graph, kInputs, "x", {}));

  // The same key over a graph without the stored names (as after a hash collision): a miss.
  CHECK_FALSE(cache.load_fp16(key, conv_pair(0.5f, "renamed")).has_value());

  // Truncated, foreign or rewritten entries: misses.
  const std::filesystem::path path = cache.entry_path(key);
  std::stringstream whole;
  whole << std::ifstream(path).rdbuf();
  const std::string text = whole.str();
  const auto write = [&](const std::string& contents) { std::ofstream(path, std::ios::trunc) << contents; };
  write(text.substr(0, text.find("end\n")));
  CHECK_FALSE(cache.load_fp16(key, graph).has_value());
  write("not a plan\n");
  CHECK_FALSE(cache.load_fp16(key, graph).has_value());
  std::string other_key_text = text;
  other_key_text.replace(other_key_text.find("sm_90"), 5, "sm_80");
  write(other_key_text);
  CHECK_FALSE(cache.load_fp16(key, graph).has_value());
  write(text);
  CHECK(cache.load_fp16(key, graph).has_value());
}

TEST_CASE("stored GEMM tilings load back by node; other keys, unknown tilings and names, and truncation miss") {
  const TempDir dir;
  const Graph graph = conv_pair();
  const gpu::PlanCache cache(dir.path);
  const std::string device = "NVIDIA H200 sm_90 driver 13000 runtime 13000";
  const std::string key = gpu::gemm_plan_key(graph, kInputs, device, false, {}, false);
  CHECK_FALSE(cache.load_gemm_tilings(key, graph).has_value());

  // An f32 tiling that cuBLAS runs instead, and a tensor-core one with a cuDNN algorithm (the
  // cache keeps what it is given; the executor gives cuDNN only f32 steps).
  const gpu::GemmTiling& tensor_cores = gpu::kGemmTilings[gpu::kGemmTilingCount - 1];
  REQUIRE(tensor_cores.tensor_cores);
  const std::vector<gpu::NodeTiling> stored = {{0, gpu::kGemmTilings[3], true, -1}, {1, tensor_cores, false, 6}};
  REQUIRE(cache.store_gemm_tilings(key, graph, stored).is_ok());
  const std::optional<std::vector<gpu::NodeTiling>> loaded = cache.load_gemm_tilings(key, graph);
  REQUIRE(loaded.has_value());
  REQUIRE(loaded->size() == 2);
  for (size_t i = 0; i < stored.size(); ++i) {
    CHECK((*loaded)[i].node == stored[i].node);
    CHECK((*loaded)[i].tiling.rows == stored[i].tiling.rows);
    CHECK((*loaded)[i].tiling.columns == stored[i].tiling.columns);
    CHECK((*loaded)[i].tiling.k_splits == stored[i].tiling.k_splits);
    CHECK((*loaded)[i].tiling.stage_channels == stored[i].tiling.stage_channels);
    CHECK((*loaded)[i].tiling.tensor_cores == stored[i].tiling.tensor_cores);
    CHECK((*loaded)[i].cublas == stored[i].cublas);
    CHECK((*loaded)[i].cudnn_algorithm == stored[i].cudnn_algorithm);
  }
  // An fp16 calibration's entry for the same graph is another file.
  CHECK(cache.entry_path(gpu::fp16_plan_key(graph, kInputs, device, {})) != cache.entry_path(key));

  // Precision, the values fp16 keeps in f32, tensor cores, the device and the shapes are in the key.
  std::vector<uint8_t> keep(graph.values().size(), 0);
  const std::string fp16 = gpu::gemm_plan_key(graph, kInputs, device, true, keep, false);
  CHECK(gpu::gemm_plan_key(graph, kInputs, device, true, keep, true) != fp16);
  keep[1] = 1;
  CHECK(fp16 != key);
  CHECK(gpu::gemm_plan_key(graph, kInputs, device, true, keep, false) != fp16);
  CHECK(gpu::gemm_plan_key(graph, kInputs, "Orin sm_87 driver 11040 runtime 11040", false, {}, false) != key);
  CHECK(gpu::gemm_plan_key(graph, {{TensorDesc{DType::kF32, {2, 4, 6, 6}}}}, device, false, {}, false) != key);
  // So is the cuBLAS timed beside the tilings: another version (or none) times again.
  CHECK(key.find("\ncublas=none\n") != std::string::npos);
  const std::string with_cublas = gpu::gemm_plan_key(graph, kInputs, device, false, {}, false, "13.0.0");
  CHECK(with_cublas != key);
  CHECK(gpu::gemm_plan_key(graph, kInputs, device, false, {}, false, "12.9.1") != with_cublas);
  CHECK(key.find("\ncudnn=none\n") != std::string::npos);
  CHECK(gpu::gemm_plan_key(graph, kInputs, device, false, {}, false, "none", "9.19.0") != key);
  CHECK(key.find("tilings= 64x64/1/8 ") != std::string::npos);  // the compiled tilings, so a new set misses
  CHECK(key.find(" 64x64/1/32/tc ") != std::string::npos);

  // A graph without the stored names, a tiling this build lacks, two nodes of one name, or a
  // truncated entry: misses.
  CHECK_FALSE(cache.load_gemm_tilings(key, conv_pair(0.5f, "renamed")).has_value());
  Graph shared_names = conv_pair();
  shared_names.nodes()[1].name = shared_names.nodes()[0].name;
  CHECK_FALSE(cache.load_gemm_tilings(key, shared_names).has_value());
  const std::filesystem::path path = cache.entry_path(key);
  std::stringstream whole;
  whole << std::ifstream(path).rdbuf();
  const std::string text = whole.str();
  const auto write = [&](const std::string& contents) { std::ofstream(path, std::ios::trunc) << contents; };
  std::string unknown = text;
  const std::string first = "tiling " + std::to_string(gpu::kGemmTilings[3].rows) + "x";
  REQUIRE(unknown.find(first) != std::string::npos);
  unknown.replace(unknown.find(first), first.size(), "tiling 128x");
  write(unknown);
  CHECK_FALSE(cache.load_gemm_tilings(key, graph).has_value());
  for (const char* algorithm : {"+cudnn", "+cudnnx", "+cudnn-1", "+cudnn6x"}) {
    std::string malformed = text;
    REQUIRE(malformed.find("+cudnn6 ") != std::string::npos);
    malformed.replace(malformed.find("+cudnn6 "), 8, std::string(algorithm) + " ");
    write(malformed);
    CHECK_FALSE(cache.load_gemm_tilings(key, graph).has_value());
  }
  write(text.substr(0, text.find("end\n")));
  CHECK_FALSE(cache.load_gemm_tilings(key, graph).has_value());
  write(text);
  CHECK(cache.load_gemm_tilings(key, graph).has_value());
}

TEST_CASE("the default plan cache directory follows EDGEFUSE_PLAN_CACHE, XDG_CACHE_HOME and HOME") {
  const auto get = [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    return value == nullptr ? std::nullopt : std::optional<std::string>(value);
  };
  const std::optional<std::string> saved[] = {get("EDGEFUSE_PLAN_CACHE"), get("XDG_CACHE_HOME"), get("HOME")};
  const char* const names[] = {"EDGEFUSE_PLAN_CACHE", "XDG_CACHE_HOME", "HOME"};
  ::setenv("EDGEFUSE_PLAN_CACHE", "/var/cache/edgefuse", 1);
  CHECK(gpu::default_plan_cache_directory() == "/var/cache/edgefuse");
  ::setenv("EDGEFUSE_PLAN_CACHE", "off", 1);
  CHECK(gpu::default_plan_cache_directory().empty());
  ::unsetenv("EDGEFUSE_PLAN_CACHE");
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  CHECK(gpu::default_plan_cache_directory() == "/tmp/xdg/edgefuse/plans");
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", "/home/camera", 1);
  CHECK(gpu::default_plan_cache_directory() == "/home/camera/.cache/edgefuse/plans");
  for (int i = 0; i < 3; ++i) {
    if (saved[i]) {
      ::setenv(names[i], saved[i]->c_str(), 1);
    } else {
      ::unsetenv(names[i]);
    }
  }
}

}  // namespace edgefuse::test
