#include "pipeline/daemon/stream_source.h"

#include <chrono>

namespace edgefuse {

Result<VideoSourceOptions> stream_source_options(const StreamConfig& config) {
  EF_ASSIGN_OR_RETURN(SourceAddress address, parse_source_uri(config.uri));
  VideoSourceOptions options;
  options.name = config.name;
  options.address = std::move(address);
  options.loop = config.loop;
  options.pipeline.realtime = config.realtime;
  options.pipeline.rtsp_over_tcp = config.rtsp_transport != "udp";
  options.pipeline.decoder = config.decoder;
  options.pipeline.rtsp_credentials = {config.username, config.password};
  if (config.width > 0) options.pipeline.test_width = config.width;
  if (config.height > 0) options.pipeline.test_height = config.height;
  options.pipeline.test_framerate = config.framerate;
  return options;
}

IouTrackerOptions stream_tracker_options(const StreamConfig& config) {
  return IouTrackerOptions{.min_iou = static_cast<float>(config.track_iou),
                           .max_age = config.track_max_age,
                           .min_hits = config.track_min_hits};
}

MotionGateOptions stream_motion_options(const StreamConfig& config) {
  return MotionGateOptions{.min_area_percent = config.motion_area_percent,
                           .block_delta = config.motion_block_delta,
                           .refresh_s = config.motion_refresh_s};
}

Result<ZoneMonitor> stream_zone_monitor(const StreamConfig& config, const ClassIdLookup& class_ids) {
  std::vector<Zone> zones;
  std::vector<CountingLine> lines;
  for (const bool is_zone : {true, false}) {
    for (const RegionConfig& region : is_zone ? config.zones : config.lines) {
      Result<std::vector<int>> classes = class_ids(region.classes);
      if (!classes.is_ok()) {
        return classes.status().with_context(make_message(is_zone ? "zone '" : "line '", region.name, "'"));
      }
      if (is_zone) {
        zones.push_back({region.name, region.points, std::move(*classes), region.loiter_s});
      } else {
        lines.push_back({region.name, region.points.at(0), region.points.at(1), std::move(*classes)});
      }
    }
  }
  return ZoneMonitor(std::move(zones), std::move(lines), config.track_max_age);
}

Result<ObjectFilter> stream_object_filter(const StreamConfig& config, const ClassIdLookup& class_ids) {
  std::vector<ObjectFilterRule> rules;
  for (size_t i = 0; i < config.filters.size(); ++i) {
    const ObjectFilterConfig& filter = config.filters[i];
    Result<std::vector<int>> classes = class_ids(filter.classes);
    if (!classes.is_ok()) return classes.status().with_context(make_message("filters[", i, "]"));
    rules.push_back({.class_ids = std::move(*classes),
                     .min_score = static_cast<float>(filter.min_score),
                     .min_area = filter.min_area,
                     .max_area = filter.max_area,
                     .min_ratio = filter.min_ratio,
                     .max_ratio = filter.max_ratio});
  }
  std::vector<ObjectMask> masks;
  for (const RegionConfig& mask : config.masks) {
    Result<std::vector<int>> classes = class_ids(mask.classes);
    if (!classes.is_ok()) return classes.status().with_context(make_message("mask '", mask.name, "'"));
    masks.push_back({mask.name, mask.points, std::move(*classes)});
  }
  return ObjectFilter(std::move(rules), std::move(masks));
}

double stream_seconds(StreamClock& clock, const DecodedFrame& frame) {
  const auto captured = std::chrono::duration_cast<std::chrono::nanoseconds>(frame.captured_at.time_since_epoch());
  return clock.seconds(frame.pts_ns, captured.count());
}

}  // namespace edgefuse
