// The pointwise-chain pass on a decoder tail none of the shared models has: YOLOv5's box decode
// on its stride-8 output at 640 x 640, xy = (sigmoid(t) * 2 - 0.5 + grid) * anchor_scale, on a
// [1, 3, 80, 80, 85] tensor (6.5 MB). Runs the graph op by op (five kernels, in-place arena) and
// after fuse_pointwise_chains (one PointwiseChain), both planned, interleaved, at each thread
// count; reports median latency and activation bytes moved from the plans.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>

#include "bench/bench_common.h"
#include "fusion/passes.h"
#include "runtime/executor.h"
#include "runtime/memory_plan.h"

namespace edgefuse::bench {
namespace {

Tensor random_f32(Shape shape, std::mt19937& rng, float lo, float hi) {
  Tensor t = Tensor::empty(DType::kF32, std::move(shape));
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

// The decode tail as an exporter emits it: five pointwise nodes with scalar and tensor constants.
std::shared_ptr<Graph> decode_tail(std::mt19937& rng) {
  auto graph = std::make_shared<Graph>();
  const ValueId t = graph->add_value("t", TensorDesc{DType::kF32, {1, 3, 80, 80, 85}});
  graph->inputs().push_back(t);
  const ValueId grid = graph->add_initializer("grid", random_f32({1, 1, 80, 80, 85}, rng, 0, 80));
  const ValueId scale = graph->add_initializer("anchor_scale", random_f32({1, 3, 1, 1, 85}, rng, 4, 64));
  int counter = 0;
  const auto node = [&](OpKind op, std::vector<ValueId> inputs) {
    const std::string name = "n" + std::to_string(counter++);
    const ValueId out = graph->add_value(name, TensorDesc{DType::kF32, {1, 3, 80, 80, 85}});
    Node n;
    n.op = op;
    n.name = name;
    n.inputs = std::move(inputs);
    n.outputs = {out};
    graph->add_node(std::move(n));
    return out;
  };
  const auto scalar = [&](float v) {
    return graph->add_initializer("c" + std::to_string(counter++), Tensor::scalar(v));
  };
  ValueId v = node(OpKind::kSigmoid, {t});
  v = node(OpKind::kMul, {v, scalar(2.0f)});
  v = node(OpKind::kSub, {v, scalar(0.5f)});
  v = node(OpKind::kAdd, {v, grid});
  graph->outputs().push_back(node(OpKind::kMul, {v, scale}));
  return graph;
}

size_t bytes_moved(const Graph& graph, const Tensor& input) {
  Result<MemoryPlan> plan = plan_memory(graph, std::vector<TensorDesc>{input.desc()});
  return plan.is_ok() ? plan->activation_bytes_moved : 0;
}

double time_ms(Executor& executor, const std::vector<Tensor>& inputs) {
  const auto start = std::chrono::steady_clock::now();
  Result<std::vector<Tensor>> out = executor.run(inputs);
  const auto stop = std::chrono::steady_clock::now();
  if (!out.is_ok()) {
    std::fprintf(stderr, "bench_pointwise_chain: %s\n", out.status().to_string().c_str());
    std::exit(1);
  }
  return std::chrono::duration<double, std::milli>(stop - start).count();
}

int run(int argc, char** argv) {
  const cli::CommandSpec spec{
      .name = "bench_pointwise_chain",
      .summary = "YOLOv5's box decode tail op by op vs one PointwiseChain, as a Markdown table",
      .usage = "[options]",
      .options = {runs_option("50", "timed runs per variant and thread count"),
                  warmup_option("5", "untimed runs per variant first"),
                  {.name = "threads",
                   .value_name = "LIST",
                   .default_value = "1,2",
                   .description = "comma-separated thread counts"}},
  };
  int exit_code = 0;
  const std::optional<cli::ParsedArgs> parsed = parse_bench_args(spec, "bench_pointwise_chain", argc, argv, exit_code);
  if (!parsed) return exit_code;
  const int64_t runs = parsed->get_int("runs");
  const int64_t warmup = parsed->get_int("warmup");
  const Result<std::vector<int>> thread_counts = parse_thread_list(parsed->get("threads"));
  if (!thread_counts.is_ok()) {
    std::fprintf(stderr, "bench_pointwise_chain: error: %s\n", thread_counts.status().message().c_str());
    return 1;
  }

  std::mt19937 rng(1);
  const std::shared_ptr<Graph> op_by_op = decode_tail(rng);
  auto chained = std::make_shared<Graph>(*op_by_op);
  PassReport report;
  if (!fusion::fuse_pointwise_chains(*chained, report).is_ok() || report.changes != 1) {
    std::fprintf(stderr, "bench_pointwise_chain: the pass did not fuse the tail\n");
    return 1;
  }
  const std::vector<Tensor> inputs = {random_f32({1, 3, 80, 80, 85}, rng, -4, 4)};
  std::printf("YOLOv5 stride-8 box decode on [1, 3, 80, 80, 85] f32; %s; median [min-max] of %lld interleaved runs\n",
              compiler_description(), static_cast<long long>(runs));
  std::printf("activation bytes moved (plans): op by op %.1f MB, chain %.1f MB\n\n",
              static_cast<double>(bytes_moved(*op_by_op, inputs[0])) / 1e6,
              static_cast<double>(bytes_moved(*chained, inputs[0])) / 1e6);
  std::printf("| threads | op by op ms | chain ms | chain / op by op |\n| --- | --- | --- | --- |\n");
  for (int threads : thread_counts.value()) {
    ExecutorOptions options;
    options.threads = threads;
    Result<Executor> a = Executor::create(op_by_op, options);
    Result<Executor> b = Executor::create(chained, options);
    if (!a.is_ok() || !b.is_ok()) {
      std::fprintf(stderr, "bench_pointwise_chain: cannot run at %d threads\n", threads);
      return 1;
    }
    Samples ops, chain;
    for (int64_t i = 0; i < warmup; ++i) {
      time_ms(*a, inputs);
      time_ms(*b, inputs);
    }
    for (int64_t i = 0; i < runs; ++i) {
      if (i % 2 == 0) {
        ops.ms.push_back(time_ms(*a, inputs));
        chain.ms.push_back(time_ms(*b, inputs));
      } else {
        chain.ms.push_back(time_ms(*b, inputs));
        ops.ms.push_back(time_ms(*a, inputs));
      }
    }
    std::printf("| %d | %s | %s | %s |\n", threads, latency_cell(ops, 2).c_str(), latency_cell(chain, 2).c_str(),
                median_ratio_cell(chain, ops).c_str());
  }
  return 0;
}

}  // namespace
}  // namespace edgefuse::bench

int main(int argc, char** argv) {
  return edgefuse::bench::run(argc, argv);
}
