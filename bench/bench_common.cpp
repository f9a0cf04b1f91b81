#include "bench/bench_common.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "pipeline/cli/bench_support.h"

namespace edgefuse::bench {

std::optional<cli::ParsedArgs> parse_bench_args(const cli::CommandSpec& spec, const char* program, int argc,
                                                char** argv, int& exit_code) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  Result<cli::ParsedArgs> parsed = cli::parse_args(spec, args);
  if (!parsed.is_ok()) {
    std::fprintf(stderr, "%s: error: %s\n", program, parsed.status().message().c_str());
    exit_code = 1;
    return std::nullopt;
  }
  if (parsed->help_requested()) {
    std::printf("%s", cli::help_text(spec, program).c_str());
    exit_code = 0;
    return std::nullopt;
  }
  return std::move(*parsed);
}

const char* compiler_description() {
#ifdef __clang__
  return "clang " __clang_version__;
#else
  return "g++ " __VERSION__;
#endif
}

std::string latency_cell(const Samples& samples, int decimals) {
  if (!samples.failure.empty()) return "n/a (" + samples.failure + ")";
  const cli::LatencyStats stats = cli::summarize_latencies(samples.ms);
  char text[96];
  std::snprintf(text, sizeof(text), "%.*f [%.*f-%.*f]", decimals, stats.median_ms, decimals, stats.min_ms, decimals,
                stats.max_ms);
  return text;
}

std::string median_ratio_cell(const Samples& numerator, const Samples& denominator) {
  if (!numerator.failure.empty() || !denominator.failure.empty()) return "n/a";
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f",
                cli::summarize_latencies(numerator.ms).median_ms / cli::summarize_latencies(denominator.ms).median_ms);
  return text;
}

cli::OptionSpec assets_option() {
  return {.name = "assets",
          .value_name = "DIR",
          .description = "folder with models/; default: $EDGEFUSE_ASSETS_DIR, else the CMake cache entry"};
}

cli::OptionSpec runs_option(const char* default_value, const char* description) {
  return {.name = "runs",
          .type = cli::OptionType::kInt,
          .value_name = "N",
          .default_value = default_value,
          .description = description,
          .min = 1,
          .max = 100000};
}

cli::OptionSpec warmup_option(const char* default_value, const char* description) {
  return {.name = "warmup",
          .type = cli::OptionType::kInt,
          .value_name = "N",
          .default_value = default_value,
          .description = description,
          .min = 0,
          .max = 100000};
}

cli::OptionSpec thread_list_option(const char* default_value) {
  return {.name = "threads",
          .value_name = "LIST",
          .default_value = default_value,
          .description = "comma-separated thread counts to measure"};
}

cli::OptionSpec model_option() {
  return {.name = "model",
          .value_name = "FILE",
          .description =
              "measure this model instead of the shared ones (repeatable; e.g. a YOLO-shaped network "
              "from tests/models' make_yolo_model)",
          .repeatable = true};
}

std::vector<ModelToBench> models_to_bench(const cli::ParsedArgs& args, const std::filesystem::path& assets) {
  std::vector<ModelToBench> models;
  for (const std::string& path : args.all("model")) {
    models.push_back({std::filesystem::path(path).filename().string(), path});
  }
  if (models.empty()) {
    for (const BenchModel& model : kBenchModels)
      models.push_back({model.label, (assets / model.relative_path).string()});
  }
  return models;
}

std::filesystem::path bench_assets_dir(const cli::ParsedArgs& args, const char* configured) {
  if (args.has("assets")) return args.get("assets");
  if (const char* env = std::getenv("EDGEFUSE_ASSETS_DIR"); env != nullptr && *env != '\0') return env;
  return configured;
}

Result<std::vector<int>> parse_thread_list(const std::string& text) {
  std::vector<int> threads;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const long value = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || value < 1 || value > 1024) {
      return invalid_argument("--threads: '", item, "' is not a thread count in 1..1024");
    }
    threads.push_back(static_cast<int>(value));
  }
  if (threads.empty()) return invalid_argument("--threads: empty list");
  return threads;
}

}  // namespace edgefuse::bench
