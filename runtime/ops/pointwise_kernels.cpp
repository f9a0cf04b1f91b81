// The f32 loops of the pointwise unary and binary ops and of Softmax on one CPU ISA level (compiled
// once per level, see cpu_kernel_table.h); unary_cpu.cpp, binary_cpu.cpp and softmax.cpp split the
// work and thread it.
// Loops are branch-free so GCC vectorises them; sigmoid and exp use the vectorisable f32 exp of
// vector_math.h (within 2 ulp), tanh and pow call the C library.
#include <algorithm>
#include <cmath>

#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/ops/simd_activation.h"
#include "runtime/ops/unary_math.h"
#include "runtime/ops/vector_math.h"

EF_DECLARE_CPU_KERNELS(EF_ISA_NAMESPACE)

namespace edgefuse::EF_ISA_NAMESPACE {

namespace {

// `fn` is taken by value: its parameters cannot alias `out`, so the loop vectorises.
template <typename Fn>
void map(const float* in, float* out, int64_t count, Fn fn) {
  for (int64_t i = 0; i < count; ++i) out[i] = fn(in[i]);
}

// Separate loops per stride pattern keep each one a plain vectorisable loop.
template <typename Op>
void zip(const float* a, int64_t stride_a, const float* b, int64_t stride_b, float* out, int64_t count, Op op) {
  if (stride_a == 1 && stride_b == 1) {
    for (int64_t i = 0; i < count; ++i) out[i] = op(a[i], b[i]);
  } else if (stride_a == 1) {
    const float scalar_b = *b;
    for (int64_t i = 0; i < count; ++i) out[i] = op(a[i], scalar_b);
  } else if (stride_b == 1) {
    const float scalar_a = *a;
    for (int64_t i = 0; i < count; ++i) out[i] = op(scalar_a, b[i]);
  } else {
    std::fill(out, out + count, op(*a, *b));
  }
}

// m[c] = max(m[c], row[c]) as a select GCC vectorises (std::max returns a reference and stays scalar:
// that loop took half of Softmax's time). NaN in row is dropped as std::max drops it.
inline void running_max(float* __restrict m, const float* __restrict row, int64_t width) {
  for (int64_t c = 0; c < width; ++c) m[c] = m[c] < row[c] ? row[c] : m[c];
}

}  // namespace

void unary_f32(const UnaryF32& op, const float* in, float* out, int64_t count) {
  switch (op.op) {
    case OpKind::kRelu:
      return map(in, out, count, [](float x) { return unary_math::relu(x); });
    case OpKind::kLeakyRelu:
      return map(in, out, count, [alpha = op.alpha](float x) { return unary_math::leaky_relu(x, alpha); });
    case OpKind::kSigmoid: {  // the Conv epilogue's vector logistic; the tail as one scalar loop
      int64_t i = 0;
      for (; i + simd::kLanes <= count; i += simd::kLanes)
        simd::store(out + i, simd::detail::sigmoid(simd::load(in + i)));
      return map(in + i, out + i, count - i, [](float x) { return vector_math::sigmoid_f32(x); });
    }
    case OpKind::kTanh:
      return map(in, out, count, [](float x) { return std::tanh(x); });
    case OpKind::kHardSigmoid:
      return map(in, out, count,
                 [alpha = op.alpha, beta = op.beta](float x) { return unary_math::hard_sigmoid(x, alpha, beta); });
    case OpKind::kHardSwish:
      return map(in, out, count, [](float x) { return unary_math::hard_swish(x); });
    case OpKind::kClip:
      return map(in, out, count, [lo = op.lo, hi = op.hi](float x) { return unary_math::clip(x, lo, hi); });
    case OpKind::kSqrt:
      return map(in, out, count, [](float x) { return std::sqrt(x); });
    case OpKind::kExp:
      return map(in, out, count, [](float x) { return vector_math::exp_f32(x); });
    default:
      return;  // unary_cpu.cpp only passes the ops above
  }
}

void binary_f32(OpKind op, const float* a, int64_t stride_a, const float* b, int64_t stride_b, float* out,
                int64_t count) {
  switch (op) {
    case OpKind::kAdd:
      return zip(a, stride_a, b, stride_b, out, count, [](float x, float y) { return x + y; });
    case OpKind::kSub:
      return zip(a, stride_a, b, stride_b, out, count, [](float x, float y) { return x - y; });
    case OpKind::kMul:
      return zip(a, stride_a, b, stride_b, out, count, [](float x, float y) { return x * y; });
    case OpKind::kDiv:
      return zip(a, stride_a, b, stride_b, out, count, [](float x, float y) { return x / y; });
    case OpKind::kPow:
      return zip(a, stride_a, b, stride_b, out, count, [](float x, float y) { return std::pow(x, y); });
    case OpKind::kPRelu:
      return zip(a, stride_a, b, stride_b, out, count, [](float x, float slope) { return x < 0.0f ? slope * x : x; });
    default:
      return;  // binary_cpu.cpp only passes the ops above
  }
}

void softmax_f32(const float* in, float* out, int64_t length, int64_t inner, int64_t columns) {
  if (inner == 1) {  // one contiguous group
    float max_value = in[0];
    for (int64_t k = 1; k < length; ++k) max_value = std::max(max_value, in[k]);
    float sum = 0;
    for (int64_t k = 0; k < length; ++k) {
      out[k] = vector_math::exp_f32(in[k] - max_value);
      sum += out[k];
    }
    const float scale = 1.0f / sum;
    for (int64_t k = 0; k < length; ++k) out[k] *= scale;
    return;
  }
  // Columns in blocks whose running max and sum stay in L1 beside the rows being read.
  constexpr int64_t kBlock = 256;
  float max_value[kBlock], scale[kBlock];
  for (int64_t c0 = 0; c0 < columns; c0 += kBlock) {
    const int64_t width = std::min(kBlock, columns - c0);
    const float* x = in + c0;
    float* y = out + c0;
    std::copy(x, x + width, max_value);
    for (int64_t k = 1; k < length; ++k) {
      const float* row = x + k * inner;
      running_max(max_value, row, width);
    }
    std::fill(scale, scale + width, 0.0f);
    const int64_t vectors = width / simd::kLanes * simd::kLanes;
    for (int64_t k = 0; k < length; ++k) {
      const float* row = x + k * inner;
      float* out_row = y + k * inner;
      for (int64_t c = 0; c < vectors; c += simd::kLanes) {
        const simd::Vec e = simd::exp_below(simd::load(row + c), simd::load(max_value + c));
        simd::store(out_row + c, e);
        simd::store(scale + c, simd::add(simd::load(scale + c), e));
      }
      for (int64_t c = vectors; c < width; ++c) {
        out_row[c] = vector_math::exp_f32(row[c] - max_value[c]);
        scale[c] += out_row[c];
      }
    }
    for (int64_t c = 0; c < width; ++c) scale[c] = 1.0f / scale[c];
    for (int64_t k = 0; k < length; ++k) {
      float* out_row = y + k * inner;
      for (int64_t c = 0; c < width; ++c) out_row[c] *= scale[c];
    }
  }
}

void softmax_expectation_f32(const float* in, const float* weights, float bias, float* out, int64_t length,
                             int64_t inner, int64_t columns) {
  if (inner == 1) {  // one contiguous group
    float max_value = in[0];
    for (int64_t k = 1; k < length; ++k) max_value = std::max(max_value, in[k]);
    float sum = 0, dot = 0;
    for (int64_t k = 0; k < length; ++k) {
      const float e = vector_math::exp_f32(in[k] - max_value);
      sum += e;
      dot += e * weights[k];
    }
    out[0] = dot / sum + bias;
    return;
  }
  // As softmax_f32, but the exponentials are summed twice (plain and weighted) instead of stored:
  // the group is read twice and one float written.
  constexpr int64_t kBlock = 256;
  float max_value[kBlock], sum[kBlock], dot[kBlock];
  for (int64_t c0 = 0; c0 < columns; c0 += kBlock) {
    const int64_t width = std::min(kBlock, columns - c0);
    const float* x = in + c0;
    std::copy(x, x + width, max_value);
    for (int64_t k = 1; k < length; ++k) {
      const float* row = x + k * inner;
      running_max(max_value, row, width);
    }
    std::fill(sum, sum + width, 0.0f);
    std::fill(dot, dot + width, 0.0f);
    const int64_t vectors = width / simd::kLanes * simd::kLanes;
    for (int64_t k = 0; k < length; ++k) {
      const float* row = x + k * inner;
      const float w = weights[k];
      const simd::Vec weight = simd::broadcast(w);
      for (int64_t c = 0; c < vectors; c += simd::kLanes) {
        const simd::Vec e = simd::exp_below(simd::load(row + c), simd::load(max_value + c));
        simd::store(sum + c, simd::add(simd::load(sum + c), e));
        simd::store(dot + c, simd::fma(e, weight, simd::load(dot + c)));
      }
      for (int64_t c = vectors; c < width; ++c) {
        const float e = vector_math::exp_f32(row[c] - max_value[c]);
        sum[c] += e;
        dot[c] += e * w;
      }
    }
    for (int64_t c = 0; c < width; ++c) out[c0 + c] = dot[c] / sum[c] + bias;
  }
}

}  // namespace edgefuse::EF_ISA_NAMESPACE
