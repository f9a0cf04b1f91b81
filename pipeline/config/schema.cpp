#include "pipeline/config/schema.h"

#include <array>

namespace edgefuse::config {
namespace {

using enum ValueType;

const std::array kSections = {
    SectionSpec{.key = "models",
                .is_list = true,
                .required = true,
                .description = "The detection models, loaded once each and shared by the streams that name them."},
    SectionSpec{.key = "streams",
                .is_list = true,
                .required = true,
                .description = "The video sources to analyse, each with the model that runs on it."},
    SectionSpec{.key = "events", .description = "Where detection events go (one JSON object per line)."},
};

const std::array kTopLevelFields = {
    FieldSpec<DaemonConfig>{{.key = "stats-interval-s",
                             .type = kFloat,
                             .range = {0, 3600},
                             .description = "Seconds between per-stream statistics log lines; 0 turns them off."},
                            &DaemonConfig::stats_interval_s},
};

const std::array kModelFields = {
    FieldSpec<ModelConfig>{{.key = "name",
                            .type = kName,
                            .required = true,
                            .description = "Unique name that streams use to refer to this model."},
                           &ModelConfig::name},
    FieldSpec<ModelConfig>{{.key = "path",
                            .type = kInputFile,
                            .required = true,
                            .description = "The ONNX file; a relative path is relative to the config file's folder."},
                           &ModelConfig::path},
    FieldSpec<ModelConfig>{{.key = "family",
                            .type = kChoice,
                            .choices = "auto|yolox|blazeface",
                            .description = "Output decoding; auto recognises the family from the model's outputs."},
                           &ModelConfig::family},
    FieldSpec<ModelConfig>{{.key = "labels",
                            .type = kInputFile,
                            .description = "Class names, one per line, in output order; absent: the family's "
                                           "built-in names. Relative to the config file's folder."},
                           &ModelConfig::labels},
    FieldSpec<ModelConfig>{{.key = "device",
                            .type = kChoice,
                            .choices = "cpu|cuda|auto",
                            .description = "Where inference runs; auto picks cuda when a GPU is present."},
                           &ModelConfig::device},
    FieldSpec<ModelConfig>{{.key = "threads",
                            .type = kInt,
                            .range = {0, 256},
                            .description = "CPU threads for inference; 0 = one per core."},
                           &ModelConfig::threads},
    FieldSpec<ModelConfig>{{.key = "score-threshold",
                            .type = kFloat,
                            .range = {0, 1},
                            .description = "Detections scoring below this are dropped."},
                           &ModelConfig::score_threshold},
    FieldSpec<ModelConfig>{{.key = "iou-threshold",
                            .type = kFloat,
                            .range = {0, 1},
                            .description = "Non-maximum suppression overlap above which the weaker box is dropped."},
                           &ModelConfig::iou_threshold},
    FieldSpec<ModelConfig>{{.key = "max-detections",
                            .type = kInt,
                            .range = {1, 10000},
                            .description = "At most this many detections per frame, highest scores first."},
                           &ModelConfig::max_detections},
    FieldSpec<ModelConfig>{{.key = "max-batch",
                            .type = kInt,
                            .range = {1, 64},
                            .description = "Frames from different streams run together in one batch, up to this many."},
                           &ModelConfig::max_batch},
    FieldSpec<ModelConfig>{{.key = "batch-timeout-ms",
                            .type = kInt,
                            .range = {0, 1000},
                            .description = "How long a partial batch waits for more frames before it runs."},
                           &ModelConfig::batch_timeout_ms},
    FieldSpec<ModelConfig>{{.key = "fuse",
                            .type = kBool,
                            .description = "Run the graph fuser; false runs the unfused graph (a baseline)."},
                           &ModelConfig::fuse},
};

const std::array kStreamFields = {
    FieldSpec<StreamConfig>{{.key = "name",
                             .type = kName,
                             .required = true,
                             .description = "Unique name; it labels this stream's events and statistics."},
                            &StreamConfig::name},
    FieldSpec<StreamConfig>{{.key = "uri",
                             .type = kStreamUri,
                             .required = true,
                             .description = "The source: a video file path (relative to the config file's folder), "
                                            "file:///abs/path, rtsp://host[:port]/path, rtsps://..., "
                                            "v4l2:///dev/videoN, or test://[pattern] (a synthetic test pattern)."},
                            &StreamConfig::uri},
    FieldSpec<StreamConfig>{{.key = "model",
                             .type = kName,
                             .required = true,
                             .description = "The name of the model (under models) that runs on this stream."},
                            &StreamConfig::model},
    FieldSpec<StreamConfig>{{.key = "classes",
                             .type = kStringList,
                             .description = "Only report these class names; empty or absent: all classes."},
                            &StreamConfig::classes},
    FieldSpec<StreamConfig>{{.key = "inference-interval",
                             .type = kInt,
                             .range = {1, 1000},
                             .description = "Run the model on every Nth decoded frame."},
                            &StreamConfig::inference_interval},
    FieldSpec<StreamConfig>{{.key = "loop",
                             .type = kBool,
                             .only_for_scheme = "file",
                             .description = "Restart the file from the beginning when it ends."},
                            &StreamConfig::loop},
    FieldSpec<StreamConfig>{{.key = "realtime",
                             .type = kBool,
                             .only_for_scheme = "file|test",
                             .description = "Deliver frames at the stream's own rate, as a camera would (late frames "
                                            "are dropped); false: as fast as decoding allows, e.g. to analyse a "
                                            "recording."},
                            &StreamConfig::realtime},
    FieldSpec<StreamConfig>{{.key = "queue-size",
                             .type = kInt,
                             .range = {1, 64},
                             .description = "Frames waiting for inference; when full the oldest is dropped."},
                            &StreamConfig::queue_size},
    FieldSpec<StreamConfig>{{.key = "rtsp-transport",
                             .type = kChoice,
                             .choices = "tcp|udp",
                             .only_for_scheme = "rtsp|rtsps",
                             .description = "Transport for RTSP media; tcp passes firewalls and loses no packets."},
                            &StreamConfig::rtsp_transport},
    FieldSpec<StreamConfig>{{.key = "decoder",
                             .type = kName,
                             .description = "auto: the highest-ranked decoder installed; otherwise a GStreamer "
                                            "decoder element name (e.g. avdec_h264, nvv4l2decoder)."},
                            &StreamConfig::decoder},
    FieldSpec<StreamConfig>{{.key = "width",
                             .type = kInt,
                             .range = {16, 7680, true},
                             .only_for_scheme = "test",
                             .description = "Test pattern frame width; 0 = 1920."},
                            &StreamConfig::width},
    FieldSpec<StreamConfig>{{.key = "height",
                             .type = kInt,
                             .range = {16, 7680, true},
                             .only_for_scheme = "test",
                             .description = "Test pattern frame height; 0 = 1080."},
                            &StreamConfig::height},
    FieldSpec<StreamConfig>{{.key = "framerate",
                             .type = kInt,
                             .range = {1, 240},
                             .only_for_scheme = "test",
                             .description = "Test pattern frames per second."},
                            &StreamConfig::framerate},
};

const std::array kEventsFields = {
    FieldSpec<EventsConfig>{{.key = "path",
                             .type = kOutputFile,
                             .description = "JSON-lines file events are appended to; \"-\" = standard output. "
                                            "Relative to the config file's folder."},
                            &EventsConfig::path},
    FieldSpec<EventsConfig>{{.key = "empty-frames",
                             .type = kBool,
                             .description = "Also emit an event for processed frames with no detections."},
                            &EventsConfig::empty_frames},
};

std::string format_number(double value) {
  return make_message(value);
}

std::string join_choices(std::string_view choices, std::string_view separator) {
  std::string text;
  size_t start = 0;
  while (true) {
    const size_t bar = choices.find('|', start);
    text += choices.substr(start, bar - start);
    if (bar == std::string_view::npos) return text;
    text += separator;
    start = bar + 1;
  }
}

}  // namespace

std::span<const SectionSpec> sections() {
  return kSections;
}
std::span<const FieldSpec<DaemonConfig>> top_level_fields() {
  return kTopLevelFields;
}
std::span<const FieldSpec<ModelConfig>> model_fields() {
  return kModelFields;
}
std::span<const FieldSpec<StreamConfig>> stream_fields() {
  return kStreamFields;
}
std::span<const FieldSpec<EventsConfig>> events_fields() {
  return kEventsFields;
}

std::string describe_expectation(const KeyRule& rule) {
  const std::string range = make_message(format_number(rule.range.min), "..", format_number(rule.range.max),
                                         rule.range.zero_means_default ? " or 0" : "");
  switch (rule.type) {
    case kString:
      return "string";
    case kName:
      return "name of letters, digits, '_', '.', '-'";
    case kChoice:
      return "one of " + join_choices(rule.choices, ", ");
    case kInputFile:
      return "path of an existing file";
    case kOutputFile:
      return "\"-\" (stdout) or a file path";
    case kStreamUri:
      return "file path, file://, rtsp://, rtsps://, v4l2:// or test:// uri";
    case kInt:
      return "integer in " + range;
    case kFloat:
      return "number in " + range;
    case kBool:
      return "true or false";
    case kStringList:
      return "list of strings";
  }
  return "value";
}

}  // namespace edgefuse::config
