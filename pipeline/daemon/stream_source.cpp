#include "pipeline/daemon/stream_source.h"

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

}  // namespace edgefuse
