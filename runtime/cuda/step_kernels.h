// The kernels of the GPU backend as work-item bodies: each step's parameter block (plain data,
// passed by value to the kernel) has run(i) for work item i of count(). On the device a
// grid-stride loop calls run(i) (step_launch.cu); the host emulation (host_runner.cpp) loops
// over the same bodies. Operand pointers are filled in when a lowered plan is bound to memory
// (lowering.h); they are raw so the blocks stay trivially copyable.
//
// Work items write disjoint outputs (the row filter's items share a counter through an atomic
// increment), and a pointwise item reads element i before writing it, so the memory planner's
// in-place outputs (memory_plan.h) are safe under any execution order.
#pragma once

#include <cstdint>

#include "runtime/cuda/device_math.h"

namespace edgefuse::gpu {

inline constexpr int kMaxRank = 8;
inline constexpr int kMaxStepInputs = 4;

inline constexpr uint8_t kHalfOutput = 1u << kMaxStepInputs;

// Operand slots of every step: inputs (nullptr when absent) and the one output. In fp16 storage
// mode (lowering.h) f32 values live as binary16: bit k of `half` marks input k, kHalfOutput the
// output. Float operands are read and written through load() and store(); math stays in f32.
struct Operands {
  const void* in[kMaxStepInputs] = {};
  void* out = nullptr;
  uint8_t half = 0;

  EF_HOST_DEVICE float load(int k, int64_t i) const {
    return ((half >> k) & 1u) != 0 ? half_bits_to_float(static_cast<const uint16_t*>(in[k])[i])
                                   : static_cast<const float*>(in[k])[i];
  }
  EF_HOST_DEVICE void store(int64_t i, float v) const {
    if ((half & kHalfOutput) != 0) {
      static_cast<uint16_t*>(out)[i] = float_to_half_bits(v);
    } else {
      static_cast<float*>(out)[i] = v;
    }
  }
};

// Conv with the fuser's epilogue: Y = act(conv(X, W) + B + R) or act(conv(X, W) + B) + R.
// Operands: X, W, B (optional), R (optional). 1-3 spatial axes, padded to 3 (leading unit axes).
// One work item computes one output position for `channels_per_item` consecutive output channels
// of one group (1 to kMaxConvChannelsPerItem), so each input value it loads feeds that many
// multiply-adds; it accumulates in f32 in the reference's tap order.
inline constexpr int kMaxConvChannelsPerItem = 4;

struct ConvStep : Operands {
  int64_t batch = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t group = 1;
  int64_t channels_per_item = 1;  // divides out_channels / group
  int64_t input[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t dilation[3] = {1, 1, 1};
  int64_t pad_begin[3] = {0, 0, 0};
  int64_t output[3] = {1, 1, 1};
  ActivationParams activation;
  bool residual_after_activation = false;
  int64_t residual_channels = 0;     // R's channels: out_channels, or (group 1) fewer, the rest taking none
  bool input_channels_last = false;  // X is [N, spatial..., C] (ConvProblem::channels_last)

  EF_HOST_DEVICE int64_t count() const {
    return batch * (out_channels / channels_per_item) * output[0] * output[1] * output[2];
  }

  EF_HOST_DEVICE void run(int64_t i) const {
    int64_t rest = i;
    const int64_t ox = rest % output[2];
    rest /= output[2];
    const int64_t oy = rest % output[1];
    rest /= output[1];
    const int64_t oz = rest % output[0];
    rest /= output[0];
    const int64_t blocks = out_channels / channels_per_item;
    const int64_t m0 = (rest % blocks) * channels_per_item;
    const int64_t n = rest / blocks;
    const int64_t cg = in_channels / group;
    const int64_t first_channel = (m0 / (out_channels / group)) * cg;
    const int64_t in_plane = input[0] * input[1] * input[2];
    const int64_t channel_stride = input_channels_last ? 1 : in_plane;
    const int64_t position_stride = input_channels_last ? in_channels : 1;
    const int64_t kernel_volume = kernel[0] * kernel[1] * kernel[2];
    float acc[kMaxConvChannelsPerItem];
    for (int j = 0; j < kMaxConvChannelsPerItem; ++j)
      acc[j] = j < channels_per_item && in[2] != nullptr ? load(2, m0 + j) : 0.0f;
    for (int64_t c = 0; c < cg; ++c) {
      const int64_t plane = n * in_channels * in_plane + (first_channel + c) * channel_stride;
      const int64_t taps = (m0 * cg + c) * kernel_volume;
      for (int64_t kz = 0; kz < kernel[0]; ++kz) {
        const int64_t iz = oz * stride[0] + kz * dilation[0] - pad_begin[0];
        if (iz < 0 || iz >= input[0]) continue;
        for (int64_t ky = 0; ky < kernel[1]; ++ky) {
          const int64_t iy = oy * stride[1] + ky * dilation[1] - pad_begin[1];
          if (iy < 0 || iy >= input[1]) continue;
          for (int64_t kx = 0; kx < kernel[2]; ++kx) {
            const int64_t ix = ox * stride[2] + kx * dilation[2] - pad_begin[2];
            if (ix < 0 || ix >= input[2]) continue;
            const float x = load(0, plane + ((iz * input[1] + iy) * input[2] + ix) * position_stride);
            const int64_t tap = taps + (kz * kernel[1] + ky) * kernel[2] + kx;
            for (int j = 0; j < kMaxConvChannelsPerItem; ++j) {
              if (j < channels_per_item) acc[j] += x * load(1, tap + j * cg * kernel_volume);
            }
          }
        }
      }
    }
    const int64_t spatial = output[0] * output[1] * output[2];
    const int64_t position = (oz * output[1] + oy) * output[2] + ox;
    for (int j = 0; j < kMaxConvChannelsPerItem; ++j) {
      if (j >= channels_per_item) break;
      const int64_t m = m0 + j;
      const int64_t o = (n * out_channels + m) * spatial + position;
      const int64_t r = (n * residual_channels + m) * spatial + position;
      if (in[3] == nullptr || m >= residual_channels) {
        store(o, apply_activation(activation, acc[j]));
      } else if (residual_after_activation) {
        store(o, apply_activation(activation, acc[j]) + load(3, r));
      } else {
        store(o, apply_activation(activation, acc[j] + load(3, r)));
      }
    }
  }
};

// A unary op (or activation) on each element. Operands: X.
struct UnaryStep : Operands {
  int64_t elements = 0;
  ActivationParams activation;

