#include "pipeline/video/source_uri.h"

#include "pipeline/video/stream_credentials.h"

namespace edgefuse {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

constexpr std::string_view kSupported = "file://, rtsp://, rtsps://, v4l2:// and test:// (or a plain file path)";

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

constexpr std::string_view kSinkFormats = "video/x-raw,format=(string){NV12,I420}";

// Out of NVMM memory (Jetson's hardware decoder) when a converter is installed: the converter's
// output caps carry no memory feature, so it writes system memory, in a format the sink takes.
std::string from_decoder(const PipelineOptions& options) {
  if (options.nvmm_converter.empty()) return "";
  return options.nvmm_converter + " ! " + std::string(kSinkFormats) + " ! ";
}

std::string sink_chain(const PipelineOptions& options) {
  return "videoconvert ! appsink name=sink caps=\"" + std::string(kSinkFormats) + "\"" +
         " max-buffers=4 drop=false emit-signals=false sync=" + (options.realtime ? "true" : "false");
}

}  // namespace

Result<SourceAddress> parse_source_uri(std::string_view uri) {
  if (uri.empty()) return invalid_argument("empty uri");
  if (starts_with(uri, "rtsp://") || starts_with(uri, "rtsps://")) {
    const size_t host_start = uri.find("://") + 3;
    if (uri.size() == host_start || uri[host_start] == '/') {
      return invalid_argument("rtsp uri without a host: \"", redact_uri(uri), "\"");
    }
    return SourceAddress{SourceKind::kRtsp, std::string(uri)};
  }
  if (starts_with(uri, "v4l2://")) {
    const std::string_view device = uri.substr(7);
    if (!starts_with(device, "/dev/") || device.size() <= 5) {
      return invalid_argument("v4l2 uri must name a device, e.g. v4l2:///dev/video0, got \"", uri, "\"");
    }
    return SourceAddress{SourceKind::kV4l2, std::string(device)};
  }
  if (starts_with(uri, "test://")) {
    const std::string_view pattern = uri.substr(7);
    if (!pattern.empty() && !is_pattern_name(pattern)) {
      return invalid_argument("test:// pattern must be a word like smpte or ball, got \"", pattern, "\"");
    }
    return SourceAddress{SourceKind::kTest, pattern.empty() ? "smpte" : std::string(pattern)};
  }
  if (starts_with(uri, "file://")) {
    const std::string_view path = uri.substr(7);
    if (!starts_with(path, "/")) {
      return invalid_argument(
          "file:// needs an absolute path (file:///path/video.mp4); write a relative path without file://");
    }
    return SourceAddress{SourceKind::kFile, std::string(path)};
  }
  if (const size_t separator = uri.find("://"); separator != std::string_view::npos) {
    return invalid_argument("unsupported uri scheme \"", uri.substr(0, separator + 3), "\"; supported: ", kSupported);
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
      source = "rtspsrc name=src location=" + gst_quote(address.location) +
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
  const bool decoded = address.kind != SourceKind::kTest;
  return source + " ! " + (decoded ? from_decoder(options) : "") + sink_chain(options);
}

}  // namespace edgefuse
