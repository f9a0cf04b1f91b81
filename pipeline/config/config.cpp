#include "pipeline/config/config.h"

#include <algorithm>
#include <fstream>
#include <system_error>

#include "pipeline/config/cross_checks.h"
#include "pipeline/config/field_reader.h"
#include "pipeline/config/schema.h"
#include "pipeline/config/secrets.h"
#include "pipeline/config/yaml_tree.h"
#include "pipeline/video/stream_credentials.h"

namespace edgefuse {
namespace {

using config::Diagnostics;
using config::FieldSpec;
using config::ReadContext;
using config::SectionSpec;
using config::YamlNode;

const SectionSpec& section(std::string_view key) {
  const auto spec = config::sections();
  const auto found = std::find_if(spec.begin(), spec.end(), [&](const SectionSpec& s) { return s.key == key; });
  EF_ASSERT(found != spec.end(), "no section ", key);
  return *found;
}

// The section's node in `parent` (at `parent_path`) when present and of the right shape; problems are reported.
const YamlNode* find_section(const YamlNode& parent, const SectionSpec& spec, ReadContext& context,
                             std::string_view parent_path = "") {
  const YamlNode* node = parent.find(spec.key);
  if (node == nullptr) {
    if (spec.required) {
      context.diagnostics.add(parent_path, parent.line, make_message("missing required key \"", spec.key, '"'));
    }
    return nullptr;
  }
  const bool shape_ok = spec.is_list ? node->kind == YamlNode::Kind::kSequence && !node->children.empty()
                                     : node->kind == YamlNode::Kind::kMapping;
  if (!shape_ok) {
    context.diagnostics.add(config::child_path(parent_path, spec.key), node->line,
                            make_message("expected ", spec.is_list ? "a non-empty list of mappings" : "a mapping",
                                         ", got ", config::describe_found(*node)));
    return nullptr;
  }
  return node;
}

// A sequence of mappings `list` at `path`, each read by `fields` (keys in `other_keys` left for
// `read_nested`, called with the item's node, path and target).
template <typename Target, typename ReadNested>
void read_mappings(const YamlNode& list, std::string_view path, std::span<const FieldSpec<Target>> fields,
                   ReadContext& context, std::vector<Target>& out, std::span<const std::string_view> other_keys,
                   ReadNested&& read_nested) {
  for (size_t i = 0; i < list.children.size(); ++i) {
    const YamlNode& item = list.children[i];
    const std::string item_path = make_message(path, '[', i, ']');
    Target& target = out.emplace_back();
    context.key_lines[item_path] = item.line;  // for errors about the item as a whole
    if (item.kind != YamlNode::Kind::kMapping) {
      context.diagnostics.add(item_path, item.line, "expected a mapping of keys, got " + config::describe_found(item));
      continue;
    }
    config::read_fields(item, fields, item_path, context, target, other_keys);
    read_nested(item, item_path, target);
  }
}

template <typename Target>
void read_list_section(const YamlNode& root, std::string_view key, std::span<const FieldSpec<Target>> fields,
                       ReadContext& context, std::vector<Target>& out) {
  const YamlNode* list = find_section(root, section(key), context);
  if (list == nullptr) return;
  read_mappings(*list, key, fields, context, out, {}, [](const YamlNode&, std::string_view, Target&) {});
}

// A stream's zones, lines, masks and object filters.
void read_stream_regions(const YamlNode& stream, std::string_view path, ReadContext& context, StreamConfig& out) {
  const auto no_nested = [](const YamlNode&, std::string_view, auto&) {};
  for (const SectionSpec& spec : config::stream_sections()) {
    const YamlNode* list = find_section(stream, spec, context, path);
    if (list == nullptr) continue;
    const std::string list_path = config::child_path(path, spec.key);
    if (spec.key == "filters") {
      read_mappings(*list, list_path, config::filter_fields(), context, out.filters, {}, no_nested);
    } else if (spec.key == "masks") {
      read_mappings(*list, list_path, config::mask_fields(), context, out.masks, {}, no_nested);
    } else {
      const bool zones = spec.key == "zones";
      read_mappings(*list, list_path, zones ? config::zone_fields() : config::line_fields(), context,
                    zones ? out.zones : out.lines, {}, no_nested);
    }
  }
}

}  // namespace

Result<DaemonConfig> parse_config(std::string_view yaml_text, const std::filesystem::path& base_dir,
                                  std::string_view origin) {
  config::register_secrets_in_text(yaml_text);
  Result<config::YamlNode> tree = config::parse_yaml_tree(yaml_text, origin);
  if (!tree.is_ok()) return Status(tree.status().code(), scrub_secrets(tree.status().message()));
  const YamlNode root = std::move(*tree);
  if (root.kind != YamlNode::Kind::kMapping) {
    return invalid_argument(config::located_message(
        origin, "", root.line, "expected a mapping with models and streams, got " + config::describe_found(root)));
  }
  Diagnostics diagnostics{std::string(origin)};
  ReadContext context{.diagnostics = diagnostics, .base_dir = std::filesystem::absolute(base_dir)};
  DaemonConfig result;
  std::vector<std::string_view> section_keys;
  for (const SectionSpec& spec : config::sections()) section_keys.push_back(spec.key);
  config::read_fields(root, config::top_level_fields(), "", context, result, section_keys);
  read_list_section(root, "models", config::model_fields(), context, result.models);
  if (const YamlNode* streams = find_section(root, section("streams"), context)) {
    std::vector<std::string_view> region_keys;
    for (const SectionSpec& spec : config::stream_sections()) region_keys.push_back(spec.key);
    read_mappings(*streams, "streams", config::stream_fields(), context, result.streams, region_keys,
                  [&](const YamlNode& item, std::string_view path, StreamConfig& stream) {
                    read_stream_regions(item, path, context, stream);
                  });
  }
  if (const YamlNode* events = find_section(root, section("events"), context)) {
    config::read_fields(*events, config::events_fields(), "events", context, result.events);
  }
  if (const YamlNode* mqtt = find_section(root, section("mqtt"), context)) {
    result.mqtt.enabled = true;
    config::read_fields(*mqtt, config::mqtt_fields(), "mqtt", context, result.mqtt);
    // The default spool folder is relative too.
    result.mqtt.spool_dir = std::filesystem::absolute(context.base_dir / result.mqtt.spool_dir).lexically_normal();
  }
  if (const YamlNode* http = find_section(root, section("http"), context)) {
    result.http.enabled = true;
    config::read_fields(*http, config::http_fields(), "http", context, result.http);
  }
  // Cross checks read names and uris, which are only meaningful once every key parsed.
  if (!diagnostics.has_errors()) config::check_cross_references(result, context);
  if (!diagnostics.has_errors()) config::resolve_secrets(result, context);
  EF_RETURN_IF_ERROR(diagnostics.to_status());
  return result;
}

Result<DaemonConfig> load_config_file(const std::filesystem::path& file) {
  std::error_code error;
  if (!std::filesystem::exists(file, error))
    return Status(StatusCode::kNotFound, "config file not found: " + file.string());
  if (std::filesystem::is_directory(file, error))
    return io_error("config path is a folder, not a file: ", file.string());
  std::ifstream input(file, std::ios::binary);
  if (!input) return io_error("cannot open config file ", file.string());
  // Read one byte past the limit so an oversized (or endless, e.g. a pipe) input is rejected unparsed.
  std::string text(config::kMaxDocumentBytes + 1, '\0');
  input.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (input.bad()) return io_error("error reading config file ", file.string());
  text.resize(static_cast<size_t>(input.gcount()));
  if (text.size() > config::kMaxDocumentBytes) {
    return invalid_argument(file.string(), ": config file is larger than the 1 MiB limit");
  }
  const std::filesystem::path absolute = std::filesystem::absolute(file, error).lexically_normal();
  EF_ASSIGN_OR_RETURN(DaemonConfig result, parse_config(text, absolute.parent_path(), file.string()));
  result.source = absolute;
  return result;
}

}  // namespace edgefuse
