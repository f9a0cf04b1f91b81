#include "runtime/ops/strided_copy.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/status.h"

namespace edgefuse {

namespace {

struct Dim {
  int64_t size;
  int64_t stride;
};

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
void copy_transposed(const unsigned char* source, std::vector<Dim> dims, Dim inner, unsigned char* out,
                     ThreadPool* pool) {
  constexpr int64_t kRowsPerTask = 64;
  const Dim rows = dims.back();
  dims.pop_back();
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
  EF_ASSERT(shape.size() == src_strides.size());
  for (int64_t size : shape) {
    if (size == 0) return;
  }
  const auto* source = static_cast<const unsigned char*>(src) + src_offset * static_cast<int64_t>(element_size);
  auto* out = static_cast<unsigned char*>(dst);
  std::vector<Dim> dims = simplify(shape, src_strides);
  if (dims.empty()) {
    std::memcpy(out, source, element_size);
    return;
  }
  const Dim inner = dims.back();
  dims.pop_back();
  if (!dims.empty() && dims.back().stride == 1 && inner.stride != 1 && element_size == 4) {
    copy_transposed(source, dims, inner, out, pool);
    return;
  }
  int64_t rows = 1;
  for (const Dim& d : dims) rows *= d.size;
  const int64_t row_bytes = inner.size * static_cast<int64_t>(element_size);
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(row_bytes, 1));

  parallel_for(pool, rows, grain, [&](int64_t begin, int64_t end) {
    // Odometer over the outer dims, started at row `begin`.
    std::vector<int64_t> index(dims.size(), 0);
    int64_t offset = 0;
    int64_t rest = begin;
    for (size_t d = dims.size(); d-- > 0;) {
      index[d] = rest % dims[d].size;
      rest /= dims[d].size;
      offset += index[d] * dims[d].stride;
    }
    for (int64_t row = begin; row < end; ++row) {
      copy_row(source + offset * static_cast<int64_t>(element_size), inner.stride, inner.size, out + row * row_bytes,
               element_size);
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
