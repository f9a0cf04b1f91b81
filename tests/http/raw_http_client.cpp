// raw_http_client: blocking connect, poll-bounded reads, so a server that hangs fails the test
// instead of hanging it.
#include "tests/http/raw_http_client.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace edgefuse::testing {

std::string RawResponse::header(const std::string& lower_case_name) const {
  auto found = headers.find(lower_case_name);
  return found == headers.end() ? "" : found->second;
}

RawConnection::RawConnection(int port) {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd_);
    fd_ = -1;
  }
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) close(fd_);
}

bool RawConnection::send_bytes(const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

void RawConnection::shutdown_write() {
  shutdown(fd_, SHUT_WR);
}

bool RawConnection::fill(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) return false;
  pollfd entry{fd_, POLLIN, 0};
  if (poll(&entry, 1, static_cast<int>(left.count())) <= 0) return false;
  char buffer[4096];
  const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
  if (n <= 0) return false;
  pending_.append(buffer, static_cast<size_t>(n));
  return true;
}

RawResponse RawConnection::read_response(bool head_request, std::chrono::milliseconds timeout) {
  RawResponse response;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  size_t header_end;
  while ((header_end = pending_.find("\r\n\r\n")) == std::string::npos) {
    if (!fill(deadline)) return response;
  }
  const std::string head = pending_.substr(0, header_end);
  pending_.erase(0, header_end + 4);
  size_t line_end = head.find("\r\n");
  const std::string status_line = head.substr(0, line_end);
  if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12) return response;
  response.status = std::atoi(status_line.c_str() + 9);
  while (line_end != std::string::npos) {
    const size_t start = line_end + 2;
    line_end = head.find("\r\n", start);
    const std::string line = head.substr(start, line_end == std::string::npos ? std::string::npos : line_end - start);
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    response.headers.emplace(name, value);
  }
  const size_t length = head_request ? 0 : std::strtoul(response.header("content-length").c_str(), nullptr, 10);
  while (pending_.size() < length) {
    if (!fill(deadline)) break;
  }
  response.body = pending_.substr(0, length);
  pending_.erase(0, std::min(length, pending_.size()));
  return response;
}

bool RawConnection::closed_by_server_within(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd entry{fd_, POLLIN, 0};
    if (poll(&entry, 1, static_cast<int>(left.count())) <= 0) return false;
    char buffer[4096];
    const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n <= 0) return true;  // EOF or reset; response bytes before it are drained
  }
}

RawResponse http_request(int port, const std::string& method, const std::string& target,
                         const std::string& extra_headers) {
  RawConnection connection(port);
  if (!connection.connected()) return {};
  connection.send_bytes(method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra_headers + "\r\n");
  return connection.read_response(method == "HEAD");
}

}  // namespace edgefuse::testing
