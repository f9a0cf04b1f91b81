// Lowering of a memory-planned graph to the GPU backend's steps: per node, in order, the kernel
// parameter blocks (step_kernels.h) that compute it, with operands named by where they live
// (the plan's arena, the packed constants, a graph input or output) rather than by address, so
// one lowered plan binds to device memory (cuda_executor.cu) or to host memory (host_runner.h,
// the emulation the tests run without a GPU).
//
// A node the GPU kernels do not cover (an op without a kernel, a dtype other than f32 where the
// kernel needs it, a shape beyond kMaxRank, an operand only known at run time that the kernel
// needs at lowering time) becomes a CPU fallback step: its CPU kernel runs on copies of its
// operands. Fallbacks are listed, so the executor can log each one and never falls back silently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "runtime/cuda/step_kernels.h"
#include "runtime/graph.h"
#include "runtime/memory_plan.h"
#include "runtime/status.h"

namespace edgefuse::gpu {

enum class Region : uint8_t { kNone, kArena, kConstants, kInput, kOutput };

// Where a value's bytes are: `offset` bytes into the arena or the constants, or graph input or
// output number `index`; `half`: f32 values stored as binary16 (fp16 storage mode).
struct BufferRef {
  Region region = Region::kNone;
  int32_t index = 0;
  int64_t offset = 0;
  bool half = false;
};

struct LoweringOptions {
  // fp16 storage: every f32 activation in the arena and every f32 constant a kernel reads is stored
  // as binary16 (half the bytes moved); kernels compute in f32. Graph inputs and outputs stay f32.
  bool fp16_storage = false;
};

// Not a kernel: the node's CPU kernel runs on host copies of its operands.
struct CpuFallbackStep {
  std::string reason;  // why the GPU kernels do not cover it
};

using StepParams = std::variant<ConvStep, UnaryStep, BinaryStep, PoolStep, PlaneMeanStep, SoftmaxStep,
                                ChannelAffineStep, BlockCopyStep, GatherStep, CpuFallbackStep>;

struct LoweredStep {
  NodeId node = -1;  // the node it computes (part of), -1 for the final output copies
  StepParams params;
  BufferRef inputs[kMaxStepInputs];  // kernel steps: operand slots in step_kernels.h order
  BufferRef output;

  bool is_fallback() const { return std::holds_alternative<CpuFallbackStep>(params); }
};

struct LoweredPlan {
  MemoryPlan plan;
  LoweringOptions options;
  std::vector<LoweredStep> steps;
  std::vector<BufferRef> value_refs;  // per value: where it lives (kNone: empty, or only in plan.known)
  // Packed bytes of every constant a kernel step reads (initializers, folded values, and tables
  // made while lowering: gather maps, folded BatchNormalization), each block kPlanAlignment-aligned.
  std::vector<std::byte> constants;
  std::vector<TensorDesc> output_descs;  // per graph output

  int fallback_count() const;
  // "node 'name' (Op): reason" per fallback step, for logs.
  std::vector<std::string> describe_fallbacks(const Graph& graph) const;
};

// Lowers `plan` (made by plan_memory for this graph) to steps.
Result<LoweredPlan> lower_plan(const Graph& graph, MemoryPlan plan, const LoweringOptions& options = {});

// Value v's bytes as stored (binary16 for a half ref) to and from a host tensor of its
// description (f32 for a half ref), for CPU fallbacks.
size_t stored_bytes(const TensorDesc& desc, const BufferRef& ref);
void decode_stored(const void* stored, const BufferRef& ref, Tensor& tensor);
void encode_stored(const Tensor& tensor, const BufferRef& ref, void* stored);

// Addresses of the regions a lowered plan's steps refer to, in one memory space.
struct Bindings {
  void* arena = nullptr;
  const void* constants = nullptr;
  std::vector<const void*> inputs;  // per graph input
  std::vector<void*> outputs;       // per graph output
};

void* resolve(const Bindings& bindings, const BufferRef& ref);

// The step's kernel parameters with its operand slots set to addresses in `bindings`.
StepParams bind_step(const LoweredStep& step, const Bindings& bindings);

}  // namespace edgefuse::gpu