  EF_HOST_DEVICE int64_t count() const { return elements; }
  EF_HOST_DEVICE void run(int64_t i) const { store(i, apply_activation(activation, load(0, i))); }
};

enum class BinaryOp : uint8_t { kAdd, kSub, kMul, kDiv, kPow, kPRelu };

EF_HOST_DEVICE inline float apply_binary(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::kAdd:
      return a + b;
    case BinaryOp::kSub:
      return a - b;
    case BinaryOp::kMul:
      return a * b;
    case BinaryOp::kDiv:
      return a / b;
    case BinaryOp::kPow:
      return powf(a, b);
    case BinaryOp::kPRelu:
      return a < 0.0f ? a * b : a;
  }
  return a;
}

// A broadcasting binary op on f32. Operands: A, B. Strides are in elements, 0 on broadcast dims.
struct BinaryStep : Operands {
  BinaryOp op = BinaryOp::kAdd;
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides_a[kMaxRank] = {};
  int64_t strides_b[kMaxRank] = {};

  EF_HOST_DEVICE int64_t count() const {
    int64_t n = 1;
    for (int d = 0; d < rank; ++d) n *= dims[d];
    return n;
  }
  EF_HOST_DEVICE void run(int64_t i) const {
    int64_t offset_a = 0;
    int64_t offset_b = 0;
    int64_t rest = i;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t index = rest % dims[d];
      rest /= dims[d];
      offset_a += index * strides_a[d];
      offset_b += index * strides_b[d];
    }
    store(i, apply_binary(op, load(0, offset_a), load(1, offset_b)));
  }
};

// One link of a pointwise chain: a unary activation of the chain value, or a binary op of it and
// an operand (input slot `operand`, or `constant` when operand is -1), the chain value on the left
// unless chain_on_right.
inline constexpr int kMaxChainLinks = 8;

struct ChainLink {
  bool binary = false;
  ActivationParams activation;   // unary
  BinaryOp op = BinaryOp::kAdd;  // binary
  int8_t operand = -1;
  bool chain_on_right = false;
  float constant = 0;
};

