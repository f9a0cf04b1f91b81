// The op table: one row per OpKind with its name, arity, shape rule and kernels.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "runtime/graph.h"
#include "runtime/op_kind.h"
#include "runtime/status.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"

namespace edgefuse {

// Shape rule: computes output descriptions from the node and its input tensors. Inputs that are
// omitted optional inputs are nullptr. Inputs may be meta tensors (no data); a rule that needs an
// input's values (Reshape's shape, Slice's starts, ...) returns kUnsupported naming that input
// when it has no data. Errors name the problem; the caller adds which node it was.
using InferFn = Status (*)(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs);

// What a kernel may keep between runs of one node, so that it is built once instead of every
// frame. One per node, owned by the executor.
//   data: derived from constant inputs (say, Conv's weights packed for its GEMM); `source` (the
//     input data it came from) and `variant` (how it was built: the CPU ISA level, say) identify
//     it, so the kernel rebuilds it when either changes.
//   setup: derived from the node's attributes and its inputs' dtypes and shapes (a Conv's
//     geometry, say), for the inputs described by setup_key (kernel_setup.h).
struct KernelCache {
  const void* source = nullptr;
  int64_t variant = -1;
  std::vector<float> data;
  const void* setup_type = nullptr;
  std::vector<int64_t> setup_key;
  std::shared_ptr<const void> setup;
};

struct KernelArgs {
  const Node& node;
  std::span<const Tensor* const> inputs;  // nullptr for omitted optional inputs
  std::span<Tensor* const> outputs;       // allocated by the caller with the shapes InferFn gave
  ThreadPool* pool = nullptr;             // nullptr: run single-threaded
  // Set by an executor whose constant inputs (initializers, folded values) keep their data and
  // address for its lifetime: bit i of constant_inputs says input i is one of them.
  KernelCache* cache = nullptr;
  uint32_t constant_inputs = 0;
};

// A kernel reads inputs and writes every element of every output. It may assume the inputs
// passed InferFn and the outputs have the inferred descriptions.
using KernelFn = Status (*)(const KernelArgs& args);

struct OpDef {
  OpKind kind;
  const char* name;
  int min_inputs;
  int max_inputs;
  int min_outputs;
  int max_outputs;
  InferFn infer;
  KernelFn reference;  // naive, obviously-correct kernel: the oracle in tests
  KernelFn cpu;        // optimised CPU kernel, or nullptr to use the reference
};

const OpDef& op_def(OpKind kind);
std::span<const OpDef> op_table();

// Runs the op's shape rule with the node named in any error.
Status infer_node(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs);

}  // namespace edgefuse
