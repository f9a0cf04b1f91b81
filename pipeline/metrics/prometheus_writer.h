// Builds a page in the Prometheus text exposition format 0.0.4, the body of GET /metrics:
//
//   # HELP edgefuse_frames_total Frames decoded, per stream.
//   # TYPE edgefuse_frames_total counter
//   edgefuse_frames_total{stream="door"} 1234
//
// Call family() once per metric, then its samples, before the next family (the format requires a
// family's lines to be together; the writer asserts it). Metric and label names are the caller's
// constants and are asserted valid; label values and HELP text may be anything and are escaped.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline/metrics/histogram.h"

namespace edgefuse {

enum class MetricType { kCounter, kGauge, kHistogram, kUntyped };

// Content-Type of a page built by PrometheusWriter.
inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool is_valid_metric_name(std::string_view name);
// [a-zA-Z_][a-zA-Z0-9_]*, and not starting with "__" (reserved for Prometheus itself).
bool is_valid_label_name(std::string_view name);

// A sample value as Prometheus parses it: shortest round-trip decimal, "NaN", "+Inf", "-Inf".
std::string format_metric_value(double value);

class PrometheusWriter {
 public:
  // Writes # HELP and # TYPE for `name` and makes it the current family. Each family once per page.
  void family(std::string_view name, MetricType type, std::string_view help);
  // One sample of the current family (a counter, gauge or untyped family named `name`).
  void sample(std::string_view name, const MetricLabels& labels, double value);
  // name_bucket{...,le="b"} (cumulative, ending with le="+Inf"), name_sum and name_count of the
  // current histogram family `name`. `labels` must not contain "le".
  void histogram(std::string_view name, const MetricLabels& labels, const HistogramSnapshot& snapshot);

  const std::string& text() const { return text_; }
  std::string take() { return std::move(text_); }

 private:
  void write_series(std::string_view name, std::string_view suffix, const MetricLabels& labels,
                    const std::pair<std::string, std::string>* extra_label, const std::string& value);
  void expect_current_family(std::string_view name, MetricType type) const;

  std::string text_;
  std::string current_family_;
  MetricType current_type_ = MetricType::kUntyped;
  std::set<std::string, std::less<>> families_written_;
};

}  // namespace edgefuse
