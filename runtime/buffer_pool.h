// Recycles tensor storage between runs of a fixed graph. Every run asks for the same sizes in the
// same order, so after the first run each allocation is served from storage released earlier and
// no memory is returned to (and page-faulted back from) the operating system. The fuser's memory
// planner replaces this with one planned arena; until then this keeps steady-state runs
// allocation-free.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <vector>

#include "runtime/tensor.h"

namespace edgefuse {

class BufferPool {
 public:
  // A zero-filled tensor, on recycled storage of exactly the same byte size when there is some.
  Tensor take(DType dtype, const Shape& shape);
  // Returns `tensor`'s storage for reuse if nothing else still refers to it; releases the tensor.
  void give_back(Tensor& tensor);
  size_t pooled_bytes() const { return pooled_bytes_; }

 private:
  std::map<size_t, std::vector<std::shared_ptr<void>>> free_by_size_;
  size_t pooled_bytes_ = 0;
};

}  // namespace edgefuse
