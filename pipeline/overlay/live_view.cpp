// The live view's HTTP side (cpp-httplib, Debian's libcpp-httplib-dev; included here only) and
// its JPEG encoder thread.
#include "pipeline/overlay/live_view.h"

#include <chrono>

#include <httplib.h>

namespace edgefuse {
namespace {

constexpr const char* kBoundary = "edgefuseframe";

std::string page_html(const std::string& title) {
  return "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>" + title +
         "</title>\n<style>body{margin:0;background:#111;color:#ccc;font:14px sans-serif}"
         "img{display:block;max-width:100%;height:auto}p{margin:6px}</style></head>\n<body><p>" +
         title + " &middot; <a href=\"/snapshot.jpg\" style=\"color:#8cf\">snapshot</a></p>\n" +
         "<img id=\"stream\" src=\"/stream.mjpg\" alt=\"live overlay\">\n</body></html>\n";
}

}  // namespace

struct LiveView::Server {
  httplib::Server http;
};

LiveView::LiveView(LiveViewOptions options) : options_(std::move(options)), server_(std::make_unique<Server>()) {}

Result<std::unique_ptr<LiveView>> LiveView::create(LiveViewOptions options) {
  if (options.port < 0 || options.port > 65535)
    return invalid_argument("live view: port ", options.port, " out of range");
  if (!(options.max_fps > 0)) return invalid_argument("live view: max_fps must be positive");
  std::unique_ptr<LiveView> view(new LiveView(std::move(options)));
  httplib::Server& http = view->server_->http;
  LiveView* self = view.get();
  // Short keep-alive so that stop() does not wait for idle connections.
  http.set_keep_alive_timeout(1);
  // httplib's default options add SO_REUSEPORT, which would let a second live view bind the same
  // port silently and share its clients: SO_REUSEADDR only.
  http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  http.Get("/", [self](const httplib::Request&, httplib::Response& res) {
    res.set_content(page_html(self->options_.title), "text/html; charset=utf-8");
  });
  http.Get("/snapshot.jpg", [self](const httplib::Request&, httplib::Response& res) {
    std::shared_ptr<const std::vector<uint8_t>> jpeg = self->snapshot();
    if (!jpeg) {
      res.status = 503;
      res.set_content("no frame yet\n", "text/plain");
      return;
    }
    res.set_header("Cache-Control", "no-store");
    res.set_content(reinterpret_cast<const char*>(jpeg->data()), jpeg->size(), "image/jpeg");
  });
  http.Get("/stream.mjpg", [self](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    self->viewers_.fetch_add(1);
    auto last = std::make_shared<uint64_t>(0);
    res.set_content_provider(
        std::string("multipart/x-mixed-replace; boundary=") + kBoundary,
        [self, last](size_t, httplib::DataSink& sink) {
          uint64_t generation = 0;
          // A bounded wait, so the connection notices stop() and closed clients.
          std::shared_ptr<const std::vector<uint8_t>> jpeg = self->wait_jpeg(*last, 200, generation);
          if (!jpeg) return sink.is_writable() && !self->server_stopping();
          *last = generation;
          const std::string head = std::string("--") + kBoundary +
                                   "\r\nContent-Type: image/jpeg\r\nContent-Length: " + std::to_string(jpeg->size()) +
                                   "\r\n\r\n";
          return sink.write(head.data(), head.size()) &&
                 sink.write(reinterpret_cast<const char*>(jpeg->data()), jpeg->size()) && sink.write("\r\n", 2);
        },
        [self](bool) { self->viewers_.fetch_sub(1); });
  });
  const int port =
      view->options_.port == 0
          ? http.bind_to_any_port(view->options_.bind_address)
          : (http.bind_to_port(view->options_.bind_address, view->options_.port) ? view->options_.port : -1);
  if (port < 0) {
    return io_error("live view: cannot listen on ", view->options_.bind_address, ":", view->options_.port);
  }
  view->port_ = port;
  view->server_thread_ = std::thread([self] { self->server_->http.listen_after_bind(); });
  view->encoder_thread_ = std::thread([self] { self->encode_loop(); });
  // httplib's stop() does nothing before the accept loop runs (it would then wait in accept() for
  // ever): return only once it runs, so stop() always ends it.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!http.is_running() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!http.is_running()) {
    view->stop();  // listen_after_bind failed and returned; join the threads
    return io_error("live view: the server on ", view->options_.bind_address, ":", port, " did not start");
  }
  return view;
}

LiveView::~LiveView() {
  stop();
}

bool LiveView::server_stopping() {
  const std::lock_guard lock(mutex_);
  return stopping_;
}

void LiveView::publish(std::shared_ptr<const I420Image> frame) {
  {
    const std::lock_guard lock(mutex_);
    latest_ = frame;
    pending_ = std::move(frame);
  }
  frame_ready_.notify_one();
}

void LiveView::encode_loop() {
  const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(1.0 / options_.max_fps));
  auto next = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  while (true) {
    frame_ready_.wait(lock, [this] { return stopping_ || (pending_ && viewers_.load() > 0); });
    if (stopping_) return;
    // Rate cap: wait out the period (a newer frame may replace the pending one meanwhile).
    if (frame_ready_.wait_until(lock, next, [this] { return stopping_; })) return;
    std::shared_ptr<const I420Image> frame = std::move(pending_);
    if (!frame) continue;
    lock.unlock();
    auto jpeg = std::make_shared<const std::vector<uint8_t>>(
        encode_jpeg(downscale_i420(*frame, options_.preview_width), options_.jpeg_quality));
    jpegs_encoded_.fetch_add(1);
    next = std::chrono::steady_clock::now() + period;
    lock.lock();
    jpeg_ = std::move(jpeg);
    ++jpeg_generation_;
    jpeg_ready_.notify_all();
  }
}

std::shared_ptr<const std::vector<uint8_t>> LiveView::snapshot() {
  std::shared_ptr<const I420Image> frame;
  {
    const std::lock_guard lock(mutex_);
    frame = latest_;
  }
  if (!frame) return nullptr;
  return std::make_shared<const std::vector<uint8_t>>(
      encode_jpeg(downscale_i420(*frame, options_.preview_width), options_.jpeg_quality));
}

std::shared_ptr<const std::vector<uint8_t>> LiveView::wait_jpeg(uint64_t after, int wait_ms, uint64_t& generation) {
  std::unique_lock lock(mutex_);
  frame_ready_.notify_one();  // a new viewer may be what the encoder waits for
  if (!jpeg_ready_.wait_for(lock, std::chrono::milliseconds(wait_ms),
                            [&] { return stopping_ || (jpeg_ && jpeg_generation_ > after); }) ||
      stopping_) {
    return nullptr;
  }
  generation = jpeg_generation_;
  return jpeg_;
}

void LiveView::stop() {
  {
    const std::lock_guard lock(mutex_);
    if (stopping_ && !server_thread_.joinable() && !encoder_thread_.joinable()) return;
    stopping_ = true;
  }
  frame_ready_.notify_all();
  jpeg_ready_.notify_all();
  server_->http.stop();
  if (server_thread_.joinable()) server_thread_.join();
  if (encoder_thread_.joinable()) encoder_thread_.join();
}

}  // namespace edgefuse