// A PointwiseChain (runtime/ops/pointwise_chain.h) in one pass: per output element the chain
// value is loaded from input 0, every link is applied in registers, and only the result is stored.
// Operands: X0..X3 broadcast to the output (strides in elements, 0 on broadcast dims). A windowed
// chain's items are its window's elements (dims), which lie in X0 and the output alike, from
// window_base on with X0's strides; the rest of the output is copied by an earlier step, if not
// already X0's bytes.
struct ChainStep : Operands {
  int rank = 0;
  int inputs = 1;
  int links = 0;
  bool windowed = false;
  int64_t window_base = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxStepInputs][kMaxRank] = {};
  ChainLink link[kMaxChainLinks];

  EF_HOST_DEVICE int64_t count() const {
    int64_t n = 1;
    for (int d = 0; d < rank; ++d) n *= dims[d];
    return n;
  }
  EF_HOST_DEVICE void run(int64_t i) const {
    int64_t offset[kMaxStepInputs] = {window_base};
    int64_t rest = i;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t index = rest % dims[d];
      rest /= dims[d];
      for (int k = 0; k < kMaxStepInputs; ++k) offset[k] += index * strides[k][d];
    }
    float v = load(0, offset[0]);
    for (int l = 0; l < links; ++l) {
      const ChainLink& c = link[l];
      if (!c.binary) {
        v = apply_activation(c.activation, v);
        continue;
      }
      const float other = c.operand < 0 ? c.constant : load(c.operand, offset[c.operand]);
      v = c.chain_on_right ? apply_binary(c.op, other, v) : apply_binary(c.op, v, other);
    }
    store(windowed ? offset[0] : i, v);
  }
};

// MaxPool or AveragePool over 1-3 spatial axes (padded to 3). Operands: X. One item per output.
// A window wholly in the padding yields -inf (max) or 0 (average), as the CPU reference does.
struct PoolStep : Operands {
  bool average = false;
  bool count_include_pad = false;
  int64_t planes = 0;  // N * C
  int64_t input[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t dilation[3] = {1, 1, 1};
  int64_t pad_begin[3] = {0, 0, 0};
  int64_t pad_end[3] = {0, 0, 0};
  int64_t output[3] = {1, 1, 1};

  EF_HOST_DEVICE int64_t count() const { return planes * output[0] * output[1] * output[2]; }
  EF_HOST_DEVICE void run(int64_t i) const {
    int64_t rest = i;
    int64_t start[3];
    int64_t padded_taps = 1;
    for (int axis = 2; axis >= 0; --axis) {
      start[axis] = (rest % output[axis]) * stride[axis] - pad_begin[axis];
      rest /= output[axis];
      int64_t taps = 0;
      for (int64_t k = 0; k < kernel[axis]; ++k) {
        const int64_t at = start[axis] + k * dilation[axis];
        if (at >= -pad_begin[axis] && at < input[axis] + pad_end[axis]) ++taps;
      }
      padded_taps *= taps;
    }
    const int64_t plane = rest * input[0] * input[1] * input[2];
    float best = -INFINITY;
    float sum = 0;
    int64_t seen = 0;
    for (int64_t kz = 0; kz < kernel[0]; ++kz) {
      const int64_t iz = start[0] + kz * dilation[0];
      if (iz < 0 || iz >= input[0]) continue;
      for (int64_t ky = 0; ky < kernel[1]; ++ky) {
        const int64_t iy = start[1] + ky * dilation[1];
        if (iy < 0 || iy >= input[1]) continue;
        for (int64_t kx = 0; kx < kernel[2]; ++kx) {
          const int64_t ix = start[2] + kx * dilation[2];
          if (ix < 0 || ix >= input[2]) continue;
          const float v = load(0, plane + (iz * input[1] + iy) * input[2] + ix);
          if (seen == 0 || v > best) best = v;  // the first value wins even when it is NaN
          sum += v;
          ++seen;
        }
      }
    }
    if (!average) {
      store(i, best);
    } else {
      const int64_t divisor = count_include_pad ? padded_taps : seen;
      store(i, divisor > 0 ? sum / static_cast<float>(divisor) : 0.0f);
    }
  }
};

// Mean of each (n, c) plane: GlobalAveragePool. Operands: X. One item per plane.
struct PlaneMeanStep : Operands {
  int64_t planes = 0;
  int64_t plane_size = 0;

  EF_HOST_DEVICE int64_t count() const { return planes; }
  EF_HOST_DEVICE void run(int64_t i) const {
    float sum = 0;
    for (int64_t k = 0; k < plane_size; ++k) sum += load(0, i * plane_size + k);
    store(i, plane_size > 0 ? sum / static_cast<float>(plane_size) : 0.0f);
  }
};

// Groups of `length` values `inner` apart in the view [outer, length, inner] of X (operand 0): item
// i is the group (i / inner, i % inner), whose values lie at group_base(i) + k * inner.
struct SoftmaxGroups : Operands {
  int64_t outer = 0;
  int64_t length = 0;
  int64_t inner = 0;

