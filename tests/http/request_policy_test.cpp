// The status server's request rules and address checks, without sockets.
#include "pipeline/http/request_policy.h"

#include <doctest/doctest.h>

#include "pipeline/http/listen_address.h"

namespace edgefuse {

TEST_CASE("request policy: methods first, then bodies, then paths") {
  CHECK(judge_request("GET", "/healthz", false).refusal_status == 0);
  CHECK(judge_request("GET", "/healthz", false).path == StatusPath::kHealthz);
  CHECK(judge_request("HEAD", "/readyz", false).path == StatusPath::kReadyz);
  CHECK(judge_request("GET", "/metrics", false).path == StatusPath::kMetrics);
  CHECK(judge_request("GET", "/streams", false).path == StatusPath::kStreams);
  CHECK(judge_request("GET", "/streams/", false).refusal_status == 404);
  CHECK(judge_request("POST", "/nowhere", true).refusal_status == 405);
  CHECK(judge_request("get", "/healthz", false).refusal_status == 405);
  CHECK(judge_request("GET", "/nowhere", true).refusal_status == 413);
  CHECK(judge_request("GET", "/nowhere", false).refusal_status == 404);
  CHECK(judge_request("GET", "/metrics/", false).refusal_status == 404);
  CHECK(judge_request("GET", "", false).refusal_status == 404);
}

TEST_CASE("listen address: loopback recognised by address, not by prefix") {
  CHECK(is_loopback_address("127.0.0.1"));
  CHECK(is_loopback_address("127.10.20.30"));
  CHECK(is_loopback_address("localhost"));
  CHECK(is_loopback_address("::1"));
  CHECK(is_loopback_address("::ffff:127.0.0.1"));
  CHECK_FALSE(is_loopback_address("0.0.0.0"));
  CHECK_FALSE(is_loopback_address("::"));
  CHECK_FALSE(is_loopback_address("192.168.1.10"));
  CHECK_FALSE(is_loopback_address("127.0.0.1.example.com"));
  CHECK_FALSE(is_loopback_address("128.0.0.1"));
  CHECK(format_endpoint("127.0.0.1", 9400) == "127.0.0.1:9400");
  CHECK(format_endpoint("::1", 9400) == "[::1]:9400");
}

}  // namespace edgefuse
