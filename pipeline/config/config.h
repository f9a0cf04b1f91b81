// The daemon's configuration: which models to load and which video streams to analyse with them.
// Read from YAML (kebab-case keys; `edgefuse config --reference` prints every key). Parsing
// validates everything it can without opening a model or a stream: types, ranges, choices,
// unknown keys (with a suggestion), name uniqueness, references between streams and models, that
// model, labels and file:// inputs exist, and which keys apply to which uri scheme.
// Errors are kInvalidArgument (kNotFound / kIoError when the config file cannot be read): one line
// per problem, ordered by line, at most 20, each "<origin>: <key path>: <problem> (line N)". YAML-level
// problems (syntax, size, nesting, anchors) stop at the first; the cross-key checks (names, model
// references, scheme-only keys) run once every key parsed on its own.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/zones/zone_geometry.h"
#include "runtime/status.h"

namespace edgefuse {

struct ModelConfig {
  std::string name;                // unique, [A-Za-z0-9_.-]+
  std::filesystem::path path;      // ONNX file, absolute after parsing; exists
  std::string family = "auto";     // auto | yolox | yolov5 | yolov8 | blazeface
  std::filesystem::path labels;    // optional labels file (one per line), absolute after parsing; exists if given
  std::string device = "cpu";      // cpu | cuda | auto
  std::string precision = "fp32";  // fp32 | fp16 (GPU activation storage and tensor cores; the CPU runs fp32)
  int threads = 0;                 // 0..256, 0 = one per core
  double score_threshold = 0.3;    // [0,1]
  double iou_threshold = 0.45;     // [0,1]
  int max_detections = 100;        // 1..10000
  int max_batch = 1;               // 1..64
  int batch_timeout_ms = 5;        // 0..1000
  bool fuse = true;                // run the graph fuser (false = eager baseline)
  int input_width = 0;             // 0..8192: the image size for a model exported with dynamic axes;
  int input_height = 0;            // 0 = as the model declares (both or neither)
  bool operator==(const ModelConfig&) const = default;
};

// A zone (a polygon) or a counting line (two points) of a stream; see pipeline/zones/zone_monitor.h.
struct RegionConfig {
  std::string name;                  // unique among its stream's zones and lines, [A-Za-z0-9_.-]+
  std::vector<Point> points;         // frame fractions in [0, 1]; zones 3..64 enclosing some area; lines 2, apart
  std::vector<std::string> classes;  // class names it watches; empty = every class the stream reports
  double loiter_s = 0;               // zones: report tracks staying this long; 0 = never (lines: unused)
  bool operator==(const RegionConfig&) const = default;
};

// An object filter of a stream (pipeline/zones/object_filter.h): detections of its classes whose
// score, size or shape falls outside these bounds are dropped before tracking, zones and events.
struct ObjectFilterConfig {
  std::vector<std::string> classes;  // class names it applies to; empty = every class the stream reports
  double min_score = 0;              // 0..1; above the model's score-threshold to matter
  double min_area = 0;               // box area over frame area, 0..1
  double max_area = 1;               // 0..1, above min_area
  double min_ratio = 0;              // box width over height, 0..100
  double max_ratio = 0;              // 0..100; 0 = no limit
  bool operator==(const ObjectFilterConfig&) const = default;
};

struct StreamConfig {
  std::string name;  // unique, [A-Za-z0-9_.-]+ (it appears in events and metrics)
  // After parsing one of: file:///ABS (a plain path in the config is resolved against its folder and
  // must exist), rtsp://..., rtsps://..., v4l2:///dev/..., test://[pattern].
  std::string uri;
  std::string model;                   // name of a model in models
  std::vector<std::string> classes;    // label filter; empty = all
  int inference_interval = 1;          // run the model on every Nth decoded frame, 1..1000
  bool loop = false;                   // file:// only: restart at end of stream
  bool realtime = true;                // file:// and test://: deliver frames at the stream's rate (as a camera
                                       // would), dropping when late; false = as fast as decoding allows
  int queue_size = 2;                  // 1..64 frames waiting for inference; when full the oldest is dropped
  std::string rtsp_transport = "tcp";  // tcp | udp (rtsp:// and rtsps:// only)
  std::string decoder = "auto";        // auto = highest-rank decoder present, or a GStreamer element name
  int width = 0, height = 0;           // test:// only: frame size (0 = 1920x1080); 16..7680
  int framerate = 30;                  // test:// only, 1..240
  // Supervision (see pipeline/daemon/stream_supervisor.h).
  bool reconnect = true;      // rebuild the source after a failure, a stall or a live end of stream
  double watchdog_s = 10;     // no decoded frame for this long: stalled; 0 = off
  double max_backoff_s = 30;  // reconnect delays 1, 2, 5, 10, 30 s, capped at this
  // Credentials (rtsp:// and rtsps://). After parsing, `password` holds the password whichever way it
  // was given (the uri's userinfo, password, password-file or password-env) and `uri` has no userinfo.
  std::string username;
  std::string password;
  std::filesystem::path password_file;
  std::string password_env;
  // Object tracking (pipeline/tracking/iou_tracker.h): detections carry a track id stable across frames.
  bool track = true;
  double track_iou = 0.3;  // overlap with a track's predicted box that matches, 0.05..0.95
  int track_max_age = 15;  // processed frames a track survives unmatched, 1..300
  int track_min_hits = 2;  // matched frames before a track labels its detections, 1..30
  // Motion gating (pipeline/motion/motion_gate.h): due frames where nothing moved skip inference.
  bool motion_gate = false;
  double motion_area_percent = 0.1;  // of the picture that must change, 0.001..100
  int motion_block_delta = 12;       // luma levels by which an 8x8 block's mean must change, 1..255
  double motion_refresh_s = 10;      // let a frame through at least this often, 0..3600 (0 = never)
  // Zones (occupancy, enter/leave) and counting lines (crossings; they need track) over the detections.
  std::vector<RegionConfig> zones;  // at most 32
  std::vector<RegionConfig> lines;  // at most 32
  // Where and what not to report: masks (polygons whose detections are dropped, by where each stands)
  // and object filters; both act before tracking, zones and events.
  std::vector<RegionConfig> masks;          // at most 32; loiter_s unused
  std::vector<ObjectFilterConfig> filters;  // at most 32
  // Overlay output for this stream (pipeline/overlay): an MP4 file and/or a live MJPEG view.
  std::string overlay_file;  // absolute after parsing; empty = none
  int overlay_port = 0;      // live view on http://<http.address>:PORT/, 0 = none
  // Snapshots (pipeline/overlay/snapshot_writer.h): JPEGs of frames where a tracked object appeared,
  // entered a zone, loitered or crossed a line, in <snapshots>/<name>/; they need track.
  std::string snapshots;       // absolute after parsing; empty = none
  int snapshots_max_mb = 256;  // the stream's snapshot folder is kept under this, oldest deleted; 1..1048576
  bool operator==(const StreamConfig&) const = default;
};

struct EventsConfig {
  std::string path = "-";     // JSON-lines file, "-" = stdout; absolute after parsing otherwise
  bool empty_frames = false;  // also emit an event for processed frames with no detections
  bool tracks = false;        // also emit a "track" event when a tracked object's track ends
  bool operator==(const EventsConfig&) const = default;
};

// MQTT output (section `mqtt`; absent = off). Events are spooled on disk until the broker acknowledges them.
struct MqttConfig {
  bool enabled = false;  // the section is present
  std::string host = "127.0.0.1";
  int port = 1883;
  std::string client_id = "edgefuse";     // fixed, so the broker keeps this client's session across restarts
  std::string topic_prefix = "edgefuse";  // events (of every type) go to <prefix>/<stream>/events
  std::string username;
  std::string password;  // after parsing, from password, password-file or password-env
  std::filesystem::path password_file;
  std::string password_env;
  std::filesystem::path ca_file, cert_file, key_file;  // TLS when ca-file is set
  bool tls_insecure = false;
  int keepalive_s = 30;
  int max_inflight = 20;
  std::string spool_dir = "edgefuse-spool";  // absolute after parsing
  int spool_max_mb = 64;
  bool spool_fsync = false;
  bool operator==(const MqttConfig&) const = default;
};

// Health and metrics over HTTP (section `http`; absent = off): /healthz, /readyz, /metrics.
struct HttpConfig {
  bool enabled = false;               // the section is present
  std::string address = "127.0.0.1";  // anything but loopback must be chosen explicitly
  int port = 9400;
  bool operator==(const HttpConfig&) const = default;
};

struct DaemonConfig {
  std::vector<ModelConfig> models;
  std::vector<StreamConfig> streams;
  EventsConfig events;
  MqttConfig mqtt;
  HttpConfig http;
  double stats_interval_s = 10;  // per-stream statistics log period, 0 = off, 0..3600
  std::filesystem::path source;  // the file it was read from (empty for text)
};

// Parses YAML text; base_dir resolves relative paths; origin names the source in errors (file name).
Result<DaemonConfig> parse_config(std::string_view yaml_text, const std::filesystem::path& base_dir,
                                  std::string_view origin);
// Reads at most 1 MiB (larger files are rejected unread) and parses it relative to its folder.
Result<DaemonConfig> load_config_file(const std::filesystem::path& file);
// The reference of every key (path, type, range/choices, default, description), as text for
// `edgefuse config --reference`.
std::string config_reference();

}  // namespace edgefuse
