#include "runtime/attributes.h"

namespace edgefuse {

std::string_view attribute_kind_name(const AttributeValue& value) {
  static constexpr std::string_view kNames[] = {"int", "float", "string", "ints", "floats", "strings", "tensor"};
  return kNames[value.index()];
}

void Attributes::set(std::string name, AttributeValue value) {
  for (auto& [key, existing] : entries_) {
    if (key == name) {
      existing = std::move(value);
      return;
    }
  }
  entries_.emplace_back(std::move(name), std::move(value));
}

const AttributeValue* Attributes::find(std::string_view name) const {
  for (const auto& [key, value] : entries_) {
    if (key == name) return &value;
  }
  return nullptr;
}

void Attributes::erase(std::string_view name) {
  std::erase_if(entries_, [&](const auto& entry) { return entry.first == name; });
}

namespace {
template <typename T>
const T& typed(const Attributes& attrs, std::string_view name, const AttributeValue& value) {
  const T* typed_value = std::get_if<T>(&value);
  EF_ASSERT(typed_value != nullptr, "attribute '", name, "' holds ", attribute_kind_name(value));
  (void)attrs;
  return *typed_value;
}
}  // namespace

int64_t Attributes::get_int(std::string_view name, int64_t fallback) const {
  const AttributeValue* value = find(name);
  return value ? typed<int64_t>(*this, name, *value) : fallback;
}

float Attributes::get_float(std::string_view name, float fallback) const {
  const AttributeValue* value = find(name);
  return value ? typed<float>(*this, name, *value) : fallback;
}

std::string Attributes::get_string(std::string_view name, std::string_view fallback) const {
  const AttributeValue* value = find(name);
  return value ? typed<std::string>(*this, name, *value) : std::string(fallback);
}

std::vector<int64_t> Attributes::get_ints(std::string_view name, std::vector<int64_t> fallback) const {
  const AttributeValue* value = find(name);
  return value ? typed<std::vector<int64_t>>(*this, name, *value) : fallback;
}

std::vector<float> Attributes::get_floats(std::string_view name, std::vector<float> fallback) const {
  const AttributeValue* value = find(name);
  return value ? typed<std::vector<float>>(*this, name, *value) : fallback;
}

const Tensor* Attributes::get_tensor(std::string_view name) const {
  const AttributeValue* value = find(name);
  return value ? &typed<Tensor>(*this, name, *value) : nullptr;
}

}  // namespace edgefuse
