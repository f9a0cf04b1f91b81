#include "runtime/cuda/plan_cache.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include <unistd.h>

namespace edgefuse::gpu {

namespace {

constexpr const char* kHeader = "edgefuse-plan-cache 1";

// 64-bit FNV-1a.
class Fnv1a {
 public:
  void bytes(const void* data, size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < size; ++i) hash_ = (hash_ ^ p[i]) * 1099511628211ull;
  }
  template <typename T>
  void value(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes(&v, sizeof(v));
  }
  void text(const std::string& s) {
    value(s.size());
    bytes(s.data(), s.size());
  }
  std::string hex() const {
    char out[17];
    std::snprintf(out, sizeof(out), "%016llx", static_cast<unsigned long long>(hash_));
    return out;
  }

 private:
  uint64_t hash_ = 14695981039346656037ull;
};

void hash_tensor(Fnv1a& h, const Tensor& t) {
  h.value(static_cast<int>(t.dtype()));
  h.text(shape_to_string(t.shape()));
  if (t.has_data()) h.bytes(t.raw_data(), t.nbytes());
}

void hash_attribute(Fnv1a& h, const AttributeValue& value) {
  h.value(value.index());
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          h.text(v);
        } else if constexpr (std::is_same_v<T, Tensor>) {
          hash_tensor(h, v);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          for (const std::string& s : v) h.text(s);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>> || std::is_same_v<T, std::vector<float>>) {
          h.value(v.size());
          h.bytes(v.data(), v.size() * sizeof(v[0]));
        } else {
          h.value(v);
        }
      },
      value);
}

std::string format_double(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", v);
  return text;
}

// Splits "word rest of line".
std::pair<std::string, std::string> split_first(const std::string& line) {
  const size_t space = line.find(' ');
  if (space == std::string::npos) return {line, ""};
  return {line.substr(0, space), line.substr(space + 1)};
}

constexpr std::string_view kCublasSuffix = "+cublas";
constexpr std::string_view kCudnnSuffix = "+cudnn";  // then the algorithm's number

std::string tiling_text(const GemmTiling& t) {
  return std::to_string(t.rows) + "x" + std::to_string(t.columns) + "/" + std::to_string(t.k_splits) + "/" +
         std::to_string(t.stage_channels) + (t.tensor_cores ? "/tc" : "");
}

// Nodes by name; a name several nodes share names none (an entry naming it then misses).
std::unordered_map<std::string, NodeId> nodes_by_name(const Graph& graph) {
  std::unordered_map<std::string, NodeId> by_name;
  std::vector<std::string> shared;
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    if (!by_name.emplace(graph.nodes()[n].name, static_cast<NodeId>(n)).second) shared.push_back(graph.nodes()[n].name);
  }
  for (const std::string& name : shared) by_name.erase(name);
  return by_name;
}

}  // namespace

std::string graph_fingerprint(const Graph& graph) {
  Fnv1a h;
  h.value(graph.values().size());
  for (const Value& value : graph.values()) {
    h.text(value.name);
    h.text(value.desc.to_string());
    h.value(value.initializer.has_value());
    if (value.initializer) hash_tensor(h, *value.initializer);
  }
  h.value(graph.nodes().size());
  for (const Node& node : graph.nodes()) {
    h.value(static_cast<int>(node.op));
    h.text(node.name);
    h.value(node.inputs.size());
    for (ValueId v : node.inputs) h.value(v);
    h.value(node.outputs.size());
    for (ValueId v : node.outputs) h.value(v);
    h.value(node.attrs.entries().size());
    for (const auto& [name, value] : node.attrs.entries()) {
      h.text(name);
      hash_attribute(h, value);
    }
  }
  for (ValueId v : graph.inputs()) h.value(v);
  for (ValueId v : graph.outputs()) h.value(v);
  return h.hex();
}

std::string fp16_plan_key(const Graph& graph, std::span<const TensorDesc> inputs, const std::string& device,
                          const Fp16CalibrationOptions& options) {
  std::ostringstream key;
  key << "kind=fp16-calibration\n";
  key << "graph=" << graph_fingerprint(graph) << "\n";
  for (size_t i = 0; i < inputs.size(); ++i) key << "input" << i << "=" << inputs[i].to_string() << "\n";
  key << "device=" << device << "\n";
  key << "target=" << format_double(options.target) << "\n";
  key << "max_kept_nodes=" << options.max_kept_nodes << "\n";
  return key.str();
}

