#include "pipeline/config/field_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <system_error>
#include <variant>
#include <vector>

#include "pipeline/config/key_suggestion.h"
#include "pipeline/config/stream_uri.h"

namespace edgefuse::config {
namespace {

using Kind = YamlNode::Kind;

// YAML 1.2 core schema nulls; yaml-cpp reports some of them as plain scalars.
bool is_null(const YamlNode& node) {
  if (node.kind == Kind::kNull) return true;
  if (node.kind != Kind::kScalar || !node.plain) return false;
  const std::string& s = node.scalar;
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// [-+]? digits, or [-+]? (digits [. digits?] | . digits) ([eE] [-+]? digits)? for floats.
bool is_decimal_number(std::string_view s, bool allow_fraction) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  size_t digits = 0;
  while (i < s.size() && is_digit(s[i])) ++i, ++digits;
  if (allow_fraction && i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (allow_fraction && i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t exponent_digits = 0;
    while (i < s.size() && is_digit(s[i])) ++i, ++exponent_digits;
    if (exponent_digits == 0) return false;
  }
  return i == s.size();
}

bool in_range(double value, const NumberRange& range) {
  return (value >= range.min && value <= range.max) || (range.zero_means_default && value == 0);
}

class ValueReader {
 public:
  ValueReader(const YamlNode& node, const KeyRule& rule, std::string_view path, ReadContext& context)
      : node_(node), rule_(rule), path_(path), context_(context) {}

  void read(int& out) {
    EF_ASSERT(rule_.type == ValueType::kInt, "key ", rule_.key, " is not an integer type");
    std::string_view text = node_.scalar;
    if (!plain_scalar() || !is_decimal_number(text, false)) return mismatch();
    if (text.starts_with('+')) text.remove_prefix(1);
    long long value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc{} || end != text.data() + text.size() ||
        !in_range(static_cast<double>(value), rule_.range)) {
      return mismatch();
    }
    out = static_cast<int>(value);
  }

  void read(double& out) {
    EF_ASSERT(rule_.type == ValueType::kFloat, "key ", rule_.key, " is not a number type");
    std::string_view text = node_.scalar;
    if (!plain_scalar() || !is_decimal_number(text, true)) return mismatch();
    if (text.starts_with('+')) text.remove_prefix(1);
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc{} || end != text.data() + text.size() || !std::isfinite(value) ||
        !in_range(value, rule_.range)) {
      return mismatch();
    }
    out = value;
  }

  void read(bool& out) {
    EF_ASSERT(rule_.type == ValueType::kBool, "key ", rule_.key, " is not a boolean type");
    const std::string& s = node_.scalar;
    if (!plain_scalar()) return mismatch();
    if (s == "true" || s == "True" || s == "TRUE") {
      out = true;
    } else if (s == "false" || s == "False" || s == "FALSE") {
      out = false;
    } else {
      mismatch();
    }
  }

  void read(std::string& out) {
    const std::optional<std::string> text = string_value();
    if (!text) return;
    switch (rule_.type) {
      case ValueType::kString:
        out = *text;
        return;
      case ValueType::kName:
        return accept_if(is_name(*text), *text, out);
      case ValueType::kChoice:
        return accept_if(is_choice(*text), *text, out);
      case ValueType::kOutputFile:
        out = *text == "-" ? *text : std::filesystem::absolute(context_.base_dir / *text).lexically_normal().string();
        return;
      case ValueType::kOutputPath:
        out = std::filesystem::absolute(context_.base_dir / *text).lexically_normal().string();
        return;
      case ValueType::kStreamUri: {
        Result<std::string> uri = normalize_stream_uri(*text, context_.base_dir);
        if (!uri) return context_.diagnostics.add(path_, node_.line, uri.status().message());
        out = std::move(uri).value();
        return;
      }
      default:
        EF_ASSERT(false, "key ", rule_.key, " is not a string type");
    }
  }

