// ClientConnection: non-blocking recv/send (MSG_DONTWAIT) after poll(), so no call can block past
// a deadline; MSG_NOSIGNAL so a client that has gone never raises SIGPIPE in the daemon.
#include "pipeline/http/client_connection.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace edgefuse {
namespace {
constexpr std::chrono::milliseconds kStopCheckInterval{50};
}

ClientConnection::ClientConnection(int fd, ConnectionLimits limits, const std::atomic<bool>& stopping)
    : fd_(fd), limits_(limits), stopping_(stopping) {
  fcntl(fd_, F_SETFD, FD_CLOEXEC);  // accept() in cpp-httplib does not set it; keep it out of children
  begin_request();
}

ClientConnection::~ClientConnection() {
  shutdown(fd_, SHUT_RDWR);
  close(fd_);
}

bool ClientConnection::wait_for(short events, Clock::time_point deadline) {
  for (;;) {
    if (stopping_.load(std::memory_order_relaxed)) {
      read_end_ = ReadEnd::kStopping;
      return false;
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      read_end_ = ReadEnd::kTimedOut;
      return false;
    }
    const auto slice = std::min<Clock::duration>(deadline - now, kStopCheckInterval);
    pollfd entry{fd_, events, 0};
    const int timeout_ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(slice).count()) + 1;
    const int ready = poll(&entry, 1, timeout_ms);
    if (ready > 0) return true;  // readable, writable, or an error/hang-up the next call reports
    if (ready < 0 && errno != EINTR) {
      read_end_ = ReadEnd::kSocketError;
      return false;
    }
  }
}

bool ClientConnection::fill_buffer(Clock::time_point deadline) {
  buffered_begin_ = buffered_end_ = 0;
  for (;;) {
    if (!wait_for(POLLIN, deadline)) return false;
    const ssize_t received = recv(fd_, buffer_, sizeof(buffer_), MSG_DONTWAIT);
    if (received > 0) {
      buffered_end_ = static_cast<size_t>(received);
      return true;
    }
    if (received == 0) {
      read_end_ = ReadEnd::kClosedByPeer;
      return false;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      read_end_ = ReadEnd::kSocketError;
      return false;
    }
  }
}

bool ClientConnection::wait_for_request() {
  if (buffered_begin_ < buffered_end_) return true;  // a pipelined request is already here
  return fill_buffer(Clock::now() + limits_.request_timeout);
}

void ClientConnection::begin_request() {
  request_deadline_ = Clock::now() + limits_.request_timeout;
  request_bytes_ = 0;
  write_started_ = false;
  read_end_ = ReadEnd::kNone;
}

ssize_t ClientConnection::read(char* out, size_t size) {
  if (request_bytes_ >= limits_.max_request_bytes) {
    read_end_ = ReadEnd::kTooLarge;
    return -1;
  }
  if (buffered_begin_ == buffered_end_ && !fill_buffer(request_deadline_)) return -1;
  const size_t count = std::min({size, buffered_end_ - buffered_begin_, limits_.max_request_bytes - request_bytes_});
  std::memcpy(out, buffer_ + buffered_begin_, count);
  buffered_begin_ += count;
  request_bytes_ += count;
  return static_cast<ssize_t>(count);
}

ssize_t ClientConnection::write(const char* data, size_t size) {
  if (!write_started_) {
    write_started_ = true;
    write_deadline_ = Clock::now() + limits_.write_timeout;
  }
  for (;;) {
    if (!wait_for(POLLOUT, write_deadline_)) return -1;
    const ssize_t sent = send(fd_, data, size, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent >= 0) return sent;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
  }
}

bool ClientConnection::readable() const {
  if (buffered_begin_ < buffered_end_) return true;
  pollfd entry{fd_, POLLIN, 0};
  return poll(&entry, 1, 0) > 0;
}

bool ClientConnection::writable() const {
  pollfd entry{fd_, POLLOUT, 0};
  return poll(&entry, 1, 0) > 0 && (entry.revents & POLLOUT) != 0;
}

void socket_endpoint(int fd, bool peer, std::string& ip, int& port) {
  ip.clear();
  port = -1;
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  auto* generic = reinterpret_cast<sockaddr*>(&address);
  if ((peer ? getpeername(fd, generic, &length) : getsockname(fd, generic, &length)) != 0) return;
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
    inet_ntop(AF_INET, &v4->sin_addr, text, sizeof(text));
    port = ntohs(v4->sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
    inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text));
    port = ntohs(v6->sin6_port);
  }
  ip = text;
}

}  // namespace edgefuse
