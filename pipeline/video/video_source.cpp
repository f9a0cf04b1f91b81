#include "pipeline/video/video_source.h"

#include <cstdio>
#include <cstring>

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>

namespace edgefuse {

void ensure_gstreamer_initialised() {
  static std::once_flag once;
  std::call_once(once, [] { gst_init(nullptr, nullptr); });
}

bool gst_element_installed(const char* name) {
  ensure_gstreamer_initialised();
  GstElementFactory* factory = gst_element_factory_find(name);
  if (factory == nullptr) return false;
  gst_object_unref(factory);
  return true;
}

std::string find_nvmm_converter() {
  for (const char* element : {"nvvidconv", "nvvideoconvert"}) {
    if (gst_element_installed(element)) return element;
  }
  return "";
}

namespace {

// Keeps a decoded sample mapped for as long as any DecodedFrame refers to it.
class MappedSample final : public DecodedFrame::Holder {
 public:
  MappedSample(GstSample* sample, GstVideoFrame frame) : sample_(sample), frame_(frame) {}
  ~MappedSample() override {
    gst_video_frame_unmap(&frame_);
    gst_sample_unref(sample_);
  }
  MappedSample(const MappedSample&) = delete;
  MappedSample& operator=(const MappedSample&) = delete;
  const GstVideoFrame& frame() const { return frame_; }

 private:
  GstSample* sample_;
  GstVideoFrame frame_;
};

std::string take_error_text(GstMessage* message) {
  GError* error = nullptr;
  gchar* debug = nullptr;
  gst_message_parse_error(message, &error, &debug);
  std::string text = error != nullptr ? error->message : "unknown error";
  const char* element = GST_OBJECT_NAME(GST_MESSAGE_SRC(message));
  if (element != nullptr) text = std::string(element) + ": " + text;
  if (debug != nullptr && std::strlen(debug) < 400) text += std::string(" (") + debug + ")";
  if (error != nullptr) g_error_free(error);
  g_free(debug);
  return scrub_secrets(text);
}

bool is_video_decoder(GstElement* element) {
  GstElementFactory* factory = gst_element_get_factory(element);
  if (factory == nullptr) return false;
  const char* klass = gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS);
  return klass != nullptr && std::strstr(klass, "Decoder") != nullptr && std::strstr(klass, "Video") != nullptr;
}

}  // namespace

struct VideoSource::Pipeline {
  GstElement* pipeline = nullptr;
  GstElement* sink = nullptr;
  ~Pipeline() {
    if (sink != nullptr) gst_object_unref(sink);
    if (pipeline != nullptr) {
      gst_element_set_state(pipeline, GST_STATE_NULL);
      gst_object_unref(pipeline);
    }
  }
};

// C callbacks into the class; a struct so it can be a friend.
struct VideoSourceCallbacks {
  static GstFlowReturn new_sample(GstAppSink* sink, gpointer self) {
    GstSample* sample = gst_app_sink_pull_sample(sink);
    if (sample == nullptr) return GST_FLOW_EOS;
    static_cast<VideoSource*>(self)->on_sample(sample);
    return GST_FLOW_OK;
  }
  static void element_added(GstBin*, GstBin*, GstElement* element, gpointer self) {
    if (!is_video_decoder(element)) return;
    auto* source = static_cast<VideoSource*>(self);
    GstElementFactory* factory = gst_element_get_factory(element);
    const std::lock_guard lock(source->text_mutex_);
    source->decoder_name_ = GST_OBJECT_NAME(factory);
  }
};

VideoSource::VideoSource(VideoSourceOptions options, FrameCallback on_frame)
    : options_(std::move(options)), on_frame_(std::move(on_frame)), pipeline_(std::make_unique<Pipeline>()) {}

VideoSource::~VideoSource() {
  stop();
}

Result<std::unique_ptr<VideoSource>> VideoSource::create(VideoSourceOptions options, FrameCallback on_frame) {
  ensure_gstreamer_initialised();
  if (options.pipeline.nvmm_converter.empty()) options.pipeline.nvmm_converter = find_nvmm_converter();
  std::unique_ptr<VideoSource> source(new VideoSource(std::move(options), std::move(on_frame)));
  const std::string description = pipeline_description(source->options_.address, source->options_.pipeline);
  GError* error = nullptr;
  GstElement* pipeline = gst_parse_launch(description.c_str(), &error);
  if (error != nullptr) {
    const std::string message = error->message;
    g_error_free(error);
    if (pipeline != nullptr) gst_object_unref(pipeline);
    return unsupported("stream '", source->options_.name, "': cannot build the GStreamer pipeline: ", message,
                       " (pipeline: ", description, ")");
  }
  source->pipeline_->pipeline = pipeline;
  source->pipeline_->sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  const StreamCredentials& credentials = source->options_.pipeline.rtsp_credentials;
  if (!credentials.empty()) {
    GstElement* rtsp = gst_bin_get_by_name(GST_BIN(pipeline), "src");
    EF_ASSERT(rtsp != nullptr, "credentials for a stream without an rtspsrc");
    g_object_set(rtsp, "user-id", credentials.user.c_str(), "user-pw", credentials.password.c_str(), nullptr);
    gst_object_unref(rtsp);
  }
  EF_ASSERT(source->pipeline_->sink != nullptr, "pipeline without appsink: ", description);

  GstAppSinkCallbacks callbacks{};
  callbacks.new_sample = &VideoSourceCallbacks::new_sample;
  gst_app_sink_set_callbacks(GST_APP_SINK(source->pipeline_->sink), &callbacks, source.get(), nullptr);
  g_signal_connect(pipeline, "deep-element-added", G_CALLBACK(&VideoSourceCallbacks::element_added), source.get());
  return source;
}