  void read(std::filesystem::path& out) {
    EF_ASSERT(rule_.type == ValueType::kInputFile, "key ", rule_.key, " is not a file type");
    const std::optional<std::string> text = string_value();
    if (!text) return;
    const std::filesystem::path path = std::filesystem::absolute(context_.base_dir / *text).lexically_normal();
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error)) {
      const bool exists = std::filesystem::exists(path, error);
      return context_.diagnostics.add(
          path_, node_.line, make_message(exists ? "not a regular file: " : "file not found: ", path.string()));
    }
    out = path;
  }

  void read(std::vector<std::string>& out) {
    EF_ASSERT(rule_.type == ValueType::kStringList, "key ", rule_.key, " is not a list type");
    if (node_.kind != Kind::kSequence) return mismatch();
    std::vector<std::string> items;
    for (size_t i = 0; i < node_.children.size(); ++i) {
      const YamlNode& item = node_.children[i];
      if (item.kind != Kind::kScalar || is_null(item) || item.scalar.empty()) {
        context_.diagnostics.add(make_message(path_, '[', i, ']'), item.line,
                                 "expected a non-empty string, got " + describe_found(item));
        continue;
      }
      items.push_back(item.scalar);
    }
    out = std::move(items);
  }

  void read(std::vector<Point>& out) {
    EF_ASSERT(rule_.type == ValueType::kPointList, "key ", rule_.key, " is not a point list type");
    if (node_.kind != Kind::kSequence) return mismatch();
    const auto count = static_cast<double>(node_.children.size());
    if (count < rule_.range.min || count > rule_.range.max) {
      return context_.diagnostics.add(
          path_, node_.line,
          make_message("expected ", describe_expectation(rule_), ", got ", node_.children.size(), " points"));
    }
    std::vector<Point> points;
    for (size_t i = 0; i < node_.children.size(); ++i) {
      const YamlNode& item = node_.children[i];
      std::optional<double> x, y;
      if (item.kind == Kind::kSequence && item.children.size() == 2) {
        x = fraction(item.children[0]);
        y = fraction(item.children[1]);
      }
      if (!x || !y) {
        context_.diagnostics.add(make_message(path_, '[', i, ']'), item.line,
                                 "expected [x, y] with x and y numbers in 0..1 (fractions of the frame's width "
                                 "and height), got " +
                                     describe_point(item));
        continue;
      }
      points.push_back({*x, *y});
    }
    out = std::move(points);
  }

 private:
  bool plain_scalar() const { return node_.kind == Kind::kScalar && node_.plain; }

  // "[1.5, 0]" for a short list of scalars (what a point is written as), else as describe_found.
  static std::string describe_point(const YamlNode& node) {
    constexpr size_t kShownItems = 4;
    const bool flat = node.kind == Kind::kSequence && node.children.size() <= kShownItems &&
                      std::all_of(node.children.begin(), node.children.end(),
                                  [](const YamlNode& c) { return c.kind == Kind::kScalar; });
    if (!flat) return describe_found(node);
    std::string text = "[";
    for (size_t i = 0; i < node.children.size(); ++i) {
      text.append(i == 0 ? "" : ", ").append(node.children[i].scalar.substr(0, 24));
    }
    return text + "]";
  }

  // A plain decimal number in [0, 1].
  static std::optional<double> fraction(const YamlNode& node) {
    std::string_view text = node.scalar;
    if (node.kind != Kind::kScalar || !node.plain || !is_decimal_number(text, true)) return std::nullopt;
    if (text.starts_with('+')) text.remove_prefix(1);
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc{} || end != text.data() + text.size() || !(value >= 0 && value <= 1)) return std::nullopt;
    return value;
  }

  void mismatch() {
    const std::string found = rule_.secret && node_.kind == Kind::kScalar ? "a value (hidden)" : describe_found(node_);
    context_.diagnostics.add(path_, node_.line,
                             make_message("expected ", describe_expectation(rule_), ", got ", found));
  }

  std::optional<std::string> string_value() {
    if (node_.kind != Kind::kScalar || is_null(node_) || node_.scalar.empty()) {
      mismatch();
      return std::nullopt;
    }
    return node_.scalar;
  }

  void accept_if(bool ok, const std::string& text, std::string& out) {
    if (ok) {
      out = text;
    } else {
      mismatch();
    }
  }

  static bool is_name(std::string_view text) {
    return std::all_of(text.begin(), text.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' || c == '.' || c == '-';
    });
  }

  bool is_choice(std::string_view text) const {
    std::string_view rest = rule_.choices;
    while (true) {
      const size_t bar = rest.find('|');
      if (rest.substr(0, bar) == text) return true;
      if (bar == std::string_view::npos) return false;
      rest.remove_prefix(bar + 1);
    }
  }

  const YamlNode& node_;
  const KeyRule& rule_;
  std::string_view path_;
  ReadContext& context_;
};

}  // namespace

