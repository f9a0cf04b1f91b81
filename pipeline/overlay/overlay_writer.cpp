// The MP4 recording pipeline: encoder choice, zero-copy buffers, end-of-stream on close.
#include "pipeline/overlay/overlay_writer.h"

#include <array>
#include <cmath>

#include <gst/app/gstappsrc.h>
#include <gst/gst.h>

#include "pipeline/video/source_uri.h"
#include "pipeline/video/video_source.h"

namespace edgefuse {
namespace {

struct EncoderChoice {
  const char* element;
  const char* before;  // elements between videoconvert and the encoder
  const char* after;   // caps after the encoder
};

// Hardware first; each entry is only tried when its element is installed.
constexpr std::array<EncoderChoice, 6> kEncoders = {{
    {"nvv4l2h264enc", "nvvideoconvert ! video/x-raw(memory:NVMM),format=NV12 ! ", ""},
    {"vah264enc", "", ""},
    {"vaapih264enc", "", ""},
    {"v4l2h264enc", "", " ! video/x-h264,level=(string)4"},
    {"x264enc", "", ""},
    {"openh264enc", "", ""},
}};

std::string encoder_properties(const std::string& element, int kbps, int key_interval) {
  const std::string k = std::to_string(kbps), gop = std::to_string(key_interval);
  if (element == "x264enc") {
    // The cheapest preset: the overlay must leave the CPU to inference.
    return " tune=zerolatency speed-preset=ultrafast bitrate=" + k + " key-int-max=" + gop;
  }
  if (element == "nvv4l2h264enc") return " bitrate=" + std::to_string(kbps * 1000) + " iframeinterval=" + gop;
  if (element == "vah264enc" || element == "vaapih264enc") return " bitrate=" + k;
  if (element == "openh264enc") return " bitrate=" + std::to_string(kbps * 1000) + " gop-size=" + gop;
  return "";
}

void release_image(gpointer data) {
  delete static_cast<std::shared_ptr<const I420Image>*>(data);
}

}  // namespace

struct OverlayWriter::Pipeline {
  GstElement* pipeline = nullptr;
  GstElement* appsrc = nullptr;
  GstBus* bus = nullptr;

