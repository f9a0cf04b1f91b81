// PointwiseChain's attributes, shape rule and reference kernel (see pointwise_chain.h). The
// optimised f32 kernel is in pointwise_chain_cpu.cpp.
#include "runtime/ops/pointwise_chain.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "runtime/ops/broadcast.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/unary_math.h"

namespace edgefuse {

namespace {

constexpr size_t kParamsPerStep = 4;

// One step in double, as the reference kernels of the replaced op compute it.
double apply_step(const PointwiseChainStep& step, double v, double operand) {
  const double a = step.chain_on_right ? operand : v;
  const double b = step.chain_on_right ? v : operand;
  switch (step.op) {
    case OpKind::kRelu:
      return unary_math::relu(v);
    case OpKind::kLeakyRelu:
      return unary_math::leaky_relu(v, static_cast<double>(step.alpha));
    case OpKind::kSigmoid:
      return unary_math::sigmoid(v);
    case OpKind::kTanh:
      return std::tanh(v);
    case OpKind::kHardSigmoid:
      return unary_math::hard_sigmoid(v, static_cast<double>(step.alpha), static_cast<double>(step.beta));
    case OpKind::kHardSwish:
      return unary_math::hard_swish(v);
    case OpKind::kClip:
      return unary_math::clip(v, static_cast<double>(step.lo), static_cast<double>(step.hi));
    case OpKind::kSqrt:
      return std::sqrt(v);
    case OpKind::kExp:
      return std::exp(v);
    case OpKind::kAdd:
      return a + b;
    case OpKind::kSub:
      return a - b;
    case OpKind::kMul:
      return a * b;
    case OpKind::kDiv:
      return a / b;
    case OpKind::kPow:
      return std::pow(a, b);
    case OpKind::kPRelu:
      return a < 0 ? b * a : a;
    default:
      return v;  // pointwise_chain() admits only the ops above
  }
}

}  // namespace

Result<PointwiseChain> pointwise_chain(const Node& node) {
  const std::vector<int64_t> ops = node.attrs.get_ints("chain_ops");
  const std::vector<int64_t> operands = node.attrs.get_ints("chain_operands");
  const std::vector<int64_t> on_right = node.attrs.get_ints("chain_on_right");
  const std::vector<float> params = node.attrs.get_floats("chain_params");
  if (ops.empty() || ops.size() > static_cast<size_t>(kMaxChainSteps)) {
    return invalid_model("chain_ops has ", ops.size(), " steps, expected 1 to ", kMaxChainSteps);
  }
  if (operands.size() != ops.size() || on_right.size() != ops.size() || params.size() != kParamsPerStep * ops.size()) {
    return invalid_model("chain attributes disagree on the step count: ", ops.size(), " chain_ops, ", operands.size(),
                         " chain_operands, ", on_right.size(), " chain_on_right, ", params.size(),
                         " chain_params (4 per step)");
  }
  const auto input_count = static_cast<int64_t>(node.inputs.size());
  PointwiseChain chain;
  for (size_t s = 0; s < ops.size(); ++s) {
    PointwiseChainStep step;
    if (ops[s] < 0 || ops[s] >= kOpCount) return invalid_model("chain step ", s, ": op ", ops[s], " is not an op");
    step.op = static_cast<OpKind>(ops[s]);
    const bool unary = is_pointwise_unary(step.op);
    if (!unary && !is_pointwise_binary(step.op)) {
      return invalid_model("chain step ", s, ": ", op_name(step.op), " is not a pointwise op a chain can hold");
    }
    if (unary && operands[s] != -1) {
      return invalid_model("chain step ", s, ": unary ", op_name(step.op), " has operand ", operands[s],
                           ", expected -1");
    }
    if (!unary && (operands[s] < -1 || operands[s] >= input_count)) {
      return invalid_model("chain step ", s, ": ", op_name(step.op), " reads input ", operands[s], " of ", input_count);
    }
    if (on_right[s] != 0 && on_right[s] != 1) {
      return invalid_model("chain step ", s, ": chain_on_right is ", on_right[s], ", expected 0 or 1");
    }
    step.operand = static_cast<int>(operands[s]);
    step.chain_on_right = on_right[s] == 1;
    step.alpha = params[kParamsPerStep * s];
    step.beta = params[kParamsPerStep * s + 1];
    step.lo = params[kParamsPerStep * s + 2];
    step.hi = params[kParamsPerStep * s + 3];
    chain.steps.push_back(step);
  }
  if (node.attrs.has("chain_window")) {
    const std::vector<int64_t> window = node.attrs.get_ints("chain_window");
    if (window.size() != 3 || window[0] < 0 || window[0] >= kMaxChainWindowRank || window[1] < 0 ||
        window[2] <= window[1]) {
      return invalid_model("chain_window must be [axis, start, end] with 0 <= axis < ", kMaxChainWindowRank,
                           " and 0 <= start < end, got ", window.size(), " values");
    }
    chain.window = ChainWindow{static_cast<int>(window[0]), window[1], window[2]};
  }
  return chain;
}

Shape chain_window_shape(const Shape& full, const ChainWindow& window) {
  Shape shape = full;
  shape[static_cast<size_t>(window.axis)] = window.end - window.start;
  return shape;
}

void set_pointwise_chain(Attributes& attrs, const PointwiseChain& chain) {
  std::vector<int64_t> ops, operands, on_right;
  std::vector<float> params;
  for (const PointwiseChainStep& step : chain.steps) {
    ops.push_back(static_cast<int64_t>(step.op));
    operands.push_back(step.operand);
    on_right.push_back(step.chain_on_right ? 1 : 0);
    params.insert(params.end(), {step.alpha, step.beta, step.lo, step.hi});
  }
  attrs.set("chain_ops", std::move(ops));
  attrs.set("chain_operands", std::move(operands));
  attrs.set("chain_on_right", std::move(on_right));
  attrs.set("chain_params", std::move(params));
  if (chain.window) {
    attrs.set("chain_window", std::vector<int64_t>{chain.window->axis, chain.window->start, chain.window->end});
  } else {
    attrs.erase("chain_window");
  }
}

Status infer_pointwise_chain(const Node& node, std::span<const Tensor* const> inputs,
                             std::vector<TensorDesc>& outputs) {
  if (inputs.size() > static_cast<size_t>(kMaxChainInputs)) {
    return invalid_model("PointwiseChain has ", inputs.size(), " inputs, at most ", kMaxChainInputs);
  }
  EF_ASSIGN_OR_RETURN(const PointwiseChain chain, pointwise_chain(node));
  Shape shape;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == nullptr) return invalid_model("PointwiseChain input ", i, " is missing");
    if (inputs[i]->dtype() != DType::kF32) {
      return unsupported("PointwiseChain input ", i, " is ", inputs[i]->desc().to_string(), ", expected f32");
    }
    if (!chain.window) {
      EF_ASSIGN_OR_RETURN(shape, broadcast_shapes(shape, inputs[i]->shape()));
    }
  }
  if (chain.window) {
    const Shape& full = inputs[0]->shape();
    const ChainWindow& w = *chain.window;
    if (w.axis >= static_cast<int>(full.size()) || w.end > full[static_cast<size_t>(w.axis)]) {
      return invalid_model("chain_window [", w.axis, ", ", w.start, ", ", w.end, "] does not fit input 0 of shape ",
                           inputs[0]->desc().to_string());
    }
    const Shape window = chain_window_shape(full, w);
    for (size_t i = 1; i < inputs.size(); ++i) {
      EF_ASSIGN_OR_RETURN(const Shape widened, broadcast_shapes(window, inputs[i]->shape()));
      if (widened != window) {
        return invalid_model("PointwiseChain input ", i, " of shape ", inputs[i]->desc().to_string(),
                             " widens the chain's window of ", TensorDesc{DType::kF32, window}.to_string());
      }
    }
    shape = full;
  }
  outputs.assign(1, TensorDesc{DType::kF32, std::move(shape)});
  return Status::ok();
}

