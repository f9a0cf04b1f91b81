// Tensor: dtype + shape + device + contiguous row-major storage.
//
// Storage is shared (copying a Tensor copies a handle, not the data; clone() copies data).
// A tensor may also be a view of memory it does not own (wrap()), or carry only its
// description (a "meta" tensor, has_data() == false) for shape inference without data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/dtype.h"
#include "runtime/status.h"

namespace edgefuse {

enum class Device : uint8_t { kCpu, kCuda };

using Shape = std::vector<int64_t>;

// Product of dims; 1 for a scalar (rank 0).
int64_t shape_numel(std::span<const int64_t> shape);
std::string shape_to_string(std::span<const int64_t> shape);  // "[1, 3, 416, 416]"
// Checks every dim is >= 0 and the element count times `element_size` fits in memory limits.
Status validate_shape(std::span<const int64_t> shape, size_t element_size);

// Row-major strides in elements.
std::vector<int64_t> contiguous_strides(std::span<const int64_t> shape);

struct TensorDesc {
  DType dtype = DType::kF32;
  Shape shape;

  int64_t numel() const { return shape_numel(shape); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  int rank() const { return static_cast<int>(shape.size()); }
  bool operator==(const TensorDesc&) const = default;
  std::string to_string() const;  // "f32[1, 3, 416, 416]"
};

inline constexpr size_t kTensorAlignment = 64;

class Tensor {
 public:
  Tensor() = default;

  // Allocates zero-initialised storage. Aborts on invalid shapes: validate untrusted shapes first.
  static Tensor empty(DType dtype, Shape shape, Device device = Device::kCpu);
  static Tensor zeros(DType dtype, Shape shape) { return empty(dtype, std::move(shape)); }
  // A description without storage, for shape inference.
  static Tensor meta(DType dtype, Shape shape);
  // Uses `storage` (at least desc.nbytes() bytes, kTensorAlignment-aligned) as is, without clearing it.
  static Tensor with_storage(DType dtype, Shape shape, std::shared_ptr<void> storage);
  // Views `data`, which must outlive the tensor and every copy of it.
  static Tensor wrap(DType dtype, Shape shape, void* data, Device device = Device::kCpu);

  template <typename T>
  static Tensor from_vector(Shape shape, const std::vector<T>& values) {
    Tensor t = empty(dtype_of<T>(), std::move(shape));
    EF_ASSERT(static_cast<int64_t>(values.size()) == t.numel(), "from_vector: ", values.size(), " values for ",
              shape_to_string(t.shape()));
    T* out = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
    return t;
  }
  template <typename T>
  static Tensor scalar(T value) {
    return from_vector<T>({}, {value});
  }

  const TensorDesc& desc() const { return desc_; }
  DType dtype() const { return desc_.dtype; }
  const Shape& shape() const { return desc_.shape; }
  int64_t dim(int axis) const { return desc_.shape[static_cast<size_t>(axis)]; }
  int rank() const { return desc_.rank(); }
  int64_t numel() const { return desc_.numel(); }
  size_t nbytes() const { return desc_.nbytes(); }
  Device device() const { return device_; }
  bool has_data() const { return data_ != nullptr || numel() == 0; }

  // The owning handle of this tensor's storage; null for views and meta tensors.
  const std::shared_ptr<void>& storage() const { return owner_; }
  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }
  template <typename T>
  T* data() {
    EF_ASSERT(dtype_of<T>() == desc_.dtype, "tensor is ", dtype_name(desc_.dtype), ", accessed as ",
              dtype_name(dtype_of<T>()));
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* data() const {
    EF_ASSERT(dtype_of<T>() == desc_.dtype, "tensor is ", dtype_name(desc_.dtype), ", accessed as ",
              dtype_name(dtype_of<T>()));
    return static_cast<const T*>(data_);
  }
  template <typename T>
  std::span<const T> values() const {
    return {data<T>(), static_cast<size_t>(numel())};
  }

  // Same storage, new shape with the same element count.
  Tensor reshaped(Shape shape) const;
  // Deep copy into fresh storage.
  Tensor clone() const;
  // Reads element i of an integer tensor (any integer dtype) as int64.
  int64_t int_at(int64_t i) const;
  // Reads element i of a numeric tensor as double.
  double double_at(int64_t i) const;
  // All elements of an integer tensor as int64 (shape operands: axes, pads, starts...).
  std::vector<int64_t> to_int64_vector() const;

 private:
  TensorDesc desc_;
  Device device_ = Device::kCpu;
  std::shared_ptr<void> owner_;  // keeps owned storage alive; null for views and meta tensors
  void* data_ = nullptr;
};

}  // namespace edgefuse