std::string gemm_plan_key(const Graph& graph, std::span<const TensorDesc> inputs, const std::string& device, bool fp16,
                          std::span<const uint8_t> f32_values, bool tensor_cores, const std::string& cublas,
                          const std::string& cudnn) {
  std::ostringstream key;
  key << "kind=gemm-tilings\n";
  key << "graph=" << graph_fingerprint(graph) << "\n";
  for (size_t i = 0; i < inputs.size(); ++i) key << "input" << i << "=" << inputs[i].to_string() << "\n";
  key << "device=" << device << "\n";
  key << "precision=" << (fp16 ? "fp16" : "fp32") << "\n";
  if (fp16) {
    Fnv1a kept;
    for (size_t v = 0; v < f32_values.size(); ++v) {
      if (f32_values[v] != 0) kept.value(v);
    }
    key << "f32_values=" << kept.hex() << "\n";
    key << "tensor_cores=" << (tensor_cores ? "yes" : "no") << "\n";
  }
  key << "cublas=" << cublas << "\n";
  key << "cudnn=" << cudnn << "\n";
  key << "tilings=";
  for (const GemmTiling& t : kGemmTilings) key << " " << tiling_text(t);
  key << "\n";
  return key.str();
}

std::filesystem::path PlanCache::entry_path(const std::string& key) const {
  Fnv1a h;
  h.text(key);
  return directory_ / (h.hex() + ".plan");
}

std::optional<std::vector<std::string>> PlanCache::read_entry(const std::string& key) const {
  std::ifstream in(entry_path(key));
  if (!in) return std::nullopt;
  std::string line;
  if (!std::getline(in, line) || line != kHeader) return std::nullopt;
  std::istringstream expected_key(key);
  std::string expected;
  while (std::getline(expected_key, expected)) {
    if (!std::getline(in, line) || line != "key " + expected) return std::nullopt;
  }
  std::vector<std::string> body;
  while (std::getline(in, line)) body.push_back(line);
  return body;
}

Status PlanCache::write_entry(const std::string& key, const std::string& body) const {
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error) return io_error("plan cache: cannot create ", directory_.string(), ": ", error.message());
  std::ostringstream text;
  text << kHeader << "\n";
  std::istringstream key_lines(key);
  std::string line;
  while (std::getline(key_lines, line)) text << "key " << line << "\n";
  text << body;
  const std::filesystem::path path = entry_path(key);
  std::filesystem::path temporary = path;
  temporary += ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text.str();
    out.flush();
    if (!out) return io_error("plan cache: cannot write ", temporary.string());
  }
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    return io_error("plan cache: cannot replace ", path.string());
  }
  return Status::ok();
}

std::optional<Fp16Calibration> PlanCache::load_fp16(const std::string& key, const Graph& graph) const {
  const std::optional<std::vector<std::string>> body = read_entry(key);
  if (!body) return std::nullopt;
  const std::unordered_map<std::string, NodeId> node_by_name = nodes_by_name(graph);
  Fp16Calibration c;
  c.f32_values.assign(graph.values().size(), 0);
  bool complete = false;
  for (const std::string& line : *body) {
    const auto [word, rest] = split_first(line);
    if (word == "kept_value") {
      const std::optional<ValueId> v = graph.find_value(rest);
      if (!v) return std::nullopt;
      c.f32_values[static_cast<size_t>(*v)] = 1;
    } else if (word == "kept_node") {
      const auto it = node_by_name.find(rest);
      if (it == node_by_name.end()) return std::nullopt;
      c.kept_nodes.push_back(it->second);
    } else if (word == "error") {
      c.error = std::strtod(rest.c_str(), nullptr);
    } else if (word == "all_half_error") {
      c.all_half_error = std::strtod(rest.c_str(), nullptr);
    } else if (word == "step_error") {
      c.errors.push_back(std::strtod(rest.c_str(), nullptr));
    } else if (word == "evaluations") {
      c.evaluations = std::atoi(rest.c_str());
    } else if (word == "end") {
      complete = true;
      break;
    } else {
      return std::nullopt;
    }
  }
  if (!complete) return std::nullopt;  // truncated
  return c;
}

