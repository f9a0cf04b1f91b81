// Hostile input fails cleanly: no deep recursion, no alias expansion, bounded sizes (CI runs this
// under ASan, which also catches a blown stack).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "pipeline/config/config.h"
#include "pipeline/config/yaml_tree.h"
#include "tests/config/config_test_folder.h"

using namespace edgefuse;
using edgefuse::test::ConfigFolder;

namespace {

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

std::string tree_error(std::string_view yaml) {
  const Result<config::YamlNode> tree = config::parse_yaml_tree(yaml, "hostile.yaml");
  CHECK_FALSE(tree.is_ok());
  return tree.is_ok() ? "" : tree.status().message();
}

// `depth` nested block mappings: a:\n  a:\n    a: ... ending in a scalar.
std::string nested_mappings(int depth) {
  std::string yaml;
  for (int i = 0; i < depth; ++i) yaml += std::string(static_cast<size_t>(2 * i), ' ') + "a:\n";
  yaml += std::string(static_cast<size_t>(2 * depth), ' ') + "x\n";
  return yaml;
}

}  // namespace

TEST_CASE("deep nesting stops at the depth limit, before yaml-cpp recurses") {
  const size_t n = 100000;
  const std::string balanced = tree_error(std::string(n, '[') + std::string(n, ']'));
  CHECK_MESSAGE(contains(balanced, "hostile.yaml: [0][0][0]"), balanced);
  CHECK(contains(balanced, "nesting deeper than 32 levels (line 1)"));
  // yaml-cpp reads "[[" and "{{" as collections used as mapping keys, which fail before any depth.
  CHECK(contains(tree_error(std::string(n, '[')), "hostile.yaml: "));
  CHECK(contains(tree_error(std::string(n, '{') + std::string(n, '}')), "hostile.yaml: "));
  CHECK(contains(tree_error("a:\n  - " + std::string(n, '[') + std::string(n, ']')),
                 "nesting deeper than 32 levels (line 2)"));
  std::string dashes;
  for (int i = 0; i < 5000; ++i) dashes += "- ";
  CHECK(contains(tree_error(dashes + "x\n"), "nesting deeper than 32 levels"));

  CHECK(config::parse_yaml_tree(nested_mappings(config::kMaxDepth), "").is_ok());
  const std::string too_deep = tree_error(nested_mappings(config::kMaxDepth + 1));
  CHECK_MESSAGE(contains(too_deep, "a.a.a.a.a"), too_deep);  // the key path where it happened
  CHECK(contains(too_deep, "(line 33)"));
}

TEST_CASE("anchors and aliases are rejected, so an alias bomb never expands") {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char name = 'b'; name <= 'j'; ++name) {
    const char previous = static_cast<char>(name - 1);
    bomb += std::string(1, name) + ": &" + name + " [";
    for (int i = 0; i < 10; ++i) bomb += std::string(i ? ", *" : "*") + previous;
    bomb += "]\n";
  }
  const std::string message = tree_error(bomb);
  CHECK_MESSAGE(contains(message, "a: YAML anchors (&name) are not allowed in config files (line 1)"), message);
  CHECK(contains(tree_error("a: &x 1\nb: *x\n"), "a: YAML anchors (&name) are not allowed in config files (line 1)"));
  CHECK(contains(tree_error("b: *undefined\n"), "YAML syntax error"));
  CHECK(contains(tree_error("models: &m []\n"), "anchors"));
}

TEST_CASE("size limits: whole text 1 MiB, any scalar 4096 characters") {
  const std::string huge = "models: " + std::string(10 << 20, 'x') + "\n";
  CHECK(contains(tree_error(huge), "bytes; the limit is 1048576 (1 MiB)"));

  const std::string long_value = "models:\n  - name: " + std::string(5000, 'n') + "\n";
  CHECK(contains(tree_error(long_value), "models[0].name: value of 5000 characters; the limit is 4096 (line 2)"));
  const std::string long_key = "models:\n  - ? " + std::string(5000, 'k') + "\n    : 1\n";
  CHECK(contains(tree_error(long_key), "models[0]: value of 5000 characters"));

  const ConfigFolder folder;
  const Result<DaemonConfig> big_file = load_config_file(folder.write("big.yaml", std::string(2 << 20, '#')));
  REQUIRE_FALSE(big_file.is_ok());
  CHECK(contains(big_file.status().message(), "big.yaml: config file is larger than the 1 MiB limit"));
}

TEST_CASE("exactly one document; no tags; keys are scalars") {
  CHECK(contains(tree_error(""), "hostile.yaml: config is empty (no YAML document)"));
  CHECK(contains(tree_error("# only a comment\n\n"), "config is empty"));
  CHECK(contains(tree_error("a: 1\n---\nb: 2\n"),
                 "a second YAML document ('---'); a config file holds exactly one (line 2)"));
  CHECK(contains(tree_error("a: !!str 1\n"), "a: explicit YAML tags are not supported"));
  CHECK(contains(tree_error("? [a, b]\n: 1\n"), "mapping keys must be plain words"));
  CHECK(contains(tree_error("a: 1\na: 2\n"), "duplicate key \"a\" (first at line 1) (line 2)"));
}

TEST_CASE("a flood of keys is handled in one pass and reported up to the cap") {
  std::string flood = "models: [{name: det, path: /}]\nstreams: [{name: s, uri: 'test://', model: det}]\n";
  for (int i = 0; i < 60000; ++i) flood.append("k").append(std::to_string(i)).append(": 1\n");
  const Result<DaemonConfig> parsed = parse_config(flood, "/", "flood.yaml");
  REQUIRE_FALSE(parsed.is_ok());
  const std::string& message = parsed.status().message();
  CHECK_MESSAGE(message.starts_with("flood.yaml: models[0].path: not a regular file: / (line 1)\n"), message);
  CHECK(contains(message, "flood.yaml: k0: unknown key (line 3)"));
  CHECK(message.ends_with("\n... and 59981 more problems"));
  CHECK(std::count(message.begin(), message.end(), '\n') == 20);
}
