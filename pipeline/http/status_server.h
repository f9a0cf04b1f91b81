// The daemon's read-only HTTP status endpoint: GET/HEAD /healthz, /readyz, /metrics and /streams, served on
// threads of its own by cpp-httplib. The server adds no identifying headers and refuses everything
// else (405 with Allow for other methods, 413 for request bodies, 404 for other paths, 400 for
// malformed or oversized requests). Limits: a request (line and headers) must arrive within
// read_timeout and max_request_bytes; a response must be taken within write_timeout; each client
// connection holds one thread, at most max_connections at once, so slow clients cannot starve
// /healthz until that many are connected at the same time.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "runtime/status.h"

namespace edgefuse {

struct StatusServerOptions {
  // Loopback by default. Any other address (0.0.0.0 included) is reachable from the network: the
  // server allows it because it was asked for, and logs a warning line saying so.
  std::string bind_address = "127.0.0.1";
  int port = 9400;           // 0: any free port (see StatusServer::port())
  int max_connections = 64;  // client connections served at once, one thread each (started on demand)
  std::chrono::milliseconds read_timeout{2000};   // whole request, and the idle wait between requests
  std::chrono::milliseconds write_timeout{2000};  // whole response
  size_t max_request_bytes = 8192;                // request line + headers
  int max_requests_per_connection = 100;          // keep-alive requests before the server closes
  // Receives the server's log lines (the non-loopback warning, an accept loop restart); null: stderr.
  std::function<void(const std::string&)> log;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// The daemon's answers, called on the server's threads (they must be thread-safe). A null handler
// makes its path 404. A 200 from /metrics is served as kPrometheusContentType ("text/plain;
// version=0.0.4; charset=utf-8") whatever content_type says; a handler that throws, or returns a
// status outside 200..599, gives a bare 500.
struct StatusHandlers {
  std::function<HttpResponse()> healthz;
  std::function<HttpResponse()> readyz;
  std::function<HttpResponse()> metrics;
  std::function<HttpResponse()> streams;  // JSON; absent: /streams is 404
};

class StatusServer {
 public:
  // Binds and starts serving before it returns. Errors: invalid_argument for bad options,
  // io_error "status server cannot listen on 127.0.0.1:9400: Address already in use".
  static Result<std::unique_ptr<StatusServer>> start(StatusServerOptions options, StatusHandlers handlers);
  ~StatusServer();  // stop()
  StatusServer(const StatusServer&) = delete;
  StatusServer& operator=(const StatusServer&) = delete;

  int port() const;  // the bound port (the chosen one when options.port was 0)
  const std::string& bind_address() const;
  // Closes the listening socket and every client connection; returns once all server threads
  // have ended (within about 100 ms plus a running handler call). Idempotent.
  void stop();

 private:
  struct Impl;
  explicit StatusServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace edgefuse
