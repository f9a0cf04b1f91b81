// A deliberately small HTTP/1.1 client over raw loopback sockets for the status server tests: it
// sends exactly the bytes a test gives (malformed, slow, half-closed) and parses one response.
#pragma once

#include <chrono>
#include <map>
#include <string>

namespace edgefuse::testing {

struct RawResponse {
  int status = 0;                                   // 0: no response (connection closed or timed out first)
  std::multimap<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::string header(const std::string& lower_case_name) const;  // "" when absent
};

// A connected TCP socket to 127.0.0.1:port; closes on destruction.
class RawConnection {
 public:
  explicit RawConnection(int port);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  bool send_bytes(const std::string& bytes);
  void shutdown_write();
  // Reads one response (status line, headers, Content-Length body; the body is skipped for HEAD).
  RawResponse read_response(bool head_request = false,
                            std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));
  // True when the server closes the connection (EOF or reset) within `timeout`.
  bool closed_by_server_within(std::chrono::milliseconds timeout);

 private:
  bool fill(std::chrono::steady_clock::time_point deadline);
  int fd_ = -1;
  std::string pending_;
};

// One GET (or HEAD) on a fresh connection.
RawResponse http_request(int port, const std::string& method, const std::string& target,
                         const std::string& extra_headers = "");

}  // namespace edgefuse::testing
