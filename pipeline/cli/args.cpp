#include "pipeline/cli/args.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

namespace edgefuse::cli {
namespace {

const OptionSpec* find_option(const CommandSpec& spec, std::string_view name) {
  for (const OptionSpec& option : spec.options) {
    if (option.name == name) return &option;
  }
  return nullptr;
}

template <typename T>
bool parse_number(std::string_view text, T& value) {
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && stop == end;
}

std::string format_bound(double bound) {
  if (bound == std::trunc(bound) && std::fabs(bound) < 1e15) return std::to_string(static_cast<int64_t>(bound));
  std::ostringstream out;
  out << bound;
  return out.str();
}

bool has_lower_bound(const OptionSpec& option) {
  return option.min != std::numeric_limits<double>::lowest();
}
bool has_upper_bound(const OptionSpec& option) {
  return option.max != std::numeric_limits<double>::max();
}

std::string range_text(const OptionSpec& option) {
  if (has_lower_bound(option) && has_upper_bound(option)) {
    return format_bound(option.min) + ".." + format_bound(option.max);
  }
  if (has_lower_bound(option)) return ">= " + format_bound(option.min);
  if (has_upper_bound(option)) return "<= " + format_bound(option.max);
  return "";
}

// Checks `text` is a valid value for `option` (type and range).
Status check_value(const OptionSpec& option, std::string_view text) {
  double number = 0;
  if (option.type == OptionType::kInt) {
    int64_t integer = 0;
    if (!parse_number(text, integer)) return invalid_argument("--", option.name, ": '", text, "' is not an integer");
    number = static_cast<double>(integer);
  } else if (option.type == OptionType::kFloat) {
    if (!parse_number(text, number) || !std::isfinite(number)) {
      return invalid_argument("--", option.name, ": '", text, "' is not a number");
    }
  } else {
    return Status::ok();
  }
  if (number < option.min || number > option.max) {
    return invalid_argument("--", option.name, ": ", text, " is outside the allowed range ", range_text(option));
  }
  return Status::ok();
}

std::string option_label(const OptionSpec& option) {
  std::string label = "--" + option.name;
  if (option.type != OptionType::kFlag) label += " " + (option.value_name.empty() ? "VALUE" : option.value_name);
  return label;
}

}  // namespace

const OptionSpec& ParsedArgs::spec_of(std::string_view name) const {
  const OptionSpec* option = find_option(*spec_, name);
  EF_ASSERT(option != nullptr, "option --", name, " is not declared by command '", spec_->name, "'");
  return *option;
}

bool ParsedArgs::has(std::string_view name) const {
  return given_.contains(name) || !spec_of(name).default_value.empty();
}

bool ParsedArgs::flag(std::string_view name) const {
  EF_ASSERT(spec_of(name).type == OptionType::kFlag, "--", name, " is not a flag");
  return given_.contains(name);
}

const std::string& ParsedArgs::get(std::string_view name) const {
  const OptionSpec& option = spec_of(name);
  auto it = given_.find(name);
  return it != given_.end() ? it->second.back() : option.default_value;
}

std::vector<std::string> ParsedArgs::all(std::string_view name) const {
  spec_of(name);
  auto it = given_.find(name);
  return it != given_.end() ? it->second : std::vector<std::string>{};
}

int64_t ParsedArgs::get_int(std::string_view name) const {
  EF_ASSERT(spec_of(name).type == OptionType::kInt, "--", name, " is not an integer option");
  int64_t value = 0;
  EF_ASSERT(parse_number(std::string_view(get(name)), value), "--", name, " has no valid value");
  return value;
}

double ParsedArgs::get_float(std::string_view name) const {
  EF_ASSERT(spec_of(name).type == OptionType::kFloat, "--", name, " is not a number option");
  double value = 0;
  EF_ASSERT(parse_number(std::string_view(get(name)), value), "--", name, " has no valid value");
  return value;
}

Result<ParsedArgs> parse_args(const CommandSpec& spec, std::span<const std::string> args) {
  ParsedArgs parsed;
  parsed.spec_ = &spec;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      parsed.help_requested_ = true;
      continue;
    }
    if (!arg.starts_with("--") || arg.size() == 2) {
      return invalid_argument("unexpected argument '", arg, "' (options start with --)");
    }
    const size_t equals = arg.find('=');
    const std::string name = arg.substr(2, equals == std::string::npos ? std::string::npos : equals - 2);
    const OptionSpec* option = find_option(spec, name);
    if (option == nullptr) return invalid_argument("unknown option --", name);

    std::string value;
    if (option->type == OptionType::kFlag) {
      if (equals != std::string::npos) return invalid_argument("--", name, " takes no value");
    } else if (equals != std::string::npos) {
      value = arg.substr(equals + 1);
    } else if (i + 1 < args.size() && !args[i + 1].starts_with("--")) {
      value = args[++i];
    } else {
      return invalid_argument("--", name, " needs a value (", option->value_name, ")");
    }
    EF_RETURN_IF_ERROR(check_value(*option, value));
    std::vector<std::string>& values = parsed.given_[name];
    if (!values.empty() && !option->repeatable) return invalid_argument("--", name, " given more than once");
    values.push_back(std::move(value));
  }
  if (parsed.help_requested_) return parsed;
  for (const OptionSpec& option : spec.options) {
    if (option.required && !parsed.given_.contains(option.name)) {
      return invalid_argument("missing required option --", option.name);
    }
  }
  return parsed;
}

std::string help_text(const CommandSpec& spec, std::string_view program) {
  std::ostringstream out;
  const std::string command = spec.name == program ? std::string(program) : std::string(program) + " " + spec.name;
  out << command << ": " << spec.summary << "\n\nUsage: " << command << " " << spec.usage << "\n\nOptions:\n";

  size_t label_width = std::string("-h, --help").size();
  for (const OptionSpec& option : spec.options) label_width = std::max(label_width, option_label(option).size());
  auto write_row = [&](const std::string& label, const std::string& description) {
    out << "  " << label << std::string(label_width - label.size() + 2, ' ') << description << "\n";
  };
  for (const OptionSpec& option : spec.options) {
    std::vector<std::string> details;
    if (option.required) details.push_back("required");
    if (option.repeatable) details.push_back("repeatable");
    if (!option.default_value.empty()) details.push_back("default " + option.default_value);
    if (const std::string range = range_text(option); !range.empty()) details.push_back("range " + range);
    std::string description = option.description;
    for (size_t d = 0; d < details.size(); ++d) description += (d == 0 ? " (" : ", ") + details[d];
    if (!details.empty()) description += ")";
    write_row(option_label(option), description);
  }
  write_row("-h, --help", "show this help and exit");
  if (!spec.notes.empty()) out << "\n" << spec.notes << (spec.notes.ends_with('\n') ? "" : "\n");
  return out.str();
}

}  // namespace edgefuse::cli
