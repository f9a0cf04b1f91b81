#include "pipeline/video/stream_credentials.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <mutex>
#include <vector>

namespace edgefuse {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent escapes are decoded; a '%' not followed by two hex digits is kept as it is, since people
// write passwords like "100%sure" into configs unencoded.
std::string percent_decode(std::string_view text) {
  std::string decoded;
  decoded.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const int high = text[i] == '%' && i + 2 < text.size() ? hex_value(text[i + 1]) : -1;
    const int low = high >= 0 ? hex_value(text[i + 2]) : -1;
    if (low < 0) {
      decoded += text[i];
      continue;
    }
    decoded += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return decoded;
}

// [start of userinfo, position of the '@' ending it) in `uri`, or npos when there is none. The
// authority runs from "://" to the first '/' after the last '@' (or to the first '/' when no '@').
std::pair<size_t, size_t> userinfo_span(std::string_view uri) {
  const size_t scheme_end = uri.find("://");
  if (scheme_end == std::string_view::npos) return {std::string_view::npos, std::string_view::npos};
  const size_t start = scheme_end + 3;
  // A '@' after the first '?' or '#' belongs to the query or fragment.
  const size_t query = uri.find_first_of("?#", start);
  const std::string_view authority_and_path =
      uri.substr(start, query == std::string_view::npos ? uri.npos : query - start);
  const size_t at = authority_and_path.rfind('@');
  if (at == std::string_view::npos) return {std::string_view::npos, std::string_view::npos};
  return {start, start + at};
}

bool is_secret_key(std::string_view key) {
  std::string lower(key);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  constexpr std::array kSecretWords = {"pass", "pwd", "token", "key", "auth", "secret", "sig", "credential"};
  return std::any_of(kSecretWords.begin(), kSecretWords.end(),
                     [&](const char* word) { return lower.find(word) != std::string::npos; });
}

std::string redact_query(std::string_view query) {
  std::string out;
  size_t start = 0;
  while (start <= query.size()) {
    const size_t end = std::min(query.find('&', start), query.size());
    const std::string_view pair = query.substr(start, end - start);
    const size_t equals = pair.find('=');
    if (equals != std::string_view::npos && is_secret_key(pair.substr(0, equals))) {
      out += pair.substr(0, equals + 1);
      out += "***";
    } else {
      out += pair;
    }
    if (end == query.size()) break;
    out += '&';
    start = end + 1;
  }
  return out;
}

struct SecretRegistry {
  std::mutex mutex;
  std::vector<std::string> secrets;  // longest first, so a secret containing another is replaced whole
  std::atomic<bool> any{false};
};

SecretRegistry& registry() {
  static SecretRegistry instance;
  return instance;
}

void add_secret_form(std::vector<std::string>& secrets, std::string form) {
  if (form.size() < 3 || std::find(secrets.begin(), secrets.end(), form) != secrets.end()) return;
  secrets.push_back(std::move(form));
}

}  // namespace

std::string percent_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
  return out;
}

Result<SplitUri> split_uri_credentials(std::string_view uri) {
  const auto [start, at] = userinfo_span(uri);
  if (start == std::string_view::npos) return SplitUri{std::string(uri), {}};
  const std::string_view userinfo = uri.substr(start, at - start);
  const size_t colon = userinfo.find(':');
  SplitUri split;
  split.address = std::string(uri.substr(0, start)) + std::string(uri.substr(at + 1));
  split.credentials.user = percent_decode(userinfo.substr(0, colon));
  if (colon != std::string_view::npos) split.credentials.password = percent_decode(userinfo.substr(colon + 1));
  return split;
}

std::string redact_uri(std::string_view uri) {
  std::string out;
  const auto [start, at] = userinfo_span(uri);
  if (start == std::string_view::npos) {
    out = std::string(uri);
  } else {
    out = std::string(uri.substr(0, start)) + "***" + std::string(uri.substr(at));
  }
  const size_t query = out.find('?');
  if (query != std::string::npos) {
    const size_t fragment = out.find('#', query);
    const std::string tail = fragment == std::string::npos ? "" : out.substr(fragment);
    out = out.substr(0, query + 1) +
          redact_query(std::string_view(out).substr(query + 1,
                                                    fragment == std::string::npos ? out.npos : fragment - query - 1)) +
          tail;
  }
  return out;
}

void register_secret(std::string_view secret) {
  SecretRegistry& secrets = registry();
  const std::lock_guard lock(secrets.mutex);
  add_secret_form(secrets.secrets, std::string(secret));
  add_secret_form(secrets.secrets, percent_encode(secret));
  // Lower-case escapes too ("%2f"), as some tools write them.
  std::string lower_escapes = percent_encode(secret);
  for (size_t i = 0; i < lower_escapes.size(); ++i) {
    if (lower_escapes[i] == '%' && i + 2 < lower_escapes.size()) {
      lower_escapes[i + 1] = static_cast<char>(std::tolower(static_cast<unsigned char>(lower_escapes[i + 1])));
      lower_escapes[i + 2] = static_cast<char>(std::tolower(static_cast<unsigned char>(lower_escapes[i + 2])));
    }
  }
  add_secret_form(secrets.secrets, std::move(lower_escapes));
  std::sort(secrets.secrets.begin(), secrets.secrets.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  secrets.any = !secrets.secrets.empty();
}

std::string scrub_secrets(std::string_view text) {
  SecretRegistry& secrets = registry();
  std::string out(text);
  if (!secrets.any.load(std::memory_order_acquire)) return out;
  const std::lock_guard lock(secrets.mutex);
  for (const std::string& secret : secrets.secrets) {
    for (size_t found = out.find(secret); found != std::string::npos; found = out.find(secret, found + 3)) {
      out.replace(found, secret.size(), "***");
    }
  }
  return out;
}

}  // namespace edgefuse
