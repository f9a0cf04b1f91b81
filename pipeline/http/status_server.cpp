// StatusServer on cpp-httplib 0.11 (Debian's libcpp-httplib: a shared library compiled with its
// default CPPHTTPLIB_* limits, so limits cannot be changed by defining macros here; this file is
// built with the library's pkg-config flags so that its class layouts match the library's).
// This is the only file that includes <httplib.h>.
//
// What cpp-httplib does and what this file changes:
// - Its ThreadPool has a fixed size and a connection holds a thread until it closes, so N slow
//   clients block everything: replaced (new_task_queue) by ConnectionThreads, a thread per
//   connection up to max_connections.
// - Its read timeout applies to each recv, so a client dribbling a byte per second is never cut
//   off: the connection loop is ours (process_and_close_socket, a private virtual that cpp-httplib
//   calls per accepted socket), reading through ClientConnection, which bounds each request's time
//   and size and notices stop().
// - Its default socket options set SO_REUSEPORT, which lets a second daemon bind the same port
//   silently: replaced by SO_REUSEADDR only.
// - Routing, methods and paths are decided in the pre-routing handler, before any request body
//   would be read.
// - Its listen backlog of 5 is raised to SOMAXCONN once bound.
#include "pipeline/http/status_server.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>

#include <fcntl.h>
#include <httplib.h>
#include <pthread.h>
#include <signal.h>

#include "pipeline/http/client_connection.h"
#include "pipeline/http/connection_threads.h"
#include "pipeline/http/listen_address.h"
#include "pipeline/http/request_policy.h"
#include "pipeline/metrics/prometheus_writer.h"

namespace edgefuse {
namespace {

// Set when the response just written refused the request (any 4xx): unread bytes (a body, the rest of an
// oversized header) may follow, so the connection is closed rather than parsed further. Each
// connection runs on one thread, so a thread-local is per connection.
thread_local bool t_close_after_response = false;

void log_to_stderr(const std::string& line) {
  const std::string text = "edgefuse status server: " + line + "\n";
  std::fwrite(text.data(), 1, text.size(), stderr);
}

// Signals go to the daemon's own threads: the server's threads (all started from the listener
// thread, whose mask they inherit) block the asynchronous ones, so accept() is never interrupted.
void block_async_signals() {
  sigset_t signals;
  sigfillset(&signals);
  for (int synchronous : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT}) sigdelset(&signals, synchronous);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
}

class ConnectionStream final : public httplib::Stream {
 public:
  explicit ConnectionStream(ClientConnection& connection) : connection_(connection) {}
  bool is_readable() const override { return connection_.readable(); }
  bool is_writable() const override { return connection_.writable(); }
  ssize_t read(char* ptr, size_t size) override { return connection_.read(ptr, size); }
  ssize_t write(const char* ptr, size_t size) override { return connection_.write(ptr, size); }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    socket_endpoint(connection_.fd(), true, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    socket_endpoint(connection_.fd(), false, ip, port);
  }
  socket_t socket() const override { return connection_.fd(); }

 private:
  ClientConnection& connection_;
};

class ConnectionTaskQueue final : public httplib::TaskQueue {
 public:
  explicit ConnectionTaskQueue(int max_threads) : threads_(max_threads) {}
  void enqueue(std::function<void()> job) override { threads_.enqueue(std::move(job)); }
  void shutdown() override { threads_.shutdown(); }

