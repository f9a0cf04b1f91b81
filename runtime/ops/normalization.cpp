// BatchNormalization in inference mode: Y = (X - mean) / sqrt(var + epsilon) * scale + B, with
// scale, B, mean and var of shape [C] applied along axis 1 of X [N, C, D1, ...].
#include <cmath>
#include <vector>

#include "runtime/ops/numeric.h"
#include "runtime/ops/ops.h"

namespace edgefuse {

Status infer_batch_normalization(const Node& node, std::span<const Tensor* const> inputs,
                                 std::vector<TensorDesc>& outputs) {
  if (node.attrs.get_int("training_mode", 0) != 0) {
    return unsupported("BatchNormalization with training_mode=1 is not supported (inference only)");
  }
  if (node.outputs.size() > 1) {
    return unsupported("BatchNormalization running mean/var outputs are not supported (inference only)");
  }
  const Tensor& x = *inputs[0];
  if (x.dtype() != DType::kF32 && x.dtype() != DType::kF64 && x.dtype() != DType::kF16) {
    return unsupported("BatchNormalization does not support ", dtype_name(x.dtype()), " inputs");
  }
  if (x.rank() < 2) return invalid_argument("input has rank ", x.rank(), ", expected >= 2 (N, C, ...)");
  static constexpr const char* kParameterNames[] = {"", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i) {
    const Tensor& parameter = *inputs[i];
    if (!dtype_is_float(parameter.dtype())) {
      return invalid_model(kParameterNames[i], " is ", dtype_name(parameter.dtype()), ", expected a float type");
    }
    if (parameter.rank() != 1 || parameter.dim(0) != x.dim(1)) {
      return invalid_model(kParameterNames[i], " is ", parameter.desc().to_string(), ", expected [", x.dim(1),
                           "] (one per channel of input ", x.desc().to_string(), ")");
    }
  }
  outputs.assign(1, x.desc());
  return Status::ok();
}

Status reference_batch_normalization(const KernelArgs& args) {
  const Tensor& x = *args.inputs[0];
  const double epsilon = args.node.attrs.get_float("epsilon", 1e-5f);
  const int64_t batch = x.dim(0);
  const int64_t channels = x.dim(1);
  const int64_t plane = batch * channels == 0 ? 0 : x.numel() / (batch * channels);
  // Per channel: y = x * multiplier + shift.
  std::vector<double> multiplier(static_cast<size_t>(channels));
  std::vector<double> shift(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    const double scale = args.inputs[1]->double_at(c);
    const double bias = args.inputs[2]->double_at(c);
    const double mean = args.inputs[3]->double_at(c);
    const double var = args.inputs[4]->double_at(c);
    multiplier[c] = scale / std::sqrt(var + epsilon);
    shift[c] = bias - mean * multiplier[c];
  }
  return visit_dtype(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (kIsFloatLike<T>) {
      const T* in = x.data<T>();
      T* out = args.outputs[0]->data<T>();
      for (int64_t n = 0; n < batch; ++n) {
        for (int64_t c = 0; c < channels; ++c) {
          const int64_t base = (n * channels + c) * plane;
          for (int64_t i = 0; i < plane; ++i) {
            out[base + i] = from_double<T>(as_double(in[base + i]) * multiplier[c] + shift[c]);
          }
        }
      }
      return Status::ok();
    } else {
      return unsupported("BatchNormalization does not support ", dtype_name(x.dtype()), " inputs");
    }
  });
}

}  // namespace edgefuse
