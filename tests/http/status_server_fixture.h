// Starts a StatusServer on 127.0.0.1 with a free port and handlers whose answers a test controls.
#pragma once

#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pipeline/http/status_server.h"

namespace edgefuse::testing {

struct StatusServerFixture {
  std::atomic<bool> ready{true};
  std::atomic<int> healthz_calls{0};
  std::mutex log_mutex;
  std::vector<std::string> log_lines;
  std::unique_ptr<StatusServer> server;

  StatusHandlers handlers() {
    StatusHandlers handlers;
    handlers.healthz = [this] {
      ++healthz_calls;
      return HttpResponse{200, "text/plain; charset=utf-8", "ok\n"};
    };
    handlers.readyz = [this] {
      return ready ? HttpResponse{200, "text/plain; charset=utf-8", "ready\n"}
                   : HttpResponse{503, "text/plain; charset=utf-8", "not ready: no stream has produced a frame\n"};
    };
    handlers.metrics = [] { return HttpResponse{200, "", "# TYPE edgefuse_up gauge\nedgefuse_up 1\n"}; };
    return handlers;
  }

  StatusServerOptions options() {
    StatusServerOptions options;
    options.port = 0;
    options.log = [this](const std::string& line) {
      std::lock_guard lock(log_mutex);
      log_lines.push_back(line);
    };
    return options;
  }

  void start(StatusServerOptions options) {
    auto started = StatusServer::start(std::move(options), handlers());
    REQUIRE_MESSAGE(started.is_ok(), started.status().to_string());
    server = std::move(started).value();
    REQUIRE(server->port() > 0);
  }
  void start() { start(options()); }
  int port() const { return server->port(); }
};

}  // namespace edgefuse::testing
