// The daemon's HTTP endpoint: /healthz, /readyz, /metrics and /streams answered from Daemon's own
// verdicts, metrics page and stream figures, on the status server's threads. Built only with cpp-httplib
// (pipeline/http).
#include "pipeline/daemon/daemon.h"
#include "pipeline/daemon/daemon_log.h"

#if EDGEFUSE_HAVE_HTTP
#include "pipeline/http/status_server.h"
#include "pipeline/metrics/prometheus_writer.h"
#include "pipeline/video/stream_credentials.h"
#endif

namespace edgefuse {

Status Daemon::start_status_server() {
  if (!config_.http.enabled) return Status::ok();
#if EDGEFUSE_HAVE_HTTP
  StatusServerOptions options;
  options.bind_address = config_.http.address;
  options.port = config_.http.port;
  options.log = [](const std::string& line) { daemon_log("http: ", line); };
  auto verdict = [](std::pair<bool, std::string> result) {
    return HttpResponse{.status = result.first ? 200 : 503, .body = scrub_secrets(result.second) + "\n"};
  };
  StatusHandlers handlers;
  handlers.healthz = [this, verdict] { return verdict(health()); };
  handlers.readyz = [this, verdict] { return verdict(readiness()); };
  handlers.metrics = [this] { return HttpResponse{.content_type = kPrometheusContentType, .body = render_metrics()}; };
  handlers.streams = [this] {
    return HttpResponse{.content_type = "application/json", .body = render_streams_json() + "\n"};
  };
  EF_ASSIGN_OR_RETURN(std::unique_ptr<StatusServer> server, StatusServer::start(options, std::move(handlers)));
  daemon_log("http: serving /healthz, /readyz, /metrics and /streams on http://", server->bind_address(), ":",
             server->port(), "/");
  status_server_ = {server.release(), [](StatusServer* stopped) { delete stopped; }};
  return Status::ok();
#else
  daemon_log("http: this edgefuse was built without cpp-httplib; /healthz, /readyz, /metrics and /streams are off");
  return Status::ok();
#endif
}

}  // namespace edgefuse