std::string child_path(std::string_view parent, std::string_view key) {
  return parent.empty() ? std::string(key) : make_message(parent, '.', key);
}

std::string describe_found(const YamlNode& node) {
  if (is_null(node)) return "null";
  if (node.kind == Kind::kSequence) return "a list";
  if (node.kind == Kind::kMapping) return "a mapping";
  constexpr size_t kShown = 60;
  const std::string shown = node.scalar.size() > kShown ? node.scalar.substr(0, kShown) + "..." : node.scalar;
  return make_message(node.plain ? "\"" : "quoted \"", shown, '"');
}

template <typename Target>
void read_fields(const YamlNode& mapping, std::span<const FieldSpec<Target>> fields, std::string_view path,
                 ReadContext& context, Target& out, std::span<const std::string_view> other_keys) {
  std::vector<std::string_view> known(other_keys.begin(), other_keys.end());
  for (const FieldSpec<Target>& field : fields) known.push_back(field.rule.key);

  for (const YamlNode& value : mapping.children) {
    const std::string path_of_key = child_path(path, value.key);
    const auto field =
        std::find_if(fields.begin(), fields.end(), [&](const FieldSpec<Target>& f) { return f.rule.key == value.key; });
    if (field == fields.end()) {
      if (std::find(other_keys.begin(), other_keys.end(), value.key) == other_keys.end()) {
        context.diagnostics.add(path_of_key, value.key_line, "unknown key", suggest(value.key, known));
      }
      continue;
    }
    context.key_lines[path_of_key] = value.key_line;
    std::visit([&](auto member) { ValueReader(value, field->rule, path_of_key, context).read(out.*member); },
               field->member);
  }
  for (const FieldSpec<Target>& field : fields) {
    if (field.rule.required && mapping.find(field.rule.key) == nullptr) {
      context.diagnostics.add(path, mapping.line, make_message("missing required key \"", field.rule.key, '"'));
    }
  }
}

template void read_fields(const YamlNode&, std::span<const FieldSpec<DaemonConfig>>, std::string_view, ReadContext&,
                          DaemonConfig&, std::span<const std::string_view>);
template void read_fields(const YamlNode&, std::span<const FieldSpec<ModelConfig>>, std::string_view, ReadContext&,
                          ModelConfig&, std::span<const std::string_view>);
template void read_fields(const YamlNode&, std::span<const FieldSpec<StreamConfig>>, std::string_view, ReadContext&,
                          StreamConfig&, std::span<const std::string_view>);
template void read_fields(const YamlNode&, std::span<const FieldSpec<EventsConfig>>, std::string_view, ReadContext&,
                          EventsConfig&, std::span<const std::string_view>);
template void read_fields(const YamlNode&, std::span<const FieldSpec<MqttConfig>>, std::string_view, ReadContext&,
                          MqttConfig&, std::span<const std::string_view>);
template void read_fields(const YamlNode&, std::span<const FieldSpec<HttpConfig>>, std::string_view, ReadContext&,
                          HttpConfig&, std::span<const std::string_view>);
template void read_fields(const YamlNode&, std::span<const FieldSpec<RegionConfig>>, std::string_view, ReadContext&,
                          RegionConfig&, std::span<const std::string_view>);
template void read_fields(const YamlNode&, std::span<const FieldSpec<ObjectFilterConfig>>, std::string_view,
                          ReadContext&, ObjectFilterConfig&, std::span<const std::string_view>);

}  // namespace edgefuse::config
