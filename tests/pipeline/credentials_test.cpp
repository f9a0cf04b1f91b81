// Camera credentials: split out of uris, redacted for display, scrubbed from any text, over a
// corpus of the passwords and user names people really use (@ : % / in passwords, dotted users).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "pipeline/video/stream_credentials.h"

namespace edgefuse {
namespace {

struct Credential {
  std::string user, password;
};

const std::vector<Credential> kCorpus = {
    {"admin", "s3cret-pass"},     {"john.doe", "p@ss:w0rd/1"},   {"ops.cam.7", "100%sure"}, {"viewer", "a/b/c@d:e"},
    {"first.last", "pa ss#word"}, {"user", "with?query&and=eq"}, {"x.y", "ünïcødé-Paß"},
};

TEST_CASE("credentials split out of rtsp uris, written plainly or percent-encoded") {
  for (const Credential& credential : kCorpus) {
    CAPTURE(credential.password);
    for (const bool encoded : {false, true}) {
      // Written plainly, '#' and '?' would start a fragment/query: such passwords must be encoded.
      if (!encoded && credential.password.find_first_of("#?") != std::string::npos) continue;
      const std::string password = encoded ? percent_encode(credential.password) : credential.password;
      const std::string uri = "rtsp://" + credential.user + ":" + password + "@10.0.0.7:554/stream1?channel=2";
      Result<SplitUri> split = split_uri_credentials(uri);
      REQUIRE(split.is_ok());
      CHECK(split->address == "rtsp://10.0.0.7:554/stream1?channel=2");
      CHECK(split->credentials.user == credential.user);
      CHECK(split->credentials.password == credential.password);
      const std::string shown = redact_uri(uri);
      CHECK(shown == "rtsp://***@10.0.0.7:554/stream1?channel=2");
      CHECK(shown.find(password) == std::string::npos);
    }
  }
}

TEST_CASE("uris without credentials are left alone; a stray '%' is kept") {
  Result<SplitUri> plain = split_uri_credentials("rtsp://cam.local/live");
  REQUIRE(plain.is_ok());
  CHECK(plain->address == "rtsp://cam.local/live");
  CHECK(plain->credentials.empty());
  CHECK(redact_uri("rtsp://cam.local/live") == "rtsp://cam.local/live");
  // A user name alone.
  Result<SplitUri> user_only = split_uri_credentials("rtsp://viewer@cam/live");
  REQUIRE(user_only.is_ok());
  CHECK(user_only->credentials.user == "viewer");
  CHECK(user_only->credentials.password.empty());
  // '@' in the query is not userinfo.
  CHECK(split_uri_credentials("rtsp://cam/live?by=a@b")->address == "rtsp://cam/live?by=a@b");

  Result<SplitUri> stray = split_uri_credentials("rtsp://u:50%off%2F@cam/live");
  REQUIRE(stray.is_ok());
  CHECK(stray->credentials.password == "50%off/");
}

TEST_CASE("redact_uri hides secret-looking query values and keeps the rest") {
  CHECK(redact_uri("rtsp://cam/live?channel=1&token=abc123&subtype=0") ==
        "rtsp://cam/live?channel=1&token=***&subtype=0");
  CHECK(redact_uri("rtsps://u:p@cam/x?Password=hunter2#frag") == "rtsps://***@cam/x?Password=***#frag");
  CHECK(redact_uri("rtsp://cam/live?authkey=zz") == "rtsp://cam/live?authkey=***");
}

TEST_CASE("registered secrets are scrubbed from any text, raw and percent-encoded") {
  for (const Credential& credential : kCorpus) register_secret(credential.password);
  register_secret("ab");  // too short to scrub safely: ignored
  for (const Credential& credential : kCorpus) {
    CAPTURE(credential.password);
    const std::string text = "rtspsrc: Unauthorized (" + credential.password + ") at rtsp://" + credential.user + ":" +
                             percent_encode(credential.password) + "@cam/live";
    const std::string scrubbed = scrub_secrets(text);
    CHECK(scrubbed.find(credential.password) == std::string::npos);
    CHECK(scrubbed.find(percent_encode(credential.password)) == std::string::npos);
    CHECK(scrubbed.find("rtspsrc: Unauthorized (***)") == 0);
  }
  CHECK(scrub_secrets("about tabs") == "about tabs");
}

}  // namespace
}  // namespace edgefuse