 private:
  ConnectionThreads threads_;
};

bool has_request_body(const httplib::Request& request) {
  if (request.has_header("Transfer-Encoding")) return true;
  return request.has_header("Content-Length") && request.get_header_value("Content-Length") != "0";
}

class GuardedHttpServer final : public httplib::Server {
 public:
  GuardedHttpServer(const StatusServerOptions& options, StatusHandlers handlers, const std::atomic<bool>& stopping)
      : handlers_(std::move(handlers)),
        limits_{options.read_timeout, options.write_timeout, options.max_request_bytes},
        max_requests_per_connection_(options.max_requests_per_connection),
        stopping_(stopping) {
    const int max_connections = options.max_connections;
    new_task_queue = [max_connections] { return new ConnectionTaskQueue(max_connections); };
    set_socket_options([](socket_t sock) {
      const int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      fcntl(sock, F_SETFD, FD_CLOEXEC);
    });
    // Only advertised in the Keep-Alive header; the connection loop below enforces them.
    set_keep_alive_max_count(static_cast<size_t>(options.max_requests_per_connection));
    set_keep_alive_timeout(std::max<time_t>(1, static_cast<time_t>(options.read_timeout.count() / 1000)));
    set_read_timeout(options.read_timeout);
    set_write_timeout(options.write_timeout);
    set_payload_max_length(0);
    set_pre_routing_handler([this](const httplib::Request& request, httplib::Response& response) {
      answer(request, response);
      return HandlerResponse::Handled;
    });
    // "Expect: 100-continue" announces a body: refuse it before the client sends it.
    set_expect_100_continue_handler([this](const httplib::Request& request, httplib::Response& response) {
      answer(request, response);
      return response.status;
    });
    // Runs after cpp-httplib has added its Connection/Keep-Alive headers, for its own 400s too.
    set_post_routing_handler([](const httplib::Request&, httplib::Response& response) {
      if (response.status < 400 || response.status >= 500) return;
      t_close_after_response = true;
      response.headers.erase("Keep-Alive");
      response.headers.erase("Connection");
      response.set_header("Connection", "close");
    });
  }

  bool listening() const { return svr_sock_ != INVALID_SOCKET; }

  // cpp-httplib listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG, fixed in the library's
  // build): a burst of connections (clients reconnecting after being cut off) then overflows it and
  // the kernel drops SYNs, which clients retry only after a second. listen() on the listening
  // socket again raises the backlog in place.
  void widen_listen_backlog() {
    const socket_t sock = svr_sock_;
    if (sock != INVALID_SOCKET) ::listen(sock, SOMAXCONN);
  }

  // Closes the listening socket if cpp-httplib has not (a bind that was never listened on).
  void close_listening_socket() {
    const socket_t sock = svr_sock_.exchange(INVALID_SOCKET);
    if (sock != INVALID_SOCKET) {
      ::shutdown(sock, SHUT_RDWR);
      ::close(sock);
    }
  }

 private:
  bool process_and_close_socket(socket_t sock) override {
    ClientConnection connection(sock, limits_, stopping_);
    ConnectionStream stream(connection);
    try {
      for (int served = 0; served < max_requests_per_connection_; ++served) {
        if (stopping_ || svr_sock_ == INVALID_SOCKET || !connection.wait_for_request()) break;
        connection.begin_request();
        t_close_after_response = false;
        bool closed_by_client = false;
        const bool last_request = served + 1 == max_requests_per_connection_;
        const bool ok = process_request(stream, last_request, closed_by_client,
                                        [](httplib::Request& request) { request.ranges.clear(); });
        if (!ok || closed_by_client || t_close_after_response || connection.read_end() != ReadEnd::kNone) break;
      }
    } catch (...) {
      // An allocation failure inside cpp-httplib: drop this connection, keep serving.
    }
    return true;
  }

  void answer(const httplib::Request& request, httplib::Response& response) {
    response.set_header("Cache-Control", "no-store");
    const RequestVerdict verdict = judge_request(request.method, request.path, has_request_body(request));
    const std::function<HttpResponse()>* handler = nullptr;
    if (verdict.refusal_status == 0) {
      switch (verdict.path) {
        case StatusPath::kHealthz:
          handler = &handlers_.healthz;
          break;
        case StatusPath::kReadyz:
          handler = &handlers_.readyz;
          break;
        case StatusPath::kMetrics:
          handler = &handlers_.metrics;
          break;
        case StatusPath::kStreams:
          handler = &handlers_.streams;
          break;
      }
    }
    if (handler == nullptr || !*handler) {
      response.status = verdict.refusal_status == 0 ? 404 : verdict.refusal_status;
      if (response.status == 405) response.set_header("Allow", kAllowedMethods);
      response.set_content(verdict.refusal_status == 0 ? "not found\n" : verdict.refusal_body,
                           "text/plain; charset=utf-8");
      return;
    }
    HttpResponse reply;
    try {
      reply = (*handler)();
    } catch (...) {
      reply = HttpResponse{500, "text/plain; charset=utf-8", "internal error\n"};  // no details leave the daemon
    }
    if (reply.status < 200 || reply.status > 599)
      reply = HttpResponse{500, "text/plain; charset=utf-8", "internal error\n"};
    if (verdict.path == StatusPath::kMetrics && reply.status == 200) reply.content_type = kPrometheusContentType;
    response.status = reply.status;
    response.set_content(reply.body, reply.content_type);
  }