  EF_HOST_DEVICE int64_t count() const { return outer * inner; }
  EF_HOST_DEVICE int64_t group_base(int64_t i) const { return (i / inner) * length * inner + i % inner; }
  EF_HOST_DEVICE float group_max(int64_t base) const {
    float max_value = -INFINITY;
    for (int64_t k = 0; k < length; ++k) max_value = fmaxf(max_value, load(0, base + k * inner));
    return max_value;
  }
};

// Softmax along one axis. Operands: X. One item per group.
struct SoftmaxStep : SoftmaxGroups {
  EF_HOST_DEVICE void run(int64_t i) const {
    const int64_t base = group_base(i);
    const float max_value = group_max(base);
    float sum = 0;
    for (int64_t k = 0; k < length; ++k) sum += expf(load(0, base + k * inner) - max_value);
    // exp is computed again rather than kept in the output, which may hold only f16
    for (int64_t k = 0; k < length; ++k) store(base + k * inner, expf(load(0, base + k * inner) - max_value) / sum);
  }
};

// SoftmaxExpectation (runtime/ops/ops.h): per group, sum_k softmax_k * weights[k] + bias, written
// at (outer, inner). Operands: X, weights. One item per group.
struct SoftmaxExpectationStep : SoftmaxGroups {
  float bias = 0.0f;

  EF_HOST_DEVICE void run(int64_t i) const {
    const int64_t base = group_base(i);
    const float max_value = group_max(base);
    float sum = 0, dot = 0;
    for (int64_t k = 0; k < length; ++k) {
      const float e = expf(load(0, base + k * inner) - max_value);
      sum += e;
      dot += e * load(1, k);
    }
    store(i, dot / sum + bias);
  }
};

// y = x * scale[c] + shift[c] with c = (i / inner) % channels: BatchNormalization with its
// statistics folded into one scale and shift per channel. Operands: X, scale, shift.
struct ChannelAffineStep : Operands {
  int64_t elements = 0;
  int64_t channels = 1;
  int64_t inner = 1;

  EF_HOST_DEVICE int64_t count() const { return elements; }
  EF_HOST_DEVICE void run(int64_t i) const {
    const int64_t c = (i / inner) % channels;
    store(i, load(0, i) * load(1, c) + load(2, c));
  }
};

// Copies an element of `element_bytes` (1, 2, 4 or 8) as one unsigned word.
EF_HOST_DEVICE inline void copy_element(const void* src, int64_t from, void* dst, int64_t to, int element_bytes) {
  switch (element_bytes) {
    case 1:
      static_cast<uint8_t*>(dst)[to] = static_cast<const uint8_t*>(src)[from];
      break;
    case 2:
      static_cast<uint16_t*>(dst)[to] = static_cast<const uint16_t*>(src)[from];
      break;
    case 4:
      static_cast<uint32_t*>(dst)[to] = static_cast<const uint32_t*>(src)[from];
      break;
    default:
      static_cast<uint64_t*>(dst)[to] = static_cast<const uint64_t*>(src)[from];
      break;
  }
}

// rows x length block: dst[row * dst_stride + dst_offset + k] = src[row * src_stride + src_offset + k].
// Concat and Split move one block per input or output this way; Reshape and its kin are one row.
// Operands: source. Offsets and strides are in elements. element_bytes 0: f32 data whose source
// and destination differ in storage (f32 vs f16), converted through load() and store().
struct BlockCopyStep : Operands {
  int element_bytes = 4;
  int64_t rows = 0;
  int64_t length = 0;
  int64_t src_stride = 0;
  int64_t src_offset = 0;
  int64_t dst_stride = 0;
  int64_t dst_offset = 0;

  EF_HOST_DEVICE int64_t count() const { return rows * length; }
  EF_HOST_DEVICE void run(int64_t i) const {
    const int64_t row = i / length;
    const int64_t k = i % length;
    const int64_t from = row * src_stride + src_offset + k;
    const int64_t to = row * dst_stride + dst_offset + k;
    if (element_bytes == 0) {
      store(to, load(0, from));
    } else {
      copy_element(in[0], from, out, to, element_bytes);
    }
  }
};

// y[i] = x[map[i]], or `fill` where map[i] < 0: any op that only moves elements (Transpose, Slice,
// Pad, Gather with constant indices, nearest Resize), its map computed once when lowering.
// Operands: X, map (i32: half the bytes of i64, and no tensor here nears 2^31 elements). `fill` holds the fill
// element's bytes (Pad's constant value; an f32 when element_bytes is 0, which converts as BlockCopyStep does).
struct GatherStep : Operands {
  int element_bytes = 4;
  int64_t elements = 0;
  uint64_t fill = 0;

