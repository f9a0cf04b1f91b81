#include "pipeline/config/cross_checks.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>
#include <vector>

#include "pipeline/config/key_suggestion.h"
#include "pipeline/config/stream_uri.h"

namespace edgefuse::config {
namespace {

int line_of(const ReadContext& context, const std::string& path) {
  const auto found = context.key_lines.find(path);
  return found == context.key_lines.end() ? 0 : found->second;
}

std::string item_path(std::string_view list, size_t index, std::string_view key) {
  return make_message(list, '[', index, "].", key);
}

// Each name once; the error names both occurrences.
template <typename Item>
void check_unique_names(const std::vector<Item>& items, std::string_view list, std::string_view what,
                        ReadContext& context) {
  std::map<std::string_view, size_t> first_index;
  for (size_t i = 0; i < items.size(); ++i) {
    const auto [first, inserted] = first_index.emplace(items[i].name, i);
    if (inserted) continue;
    const std::string first_path = item_path(list, first->second, "name");
    context.diagnostics.add(item_path(list, i, "name"), line_of(context, item_path(list, i, "name")),
                            make_message("duplicate ", what, " name \"", items[i].name, "\"; first defined at ",
                                         first_path, " (line ", line_of(context, first_path), ")"));
  }
}

// Limits: a zone is one bit of Detection::zone_mask; an outline enclosing under a millionth of
// the frame is a typo (points on one line), not a zone.
constexpr size_t kMaxRegionsPerKind = 32;
constexpr double kMinZoneArea = 1e-6;

bool scheme_listed(std::string_view schemes, std::string_view scheme) {
  while (true) {
    const size_t bar = schemes.find('|');
    if (schemes.substr(0, bar) == scheme) return true;
    if (bar == std::string_view::npos) return false;
    schemes.remove_prefix(bar + 1);
  }
}

void check_stream(const StreamConfig& stream, size_t index, std::span<const std::string_view> model_names,
                  ReadContext& context) {
  if (std::find(model_names.begin(), model_names.end(), stream.model) == model_names.end()) {
    std::string known;
    for (std::string_view name : model_names) known += make_message(known.empty() ? "" : ", ", name);
    const std::string path = item_path("streams", index, "model");
    context.diagnostics.add(path, line_of(context, path),
                            make_message("unknown model \"", stream.model, "\"; models defined: ", known),
                            suggest(stream.model, model_names));
  }
  const std::string_view scheme = uri_scheme(stream.uri);
  for (const FieldSpec<StreamConfig>& field : stream_fields()) {
    const std::string path = item_path("streams", index, field.rule.key);
    const int line = line_of(context, path);
    if (field.rule.only_for_scheme.empty() || line == 0 || scheme_listed(field.rule.only_for_scheme, scheme)) continue;
    context.diagnostics.add(path, line,
                            make_message("applies only to ", describe_schemes(field.rule.only_for_scheme),
                                         " streams; this stream's uri is ", scheme, "://"));
  }
}

// Counts, names unique across zones, lines and masks, shapes with extent; lines and snapshots only
// with tracking.
void check_regions(const StreamConfig& stream, size_t index, ReadContext& context) {
  enum class Kind { kZone, kLine, kMask };
  const std::string stream_path = make_message("streams[", index, ']');
  std::map<std::string_view, std::string> first_path;
  for (const Kind kind : {Kind::kZone, Kind::kLine, Kind::kMask}) {
    const bool zones = kind == Kind::kZone, lines = kind == Kind::kLine;
    const std::vector<RegionConfig>& regions = zones ? stream.zones : lines ? stream.lines : stream.masks;
    const std::string_view plural = zones ? "zones" : lines ? "lines" : "masks";
    const std::string list = make_message(stream_path, '.', plural);
    if (regions.size() > kMaxRegionsPerKind) {
      context.diagnostics.add(
          list, line_of(context, list + "[0].name"),
          make_message(regions.size(), ' ', plural, "; at most ", kMaxRegionsPerKind, " per stream"));
    }
    if (zones && !stream.snapshots.empty() && !stream.track) {
      const std::string path = stream_path + ".snapshots";
      context.diagnostics.add(path, line_of(context, path),
                              "snapshots are taken when tracked objects appear, enter zones or cross lines: they "
                              "need track: true");
    }
    if (lines && !regions.empty() && !stream.track) {
      context.diagnostics.add(list, line_of(context, list + "[0].name"),
                              "counting lines follow tracked objects: they need track: true");
    }
    for (size_t i = 0; i < regions.size(); ++i) {
      const RegionConfig& region = regions[i];
      const std::string name_path = item_path(list, i, "name"), points_path = item_path(list, i, "points");
      const auto [first, inserted] = first_path.emplace(region.name, name_path);
      if (!inserted) {
        context.diagnostics.add(
            name_path, line_of(context, name_path),
            make_message("duplicate zone, line or mask name \"", region.name, "\"; first defined at ", first->second,
                         " (line ", line_of(context, first->second), ")"));
      }
      if (!lines && region.points.size() >= 3 && std::abs(polygon_twice_area(region.points)) / 2 < kMinZoneArea) {
        context.diagnostics.add(
            points_path, line_of(context, points_path),
            make_message("the ", zones ? "zone" : "mask", "'s points enclose no area (they lie on one line)"));
      }
      if (zones && region.loiter_s > 0 && !stream.track) {
        const std::string path = item_path(list, i, "loiter-s");
        context.diagnostics.add(path, line_of(context, path),
                                "loitering is measured on tracked objects: it needs track: true");
      }
      if (lines && region.points.size() == 2 && region.points[0] == region.points[1]) {
        context.diagnostics.add(points_path, line_of(context, points_path), "the line's two points are the same");
      }
    }
  }
}

// Bounds that can be met, and each filter bounding something.
void check_filters(const StreamConfig& stream, size_t index, ReadContext& context) {
  const std::string list = make_message("streams[", index, "].filters");
  if (stream.filters.size() > kMaxRegionsPerKind) {
    context.diagnostics.add(
        list, line_of(context, list + "[0]"),
        make_message(stream.filters.size(), " filters; at most ", kMaxRegionsPerKind, " per stream"));
  }
  for (size_t i = 0; i < stream.filters.size(); ++i) {
    const ObjectFilterConfig& filter = stream.filters[i];
    const std::string item = make_message(list, '[', i, ']');
    // Where to point: the first of `keys` the filter sets, else the filter itself.
    const auto at = [&](std::initializer_list<std::string_view> keys) {
      for (const std::string_view key : keys) {
        const std::string path = item_path(list, i, key);
        if (const int line = line_of(context, path); line != 0) return std::pair{path, line};
      }
      return std::pair{item, line_of(context, item)};
    };
    if (filter.min_area >= filter.max_area) {
      const auto [path, line] = at({"max-area", "min-area"});
      context.diagnostics.add(path, line,
                              make_message("max-area ", filter.max_area, " is not above min-area ", filter.min_area,
                                           ": no box would pass"));
    }
    if (filter.max_ratio > 0 && filter.min_ratio >= filter.max_ratio) {
      const auto [path, line] = at({"max-ratio", "min-ratio"});
      context.diagnostics.add(path, line,
                              make_message("max-ratio ", filter.max_ratio, " is not above min-ratio ", filter.min_ratio,
                                           ": no box would pass"));
    }
    if (filter.min_score == 0 && filter.min_area == 0 && filter.max_area == 1 && filter.min_ratio == 0 &&
        filter.max_ratio == 0) {
      context.diagnostics.add(item, line_of(context, item),
                              "the filter bounds nothing: set min-score, min-area, max-area, min-ratio or max-ratio");
    }
  }
}

}  // namespace

void check_cross_references(const DaemonConfig& config, ReadContext& context) {
  check_unique_names(config.models, "models", "model", context);
  for (size_t i = 0; i < config.models.size(); ++i) {
    const ModelConfig& model = config.models[i];
    if ((model.input_width > 0) != (model.input_height > 0)) {
      const std::string path = item_path("models", i, model.input_width > 0 ? "input-width" : "input-height");
      context.diagnostics.add(path, line_of(context, path), "give input-width and input-height together");
    }
  }
  check_unique_names(config.streams, "streams", "stream", context);
  std::vector<std::string_view> model_names;
  for (const ModelConfig& model : config.models) {
    if (std::find(model_names.begin(), model_names.end(), model.name) == model_names.end()) {
      model_names.push_back(model.name);
    }
  }
  for (size_t i = 0; i < config.streams.size(); ++i) {
    check_stream(config.streams[i], i, model_names, context);
    check_regions(config.streams[i], i, context);
    check_filters(config.streams[i], i, context);
  }
}

}  // namespace edgefuse::config
