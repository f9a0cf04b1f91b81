// Typed, validated access to an ONNX node's attributes. Every read checks the attribute's kind
// and records it as consumed; finish() then reports any attribute the op importer did not read,
// so an attribute that would change the result is never silently ignored.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>

#include "runtime/status.h"
#include "runtime/tensor.h"

namespace edgefuse {

class AttributeReader {
 public:
  // `context` names the node in messages: "node 'conv3' (Conv, index 3)".
  AttributeReader(const onnx::NodeProto& node, std::string context, std::string model_dir);

  // Checks names are unique and no attribute refers to a function parameter.
  Status validate() const;
  bool has(std::string_view name) const { return find(name) != nullptr; }

  // find_*: nullopt when absent; an error when present with the wrong kind.
  Result<std::optional<int64_t>> find_int(std::string_view name);
  Result<std::optional<float>> find_float(std::string_view name);
  Result<std::optional<std::string>> find_string(std::string_view name);
  Result<std::optional<std::vector<int64_t>>> find_ints(std::string_view name);
  Result<std::optional<std::vector<float>>> find_floats(std::string_view name);
  Result<std::optional<Tensor>> find_tensor(std::string_view name);

  // get_*: the fallback when absent.
  Result<int64_t> get_int(std::string_view name, int64_t fallback);
  Result<float> get_float(std::string_view name, float fallback);
  Result<std::string> get_string(std::string_view name, std::string_view fallback);
  // An int that must be 0 or 1.
  Result<bool> get_flag(std::string_view name, bool fallback);

  // Marks an attribute that has no effect at inference (Dropout's seed, BatchNorm's momentum).
  void ignore(std::string_view name) { consumed_.emplace(name); }
  // Reports the first attribute that no read consumed, as unsupported.
  Status finish() const;

  const std::string& context() const { return context_; }

 private:
  const onnx::AttributeProto* find(std::string_view name) const;
  // The attribute when present and of `kind`; nullptr when absent; an error for another kind.
  Result<const onnx::AttributeProto*> typed(std::string_view name, onnx::AttributeProto::AttributeType kind);

  const onnx::NodeProto& node_;
  std::string context_;
  std::string model_dir_;
  std::set<std::string, std::less<>> consumed_;
};

// Formats a list of ints as "[0, 1]" for messages.
std::string ints_to_string(const std::vector<int64_t>& values);

}  // namespace edgefuse