  EF_HOST_DEVICE int64_t count() const { return elements; }
  EF_HOST_DEVICE void run(int64_t i) const {
    const int64_t from = static_cast<const int32_t*>(in[1])[i];
    if (element_bytes == 0) {
      float fill_value = 0;
      memcpy(&fill_value, &fill, sizeof(fill_value));
      store(i, from >= 0 ? load(0, from) : fill_value);
    } else if (from >= 0) {
      copy_element(in[0], from, out, i, element_bytes);
    } else {
      copy_element(&fill, 0, out, i, element_bytes);
    }
  }
};

// ---- Row filter: only the rows a detector can use leave the device ---------------------------
// A [batch, rows, channels] output whose rows matter only when column `column` reaches a
// threshold (YOLOX: objectness, an upper bound of the score) is filtered on the device: per batch
// element an index buffer of rows + 1 words holds the count, then the passing row numbers (in any
// order), and the passing rows are packed at the start of that element's part of a compact buffer.

EF_HOST_DEVICE inline uint32_t atomic_increment(uint32_t* counter) {
#if defined(__CUDA_ARCH__)
  return atomicAdd(counter, 1u);
#else
  return __atomic_fetch_add(counter, 1u, __ATOMIC_RELAXED);
#endif
}

// Zeroes each batch element's count. Operands: none; output: the index buffer.
struct RowCountResetStep : Operands {
  int64_t batch = 0;
  int64_t stride = 1;  // words per batch element: rows + 1

  EF_HOST_DEVICE int64_t count() const { return batch; }
  EF_HOST_DEVICE void run(int64_t i) const { static_cast<uint32_t*>(out)[i * stride] = 0; }
};

// One item per row: a row whose largest of columns [column, column_end) reaches the threshold
// takes the next slot of its batch element. Operands: the output matrix (row r's channel c of each
// batch element at r * row_stride + c * channel_stride: [rows, channels] or [channels, rows]);
// output: the index buffer (its counts zeroed by RowCountResetStep).
struct RowSelectStep : Operands {
  int64_t batch = 0;
  int64_t rows = 0;
  int64_t channels = 0;
  int64_t column = 0;
  float threshold = 0;
  int64_t column_end = 0;
  int64_t row_stride = 0;
  int64_t channel_stride = 1;

  EF_HOST_DEVICE int64_t count() const { return batch * rows; }
  EF_HOST_DEVICE void run(int64_t i) const {
    const int64_t base = (i / rows) * rows * channels + (i % rows) * row_stride;
    float best = load(0, base + column * channel_stride);
    for (int64_t c = column + 1; c < column_end; ++c) {
      const float v = load(0, base + c * channel_stride);
      best = v > best ? v : best;
    }
    if (!(best >= threshold)) return;
    uint32_t* words = static_cast<uint32_t*>(out) + (i / rows) * (rows + 1);
    const uint32_t slot = atomic_increment(words);
    words[1 + slot] = static_cast<uint32_t>(i % rows);
  }
};

// One item per (batch element, slot, channel): slots below the count copy their row. Operands:
// the output matrix (laid out as RowSelectStep's), the index buffer; output: the compact buffer
// [batch, rows, channels] (f32), rows whole whatever the output's layout.
struct RowGatherStep : Operands {
  int64_t batch = 0;
  int64_t rows = 0;
  int64_t channels = 0;
  int64_t row_stride = 0;
  int64_t channel_stride = 1;

  EF_HOST_DEVICE int64_t count() const { return batch * rows * channels; }
  EF_HOST_DEVICE void run(int64_t i) const {
    const int64_t c = i % channels;
    const int64_t slot = (i / channels) % rows;
    const int64_t b = i / (channels * rows);
    const uint32_t* words = static_cast<const uint32_t*>(in[1]) + b * (rows + 1);
    if (slot >= static_cast<int64_t>(words[0])) return;
    store(i, load(0, b * rows * channels + words[1 + slot] * row_stride + c * channel_stride));
  }
};

}  // namespace edgefuse::gpu
