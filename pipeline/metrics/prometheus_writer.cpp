// PrometheusWriter: escaping follows the 0.0.4 text format — label values escape backslash,
// double quote and line feed; HELP text escapes backslash and line feed only.
#include "pipeline/metrics/prometheus_writer.h"

#include <charconv>
#include <cmath>

#include "runtime/status.h"

namespace edgefuse {
namespace {

bool is_name_start(char c, bool allow_colon) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (allow_colon && c == ':');
}

bool is_name_char(char c, bool allow_colon) {
  return is_name_start(c, allow_colon) || (c >= '0' && c <= '9');
}

bool is_valid_name(std::string_view name, bool allow_colon) {
  if (name.empty() || !is_name_start(name[0], allow_colon)) return false;
  for (char c : name) {
    if (!is_name_char(c, allow_colon)) return false;
  }
  return true;
}

void append_escaped(std::string& out, std::string_view text, bool escape_quote) {
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && escape_quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

const char* type_name(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
    case MetricType::kUntyped:
      return "untyped";
  }
  return "untyped";
}

}  // namespace

bool is_valid_metric_name(std::string_view name) {
  return is_valid_name(name, true);
}

bool is_valid_label_name(std::string_view name) {
  return is_valid_name(name, false) && name.substr(0, 2) != "__";
}

std::string format_metric_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  EF_ASSERT(result.ec == std::errc(), "to_chars failed");
  return std::string(buffer, result.ptr);
}

void PrometheusWriter::family(std::string_view name, MetricType type, std::string_view help) {
  EF_ASSERT(is_valid_metric_name(name), "invalid metric name '", name, "'");
  EF_ASSERT(families_written_.insert(std::string(name)).second, "metric family '", name, "' written twice");
  current_family_ = name;
  current_type_ = type;
  text_ += "# HELP ";
  text_ += name;
  text_ += ' ';
  append_escaped(text_, help, /*escape_quote=*/false);
  text_ += "\n# TYPE ";
  text_ += name;
  text_ += ' ';
  text_ += type_name(type);
  text_ += '\n';
}

void PrometheusWriter::expect_current_family(std::string_view name, MetricType type) const {
  EF_ASSERT(name == current_family_, "sample '", name, "' written outside its family (current: '", current_family_,
            "')");
  EF_ASSERT((type == MetricType::kHistogram) == (current_type_ == MetricType::kHistogram), "metric '", name,
            "': histogram() is for histogram families, sample() for the others");
}

void PrometheusWriter::sample(std::string_view name, const MetricLabels& labels, double value) {
  expect_current_family(name, MetricType::kUntyped);
  write_series(name, "", labels, nullptr, format_metric_value(value));
}

void PrometheusWriter::histogram(std::string_view name, const MetricLabels& labels, const HistogramSnapshot& snapshot) {
  expect_current_family(name, MetricType::kHistogram);
  EF_ASSERT(snapshot.bucket_counts.size() == snapshot.upper_bounds.size() + 1, "malformed histogram snapshot");
  uint64_t cumulative = 0;
  std::pair<std::string, std::string> le{"le", ""};
  for (size_t i = 0; i < snapshot.bucket_counts.size(); ++i) {
    cumulative += snapshot.bucket_counts[i];
    le.second = i < snapshot.upper_bounds.size() ? format_metric_value(snapshot.upper_bounds[i]) : "+Inf";
    write_series(name, "_bucket", labels, &le, std::to_string(cumulative));
  }
  write_series(name, "_sum", labels, nullptr, format_metric_value(snapshot.sum));
  write_series(name, "_count", labels, nullptr, std::to_string(snapshot.count));
}

void PrometheusWriter::write_series(std::string_view name, std::string_view suffix, const MetricLabels& labels,
                                    const std::pair<std::string, std::string>* extra_label, const std::string& value) {
  text_ += name;
  text_ += suffix;
  if (!labels.empty() || extra_label != nullptr) {
    text_ += '{';
    bool first = true;
    auto append_label = [&](const std::pair<std::string, std::string>& label) {
      EF_ASSERT(is_valid_label_name(label.first), "metric '", name, "': invalid label name '", label.first, "'");
      if (!first) text_ += ',';
      first = false;
      text_ += label.first;
      text_ += "=\"";
      append_escaped(text_, label.second, /*escape_quote=*/true);
      text_ += '"';
    };
    for (const auto& label : labels) {
      EF_ASSERT(extra_label == nullptr || label.first != extra_label->first, "metric '", name, "': label '",
                label.first, "' is reserved here");
      append_label(label);
    }
    if (extra_label != nullptr) append_label(*extra_label);
    text_ += '}';
  }
  text_ += ' ';
  text_ += value;
  text_ += '\n';
}

}  // namespace edgefuse
