// What the status server does with a parsed request, apart from the socket: it serves three
// read-only paths to GET and HEAD and refuses everything else. Order of the checks: method (405),
// then a request body (413), then the path (404), so a POST to an unknown path says 405.
#pragma once

#include <string_view>

namespace edgefuse {

enum class StatusPath { kHealthz, kReadyz, kMetrics, kStreams };

struct RequestVerdict {
  int refusal_status = 0;  // 0: serve `path`; else 404, 405 or 413
  StatusPath path = StatusPath::kHealthz;
  const char* refusal_body = "";
};

// `path` without its query string (queries are ignored); `has_body`: Content-Length other than 0,
// or any Transfer-Encoding.
RequestVerdict judge_request(std::string_view method, std::string_view path, bool has_body);

// The Allow header of a 405.
inline constexpr const char* kAllowedMethods = "GET, HEAD";

}  // namespace edgefuse
