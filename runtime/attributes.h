// Typed node attributes (the ONNX attribute kinds a detector uses), with defaults on read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "runtime/tensor.h"

namespace edgefuse {

using AttributeValue = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>,
                                    std::vector<std::string>, Tensor>;

// Human-readable kind of the value held: "int", "float", "string", "ints", "floats", "strings", "tensor".
std::string_view attribute_kind_name(const AttributeValue& value);

class Attributes {
 public:
  void set(std::string name, AttributeValue value);
  bool has(std::string_view name) const { return find(name) != nullptr; }
  const AttributeValue* find(std::string_view name) const;
  void erase(std::string_view name);
  const std::vector<std::pair<std::string, AttributeValue>>& entries() const { return entries_; }

  // Typed reads. A missing attribute returns the default; a present one of the wrong kind is a
  // programmer error here, because the importer validates kinds before kernels read them.
  int64_t get_int(std::string_view name, int64_t fallback) const;
  float get_float(std::string_view name, float fallback) const;
  std::string get_string(std::string_view name, std::string_view fallback) const;
  std::vector<int64_t> get_ints(std::string_view name, std::vector<int64_t> fallback = {}) const;
  std::vector<float> get_floats(std::string_view name, std::vector<float> fallback = {}) const;
  const Tensor* get_tensor(std::string_view name) const;  // nullptr when absent

 private:
  std::vector<std::pair<std::string, AttributeValue>> entries_;
};

}  // namespace edgefuse
