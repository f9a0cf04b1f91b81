// What the benchmark programs share: option parsing with their error and --help handling, the
// compiler they were built with (for the report header), and table cells: a latency as
// "median [min-max]" and the ratio of two medians, "n/a" when a measurement failed.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/cli/args.h"
#include "runtime/status.h"

namespace edgefuse::bench {

// The detector models the benchmarks run, under the assets folder.
struct BenchModel {
  const char* label;
  const char* relative_path;
};
inline constexpr BenchModel kBenchModels[] = {
    {"YOLOX-nano 416", "models/yolox_nano.onnx"},
    {"BlazeFace front 128", "models/blazeface_front_128.onnx"},
    {"BlazeFace back 256", "models/blazeface_back_256.onnx"},
};

// Options the benchmark programs share: --assets DIR, and --runs N / --warmup N with each
// program's default and wording.
cli::OptionSpec assets_option();
cli::OptionSpec runs_option(const char* default_value, const char* description);
cli::OptionSpec warmup_option(const char* default_value, const char* description);
// --threads LIST (parse_thread_list), with each program's default.
cli::OptionSpec thread_list_option(const char* default_value);

// --model FILE (repeatable): a model to measure instead of the shared ones.
cli::OptionSpec model_option();

// --assets, else $EDGEFUSE_ASSETS_DIR, else `configured` (the CMake cache entry).
std::filesystem::path bench_assets_dir(const cli::ParsedArgs& args, const char* configured);

// The models to measure: each --model file (labelled by its file name), else kBenchModels under `assets`.
struct ModelToBench {
  std::string label;
  std::string path;
};
std::vector<ModelToBench> models_to_bench(const cli::ParsedArgs& args, const std::filesystem::path& assets);

struct Samples {
  std::vector<double> ms;  // one entry per timed run
  std::string failure;     // why it could not run; empty when it ran
};

// Parses argv against `spec`. nullopt means stop with `exit_code`: 1 after printing
// "<program>: error: ..." to stderr, 0 after printing --help.
std::optional<cli::ParsedArgs> parse_bench_args(const cli::CommandSpec& spec, const char* program, int argc,
                                                char** argv, int& exit_code);

// "1,2,4" -> {1, 2, 4}; each in 1..1024. The error names the bad item.
Result<std::vector<int>> parse_thread_list(const std::string& text);

const char* compiler_description();  // "g++ 12.2.0" or "clang ..."

std::string latency_cell(const Samples& samples, int decimals);
std::string median_ratio_cell(const Samples& numerator, const Samples& denominator);

}  // namespace edgefuse::bench
