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
    SectionSpec{.key = "mqtt",
                .description = "Publish events to an MQTT broker too (QoS 1, persistent session); each event is "
                               "spooled on disk until the broker acknowledges it. Absent: no MQTT."},
    SectionSpec{.key = "http",
                .description =
                    "Serve /healthz, /readyz, /metrics (Prometheus) and /streams (JSON) over HTTP, read-only. Absent: "
                    "no HTTP server."},
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
                            .choices = "auto|yolox|yolov5|yolov8|blazeface",
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
    FieldSpec<ModelConfig>{{.key = "precision",
                            .type = kChoice,
                            .choices = "fp32|fp16",
                            .description = "On the GPU, fp16 stores activations as 16-bit floats (about half "
                                           "the memory traffic; the first frame picks the few layers whose "
                                           "inputs stay fp32). Dense Convs on fp16 inputs may multiply on "
                                           "tensor cores, summing in fp32, weights kept to about 22 bits; "
                                           "the rest of the math is fp32. The CPU runs fp32."},
                           &ModelConfig::precision},
    FieldSpec<ModelConfig>{
        {.key = "threads",
         .type = kInt,
         .range = {0, 256},
         .description = "CPU threads for inference; 0 = one per core. Where idle threads wake slowly "
                        "(VMs), fewer can be faster for frames paced by a camera: compare with "
                        "`edgefuse bench --interval 33`."},
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
    FieldSpec<ModelConfig>{
        {.key = "max-batch",
         .type = kInt,
         .range = {1, 64},
         .description = "Frames from different streams run together in one batch, up to this many. On the "
                        "CPU with several threads, a batch of at least one frame per thread runs "
                        "whole frames per thread: more frames per second than one at a time."},
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
    FieldSpec<ModelConfig>{{.key = "input-width",
                            .type = kInt,
                            .range = {0, 8192},
                            .description = "Image width for a model exported with dynamic axes (its input's "
                                           "height and width symbolic); with input-height. 0: the model's own."},
                           &ModelConfig::input_width},
    FieldSpec<ModelConfig>{{.key = "input-height",
                            .type = kInt,
                            .range = {0, 8192},
                            .description = "Image height for such a model; with input-width. 0: the model's own."},
                           &ModelConfig::input_height},
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
    FieldSpec<StreamConfig>{{.key = "motion-gate",
                             .type = kBool,
                             .description = "Skip inference on due frames where nothing moved since the model last "
                                            "looked (the frame's 8x8-pixel block means compared with that frame's): "
                                            "a quiet scene costs almost no CPU. Skipped frames count as skipped "
                                            "and as still (edgefuse_stream_still_frames_total)."},
                            &StreamConfig::motion_gate},
    FieldSpec<StreamConfig>{{.key = "motion-area-percent",
                             .type = kFloat,
                             .range = {0.001, 100},
                             .description = "Percent of the picture's blocks that must change for a frame to "
                                            "count as moving; 0.1 is about a 60 x 60 px patch at 1080p."},
                            &StreamConfig::motion_area_percent},
    FieldSpec<StreamConfig>{{.key = "motion-block-delta",
                             .type = kInt,
                             .range = {1, 255},
                             .description = "Luma levels by which an 8x8 block's mean must change to count as "
                                            "changed; higher ignores more noise and flicker."},
                            &StreamConfig::motion_block_delta},
    FieldSpec<StreamConfig>{{.key = "motion-refresh-s",
                             .type = kFloat,
                             .range = {0, 3600},
                             .description = "With motion-gate, run the model at least this often anyway, so "
                                            "objects standing still are still reported; 0: only on motion."},
                            &StreamConfig::motion_refresh_s},
    FieldSpec<StreamConfig>{{.key = "track",
                             .type = kBool,
                             .description = "Give each detection a track_id that stays the same while the object "
                                            "moves from frame to frame (matched by box overlap with the track's "
                                            "predicted position, per class)."},
                            &StreamConfig::track},
    FieldSpec<StreamConfig>{{.key = "track-iou",
                             .type = kFloat,
                             .range = {0.05, 0.95},
                             .description = "Least overlap (IoU) of a detection with a track's predicted box that "
                                            "continues the track; lower follows faster motion, higher keeps "
                                            "crowded objects apart."},
                            &StreamConfig::track_iou},
    FieldSpec<StreamConfig>{{.key = "track-max-age",
                             .type = kInt,
                             .range = {1, 300},
                             .description = "Processed frames a track survives without a matching detection (an "
                                            "occlusion, a missed detection); after that the object gets a new id."},
                            &StreamConfig::track_max_age},
    FieldSpec<StreamConfig>{{.key = "track-min-hits",
                             .type = kInt,
                             .range = {1, 30},
                             .description = "Frames a track must be matched on before its detections carry its "
                                            "id, so that a one-frame false detection never takes one."},
                            &StreamConfig::track_min_hits},
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
    FieldSpec<StreamConfig>{{.key = "reconnect",
                             .type = kBool,
                             .only_for_scheme = "rtsp|rtsps|v4l2",
                             .description = "Rebuild the source after an error, a stall or an end of stream, waiting "
                                            "1, 2, 5, 10, 30 s between attempts (with jitter). false: the stream "
                                            "stays down. (Files never reconnect: a file's error or end is final.)"},
                            &StreamConfig::reconnect},
    FieldSpec<StreamConfig>{{.key = "watchdog-s",
                             .type = kFloat,
                             .range = {0, 3600},
                             .description = "No decoded frame for this many seconds: the stream is stalled and "
                                            "rebuilt; 0 turns the watchdog off."},
                            &StreamConfig::watchdog_s},
    FieldSpec<StreamConfig>{{.key = "max-backoff-s",
                             .type = kFloat,
                             .range = {0.1, 3600},
                             .description = "The longest wait between reconnect attempts."},
                            &StreamConfig::max_backoff_s},
    FieldSpec<StreamConfig>{{.key = "username",
                             .type = kString,
                             .only_for_scheme = "rtsp|rtsps",
                             .description = "Camera user name (or put it in the uri as rtsp://user@host/...)."},
                            &StreamConfig::username},
    FieldSpec<StreamConfig>{{.key = "password",
                             .type = kString,
                             .only_for_scheme = "rtsp|rtsps",
                             .description = "Camera password. Prefer password-file or password-env, which keep it "
                                            "out of the config file. Never logged or shown.",
                             .secret = true},
                            &StreamConfig::password},
    FieldSpec<StreamConfig>{{.key = "password-file",
                             .type = kInputFile,
                             .only_for_scheme = "rtsp|rtsps",
                             .description = "A file holding the camera password (one line; a trailing newline is "
                                            "ignored), e.g. a systemd credential."},
                            &StreamConfig::password_file},
    FieldSpec<StreamConfig>{{.key = "password-env",
                             .type = kName,
                             .only_for_scheme = "rtsp|rtsps",
                             .description = "The environment variable holding the camera password."},
                            &StreamConfig::password_env},
    FieldSpec<StreamConfig>{{.key = "overlay-file",
                             .type = kOutputPath,
                             .description = "Also write this stream with its detections drawn on it to an H.264 "
                                            "MP4 file (relative to the config file's folder); after a change "
                                            "of resolution it goes on in NAME.1.mp4, NAME.2.mp4..."},
                            &StreamConfig::overlay_file},
    FieldSpec<StreamConfig>{{.key = "overlay-port",
                             .type = kInt,
                             .range = {1, 65535, true},
                             .description = "Serve a live view of this stream with its detections drawn (MJPEG, "
                                            "any browser) on this port at the http address; 0 = none."},
                            &StreamConfig::overlay_port},
    FieldSpec<StreamConfig>{{.key = "snapshots",
                             .type = kOutputPath,
                             .description = "Save a JPEG of the whole frame, detections, zones and lines drawn, "
                                            "whenever a tracked object appears, enters a zone, loiters or "
                                            "crosses a line, into <this folder>/<stream name>/ (relative to the "
                                            "config file's folder); the frame's event names the file. Needs "
                                            "track: true."},
                            &StreamConfig::snapshots},
    FieldSpec<StreamConfig>{{.key = "snapshots-max-mb",
                             .type = kInt,
                             .range = {1, 1 << 20},
                             .description = "Keep the stream's snapshots under this many MB (10^6 bytes), deleting "
                                            "the oldest."},
                            &StreamConfig::snapshots_max_mb},
};

const std::array kStreamSections = {
    SectionSpec{.key = "zones",
                .is_list = true,
                .description = "Areas of the image: each detection lists the zones it stands in (the bottom "
                               "centre of its box), events count the objects in each zone, and tracked "
                               "objects entering, leaving (with their stay's length) and loitering in a zone are "
                               "reported. At most 32."},
    SectionSpec{.key = "lines",
                .is_list = true,
                .description = "Counting lines: a tracked object whose box's bottom centre crosses the segment "
                               "is reported with its direction. Needs track: true. At most 32."},
    SectionSpec{.key = "masks",
                .is_list = true,
                .description = "Areas where objects are not reported (a tree that sways, a screen, the street "
                               "beyond a fence): a detection standing in a mask (the bottom centre of its box) "
                               "is dropped before tracking, zones and events. At most 32."},
    SectionSpec{.key = "filters",
                .is_list = true,
                .description = "Object filters: detections of a filter's classes scoring or sized outside its "
                               "bounds are dropped before tracking, zones and events (a \"person\" as large "
                               "as the frame, a \"car\" taller than wide). A detection must pass every "
                               "filter of its class. At most 32."},
};

constexpr std::string_view kRegionNameDescription =
    "Unique among the stream's zones, lines and masks; names it in events and metrics.";
constexpr std::string_view kRegionClassesDescription =
    "Only objects of these class names count here; empty or absent: every class the stream reports.";

const std::array kZoneFields = {
    FieldSpec<RegionConfig>{{.key = "name", .type = kName, .required = true, .description = kRegionNameDescription},
                            &RegionConfig::name},
    FieldSpec<RegionConfig>{{.key = "points",
                             .type = kPointList,
                             .required = true,
                             .range = {3, 64},
                             .description = "The zone's outline, corner by corner, in fractions of the frame "
                                            "([0, 0] top left, [1, 1] bottom right), so it holds at any "
                                            "resolution. A concave or self-crossing outline is fine (even-odd "
                                            "rule); one with no area is not."},
                            &RegionConfig::points},
    FieldSpec<RegionConfig>{{.key = "classes", .type = kStringList, .description = kRegionClassesDescription},
                            &RegionConfig::classes},
    FieldSpec<RegionConfig>{{.key = "loiter-s",
                             .type = kFloat,
                             .range = {0, 86400},
                             .description = "Report a tracked object that has stayed in the zone this many "
                                            "seconds of stream time (a loiter zone event, once per stay); 0: "
                                            "never. Needs track: true."},
                            &RegionConfig::loiter_s},
};

const std::array kLineFields = {
    FieldSpec<RegionConfig>{{.key = "name", .type = kName, .required = true, .description = kRegionNameDescription},
                            &RegionConfig::name},
    FieldSpec<RegionConfig>{{.key = "points",
                             .type = kPointList,
                             .required = true,
                             .range = {2, 2},
                             .description = "The segment's two ends in fractions of the frame. A crossing is "
                                            "forward when the object goes from the line's left to its right "
                                            "as seen walking from the first point to the second: drawn left "
                                            "to right, moving down the image is forward; drawn top to bottom, "
                                            "moving left is."},
                            &RegionConfig::points},
    FieldSpec<RegionConfig>{{.key = "classes", .type = kStringList, .description = kRegionClassesDescription},
                            &RegionConfig::classes},
};

const std::array kMaskFields = {
    FieldSpec<RegionConfig>{
        {.key = "name",
         .type = kName,
         .required = true,
         .description = "Unique among the stream's zones, lines and masks; labels it on the overlay."},
        &RegionConfig::name},
    FieldSpec<RegionConfig>{{.key = "points",
                             .type = kPointList,
                             .required = true,
                             .range = {3, 64},
                             .description = "The mask's outline in fractions of the frame, as a zone's."},
                            &RegionConfig::points},
    FieldSpec<RegionConfig>{{.key = "classes",
                             .type = kStringList,
                             .description = "Only objects of these class names are dropped here; empty or absent: "
                                            "every class."},
                            &RegionConfig::classes},
};

const std::array kFilterFields = {
    FieldSpec<ObjectFilterConfig>{{.key = "classes",
                                   .type = kStringList,
                                   .description = "The class names this filter applies to; empty or absent: every "
                                                  "class the stream reports."},
                                  &ObjectFilterConfig::classes},
    FieldSpec<ObjectFilterConfig>{{.key = "min-score",
                                   .type = kFloat,
                                   .range = {0, 1},
                                   .description = "Drop detections scoring below this (it matters above the "
                                                  "model's score-threshold)."},
                                  &ObjectFilterConfig::min_score},
    FieldSpec<ObjectFilterConfig>{{.key = "min-area",
                                   .type = kFloat,
                                   .range = {0, 1},
                                   .description = "Drop boxes smaller than this fraction of the frame's area."},
                                  &ObjectFilterConfig::min_area},
    FieldSpec<ObjectFilterConfig>{{.key = "max-area",
                                   .type = kFloat,
                                   .range = {0, 1},
                                   .description = "Drop boxes larger than this fraction of the frame's area."},
                                  &ObjectFilterConfig::max_area},
    FieldSpec<ObjectFilterConfig>{{.key = "min-ratio",
                                   .type = kFloat,
                                   .range = {0, 100},
                                   .description = "Drop boxes narrower than this: width over height, in pixels "
                                                  "(a standing person about 0.4, a car from the side about 2)."},
                                  &ObjectFilterConfig::min_ratio},
    FieldSpec<ObjectFilterConfig>{{.key = "max-ratio",
                                   .type = kFloat,
                                   .range = {0, 100},
                                   .description = "Drop boxes wider than this, width over height; 0: no limit."},
                                  &ObjectFilterConfig::max_ratio},
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
    FieldSpec<EventsConfig>{{.key = "tracks",
                             .type = kBool,
                             .description = "Also emit one \"track\" event per tracked object when it leaves the "
                                            "view (its track ends) or its stream stops: when it came and went, "
                                            "its best view, the zones it stood in, its first snapshot."},
                            &EventsConfig::tracks},
};

const std::array kMqttFields = {
    FieldSpec<MqttConfig>{{.key = "host", .type = kString, .description = "Broker host name or address."},
                          &MqttConfig::host},
    FieldSpec<MqttConfig>{{.key = "port", .type = kInt, .range = {1, 65535}, .description = "Broker port."},
                          &MqttConfig::port},
    FieldSpec<MqttConfig>{{.key = "client-id",
                           .type = kName,
                           .description = "MQTT client id; fixed so the broker keeps the session (and its "
                                          "unacknowledged messages) across restarts. Unique per daemon."},
                          &MqttConfig::client_id},
    FieldSpec<MqttConfig>{{.key = "topic-prefix",
                           .type = kString,
                           .description = "Events go to <prefix>/<stream>/events (detections, stream state "
                                          "changes and track events, told apart by their type)."},
                          &MqttConfig::topic_prefix},
    FieldSpec<MqttConfig>{{.key = "username", .type = kString, .description = "Broker user name."},
                          &MqttConfig::username},
    FieldSpec<MqttConfig>{{.key = "password",
                           .type = kString,
                           .description = "Broker password; prefer password-file or password-env.",
                           .secret = true},
                          &MqttConfig::password},
    FieldSpec<MqttConfig>{
        {.key = "password-file", .type = kInputFile, .description = "A file holding the broker password (one line)."},
        &MqttConfig::password_file},
    FieldSpec<MqttConfig>{
        {.key = "password-env", .type = kName, .description = "The environment variable holding the broker password."},
        &MqttConfig::password_env},
    FieldSpec<MqttConfig>{{.key = "ca-file",
                           .type = kInputFile,
                           .description = "CA certificate (PEM) to verify the broker with; setting it turns TLS on."},
                          &MqttConfig::ca_file},
    FieldSpec<MqttConfig>{{.key = "cert-file", .type = kInputFile, .description = "Client certificate (PEM) for TLS."},
                          &MqttConfig::cert_file},
    FieldSpec<MqttConfig>{{.key = "key-file", .type = kInputFile, .description = "Client private key (PEM) for TLS."},
                          &MqttConfig::key_file},
    FieldSpec<MqttConfig>{
        {.key = "tls-insecure", .type = kBool, .description = "Skip the broker host name check (testing only)."},
        &MqttConfig::tls_insecure},
    FieldSpec<MqttConfig>{{.key = "keepalive-s", .type = kInt, .range = {5, 3600}, .description = "MQTT keepalive."},
                          &MqttConfig::keepalive_s},
    FieldSpec<MqttConfig>{{.key = "max-inflight",
                           .type = kInt,
                           .range = {1, 1000},
                           .description = "Events published but not yet acknowledged, at most."},
                          &MqttConfig::max_inflight},
    FieldSpec<MqttConfig>{{.key = "spool-dir",
                           .type = kOutputPath,
                           .description = "Folder of the on-disk spool that keeps events until the broker has "
                                          "them (created if absent). Relative to the config file's folder."},
                          &MqttConfig::spool_dir},
    FieldSpec<MqttConfig>{{.key = "spool-max-mb",
                           .type = kInt,
                           .range = {1, 1 << 20},
                           .description = "Spool size limit; when full the oldest events go (counted in the "
                                          "metrics and logged, never silently)."},
                          &MqttConfig::spool_max_mb},
    FieldSpec<MqttConfig>{{.key = "spool-fsync",
                           .type = kBool,
                           .description = "fsync every spooled event (survives power loss, costs a disk flush per "
                                          "event); without it a daemon crash still loses nothing."},
                          &MqttConfig::spool_fsync},
};

const std::array kHttpFields = {
    FieldSpec<HttpConfig>{{.key = "address",
                           .type = kString,
                           .description = "Address to listen on. Anything but 127.0.0.1 or ::1 exposes the "
                                          "endpoints to the network (logged as a warning)."},
                          &HttpConfig::address},
    FieldSpec<HttpConfig>{{.key = "port", .type = kInt, .range = {1, 65535}, .description = "Port to listen on."},
                          &HttpConfig::port},
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
std::span<const FieldSpec<MqttConfig>> mqtt_fields() {
  return kMqttFields;
}
std::span<const FieldSpec<HttpConfig>> http_fields() {
  return kHttpFields;
}
std::span<const SectionSpec> stream_sections() {
  return kStreamSections;
}
std::span<const FieldSpec<RegionConfig>> zone_fields() {
  return kZoneFields;
}
std::span<const FieldSpec<RegionConfig>> line_fields() {
  return kLineFields;
}
std::span<const FieldSpec<RegionConfig>> mask_fields() {
  return kMaskFields;
}
std::span<const FieldSpec<ObjectFilterConfig>> filter_fields() {
  return kFilterFields;
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
    case kOutputPath:
      return "path";
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
    case kPointList:
      return rule.range.min == rule.range.max
                 ? make_message("list of ", format_number(rule.range.min), " [x, y] points, x and y in 0..1")
                 : make_message("list of ", format_number(rule.range.min), "..", format_number(rule.range.max),
                                " [x, y] points, x and y in 0..1");
  }
  return "value";
}

}  // namespace edgefuse::config
