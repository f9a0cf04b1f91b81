// Command-line options declared once: each option's name, type, range, default and description
// form a table that both the parser and the --help text read, so the two cannot disagree.
#pragma once

#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/status.h"

namespace edgefuse::cli {

enum class OptionType {
  kFlag,    // present or absent, takes no value
  kString,  // any text
  kInt,     // integer within [min, max]
  kFloat,   // number within [min, max]
};

struct OptionSpec {
  std::string name;  // without the leading "--"
  OptionType type = OptionType::kString;
  std::string value_name;     // placeholder in --help ("FILE", "N"); unused for flags
  std::string default_value;  // parsed like a given value; empty: no default
  std::string description;
  bool required = false;
  bool repeatable = false;  // may be given more than once; all() returns every value
  double min = std::numeric_limits<double>::lowest();
  double max = std::numeric_limits<double>::max();
};

struct CommandSpec {
  std::string name;     // "infer"; the program name for the top level
  std::string summary;  // one line, shown in the command list and atop --help
  std::string usage;    // arguments after the command name, e.g. "--model FILE [options]"
  std::vector<OptionSpec> options;
  std::string notes;  // free text after the option list (examples, output format); may be empty
};

// Parsed values, already checked against the declared types and ranges. Accessors take declared
// names only: asking for an undeclared option is a programmer error.
class ParsedArgs {
 public:
  bool help_requested() const { return help_requested_; }
  bool has(std::string_view name) const;  // given on the command line, or has a default
  bool flag(std::string_view name) const;
  // The last value given, else the default; "" when neither.
  const std::string& get(std::string_view name) const;
  std::vector<std::string> all(std::string_view name) const;  // given values only, in order
  int64_t get_int(std::string_view name) const;
  double get_float(std::string_view name) const;

 private:
  friend Result<ParsedArgs> parse_args(const CommandSpec& spec, std::span<const std::string> args);
  const OptionSpec& spec_of(std::string_view name) const;

  const CommandSpec* spec_ = nullptr;
  bool help_requested_ = false;
  std::map<std::string, std::vector<std::string>, std::less<>> given_;
};

// Accepts "--name value", "--name=value" and "--flag"; "--help"/"-h" is always accepted. Errors
// name the offending option: unknown ones, missing or malformed values, out-of-range numbers,
// missing required options (not checked when help was requested), and positional arguments.
// `spec` must outlive the result.
Result<ParsedArgs> parse_args(const CommandSpec& spec, std::span<const std::string> args);

// The --help text: summary, usage line, one entry per option with its default and range.
std::string help_text(const CommandSpec& spec, std::string_view program);

}  // namespace edgefuse::cli
