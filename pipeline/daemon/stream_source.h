// How a stream's config becomes the options of its parts: its GStreamer source (address, pacing,
// RTSP transport and credentials, decoder, test-pattern geometry), its motion gate, its object
// tracker, its masks and object filters, and its zones and counting lines. Shared by the daemon
// and the samples.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "pipeline/config/config.h"
#include "pipeline/motion/motion_gate.h"
#include "pipeline/tracking/iou_tracker.h"
#include "pipeline/video/video_source.h"
#include "pipeline/zones/object_filter.h"
#include "pipeline/zones/stream_clock.h"
#include "pipeline/zones/zone_monitor.h"

namespace edgefuse {

Result<VideoSourceOptions> stream_source_options(const StreamConfig& config);

// track-iou, track-max-age, track-min-hits (whether to track at all is config.track).
IouTrackerOptions stream_tracker_options(const StreamConfig& config);

// motion-area-percent, motion-block-delta, motion-refresh-s (whether to gate is config.motion_gate).
MotionGateOptions stream_motion_options(const StreamConfig& config);

// Class names to the model's class ids (ModelRunner::class_ids); an unknown name is an error.
using ClassIdLookup = std::function<Result<std::vector<int>>(const std::vector<std::string>&)>;

// zones and lines, their class names looked up; a name the model does not know is an error naming
// the zone or line.
Result<ZoneMonitor> stream_zone_monitor(const StreamConfig& config, const ClassIdLookup& class_ids);

// masks and filters, their class names looked up; a name the model does not know is an error naming
// the mask or the filter.
Result<ObjectFilter> stream_object_filter(const StreamConfig& config, const ClassIdLookup& class_ids);

// The frame's stream time (for zones and track records), from its timestamp and capture time.
double stream_seconds(StreamClock& clock, const DecodedFrame& frame);

}  // namespace edgefuse
