// Fills a config struct from one YAML mapping, driven by its FieldSpec table: type and range
// checks, unknown keys (with a suggestion) and missing required keys become Diagnostics.
#pragma once

#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "pipeline/config/diagnostics.h"
#include "pipeline/config/schema.h"
#include "pipeline/config/yaml_tree.h"

namespace edgefuse::config {

struct ReadContext {
  Diagnostics& diagnostics;
  std::filesystem::path base_dir;  // relative paths are resolved against it
  // "streams[1].loop" -> line, for every key present; also "streams[1]" -> its first line, for list items
  std::map<std::string, int, std::less<>> key_lines;
};

// "streams[1]" + "uri" -> "streams[1].uri"; an empty parent gives the key alone.
std::string child_path(std::string_view parent, std::string_view key);

// "a mapping", "\"two\"", "null": how a found value is shown after "got".
std::string describe_found(const YamlNode& node);

// Reads every key of `mapping` into `out` (keys left out keep their defaults). Keys listed in
// `other_keys` belong to the caller and are skipped. Problems go to context.diagnostics.
template <typename Target>
void read_fields(const YamlNode& mapping, std::span<const FieldSpec<Target>> fields, std::string_view path,
                 ReadContext& context, Target& out, std::span<const std::string_view> other_keys = {});

}  // namespace edgefuse::config