Status PlanCache::store_fp16(const std::string& key, const Graph& graph, const Fp16Calibration& calibration) const {
  std::ostringstream body;
  for (size_t v = 0; v < calibration.f32_values.size() && v < graph.values().size(); ++v) {
    if (calibration.f32_values[v] != 0) body << "kept_value " << graph.values()[v].name << "\n";
  }
  for (NodeId n : calibration.kept_nodes) body << "kept_node " << graph.node(n).name << "\n";
  body << "all_half_error " << format_double(calibration.all_half_error) << "\n";
  for (double e : calibration.errors) body << "step_error " << format_double(e) << "\n";
  body << "error " << format_double(calibration.error) << "\n";
  body << "evaluations " << calibration.evaluations << "\n";
  body << "end\n";
  return write_entry(key, body.str());
}

// Lines "tiling <rows>x<columns>/<splits>/<stage channels>[/tc][+cublas|+cudnn<algorithm>] <node
// name>" (the name last: it may hold spaces).
std::optional<std::vector<NodeTiling>> PlanCache::load_gemm_tilings(const std::string& key, const Graph& graph) const {
  const std::optional<std::vector<std::string>> body = read_entry(key);
  if (!body) return std::nullopt;
  const std::unordered_map<std::string, NodeId> node_by_name = nodes_by_name(graph);
  std::vector<NodeTiling> tilings;
  bool complete = false;
  for (const std::string& line : *body) {
    const auto [word, rest] = split_first(line);
    if (word == "end") {
      complete = true;
      break;
    }
    if (word != "tiling") return std::nullopt;
    auto [shape, name] = split_first(rest);
    const bool cublas = shape.ends_with(kCublasSuffix);
    if (cublas) shape.resize(shape.size() - kCublasSuffix.size());
    int32_t cudnn_algorithm = -1;
    if (const size_t at = shape.find(kCudnnSuffix); at != std::string::npos) {
      const std::string number = shape.substr(at + kCudnnSuffix.size());
      const char* end = number.data() + number.size();
      const auto [parsed, error] = std::from_chars(number.data(), end, cudnn_algorithm);
      if (number.empty() || error != std::errc() || parsed != end || cudnn_algorithm < 0) return std::nullopt;
      shape.resize(at);
    }
    const GemmTiling* tiling = nullptr;
    for (const GemmTiling& t : kGemmTilings) {
      if (tiling_text(t) == shape) tiling = &t;
    }
    const auto node = node_by_name.find(name);
    if (tiling == nullptr || node == node_by_name.end()) return std::nullopt;
    tilings.push_back(NodeTiling{node->second, *tiling, cublas, cudnn_algorithm});
  }
  if (!complete) return std::nullopt;  // truncated
  return tilings;
}

Status PlanCache::store_gemm_tilings(const std::string& key, const Graph& graph,
                                     std::span<const NodeTiling> tilings) const {
  std::ostringstream body;
  for (const NodeTiling& t : tilings) {
    body << "tiling " << tiling_text(t.tiling) << (t.cublas ? kCublasSuffix : "");
    if (t.cudnn_algorithm >= 0) body << kCudnnSuffix << t.cudnn_algorithm;
    body << " " << graph.node(t.node).name << "\n";
  }
  body << "end\n";
  return write_entry(key, body.str());
}

std::filesystem::path default_plan_cache_directory() {
  if (const char* dir = std::getenv("EDGEFUSE_PLAN_CACHE"); dir != nullptr && dir[0] != '\0') {
    if (std::strcmp(dir, "off") == 0) return {};
    return dir;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] != '\0') {
    return std::filesystem::path(xdg) / "edgefuse" / "plans";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] != '\0') {
    return std::filesystem::path(home) / ".cache" / "edgefuse" / "plans";
  }
  return {};
}

}  // namespace edgefuse::gpu
