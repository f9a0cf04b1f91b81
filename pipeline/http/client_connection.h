// One accepted TCP connection of the status server, read through a buffer under limits that
// cpp-httplib 0.11 lacks: its read timeout applies to each recv, so a client sending a byte every
// second would hold a connection forever. Here a whole request (request line and headers) must
// arrive within request_timeout and within max_request_bytes, and every wait also ends when the
// server stops.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>

#include <sys/types.h>

namespace edgefuse {

struct ConnectionLimits {
  std::chrono::milliseconds request_timeout{2000};  // first byte to end of headers; also the idle wait
  std::chrono::milliseconds write_timeout{2000};    // one whole response
  size_t max_request_bytes = 8192;                  // request line + headers
};

enum class ReadEnd { kNone, kClosedByPeer, kTimedOut, kTooLarge, kSocketError, kStopping };

class ClientConnection {
 public:
  // Takes ownership of `fd`. `stopping` is polled at least every 50 ms while waiting.
  ClientConnection(int fd, ConnectionLimits limits, const std::atomic<bool>& stopping);
  ~ClientConnection();  // shutdown and close
  ClientConnection(const ClientConnection&) = delete;
  ClientConnection& operator=(const ClientConnection&) = delete;

  // Waits up to request_timeout for the first byte of the next request; false when none comes.
  bool wait_for_request();
  // Starts the limits of a new request: its deadline, byte budget and response deadline.
  void begin_request();

  // At most `size` bytes of the current request: > 0 bytes, or -1 with read_end() saying why.
  ssize_t read(char* out, size_t size);
  // Writes some of `data` (blocking until the response deadline): bytes written, or -1.
  ssize_t write(const char* data, size_t size);
  bool readable() const;  // buffered bytes, or readable now
  bool writable() const;  // writable now
  int fd() const { return fd_; }
  ReadEnd read_end() const { return read_end_; }

 private:
  using Clock = std::chrono::steady_clock;
  // poll() for `events` until `deadline`, in slices so that a stop is noticed.
  bool wait_for(short events, Clock::time_point deadline);
  bool fill_buffer(Clock::time_point deadline);

  int fd_;
  ConnectionLimits limits_;
  const std::atomic<bool>& stopping_;
  char buffer_[4096];
  size_t buffered_begin_ = 0, buffered_end_ = 0;
  Clock::time_point request_deadline_;
  Clock::time_point write_deadline_{};
  bool write_started_ = false;
  size_t request_bytes_ = 0;
  ReadEnd read_end_ = ReadEnd::kNone;
};

// "ip" and port of the socket's peer (peer = true) or local end; "" and -1 when unknown.
void socket_endpoint(int fd, bool peer, std::string& ip, int& port);

}  // namespace edgefuse