  ~Pipeline() {
    if (pipeline) gst_element_set_state(pipeline, GST_STATE_NULL);
    if (bus) gst_object_unref(bus);
    if (appsrc) gst_object_unref(appsrc);
    if (pipeline) gst_object_unref(pipeline);
  }
};

Result<std::unique_ptr<OverlayWriter>> OverlayWriter::create(const OverlayWriterOptions& options) {
  if (options.path.empty()) return invalid_argument("overlay writer: no output path");
  if (options.width <= 0 || options.height <= 0) {
    return invalid_argument("overlay writer: frame size ", options.width, "x", options.height);
  }
  if (!(options.fps > 0)) return invalid_argument("overlay writer: fps ", options.fps, " must be positive");
  ensure_gstreamer_initialised();
  const int fps_n = static_cast<int>(std::lround(options.fps * 1000));
  const int kbps = options.bitrate_kbps > 0
                       ? options.bitrate_kbps
                       : static_cast<int>(std::max(500.0, 0.1 * options.width * options.height * options.fps / 1000));
  const int key_interval = std::max(1, static_cast<int>(std::lround(options.fps * 2)));
  const std::string caps = "video/x-raw,format=I420,width=" + std::to_string(options.width) +
                           ",height=" + std::to_string(options.height) + ",framerate=" + std::to_string(fps_n) +
                           "/1000,colorimetry=" + (options.bt709 ? "bt709" : "bt601");

  std::string failures;
  for (const EncoderChoice& choice : kEncoders) {
    const std::string element = choice.element;
    if (options.encoder != "auto" && options.encoder != element) continue;
    if (!gst_element_installed(choice.element)) {
      if (options.encoder != "auto") return unsupported("overlay writer: encoder ", element, " is not installed");
      continue;
    }
    const std::string description =
        "appsrc name=src format=time is-live=false block=true max-buffers=3 caps=" + gst_quote(caps) +
        " ! videoconvert ! " + choice.before + element + encoder_properties(element, kbps, key_interval) +
        choice.after + " ! h264parse ! mp4mux ! filesink location=" + gst_quote(options.path.string());
    GError* error = nullptr;
    GstElement* launched = gst_parse_launch(description.c_str(), &error);
    if (error) {
      failures += " " + element + ": " + error->message + ";";
      g_error_free(error);
      if (launched) gst_object_unref(launched);
      continue;
    }
    auto pipeline = std::make_unique<Pipeline>();
    pipeline->pipeline = launched;
    pipeline->appsrc = gst_bin_get_by_name(GST_BIN(launched), "src");
    pipeline->bus = gst_element_get_bus(launched);
    if (gst_element_set_state(launched, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
      failures += " " + element + ": does not start;";
      continue;  // e.g. a VA-API element without a usable device: try the next one
    }
    std::unique_ptr<OverlayWriter> writer(new OverlayWriter());
    writer->pipeline_ = std::move(pipeline);
    writer->options_ = options;
    writer->encoder_name_ = element;
    return writer;
  }
  if (options.encoder != "auto" && failures.empty()) {
    return invalid_argument("overlay writer: unknown encoder '", options.encoder, "'");
  }
  return unsupported("overlay writer: no H.264 encoder could start (install gstreamer1.0-plugins-ugly for x264enc)",
                     failures.empty() ? "" : ":", failures);
}

OverlayWriter::~OverlayWriter() {
  (void)close();
}

Status OverlayWriter::bus_error() {
  GstMessage* message = gst_bus_pop_filtered(pipeline_->bus, GST_MESSAGE_ERROR);
  if (!message) return Status::ok();
  GError* error = nullptr;
  gst_message_parse_error(message, &error, nullptr);
  Status status = io_error("overlay writer (", encoder_name_, ") ", options_.path.string(), ": ",
                           error ? error->message : "unknown error");
  if (error) g_error_free(error);
  gst_message_unref(message);
  return status;
}

Status OverlayWriter::write(std::shared_ptr<const I420Image> image, int64_t pts_ns) {
  if (closed_) return invalid_argument("overlay writer: write after close");
  EF_ASSERT(image && image->width() == options_.width && image->height() == options_.height,
            "overlay writer: frame size differs from the caps");
  EF_RETURN_IF_ERROR(bus_error());
  const I420Image& pixels = *image;
  auto* owner = new std::shared_ptr<const I420Image>(std::move(image));
  GstBuffer* buffer = gst_buffer_new_wrapped_full(GST_MEMORY_FLAG_READONLY, const_cast<uint8_t*>(pixels.data()),
                                                  pixels.size(), 0, pixels.size(), owner, release_image);
  GST_BUFFER_PTS(buffer) = static_cast<GstClockTime>(pts_ns);
  GST_BUFFER_DURATION(buffer) = static_cast<GstClockTime>(1e9 / options_.fps);
  if (gst_app_src_push_buffer(GST_APP_SRC(pipeline_->appsrc), buffer) != GST_FLOW_OK) {  // takes the buffer
    EF_RETURN_IF_ERROR(bus_error());
    return io_error("overlay writer (", encoder_name_, "): the pipeline refused a frame");
  }
  ++frames_written_;
  return Status::ok();
}

Status OverlayWriter::close() {
  if (closed_ || !pipeline_) return Status::ok();
  closed_ = true;
  gst_app_src_end_of_stream(GST_APP_SRC(pipeline_->appsrc));
  GstMessage* message = gst_bus_timed_pop_filtered(pipeline_->bus, 30 * GST_SECOND,
                                                   static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  Status status;
  if (!message) {
    status = io_error("overlay writer: ", options_.path.string(), " was not finalised within 30 s");
  } else if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
    GError* error = nullptr;
    gst_message_parse_error(message, &error, nullptr);
    status = io_error("overlay writer (", encoder_name_, ") ", options_.path.string(), ": ",
                      error ? error->message : "unknown error");
    if (error) g_error_free(error);
  }
  if (message) gst_message_unref(message);
  gst_element_set_state(pipeline_->pipeline, GST_STATE_NULL);
  return status;
}

}  // namespace edgefuse