  StatusHandlers handlers_;
  ConnectionLimits limits_;
  int max_requests_per_connection_;
  const std::atomic<bool>& stopping_;
};

Status validate(const StatusServerOptions& options) {
  if (options.bind_address.empty()) return invalid_argument("status server: bind_address is empty");
  if (options.port < 0 || options.port > 65535) {
    return invalid_argument("status server: port ", options.port, " is outside 0..65535");
  }
  if (options.max_connections < 1 || options.max_connections > 4096) {
    return invalid_argument("status server: max_connections ", options.max_connections, " is outside 1..4096");
  }
  if (options.read_timeout.count() < 1 || options.write_timeout.count() < 1) {
    return invalid_argument("status server: read and write timeouts must be at least 1 ms");
  }
  if (options.max_request_bytes < 256) {
    return invalid_argument("status server: max_request_bytes ", options.max_request_bytes, " is below 256");
  }
  if (options.max_requests_per_connection < 1) {
    return invalid_argument("status server: max_requests_per_connection must be at least 1");
  }
  return Status::ok();
}

}  // namespace

struct StatusServer::Impl {
  StatusServerOptions options;
  int port = 0;
  std::atomic<bool> stopping{false};
  std::atomic<bool> listener_done{false};
  std::unique_ptr<GuardedHttpServer> server;
  std::thread listener;

  void log(const std::string& line) const { options.log(line); }

  // Serves until stop(). cpp-httplib's accept loop ends on an unexpected accept() error; then the
  // server listens again on the same port rather than going silently deaf.
  void run_listener() {
    block_async_signals();
    while (!stopping) {
      server->listen_after_bind();
      if (stopping) break;
      log("accept loop ended unexpectedly; listening again on " + format_endpoint(options.bind_address, port));
      while (!stopping && !server->bind_to_port(options.bind_address, port)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    }
    listener_done = true;
  }
};

StatusServer::StatusServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

StatusServer::~StatusServer() {
  stop();
}

int StatusServer::port() const {
  return impl_->port;
}

const std::string& StatusServer::bind_address() const {
  return impl_->options.bind_address;
}

Result<std::unique_ptr<StatusServer>> StatusServer::start(StatusServerOptions options, StatusHandlers handlers) {
  EF_RETURN_IF_ERROR(validate(options));
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  if (!impl->options.log) impl->options.log = log_to_stderr;
  const std::string& address = impl->options.bind_address;
  impl->server = std::make_unique<GuardedHttpServer>(impl->options, std::move(handlers), impl->stopping);

  const int requested_port = impl->options.port;
  impl->port = requested_port == 0 ? impl->server->bind_to_any_port(address)
                                   : (impl->server->bind_to_port(address, requested_port) ? requested_port : -1);
  if (impl->port <= 0) {
    impl->server->close_listening_socket();
    const std::string reason = diagnose_bind_failure(address, requested_port);
    return io_error("status server cannot listen on ", format_endpoint(address, requested_port),
                    reason.empty() ? "" : ": ", reason);
  }
  impl->server->widen_listen_backlog();
  if (!is_loopback_address(address)) {
    impl->log("warning: listening on " + format_endpoint(address, impl->port) +
              ", which is not a loopback address: /healthz, /readyz, /metrics and /streams are reachable from the "
              "network");
  }

  Impl* raw = impl.get();
  impl->listener = std::thread([raw] { raw->run_listener(); });
  // stop() can only interrupt a running accept loop, so hand the server out once it runs.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!raw->server->is_running() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::unique_ptr<StatusServer> server(new StatusServer(std::move(impl)));
  if (!raw->server->is_running()) {
    server->stop();
    return io_error("status server on ", format_endpoint(address, raw->port), " did not start serving");
  }
  return server;
}

void StatusServer::stop() {
  if (!impl_ || !impl_->listener.joinable()) return;
  impl_->stopping = true;
  // cpp-httplib's stop() acts only while its accept loop runs; repeat until the listener has left
  // (it may be between a failed accept loop and the next one). Only while a socket is open: some
  // builds of cpp-httplib assert on a second stop().
  while (!impl_->listener_done) {
    if (impl_->server->listening()) impl_->server->stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  impl_->listener.join();
  impl_->server->close_listening_socket();
}

}  // namespace edgefuse
