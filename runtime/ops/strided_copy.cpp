#include "runtime/ops/strided_copy.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/status.h"

namespace edgefuse {

namespace {

using Dim = StridedCopy::Dim;

// Drops unit dims and merges a dim into its outer neighbour when the two are contiguous in the source.
std::vector<Dim> simplify(std::span<const int64_t> shape, std::span<const int64_t> strides) {
  std::vector<Dim> dims;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!dims.empty() && dims.back().stride == strides[d] * shape[d]) {
      dims.back() = {dims.back().size * shape[d], strides[d]};
    } else {
      dims.push_back({shape[d], strides[d]});
    }
  }
  return dims;
}

template <typename Word>
void gather_row(const unsigned char* src, int64_t stride, int64_t count, unsigned char* dst) {
  Word* out = reinterpret_cast<Word*>(dst);
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(out + i, src + i * stride * static_cast<int64_t>(sizeof(Word)), sizeof(Word));
}

void copy_row(const unsigned char* src, int64_t stride, int64_t count, unsigned char* dst, size_t element_size) {
  if (stride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(count) * element_size);
    return;
  }
  switch (element_size) {
    case 1:
      gather_row<uint8_t>(src, stride, count, dst);
      return;
    case 2:
      gather_row<uint16_t>(src, stride, count, dst);
      return;
    case 4:
      gather_row<uint32_t>(src, stride, count, dst);
      return;
    case 8:
      gather_row<uint64_t>(src, stride, count, dst);
      return;
    default:
      for (int64_t i = 0; i < count; ++i) {
        std::memcpy(dst + i * static_cast<int64_t>(element_size), src + i * stride * static_cast<int64_t>(element_size),
                    element_size);
      }
  }
}

// The last two dims form a transpose: output row r, column c reads source r + c * inner.stride
// (the row dim is contiguous in the source). Copying row by row would read each output row's
// elements a source row apart; the ISA kernel transposes vector-sized tiles in registers instead.
void copy_transposed(const unsigned char* source, std::span<const Dim> outer, Dim inner, unsigned char* out,
                     ThreadPool* pool) {
  constexpr int64_t kRowsPerTask = 64;
  const Dim rows = outer.back();
  const std::span<const Dim> dims = outer.first(outer.size() - 1);
  int64_t planes = 1;
  for (const Dim& d : dims) planes *= d.size;
  const int64_t row_blocks = (rows.size + kRowsPerTask - 1) / kRowsPerTask;
  const auto* src = reinterpret_cast<const float*>(source);
  auto* dst = reinterpret_cast<float*>(out);
  const CpuKernelTable& kernels = cpu_kernel_table();
  parallel_for(pool, planes * row_blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      // The source offset of plane `task / row_blocks` from its index over the outer dims.
      int64_t plane_offset = 0;
      for (int64_t rest = task / row_blocks, d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
        plane_offset += rest % dims[static_cast<size_t>(d)].size * dims[static_cast<size_t>(d)].stride;
        rest /= dims[static_cast<size_t>(d)].size;
      }
      const int64_t r0 = task % row_blocks * kRowsPerTask, r1 = std::min(rows.size, r0 + kRowsPerTask);
      kernels.transpose_f32(src + plane_offset + r0, inner.stride,
                            dst + task / row_blocks * rows.size * inner.size + r0 * inner.size, inner.size, r1 - r0,
                            inner.size);
    }
  });
}

}  // namespace

void copy_strided(const void* src, int64_t src_offset, std::span<const int64_t> shape,
                  std::span<const int64_t> src_strides, void* dst, size_t element_size, ThreadPool* pool) {
  StridedCopy(shape, src_strides, element_size).run(src, src_offset, dst, pool);
}

StridedCopy::StridedCopy(std::span<const int64_t> shape, std::span<const int64_t> src_strides, size_t element_size)
    : element_size_(element_size) {
  EF_ASSERT(shape.size() == src_strides.size());
  empty_ = std::find(shape.begin(), shape.end(), 0) != shape.end();
  outer_ = simplify(shape, src_strides);
  if (!outer_.empty()) {
    inner_ = outer_.back();
    outer_.pop_back();
  }
}

void StridedCopy::run(const void* src, int64_t src_offset, void* dst, ThreadPool* pool) const {
  if (empty_) return;
  const auto element_size = static_cast<int64_t>(element_size_);
  const auto* source = static_cast<const unsigned char*>(src) + src_offset * element_size;
  auto* out = static_cast<unsigned char*>(dst);
  if (!outer_.empty() && outer_.back().stride == 1 && inner_.stride != 1 && element_size == 4) {
    copy_transposed(source, outer_, inner_, out, pool);
    return;
  }
  const std::span<const Dim> dims = outer_;
  int64_t rows = 1;
  for (const Dim& d : dims) rows *= d.size;
  const int64_t row_bytes = inner_.size * element_size;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(row_bytes, 1));

  parallel_for(pool, rows, grain, [&](int64_t begin, int64_t end) {
    // Odometer over the outer dims, started at row `begin`; on the stack for any real view.
    constexpr size_t kStackDims = 8;
    int64_t stack_index[kStackDims];
    std::vector<int64_t> heap_index;
    int64_t* index = stack_index;
    if (dims.size() > kStackDims) {
      heap_index.resize(dims.size());
      index = heap_index.data();
    }
    int64_t offset = 0;
    int64_t rest = begin;
    for (size_t d = dims.size(); d-- > 0;) {
      index[d] = rest % dims[d].size;
      rest /= dims[d].size;
      offset += index[d] * dims[d].stride;
    }
    for (int64_t row = begin; row < end; ++row) {
      copy_row(source + offset * element_size, inner_.stride, inner_.size, out + row * row_bytes, element_size_);
      for (size_t d = dims.size(); d-- > 0;) {
        offset += dims[d].stride;
        if (++index[d] < dims[d].size) break;
        offset -= index[d] * dims[d].stride;
        index[d] = 0;
      }
    }
  });
}

}  // namespace edgefuse