// Per output element: every input's index from the output's multi-index, the steps in double,
// one rounding to f32 at the end. In a windowed chain, X0 is indexed as the output and the other
// inputs by the element's index within the window; elements outside it are X0's.
Status reference_pointwise_chain(const KernelArgs& args) {
  EF_ASSIGN_OR_RETURN(const PointwiseChain chain, pointwise_chain(args.node));
  Tensor& out = *args.outputs[0];
  const Shape computed = chain.window ? chain_window_shape(out.shape(), *chain.window) : out.shape();
  std::vector<std::vector<int64_t>> strides;
  for (size_t k = 0; k < args.inputs.size(); ++k) {
    strides.push_back(broadcast_strides(args.inputs[k]->shape(), k == 0 ? out.shape() : computed));
  }
  std::vector<int64_t> offsets(args.inputs.size());
  const float* x0 = args.inputs[0]->data<float>();
  float* po = out.data<float>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    std::fill(offsets.begin(), offsets.end(), 0);
    bool outside = false;
    for (int64_t rest = i, d = out.rank() - 1; d >= 0; --d) {
      int64_t coordinate = rest % out.dim(static_cast<int>(d));
      rest /= out.dim(static_cast<int>(d));
      offsets[0] += coordinate * strides[0][static_cast<size_t>(d)];
      if (chain.window && d == chain.window->axis) {
        outside = coordinate < chain.window->start || coordinate >= chain.window->end;
        coordinate -= chain.window->start;
      }
      for (size_t k = 1; k < offsets.size(); ++k) offsets[k] += coordinate * strides[k][static_cast<size_t>(d)];
    }
    if (outside) {
      po[i] = x0[offsets[0]];
      continue;
    }
    const auto value = [&](int k) { return static_cast<double>(args.inputs[k]->data<float>()[offsets[k]]); };
    double v = value(0);
    for (const PointwiseChainStep& step : chain.steps) {
      v = apply_step(step, v, step.operand < 0 ? static_cast<double>(step.alpha) : value(step.operand));
    }
    po[i] = static_cast<float>(v);
  }
  return Status::ok();
}

}  // namespace edgefuse
