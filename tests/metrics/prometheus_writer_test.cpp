// PrometheusWriter: every page it writes is parsed back with the test's own exposition parser.
#include "pipeline/metrics/prometheus_writer.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "tests/metrics/exposition_parser.h"

namespace edgefuse {
using testing::parse_exposition;
using testing::sample_value;

TEST_CASE("prometheus writer: HELP, TYPE and samples parse back") {
  PrometheusWriter writer;
  writer.family("edgefuse_frames_total", MetricType::kCounter, "Frames decoded, per stream.");
  writer.sample("edgefuse_frames_total", {{"stream", "door"}}, 1234);
  writer.sample("edgefuse_frames_total", {{"stream", "yard"}}, 0);
  writer.family("edgefuse_up", MetricType::kGauge, "1 while serving.");
  writer.sample("edgefuse_up", {}, 1);
  const std::string text = writer.text();
  CHECK(text ==
        "# HELP edgefuse_frames_total Frames decoded, per stream.\n"
        "# TYPE edgefuse_frames_total counter\n"
        "edgefuse_frames_total{stream=\"door\"} 1234\n"
        "edgefuse_frames_total{stream=\"yard\"} 0\n"
        "# HELP edgefuse_up 1 while serving.\n"
        "# TYPE edgefuse_up gauge\n"
        "edgefuse_up 1\n");
  const auto page = parse_exposition(text);
  REQUIRE_MESSAGE(page.error.empty(), page.error);
  CHECK(page.type.at("edgefuse_frames_total") == "counter");
  CHECK(page.type.at("edgefuse_up") == "gauge");
  CHECK(sample_value(page, "edgefuse_frames_total", {{"stream", "door"}}) == 1234);
  CHECK(sample_value(page, "edgefuse_up", {}) == 1);
}

TEST_CASE("prometheus writer: label values and HELP text are escaped") {
  const std::string hostile = "a\\b \"quoted\"\nnext line {x=\"1\"} # not a comment";
  PrometheusWriter writer;
  writer.family("edgefuse_events_total", MetricType::kCounter, "Help with \\ backslash\nand \"quotes\".");
  writer.sample("edgefuse_events_total", {{"stream", hostile}, {"model", ""}}, 7);
  const std::string text = writer.text();
  CHECK(text.find("Help with \\\\ backslash\\nand \"quotes\".\n") != std::string::npos);
  CHECK(text.find(R"(stream="a\\b \"quoted\"\nnext line {x=\"1\"} # not a comment")") != std::string::npos);
  CHECK(std::count(text.begin(), text.end(), '\n') == 3);  // the raw newlines never reach the page

  const auto page = parse_exposition(text);
  REQUIRE_MESSAGE(page.error.empty(), page.error);
  CHECK(page.help.at("edgefuse_events_total") == "Help with \\ backslash\nand \"quotes\".");
  CHECK(sample_value(page, "edgefuse_events_total", {{"stream", hostile}, {"model", ""}}) == 7);
}

TEST_CASE("prometheus writer: histogram buckets are cumulative and end with +Inf") {
  Histogram histogram({0.5, 1, 2.5});
  for (double v : {0.1, 0.5, 0.7, 1.0, 2.0, 3.0, 100.0}) histogram.observe(v);
  PrometheusWriter writer;
  writer.family("edgefuse_latency_ms", MetricType::kHistogram, "Latency.");
  writer.histogram("edgefuse_latency_ms", {{"stream", "door"}}, histogram.snapshot());
  const std::string text = writer.text();
  CHECK(text.find("edgefuse_latency_ms_bucket{stream=\"door\",le=\"0.5\"} 2\n") != std::string::npos);
  CHECK(text.find("edgefuse_latency_ms_bucket{stream=\"door\",le=\"+Inf\"} 7\n") != std::string::npos);

  const auto page = parse_exposition(text);
  REQUIRE_MESSAGE(page.error.empty(), page.error);
  CHECK(page.type.at("edgefuse_latency_ms") == "histogram");
  auto bucket = [&](const char* le) {
    return sample_value(page, "edgefuse_latency_ms_bucket", {{"stream", "door"}, {"le", le}});
  };
  CHECK(bucket("0.5") == 2);
  CHECK(bucket("1") == 4);
  CHECK(bucket("2.5") == 5);
  CHECK(bucket("+Inf") == 7);
  CHECK(sample_value(page, "edgefuse_latency_ms_count", {{"stream", "door"}}) == 7);
  CHECK(sample_value(page, "edgefuse_latency_ms_sum", {{"stream", "door"}}) == doctest::Approx(107.3));
  // Buckets never decrease down the page.
  double previous = 0;
  for (const auto& sample : page.samples) {
    if (sample.name != "edgefuse_latency_ms_bucket") continue;
    CHECK(sample.value >= previous);
    previous = sample.value;
  }
}

TEST_CASE("prometheus writer: values Prometheus parses, including NaN and infinities") {
  CHECK(format_metric_value(0) == "0");
  CHECK(format_metric_value(42) == "42");
  CHECK(format_metric_value(-1.5) == "-1.5");
  CHECK(format_metric_value(0.1) == "0.1");
  CHECK(format_metric_value(1e300) == "1e+300");
  CHECK(format_metric_value(123456789012.0) == "123456789012");
  CHECK(format_metric_value(std::numeric_limits<double>::quiet_NaN()) == "NaN");
  CHECK(format_metric_value(std::numeric_limits<double>::infinity()) == "+Inf");
  CHECK(format_metric_value(-std::numeric_limits<double>::infinity()) == "-Inf");
  CHECK(std::stod(format_metric_value(1.0 / 3.0)) == 1.0 / 3.0);  // round-trips exactly

  PrometheusWriter writer;
  writer.family("edgefuse_odd", MetricType::kGauge, "Odd values.");
  writer.sample("edgefuse_odd", {{"v", "nan"}}, std::numeric_limits<double>::quiet_NaN());
  writer.sample("edgefuse_odd", {{"v", "inf"}}, std::numeric_limits<double>::infinity());
  writer.sample("edgefuse_odd", {{"v", "small"}}, 1e-9);
  const auto page = parse_exposition(writer.text());
  REQUIRE_MESSAGE(page.error.empty(), page.error);
  CHECK(std::isnan(sample_value(page, "edgefuse_odd", {{"v", "nan"}})));
  CHECK(std::isinf(sample_value(page, "edgefuse_odd", {{"v", "inf"}})));
  CHECK(sample_value(page, "edgefuse_odd", {{"v", "small"}}) == 1e-9);
}

TEST_CASE("prometheus writer: metric and label name rules") {
  CHECK(is_valid_metric_name("edgefuse_frames_total"));
  CHECK(is_valid_metric_name("ns:rule_name"));
  CHECK(is_valid_metric_name("_x9"));
  CHECK_FALSE(is_valid_metric_name(""));
  CHECK_FALSE(is_valid_metric_name("9lives"));
  CHECK_FALSE(is_valid_metric_name("with-dash"));
  CHECK_FALSE(is_valid_metric_name("with space"));
  CHECK_FALSE(is_valid_metric_name("caf\xc3\xa9"));
  CHECK(is_valid_label_name("stream"));
  CHECK(is_valid_label_name("_private"));
  CHECK_FALSE(is_valid_label_name("__reserved"));
  CHECK_FALSE(is_valid_label_name("a:b"));
  CHECK_FALSE(is_valid_label_name("1st"));
}

TEST_CASE("exposition parser: rejects what Prometheus rejects (the parser is a real check)") {
  CHECK_FALSE(parse_exposition("m{a=\"x\"} 1").error.empty());       // no final newline
  CHECK_FALSE(parse_exposition("m{a=\"x\"}  1\n").error.empty());    // two spaces
  CHECK_FALSE(parse_exposition("m{a=\"x\\q\"} 1\n").error.empty());  // unknown escape
  CHECK_FALSE(parse_exposition("m{a=\"x\",} 1\n").error.empty());    // trailing comma
  CHECK_FALSE(parse_exposition("m{a=\"x} 1\n").error.empty());       // unterminated value
  CHECK_FALSE(parse_exposition("m 1.5.2\n").error.empty());          // bad number
  CHECK_FALSE(parse_exposition("m inf\n").error.empty());            // lower-case inf
  CHECK_FALSE(parse_exposition("# TYPE m bogus\n").error.empty());   // unknown type
  CHECK(parse_exposition("# a plain comment\nm{a=\"x\"} -2e-3\n").error.empty());
}

}  // namespace edgefuse
