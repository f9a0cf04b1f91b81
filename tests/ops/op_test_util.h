// Helpers for op tests: build a node, run its shape rule and kernel directly.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "runtime/cpu_features.h"
#include "runtime/op_table.h"

namespace edgefuse::test {

// The CPU ISA levels this machine runs, lowest first.
std::vector<CpuIsa> supported_isas();

// Restores the level active before a test that switches levels, so test order does not matter.
class ActiveIsaGuard {
 public:
  ActiveIsaGuard() : saved_(active_cpu_isa()) {}
  ~ActiveIsaGuard() { (void)set_cpu_isa_for_testing(saved_); }
  ActiveIsaGuard(const ActiveIsaGuard&) = delete;
  ActiveIsaGuard& operator=(const ActiveIsaGuard&) = delete;

 private:
  CpuIsa saved_;
};

// A node of `op` with `input_count` inputs and `output_count` outputs (value ids are placeholders:
// kernels only look at attributes, and at inputs/outputs through KernelArgs).
Node make_node(OpKind op, int input_count, int output_count = 1);

// Infers output shapes, allocates, runs the reference (reference == true) or optimised kernel.
// A nullptr input is an omitted optional input. `cache` and `constant_inputs` are passed on as an
// executor would (KernelArgs).
Result<std::vector<Tensor>> run_op(const Node& node, const std::vector<const Tensor*>& inputs, bool reference,
                                   ThreadPool* pool = nullptr, KernelCache* cache = nullptr,
                                   uint32_t constant_inputs = 0);

}  // namespace edgefuse::test
