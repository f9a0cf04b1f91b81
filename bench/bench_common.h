// What the benchmark programs share: option parsing with their error and --help handling, the
// compiler they were built with (for the report header), and table cells: a latency as
// "median [min-max]" and the ratio of two medians, "n/a" when a measurement failed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pipeline/cli/args.h"

namespace edgefuse::bench {

struct Samples {
  std::vector<double> ms;  // one entry per timed run
  std::string failure;     // why it could not run; empty when it ran
};

// Parses argv against `spec`. nullopt means stop with `exit_code`: 1 after printing
// "<program>: error: ..." to stderr, 0 after printing --help.
std::optional<cli::ParsedArgs> parse_bench_args(const cli::CommandSpec& spec, const char* program, int argc,
                                                char** argv, int& exit_code);

const char* compiler_description();  // "g++ 12.2.0" or "clang ..."

std::string latency_cell(const Samples& samples, int decimals);
std::string median_ratio_cell(const Samples& numerator, const Samples& denominator);

}  // namespace edgefuse::bench
