// Stream addresses (the `uri` of a stream in the config) and the GStreamer pipeline that decodes
// each kind. Pure string work, no GStreamer calls, so it is tested without a running pipeline.
#pragma once

#include <string>
#include <string_view>

#include "pipeline/video/stream_credentials.h"
#include "runtime/status.h"

namespace edgefuse {

enum class SourceKind { kFile, kRtsp, kV4l2, kTest };

struct SourceAddress {
  SourceKind kind = SourceKind::kFile;
  std::string location;  // file path, rtsp(s):// URL, device path, or videotestsrc pattern name
};

// file:///abs/path or a plain path (file), rtsp://host[:port]/path and rtsps://, v4l2:///dev/videoN,
// test://[pattern] (videotestsrc: smpte, ball, snow, ...; default smpte). The one check of stream
// addresses: the config validates with it too. Errors say what is wrong with the uri.
Result<SourceAddress> parse_source_uri(std::string_view uri);

struct PipelineOptions {
  bool realtime = true;       // deliver frames at the stream's rate (a camera's pace); false: as fast as decoded
  bool rtsp_over_tcp = true;  // RTSP transport: TCP (interleaved) or UDP
  int rtsp_latency_ms = 100;  // rtspsrc jitter buffer
  StreamCredentials rtsp_credentials;  // set on rtspsrc as properties, never written into the description
  std::string decoder = "auto";        // "auto": decodebin picks the highest-ranked decoder; else an element name
  // An element that brings decoded frames out of NVMM memory into system memory, after the
  // decoder: on Jetson decodebin picks nvv4l2decoder, whose NVMM output videoconvert cannot take.
  // Empty: none (VideoSource sets it from the installed elements, find_nvmm_converter()).
  std::string nvmm_converter;
  int test_width = 1920, test_height = 1080, test_framerate = 30;
};

// The gst-launch description of the decoding pipeline, ending in an appsink named "sink" that
// accepts only raw NV12 or I420 in system memory; an RTSP source is the element named "src". Decoders that output
// either go straight to it; the one videoconvert in the chain is negotiated as passthrough then and only converts other
// raw formats (a USB camera's YUY2) to NV12. Strings are quoted for gst_parse_launch.
std::string pipeline_description(const SourceAddress& address, const PipelineOptions& options);

// `text` as a double-quoted gst_parse_launch property value.
std::string gst_quote(std::string_view text);

}  // namespace edgefuse
