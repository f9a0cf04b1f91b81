// Table cells shared by the benchmark programs: a latency as "median [min-max]" and the ratio of
// two medians, "n/a" when a measurement failed.
#pragma once

#include <string>
#include <vector>

namespace edgefuse::bench {

struct Samples {
  std::vector<double> ms;  // one entry per timed run
  std::string failure;     // why it could not run; empty when it ran
};

std::string latency_cell(const Samples& samples, int decimals);
std::string median_ratio_cell(const Samples& numerator, const Samples& denominator);

}  // namespace edgefuse::bench
