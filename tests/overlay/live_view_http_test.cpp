// The live view over real loopback sockets, without a browser: the page, the snapshot, the MJPEG
// stream's framing, a port that is taken, and close() ending a stream that is still being watched.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <opencv2/imgcodecs.hpp>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "pipeline/overlay/live_view.h"
#include "pipeline/overlay/overlay_output.h"
#include "tests/overlay/synthetic_frame.h"

namespace edgefuse {
namespace {

// A connected loopback socket with a receive timeout; -1 on failure.
int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_get(int fd, const std::string& path) {
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  return ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size());
}

// Reads until `done(received)` or end of stream / timeout; false on timeout or error before done.
template <typename Done>
bool read_until(int fd, std::string& received, Done done) {
  char chunk[65536];
  while (!done(received)) {
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    received.append(chunk, static_cast<size_t>(n));
  }
  return true;
}

// Whole response of a GET (the server closes the connection after it).
std::string http_get(int port, const std::string& path) {
  const int fd = connect_to(port);
  if (fd < 0) return {};
  std::string response;
  if (send_get(fd, path)) read_until(fd, response, [](const std::string&) { return false; });
  ::close(fd);
  return response;
}

std::string body_of(const std::string& response) {
  const size_t end = response.find("\r\n\r\n");
  return end == std::string::npos ? std::string() : response.substr(end + 4);
}

size_t count_of(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

Detection person_box() {
  Detection d;
  d.box = {100, 100, 400, 600};
  d.score = 0.9f;
  return d;
}

TEST_CASE("page, snapshot and MJPEG stream over loopback; close() ends an open stream") {
  OverlayOptions options;
  options.stream_name = "http";
  options.labels = {"person"};
  options.http_port = 0;
  options.preview_fps = 20;
  Result<std::unique_ptr<OverlayOutput>> output = OverlayOutput::create(options);
  REQUIRE_MESSAGE(output.is_ok(), output.status().to_string());
  const int port = (*output)->http_port();
  REQUIRE(port > 0);

  const std::string page = http_get(port, "/");
  CHECK(page.starts_with("HTTP/1.1 200"));
  CHECK(page.find("text/html") != std::string::npos);
  CHECK(page.find("<img id=\"stream\" src=\"/stream.mjpg\"") != std::string::npos);
  CHECK(http_get(port, "/snapshot.jpg").starts_with("HTTP/1.1 503"));
  CHECK(http_get(port, "/nothing-here").starts_with("HTTP/1.1 404"));

  std::atomic<bool> feeding{true};
  std::thread feeder([&] {
    while (feeding.load()) {
      (*output)->submit(test::make_grey_frame(1280, 720), {person_box()}, {25.0, 10.0});
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });

  // The snapshot: a 960x540 JPEG (the preview width) with the green box in it.
  std::string snapshot;
  for (int attempt = 0; attempt < 200; ++attempt) {
    snapshot = http_get(port, "/snapshot.jpg");
    if (snapshot.starts_with("HTTP/1.1 200")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  REQUIRE(snapshot.starts_with("HTTP/1.1 200"));
  const std::string jpeg = body_of(snapshot);
  const cv::Mat image = cv::imdecode(std::vector<uint8_t>(jpeg.begin(), jpeg.end()), cv::IMREAD_COLOR);
  REQUIRE(!image.empty());
  CHECK(image.cols == 960);
  CHECK(image.rows == 540);
  // The left edge, x 100..104 at scale 0.75: green dominates somewhere in x 70..82 of a middle row.
  int greenest = -255;
  for (int x = 70; x <= 82; ++x) {
    const cv::Vec3b p = image.at<cv::Vec3b>(300, x);
    greenest = std::max(greenest, p[1] - std::max(p[0], p[2]));
  }
  CHECK(greenest > 80);
  const cv::Vec3b inside = image.at<cv::Vec3b>(300, 150);  // grey inside the box
  CHECK(std::abs(inside[1] - inside[2]) < 10);

  // The stream: multipart parts, each a JPEG with its length.
  const int fd = connect_to(port);
  REQUIRE(fd >= 0);
  REQUIRE(send_get(fd, "/stream.mjpg"));
  std::string stream;
  CHECK(read_until(fd, stream, [](const std::string& s) { return count_of(s, "--edgefuseframe\r\n") >= 3; }));
  CHECK(stream.starts_with("HTTP/1.1 200"));
  CHECK(stream.find("multipart/x-mixed-replace; boundary=edgefuseframe") != std::string::npos);
  const size_t part = stream.find("--edgefuseframe\r\nContent-Type: image/jpeg\r\nContent-Length: ");
  REQUIRE(part != std::string::npos);
  const size_t data = stream.find("\r\n\r\n", part) + 4;
  CHECK(static_cast<uint8_t>(stream[data]) == 0xFF);
  CHECK(static_cast<uint8_t>(stream[data + 1]) == 0xD8);
  CHECK((*output)->counters().drawn > 0);

  // Closing while the client still reads: bounded, and the client sees the stream end.
  feeding = false;
  feeder.join();
  const auto closing = std::chrono::steady_clock::now();
  CHECK((*output)->close().is_ok());
  CHECK(std::chrono::steady_clock::now() - closing < std::chrono::seconds(5));
  std::string rest;
  char chunk[65536];
  ssize_t n = 0;
  while ((n = ::recv(fd, chunk, sizeof chunk, 0)) > 0) rest.append(chunk, static_cast<size_t>(n));
  CHECK(n == 0);  // orderly end, not the receive timeout
  ::close(fd);
}

TEST_CASE("a port that is taken is an error naming it") {
  LiveViewOptions first_options;
  Result<std::unique_ptr<LiveView>> first = LiveView::create(first_options);
  REQUIRE(first.is_ok());
  LiveViewOptions second_options;
  second_options.port = (*first)->port();
  Result<std::unique_ptr<LiveView>> second = LiveView::create(second_options);
  REQUIRE(!second.is_ok());
  CHECK(second.status().message().find(std::to_string((*first)->port())) != std::string::npos);
}

}  // namespace
}  // namespace edgefuse
