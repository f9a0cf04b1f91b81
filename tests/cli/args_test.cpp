#include "pipeline/cli/args.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace edgefuse::cli {
namespace {

const CommandSpec& test_spec() {
  static const CommandSpec spec{
      .name = "try",
      .summary = "exercise the parser",
      .usage = "--model FILE [options]",
      .options =
          {
              {.name = "model", .value_name = "FILE", .description = "a model", .required = true},
              {.name = "input", .value_name = "FILE", .description = "an input", .repeatable = true},
              {.name = "runs",
               .type = OptionType::kInt,
               .value_name = "N",
               .default_value = "50",
               .description = "timed runs",
               .min = 1,
               .max = 100},
              {.name = "score",
               .type = OptionType::kFloat,
               .value_name = "X",
               .default_value = "0.3",
               .description = "threshold",
               .min = 0,
               .max = 1},
              {.name = "json", .type = OptionType::kFlag, .description = "as JSON"},
          },
  };
  return spec;
}

Result<ParsedArgs> parse(std::vector<std::string> args) {
  return parse_args(test_spec(), args);
}

std::string error_of(std::vector<std::string> args) {
  Result<ParsedArgs> parsed = parse(std::move(args));
  REQUIRE_FALSE(parsed.is_ok());
  return parsed.status().message();
}

TEST_CASE("parse_args reads both value forms, defaults, flags and repeats") {
  Result<ParsedArgs> parsed = parse({"--model", "m.onnx", "--runs=7", "--input", "a", "--input=b=c", "--json"});
  REQUIRE(parsed.is_ok());
  CHECK(parsed->get("model") == "m.onnx");
  CHECK(parsed->get_int("runs") == 7);
  CHECK(parsed->get_float("score") == doctest::Approx(0.3));
  CHECK(parsed->all("input") == std::vector<std::string>{"a", "b=c"});
  CHECK(parsed->flag("json"));
  CHECK_FALSE(parsed->help_requested());

  Result<ParsedArgs> minimal = parse({"--model=x"});
  REQUIRE(minimal.is_ok());
  CHECK_FALSE(minimal->flag("json"));
  CHECK(minimal->all("input").empty());
  CHECK_FALSE(minimal->has("input"));
  CHECK(minimal->has("runs"));  // through its default
  CHECK(minimal->get_int("runs") == 50);
}

TEST_CASE("parse_args errors name the option and the problem") {
  CHECK(error_of({"--model", "m", "--bogus"}) == "unknown option --bogus");
  CHECK(error_of({}) == "missing required option --model");
  CHECK(error_of({"--model"}) == "--model needs a value (FILE)");
  CHECK(error_of({"--model", "--json"}) == "--model needs a value (FILE)");
  CHECK(error_of({"--model", "m", "--runs", "7x"}) == "--runs: '7x' is not an integer");
  CHECK(error_of({"--model", "m", "--runs", "101"}) == "--runs: 101 is outside the allowed range 1..100");
  CHECK(error_of({"--model", "m", "--score", "nan"}) == "--score: 'nan' is not a number");
  CHECK(error_of({"--model", "m", "--score=-0.5"}) == "--score: -0.5 is outside the allowed range 0..1");
  CHECK(error_of({"--model", "m", "--json=1"}) == "--json takes no value");
  CHECK(error_of({"--model", "a", "--model", "b"}) == "--model given more than once");
  CHECK(error_of({"--model", "m", "extra"}) == "unexpected argument 'extra' (options start with --)");
  CHECK(error_of({"--", "x"}) == "unexpected argument '--' (options start with --)");
}

TEST_CASE("--help skips the required-option check") {
  Result<ParsedArgs> parsed = parse({"-h"});
  REQUIRE(parsed.is_ok());
  CHECK(parsed->help_requested());
}

TEST_CASE("help_text lists every declared option with its default and range") {
  const std::string help = help_text(test_spec(), "edgefuse");
  CHECK(help.find("edgefuse try: exercise the parser") == 0);
  CHECK(help.find("Usage: edgefuse try --model FILE [options]") != std::string::npos);
  CHECK(help.find("--model FILE") != std::string::npos);
  CHECK(help.find("a model (required)") != std::string::npos);
  CHECK(help.find("an input (repeatable)") != std::string::npos);
  CHECK(help.find("timed runs (default 50, range 1..100)") != std::string::npos);
  CHECK(help.find("--json ") != std::string::npos);
  CHECK(help.find("-h, --help") != std::string::npos);
}

}  // namespace
}  // namespace edgefuse::cli
