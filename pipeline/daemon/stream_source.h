// How a stream's config becomes the options of its parts: its GStreamer source (address, pacing,
// RTSP transport and credentials, decoder, test-pattern geometry) and its object tracker. Shared by
// the daemon and the samples.
#pragma once

#include "pipeline/config/config.h"
#include "pipeline/tracking/iou_tracker.h"
#include "pipeline/video/video_source.h"

namespace edgefuse {

Result<VideoSourceOptions> stream_source_options(const StreamConfig& config);

// track-iou, track-max-age, track-min-hits (whether to track at all is config.track).
IouTrackerOptions stream_tracker_options(const StreamConfig& config);

}  // namespace edgefuse
