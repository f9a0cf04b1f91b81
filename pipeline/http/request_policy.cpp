// judge_request: exact path matches only (no prefix, no trailing-slash variants), methods are
// case-sensitive as RFC 9110 says.
#include "pipeline/http/request_policy.h"

namespace edgefuse {

RequestVerdict judge_request(std::string_view method, std::string_view path, bool has_body) {
  RequestVerdict verdict;
  if (method != "GET" && method != "HEAD") {
    verdict.refusal_status = 405;
    verdict.refusal_body = "method not allowed: this server is read-only (GET, HEAD)\n";
  } else if (has_body) {
    verdict.refusal_status = 413;
    verdict.refusal_body = "request bodies are not accepted\n";
  } else if (path == "/healthz") {
    verdict.path = StatusPath::kHealthz;
  } else if (path == "/readyz") {
    verdict.path = StatusPath::kReadyz;
  } else if (path == "/metrics") {
    verdict.path = StatusPath::kMetrics;
  } else if (path == "/streams") {
    verdict.path = StatusPath::kStreams;
  } else {
    verdict.refusal_status = 404;
    verdict.refusal_body = "not found: /healthz, /readyz, /metrics, /streams\n";
  }
  return verdict;
}

}  // namespace edgefuse
