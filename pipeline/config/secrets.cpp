#include "pipeline/config/secrets.h"

#include <cstdlib>
#include <fstream>

#include "pipeline/video/stream_credentials.h"

namespace edgefuse::config {
namespace {

constexpr size_t kMaxSecretBytes = 4096;

int line_of(const ReadContext& context, const std::string& path) {
  const auto found = context.key_lines.find(path);
  return found == context.key_lines.end() ? 0 : found->second;
}

// The password from whichever of password / password-file / password-env was given (one at most).
// `prefix` is "streams[2]." or "mqtt.". Errors never quote the secret.
void resolve_password(std::string& password, const std::filesystem::path& file, const std::string& env_name,
                      const std::string& prefix, ReadContext& context) {
  const int given = (password.empty() ? 0 : 1) + (file.empty() ? 0 : 1) + (env_name.empty() ? 0 : 1);
  if (given > 1) {
    const std::string path = prefix + "password";
    context.diagnostics.add(prefix.substr(0, prefix.size() - 1), line_of(context, path),
                            "give the password one way only: password, password-file or password-env");
    return;
  }
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    std::string text(kMaxSecretBytes + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
    const std::string path = prefix + "password-file";
    if (!in.eof() || text.size() > kMaxSecretBytes) {
      context.diagnostics.add(path, line_of(context, path), "password file is longer than 4096 bytes");
      return;
    }
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    if (text.empty()) context.diagnostics.add(path, line_of(context, path), "password file is empty");
    password = std::move(text);
  }
  if (!env_name.empty()) {
    const char* value = std::getenv(env_name.c_str());
    const std::string path = prefix + "password-env";
    if (value == nullptr || *value == '\0') {
      context.diagnostics.add(path, line_of(context, path),
                              make_message("environment variable ", env_name, " is not set or empty"));
      return;
    }
    password = value;
  }
  if (!password.empty()) register_secret(password);
}

void resolve_stream(StreamConfig& stream, size_t index, ReadContext& context) {
  const std::string prefix = make_message("streams[", index, "].");
  Result<SplitUri> split = split_uri_credentials(stream.uri);
  if (!split.is_ok()) {
    context.diagnostics.add(prefix + "uri", line_of(context, prefix + "uri"), split.status().message());
    return;
  }
  if (!split->credentials.empty()) {
    // Registered before any error below can quote the uri.
    if (!split->credentials.password.empty()) register_secret(split->credentials.password);
    if (!stream.username.empty() || !stream.password.empty() || !stream.password_file.empty() ||
        !stream.password_env.empty()) {
      context.diagnostics.add(prefix + "uri", line_of(context, prefix + "uri"),
                              "credentials are in the uri and in username/password keys; give them one way");
      return;
    }
    stream.uri = split->address;
    stream.username = split->credentials.user;
    stream.password = split->credentials.password;
    return;
  }
  resolve_password(stream.password, stream.password_file, stream.password_env, prefix, context);
}

// A scalar as written on its line: surrounding blanks and one pair of quotes removed.
std::string_view unquoted(std::string_view value) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t' || value.back() == '\r'))
    value.remove_suffix(1);
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front()) {
    value = value.substr(1, value.size() - 2);
  }
  return value;
}

}  // namespace

void register_secrets_in_text(std::string_view yaml_text) {
  while (!yaml_text.empty()) {
    const size_t end = yaml_text.find('\n');
    std::string_view line = yaml_text.substr(0, end);
    yaml_text.remove_prefix(end == std::string_view::npos ? yaml_text.size() : end + 1);
    // Comments are not the config's (their example uris are not its secrets): YAML starts one at
    // a '#' that begins the line or follows a blank.
    for (size_t hash = line.find('#'); hash != std::string_view::npos; hash = line.find('#', hash + 1)) {
      if (hash == 0 || line[hash - 1] == ' ' || line[hash - 1] == '\t') {
        line = line.substr(0, hash);
        break;
      }
    }
    // Each uri on the line, up to the next blank or quote.
    for (size_t scheme = line.find("://"); scheme != std::string_view::npos; scheme = line.find("://", scheme + 3)) {
      const size_t stop = line.find_first_of(" \t\"'", scheme + 3);
      std::string uri = "x";  // split_uri_credentials wants a scheme before "://"
      uri += line.substr(scheme, stop == std::string_view::npos ? line.npos : stop - scheme);
      Result<SplitUri> split = split_uri_credentials(uri);
      if (split.is_ok() && !split->credentials.password.empty()) register_secret(split->credentials.password);
    }
    // A password key, as a mapping's key or a list item's first.
    std::string_view key = line;
    while (!key.empty() && (key.front() == ' ' || key.front() == '-')) key.remove_prefix(1);
    if (key.starts_with("password:")) {
      const std::string_view value = unquoted(key.substr(9));
      if (!value.empty()) register_secret(value);
    }
  }
}

void resolve_secrets(DaemonConfig& config, ReadContext& context) {
  for (size_t i = 0; i < config.streams.size(); ++i) resolve_stream(config.streams[i], i, context);
  if (config.mqtt.enabled) {
    resolve_password(config.mqtt.password, config.mqtt.password_file, config.mqtt.password_env, "mqtt.", context);
  }
}

}  // namespace edgefuse::config
