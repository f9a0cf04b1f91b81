// A small parser of the Prometheus text exposition format 0.0.4, written from the format's line
// grammar independently of PrometheusWriter, so the tests can check that what the writer emits
// parses back to the same names, labels and values.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace edgefuse::testing {

struct ParsedSample {
  std::string name;
  std::map<std::string, std::string> labels;  // unescaped values
  double value = 0;
};

struct ParsedExposition {
  std::map<std::string, std::string> help;  // family -> unescaped HELP text
  std::map<std::string, std::string> type;  // family -> type word
  std::vector<ParsedSample> samples;
  std::string error;  // empty when the whole text parsed; else "line N: why"
};

ParsedExposition parse_exposition(const std::string& text);

// The value of the one sample with this name and exactly these labels; NaN if absent.
double sample_value(const ParsedExposition& page, const std::string& name,
                    const std::map<std::string, std::string>& labels);

}  // namespace edgefuse::testing
