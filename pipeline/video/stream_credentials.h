// Camera credentials kept out of everything the daemon shows.
//
// A stream's user name and password never travel inside its uri past the config: the uri is split
// into a credential-free address plus StreamCredentials (rtspsrc receives them as properties, not in
// its location), every uri the daemon prints goes through redact_uri, and each password is registered
// with the process-wide scrubber that log lines, error messages and HTTP responses pass through as a
// last line of defence (a GStreamer message could still quote what a server sent back).
#pragma once

#include <string>
#include <string_view>

#include "runtime/status.h"

namespace edgefuse {

struct StreamCredentials {
  std::string user;
  std::string password;
  bool empty() const { return user.empty() && password.empty(); }
  bool operator==(const StreamCredentials&) const = default;
};

struct SplitUri {
  std::string address;  // the uri without its userinfo
  StreamCredentials credentials;
};

// "rtsp://user:p%40ss@cam/stream" -> {"rtsp://cam/stream", {"user", "p@ss"}}. The userinfo ends at
// the last '@' of the authority, so unencoded '@', ':' or '/' in a password (common in hand-written
// configs) still split where the user meant. Percent escapes are decoded; a '%' that starts no valid
// escape stays a '%'. Never fails today; Result leaves room for stricter schemes.
Result<SplitUri> split_uri_credentials(std::string_view uri);

// The uri as it may be shown: userinfo becomes "***" and query values of secret-looking keys
// (password, pass, pwd, token, key, auth, secret, signature) become "***".
std::string redact_uri(std::string_view uri);

// Registers a secret (its raw and percent-encoded forms) with the process-wide scrubber. Secrets
// shorter than 3 characters are not registered: scrubbing them would mangle ordinary text.
void register_secret(std::string_view secret);
// `text` with every registered secret replaced by "***". Thread-safe; cheap when none is registered.
std::string scrub_secrets(std::string_view text);

// Percent-encoding of every byte outside RFC 3986's unreserved set.
std::string percent_encode(std::string_view text);

}  // namespace edgefuse
