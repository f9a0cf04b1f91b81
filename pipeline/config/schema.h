// The schema: every configuration key declared once, with its type, range or choices, whether it
// is required, and its description. Validation (field_reader) and config_reference() both read
// these tables; defaults come from the default-constructed config structs, so they are not
// repeated here either.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pipeline/config/config.h"

namespace edgefuse::config {

enum class ValueType {
  kString,      // any scalar
  kName,        // [A-Za-z0-9_.-]+
  kChoice,      // one of KeyRule::choices
  kInputFile,   // a path that must exist; relative to the config's folder
  kOutputFile,  // "-" (stdout) or a path; relative to the config's folder
  kOutputPath,  // a file or folder the daemon creates; relative to the config's folder
  kStreamUri,   // see stream_uri.h
  kInt,         // decimal integer within KeyRule::range
  kFloat,       // finite number within KeyRule::range
  kBool,        // true | false
  kStringList,  // sequence of non-empty strings
  kPointList,   // sequence of [x, y] frame fractions, x and y in 0..1; KeyRule::range bounds the count
};

struct NumberRange {
  double min = 0;
  double max = 0;
  bool zero_means_default = false;  // 0 is also accepted (outside [min, max]) and selects a default
};

// What a key accepts and means, independent of which struct it fills.
struct KeyRule {
  std::string_view key;  // kebab-case, as written in YAML
  ValueType type = ValueType::kString;
  bool required = false;
  NumberRange range{};               // kInt, kFloat: the value; kPointList: how many points
  std::string_view choices;          // kChoice: "cpu|cuda|auto"
  std::string_view only_for_scheme;  // streams: the key is an error unless the uri scheme is one of "rtsp|rtsps"
  std::string_view description;
  bool secret = false;  // its value is never quoted in errors or shown anywhere
};

template <typename Target>
using MemberRef = std::variant<std::string Target::*, std::filesystem::path Target::*, int Target::*, double Target::*,
                               bool Target::*, std::vector<std::string> Target::*, std::vector<Point> Target::*>;

template <typename Target>
struct FieldSpec {
  KeyRule rule;
  MemberRef<Target> member;
};

// The keys that hold collections of fields: top-level sections, and a stream's zones and lines.
struct SectionSpec {
  std::string_view key;
  bool is_list = false;  // a non-empty sequence of mappings (else one mapping)
  bool required = false;
  std::string_view description;
};

std::span<const SectionSpec> sections();  // models, streams, events, mqtt, http, in that order
std::span<const FieldSpec<DaemonConfig>> top_level_fields();
std::span<const FieldSpec<ModelConfig>> model_fields();
std::span<const FieldSpec<StreamConfig>> stream_fields();
std::span<const FieldSpec<EventsConfig>> events_fields();
std::span<const FieldSpec<MqttConfig>> mqtt_fields();
std::span<const FieldSpec<HttpConfig>> http_fields();
std::span<const SectionSpec> stream_sections();  // zones, lines: lists of mappings (possibly empty)
std::span<const FieldSpec<RegionConfig>> zone_fields();
std::span<const FieldSpec<RegionConfig>> line_fields();
std::span<const FieldSpec<RegionConfig>> mask_fields();
std::span<const FieldSpec<ObjectFilterConfig>> filter_fields();

// "integer in 1..1000", "one of cpu, cuda, auto", ...: what a key expects, for errors and the reference.
std::string describe_expectation(const KeyRule& rule);

}  // namespace edgefuse::config
