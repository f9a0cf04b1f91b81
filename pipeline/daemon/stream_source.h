// How a stream's config becomes the options of its GStreamer source: address, pacing, RTSP
// transport and credentials, decoder, test-pattern geometry. Shared by the daemon and the samples.
#pragma once

#include "pipeline/config/config.h"
#include "pipeline/video/video_source.h"

namespace edgefuse {

Result<VideoSourceOptions> stream_source_options(const StreamConfig& config);

}  // namespace edgefuse
