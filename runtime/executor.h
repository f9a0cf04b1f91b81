// Runs a graph on the CPU. Planned path (default): per distinct input-shape signature, plan once
// (runtime/memory_plan.h) and reuse: intermediates live at planned offsets in one arena, values
// that depend only on shapes and constants are computed once at plan time, and Concats whose
// inputs were written in place are skipped. Dynamic path (no
// static plan exists, or plan_memory is off): for each node in order, infer its output shapes
// from the actual inputs, allocate, run the kernel, and release each value after its last use.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/buffer_pool.h"
#include "runtime/graph.h"
#include "runtime/memory_plan.h"
#include "runtime/op_table.h"
#include "runtime/status.h"
#include "runtime/thread_pool.h"

namespace edgefuse {

struct ExecutorOptions {
  int threads = 0;                 // worker threads including the caller; <= 0: one per core
  bool reference_kernels = false;  // run the naive reference kernels (the test oracle) instead of optimised ones
  bool profile = false;            // time every node of each run (planned: kernel; dynamic: shape rule too)
  bool plan_memory = true;         // planned arena path; false: one buffer per tensor, shapes inferred each run
  bool conv_pairs = true;     // planned: Conv pairs run as one kernel where they qualify (conv_pair.h); false: never
  bool poison_arena = false;  // tests: fill the arena (and reused output storage) with 0xFF bytes (NaN) before each run
  // The graph is batch-separable: every input and output leads with the batch, and each image's
  // outputs depend on that image alone (models/detector/batching.h checks a detector's graph so).
  // With several threads, a batch of at least as many images as threads then runs in lanes: each
  // thread replays a single-threaded plan of its own on its share of whole images, so no kernel
  // waits for another thread's share or reads what another core wrote. The images past a multiple
  // of the thread count run together on all threads afterwards. Planned path only.
  bool batch_lanes = false;
};

class Executor {
 public:
  // Verifies the graph; the executor keeps a shared reference to it.
  static Result<Executor> create(std::shared_ptr<const Graph> graph, ExecutorOptions options = {});

  // Runs with one tensor per graph input, in graph input order; returns the graph outputs in
  // order. Inputs are checked against the graph's declared dtypes and known dims.
  Result<std::vector<Tensor>> run(std::span<const Tensor> inputs);

  // Per node, in graph order: milliseconds spent in the last run (empty unless options.profile).
  // A node run inside another's kernel (last_kernel_pairs) shows 0; the other, both. After a run in
  // lanes (ExecutorOptions::batch_lanes) this, last_kernel_pairs and memory_plan are the first lane's.
  const std::vector<double>& last_profile_ms() const { return profile_ms_; }
  // Per node, in graph order: the node the last run ran inside this node's kernel (the second
  // Conv of a pair, runtime/ops/conv_pair.h), else -1. Empty after a dynamic run.
  const std::vector<NodeId>& last_kernel_pairs() const { return ran_pairs_; }

  const Graph& graph() const { return *graph_; }
  int threads() const { return pool_ ? pool_->size() : 1; }
  // A run is coming within `hold`: wakes the worker threads now (ThreadPool::wake), so that their
  // wake-up overlaps the caller's work on the input instead of delaying the first kernels. Safe
  // from any thread, during a run too.
  void wake_threads(std::chrono::microseconds hold) {
    if (pool_) pool_->wake(hold);
  }
  // Whether a batch of at least threads() images runs in lanes (ExecutorOptions::batch_lanes).
  bool batch_lanes() const { return options_.batch_lanes && options_.plan_memory && pool_ != nullptr; }

  // How the executor plans memory with these options: the optimised kernels run the Conv pairs of
  // runtime/ops/conv_pair.h, whose tensor between is never stored.
  static PlanOptions plan_options(const ExecutorOptions& options);

  // The memory plan the last run used, or nullptr when it ran the dynamic path.
  const MemoryPlan* memory_plan() const { return last_plan_; }
  // How many times a plan was attempted (one per distinct input-shape signature), for tests.
  int plans_built() const { return plans_built_; }

 private:
  Executor() = default;
  Status check_input(size_t index, const Tensor& tensor) const;
  // The cached plan for these inputs' shapes (planning on first sight), or nullptr when none exists.
  const MemoryPlan* plan_for(std::span<const Tensor> inputs);
  Result<std::vector<Tensor>> run_planned(const MemoryPlan& plan, std::span<const Tensor> inputs);
  Result<std::vector<Tensor>> run_dynamic(std::span<const Tensor> inputs);
  // The batch to split into lanes (ExecutorOptions::batch_lanes), or 0 to run the inputs as one.
  int64_t lane_batch(std::span<const Tensor> inputs) const;
  // Runs `batch` images (at least threads()) in lanes, then the rest on all threads (executor_lanes.cpp).
  Result<std::vector<Tensor>> run_lanes(std::span<const Tensor> inputs, int64_t batch);

  std::shared_ptr<const Graph> graph_;
  ExecutorOptions options_;
  std::unique_ptr<ThreadPool> pool_;
  std::vector<int> use_counts_;  // per value: consumer nodes, plus one when it is a graph output
  std::vector<double> profile_ms_;
  std::vector<std::vector<ValueId>> written_into_;  // per graph output of the bound plan: values written into it
  std::vector<KernelCache> kernel_caches_;          // per node, for the planned path (op_table.h)
  std::unique_ptr<BufferPool> buffers_;             // storage of released intermediate values, reused next run
  // Per input-shape signature: its plan, or nullopt when the graph has no static plan there.
  std::map<std::vector<Shape>, std::unique_ptr<std::optional<MemoryPlan>>> plans_;
  const MemoryPlan* last_plan_ = nullptr;
  // The previous run's input shapes (a key of plans_) and their plan, found again without building
  // a key, which allocates.
  const std::vector<Shape>* recent_signature_ = nullptr;
  const MemoryPlan* recent_plan_ = nullptr;
  // run_planned's state, kept between runs so that replaying a plan allocates nothing: every
  // value's tensor (the arena views and known values of bound_plan_ over bound_arena_, made once;
  // inputs and separately stored values set per run, listed in stored_ and let go after it), the
  // two nodes' kernel arguments, and which nodes ran.
  struct NodeArgs {
    std::vector<const Tensor*> inputs;
    std::vector<Tensor*> outputs;
    uint32_t constant_inputs = 0;
  };
  std::vector<Tensor> values_;
  const MemoryPlan* bound_plan_ = nullptr;
  const void* bound_arena_ = nullptr;
  std::vector<size_t> stored_;
  NodeArgs node_args_[2];
  std::vector<bool> done_;
  std::vector<NodeId> ran_pairs_;
  int plans_built_ = 0;
  Tensor arena_;  // u8, sized for the largest plan used so far
  // Per value: the last graph output tensor the planned path handed out. When the caller has let
  // go of it (this is the only owner left) the next run writes there instead of allocating and
  // zeroing a new one: kernels write every output element.
  std::vector<Tensor> handed_out_;
  // Batch lanes: one single-threaded executor per thread (made on the first split run), each
  // lane's input views and last outputs, and the batched outputs last handed out (reused as
  // handed_out_ is).
  struct Lane {
    std::unique_ptr<Executor> executor;
    std::vector<Tensor> inputs;
    std::vector<Tensor> outputs;
    Status status;
  };
  std::vector<Lane> lanes_;
  std::vector<Tensor> lane_batch_out_;
};

}  // namespace edgefuse
