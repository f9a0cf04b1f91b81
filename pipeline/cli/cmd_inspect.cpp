// edgefuse inspect: what the fuser did to a model. Node counts per op type before and after the
// passes, each pass's rewrites, the memory plan's bytes fused versus unfused, and (--profile) the
// optimised graph's time per op type.
//
// --device BOARD adds a roofline estimate: the fused plan's bytes (activations moved plus weights
// read once) and FLOPs against the board's published bandwidth and fp32 peak (runtime/cost_model.h).
//
// "Unfused" is the graph as imported, planned with neither in-place outputs nor Concat aliasing;
// "fused" is the optimised graph planned as the CPU executor plans it (Executor::plan_options), so
// the tensor between the Convs of a kernel pair (runtime/ops/conv_pair.h) is neither stored nor moved.
// Each kernel's reads count each value once (MemoryPlan::activation_bytes_moved).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>

#include "fusion/pass_manager.h"
#include "models/detector/detector.h"
#include "pipeline/cli/bench_support.h"
#include "pipeline/cli/commands.h"
#include "pipeline/cli/common.h"
#include "pipeline/json/json_writer.h"
#include "runtime/cost_model.h"
#include "runtime/cuda/lowering.h"
#include "runtime/memory_plan.h"

namespace edgefuse::cli {
namespace {

constexpr int64_t kWarmupRuns = 3;  // untimed runs before profiling (plan built, caches warm)

using OpCounts = std::map<std::string, int64_t>;  // op type name -> nodes of that type

struct InspectReport {
  bool fused = false;  // the passes ran (not --no-fuse or EDGEFUSE_NO_FUSION=1)
  // The detector family recognised from the inputs and outputs (detect and the daemon decode it
  // so), or empty when none is.
  std::string family;
  OpCounts ops_before;
  OpCounts ops_after;
  int64_t nodes_before = 0;
  int64_t nodes_after = 0;
  int64_t kernels_unfused = 0;  // nodes of the imported graph
  int64_t kernels_fused = 0;    // kernels the optimised graph's plan runs (a pair is one)
  std::vector<PassReport> passes;
  size_t moved_fused = 0;
  size_t moved_fused_gpu = 0;  // the fused plan as the CUDA executor makes it: no CPU Conv pairs
  size_t moved_unfused = 0;
  size_t arena_bytes = 0;      // fused plan
  size_t unplanned_bytes = 0;  // unfused plan: one buffer per intermediate tensor
  size_t peak_live_bytes = 0;  // fused plan
  size_t weight_bytes = 0;
  int concats_aliased = 0;        // fused plan
  int views = 0;                  // fused plan: Reshape-like nodes whose output is a view
  int output_views = 0;           // fused plan: of those, nodes whose input is written into a graph output
  int concats_into_outputs = 0;   // fused plan: Concats whose inputs are written into their graph output
  int piece_views = 0;            // fused plan: Slices and Splits whose outputs are views of their input
  int kernel_pairs = 0;           // fused plan: Conv pairs run as one kernel
  int kernel_pairs_in_place = 0;  // fused plan: of those, pairs writing their output over their input
  int memory_pairs = 0;           // fused plan: of those, pairs taken for the memory they save
  int64_t flops_fused = 0;
  int64_t flops_unfused = 0;
  // The fused graph lowered for the CUDA executor (fp32; gpu::lower_plan), known without a GPU.
  int64_t gpu_kernels = 0;      // kernel steps per frame
  int64_t gpu_conv_gemm = 0;    // of them, 1x1 and group-1 Convs as the tiled GEMM (conv_gemm.h)
  int64_t gpu_depthwise = 0;    // depthwise Convs
  int64_t gpu_tensor_core = 0;  // in fp16 storage (every activation fp16), the Conv GEMMs tensor cores may run
  int64_t gpu_fallbacks = 0;    // nodes run on the CPU between kernels
  size_t gpu_arena_bytes = 0;   // device arena
  size_t gpu_constant_bytes = 0;
  bool profiled = false;  // --profile: `profile` holds the time per op type
  std::vector<OpTime> profile;
};

OpCounts count_ops(const Graph& graph) {
  OpCounts counts;
  for (const Node& node : graph.nodes()) ++counts[std::string(op_name(node.op))];
  return counts;
}

// One description per graph input from its declaration; planning needs every dim known.
Result<std::vector<TensorDesc>> declared_input_descs(const Graph& graph) {
  std::vector<TensorDesc> descs;
  for (ValueId id : graph.inputs()) {
    const Value& input = graph.value(id);
    for (int64_t dim : input.desc.shape) {
      if (dim < 0) {
        return invalid_argument("input '", input.name, "' has unknown dims ", shape_to_string(input.desc.shape),
                                " (-1 = unknown); inspect a model exported with a fixed input shape");
      }
    }
    EF_RETURN_IF_ERROR(validate_shape(input.desc.shape, dtype_size(input.desc.dtype))
                           .with_context(make_message("input '", input.name, "'")));
    descs.push_back(input.desc);
  }
  return descs;
}

// Bytes of the initializers the graph uses (read by a node or returned as an output).
size_t used_weight_bytes(const Graph& graph) {
  std::set<ValueId> used(graph.outputs().begin(), graph.outputs().end());
  for (const Node& node : graph.nodes()) used.insert(node.inputs.begin(), node.inputs.end());
  size_t bytes = 0;
  for (ValueId id : used) {
    if (id != kNoValue && graph.value(id).initializer) bytes += graph.value(id).initializer->nbytes();
  }
  return bytes;
}

int64_t nodes_run(const MemoryPlan& plan) {
  int64_t count = -plan.kernel_pairs;  // the second node of a pair runs inside the first's kernel
  for (bool skipped : plan.node_skipped) count += skipped ? 0 : 1;
  return count;
}

// Median time per op type over `runs` profiled runs of `graph` on random inputs, after warm-up.
Result<std::vector<OpTime>> profile_ops(const std::shared_ptr<const Graph>& graph, const ParsedArgs& args) {
  EF_ASSIGN_OR_RETURN(std::vector<Tensor> inputs, random_inputs(*graph));
  ExecutorOptions options = executor_options(args, false);
  options.profile = true;
  EF_ASSIGN_OR_RETURN(Executor executor, Executor::create(graph, options));
  const int64_t runs = args.get_int("runs");
  std::vector<std::vector<double>> node_ms(graph->nodes().size());  // per node, one sample per run
  for (int64_t i = 0; i < kWarmupRuns + runs; ++i) {
    Result<std::vector<Tensor>> outputs = executor.run(inputs);
    if (!outputs.is_ok()) return outputs.status();
    if (i < kWarmupRuns) continue;
    for (size_t n = 0; n < executor.last_profile_ms().size(); ++n) node_ms[n].push_back(executor.last_profile_ms()[n]);
  }
  return time_per_op(*graph, node_ms, executor.memory_plan(), executor.last_kernel_pairs());
}

Result<InspectReport> inspect_model(const std::string& model, const ParsedArgs& args) {
  EF_ASSIGN_OR_RETURN(std::shared_ptr<Graph> imported, load_detector_model(model, args));
  // Further imports rather than copies: Graph copies share initializer storage with the original.
  // The GPU's plan is fused as the CUDA executor's is (cuda_fusion_options: CPU-only folds off).
  EF_ASSIGN_OR_RETURN(std::shared_ptr<Graph> optimised, load_detector_model(model, args));
  EF_ASSIGN_OR_RETURN(std::shared_ptr<Graph> gpu_optimised, load_detector_model(model, args));
  EF_ASSIGN_OR_RETURN(const std::vector<TensorDesc> input_descs, declared_input_descs(*imported));

  InspectReport report;
  report.fused = !args.flag("no-fuse") && !fusion_disabled_by_env();
  if (report.fused) {
    Result<std::vector<PassReport>> passes = optimize_graph(*optimised);
    if (!passes.is_ok()) return passes.status().with_context(make_message("model '", model, "'"));
    report.passes = std::move(*passes);
    Result<std::vector<PassReport>> gpu_passes = optimize_graph(*gpu_optimised, cuda_fusion_options());
    if (!gpu_passes.is_ok()) return gpu_passes.status().with_context(make_message("model '", model, "' for a GPU"));
  }

  PlanOptions unfused_options;
  unfused_options.in_place = false;
  unfused_options.alias_concat = false;
  Result<MemoryPlan> unfused_plan = plan_memory(*imported, input_descs, unfused_options);
  if (!unfused_plan.is_ok()) return unfused_plan.status().with_context("planning the imported graph");
  Result<MemoryPlan> fused_plan = plan_memory(*optimised, input_descs, Executor::plan_options(ExecutorOptions{}));
  if (!fused_plan.is_ok()) return fused_plan.status().with_context("planning the optimised graph");

  if (Result<DetectorFamily> family = recognise_family(*imported); family.is_ok()) {
    report.family = std::string(family_name(*family));
  }
  report.ops_before = count_ops(*imported);
  report.ops_after = count_ops(*optimised);
  report.nodes_before = static_cast<int64_t>(imported->nodes().size());
  report.nodes_after = static_cast<int64_t>(optimised->nodes().size());
  report.kernels_unfused = report.nodes_before;
  report.kernels_fused = nodes_run(*fused_plan);
  report.moved_fused = fused_plan->activation_bytes_moved;
  Result<MemoryPlan> gpu_plan = plan_memory(*gpu_optimised, input_descs, gpu::gpu_plan_options());
  if (!gpu_plan.is_ok()) return gpu_plan.status().with_context("planning the optimised graph for a GPU");
  report.moved_fused_gpu = gpu_plan->activation_bytes_moved;
  MemoryPlan fp16_plan = *gpu_plan;  // the same plan, lowered again in fp16 below
  Result<gpu::LoweredPlan> lowered = gpu::lower_plan(*gpu_optimised, std::move(*gpu_plan));
  if (!lowered.is_ok()) return lowered.status().with_context("lowering the optimised graph for a GPU");
  for (const gpu::LoweredStep& step : lowered->steps) {
    if (step.is_fallback()) {
      ++report.gpu_fallbacks;
      continue;
    }
    ++report.gpu_kernels;
    const bool gemm = std::holds_alternative<gpu::PointwiseConvStep>(step.params) ||
                      std::holds_alternative<gpu::ConvGemmStep>(step.params);
    report.gpu_conv_gemm += gemm ? 1 : 0;
    report.gpu_depthwise += std::holds_alternative<gpu::DepthwiseConvStep>(step.params) ? 1 : 0;
  }
  // In fp16, before calibration keeps any layer in f32: the Conv GEMMs reading fp16 (all but those
  // on graph inputs) may run on tensor cores.
  Result<gpu::LoweredPlan> fp16_lowered = gpu::lower_plan(
      *gpu_optimised, std::move(fp16_plan), gpu::LoweringOptions{.fp16_storage = true, .tensor_cores = true});
  if (!fp16_lowered.is_ok())
    return fp16_lowered.status().with_context("lowering the optimised graph for a GPU in fp16");
  for (const gpu::LoweredStep& step : fp16_lowered->steps) {
    const auto* pointwise = std::get_if<gpu::PointwiseConvStep>(&step.params);
    const auto* gemm = std::get_if<gpu::ConvGemmStep>(&step.params);
    report.gpu_tensor_core +=
        (pointwise != nullptr && pointwise->tensor_cores) || (gemm != nullptr && gemm->tensor_cores);
  }
  report.gpu_arena_bytes = lowered->plan.arena_bytes;
  report.gpu_constant_bytes = lowered->constants.size();
  report.moved_unfused = unfused_plan->activation_bytes_moved;
  report.arena_bytes = fused_plan->arena_bytes;
  report.unplanned_bytes = unfused_plan->unplanned_bytes;
  report.peak_live_bytes = fused_plan->peak_live_bytes;
  report.concats_aliased = fused_plan->concats_aliased;
  report.kernel_pairs = fused_plan->kernel_pairs;
  report.kernel_pairs_in_place = fused_plan->kernel_pairs_in_place;
  report.memory_pairs = fused_plan->memory_pairs;
  report.views = fused_plan->views;
  report.output_views = fused_plan->output_views;
  report.concats_into_outputs = fused_plan->concats_into_outputs;
  report.piece_views = fused_plan->piece_views;
  report.weight_bytes = used_weight_bytes(*optimised);
  report.flops_fused = graph_flops(*optimised, *fused_plan);
  report.flops_unfused = graph_flops(*imported, *unfused_plan);
  report.profiled = args.flag("profile");
  if (report.profiled) {
    EF_ASSIGN_OR_RETURN(report.profile, profile_ops(optimised, args));
  }
  return report;
}

struct Roofline {
  const BoardSpec* board = nullptr;  // null: no --device
  bool fp16 = false;
  double bytes = 0;
  double flops = 0;
  RooflineEstimate estimate;
};

// The fused plan on the --device board, as the CUDA executor plans it: activations moved (halved in
// fp16 storage) plus weights read once (f32 in either mode).
Result<Roofline> roofline_for(const InspectReport& report, const ParsedArgs& args) {
  Roofline r;
  if (!args.has("device")) return r;
  r.board = find_board(args.get("device"));
  if (r.board == nullptr) {
    std::string known;
    for (const BoardSpec& board : board_specs()) known += (known.empty() ? "" : ", ") + std::string(board.name);
    return invalid_argument("--device: unknown board '", args.get("device"), "' (known: ", known, ")");
  }
  const std::string& precision = args.get("precision");
  if (precision != "fp32" && precision != "fp16") {
    return invalid_argument("--precision: '", precision, "' is not one of fp32, fp16");
  }
  r.fp16 = precision == "fp16";
  r.bytes =
      static_cast<double>(report.moved_fused_gpu) / (r.fp16 ? 2.0 : 1.0) + static_cast<double>(report.weight_bytes);
  r.flops = static_cast<double>(report.flops_fused);
  r.estimate = roofline(*r.board, r.bytes, r.flops);
  return r;
}

int64_t as_int(size_t bytes) {
  return static_cast<int64_t>(bytes);
}

void write_op_counts(JsonWriter& json, const OpCounts& counts) {
  json.begin_object();
  for (const auto& [op, count] : counts) json.key(op).value(count);
  json.end_object();
}

void print_json(const std::string& model, const InspectReport& report, const Roofline& roof) {
  JsonWriter json;
  json.begin_object();
  json.key("model").value(model);
  json.key("fused").value(report.fused);
  json.key("family");
  if (report.family.empty()) {
    json.null();
  } else {
    json.value(report.family);
  }
  json.key("nodes_before").value(report.nodes_before);
  json.key("nodes_after").value(report.nodes_after);
  json.key("kernels_unfused").value(report.kernels_unfused);
  json.key("kernels_fused").value(report.kernels_fused);
  json.key("activation_bytes_moved_unfused").value(as_int(report.moved_unfused));
  json.key("activation_bytes_moved_fused").value(as_int(report.moved_fused));
  json.key("arena_bytes").value(as_int(report.arena_bytes));
  json.key("unplanned_bytes").value(as_int(report.unplanned_bytes));
  json.key("peak_live_bytes").value(as_int(report.peak_live_bytes));
  json.key("weight_bytes").value(as_int(report.weight_bytes));
  json.key("concats_aliased").value(report.concats_aliased);
  json.key("kernel_pairs").value(report.kernel_pairs);
  json.key("kernel_pairs_in_place").value(report.kernel_pairs_in_place);
  json.key("memory_pairs").value(report.memory_pairs);
  json.key("views").value(report.views);
  json.key("output_views").value(report.output_views);
  json.key("concats_into_outputs").value(report.concats_into_outputs);
  json.key("piece_views").value(report.piece_views);
  json.key("flops_fused").value(report.flops_fused);
  json.key("flops_unfused").value(report.flops_unfused);
  json.key("gpu_kernels").value(report.gpu_kernels);
  json.key("gpu_conv_gemm_kernels").value(report.gpu_conv_gemm);
  json.key("gpu_depthwise_kernels").value(report.gpu_depthwise);
  json.key("gpu_tensor_core_kernels_fp16").value(report.gpu_tensor_core);
  json.key("gpu_fallbacks").value(report.gpu_fallbacks);
  json.key("gpu_arena_bytes").value(as_int(report.gpu_arena_bytes));
  json.key("gpu_constant_bytes").value(as_int(report.gpu_constant_bytes));
  if (roof.board != nullptr) {
    json.key("roofline").begin_object();
    json.key("estimate").value(true);
    json.key("board").value(std::string(roof.board->name));
    json.key("board_description").value(std::string(roof.board->description));
    json.key("bandwidth_gb_s").value(roof.board->bandwidth_gb_s, 1);
    json.key("fp32_gflops").value(roof.board->fp32_gflops, 1);
    json.key("precision").value(roof.fp16 ? "fp16" : "fp32");
    json.key("bytes").value(static_cast<int64_t>(roof.bytes));
    json.key("flops").value(static_cast<int64_t>(roof.flops));
    json.key("memory_ms").value(roof.estimate.memory_ms, 4);
    json.key("compute_ms").value(roof.estimate.compute_ms, 4);
    json.key("estimate_ms").value(roof.estimate.estimate_ms, 4);
    json.key("bound").value(roof.estimate.memory_bound ? "memory" : "compute");
    json.end_object();
  }
  json.key("ops_before");
  write_op_counts(json, report.ops_before);
  json.key("ops_after");
  write_op_counts(json, report.ops_after);
  json.key("passes").begin_array();
  for (const PassReport& pass : report.passes) {
    json.begin_object().key("name").value(pass.pass).key("changes").value(pass.changes);
    json.key("details").begin_array();
    for (const std::string& detail : pass.details) json.value(detail);
    json.end_array().end_object();
  }
  json.end_array();
  if (report.profiled) {
    json.key("profile").begin_object();
    for (const OpTime& op : report.profile) {
      json.key(op.op).begin_object();
      json.key("nodes").value(static_cast<int64_t>(op.nodes));
      json.key("median_ms").value(op.median_ms, 3);
      if (op.flops > 0) json.key("gflops_per_s").value(op.gflops_per_s(), 2);
      json.end_object();
    }
    json.end_object();
  }
  json.end_object();
  std::cout << json.str() << "\n";
}

double mib(size_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

// "before/after" as a factor, guarding against an empty graph.
double ratio(size_t before, size_t after) {
  return after == 0 ? 0.0 : static_cast<double>(before) / static_cast<double>(after);
}

void print_roofline(const Roofline& roof) {
  const RooflineEstimate& e = roof.estimate;
  std::printf("roofline ESTIMATE on %s (published figures, not a measurement):\n", roof.board->description.data());
  std::printf("  bytes per inference     %10.2f MiB (%s: activations moved + weights read once)\n",
              roof.bytes / (1024.0 * 1024.0), roof.fp16 ? "fp16" : "fp32");
  std::printf("  FLOPs per inference     %10.3f G (%.1f FLOPs per byte; the board turns compute bound at %.1f)\n",
              roof.flops * 1e-9, e.intensity, e.ridge_intensity);
  std::printf("  memory time             %10.3f ms at %.1f GB/s\n", e.memory_ms, roof.board->bandwidth_gb_s);
  std::printf("  compute time            %10.3f ms at %.1f GFLOPS fp32\n", e.compute_ms, roof.board->fp32_gflops);
  std::printf("  estimate                %10.3f ms, %s bound (a lower bound: real kernels reach part of the roof)\n",
              e.estimate_ms, e.memory_bound ? "memory" : "compute");
}

void print_text(const std::string& model, const InspectReport& report, const ParsedArgs& args) {
  std::printf("%s: %lld nodes imported, %lld after fusion%s; kernels run: %lld unfused, %lld fused\n", model.c_str(),
              static_cast<long long>(report.nodes_before), static_cast<long long>(report.nodes_after),
              report.fused ? "" : " (fusion off)", static_cast<long long>(report.kernels_unfused),
              static_cast<long long>(report.kernels_fused));
  std::printf("detector family: %s\n",
              report.family.empty() ? "none recognised (detect --family names one)" : report.family.c_str());

  std::printf("ops:\n  %-24s %7s %7s\n", "op", "before", "after");
  std::set<std::string> ops;
  for (const auto& [op, count] : report.ops_before) ops.insert(op);
  for (const auto& [op, count] : report.ops_after) ops.insert(op);
  for (const std::string& op : ops) {
    const auto before = report.ops_before.find(op);
    const auto after = report.ops_after.find(op);
    std::printf("  %-24s %7lld %7lld\n", op.c_str(),
                static_cast<long long>(before == report.ops_before.end() ? 0 : before->second),
                static_cast<long long>(after == report.ops_after.end() ? 0 : after->second));
  }

  std::printf("passes:\n");
  if (report.passes.empty()) std::printf("  (none run)\n");
  int name_width = 0;
  for (const PassReport& pass : report.passes) name_width = std::max(name_width, static_cast<int>(pass.pass.size()));
  for (const PassReport& pass : report.passes) {
    std::printf("  %-*s %5d changes\n", name_width, pass.pass.c_str(), pass.changes);
  }

  std::printf("memory per inference:\n");
  std::printf("  activation bytes moved  %10.2f MiB fused, %.2f MiB unfused (%.2fx less)\n", mib(report.moved_fused),
              mib(report.moved_unfused), ratio(report.moved_unfused, report.moved_fused));
  std::printf("  arena                   %10.2f MiB, vs %.2f MiB one buffer per tensor (%.1fx smaller)\n",
              mib(report.arena_bytes), mib(report.unplanned_bytes), ratio(report.unplanned_bytes, report.arena_bytes));
  std::printf("  peak live activations   %10.2f MiB\n", mib(report.peak_live_bytes));
  std::printf("  concats aliased         %10d\n", report.concats_aliased);
  std::printf("    into graph outputs    %10d\n", report.concats_into_outputs);
  std::printf("  reshapes as views       %10d\n", report.views);
  std::printf("    of graph outputs      %10d\n", report.output_views);
  std::printf("  slices, splits as views %10d\n", report.piece_views);
  std::printf("  Conv pairs, one kernel  %10d\n", report.kernel_pairs);
  std::printf("    of them in place      %10d\n", report.kernel_pairs_in_place);
  std::printf("    for memory            %10d\n", report.memory_pairs);
  std::printf("  weights                 %10.2f MiB\n", mib(report.weight_bytes));
  std::printf("arithmetic per inference: %.3f GFLOPs fused, %.3f unfused\n",
              static_cast<double>(report.flops_fused) * 1e-9, static_cast<double>(report.flops_unfused) * 1e-9);
  std::printf("GPU plan (CUDA executor, fp32):\n");
  std::printf("  kernels per frame       %10lld (%lld Conv GEMM, %lld depthwise, %lld other)\n",
              static_cast<long long>(report.gpu_kernels), static_cast<long long>(report.gpu_conv_gemm),
              static_cast<long long>(report.gpu_depthwise),
              static_cast<long long>(report.gpu_kernels - report.gpu_conv_gemm - report.gpu_depthwise));
  std::printf("  on tensor cores in fp16 %10lld of the Conv GEMMs (those reading fp16 data; sm_70 and later)\n",
              static_cast<long long>(report.gpu_tensor_core));
  std::printf("  nodes on the CPU        %10lld\n", static_cast<long long>(report.gpu_fallbacks));
  std::printf("  device arena            %10.2f MiB, constants %.2f MiB\n", mib(report.gpu_arena_bytes),
              mib(report.gpu_constant_bytes));

  if (!report.profiled) return;
  std::printf("profile (median of %lld runs after %lld warm-up):\n", static_cast<long long>(args.get_int("runs")),
              static_cast<long long>(kWarmupRuns));
  for (const OpTime& op : report.profile) {
    std::printf("  %-24s %4zu nodes %9.3f ms", op.op.c_str(), op.nodes, op.median_ms);
    if (op.flops > 0) std::printf(" %8.1f GFLOP/s", op.gflops_per_s());
    std::printf("\n");
  }
}

}  // namespace

const CommandSpec& inspect_spec() {
  static const CommandSpec spec{
      .name = "inspect",
      .summary = "show what the fuser did to a model: op counts, passes, memory plan bytes, time per op",
      .usage = "--model FILE [options]",
      .options =
          {
              model_option(),
              input_size_option(),
              {.name = "json", .type = OptionType::kFlag, .description = "print one JSON object instead of text"},
              {.name = "profile",
               .type = OptionType::kFlag,
               .description = "also time the optimised graph per op type on random inputs"},
              {.name = "runs",
               .type = OptionType::kInt,
               .value_name = "N",
               .default_value = "20",
               .description = "profiled runs (after 3 warm-up runs); the median per node is reported",
               .min = 1,
               .max = 1000000},
              threads_option(),
              no_fuse_option(),
              {.name = "device",
               .value_name = "BOARD",
               .description = "add a roofline estimate for a board: jetson-nano, xavier-nx, orin-nano, orin-nx, "
                              "agx-orin"},
              precision_option(),
          },
      .notes =
          "The model needs fixed input shapes. Unfused numbers plan the imported graph without in-place\n"
          "outputs or Concat aliasing; fused numbers plan the optimised graph as the executor runs it.",
  };
  return spec;
}

Status run_inspect(const ParsedArgs& args) {
  const std::string& model = args.get("model");
  EF_ASSIGN_OR_RETURN(const InspectReport report, inspect_model(model, args));
  EF_ASSIGN_OR_RETURN(const Roofline roof, roofline_for(report, args));
  if (args.flag("json")) {
    print_json(model, report, roof);
  } else {
    print_text(model, report, args);
    if (roof.board != nullptr) print_roofline(roof);
  }
  return Status::ok();
}

}  // namespace edgefuse::cli