Status VideoSource::start() {
  EF_ASSERT(state() == SourceState::kCreated, "VideoSource::start called twice");
  state_ = SourceState::kRunning;
  if (gst_element_set_state(pipeline_->pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    // The reason is on the bus; read it now so the caller gets it.
    GstBus* bus = gst_element_get_bus(pipeline_->pipeline);
    GstMessage* message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    const std::string reason = message != nullptr ? take_error_text(message) : "state change to PLAYING failed";
    if (message != nullptr) gst_message_unref(message);
    gst_object_unref(bus);
    fail(reason);
    return io_error("stream '", options_.name, "': cannot start: ", reason);
  }
  bus_thread_ = std::thread([this] { watch_bus(); });
  return Status::ok();
}

void VideoSource::stop() {
  if (stopping_.exchange(true)) return;
  if (pipeline_->pipeline != nullptr) gst_element_set_state(pipeline_->pipeline, GST_STATE_NULL);
  if (bus_thread_.joinable()) bus_thread_.join();
  SourceState running = SourceState::kRunning;
  state_.compare_exchange_strong(running, SourceState::kFinished);
}

std::string VideoSource::error() const {
  const std::lock_guard lock(text_mutex_);
  return error_;
}

std::string VideoSource::decoder_name() const {
  const std::lock_guard lock(text_mutex_);
  return decoder_name_;
}

void VideoSource::fail(const std::string& message) {
  {
    const std::lock_guard lock(text_mutex_);
    if (error_.empty()) error_ = message;
  }
  state_ = SourceState::kFailed;
}

void VideoSource::watch_bus() {
  GstBus* bus = gst_element_get_bus(pipeline_->pipeline);
  const auto types = static_cast<GstMessageType>(GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  while (!stopping_.load() && !done()) {
    GstMessage* message = gst_bus_timed_pop_filtered(bus, 100 * GST_MSECOND, types);
    if (message == nullptr) continue;
    if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
      fail(take_error_text(message));
    } else if (options_.loop && options_.address.kind == SourceKind::kFile) {
      loops_completed_.fetch_add(1);
      const auto flags = static_cast<GstSeekFlags>(GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_KEY_UNIT);
      if (!gst_element_seek_simple(pipeline_->pipeline, GST_FORMAT_TIME, flags, 0)) fail("cannot seek back to loop");
    } else {
      state_ = SourceState::kFinished;
    }
    gst_message_unref(message);
  }
  gst_object_unref(bus);
}

void VideoSource::on_sample(void* raw_sample) {
  auto* sample = static_cast<GstSample*>(raw_sample);
  const auto arrived = DecodedFrame::Clock::now();
  GstVideoInfo info;
  GstCaps* caps = gst_sample_get_caps(sample);
  GstBuffer* buffer = gst_sample_get_buffer(sample);
  GstVideoFrame mapped;
  if (caps == nullptr || buffer == nullptr || !gst_video_info_from_caps(&info, caps) ||
      !gst_video_frame_map(&mapped, &info, buffer, GST_MAP_READ)) {
    gst_sample_unref(sample);
    std::fprintf(stderr, "edgefuse: stream '%s': skipped a frame that could not be mapped\n", options_.name.c_str());
    return;
  }
  const GstVideoFormat format = GST_VIDEO_INFO_FORMAT(&info);
  FramePlanes planes;
  const int plane_count = format == GST_VIDEO_FORMAT_NV12 ? 2 : 3;
  for (int plane = 0; plane < plane_count; ++plane) {
    planes.data[plane] = static_cast<const uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&mapped, plane));
    planes.stride[plane] = GST_VIDEO_FRAME_PLANE_STRIDE(&mapped, plane);
  }
  const int width = GST_VIDEO_INFO_WIDTH(&info);
  const int height = GST_VIDEO_INFO_HEIGHT(&info);
  const int64_t pts = GST_BUFFER_PTS_IS_VALID(buffer) ? static_cast<int64_t>(GST_BUFFER_PTS(buffer)) : -1;

  // How late the frame is against its presentation time on the pipeline clock: with sync the sink
  // released it on time, so this is small; for live sources it includes network and decode delay.
  auto captured_at = arrived;
  if (options_.pipeline.realtime && pts >= 0) {
    const GstSegment* segment = gst_sample_get_segment(sample);
    GstClock* clock = gst_element_get_clock(pipeline_->pipeline);
    if (segment != nullptr && clock != nullptr) {
      const guint64 running = gst_segment_to_running_time(segment, GST_FORMAT_TIME, static_cast<guint64>(pts));
      const GstClockTime now = gst_clock_get_time(clock);
      const GstClockTime presented = gst_element_get_base_time(pipeline_->pipeline) + running;
      if (running != GST_CLOCK_TIME_NONE && now > presented) captured_at -= std::chrono::nanoseconds(now - presented);
    }
    if (clock != nullptr) gst_object_unref(clock);
  }

  auto holder = std::make_shared<MappedSample>(sample, mapped);
  DecodedFrame frame(std::move(holder),
                     format == GST_VIDEO_FORMAT_NV12 ? FramePixelFormat::kNV12 : FramePixelFormat::kI420, width, height,
                     planes);
  frame.number = frames_decoded_.fetch_add(1);
  frame.pts_ns = pts;
  frame.captured_at = captured_at;
  frame.bt709 = GST_VIDEO_INFO_COLORIMETRY(&info).matrix == GST_VIDEO_COLOR_MATRIX_BT709;
  on_frame_(std::move(frame));
}

}  // namespace edgefuse
