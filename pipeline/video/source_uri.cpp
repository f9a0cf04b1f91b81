#include "pipeline/video/source_uri.h"

#include <array>

namespace edgefuse {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool is_pattern_name(std::string_view name) {
  if (name.empty() || name.size() > 32) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

// The decoding part: decodebin (auto-plugs by rank) or an explicit decoder after parsebin.
std::string decode_chain(const PipelineOptions& options) {
  if (options.decoder == "auto") return "decodebin name=decode";
  return "parsebin ! " + options.decoder + " name=decode";
}

std::string sink_chain(const PipelineOptions& options) {
  return std::string("videoconvert ! appsink name=sink caps=\"video/x-raw,format=(string){NV12,I420}\"") +
         " max-buffers=4 drop=false emit-signals=false sync=" + (options.realtime ? "true" : "false");
}

}  // namespace

std::string_view source_kind_name(SourceKind kind) {
  constexpr std::array<std::string_view, 4> kNames = {"file", "rtsp", "v4l2", "test"};
  return kNames[static_cast<size_t>(kind)];
}

Result<SourceAddress> parse_source_uri(std::string_view uri) {
  if (uri.empty()) return invalid_argument("stream uri is empty");
  if (starts_with(uri, "rtsp://") || starts_with(uri, "rtsps://")) {
    const size_t host_start = uri.find("://") + 3;
    if (uri.size() == host_start || uri[host_start] == '/') return invalid_argument("uri '", uri, "' has no host");
    return SourceAddress{SourceKind::kRtsp, std::string(uri)};
  }
  if (starts_with(uri, "v4l2://")) {
    const std::string_view device = uri.substr(7);
    if (!starts_with(device, "/dev/")) return invalid_argument("uri '", uri, "': expected v4l2:///dev/videoN");
    return SourceAddress{SourceKind::kV4l2, std::string(device)};
  }
  if (starts_with(uri, "test://")) {
    const std::string_view pattern = uri.substr(7);
    if (!pattern.empty() && !is_pattern_name(pattern)) {
      return invalid_argument("uri '", uri,
                              "': test pattern must be a videotestsrc pattern name such as smpte or ball");
    }
    return SourceAddress{SourceKind::kTest, pattern.empty() ? "smpte" : std::string(pattern)};
  }
  if (starts_with(uri, "file://")) {
    const std::string_view path = uri.substr(7);
    if (!starts_with(path, "/")) return invalid_argument("uri '", uri, "': file:// needs an absolute path");
    return SourceAddress{SourceKind::kFile, std::string(path)};
  }
  if (uri.find("://") != std::string_view::npos) {
    return unsupported("uri '", uri, "': supported schemes are file://, rtsp://, rtsps://, v4l2://, test://");
  }
  return SourceAddress{SourceKind::kFile, std::string(uri)};
}

std::string gst_quote(std::string_view text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

std::string pipeline_description(const SourceAddress& address, const PipelineOptions& options) {
  std::string source;
  switch (address.kind) {
    case SourceKind::kFile:
      source = "filesrc location=" + gst_quote(address.location) + " ! " + decode_chain(options);
      break;
    case SourceKind::kRtsp:
      source = "rtspsrc location=" + gst_quote(address.location) +
               " protocols=" + (options.rtsp_over_tcp ? "tcp" : "udp") +
               " latency=" + std::to_string(options.rtsp_latency_ms) + " ! " + decode_chain(options);
      break;
    case SourceKind::kV4l2:
      source = "v4l2src device=" + gst_quote(address.location) + " ! decodebin name=decode";
      break;
    case SourceKind::kTest:
      source = "videotestsrc pattern=" + address.location + " is-live=" + (options.realtime ? "true" : "false") +
               " ! video/x-raw,format=NV12,width=" + std::to_string(options.test_width) +
               ",height=" + std::to_string(options.test_height) +
               ",framerate=" + std::to_string(options.test_framerate) + "/1";
      break;
  }
  return source + " ! " + sink_chain(options);
}

}  // namespace edgefuse
