#include "bench/bench_cells.h"

#include <cstdio>

#include "pipeline/cli/bench_support.h"

namespace edgefuse::bench {

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

}  // namespace edgefuse::bench
