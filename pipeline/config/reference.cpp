// config_reference(): the schema tables printed for people, one block per key.
#include <sstream>
#include <variant>

#include "pipeline/config/config.h"
#include "pipeline/config/schema.h"
#include "pipeline/config/stream_uri.h"

namespace edgefuse {
namespace {

using config::FieldSpec;
using config::KeyRule;

// The default, read from a default-constructed struct so it cannot drift from the code.
template <typename Target>
std::string default_text(const FieldSpec<Target>& field) {
  static const Target kDefaults{};
  return std::visit(
      [](auto member) -> std::string {
        const auto& value = kDefaults.*member;
        using Value = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<Value, bool>) {
          return value ? "true" : "false";
        } else if constexpr (std::is_same_v<Value, std::string> || std::is_same_v<Value, std::filesystem::path>) {
          const std::string text = std::filesystem::path(value).string();
          return text.empty() ? "(none)" : "\"" + text + "\"";
        } else if constexpr (std::is_same_v<Value, std::vector<std::string>>) {
          return value.empty() ? "[] (all)" : "(list)";
        } else if constexpr (std::is_same_v<Value, std::vector<Point>>) {
          return "(none)";
        } else {
          return make_message(value);
        }
      },
      field.member);
}

// Indented by 4, lines of at most ~100 characters, then a blank line.
void write_wrapped(std::ostringstream& out, std::string_view text) {
  constexpr size_t kWidth = 96;
  size_t column = 0;
  while (!text.empty()) {
    const size_t space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    text = space == std::string_view::npos ? std::string_view{} : text.substr(space + 1);
    if (column > 0 && column + 1 + word.size() > kWidth) {
      out << '\n';
      column = 0;
    }
    out << (column == 0 ? "    " : " ") << word;
    column += word.size() + (column == 0 ? 4 : 1);
  }
  out << "\n\n";
}

void write_key(std::ostringstream& out, std::string_view prefix, const KeyRule& rule, const std::string& fallback) {
  out << prefix << rule.key << '\n';
  out << "    type:     " << config::describe_expectation(rule) << '\n';
  out << "    " << (rule.required ? "required" : "default:  " + fallback) << '\n';
  if (!rule.only_for_scheme.empty()) {
    out << "    only for: " << config::describe_schemes(rule.only_for_scheme) << " streams (an error on others)\n";
  }
  write_wrapped(out, rule.description);
}

template <typename Target>
void write_fields(std::ostringstream& out, std::string_view prefix, std::span<const FieldSpec<Target>> fields) {
  for (const FieldSpec<Target>& field : fields) write_key(out, prefix, field.rule, default_text(field));
}

void write_sections(std::ostringstream& out, std::string_view prefix, std::span<const config::SectionSpec> sections) {
  for (const config::SectionSpec& section : sections) {
    out << prefix << section.key << '\n'
        << "    type:     " << (section.is_list ? "non-empty list of mappings (keys below)" : "mapping (keys below)")
        << '\n'
        << "    " << (section.required ? "required" : "optional") << '\n';
    write_wrapped(out, section.description);
  }
}

}  // namespace

std::string config_reference() {
  std::ostringstream out;
  out << "edgefuse daemon configuration (YAML)\n"
         "\n"
         "One YAML document, at most 1 MiB, without anchors, aliases or tags. Keys are kebab-case; unknown\n"
         "keys are errors. Integers are plain decimals, numbers are finite decimals, booleans are true or\n"
         "false (YAML 1.2: yes/no/on/off are not booleans), and quoted values are always strings. Relative\n"
         "paths are resolved against the config file's folder.\n"
         "\n"
         "== top level ==\n\n";
  write_sections(out, "", config::sections());
  write_fields(out, "", config::top_level_fields());
  out << "== models[]: each entry of models ==\n\n";
  write_fields(out, "models[].", config::model_fields());
  out << "== streams[]: each entry of streams ==\n\n";
  write_sections(out, "streams[].", config::stream_sections());
  write_fields(out, "streams[].", config::stream_fields());
  out << "== streams[].zones[]: each zone of a stream ==\n\n";
  write_fields(out, "streams[].zones[].", config::zone_fields());
  out << "== streams[].lines[]: each counting line of a stream ==\n\n";
  write_fields(out, "streams[].lines[].", config::line_fields());
  out << "== streams[].masks[]: each mask of a stream ==\n\n";
  write_fields(out, "streams[].masks[].", config::mask_fields());
  out << "== streams[].filters[]: each object filter of a stream ==\n\n";
  write_fields(out, "streams[].filters[].", config::filter_fields());
  out << "== events ==\n\n";
  write_fields(out, "events.", config::events_fields());
  out << "== mqtt ==\n\n";
  write_fields(out, "mqtt.", config::mqtt_fields());
  out << "== http ==\n\n";
  write_fields(out, "http.", config::http_fields());
  return out.str();
}

}  // namespace edgefuse
