// A GStreamer decoding pipeline for one stream, handing each decoded frame to a callback.
//
// The callback runs on GStreamer's streaming thread and must return quickly (push into a queue).
// A bus thread watches the pipeline: errors end the source with a message (the daemon keeps
// serving the other streams), end-of-stream either ends it or, with `loop`, seeks back to the start.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "pipeline/video/decoded_frame.h"
#include "pipeline/video/source_uri.h"
#include "runtime/status.h"

namespace edgefuse {

struct VideoSourceOptions {
  std::string name;  // stream name, for log lines
  SourceAddress address;
  PipelineOptions pipeline;
  bool loop = false;  // file sources: restart at end of stream
};

enum class SourceState { kCreated, kRunning, kFinished, kFailed };

class VideoSource {
 public:
  using FrameCallback = std::function<void(DecodedFrame frame)>;

  // Builds the pipeline (errors: GStreamer missing an element, bad description); does not start it.
  static Result<std::unique_ptr<VideoSource>> create(VideoSourceOptions options, FrameCallback on_frame);
  ~VideoSource();
  VideoSource(const VideoSource&) = delete;
  VideoSource& operator=(const VideoSource&) = delete;

  // Sets the pipeline playing and starts the bus thread. Errors after this point arrive on the bus
  // and end the source (state() becomes kFailed, error() says why).
  Status start();
  // Stops the pipeline and joins the bus thread; no callback runs after it returns. Idempotent.
  void stop();

  SourceState state() const { return state_.load(); }
  bool done() const { return state() == SourceState::kFinished || state() == SourceState::kFailed; }
  std::string error() const;
  std::string decoder_name() const;  // the decoder element chosen (for logs), empty until known
  int64_t frames_decoded() const { return frames_decoded_.load(); }
  int loops_completed() const { return loops_completed_.load(); }
  const VideoSourceOptions& options() const { return options_; }

 private:
  struct Pipeline;  // GStreamer objects, kept out of this header
  VideoSource(VideoSourceOptions options, FrameCallback on_frame);
  void watch_bus();
  void fail(const std::string& message);
  void on_sample(void* sample);
  friend struct VideoSourceCallbacks;

  VideoSourceOptions options_;
  FrameCallback on_frame_;
  std::unique_ptr<Pipeline> pipeline_;
  std::thread bus_thread_;
  std::atomic<SourceState> state_{SourceState::kCreated};
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> frames_decoded_{0};
  std::atomic<int> loops_completed_{0};
  mutable std::mutex text_mutex_;
  std::string error_;
  std::string decoder_name_;
};

// Initialises GStreamer once per process (thread-safe); later calls are free.
void ensure_gstreamer_initialised();

// Whether a GStreamer element of this name is installed (initialises GStreamer).
bool gst_element_installed(const char* name);

// The installed element that copies NVMM buffers to system memory (PipelineOptions::nvmm_converter):
// nvvidconv (Jetson Linux), else nvvideoconvert (DeepStream); empty on hosts with neither.
std::string find_nvmm_converter();

}  // namespace edgefuse
