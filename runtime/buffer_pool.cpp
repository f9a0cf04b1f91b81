#include "runtime/buffer_pool.h"

#include <cstring>

namespace edgefuse {

Tensor BufferPool::take(DType dtype, const Shape& shape) {
  const size_t bytes = static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype);
  auto it = free_by_size_.find(bytes);
  if (bytes == 0 || it == free_by_size_.end() || it->second.empty()) return Tensor::empty(dtype, shape);
  std::shared_ptr<void> storage = std::move(it->second.back());
  it->second.pop_back();
  pooled_bytes_ -= bytes;
  // Cleared like a fresh allocation, so kernels see the same contract either way.
  std::memset(storage.get(), 0, bytes);
  return Tensor::with_storage(dtype, shape, std::move(storage));
}

void BufferPool::give_back(Tensor& tensor) {
  const std::shared_ptr<void>& storage = tensor.storage();
  // use_count 1: only this tensor holds it (not a graph output handed to a caller, not an initializer).
  if (storage != nullptr && storage.use_count() == 1 && tensor.nbytes() > 0) {
    pooled_bytes_ += tensor.nbytes();
    free_by_size_[tensor.nbytes()].push_back(storage);
  }
  tensor = Tensor();
}

}  // namespace edgefuse
