#include "runtime/tensor.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>

namespace edgefuse {

namespace {
// Upper bound for a single tensor: far above any detector's needs, far below address-space trouble.
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 36;  // 64 GiB
}  // namespace

int64_t shape_numel(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_to_string(std::span<const int64_t> shape) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << ']';
  return out.str();
}

Status validate_shape(std::span<const int64_t> shape, size_t element_size) {
  uint64_t bytes = element_size;
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) return invalid_argument("negative dimension ", d, " in shape ", shape_to_string(shape));
    if (d == 0) empty = true;
  }
  if (empty) return Status::ok();
  for (int64_t d : shape) {
    if (static_cast<uint64_t>(d) > kMaxTensorBytes / bytes) {  // bytes * d would pass the limit (or overflow)
      return invalid_argument("shape ", shape_to_string(shape), " is too large (over ", kMaxTensorBytes >> 30, " GiB)");
    }
    bytes *= static_cast<uint64_t>(d);
  }
  return Status::ok();
}

std::vector<int64_t> contiguous_strides(std::span<const int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

std::string TensorDesc::to_string() const {
  return std::string(dtype_name(dtype)) + shape_to_string(shape);
}

Tensor Tensor::empty(DType dtype, Shape shape, Device device) {
  EF_ASSERT(device == Device::kCpu, "Tensor::empty allocates host memory only");
  Status valid = validate_shape(shape, dtype_size(dtype));
  EF_ASSERT(valid.is_ok(), valid.message());
  Tensor t;
  t.desc_ = TensorDesc{dtype, std::move(shape)};
  t.device_ = device;
  const size_t bytes = t.nbytes();
  if (bytes > 0) {
    const size_t rounded = (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
    void* memory = std::aligned_alloc(kTensorAlignment, rounded);
    EF_ASSERT(memory != nullptr, "out of memory allocating ", rounded, " bytes");
    std::memset(memory, 0, rounded);
    t.owner_ = std::shared_ptr<void>(memory, [](void* p) { std::free(p); });
    t.data_ = memory;
  }
  return t;
}

Tensor Tensor::with_storage(DType dtype, Shape shape, std::shared_ptr<void> storage) {
  EF_ASSERT(storage != nullptr && reinterpret_cast<uintptr_t>(storage.get()) % kTensorAlignment == 0);
  Tensor t;
  t.desc_ = TensorDesc{dtype, std::move(shape)};
  t.data_ = storage.get();
  t.owner_ = std::move(storage);
  return t;
}

Tensor Tensor::meta(DType dtype, Shape shape) {
  Tensor t;
  t.desc_ = TensorDesc{dtype, std::move(shape)};
  return t;
}

Tensor Tensor::wrap(DType dtype, Shape shape, void* data, Device device) {
  Tensor t;
  t.desc_ = TensorDesc{dtype, std::move(shape)};
  t.device_ = device;
  t.data_ = data;
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  EF_ASSERT(shape_numel(shape) == numel(), "reshape ", shape_to_string(desc_.shape), " to ", shape_to_string(shape));
  Tensor t = *this;
  t.desc_.shape = std::move(shape);
  return t;
}

Tensor Tensor::clone() const {
  if (!has_data()) return meta(desc_.dtype, desc_.shape);
  Tensor t = empty(desc_.dtype, desc_.shape);
  if (nbytes() > 0) std::memcpy(t.data_, data_, nbytes());
  return t;
}

int64_t Tensor::int_at(int64_t i) const {
  EF_ASSERT(has_data() && i >= 0 && i < numel(), "int_at(", i, ") on ", desc_.to_string());
  switch (desc_.dtype) {
    case DType::kI64:
      return static_cast<const int64_t*>(data_)[i];
    case DType::kI32:
      return static_cast<const int32_t*>(data_)[i];
    case DType::kI8:
      return static_cast<const int8_t*>(data_)[i];
    case DType::kU8:
      return static_cast<const uint8_t*>(data_)[i];
    case DType::kBool:
      return static_cast<const bool*>(data_)[i] ? 1 : 0;
    default:
      EF_ASSERT(false, "int_at on ", dtype_name(desc_.dtype), " tensor");
  }
  return 0;
}

double Tensor::double_at(int64_t i) const {
  EF_ASSERT(has_data() && i >= 0 && i < numel(), "double_at(", i, ") on ", desc_.to_string());
  return visit_dtype(desc_.dtype, [&](auto tag) -> double {
    using T = decltype(tag);
    const T value = static_cast<const T*>(data_)[i];
    if constexpr (std::is_same_v<T, Half>) {
      return half_to_float(value);
    } else {
      return static_cast<double>(value);
    }
  });
}

std::vector<int64_t> Tensor::to_int64_vector() const {
  std::vector<int64_t> out(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) out[static_cast<size_t>(i)] = int_at(i);
  return out;
}

}  // namespace edgefuse
