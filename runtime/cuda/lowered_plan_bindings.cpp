// Binding a lowered plan to the buffers of one run: BufferRefs resolved to addresses, step
// parameters with those addresses filled in, values moved in and out of their stored form (f32 or
// binary16) and the row filter's survivors scattered back (declared in lowering.h).
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "runtime/cuda/lowering.h"

namespace edgefuse::gpu {

size_t stored_bytes(const TensorDesc& desc, const BufferRef& ref) {
  return ref.half ? static_cast<size_t>(desc.numel()) * sizeof(uint16_t) : desc.nbytes();
}

void decode_stored(const void* stored, const BufferRef& ref, Tensor& tensor) {
  if (!ref.half) {
    std::memcpy(tensor.raw_data(), stored, tensor.nbytes());
    return;
  }
  const auto* halves = static_cast<const uint16_t*>(stored);
  float* values = tensor.data<float>();
  for (int64_t i = 0; i < tensor.numel(); ++i) values[i] = half_bits_to_float(halves[i]);
}

void encode_stored(const Tensor& tensor, const BufferRef& ref, void* stored) {
  if (!ref.half) {
    std::memcpy(stored, tensor.raw_data(), tensor.nbytes());
    return;
  }
  auto* halves = static_cast<uint16_t*>(stored);
  const float* values = tensor.data<float>();
  for (int64_t i = 0; i < tensor.numel(); ++i) halves[i] = float_to_half_bits(values[i]);
}

void* resolve(const Bindings& bindings, const BufferRef& ref) {
  switch (ref.region) {
    case Region::kNone:
      return nullptr;
    case Region::kArena:
      return static_cast<std::byte*>(bindings.arena) + ref.offset;
    case Region::kConstants:
      return const_cast<std::byte*>(static_cast<const std::byte*>(bindings.constants)) + ref.offset;
    case Region::kInput:
      return static_cast<std::byte*>(const_cast<void*>(bindings.inputs[static_cast<size_t>(ref.index)])) + ref.offset;
    case Region::kOutput:
      return static_cast<std::byte*>(bindings.outputs[static_cast<size_t>(ref.index)]) + ref.offset;
    case Region::kScratch:
      return static_cast<std::byte*>(bindings.scratch) + ref.offset;
  }
  return nullptr;
}

void scatter_filtered_rows(const RowFilterLayout& layout, const uint32_t* index_words, const float* compact,
                           Tensor& output) {
  float* data = output.data<float>();
  std::memset(data, 0, output.nbytes());
  const int64_t row_stride = layout.row_stride(), channel_stride = layout.channel_stride();
  const int64_t element = layout.rows * layout.channels;  // floats per batch element
  if (layout.filter.fill != 0) {
    for (int64_t b = 0; b < layout.batch; ++b) {
      for (int64_t r = 0; r < layout.rows; ++r) {
        for (int64_t c = layout.filter.column; c < std::max(layout.filter.column_end, layout.filter.column + 1); ++c) {
          data[b * element + r * row_stride + c * channel_stride] = layout.filter.fill;
        }
      }
    }
  }
  for (int64_t b = 0; b < layout.batch; ++b) {
    const uint32_t* words = index_words + b * (layout.rows + 1);
    const auto count = std::min<int64_t>(words[0], layout.rows);
    for (int64_t slot = 0; slot < count; ++slot) {
      const float* row = compact + (b * layout.rows + slot) * layout.channels;
      float* to = data + b * element + static_cast<int64_t>(words[1 + slot]) * row_stride;
      if (!layout.filter.channel_major) {
        std::memcpy(to, row, layout.row_bytes());
        continue;
      }
      for (int64_t c = 0; c < layout.channels; ++c) to[c * channel_stride] = row[c];
    }
  }
}

StepParams bind_step(const LoweredStep& step, const Bindings& bindings) {
  StepParams params = step.params;
  std::visit(
      [&](auto& p) {
        if constexpr (std::is_base_of_v<Operands, std::decay_t<decltype(p)>>) {
          for (int i = 0; i < kMaxStepInputs; ++i) p.in[i] = resolve(bindings, step.inputs[i]);
          p.out = resolve(bindings, step.output);
        }
      },
      params);
  return params;
}

}  // namespace edgefuse::gpu
