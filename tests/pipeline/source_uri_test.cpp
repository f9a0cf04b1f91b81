#include "pipeline/video/source_uri.h"

#include <doctest/doctest.h>

namespace edgefuse {
namespace {

TEST_CASE("parse_source_uri recognises each scheme") {
  Result<SourceAddress> file = parse_source_uri("file:///data/clip.mp4");
  REQUIRE(file.is_ok());
  CHECK(file->kind == SourceKind::kFile);
  CHECK(file->location == "/data/clip.mp4");

  Result<SourceAddress> plain = parse_source_uri("clips/a b.mp4");
  REQUIRE(plain.is_ok());
  CHECK(plain->kind == SourceKind::kFile);
  CHECK(plain->location == "clips/a b.mp4");

  Result<SourceAddress> rtsp = parse_source_uri("rtsp://127.0.0.1:8554/street");
  REQUIRE(rtsp.is_ok());
  CHECK(rtsp->kind == SourceKind::kRtsp);
  CHECK(rtsp->location == "rtsp://127.0.0.1:8554/street");

  Result<SourceAddress> camera = parse_source_uri("v4l2:///dev/video2");
  REQUIRE(camera.is_ok());
  CHECK(camera->kind == SourceKind::kV4l2);
  CHECK(camera->location == "/dev/video2");

  Result<SourceAddress> test = parse_source_uri("test://");
  REQUIRE(test.is_ok());
  CHECK(test->kind == SourceKind::kTest);
  CHECK(test->location == "smpte");
  CHECK(parse_source_uri("test://ball")->location == "ball");
}

TEST_CASE("parse_source_uri rejects what it cannot open, naming the uri") {
  CHECK(!parse_source_uri("").is_ok());
  const Result<SourceAddress> http = parse_source_uri("http://camera/stream");
  REQUIRE(!http.is_ok());
  CHECK(http.status().message().find("\"http://\"") != std::string::npos);
  CHECK(http.status().message().find("rtsp://") != std::string::npos);
  CHECK(!parse_source_uri("rtsp://").is_ok());
  CHECK(!parse_source_uri("rtsp:///path").is_ok());
  CHECK(!parse_source_uri("v4l2://video0").is_ok());
  CHECK(!parse_source_uri("file://relative.mp4").is_ok());
  CHECK(!parse_source_uri("test://ball ! fakesink").is_ok());  // no pipeline injection through a pattern
}

TEST_CASE("pipeline descriptions decode to an NV12/I420 appsink with the requested pacing") {
  PipelineOptions options;
  const std::string file = pipeline_description({SourceKind::kFile, "/clips/x\"y.mp4"}, options);
  CHECK(file.find("filesrc location=\"/clips/x\\\"y.mp4\"") == 0);
  CHECK(file.find("decodebin") != std::string::npos);
  CHECK(file.find("appsink name=sink") != std::string::npos);
  CHECK(file.find("format=(string){NV12,I420}") != std::string::npos);
  CHECK(file.find("sync=true") != std::string::npos);

  options.realtime = false;
  options.decoder = "avdec_h264";
  const std::string fast = pipeline_description({SourceKind::kFile, "/clips/a.mp4"}, options);
  CHECK(fast.find("sync=false") != std::string::npos);
  CHECK(fast.find("parsebin ! avdec_h264") != std::string::npos);

  options.rtsp_over_tcp = false;
  const std::string rtsp = pipeline_description({SourceKind::kRtsp, "rtsp://h/s"}, options);
  CHECK(rtsp.find("rtspsrc name=src location=\"rtsp://h/s\" protocols=udp") == 0);

  options.test_width = 640;
  options.test_height = 360;
  const std::string test = pipeline_description({SourceKind::kTest, "ball"}, options);
  CHECK(test.find("videotestsrc pattern=ball") == 0);
  CHECK(test.find("width=640,height=360") != std::string::npos);
}

TEST_CASE("on Jetson the decoder's NVMM frames go through the converter into system memory") {
  PipelineOptions options;
  CHECK(pipeline_description({SourceKind::kFile, "/a.mp4"}, options).find("decodebin name=decode ! videoconvert") !=
        std::string::npos);
  options.nvmm_converter = "nvvidconv";
  for (const SourceKind kind : {SourceKind::kFile, SourceKind::kRtsp, SourceKind::kV4l2}) {
    const std::string described = pipeline_description({kind, "/dev/video0"}, options);
    INFO(described);
    CHECK(described.find("name=decode ! nvvidconv ! video/x-raw,format=(string){NV12,I420} ! videoconvert ! appsink") !=
          std::string::npos);
  }
  // A test pattern is made in system memory.
  CHECK(pipeline_description({SourceKind::kTest, "ball"}, options).find("nvvidconv") == std::string::npos);
}

}  // namespace
}  // namespace edgefuse
